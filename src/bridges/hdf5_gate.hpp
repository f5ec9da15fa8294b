// Internal: HDF5 datasets through Debian's serial libhdf5, as the rest of the library asks for
// them. This header does not include <hdf5.h>: only src/bridges/hdf5_*.cpp do (hdf5_detail.hpp),
// and a build without libhdf5 compiles hdf5_none.cpp instead, which refuses by name.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <b2nd/any_array.hpp>
#include <b2nd/bridges.hpp>
#include <b2nd/params.hpp>
#include <b2nd/value.hpp>

namespace b2nd::bridges {

/// An HDF5 dataset: the file and the dataset's path in it ("" when not given).
struct Hdf5Location {
    std::string file;
    std::string dataset;
};

/// Whether `file` is a local regular file with HDF5's signature where libhdf5 looks for one (at 0,
/// 512, 1024, ...: after a user block, as MATLAB 7.3 writes).
bool hdf5_signature(const std::string& file);

/// The HDF5 location `spec` names: "FILE:/path/to/dataset", "FILE:path/to/dataset" or "FILE",
/// FILE ending in .h5, .hdf5, .he5 or .nc (any case) or, whatever its name, an existing file with
/// HDF5's signature (hdf5_signature); nothing for other names.
std::optional<Hdf5Location> hdf5_location(const std::string& spec);

/// Opens a dataset read-only, lazily: an array whose blocks are hyperslabs read from it (the
/// array's chunks follow the dataset's). Without a dataset path, the file's only dataset.
/// Attributes become the array's (vlmeta). \throws IoError for a missing file; UsageError for a
/// missing dataset (listing those there are) or a group; UnsupportedError naming a type this
/// library does not map (variable-length strings, references, enumerations other than bool)
AnyArray open_hdf5(const Hdf5Location& at, const OpenOptions& o);

/// What `b2nd info` says of the dataset at `at` (its path resolved, as "/run7/t") beyond its
/// array: a map of format ("HDF5"), dataset, maxshape (null for unlimited extents), layout
/// (contiguous, chunked, compact, virtual), filters (text, as h5ls names them), fill_value (one
/// item's bytes, when defined), stored (bytes), and attributes_left_out (a map of name to why,
/// when any are). \throws as open_hdf5
Value hdf5_summary(const Hdf5Location& at, const OpenOptions& o);

/// Writes `a` as the dataset at.dataset (intermediate groups made) of at.file, chunked as `a` is
/// and compressed with shuffle + deflate, which h5py reads without plugins; attributes as HDF5
/// attributes. A new file is built under a temporary name; an existing one is copied, added to,
/// and replaces the old in one step: readers see the old file or the new, never a part.
void export_hdf5(const AnyArray& a, const Hdf5Location& at, const Hdf5ExportOptions& o);

}  // namespace b2nd::bridges
