// Seeded random strided boxes for read/write tests.
#pragma once

#include <cstdint>

#include <b2nd/selection.hpp>

#include "files.hpp"

namespace b2nd::test {

/// A random strided box of `shape`: steps from {1, 2, 3, 7, -1, -2} (mostly 1), any start,
/// counts up to max_count; empty along zero-length dimensions.
inline Box random_box(const Shape& shape, SplitMix& rng, std::int64_t max_count = INT64_MAX) {
    static const std::int64_t steps[] = {1, 1, 1, 2, 3, 7, -1, -2};
    Box b;
    for (std::int64_t n : shape) {
        const std::int64_t step = steps[rng.below(8)];
        if (n == 0) {
            b.start.push_back(0);
            b.count.push_back(0);
            b.step.push_back(step);
            continue;
        }
        const auto start = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n)));
        const std::int64_t room = step > 0 ? (n - 1 - start) / step + 1 : start / -step + 1;
        b.start.push_back(start);
        b.count.push_back(1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(
                                  room < max_count ? room : max_count))));
        b.step.push_back(step);
    }
    return b;
}

}  // namespace b2nd::test
