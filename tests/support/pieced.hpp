// Chunks and arrays for the tests of checksum version 3's pieces (block_seals.hpp): values LZ4
// compresses, the encode parameters of a float32 chunk, an array whose chunks have pieces.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <b2nd/b2nd.hpp>
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

/// A 64 x 1024 float32 array of repeating_floats in chunks of 32 rows and LZ4 + shuffle blocks
/// of 8 rows (32 KiB: 8 pieces of one row each); returns its values.
inline std::vector<float> make_pieced(const std::string& path, bool sparse) {
    const std::vector<std::uint8_t> bytes = repeating_floats(64 * 1024);
    std::vector<float> v(64 * 1024);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    CreateOptions o;
    o.chunk_shape = {32, 1024};
    o.block_shape = {8, 1024};
    o.compression = CompressionParams{Codec::lz4, 5, {{Filter::shuffle, 0}}};
    o.sparse = sparse;
    (void)NDArray<float>::create_from(path, {64, 1024}, v, o);
    return v;
}

}  // namespace b2nd::test
