// A random float array on disk with random chunks and blocks, and the same data in memory: the
// reference the xtensor tests compare with.
#pragma once

#include <string>
#include <vector>

#include <b2nd/xtensor.hpp>

#include "../../support/files.hpp"

namespace b2nd::test {

/// A random array on disk and the same data in memory.
struct Fixture {
    b2nd::NDArray<float> arr;
    xt::xarray<float> mem;
};

inline Fixture make_array(const std::string& path, SplitMix& rng, Shape shape) {
    Shape chunks, blocks;
    for (std::int64_t n : shape) {
        chunks.push_back(1 +
                         static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n + 1))));
        blocks.push_back(
            1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(chunks.back()))));
    }
    std::vector<std::size_t> s(shape.begin(), shape.end());
    xt::xarray<float> mem(s);
    for (auto& x : mem) {
        x = static_cast<float>(rng.below(1000)) * 0.5f;
    }
    b2nd::CreateOptions o;
    o.chunk_shape = chunks;
    o.block_shape = blocks;
    o.overwrite = true;
    std::vector<float> flat(mem.begin(), mem.end());
    return {b2nd::NDArray<float>::create_from(path, shape, flat, o), mem};
}

}  // namespace b2nd::test
