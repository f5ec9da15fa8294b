// Deterministic test data shared by the test programs: element sequences, random items of any
// dtype, compressible byte fields, and creation options with given chunk and block shapes.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <b2nd/dtype.hpp>
#include <b2nd/params.hpp>
#include <b2nd/shape.hpp>

#include "files.hpp"

namespace b2nd::test {

/// Elements in a shape (1 for ndim 0).
inline std::int64_t count_of(const Shape& s) {
    std::int64_t n = 1;
    for (std::int64_t v : s) {
        n *= v;
    }
    return n;
}

/// n values of T: f(0), f(1), ... (f returns anything convertible to T).
template <class T, class F>
std::vector<T> generate(std::size_t n, F f) {
    std::vector<T> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = static_cast<T>(f(i));
    }
    return v;
}

/// n random items of `dt` as bytes (booleans 0 or 1, as NumPy stores them).
inline std::vector<std::uint8_t> random_items(SplitMix& rng, const DType& dt, std::int64_t n) {
    std::vector<std::uint8_t> v(static_cast<std::size_t>(n * dt.itemsize()));
    for (auto& b : v) {
        b = static_cast<std::uint8_t>(rng.next());
    }
    if (dt.kind() == DType::Kind::boolean) {
        for (auto& b : v) {
            b &= 1;
        }
    }
    return v;
}

/// Smooth values with a little noise, as little-endian elements of `typesize` bytes (float32 for
/// typesize 4): compressible after shuffling, with some constant byte streams.
inline std::vector<std::uint8_t> smooth_bytes(std::size_t nbytes,
                                              int typesize,
                                              std::uint64_t seed) {
    std::vector<std::uint8_t> v(nbytes);
    SplitMix rng(seed);
    const auto ts = static_cast<std::size_t>(typesize);
    for (std::size_t i = 0; i < nbytes; ++i) {
        const std::size_t elem = i / ts;
        const std::size_t byte = i % ts;
        if (typesize == 4 && nbytes % 4 == 0) {
            const float f = static_cast<float>(100.0 * std::sin(static_cast<double>(elem) / 50.0)) +
                            static_cast<float>(rng.below(100)) * 1e-4f;
            std::memcpy(&v[i - byte], &f, 4);
            i += 3 - byte;
            continue;
        }
        const std::uint64_t x = elem * 3 + (rng.below(8) == 0 ? rng.below(4) : 0);
        v[i] = byte < 8 ? static_cast<std::uint8_t>(x >> (8 * byte)) : 0;
    }
    return v;
}

/// Creation options with these chunk and block shapes (the rest default).
inline CreateOptions chunked(Shape chunks, Shape blocks) {
    CreateOptions o;
    o.chunk_shape = std::move(chunks);
    o.block_shape = std::move(blocks);
    return o;
}

}  // namespace b2nd::test
