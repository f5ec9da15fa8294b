// Internal: the few string helpers every layer's messages use.
#pragma once

#include <cstdint>
#include <string>

namespace b2nd::detail {

/// Decimal text of an integer (one overload for every integer type, unlike std::to_string).
inline std::string num(std::int64_t v) {
    return std::to_string(v);
}

/// A file or directory as messages name it: `"path"`, or `<memory>` for a caller's buffer.
inline std::string quoted_path(const std::string& path) {
    return path.empty() ? std::string("<memory>") : "\"" + path + "\"";
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

}  // namespace b2nd::detail
