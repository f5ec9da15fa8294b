// HDF5 attributes as values, both ways (hdf5_detail.hpp): numbers, strings, bools and lists of
// them as h5py's tolist() gives them; arrays of two or more dimensions and complex numbers kept
// whole as Blosc2 objects; what has no value here left out.
#include <algorithm>
#include <cstring>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>
#include <b2nd/objects.hpp>

#include "../detail/text.hpp"
#include "hdf5_detail.hpp"
#include "zarr_meta.hpp"

namespace b2nd::bridges::h5 {

namespace {

/// Attributes that say how dimension scales attach (h5py, netCDF-4): not the data's attributes.
/// HDF5's dimension-scale records and netCDF's own (kept by the structure they describe, never
/// carried as values: hdf5_dims.cpp).
bool bookkeeping(const std::string& name) {
    return name == "DIMENSION_LIST" || name == "REFERENCE_LIST" || name == "CLASS" ||
           name == "NAME" || name.rfind("_Netcdf4", 0) == 0 || name == "_nc3_strict" ||
           name == "_NCProperties" || name == "_IsNetcdf4" || name == "_SuperblockVersion";
}

herr_t collect_name(hid_t, const char* name, const H5A_info_t*, void* out) {
    static_cast<std::vector<std::string>*>(out)->emplace_back(name);
    return 0;
}

Value text_value(std::string s) {
    if (detail::utf8_decode(s, nullptr) < 0) {
        return Value::binary(Value::Bytes(s.begin(), s.end()));
    }
    return Value(std::move(s));
}

/// A numeric attribute a number or a flat list would lose (of more than one dimension, or
/// complex): a Blosc2 object (msgpack ext 42, a b2nd array of its dtype and shape, as
/// python-blosc2 keeps arrays in vlmeta), or nil for the others (numbers and flat lists).
Value typed_attribute(
    hid_t attr, hid_t type, hid_t space, std::size_t n, const std::string& where) {
    const H5T_class_t cls = H5Tget_class(type);
    const bool complex = cls == H5T_COMPOUND && is_h5py_complex(type);
    if (cls != H5T_INTEGER && cls != H5T_FLOAT && !complex) {
        return nullptr;
    }
    const int rank = H5Sget_simple_extent_ndims(space);
    std::string descr;
    try {
        descr = descr_of(type, where);
    } catch (const Error&) {
        return nullptr;
    }
    if (rank < 0 || rank > kMaxNdim || (rank <= 1 && !complex)) {
        // A number, or a list of them, as h5py's tolist() gives them (in 64 bits).
        return nullptr;
    }
    const DType dtype = DType::parse(descr);
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    H5Sget_simple_extent_dims(space, dims.data(), nullptr);
    std::vector<std::uint8_t> bytes(n * static_cast<std::size_t>(dtype.itemsize()));
    // In the file's own type: its bytes are the dtype's (descr_of keeps the byte order).
    check(H5Aread(attr, type, bytes.data()), where, "cannot read an attribute");
    const AnyArray a = AnyArray::create_in_memory_from(dtype, Shape(dims.begin(), dims.end()),
                                                       {bytes.data(), bytes.size()});
    return Value::blosc2_object(a.to_cframe());
}

/// One attribute as a value, or nil to leave it out.
Value read_attribute(hid_t attr, const std::string& where) {
    Handle type(H5Aget_type(attr), H5Tclose);
    Handle space(H5Aget_space(attr), H5Sclose);
    if (type.get() < 0 || space.get() < 0) {
        return nullptr;
    }
    if (H5Sget_simple_extent_type(space.get()) == H5S_NULL) {
        return nullptr;  // an empty attribute (h5py.Empty): no value to carry, left out
    }
    const hssize_t points = H5Sget_simple_extent_npoints(space.get());
    const int rank = H5Sget_simple_extent_ndims(space.get());
    const std::size_t size = H5Tget_size(type.get());
    if (points < 0 || rank < 0 || static_cast<std::uint64_t>(points) * (size + 8) > (64U << 20)) {
        return nullptr;  // absurd, or larger than any attribute we carry
    }
    const auto n = static_cast<std::size_t>(points);
    if (Value typed = typed_attribute(attr, type.get(), space.get(), n, where); !typed.is_nil()) {
        return typed;
    }
    const auto one_or_list = [&](Value::Array items) {
        return rank == 0 && items.size() == 1 ? items[0] : Value(std::move(items));
    };
    Value::Array items;
    switch (H5Tget_class(type.get())) {
        case H5T_INTEGER: {
            const bool u64 = H5Tget_sign(type.get()) == H5T_SGN_NONE && size == 8;
            if (u64) {
                std::vector<std::uint64_t> v(n);
                check(H5Aread(attr, H5T_NATIVE_UINT64, v.data()), where,
                      "cannot read an attribute");
                items.assign(v.begin(), v.end());
            } else {
                std::vector<std::int64_t> v(n);
                check(H5Aread(attr, H5T_NATIVE_INT64, v.data()), where, "cannot read an attribute");
                items.assign(v.begin(), v.end());
            }
            return one_or_list(std::move(items));
        }
        case H5T_FLOAT: {
            std::vector<double> v(n);
            check(H5Aread(attr, H5T_NATIVE_DOUBLE, v.data()), where, "cannot read an attribute");
            items.assign(v.begin(), v.end());
            return one_or_list(std::move(items));
        }
        case H5T_ENUM: {
            if (!is_h5py_bool(type.get())) {
                return nullptr;
            }
            std::vector<signed char> v(n);
            check(H5Aread(attr, type.get(), v.data()), where, "cannot read an attribute");
            for (const signed char c : v) {
                items.emplace_back(c != 0);
            }
            return one_or_list(std::move(items));
        }
        case H5T_STRING: {
            if (H5Tis_variable_str(type.get()) > 0) {
                Handle mem = type_handle(H5Tcopy(H5T_C_S1), where);
                H5Tset_size(mem.get(), H5T_VARIABLE);
                H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
                std::vector<char*> v(n, nullptr);
                check(H5Aread(attr, mem.get(), v.data()), where, "cannot read an attribute");
                for (char* s : v) {
                    items.push_back(text_value(s != nullptr ? s : ""));
                }
                H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, v.data());
            } else {
                std::vector<char> raw(n * size);
                check(H5Aread(attr, type.get(), raw.data()), where, "cannot read an attribute");
                const bool space_pad = H5Tget_strpad(type.get()) == H5T_STR_SPACEPAD;
                for (std::size_t i = 0; i < n; ++i) {
                    std::string s(raw.data() + i * size, size);
                    const std::size_t end = space_pad ? s.find_last_not_of(' ') + 1 : s.find('\0');
                    if (end != std::string::npos) {
                        s.resize(end);
                    }
                    items.push_back(text_value(std::move(s)));
                }
            }
            return one_or_list(std::move(items));
        }
        default:
            return nullptr;  // references, compounds, sequences: not carried
    }
}

/// Why an attribute read_attribute left out has no value here.
std::string why_left_out(hid_t attr) {
    Handle type(H5Aget_type(attr), H5Tclose);
    Handle space(H5Aget_space(attr), H5Sclose);
    if (type.get() < 0 || space.get() < 0) {
        last_error();
        return "unreadable";
    }
    if (H5Sget_simple_extent_type(space.get()) == H5S_NULL) {
        return "empty (a null dataspace, h5py.Empty)";
    }
    switch (H5Tget_class(type.get())) {
        case H5T_REFERENCE:
            return "a reference";
        case H5T_COMPOUND:
            return "a compound";
        case H5T_VLEN:
            return "a variable-length sequence";
        case H5T_ENUM:
            return "an enumeration";
        case H5T_OPAQUE:
            return "opaque";
        case H5T_ARRAY:
            return "an array type";
        case H5T_BITFIELD:
            return "a bitfield";
        default:
            return "larger than 64 MiB, or of a type with no value here";
    }
}

}  // namespace

Value::Map read_attributes(hid_t obj,
                           const std::string& where,
                           Value::Map* dtypes,
                           Value::Map* left_out) {
    std::vector<std::string> names;
    hsize_t at = 0;
    H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &at, collect_name, &names);
    Value::Map out;
    for (const std::string& name : names) {
        if (bookkeeping(name)) {
            continue;
        }
        Handle attr(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
        if (attr.get() < 0) {
            last_error();
            continue;
        }
        Value v = read_attribute(attr.get(), where + " attribute '" + name + "'");
        if (v.is_nil()) {
            if (left_out != nullptr) {
                left_out->emplace_back(name, why_left_out(attr.get()));
            }
            continue;
        }
        if (dtypes != nullptr && v.type() != Value::Type::ext) {
            // Numbers read in 64 bits: the narrower type they had is recorded; so are strings
            // of fixed length (netCDF's text), which are written back as such.
            Handle type(H5Aget_type(attr.get()), H5Tclose);
            const H5T_class_t cls = H5Tget_class(type.get());
            if (cls == H5T_STRING && H5Tis_variable_str(type.get()) == 0) {
                dtypes->emplace_back(name, kFixedText);
            } else if (cls == H5T_INTEGER || cls == H5T_FLOAT) {
                try {
                    const std::string descr = descr_of(type.get(), where);
                    if (descr != "<i8" && descr != "<u8" && descr != "<f8") {
                        dtypes->emplace_back(name, descr);
                    }
                } catch (const Error&) {
                    // no dtype: nothing recorded
                }
            }
        }
        out.emplace_back(name, std::move(v));
    }
    return out;
}

namespace {

void write_attribute(hid_t obj,
                     const std::string& name,
                     hid_t type,
                     const std::vector<hsize_t>& dims,
                     const void* data,
                     const std::string& where) {
    Handle space(dims.empty()
                     ? H5Screate(H5S_SCALAR)
                     : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                 H5Sclose);
    if (H5Aexists(obj, name.c_str()) > 0) {
        H5Adelete(obj, name.c_str());
    }
    Handle attr(check(H5Acreate2(obj, name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                      where, "cannot create attribute '" + name + "'"),
                H5Aclose);
    check(H5Awrite(attr.get(), type, data), where, "cannot write attribute '" + name + "'");
}

void write_strings(hid_t obj,
                   const std::string& name,
                   const std::vector<std::string>& s,
                   bool scalar,
                   const std::string& where) {
    Handle t = type_handle(H5Tcopy(H5T_C_S1), where);
    H5Tset_size(t.get(), H5T_VARIABLE);
    H5Tset_cset(t.get(), H5T_CSET_UTF8);
    std::vector<const char*> p;
    for (const std::string& e : s) {
        p.push_back(e.c_str());
    }
    write_attribute(obj, name, t.get(),
                    scalar ? std::vector<hsize_t>{} : std::vector<hsize_t>{s.size()}, p.data(),
                    where);
}

/// Strings of fixed length (as netCDF's text attributes): the longest one's, at least 1.
void write_fixed_strings(hid_t obj,
                         const std::string& name,
                         const std::vector<std::string>& s,
                         bool scalar,
                         const std::string& where) {
    std::size_t size = 1;
    bool ascii = true;
    for (const std::string& e : s) {
        size = std::max(size, e.size());
        ascii = ascii && std::all_of(e.begin(), e.end(),
                                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    }
    Handle t = type_handle(H5Tcopy(H5T_C_S1), where);
    H5Tset_size(t.get(), size);
    H5Tset_cset(t.get(), ascii ? H5T_CSET_ASCII : H5T_CSET_UTF8);
    std::vector<char> data(size * s.size(), '\0');
    for (std::size_t i = 0; i < s.size(); ++i) {
        std::memcpy(data.data() + i * size, s[i].data(), s[i].size());
    }
    write_attribute(obj, name, t.get(),
                    scalar ? std::vector<hsize_t>{} : std::vector<hsize_t>{s.size()}, data.data(),
                    where);
}

}  // namespace

bool write_as(hid_t obj,
              const std::string& name,
              const Value& v,
              const DType& dtype,
              const std::string& where) {
    const DType::Kind kind = dtype.kind();
    if (kind != DType::Kind::int_ && kind != DType::Kind::uint && kind != DType::Kind::float_) {
        return false;
    }
    const bool list = v.type() == Value::Type::array;
    if (!list && v.type() != Value::Type::integer && v.type() != Value::Type::real) {
        return false;
    }
    std::vector<std::uint8_t> bytes;
    try {
        for (std::size_t i = 0; i < (list ? v.size() : 1); ++i) {
            const Value& e = list ? v[i] : v;
            if (e.type() != Value::Type::integer && e.type() != Value::Type::real) {
                return false;
            }
            const auto b = zarr_fill_bytes(e, dtype, where);
            bytes.insert(bytes.end(), b.begin(), b.end());
        }
    } catch (const Error&) {
        return false;  // a value the type cannot hold: written as it is, in 64 bits
    }
    const Handle t = type_of(dtype, where);
    write_attribute(obj, name, t.get(),
                    list ? std::vector<hsize_t>{v.size()} : std::vector<hsize_t>{}, bytes.data(),
                    where);
    return true;
}

void write_attributes(hid_t obj,
                      const Value::Map& attrs,
                      const std::string& where,
                      const Value* dtypes) {
    for (const auto& [k, v] : attrs) {
        if (k.type() != Value::Type::string) {
            continue;
        }
        const std::string name = k.as<std::string>();
        const Value* recorded = dtypes != nullptr ? dtypes->find(name) : nullptr;
        if (recorded != nullptr && recorded->type() == Value::Type::string) {
            const std::string said = recorded->as<std::string>();
            if (said == kFixedText && v.type() == Value::Type::string) {
                write_fixed_strings(obj, name, {v.as<std::string>()}, true, where);
                continue;
            }
            if (said != kFixedText && write_as(obj, name, v, DType::parse(said), where)) {
                continue;
            }
        }
        switch (v.type()) {
            case Value::Type::boolean: {
                const Handle t = type_of(DType::make(DType::Kind::boolean, 1, '|'), where);
                const signed char b = v.as<bool>() ? 1 : 0;
                write_attribute(obj, name, t.get(), {}, &b, where);
                continue;
            }
            case Value::Type::integer: {
                if (!v.is_negative() && v.as<std::uint64_t>() > std::uint64_t{INT64_MAX}) {
                    const std::uint64_t u = v.as<std::uint64_t>();
                    write_attribute(obj, name, H5T_STD_U64LE, {}, &u, where);
                } else {
                    const std::int64_t i = v.as<std::int64_t>();
                    write_attribute(obj, name, H5T_STD_I64LE, {}, &i, where);
                }
                continue;
            }
            case Value::Type::real: {
                const double d = v.as<double>();
                write_attribute(obj, name, H5T_IEEE_F64LE, {}, &d, where);
                continue;
            }
            case Value::Type::string:
                write_strings(obj, name, {v.as<std::string>()}, true, where);
                continue;
            case Value::Type::array: {
                bool ints = v.size() > 0, numbers = v.size() > 0, strings = v.size() > 0;
                for (const Value& e : v.array()) {
                    ints = ints && e.type() == Value::Type::integer;
                    numbers = numbers &&
                              (e.type() == Value::Type::integer || e.type() == Value::Type::real);
                    strings = strings && e.type() == Value::Type::string;
                }
                const std::vector<hsize_t> dims{v.size()};
                try {
                    if (ints) {
                        const auto i = v.as<std::vector<std::int64_t>>();
                        write_attribute(obj, name, H5T_STD_I64LE, dims, i.data(), where);
                        continue;
                    }
                } catch (const UsageError&) {
                    numbers = true;  // beyond int64: as floats below
                }
                if (numbers) {
                    std::vector<double> d;
                    for (const Value& e : v.array()) {
                        d.push_back(e.as<double>());
                    }
                    write_attribute(obj, name, H5T_IEEE_F64LE, dims, d.data(), where);
                    continue;
                }
                if (strings) {
                    write_strings(obj, name, v.as<std::vector<std::string>>(), false, where);
                    continue;
                }
                break;
            }
            case Value::Type::ext: {
                // An array kept whole (typed_attribute; python-blosc2's arrays in vlmeta): an
                // attribute of its dtype and shape.
                AnyArray a;
                try {
                    a = v.is_blosc2_object() ? open_blosc2_object(v) : AnyArray();
                } catch (const Error&) {
                    a = AnyArray();
                }
                const DType::Kind kind = a ? a.dtype().kind() : DType::Kind::void_;
                if (kind == DType::Kind::int_ || kind == DType::Kind::uint ||
                    kind == DType::Kind::float_ || kind == DType::Kind::complex_ ||
                    kind == DType::Kind::boolean) {
                    const Handle t = type_of(a.dtype(), where);
                    const std::vector<hsize_t> dims(a.shape().begin(), a.shape().end());
                    const std::vector<std::uint8_t> data = a.read();
                    write_attribute(obj, name, t.get(), dims, data.data(), where);
                    continue;
                }
                break;
            }
            default:
                break;
        }
        write_strings(obj, name, {v.to_json()}, true, where);  // maps, nil, bytes: their JSON
    }
}

}  // namespace b2nd::bridges::h5
