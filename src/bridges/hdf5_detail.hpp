// Internal to src/bridges/hdf5_*.cpp, the only files that see <hdf5.h>: the lock every libhdf5
// call holds, handles, errors with libhdf5's own words, and the mappings of types and attributes.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <b2nd/codec/ids.hpp>
#include <b2nd/dtype.hpp>
#include <b2nd/shape.hpp>
#include <b2nd/value.hpp>

#include <hdf5.h>

namespace b2nd::bridges::h5 {

/// Held around every libhdf5 call: the serial library is not thread-safe. Also starts the
/// library once (our decoders registered as filters 32000 and 32001, automatic error printing
/// off for the calls we make).
std::unique_lock<std::recursive_mutex> lock();

/// An identifier closed with its own function (under the lock).
class Handle {
public:
    Handle() = default;
    Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
    Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
    Handle& operator=(Handle&& o) noexcept {
        std::swap(id_, o.id_);
        std::swap(close_, o.close_);
        return *this;
    }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    ~Handle() {
        if (id_ >= 0 && close_ != nullptr) {
            auto held = lock();
            close_(id_);
        }
    }
    hid_t get() const noexcept { return id_; }

private:
    hid_t id_ = -1;
    herr_t (*close_)(hid_t) = nullptr;
};

/// libhdf5's innermost message for the failure just seen ("" when none).
std::string last_error();
/// \throws FormatError "`where`: `what` (libhdf5: ...)" when id < 0; else id.
hid_t check(hid_t id, const std::string& where, const std::string& what);

/// The Blosc filter's id (PyTables', hdf5-blosc's).
inline constexpr H5Z_filter_t kBloscFilter = 32001;

/// Blosc's code for a codec in the Blosc filter's parameters (blosclz 0, lz4 1, lz4hc 2, zlib 4,
/// zstd 5).
unsigned blosc_compcode(codec::Codec c) noexcept;

/// Registers our decoders: Blosc (32001, what PyTables and hdf5-blosc write) and LZF (32000,
/// h5py's).
void register_filters();

/// What our decoders (hdf5_filters.cpp) know of the chunks libhdf5 hands them: the size every
/// chunk of the dataset being read decodes to (its chunk dimensions times its type's size), which
/// libhdf5 does not tell a filter. Set on the calling thread around each H5Dread (libhdf5 runs
/// filters on that thread); outside one, our decoders refuse every chunk. Scopes nest.
class FilterScope {
public:
    explicit FilterScope(std::uint64_t chunk_bytes);
    ~FilterScope();
    FilterScope(const FilterScope&) = delete;
    FilterScope& operator=(const FilterScope&) = delete;
    std::uint64_t chunk_bytes() const noexcept { return bytes_; }
    /// Why one of our decoders refused a chunk in this scope ("" when none did): libhdf5 only
    /// says that a filter failed.
    const std::string& refusal() const noexcept { return refusal_; }
    void refuse(std::string why) { refusal_ = std::move(why); }

private:
    std::uint64_t bytes_;
    FilterScope* outer_;
    std::string refusal_;
};

/// Our filters as libhdf5 calls them (H5Z_func_t): decoding (H5Z_FLAG_REVERSE), the chunk in
/// *buf (nbytes of it) replaced by exactly FilterScope::chunk_bytes() decoded bytes, whose size
/// is returned; 0 when refused. Blosc also encodes, as its parameters say (an export's datasets,
/// and any write through libhdf5 in this process); LZF refuses to.
std::size_t blosc_filter(unsigned flags,
                         std::size_t cd_nelmts,
                         const unsigned cd_values[],
                         std::size_t nbytes,
                         std::size_t* buf_size,
                         void** buf);
/// The LZF decoder, as blosc_filter.
std::size_t lzf_filter(unsigned flags,
                       std::size_t cd_nelmts,
                       const unsigned cd_values[],
                       std::size_t nbytes,
                       std::size_t* buf_size,
                       void** buf);

/// Chunks read as stored and decoded here, on the array's threads (hdf5_direct.cpp), instead of
/// through libhdf5's filter pipeline (one thread under its lock): for datasets whose filters are
/// deflate and shuffle only, read in the file's own type.
struct DirectFilters {
    /// The pipeline in the order libhdf5 applies it when writing: H5Z_FILTER_DEFLATE or
    /// H5Z_FILTER_SHUFFLE with the shuffle's element size.
    struct Step {
        int id = 0;
        unsigned element = 0;
    };
    std::vector<Step> steps;
    /// The dataset's pipeline when every filter is one we decode (nothing when there is none to
    /// decode, or one we do not: libhdf5 reads those).
    static std::optional<DirectFilters> of(hid_t dcpl);
    /// Decodes a chunk as stored (`n` bytes; filter i skipped where bit i of `mask` is set) into
    /// exactly `out_n` bytes at `out`. \throws FormatError naming `where` for a chunk that does
    /// not decode, or decodes to another size
    void decode(unsigned mask,
                const std::uint8_t* stored,
                std::size_t n,
                std::uint8_t* out,
                std::size_t out_n,
                const std::string& where) const;
};

/// What an HDF5 source file may reach besides itself (hdf5_reach.cpp): external links, external
/// storage and virtual datasets are refused by name unless `external`
/// (OpenOptions::hdf5_external), and then followed only to regular files inside the file's
/// directory; filters that only a plugin decodes are refused unless `plugins`
/// (OpenOptions::hdf5_plugins).
class Reach {
public:
    Reach(const std::string& file, bool external, bool plugins, std::string where);
    Reach(const Reach&) = delete;
    Reach& operator=(const Reach&) = delete;
    /// A dataset access property list (also a link access one) for every open and lookup: its
    /// external links go through the check, and relative names of other files are looked for
    /// in the source's directory.
    hid_t access() const noexcept { return dapl_.get(); }
    /// \throws UsageError naming the external link the last libhdf5 call refused, if any (its
    /// own error only says that a traversal failed)
    void throw_refused();
    /// \throws UsageError, after `where` (the dataset), when the dataset open as `dset` keeps its
    /// data in external files or is virtual and may not reach them
    void check_dataset(hid_t dset, const std::string& where) const;
    /// Whether libhdf5 may load filter plugins for this file.
    bool plugins() const noexcept { return plugins_; }

private:
    static herr_t on_external_link(const char* parent_file,
                                   const char* parent_group,
                                   const char* child_file,
                                   const char* child_object,
                                   unsigned* acc_flags,
                                   hid_t fapl,
                                   void* self);
    /// The file a virtual dataset's source lies in: dset's own ("" names it), or `other` opened
    /// into `holder`. \throws UsageError after `where` when it cannot be opened
    hid_t source_file(hid_t dset,
                      const std::string& other,
                      Handle& holder,
                      const std::string& where) const;

    bool allow_;
    bool plugins_;
    std::string where_;
    std::string dir_;  // the source's directory, canonical
    Handle dapl_;
    std::string refused_;  // set by on_external_link
};

/// Checks, with the lock held, that `file` is a regular file libhdf5 takes for HDF5.
/// \throws IoError (missing), UsageError (not a regular file), FormatError (not HDF5, saying
///         what it is), each after `where`
void check_file(const std::string& file, const std::string& where);

/// The datasets under the object `obj` (a file or a group), as paths from it ("/a/b").
std::vector<std::string> datasets_under(hid_t obj);

/// A new datatype identifier as a handle. \throws FormatError after `where` when id < 0
Handle type_handle(hid_t id, const std::string& where);
/// h5py's bool: an enum of a one-byte integer with exactly FALSE = 0 and TRUE = 1.
bool is_h5py_bool(hid_t type);
/// h5py's complex: a compound {r, i} of two floats of one size, packed.
bool is_h5py_complex(hid_t type);

/// The NumPy dtype string of an HDF5 datatype: integers, floats (16-64 bits), h5py's bool (an
/// enum of int8 FALSE/TRUE) and complex (a compound {r, i}), fixed-length strings (S), opaque
/// (V), compounds as structured dtypes, arrays inside compounds. \throws UnsupportedError
/// naming anything else (variable-length strings and sequences, references, enumerations)
std::string descr_of(hid_t type, const std::string& where);
/// The HDF5 datatype of `d`, as h5py writes it (bool and complex as above). \throws
/// UnsupportedError for unicode, datetimes and objects
Handle type_of(const DType& d, const std::string& where);

/// The attributes of an object as values: numbers, strings, bools, numeric lists. Attributes
/// of other types (references, the dimension-scale bookkeeping) are left out.
/// What read_attributes records, in place of a dtype, for a string of fixed length.
inline constexpr const char* kFixedText = "|S";
/// When `dtypes`, the NumPy dtype of each numeric attribute narrower than 64 bits (or not
/// little-endian) is added to it by name, the values above being all 64 bits wide; and
/// kFixedText for each string of fixed length (netCDF's text; h5py's are variable-length).
/// When `left_out`, each attribute left out (bookkeeping aside) is added to it by name, with why.
Value::Map read_attributes(hid_t obj,
                           const std::string& where,
                           Value::Map* dtypes = nullptr,
                           Value::Map* left_out = nullptr);
/// Adds to `attrs`, the attributes of the dataset `dset` of `file` an open carries, what an import
/// keeps beside them (hdf5_dims.cpp), each only where `attrs` has no entry of its name: the
/// dataset's fill value as _FillValue (one a user chose, not zero), its dimensions' names as
/// _ARRAY_DIMENSIONS (the scales attached, else the labels; only when every dimension has one),
/// the file's global attributes as one map, _global_attributes.
void carried_attributes(
    hid_t file, hid_t dset, const DType& dtype, Value::Map& attrs, const std::string& where);

/// An attribute as it is stored: its type, extent and bytes.
struct RawAttribute {
    std::string name;
    Handle type, space;
    std::vector<std::uint8_t> data;
};

/// A dataset's place in its file's dimensions (HDF5 dimension scales, netCDF-4's dimensions),
/// read before it is replaced and given to its replacement: the scales attached to its
/// dimensions, and when it is itself a scale, its name and the datasets it is attached to;
/// netCDF's dimension ids (_Netcdf4Dimid, _Netcdf4Coordinates); unlimited dimensions; whether
/// it tracks the creation order of its attributes.
class DimensionTies {
public:
    /// The ties of the dataset at `path`. \throws FormatError after `where` when it cannot be
    /// opened
    DimensionTies(hid_t file, const std::string& path, const std::string& where);
    /// Whether it has any.
    bool any() const;
    /// \throws UsageError, after `where`, when an array of `shape` cannot take the dataset's
    /// place: a tied dimension of another length (unless unlimited), or another rank
    void check_fits(const Shape& shape, const std::string& path, const std::string& where) const;
    /// The maximum extent of a replacement of extent `dims`: unlimited where a tied dimension was.
    std::vector<hsize_t> maxdims(const std::vector<hsize_t>& dims) const;
    /// H5Pset_attr_creation_order's flags for the replacement.
    unsigned creation_order() const noexcept { return creation_order_; }
    /// Detaches the dataset from its scales and its users from it, before it is removed.
    void untie(hid_t file, const std::string& path, const std::string& where) const;
    /// Ties the replacement `dset`, at `path`, as the old dataset was.
    void retie(hid_t file, hid_t dset, const std::string& path, const std::string& where) const;

private:
    std::vector<hsize_t> dims_, maxdims_;
    std::vector<std::vector<std::string>> attached_;  // per dimension, scales' paths
    bool scale_ = false;
    std::string name_;                                     // the scale's NAME
    std::vector<std::pair<std::string, unsigned>> users_;  // (dataset, dimension)
    std::vector<RawAttribute> raw_;
    unsigned creation_order_ = 0;
};

/// Attaches to the new dataset `dset` (at `path`, of `shape`) the scales `names`
/// (_ARRAY_DIMENSIONS) name, looked for as netCDF does: in the dataset's group, then in each
/// group above it; each a one-dimensional scale of the dimension's length, or unlimited. When
/// `make` (a file made by this export), a name found nowhere becomes a dimension of the
/// dataset's group, as netCDF writes one that has no variable.
/// \returns false, attaching none, unless every dimension has one
bool attach_named(hid_t file,
                  hid_t dset,
                  const std::string& path,
                  const Value& names,
                  const Shape& shape,
                  bool make,
                  const std::string& where);

/// Writes attributes on an object: numbers, bools, strings (variable-length UTF-8, as h5py),
/// lists of numbers; other values as their JSON text. A number or list of numbers `dtypes` (a
/// map, as read_attributes fills) gives a dtype for is written in that dtype where every value
/// fits it.
void write_attributes(hid_t obj,
                      const Value::Map& attrs,
                      const std::string& where,
                      const Value* dtypes = nullptr);
/// Writes the number or list of numbers `v` as an attribute `name` of `dtype` (an integer or
/// float type). \returns false, writing nothing, for another value or one `dtype` cannot hold
bool write_as(hid_t obj,
              const std::string& name,
              const Value& v,
              const DType& dtype,
              const std::string& where);

}  // namespace b2nd::bridges::h5
