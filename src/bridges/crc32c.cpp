// CRC-32C by slicing eight bytes at a time over tables made once.
#include "crc32c.hpp"

#include <array>

namespace b2nd::bridges {

namespace {

using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

Tables make_tables() {
    constexpr std::uint32_t kPoly = 0x82f63b78U;  // 0x1edc6f41, reflected
    Tables t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k) {
            c = (c & 1U) != 0U ? (c >> 1) ^ kPoly : c >> 1;
        }
        t[0][i] = c;
    }
    for (std::size_t s = 1; s < 8; ++s) {
        for (std::size_t i = 0; i < 256; ++i) {
            t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xffU];
        }
    }
    return t;
}

}  // namespace

std::uint32_t crc32c(const std::uint8_t* p, std::size_t n) noexcept {
    static const Tables t = make_tables();
    std::uint32_t c = 0xffffffffU;
    while (n >= 8) {
        const std::uint32_t lo = c ^ (std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 |
                                      std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24);
        c = t[7][lo & 0xffU] ^ t[6][(lo >> 8) & 0xffU] ^ t[5][(lo >> 16) & 0xffU] ^ t[4][lo >> 24] ^
            t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n-- > 0) {
        c = (c >> 8) ^ t[0][(c ^ *p++) & 0xffU];
    }
    return c ^ 0xffffffffU;
}

}  // namespace b2nd::bridges
