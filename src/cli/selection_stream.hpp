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

/// Reads the shown elements of `r` from `arr` in C order and hands them to `fn` in slabs of at
/// most `budget_bytes` (at least one element), from one buffer allocated once.
void for_each_slab(const AnyArray& arr,
                   const Resolved& r,
                   const Shown& shown,
                   std::int64_t budget_bytes,
                   const std::function<void(const std::uint8_t* items, std::int64_t n)>& fn);

}  // namespace b2nd::cli
