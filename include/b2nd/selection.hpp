// Selecting part of an array: NumPy-style slices, indices and index lists, resolved against a
// shape into a strided box, or, when an index list is present, into one index list per dimension
// (orthogonal indexing, as python-blosc2's `oindex`).
//
//   b2nd::Selection sel{5, b2nd::Slice(0, 10), b2nd::Slice::all(), b2nd::Slice({}, {}, -2)};
//   b2nd::Resolved r = b2nd::resolve(shape, sel);     // r.box: what to read; r.shape: the result
//   b2nd::parse_selection("5,0:10,:,::-2")            // the same selection, as text
//   b2nd::parse_selection("[3,1,7], 2:9:2, -1")       // with an index list: orthogonal
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <b2nd/shape.hpp>

namespace b2nd {

/// start:stop:step with Python's meaning: negative positions count from the end, a missing start
/// or stop means "from the first" / "to the last" element in the direction of the step.
struct Slice {
    std::optional<std::int64_t>
        start;  ///< first position (none: from the first in the step's direction)
    std::optional<std::int64_t> stop;  ///< end position, excluded (none: to the last)
    std::int64_t step = 1;             ///< stride (negative: backwards; never 0)

    Slice() = default;
    /// start:stop:step.
    Slice(std::optional<std::int64_t> start_,
          std::optional<std::int64_t> stop_,
          std::int64_t step_ = 1)
        : start(start_), stop(stop_), step(step_) {}
    /// ":" (every element).
    static Slice all() { return {}; }
};

/// One entry of a selection: an integer (the dimension is dropped from the result; negative
/// counts from the end), a slice, an explicit strided range (start, count, step, already in
/// range), an index list (any order, repeats and negative indices allowed; the dimension keeps
/// the list's length), a new axis of length 1, or an ellipsis standing for as many whole
/// dimensions as needed.
///
/// Index lists combine orthogonally, as in python-blosc2's `oindex` (not as NumPy's fancy
/// indexing, which pairs lists up): {[0, 2], [1, 3]} selects the 2 x 2 elements (0,1), (0,3),
/// (2,1), (2,3).
class DimIndex {
public:
    /// What the entry is.
    enum class Kind { index, slice, strided, newaxis, ellipsis, list };
    /// An integer: the dimension is dropped.
    DimIndex(std::int64_t i) : kind_(Kind::index), index_(i) {}  // NOLINT: implicit by design
    /// An integer: the dimension is dropped.
    DimIndex(int i) : kind_(Kind::index), index_(i) {}  // NOLINT
    /// A slice.
    DimIndex(Slice s) : kind_(Kind::slice), slice_(s) {}  // NOLINT
    /// An index list (implicit from a vector of indices).
    DimIndex(std::vector<std::int64_t> indices)  // NOLINT
        : kind_(Kind::list),
          list_(std::make_shared<const std::vector<std::int64_t>>(std::move(indices))) {}
    /// An index list.
    static DimIndex list(std::vector<std::int64_t> indices) { return DimIndex(std::move(indices)); }
    /// "...": as many whole dimensions as needed.
    static DimIndex ellipsis() { return DimIndex(Kind::ellipsis); }
    /// A new axis of length 1.
    static DimIndex newaxis() { return DimIndex(Kind::newaxis); }
    /// The count elements start, start + step, ... (checked against the dimension).
    static DimIndex strided(std::int64_t start, std::int64_t count, std::int64_t step) {
        DimIndex d(Kind::strided);
        d.index_ = start;
        d.count_ = count;
        d.slice_.step = step;
        return d;
    }
    /// What the entry is.
    Kind kind() const noexcept { return kind_; }
    /// The integer (Kind::index) or the start (Kind::strided).
    std::int64_t index() const noexcept { return index_; }
    /// The number of elements (Kind::strided).
    std::int64_t count() const noexcept { return count_; }
    /// The slice (Kind::slice; the step of Kind::strided).
    const Slice& slice() const noexcept { return slice_; }
    /// The indices (Kind::list; empty otherwise).
    const std::vector<std::int64_t>& indices() const noexcept {
        static const std::vector<std::int64_t> none;
        return list_ ? *list_ : none;
    }

private:
    explicit DimIndex(Kind k) : kind_(k) {}
    Kind kind_;
    std::int64_t index_ = 0;
    std::int64_t count_ = 0;
    Slice slice_;
    std::shared_ptr<const std::vector<std::int64_t>> list_;  // shared: selections copy cheaply
};

using Selection = std::vector<DimIndex>;

/// A selection resolved against a shape.
struct Resolved {
    Box box;      ///< what to read, one entry per array dimension (when !orthogonal())
    Shape shape;  ///< the result's shape (integer-selected dimensions dropped, new axes added)
    /// For each result dimension, the array dimension it walks, or -1 for a new axis.
    std::vector<int> dims;
    /// Set when the selection holds an index list: for every array dimension, the indices it
    /// takes in the result's order (in range, not negative; an integer gives one, a slice its
    /// elements). Empty lists everywhere when the result is empty. `box` then bounds them.
    std::vector<std::vector<std::int64_t>> lists;

    /// Whether it holds index lists (else a box).
    bool orthogonal() const noexcept { return !lists.empty(); }
    /// Elements selected (the product of shape).
    std::int64_t size() const noexcept {
        std::int64_t n = 1;
        for (std::int64_t e : shape) {
            n *= e;
        }
        return n;
    }
    /// The indices array dimension d takes, in the result's order (expanding the box when the
    /// selection is not orthogonal).
    std::vector<std::int64_t> indices(std::size_t d) const;
};

/// Resolves `sel` (missing trailing entries mean whole dimensions).
/// \throws UsageError for an index out of range (naming the dimension and the index), a zero
///         step, too many entries, two ellipses, or a result whose element count overflows
Resolved resolve(const Shape& shape, const Selection& sel);

/// Parses NumPy's text form: entries separated by commas, each an integer, a slice
/// "start:stop[:step]" with any part omitted, an index list "[3, 1, -1]", "..." or
/// "None"/"newaxis". An empty string selects everything.
/// \throws UsageError naming the bad entry (an empty list "[]" is refused as a likely mistake)
Selection parse_selection(std::string_view text);

}  // namespace b2nd
