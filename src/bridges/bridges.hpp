// Internal: where the library meets other formats (Zarr today): what AnyArray::open and the tool
// ask of the bridges.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <b2nd/any_array.hpp>
#include <b2nd/codec/ids.hpp>
#include <b2nd/params.hpp>
#include <b2nd/value.hpp>

namespace b2nd::bridges {

/// Whether `path` names a Zarr node: a local directory holding zarr.json, .zarray or .zgroup,
/// or a URL whose path ends in .zarr or passes through a .zarr directory.
bool is_zarr(const std::string& path);

/// Opens the Zarr v2 or v3 array at `path` (a directory or URL) read-only, lazily.
/// \throws UsageError for a group or a writable open; UnsupportedError naming a codec, filter
///         or data type this library does not have; FormatError for malformed metadata
AnyArray open_zarr(const std::string& path, const OpenOptions& options);

/// What `b2nd info` says of the Zarr array at `path`: a map of format ("Zarr v2", "Zarr v3"),
/// shape, dtype, chunks (a shard's shape when sharded), inner_chunks (when sharded), codecs
/// (codecs_text), fill_value (its bytes), attributes and dimension_names.
Value zarr_summary(const std::string& path, const OpenOptions& options);

/// The attributes of `a` an export carries: its vlmeta, python-blosc2's object metadata aside.
Value::Map user_attributes(const AnyArray& a);

/// How export_zarr writes.
struct ZarrExport {
    int format = 3;          ///< 3: sharded; 2: one chunk per file
    bool overwrite = false;  ///< replace an existing Zarr array at the path
    /// The compressor; default: the array's where Blosc 1.x has it, else zstd.
    std::optional<codec::Codec> codec;
    int clevel = -1;  ///< -1: the array's
    bool durable = true;
    int nthreads = 0;
    /// Called after each chunk written: (chunks done, total).
    std::function<void(std::int64_t, std::int64_t)> progress;
};

/// Writes `a` as a Zarr array at `out` (a directory, built under a temporary name and moved into
/// place whole). v3: the array's chunks are shards (sharding_indexed) of inner chunks of its
/// block shape (where a block's extent does not divide the chunk's, the largest divisor of the
/// chunk's below it: Zarr's inner chunks tile the shard), compressed with bytes + blosc (the
/// array's codec and shuffle where Blosc 1.x has them, else zstd), the index at the end with
/// crc32c. v2: the array's chunks, the blosc compressor. Attributes become the Zarr array's.
/// \throws UnsupportedError for a dtype the format has no type for (v3: strings, records)
void export_zarr(const AnyArray& a, const std::string& out, const ZarrExport& o);

}  // namespace b2nd::bridges
