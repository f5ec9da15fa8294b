// Hand-made byte strings for format tests: hex("05 01 ff ...").
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace b2nd::test {

inline std::vector<std::uint8_t> hex(const std::string& s) {
    std::vector<std::uint8_t> out;
    int hi = -1;
    for (char c : s) {
        int v;
        if (c >= '0' && c <= '9') {
            v = c - '0';
        } else if (c >= 'a' && c <= 'f') {
            v = c - 'a' + 10;
        } else if (c >= 'A' && c <= 'F') {
            v = c - 'A' + 10;
        } else {
            continue;
        }
        if (hi < 0) {
            hi = v;
        } else {
            out.push_back(static_cast<std::uint8_t>(hi * 16 + v));
            hi = -1;
        }
    }
    if (hi >= 0) {
        throw std::runtime_error("hex: odd number of digits");
    }
    return out;
}

}  // namespace b2nd::test
