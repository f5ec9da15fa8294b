// Internal: Blosc 1.x chunks written (format version 2: the 16-byte header, streams not split),
// as numcodecs' Blosc (Zarr's blosc codec) and hdf5-blosc read them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <b2nd/codec/ids.hpp>

namespace b2nd::codec::detail {

/// Encodes src[0, n) as one Blosc 1.x chunk into `out` (resized; its room is reused): `codec`
/// (blosclz, lz4, lz4hc, zlib, zstd) at `clevel` (0: stored), shuffle 0 none, 1 byte, 2 bit, over
/// elements of `typesize` bytes, in blocks of `blocksize` bytes (0: chosen here). \throws
/// UsageError for a codec Blosc 1.x does not have or a chunk of 2 GiB or more
void encode_blosc1_chunk(const std::uint8_t* src,
                         std::size_t n,
                         Codec codec,
                         int clevel,
                         int shuffle,
                         int typesize,
                         std::vector<std::uint8_t>& out,
                         std::size_t blocksize = 0);
/// The same, into a new buffer.
inline std::vector<std::uint8_t> encode_blosc1_chunk(
    const std::uint8_t* src, std::size_t n, Codec codec, int clevel, int shuffle, int typesize) {
    std::vector<std::uint8_t> out;
    encode_blosc1_chunk(src, n, codec, clevel, shuffle, typesize, out);
    return out;
}

}  // namespace b2nd::codec::detail
