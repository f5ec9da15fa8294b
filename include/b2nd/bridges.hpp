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

#include <b2nd/any_array.hpp>
#include <b2nd/codec/ids.hpp>

namespace b2nd {

/// How export_zarr writes.
struct ZarrExportOptions {
    int format = 3;          ///< 3: sharded (sharding_indexed); 2: one chunk per file
    bool overwrite = false;  ///< replace an existing Zarr array at the path (nothing else)
    /// The compressor; default: the array's where Blosc 1.x has it (blosclz, lz4, lz4hc, zlib,
    /// zstd), else zstd.
    std::optional<codec::Codec> codec;
    int clevel = -1;      ///< the compression level; -1: the array's
    bool durable = true;  ///< fsync what is written before it is moved into place
    int nthreads = 0;     ///< threads reading and encoding chunks (0: all cores)
    /// Called after each chunk written, one call at a time: (chunks done, total).
    std::function<void(std::int64_t, std::int64_t)> progress;
};

/// Writes `a` as a Zarr array at `path`, a directory built under a temporary name and moved into
/// place whole. v3: the array's chunks are shards (sharding_indexed) of inner chunks of its block
/// shape (where a block's extent does not divide the chunk's, the largest divisor of the chunk's
/// below it: inner chunks tile a shard), compressed with bytes + blosc (the array's codec and
/// shuffle), or zstd where Blosc 1.x lacks the codec; the index at the end, with crc32c. v2: the
/// array's chunks, the blosc compressor. The array's attributes become the Zarr array's.
/// \throws UsageError for an existing path without `overwrite`, or one that is not a Zarr array;
///         UnsupportedError for a dtype the format has no type for (v3: strings, records)
void export_zarr(const AnyArray& a, const std::string& path, const ZarrExportOptions& o = {});

/// How export_hdf5 writes.
struct Hdf5ExportOptions {
    bool overwrite = false;  ///< replace a dataset of that path (else refused)
    int gzip_level = 4;      ///< the deflate filter's level, 0-9
    bool shuffle = true;     ///< the shuffle filter before deflate
    bool durable = true;     ///< fsync the file before it replaces the old one
    /// Called after each chunk written: (chunks done, total).
    std::function<void(std::int64_t, std::int64_t)> progress;
};

/// Writes `a` as an HDF5 dataset at `location`, "FILE.h5:/path/to/dataset" (intermediate groups
/// made), chunked as `a` is and compressed with shuffle + deflate, which h5py and every HDF5
/// reader read without plugins; its attributes as HDF5 attributes. A new file is built under a
/// temporary name; an existing one is copied, added to, and replaces the old in one step (its
/// mode kept): readers see the old file or the new, never a part.
/// \throws UsageError for an existing dataset without `overwrite` or a file that is not HDF5;
///         UnsupportedError in a build without libhdf5, or for a dtype HDF5 has no type for
///         (unicode, datetimes)
void export_hdf5(const AnyArray& a, const std::string& location, const Hdf5ExportOptions& o = {});

/// Whether this build reads and writes HDF5 (libhdf5 was found when it was built).
bool have_hdf5() noexcept;

}  // namespace b2nd
