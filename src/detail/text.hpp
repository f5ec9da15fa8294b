// Internal: the few string helpers every layer's messages use.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

namespace b2nd::detail {

/// Decimal text of an integer (one overload for every integer type, unlike std::to_string).
inline std::string num(std::int64_t v) {
    return std::to_string(v);
}

/// Python's repr of a str, or with `bytes` of a bytes object (bytes 0x7f and above as \xNN
/// too), after `prefix` ("b" for bytes): quotes ' unless the text holds ' and no "; \\, the
/// quote, \n, \t, \r and other control characters escaped (what dtype names and b2nd show
/// print, and the dtype parser reads back).
inline std::string python_repr(const std::string& utf8, const char* prefix, bool bytes = false) {
    const bool dq = utf8.find('\'') != std::string::npos && utf8.find('"') == std::string::npos;
    const char quote = dq ? '"' : '\'';
    std::string s = prefix;
    s += quote;
    for (const char c : utf8) {
        const auto u = static_cast<unsigned char>(c);
        if (c == quote || c == '\\') {
            s += '\\';
            s += c;
        } else if (c == '\n') {
            s += "\\n";
        } else if (c == '\t') {
            s += "\\t";
        } else if (c == '\r') {
            s += "\\r";
        } else if (u < 0x20 || u == 0x7f || (bytes && u >= 0x80)) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", u);
            s += buf;
        } else {
            s += c;
        }
    }
    s += quote;
    return s;
}

/// Text for a terminal: control characters (a name from a file may hold any) as \\n, \\t, \\xNN
/// escapes and backslashes doubled, so that nothing a file holds can move the cursor or change
/// the terminal's state when printed. `lines`: newlines and tabs stay (a message of several
/// lines), backslashes too.
inline std::string printable(const std::string& text, bool lines = false) {
    std::string out;
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (lines && (c == '\n' || c == '\t' || c == '\\')) {
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\\') {
            out += "\\\\";
        } else if (u < 0x20 || u == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", u);
            out += buf;
        } else {
            out += c;
        }
    }
    return out;
}

/// A file or directory as messages name it: `"path"`, or `<memory>` for a caller's buffer.
inline std::string quoted_path(const std::string& path) {
    return path.empty() ? std::string("<memory>") : "\"" + path + "\"";
}

/// `s` with every byte but ASCII letters, digits and those in `keep` as %XX (upper-case hex):
/// URL paths (keep "-_.~/"), file names (keep "-_.").
inline std::string percent_encoded(const std::string& s, const char* keep) {
    constexpr const char* kHex = "0123456789ABCDEF";
    std::string out;
    for (const char ch : s) {
        const auto u = static_cast<unsigned char>(ch);
        const bool plain = (u >= '0' && u <= '9') || (u >= 'A' && u <= 'Z') ||
                           (u >= 'a' && u <= 'z') || (u != 0 && std::strchr(keep, ch) != nullptr);
        if (plain) {
            out += ch;
        } else {
            out += '%';
            out += kHex[u >> 4];
            out += kHex[u & 15];
        }
    }
    return out;
}

/// percent_encoded() undone; nothing for a '%' not followed by two hex digits.
inline std::optional<std::string> percent_decoded(const std::string& s) {
    const auto hex = [](char c) -> int {
        return c >= '0' && c <= '9'   ? c - '0'
               : c >= 'A' && c <= 'F' ? c - 'A' + 10
               : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                      : -1;
    };
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out += s[i];
            continue;
        }
        if (i + 2 >= s.size()) {
            return std::nullopt;
        }
        const int hi = hex(s[i + 1]);
        const int lo = hex(s[i + 2]);
        if (hi < 0 || lo < 0) {
            return std::nullopt;
        }
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
    }
    return out;
}

/// Permission bits as `ls -l`'s octal: "0644".
inline std::string octal(unsigned mode) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04o", mode);
    return buf;
}

/// A duration in milliseconds as messages say it: "60 s", "0.5 s".
inline std::string seconds_text(std::int64_t ms) {
    if (ms % 1000 == 0) {
        return std::to_string(ms / 1000) + " s";
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g s", static_cast<double>(ms) / 1000.0);
    return buf;
}

/// Appends code point `cp` (at most 0x10ffff) to `s` as UTF-8.
inline void append_utf8(std::string& s, std::uint32_t cp) {
    if (cp < 0x80) {
        s += static_cast<char>(cp);
    } else if (cp < 0x800) {
        s += static_cast<char>(0xc0 | (cp >> 6));
        s += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        s += static_cast<char>(0xe0 | (cp >> 12));
        s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        s += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        s += static_cast<char>(0xf0 | ((cp >> 18) & 0x07));
        s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        s += static_cast<char>(0x80 | (cp & 0x3f));
    }
}

/// A NumPy `U` item (n bytes of UCS-4 units, byte-swapped first when `swap`) as UTF-8, appended
/// to `out`: trailing NULs are padding, embedded ones stay (NumPy's rule). Units that are no
/// Unicode scalar value (above 0x10ffff, surrogates) become U+FFFD; returns how many did.
inline std::size_t ucs4_to_utf8(const std::uint8_t* p, std::size_t n, bool swap, std::string& out) {
    std::size_t end = n / 4;
    const auto unit = [&](std::size_t i) {
        std::uint32_t c = 0;
        std::memcpy(&c, p + 4 * i, 4);
        return swap ? __builtin_bswap32(c) : c;
    };
    while (end > 0 && unit(end - 1) == 0) {
        --end;
    }
    std::size_t bad = 0;
    for (std::size_t i = 0; i < end; ++i) {
        const std::uint32_t c = unit(i);
        const bool scalar = c <= 0x10ffff && (c < 0xd800 || c >= 0xe000);
        bad += scalar ? 0 : 1;
        append_utf8(out, scalar ? c : 0xfffd);
    }
    return bad;
}

/// Decodes UTF-8 text (strictly: no overlong forms, surrogates or code points above 0x10ffff,
/// as Python's str.decode('utf-8')), appending each code point to `out` when given. Returns the
/// number of code points, or -1 at the first invalid byte, whose position goes to `bad_at`.
inline std::int64_t utf8_decode(const std::string& text,
                                std::u32string* out = nullptr,
                                std::size_t* bad_at = nullptr) {
    std::int64_t n = 0;
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t size = text.size();
    for (std::size_t i = 0; i < size;) {
        const unsigned char c = p[i];
        std::uint32_t cp = 0;
        std::size_t len = 0;
        if (c < 0x80) {
            cp = c;
            len = 1;
        } else if (c >= 0xc2 && c < 0xe0) {
            cp = c & 0x1fU;
            len = 2;
        } else if (c >= 0xe0 && c < 0xf0) {
            cp = c & 0x0fU;
            len = 3;
        } else if (c >= 0xf0 && c < 0xf5) {
            cp = c & 0x07U;
            len = 4;
        }
        bool ok = len != 0 && i + len <= size;
        for (std::size_t k = 1; ok && k < len; ++k) {
            ok = (p[i + k] & 0xc0) == 0x80;
            cp = (cp << 6) | (p[i + k] & 0x3fU);
        }
        ok = ok && !(len == 3 && cp < 0x800) && !(len == 4 && (cp < 0x10000 || cp > 0x10ffff)) &&
             !(cp >= 0xd800 && cp < 0xe000);
        if (!ok) {
            if (bad_at != nullptr) {
                *bad_at = i;
            }
            return -1;
        }
        if (out != nullptr) {
            out->push_back(static_cast<char32_t>(cp));
        }
        ++n;
        i += len;
    }
    return n;
}

/// Standard base64 (RFC 4648, with padding) of `bytes`.
inline std::string base64_encoded(const std::string& bytes) {
    static const char* const abc =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const auto v = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i]) << 16 |
                                                  static_cast<unsigned char>(bytes[i + 1]) << 8 |
                                                  static_cast<unsigned char>(bytes[i + 2]));
        out += {abc[v >> 18], abc[(v >> 12) & 63U], abc[(v >> 6) & 63U], abc[v & 63U]};
    }
    if (i < bytes.size()) {
        const bool two = i + 1 < bytes.size();
        const auto v =
            static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i]) << 16 |
                                       (two ? static_cast<unsigned char>(bytes[i + 1]) << 8 : 0));
        out += {abc[v >> 18], abc[(v >> 12) & 63U], two ? abc[(v >> 6) & 63U] : '=', '='};
    }
    return out;
}

/// The bytes standard base64 text encodes (padding optional), or nothing when it is not base64.
inline std::optional<std::string> base64_decoded(const std::string& text) {
    std::string out;
    std::uint32_t acc = 0;
    int bits = 0;
    std::size_t pad = 0;
    for (const char ch : text) {
        int v;
        if (ch >= 'A' && ch <= 'Z') {
            v = ch - 'A';
        } else if (ch >= 'a' && ch <= 'z') {
            v = ch - 'a' + 26;
        } else if (ch >= '0' && ch <= '9') {
            v = ch - '0' + 52;
        } else if (ch == '+') {
            v = 62;
        } else if (ch == '/') {
            v = 63;
        } else if (ch == '=') {
            ++pad;
            continue;
        } else {
            return std::nullopt;
        }
        if (pad != 0) {
            return std::nullopt;  // data after padding
        }
        acc = (acc << 6) | static_cast<std::uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((acc >> bits) & 0xffU));
        }
    }
    if (bits >= 6 || pad > 2) {
        return std::nullopt;
    }
    return out;
}

}  // namespace b2nd::detail
