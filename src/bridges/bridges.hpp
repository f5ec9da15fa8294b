// Internal: where the library meets other formats (Zarr today): what AnyArray::open and the tool
// ask of the bridges.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <b2nd/any_array.hpp>
#include <b2nd/bridges.hpp>
#include <b2nd/params.hpp>
#include <b2nd/value.hpp>

namespace b2nd::bridges {

/// Whether `path` names a Zarr node: a local directory holding zarr.json, .zarray or .zgroup,
/// or a URL whose path ends in .zarr or passes through a .zarr directory.
bool is_zarr(const std::string& path);

/// What a local directory is in Zarr: kind "array", "group" or "" (none), and version (2, 3).
struct ZarrNode {
    std::string kind;
    int version = 0;
};
/// \throws FormatError for a zarr.json that is not JSON
ZarrNode zarr_node(const std::string& path);

/// The Zarr array or group `path` names: its directory when `path` is one of its metadata files
/// (run.zarr/.zarray, run.zarr/zarr.json), else `path` as given.
std::string zarr_root(const std::string& path);

/// Opens the Zarr v2 or v3 array at `path` (a directory or URL) read-only, lazily.
/// \throws UsageError for a group or a writable open; UnsupportedError naming a codec, filter
///         or data type this library does not have; FormatError for malformed metadata
AnyArray open_zarr(const std::string& path, const OpenOptions& options);

/// What `b2nd info` says of the Zarr array at `path`: a map of format ("Zarr v2", "Zarr v3"),
/// shape, dtype, chunks (a shard's shape when sharded), inner_chunks (when sharded), codecs
/// (v3: codecs_text) or order, compressor and filters (v2: as the .zarray says them), fill_value
/// (its bytes), attributes and dimension_names.
Value zarr_summary(const std::string& path, const OpenOptions& options);

/// Copies `count` items of the box at `src_start` of a C-order array of `src_shape` into a C-order
/// array of `dst_shape`, at its origin (an export's chunk, padded, made from a region).
void copy_box(const std::uint8_t* src,
              const Shape& src_shape,
              const Shape& src_start,
              std::uint8_t* dst,
              const Shape& dst_shape,
              const Shape& count,
              std::size_t item);

/// The most bytes a bridged array (an HDF5 dataset, a Zarr array) decodes into one block: a
/// foreign chunk larger than this is read in several blocks, so that a read of one element
/// allocates no more than this whatever chunks a file declares.
inline constexpr std::int64_t kMaxBridgedBlockBytes = std::int64_t{8} << 20;

/// Zeros the items of a C-order block of `block_shape` outside the box `region` (at its origin:
/// the block's part inside the array), items of `itemsize` bytes.
void zero_outside(const Box& region,
                  const Shape& block_shape,
                  std::size_t itemsize,
                  std::uint8_t* into);

/// The blocks a chunk of shape `chunk` (items of `itemsize` bytes) is read in: the chunk itself
/// when it holds at most kMaxBridgedBlockBytes, else equal parts of it of at most that many
/// bytes, cut along the first axes (rows of the last axes stay whole as far as they fit).
Shape bounded_block(const Shape& chunk, std::int64_t itemsize);

/// Attributes an import keeps beside an array's own, and exports read back (docs/bridges.md):
/// the value unwritten parts read as (netCDF's and xarray's name); the names of the dimensions
/// (xarray's name in Zarr v2; v3's dimension_names); the global attributes of the file a dataset
/// came from (a map); the NumPy dtypes of numeric attributes narrower than 64 bits (a map of
/// attribute name to dtype string), which values alone do not keep.
inline constexpr const char* kFillValueKey = "_FillValue";
inline constexpr const char* kDimensionsKey = "_ARRAY_DIMENSIONS";
inline constexpr const char* kGlobalsKey = "_global_attributes";
inline constexpr const char* kAttributeDtypesKey = "_attribute_dtypes";

/// The attributes of `a` an export carries: its vlmeta, python-blosc2's object metadata aside.
Value::Map user_attributes(const AnyArray& a);

}  // namespace b2nd::bridges
