// The b2nd tool: the elements of a selection read in C order, a slab at a time, so that commands
// that print or compare any number of elements hold a bounded number in memory.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <b2nd/any_array.hpp>
#include <b2nd/selection.hpp>

namespace b2nd::cli {

/// What of a resolved selection is read: along each result axis all its positions, or, where
/// cut[d] >= 0, the first and the last cut[d] (NumPy's summary).
struct Shown {
    Shape shape;
    std::vector<std::int64_t> cut;

    /// Every element of `r`.
    static Shown all(const Resolved& r);
    /// The first and last `edge` along each axis longer than 2 * edge.
    /// \throws UsageError when that many elements would overflow
    static Shown summary(const Resolved& r, std::int64_t edge);
    std::int64_t size() const noexcept;
};

/// The shown elements of a selection cut into slabs of at most `budget` elements (at least one)
/// in C order. A slab of a plain selection (slices and integers, nothing cut out) is a strided
/// box of the array; otherwise an orthogonal selection (one index list per array axis). Arrays
/// of one shape take the same slabs.
class SlabWalk {
public:
    SlabWalk(const Resolved& r, const Shown& shown, int array_ndim, std::int64_t budget);
    /// Moves to the next slab; false after the last.
    bool next();
    /// The elements of the current slab.
    std::int64_t count() const noexcept { return count_; }
    /// Reads the current slab of `arr` (of the shape the selection was resolved against) into
    /// `out`, count() items.
    void read(const AnyArray& arr, std::uint8_t* out) const;
    /// The most elements a slab holds.
    std::int64_t max_count() const noexcept;

private:
    std::int64_t array_index(std::size_t rd, std::int64_t k) const;
    /// Sets array axis u of the current slab to shown positions [a, b) of result axis rd.
    void select(std::size_t rd, std::int64_t a, std::int64_t b);

    const Resolved& r_;
    const Shown& shown_;
    bool boxed_ = false;  // slabs are boxes (box_), else index lists (idx_)
    Box box_;
    std::vector<std::vector<std::int64_t>> idx_;
    std::size_t k_ = 0;                // the axis cut into slabs; those after it are whole
    std::int64_t inner_ = 1;           // elements of the axes after k
    std::int64_t rows_ = 1;            // positions along k per slab
    std::vector<std::int64_t> outer_;  // position along the axes before k
    std::int64_t at_ = 0;              // next position along k
    std::int64_t count_ = 0;
    bool done_ = false;
};

/// Reads the shown elements of `r` from `arr` in C order and hands them to `fn` in slabs of at
/// most `budget_bytes` (at least one element), from one buffer allocated once.
void for_each_slab(const AnyArray& arr,
                   const Resolved& r,
                   const Shown& shown,
                   std::int64_t budget_bytes,
                   const std::function<void(const std::uint8_t* items, std::int64_t n)>& fn);

}  // namespace b2nd::cli
