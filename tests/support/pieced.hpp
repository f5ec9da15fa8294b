// Chunks for the tests of checksum version 3's pieces (block_seals.hpp): values LZ4 compresses,
// and the encode parameters of a float32 chunk.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include <b2nd/codec/chunk_encoder.hpp>

namespace b2nd::test {

/// `n` float32 values (as bytes) that repeat every 1,000 items: LZ4 finds matches.
inline std::vector<std::uint8_t> repeating_floats(std::size_t n) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = static_cast<float>((i * 2654435761U) % 1000) * 0.25F;
    }
    std::vector<std::uint8_t> b(n * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

/// Encoding float32 values with one filter, in blocks of `blocksize` bytes.
inline codec::EncodeParams float_params(
    Codec codec, int clevel, Filter filter, std::int32_t blocksize = 32768, int threads = 1) {
    codec::EncodeParams p;
    p.codec = codec;
    p.clevel = clevel;
    p.filters = codec::make_pipeline({{filter, 0}});
    p.typesize = 4;
    p.blocksize = blocksize;
    p.nthreads = threads;
    return p;
}

}  // namespace b2nd::test
