// HDF5 datatypes and attributes mapped to dtypes and values, both ways, as h5py spells them
// (hdf5_detail.hpp). Nothing is converted lossily: what has no dtype is refused by name.
#include <cstring>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>
#include <b2nd/objects.hpp>

#include "../detail/text.hpp"
#include "hdf5_detail.hpp"

namespace b2nd::bridges::h5 {

namespace {

using detail::num;

Handle type_handle(hid_t id, const std::string& where) {
    return Handle(check(id, where, "cannot make an HDF5 datatype"), H5Tclose);
}

std::string member_name(hid_t type, unsigned i) {
    char* n = H5Tget_member_name(type, i);
    std::string s = n != nullptr ? n : "";
    H5free_memory(n);
    return s;
}

char order_of(hid_t type, std::size_t size) {
    if (size == 1) {
        return '|';
    }
    return H5Tget_order(type) == H5T_ORDER_BE ? '>' : '<';
}

/// h5py's bool: an enum of a one-byte integer with exactly FALSE = 0 and TRUE = 1.
bool is_h5py_bool(hid_t type) {
    if (H5Tget_size(type) != 1 || H5Tget_nmembers(type) != 2) {
        return false;
    }
    for (unsigned i = 0; i < 2; ++i) {
        signed char v = -1;
        if (H5Tget_member_value(type, i, &v) < 0) {
            return false;
        }
        const std::string n = member_name(type, i);
        if (!((n == "FALSE" && v == 0) || (n == "TRUE" && v == 1))) {
            return false;
        }
    }
    return true;
}

/// h5py's complex: a compound {r, i} of two floats of one size, packed.
bool is_h5py_complex(hid_t type) {
    if (H5Tget_nmembers(type) != 2 || member_name(type, 0) != "r" || member_name(type, 1) != "i") {
        return false;
    }
    const std::size_t size = H5Tget_size(type);
    for (unsigned i = 0; i < 2; ++i) {
        Handle m(H5Tget_member_type(type, i), H5Tclose);
        if (m.get() < 0 || H5Tget_class(m.get()) != H5T_FLOAT || H5Tget_size(m.get()) * 2 != size ||
            H5Tget_member_offset(type, i) != i * size / 2) {
            return false;
        }
    }
    return size == 8 || size == 16;
}

std::string quoted(const std::string& s) {
    return detail::python_repr(s, "");
}

std::string compound_descr(hid_t type, const std::string& where) {
    const int n = H5Tget_nmembers(type);
    if (n <= 0) {
        throw UnsupportedError(where + ": a compound type without members");
    }
    std::vector<std::string> names, formats;
    std::vector<std::size_t> offsets;
    std::size_t packed_end = 0;
    bool packed = true;
    for (unsigned i = 0; i < static_cast<unsigned>(n); ++i) {
        Handle m(H5Tget_member_type(type, i), H5Tclose);
        std::string f;
        if (H5Tget_class(m.get()) == H5T_ARRAY) {
            const int rank = H5Tget_array_ndims(m.get());
            std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0)));
            H5Tget_array_dims2(m.get(), dims.data());
            Handle base(H5Tget_super(m.get()), H5Tclose);
            f = quoted(descr_of(base.get(), where)) + ", (";
            for (const hsize_t d : dims) {
                f += num(static_cast<std::int64_t>(d)) + ",";
            }
            f += ")";
        } else {
            f = descr_of(m.get(), where);
            f = f.front() == '[' || f.front() == '{' ? f : quoted(f);
        }
        names.push_back(member_name(type, i));
        formats.push_back(f);
        offsets.push_back(H5Tget_member_offset(type, i));
        packed = packed && offsets.back() == packed_end;
        packed_end = offsets.back() + H5Tget_size(m.get());
    }
    const std::size_t size = H5Tget_size(type);
    std::string s;
    if (packed && packed_end == size) {
        s = "[";
        for (std::size_t i = 0; i < names.size(); ++i) {
            s += (i != 0 ? ", (" : "(") + quoted(names[i]) + ", " + formats[i] + ")";
        }
        return s + "]";
    }
    for (const std::string& f : formats) {
        if (f.back() == ')') {
            throw UnsupportedError(where + ": a compound type with gaps and array members");
        }
    }
    s = "{'names': [";
    for (std::size_t i = 0; i < names.size(); ++i) {
        s += (i != 0 ? ", " : "") + quoted(names[i]);
    }
    s += "], 'formats': [";
    for (std::size_t i = 0; i < formats.size(); ++i) {
        s += (i != 0 ? ", " : "") + formats[i];
    }
    s += "], 'offsets': [";
    for (std::size_t i = 0; i < offsets.size(); ++i) {
        s += (i != 0 ? ", " : "") + num(static_cast<std::int64_t>(offsets[i]));
    }
    return s + "], 'itemsize': " + num(static_cast<std::int64_t>(size)) + "}";
}

}  // namespace

std::string descr_of(hid_t type, const std::string& where) {
    const std::size_t size = H5Tget_size(type);
    const std::string bytes = num(static_cast<std::int64_t>(size));
    switch (H5Tget_class(type)) {
        case H5T_INTEGER:
            return order_of(type, size) +
                   std::string(H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "i") + bytes;
        case H5T_FLOAT:
            if (size != 2 && size != 4 && size != 8) {
                throw UnsupportedError(where + ": a float of " + bytes +
                                       " bytes (only 2, 4 and 8 have dtypes here)");
            }
            return order_of(type, size) + std::string("f") + bytes;
        case H5T_ENUM:
            if (is_h5py_bool(type)) {
                return "|b1";
            }
            throw UnsupportedError(where +
                                   ": an enumeration type (only h5py's bool, FALSE/TRUE, "
                                   "maps to a dtype; its values would lose their names)");
        case H5T_COMPOUND:
            if (is_h5py_complex(type)) {
                Handle m(H5Tget_member_type(type, 0), H5Tclose);
                return order_of(m.get(), 2) + std::string("c") + bytes;
            }
            return compound_descr(type, where);
        case H5T_STRING:
            if (H5Tis_variable_str(type) > 0) {
                throw UnsupportedError(where +
                                       ": variable-length strings (only fixed-length "
                                       "strings map to a dtype, S<n>)");
            }
            return "|S" + bytes;
        case H5T_OPAQUE:
            return "|V" + bytes;
        case H5T_REFERENCE:
            throw UnsupportedError(where + ": references (object or region), which have no dtype");
        case H5T_VLEN:
            throw UnsupportedError(where + ": variable-length sequences, which have no dtype");
        case H5T_ARRAY:
            throw UnsupportedError(where + ": an array datatype outside a compound");
        case H5T_TIME:
            throw UnsupportedError(where + ": the HDF5 time type");
        case H5T_BITFIELD:
            throw UnsupportedError(where + ": a bitfield type");
        default:
            break;
    }
    throw UnsupportedError(where + ": an HDF5 datatype of unknown class");
}

Handle type_of(const DType& d, const std::string& where) {
    using K = DType::Kind;
    const std::size_t size = static_cast<std::size_t>(d.itemsize());
    const bool be = d.byteorder() == '>';
    const auto std_int = [&](bool sign) {
        static const hid_t le_s[] = {H5T_STD_I8LE, H5T_STD_I16LE, H5T_STD_I32LE, H5T_STD_I64LE};
        static const hid_t be_s[] = {H5T_STD_I8BE, H5T_STD_I16BE, H5T_STD_I32BE, H5T_STD_I64BE};
        static const hid_t le_u[] = {H5T_STD_U8LE, H5T_STD_U16LE, H5T_STD_U32LE, H5T_STD_U64LE};
        static const hid_t be_u[] = {H5T_STD_U8BE, H5T_STD_U16BE, H5T_STD_U32BE, H5T_STD_U64BE};
        const std::size_t k = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
        return type_handle(H5Tcopy(sign ? (be ? be_s[k] : le_s[k]) : (be ? be_u[k] : le_u[k])),
                           where);
    };
    const auto ieee = [&](std::size_t bytes) {
        if (bytes == 8) {
            return type_handle(H5Tcopy(be ? H5T_IEEE_F64BE : H5T_IEEE_F64LE), where);
        }
        Handle t = type_handle(H5Tcopy(be ? H5T_IEEE_F32BE : H5T_IEEE_F32LE), where);
        if (bytes == 2) {  // IEEE half precision, as h5py makes it
            H5Tset_fields(t.get(), 15, 10, 5, 0, 10);
            H5Tset_size(t.get(), 2);
            H5Tset_ebias(t.get(), 15);
        }
        return t;
    };
    switch (d.kind()) {
        case K::boolean: {
            Handle t = type_handle(H5Tenum_create(H5T_NATIVE_INT8), where);
            signed char v = 0;
            H5Tenum_insert(t.get(), "FALSE", &v);
            v = 1;
            H5Tenum_insert(t.get(), "TRUE", &v);
            return t;
        }
        case K::int_:
        case K::uint:
            if (size == 1 || size == 2 || size == 4 || size == 8) {
                return std_int(d.kind() == K::int_);
            }
            break;
        case K::float_:
            if (size == 2 || size == 4 || size == 8) {
                return ieee(size);
            }
            break;
        case K::complex_:
            if (size == 8 || size == 16) {
                Handle t = type_handle(H5Tcreate(H5T_COMPOUND, size), where);
                const Handle part = ieee(size / 2);
                H5Tinsert(t.get(), "r", 0, part.get());
                H5Tinsert(t.get(), "i", size / 2, part.get());
                return t;
            }
            break;
        case K::bytes: {
            Handle t = type_handle(H5Tcopy(H5T_C_S1), where);
            H5Tset_size(t.get(), size);
            H5Tset_strpad(t.get(), H5T_STR_NULLPAD);
            return t;
        }
        case K::void_:
            return type_handle(H5Tcreate(H5T_OPAQUE, size), where);
        case K::structured: {
            Handle t = type_handle(H5Tcreate(H5T_COMPOUND, size), where);
            for (const DType::Field& f : d.fields()) {
                Handle m = type_of(*f.type, where);
                if (!f.shape.empty()) {
                    std::vector<hsize_t> dims(f.shape.begin(), f.shape.end());
                    m = type_handle(
                        H5Tarray_create2(m.get(), static_cast<unsigned>(dims.size()), dims.data()),
                        where);
                }
                check(
                    H5Tinsert(t.get(), f.name.c_str(), static_cast<std::size_t>(f.offset), m.get()),
                    where, "cannot add field '" + f.name + "'");
            }
            return t;
        }
        default:
            break;
    }
    throw UnsupportedError(where + ": dtype " + d.str() +
                           " has no HDF5 datatype that h5py reads back as it (unicode, "
                           "datetimes and objects are not exported)");
}

// ---- attributes ------------------------------------------------------------------------------

namespace {

/// Attributes that say how dimension scales attach (h5py, netCDF-4): not the data's attributes.
bool bookkeeping(const std::string& name) {
    return name == "DIMENSION_LIST" || name == "REFERENCE_LIST" || name == "CLASS" ||
           name == "NAME" || name.rfind("_Netcdf4", 0) == 0 || name == "_nc3_strict";
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

}  // namespace

Value::Map read_attributes(hid_t obj, const std::string& where) {
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
        if (!v.is_nil()) {
            out.emplace_back(name, std::move(v));
        }
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

}  // namespace

void write_attributes(hid_t obj, const Value::Map& attrs, const std::string& where) {
    for (const auto& [k, v] : attrs) {
        if (k.type() != Value::Type::string) {
            continue;
        }
        const std::string name = k.as<std::string>();
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
