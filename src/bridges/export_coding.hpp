// Internal to the exports (hdf5_write.cpp, zarr_write.cpp): what ExportCoding asks for, checked
// against what the output's format takes (one table, one wording for every refusal) and
// resolved against the array's own compression; and the encoding of one chunk with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <b2nd/any_array.hpp>
#include <b2nd/bridges.hpp>

namespace b2nd::bridges {

/// The formats an export writes.
enum class ExportFormat { hdf5, zarr2, zarr3 };

/// How each chunk is encoded, resolved.
struct ChunkCoding {
    /// The stream written: Blosc 1.x, a zstd frame, a zlib stream (HDF5's deflate, Zarr's zlib),
    /// a gzip member, numcodecs' LZ4 (the size, then a block), or the bytes as they are.
    enum class Stream { blosc1, zstd, zlib, gzip, lz4, raw } stream = Stream::blosc1;
    ExportCompressor compressor = ExportCompressor::blosc;  ///< as the format names it
    codec::Codec codec = codec::Codec::zstd;                ///< Blosc's codec
    int clevel = 5;
    int shuffle = 0;  ///< 0 none, 1 byte, 2 bit (Blosc's; HDF5's shuffle filter for 1)
};

/// The name a format gives `c` ("gzip", "blosc", ...) and the format's name ("HDF5").
const char* compressor_name(ExportCompressor c) noexcept;
const char* format_name(ExportFormat f) noexcept;

/// `o` checked against what `f` takes and resolved for `a`. \throws UsageError after `where`
/// for what the format does not take, naming what it does
ChunkCoding resolve_coding(const AnyArray& a,
                           const ExportCoding& o,
                           ExportFormat f,
                           const std::string& where);

/// `a` under the chunks (and blocks) `o` asks for: a view read as boxes of `a`, or `a` itself.
/// \throws UsageError for blocks where `f` has none, or shapes that cannot be
AnyArray coded_grid(const AnyArray& a,
                    const ExportCoding& o,
                    ExportFormat f,
                    const std::string& where);

/// raw[0, n) encoded as `c` says into `out` (its room reused); `typesize`: the item's size.
void encode_chunk(const ChunkCoding& c,
                  const std::uint8_t* raw,
                  std::size_t n,
                  int typesize,
                  std::vector<std::uint8_t>& out);

}  // namespace b2nd::bridges
