// Zarr's values: fill values in either version's JSON, chunk keys, codec chains as text
// (zarr_meta.hpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <b2nd/error.hpp>

#include "../detail/text.hpp"
#include "bridges.hpp"
#include "zarr_meta.hpp"

namespace b2nd::bridges {

namespace {

using detail::num;

[[noreturn]] void bad(const std::string& where, const std::string& what) {
    throw FormatError(where + ": " + what);
}

std::int64_t integer(const Value& v, const std::string& where, const std::string& what) {
    if (v.type() != Value::Type::integer || v.is_negative()) {
        bad(where, what + " is not a non-negative integer");
    }
    return v.as<std::int64_t>();
}

// ---- fill values ----------------------------------------------------------------------------

std::uint16_t half_bits(double d) {
    const float f = static_cast<float>(d);
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    const std::uint32_t sign = (x >> 16) & 0x8000U;
    const std::uint32_t exp = (x >> 23) & 0xffU;
    std::uint32_t man = x & 0x7fffffU;
    if (exp == 0xffU) {
        return static_cast<std::uint16_t>(sign | 0x7c00U | (man != 0 ? 0x200U : 0U));
    }
    const int e = static_cast<int>(exp) - 127 + 15;
    if (e >= 31) {
        return static_cast<std::uint16_t>(sign | 0x7c00U);
    }
    if (e <= 0) {
        if (e < -10) {
            return static_cast<std::uint16_t>(sign);
        }
        man |= 0x800000U;
        const int shift = 14 - e;
        std::uint32_t h = man >> shift;
        const std::uint32_t rest = man & ((1U << shift) - 1U);
        const std::uint32_t halfway = 1U << (shift - 1);
        if (rest > halfway || (rest == halfway && (h & 1U) != 0)) {
            ++h;
        }
        return static_cast<std::uint16_t>(sign | h);
    }
    std::uint32_t h = (static_cast<std::uint32_t>(e) << 10) | (man >> 13);
    const std::uint32_t rest = man & 0x1fffU;
    if (rest > 0x1000U || (rest == 0x1000U && (h & 1U) != 0)) {
        ++h;  // may carry into the exponent, up to infinity: as IEEE rounding does
    }
    return static_cast<std::uint16_t>(sign | h);
}

/// A float fill (a number, "NaN", "Infinity", "-Infinity", or v3's "0x..." of the bits) into
/// `out` (size bytes, little-endian).
void float_fill(const Value& v, int size, std::uint8_t* out, const std::string& where) {
    double d = 0;
    if (v.type() == Value::Type::string) {
        const std::string s = v.as<std::string>();
        if (s == "NaN") {
            d = std::numeric_limits<double>::quiet_NaN();
        } else if (s == "Infinity") {
            d = std::numeric_limits<double>::infinity();
        } else if (s == "-Infinity") {
            d = -std::numeric_limits<double>::infinity();
        } else if (s.size() == 2 + 2 * static_cast<std::size_t>(size) &&
                   s.compare(0, 2, "0x") == 0) {
            for (int i = 0; i < size; ++i) {
                const std::string byte = s.substr(2 + 2 * static_cast<std::size_t>(i), 2);
                char* end = nullptr;
                const unsigned long b = std::strtoul(byte.c_str(), &end, 16);
                if (end != byte.c_str() + 2) {
                    bad(where, "fill_value \"" + s + "\" is not hexadecimal");
                }
                out[size - 1 - i] = static_cast<std::uint8_t>(b);  // the text is big-endian
            }
            return;
        } else {
            bad(where, "fill_value \"" + s + "\" is not a number");
        }
    } else if (v.type() == Value::Type::real || v.type() == Value::Type::integer) {
        d = v.as<double>();
    } else {
        bad(where, std::string("fill_value is a ") + v.type_name() + ", not a number");
    }
    if (size == 8) {
        std::memcpy(out, &d, 8);
    } else if (size == 4) {
        const auto f = static_cast<float>(d);
        std::memcpy(out, &f, 4);
    } else {
        const std::uint16_t h = half_bits(d);
        std::memcpy(out, &h, 2);
    }
}

/// One item of `dtype` holding `v`, in dtype's byte order.
}  // namespace

std::vector<std::uint8_t> zarr_fill_bytes(const Value& v,
                                          const DType& dtype,
                                          const std::string& where) {
    const auto size = static_cast<std::size_t>(dtype.itemsize());
    std::vector<std::uint8_t> out(size, 0);
    if (v.is_nil()) {
        return out;  // no fill value: zeros, as zarr-python reads missing chunks of such arrays
    }
    using K = DType::Kind;
    switch (dtype.kind()) {
        case K::boolean:
            if (v.type() != Value::Type::boolean && v.type() != Value::Type::integer) {
                bad(where, std::string("fill_value is a ") + v.type_name() + ", not a bool");
            }
            out[0] = v.type() == Value::Type::boolean ? (v.as<bool>() ? 1 : 0)
                                                      : (v.as<std::int64_t>() != 0 ? 1 : 0);
            return out;
        case K::int_:
        case K::uint: {
            if (v.type() != Value::Type::integer) {
                bad(where, std::string("fill_value is a ") + v.type_name() + ", not an integer");
            }
            std::uint64_t bits = 0;
            try {
                bits = dtype.kind() == K::uint ? v.as<std::uint64_t>()
                                               : static_cast<std::uint64_t>(v.as<std::int64_t>());
            } catch (const UsageError&) {
                bad(where, "fill_value " + v.to_json() + " is out of range for " + dtype.str());
            }
            const unsigned width = 8U * static_cast<unsigned>(size);
            const bool fits =
                width == 64 ||
                (dtype.kind() == K::uint
                     ? bits < (std::uint64_t{1} << width)
                     : static_cast<std::int64_t>(bits) >= -(std::int64_t{1} << (width - 1)) &&
                           static_cast<std::int64_t>(bits) < (std::int64_t{1} << (width - 1)));
            if (!fits) {
                bad(where, "fill_value " + v.to_json() + " is out of range for " + dtype.str());
            }
            std::memcpy(out.data(), &bits, size);  // this machine is little-endian
            break;
        }
        case K::float_:
            float_fill(v, static_cast<int>(size), out.data(), where);
            break;
        case K::complex_:
            if (v.type() != Value::Type::array || v.size() != 2) {
                bad(where, "fill_value of a complex array is not [real, imaginary]");
            }
            float_fill(v[0], static_cast<int>(size / 2), out.data(), where);
            float_fill(v[1], static_cast<int>(size / 2), out.data() + size / 2, where);
            break;
        case K::unicode: {
            if (v.type() != Value::Type::string) {
                bad(where, "fill_value of a unicode array is not a string");
            }
            std::u32string cps;
            const std::string s = v.as<std::string>();
            if (detail::utf8_decode(s, &cps) < 0 || cps.size() * 4 > size) {
                bad(where, "fill_value \"" + s + "\" does not fit " + dtype.str());
            }
            for (std::size_t i = 0; i < cps.size(); ++i) {
                const auto c = static_cast<std::uint32_t>(cps[i]);
                std::memcpy(out.data() + 4 * i, &c, 4);
            }
            break;
        }
        default: {
            // S, V, structured, datetimes: v2 writes base64 of the bytes; v3's raw types a
            // list of byte values.
            if (v.type() == Value::Type::integer && dtype.kind() != K::bytes &&
                dtype.kind() != K::void_ && dtype.kind() != K::structured) {
                const auto bits = static_cast<std::uint64_t>(v.as<std::int64_t>());
                std::memcpy(out.data(), &bits, std::min<std::size_t>(size, 8));
                break;
            }
            if (v.type() == Value::Type::array) {
                if (v.size() != size) {
                    bad(where, "fill_value has " + num(static_cast<std::int64_t>(v.size())) +
                                   " bytes, the data type " + num(static_cast<std::int64_t>(size)));
                }
                for (std::size_t i = 0; i < size; ++i) {
                    out[i] = static_cast<std::uint8_t>(integer(v[i], where, "fill_value") & 0xff);
                }
                return out;
            }
            const auto raw = v.type() == Value::Type::string
                                 ? detail::base64_decoded(v.as<std::string>())
                                 : std::nullopt;
            if (!raw || raw->size() > size) {
                bad(where, "fill_value " + v.to_json() + " is not base64 of at most " +
                               num(static_cast<std::int64_t>(size)) + " bytes");
            }
            std::memcpy(out.data(), raw->data(), raw->size());
            return out;  // stored bytes as they are
        }
    }
    if (dtype.byteorder() == '>') {
        dtype.byteswap(out.data(), 1);
    }
    return out;
}

const std::vector<ZarrV3Type>& zarr_v3_types() {
    using K = DType::Kind;
    static const std::vector<ZarrV3Type> types = {
        {"bool", K::boolean, 1},       {"int8", K::int_, 1},           {"int16", K::int_, 2},
        {"int32", K::int_, 4},         {"int64", K::int_, 8},          {"uint8", K::uint, 1},
        {"uint16", K::uint, 2},        {"uint32", K::uint, 4},         {"uint64", K::uint, 8},
        {"float16", K::float_, 2},     {"float32", K::float_, 4},      {"float64", K::float_, 8},
        {"complex64", K::complex_, 8}, {"complex128", K::complex_, 16}};
    return types;
}

std::string codecs_text(const ZarrCodecs& c) {
    std::string t;
    if (!c.order.empty()) {
        t += "transpose(";
        for (std::size_t i = 0; i < c.order.size(); ++i) {
            t += (i != 0 ? "," : "") + num(c.order[i]);
        }
        t += ") ";
    }
    if (c.sharding) {
        t += "sharding_indexed(inner " + to_string(c.sharding->inner) + ": " +
             codecs_text(c.sharding->codecs) + "; index at " +
             (c.sharding->index_at_end ? "end" : "start") + ": " +
             codecs_text(c.sharding->index_codecs) + ")";
    } else {
        t += c.big_endian ? "bytes(big)" : "bytes";
    }
    for (const ZarrBytesCodec& b : c.bytes_codecs) {
        using K = ZarrBytesCodec::Kind;
        switch (b.kind) {
            case K::blosc:
                t += " blosc(" + b.cname + ":" + num(b.level) + "," +
                     (b.shuffle == 2   ? "bitshuffle"
                      : b.shuffle == 1 ? "shuffle"
                                       : "noshuffle") +
                     ")";
                break;
            case K::zstd:
                t += " zstd(" + num(b.level) + ")";
                break;
            case K::zlib:
                t += " zlib(" + num(b.level) + ")";
                break;
            case K::gzip:
                t += " gzip(" + num(b.level) + ")";
                break;
            case K::lz4:
                t += " lz4";
                break;
            case K::crc32c:
                t += " crc32c";
                break;
        }
    }
    return t;
}

std::string chunk_key(const ZarrMeta& m, const std::int64_t* coords) {
    std::string k = m.key_prefix;
    const std::size_t nd = m.shape.size();
    if (nd == 0) {
        return k.empty() ? "0" : k;
    }
    for (std::size_t d = 0; d < nd; ++d) {
        if (!k.empty()) {
            k += m.separator;
        }
        k += num(coords[d]);
    }
    return k;
}

void carry_structure(const ZarrMeta& m, Value::Map& attrs) {
    const auto has = [&](const char* key) {
        return std::any_of(attrs.begin(), attrs.end(),
                           [&](const auto& e) { return e.first == key; });
    };
    const DType::Kind kind = m.dtype.kind();
    const auto size = static_cast<std::size_t>(m.dtype.itemsize());
    const bool zero =
        std::all_of(m.fill.begin(), m.fill.end(), [](std::uint8_t b) { return b == 0; });
    if (!has(kFillValueKey) && !zero && m.fill.size() == size && size <= 8 &&
        (kind == DType::Kind::int_ || kind == DType::Kind::uint ||
         (kind == DType::Kind::float_ && (size == 4 || size == 8)))) {
        std::uint8_t le[8] = {};
        for (std::size_t i = 0; i < size; ++i) {
            le[i] = m.dtype.byteorder() == '>' ? m.fill[size - 1 - i] : m.fill[i];
        }
        if (kind == DType::Kind::float_) {
            double x = 0;
            if (size == 4) {
                float f = 0;
                std::memcpy(&f, le, 4);
                x = static_cast<double>(f);
            } else {
                std::memcpy(&x, le, 8);
            }
            attrs.emplace_back(kFillValueKey, x);
        } else {
            std::uint64_t u = 0;
            std::memcpy(&u, le, size);
            if (kind == DType::Kind::int_ && size < 8 && (u >> (8 * size - 1)) != 0) {
                u |= ~std::uint64_t{0} << (8 * size);  // sign-extended
            }
            attrs.emplace_back(kFillValueKey, kind == DType::Kind::int_
                                                  ? Value(static_cast<std::int64_t>(u))
                                                  : Value(u));
        }
    }
    if (!has(kDimensionsKey) && !m.dimension_names.empty() &&
        std::none_of(m.dimension_names.begin(), m.dimension_names.end(),
                     [](const std::string& n) { return n.empty(); })) {
        Value::Array names(m.dimension_names.begin(), m.dimension_names.end());
        attrs.emplace_back(kDimensionsKey, Value(std::move(names)));
    }
}

}  // namespace b2nd::bridges
