// Fixed-width string arrays as C++ strings (strings.hpp).
#include <cstring>

#include <b2nd/error.hpp>
#include <b2nd/format/endian.hpp>
#include <b2nd/strings.hpp>

#include "../detail/text.hpp"

namespace b2nd {

using detail::num;

namespace {

bool is_string_dtype(const DType& d) {
    return d.kind() == DType::Kind::bytes || d.kind() == DType::Kind::unicode;
}

void require_kind(const AnyArray& a, bool unicode_only) {
    const DType& d = a.dtype();
    if (unicode_only ? d.kind() != DType::Kind::unicode : !is_string_dtype(d)) {
        throw UsageError(detail::quoted_path(a.name()) + ": dtype '" + d.str() + "' is not " +
                         (unicode_only ? "a U<n> string" : "an S<n> or U<n> string"));
    }
}

/// The code points of U item `p` (n of them), trailing NULs dropped.
std::u32string code_points(const DType& d, const std::uint8_t* p) {
    const auto n = static_cast<std::size_t>(d.itemsize() / 4);
    std::u32string s(n, U'\0');
    for (std::size_t i = 0; i < n; ++i) {
        std::uint32_t c = 0;
        std::memcpy(&c, p + 4 * i, 4);
        if (d.needs_byteswap()) {
            c = format::byteswap(c);
        }
        s[i] = static_cast<char32_t>(c);
    }
    s.erase(s.find_last_not_of(U'\0') + 1);
    return s;
}

/// UTF-8 text as code points. \throws UsageError naming `what` when it is not UTF-8
std::u32string decode_utf8(const std::string& s, const std::string& what) {
    std::u32string out;
    for (std::size_t i = 0; i < s.size();) {
        const auto b = static_cast<unsigned char>(s[i]);
        const int len = b < 0x80         ? 1
                        : (b >> 5) == 6  ? 2
                        : (b >> 4) == 14 ? 3
                        : (b >> 3) == 30 ? 4
                                         : 0;
        if (len == 0 || i + static_cast<std::size_t>(len) > s.size()) {
            throw UsageError(what + " is not UTF-8 (byte " + num(static_cast<std::int64_t>(i)) +
                             ")");
        }
        std::uint32_t c = len == 1 ? b : b & (0x7fU >> len);
        for (int k = 1; k < len; ++k) {
            const auto x = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
            if ((x & 0xc0) != 0x80) {
                throw UsageError(what + " is not UTF-8 (byte " +
                                 num(static_cast<std::int64_t>(i) + k) + ")");
            }
            c = (c << 6) | (x & 0x3fU);
        }
        out += static_cast<char32_t>(c);
        i += static_cast<std::size_t>(len);
    }
    return out;
}

std::string value_text(std::size_t i) {
    return "value " + num(static_cast<std::int64_t>(i));
}

}  // namespace

std::vector<std::string> read_strings(const AnyArray& a, const Selection& sel) {
    require_kind(a, false);
    const DType& d = a.dtype();
    const std::vector<std::uint8_t> raw = a.read(sel);
    const auto isz = static_cast<std::size_t>(d.itemsize());
    std::vector<std::string> out(isz == 0 ? 0 : raw.size() / isz);
    for (std::size_t i = 0; i < out.size(); ++i) {
        const std::uint8_t* p = raw.data() + i * isz;
        if (d.kind() == DType::Kind::bytes) {
            std::string s(reinterpret_cast<const char*>(p), isz);
            s.erase(s.find_last_not_of('\0') + 1);
            out[i] = std::move(s);
            continue;
        }
        if (detail::ucs4_to_utf8(p, isz, d.needs_byteswap(), out[i]) != 0) {
            throw FormatError(detail::quoted_path(a.name()) + ": item " +
                              num(static_cast<std::int64_t>(i)) +
                              " of the selection holds a unit that is no Unicode scalar value "
                              "(above U+10FFFF, or a surrogate)");
        }
    }
    return out;
}

std::vector<std::u32string> read_u32strings(const AnyArray& a, const Selection& sel) {
    require_kind(a, true);
    const std::vector<std::uint8_t> raw = a.read(sel);
    const auto isz = static_cast<std::size_t>(a.itemsize());
    std::vector<std::u32string> out(raw.size() / isz);
    for (std::size_t i = 0; i < out.size(); ++i) {
        out[i] = code_points(a.dtype(), raw.data() + i * isz);
    }
    return out;
}

std::vector<std::uint8_t> encode_strings(const DType& dtype,
                                         const std::vector<std::u32string>& values) {
    if (dtype.kind() != DType::Kind::unicode) {
        throw UsageError("strings of code points are written to U<n> dtypes, not '" + dtype.str() +
                         "'");
    }
    const auto n = static_cast<std::size_t>(dtype.itemsize() / 4);
    std::vector<std::uint8_t> out(values.size() * n * 4, 0);
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (values[i].size() > n) {
            throw UsageError(value_text(i) + " has " +
                             num(static_cast<std::int64_t>(values[i].size())) +
                             " code points; dtype '" + dtype.str() + "' holds " +
                             num(static_cast<std::int64_t>(n)));
        }
        for (std::size_t k = 0; k < values[i].size(); ++k) {
            auto c = static_cast<std::uint32_t>(values[i][k]);
            if (dtype.needs_byteswap()) {
                c = format::byteswap(c);
            }
            std::memcpy(out.data() + (i * n + k) * 4, &c, 4);
        }
    }
    return out;
}

std::vector<std::uint8_t> encode_strings(const DType& dtype,
                                         const std::vector<std::string>& values) {
    if (dtype.kind() == DType::Kind::unicode) {
        std::vector<std::u32string> cps;
        cps.reserve(values.size());
        for (std::size_t i = 0; i < values.size(); ++i) {
            cps.push_back(decode_utf8(values[i], value_text(i)));
        }
        return encode_strings(dtype, cps);
    }
    if (dtype.kind() != DType::Kind::bytes) {
        throw UsageError("strings are written to S<n> or U<n> dtypes, not '" + dtype.str() + "'");
    }
    const auto n = static_cast<std::size_t>(dtype.itemsize());
    std::vector<std::uint8_t> out(values.size() * n, 0);
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (values[i].size() > n) {
            throw UsageError(value_text(i) + " has " +
                             num(static_cast<std::int64_t>(values[i].size())) + " bytes; dtype '" +
                             dtype.str() + "' holds " + num(static_cast<std::int64_t>(n)));
        }
        std::memcpy(out.data() + i * n, values[i].data(), values[i].size());
    }
    return out;
}

namespace {

/// Encodes `values` for a's dtype and writes them; messages name the array.
template <typename Strings>
void write_encoded(AnyArray& a, const Selection& sel, const Strings& values, bool u32) {
    require_kind(a, u32);
    std::vector<std::uint8_t> bytes;
    try {
        bytes = encode_strings(a.dtype(), values);
    } catch (const UsageError& e) {
        throw UsageError(detail::quoted_path(a.name()) + ": " + e.what());
    }
    a.write(sel, {bytes.data(), bytes.size()});
}

}  // namespace

void write_strings(AnyArray& a, const Selection& sel, const std::vector<std::string>& values) {
    write_encoded(a, sel, values, false);
}

void write_strings(AnyArray& a, const Selection& sel, const std::vector<std::u32string>& values) {
    write_encoded(a, sel, values, true);
}

}  // namespace b2nd
