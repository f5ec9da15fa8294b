// HDF5 datatypes mapped to dtypes, both ways, as h5py spells them (hdf5_detail.hpp). Nothing is
// converted lossily: what has no dtype is refused by name.
#include <cstring>

#include <b2nd/error.hpp>

#include "../detail/text.hpp"
#include "hdf5_detail.hpp"

namespace b2nd::bridges::h5 {

Handle type_handle(hid_t id, const std::string& where) {
    return Handle(check(id, where, "cannot make an HDF5 datatype"), H5Tclose);
}

namespace {

using detail::num;

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

}  // namespace

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

namespace {

using detail::num;

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

}  // namespace b2nd::bridges::h5
