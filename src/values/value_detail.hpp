// Internal: what value.cpp (msgpack) and value_json.cpp (JSON) share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace b2nd::detail {

/// Values nest at most this deep, from msgpack and from JSON alike.
inline constexpr std::size_t kValueMaxDepth = 256;

/// Lowercase hex digits of n bytes.
inline std::string hex_digits(const std::uint8_t* p, std::size_t n) {
    static const char* digits = "0123456789abcdef";
    std::string s;
    s.reserve(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
        s += digits[p[i] >> 4];
        s += digits[p[i] & 15];
    }
    return s;
}

}  // namespace b2nd::detail
