// Selecting part of an array: NumPy-style slices and indices, resolved against a shape into a
// strided box.
//
//   b2nd::Selection sel{5, b2nd::Slice(0, 10), b2nd::Slice::all(), b2nd::Slice({}, {}, -2)};
//   b2nd::Resolved r = b2nd::resolve(shape, sel);     // r.box: what to read; r.shape: the result
//   b2nd::parse_selection("5,0:10,:,::-2")            // the same selection, as text
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <b2nd/grid.hpp>

namespace b2nd {

/// start:stop:step with Python's meaning: negative positions count from the end, a missing start
/// or stop means "from the first" / "to the last" element in the direction of the step.
struct Slice {
    std::optional<std::int64_t> start;
    std::optional<std::int64_t> stop;
    std::int64_t step = 1;

    Slice() = default;
    Slice(std::optional<std::int64_t> start_,
          std::optional<std::int64_t> stop_,
          std::int64_t step_ = 1)
        : start(start_), stop(stop_), step(step_) {}
    static Slice all() { return {}; }
};

/// One entry of a selection: an integer (the dimension is dropped from the result), a slice, or
/// an ellipsis standing for as many whole dimensions as needed.
class DimIndex {
public:
    enum class Kind { index, slice, ellipsis };
    DimIndex(std::int64_t i) : kind_(Kind::index), index_(i) {}  // NOLINT: implicit by design
    DimIndex(int i) : kind_(Kind::index), index_(i) {}           // NOLINT
    DimIndex(Slice s) : kind_(Kind::slice), slice_(s) {}         // NOLINT
    static DimIndex ellipsis() {
        DimIndex d{Slice{}};
        d.kind_ = Kind::ellipsis;
        return d;
    }
    Kind kind() const noexcept { return kind_; }
    std::int64_t index() const noexcept { return index_; }
    const Slice& slice() const noexcept { return slice_; }

private:
    Kind kind_;
    std::int64_t index_ = 0;
    Slice slice_;
};

using Selection = std::vector<DimIndex>;

/// A strided box of an array: along dimension d, the count[d] elements start[d],
/// start[d] + step[d], ... (step may be negative, never 0).
struct Box {
    Shape start, count, step;

    /// The whole of an array of this shape.
    static Box whole(const Shape& shape);
    /// A box with step 1.
    static Box region(Shape start, Shape count);
    int ndim() const noexcept { return static_cast<int>(start.size()); }
    /// Number of elements.
    std::int64_t size() const noexcept;
    /// "[0:10, 5:6, 7:1:-2]"
    std::string str() const;
};

/// Why `box` is not a valid box of an array of `shape`, or "".
std::string check_box(const Shape& shape, const Box& box);

/// A selection resolved against a shape.
struct Resolved {
    Box box;      ///< what to read, one entry per array dimension
    Shape shape;  ///< the result's shape (dimensions selected by an integer are dropped)
};

/// Resolves `sel` (missing trailing entries mean whole dimensions).
/// \throws UsageError for an index out of range, a zero step, too many entries, two ellipses
Resolved resolve(const Shape& shape, const Selection& sel);

/// Parses NumPy's text form: entries separated by commas, each an integer, a slice
/// "start:stop[:step]" with any part omitted, or "...". An empty string selects everything.
/// \throws UsageError naming the bad entry
Selection parse_selection(std::string_view text);

}  // namespace b2nd
