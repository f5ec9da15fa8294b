// Internal to src/bridges/hdf5_*.cpp, the only files that see <hdf5.h>: the lock every libhdf5
// call holds, handles, errors with libhdf5's own words, and the mappings of types and attributes.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include <b2nd/dtype.hpp>
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

/// Registers our decoders: Blosc (32001, what PyTables and hdf5-blosc write) and LZF (32000,
/// h5py's).
void register_filters();

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
Value::Map read_attributes(hid_t obj, const std::string& where);
/// Writes attributes on an object: numbers, bools, strings (variable-length UTF-8, as h5py),
/// lists of numbers; other values as their JSON text.
void write_attributes(hid_t obj, const Value::Map& attrs, const std::string& where);

}  // namespace b2nd::bridges::h5
