// Bridges to where scientists' data already lives: Zarr arrays (v2 and v3) and HDF5 datasets
// (netCDF-4 files are HDF5), read in place and written.
//
//   auto z = b2nd::AnyArray::open("run.zarr/fields/t");      // Zarr v2 or v3: read-only, lazy
//   auto h = b2nd::AnyArray::open("ocean.nc:/temperature");  // an HDF5 dataset (libhdf5)
//   b2nd::copy(h, "temperature.b2nd");                       // imported as a b2nd array
//   b2nd::export_zarr(a, "t.zarr");                          // Zarr v3, sharded
//   b2nd::export_hdf5(a, "results.h5:/run7/t");              // an HDF5 dataset, gzip
//
// Reading goes through AnyArray::open (and b2nd::open<T>): a path to a directory holding
// zarr.json or .zarray (or a URL through a .zarr directory), or FILE.h5:/path/to/dataset (also
// .hdf5, .he5, .nc, and any file HDF5's signature marks: .nxs, .mat 7.3, .cxi, .emd; the
// dataset's path may leave out its leading '/'). Such arrays are ordinary read-only arrays: views,
// selections, xtensor expressions, evaluate and copies work on them. docs/bridges.md says how
// types, attributes and fill values map.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <b2nd/any_array.hpp>
#include <b2nd/codec/ids.hpp>
#include <b2nd/storage/open_options.hpp>
#include <b2nd/value.hpp>

namespace b2nd {

/// What an export compresses with. Each format takes some of them: HDF5 gzip (its built-in
/// deflate filter: the default, which every HDF5 reader has), blosc (the Blosc filter 32001 that
/// PyTables and hdf5plugin write) and none; Zarr v2 blosc (the default), zstd, zlib, gzip, lz4
/// (numcodecs' framing) and none; Zarr v3 blosc (the default), zstd, gzip and none.
enum class ExportCompressor { standard, blosc, gzip, zlib, zstd, lz4, none };

/// The shuffle an export applies before compressing: `standard` is HDF5 gzip's byte shuffle,
/// and for blosc the array's own (its filters' shuffle or bitshuffle); `bit` goes with blosc
/// only, and the other compressors of Zarr take none (Zarr's shuffle is blosc's).
enum class ExportShuffle { standard, none, byte, bit };

/// How an export encodes what it writes: the output's chunks and compression, common to the
/// HDF5 and Zarr exports (each refuses by name what its format does not take).
struct ExportCoding {
    /// The output's chunks (HDF5 chunks, Zarr v2 chunks, Zarr v3 shards); empty: the array's.
    Shape chunks;
    /// Zarr v3's inner chunks; empty: the array's blocks (chosen for the chunks when `chunks`
    /// is given). HDF5 and Zarr v2 have none.
    Shape blocks;
    ExportCompressor compressor = ExportCompressor::standard;  ///< see ExportCompressor
    ExportShuffle shuffle = ExportShuffle::standard;           ///< see ExportShuffle
    /// Blosc's codec (blosclz, lz4, lz4hc, zlib, zstd); default: the array's where Blosc 1.x has
    /// it, else zstd.
    std::optional<codec::Codec> codec;
    /// The level, 0-9; -1: 4 for HDF5's gzip, else the array's.
    int clevel = -1;
};

/// How export_zarr writes.
struct ZarrExportOptions : ExportCoding {
    int format = 3;          ///< 3: sharded (sharding_indexed); 2: one chunk per file
    bool overwrite = false;  ///< replace an existing Zarr array at the path (nothing else)
    bool durable = true;     ///< fsync what is written before it is moved into place
    int nthreads = 0;        ///< threads reading and encoding chunks (0: all cores)
    /// Called after each chunk written, one call at a time: (chunks done, total).
    std::function<void(std::int64_t, std::int64_t)> progress;
    /// How an s3:// destination is reached (credentials, region, endpoint); empty fields come
    /// from the environment and the AWS files, as for reads.
    storage::S3Options s3;
    /// The HTTP settings of the requests that put it (timeouts, retries).
    storage::HttpOptions http;
};

/// Writes `a` as a Zarr array at `path`, a directory built under a temporary name and moved into
/// place whole; or at an s3:// prefix, built locally (under $TMPDIR) and put as objects, its
/// chunks first and its metadata last (a reader finds the array only once it is whole). v3: the
/// array's chunks (or `o.chunks`) are shards (sharding_indexed) of inner chunks of its block shape
/// (or `o.blocks`; where a block's extent does not divide the chunk's, the largest divisor of the
/// chunk's below it: inner chunks tile a shard), compressed with bytes + blosc (the array's codec
/// and shuffle), or zstd where Blosc 1.x lacks the codec, or as `o` says; the index at the end,
/// with crc32c. v2: the array's chunks (or `o.chunks`), the blosc compressor or as `o` says. The
/// array's attributes become the Zarr array's. \throws UsageError for an existing path without
/// `overwrite`, one that is not a Zarr array, or coding the format does not take;
///         UnsupportedError for a dtype the format has no type for (v3: strings, records)
void export_zarr(const AnyArray& a, const std::string& path, const ZarrExportOptions& o = {});

/// How export_hdf5 writes.
struct Hdf5ExportOptions : ExportCoding {
    bool overwrite = false;  ///< replace a dataset of that path (else refused)
    bool durable = true;     ///< fsync the file before it replaces the old one
    /// Called after each chunk written: (chunks done, total).
    std::function<void(std::int64_t, std::int64_t)> progress;
};

/// Writes `a` as an HDF5 dataset at `location`, "FILE.h5:/path/to/dataset" (intermediate groups
/// made), chunked as `a` is (or `o.chunks`) and compressed with shuffle + deflate, which h5py and
/// every HDF5 reader read without plugins, or as `o` says; its attributes as HDF5 attributes. A new
/// file is built under a temporary name; an existing one is copied, added to, and replaces the old
/// in one step (its mode kept): readers see the old file or the new, never a part. \throws
/// UsageError for an existing dataset without `overwrite`, a file that is not HDF5, or
///         coding HDF5 does not take (`blocks`; zstd, zlib, lz4; a bit shuffle with gzip);
///         UnsupportedError in a build without libhdf5, or for a dtype HDF5 has no type for
///         (unicode, datetimes)
void export_hdf5(const AnyArray& a, const std::string& location, const Hdf5ExportOptions& o = {});

/// One member of an HDF5 file or a Zarr hierarchy, as list_hdf5 and list_zarr (and `b2nd ls`)
/// give it.
struct HierarchyEntry {
    std::string path;  ///< from the root listed, '/'-separated: "/run7/temperature"
    /// "group", "dataset" (HDF5), "array" (Zarr), "soft link", "external link" (links are
    /// listed, never followed), "datatype" (an HDF5 named type)
    std::string kind;
    Shape shape;        ///< a dataset's or array's
    std::string dtype;  ///< NumPy's dtype string; "" where the type does not map (`note` says)
    Shape chunks;       ///< empty for a contiguous or compact HDF5 dataset
    std::int64_t stored = -1;  ///< bytes as stored (HDF5's storage size, Zarr's chunk files); -1
    std::string note;          ///< a link's target, or why a type does not map
};

/// The members of an HDF5 file, or of one of its groups ("FILE.h5:/group"), recursively (as
/// `h5ls -r`), in name order: groups, datasets (shape, dtype, chunks, stored size), named types,
/// and soft and external links (listed with their targets, not followed).
/// \throws IoError for a missing file; FormatError for a file that is not HDF5; UsageError when
///         the path names a dataset; UnsupportedError in a build without libhdf5
std::vector<HierarchyEntry> list_hdf5(const std::string& location);

/// The members of a local Zarr v2 or v3 hierarchy under `path` (a group's directory, or an
/// array's: itself), recursively (as zarr's tree()), in name order: groups and arrays (shape,
/// dtype, chunks, the bytes of their chunk files). Links leading out of `path` are not followed.
/// \throws UsageError when `path` is no Zarr node or is a URL (listed through its store's driver
///         instead: `b2nd ls` lists S3 prefixes)
std::vector<HierarchyEntry> list_zarr(const std::string& path);

/// The attributes of an HDF5 file's root group ("FILE.h5"), a group or a dataset
/// ("FILE.h5:/path"), as `b2nd meta` prints them: numbers, strings, bools and numeric lists (the
/// dimension-scale bookkeeping and types with no value here left out). Links are not followed.
/// \throws as list_hdf5
Value::Map hdf5_attributes(const std::string& location);

/// The attributes of a local Zarr group or array: v2's .zattrs, v3's zarr.json "attributes".
/// \throws UsageError when `path` is no Zarr node; FormatError for metadata that is not JSON
Value::Map zarr_attributes(const std::string& path);

/// Whether this build reads and writes HDF5 (libhdf5 was found when it was built).
bool have_hdf5() noexcept;

}  // namespace b2nd
