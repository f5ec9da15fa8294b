// Endian-aware loads and stores through memcpy: no alignment or aliasing assumptions.
//
// Advanced (b2nd::format, the byte layer): for tools that parse or write the format itself.
// Programs that read and write arrays need only <b2nd/b2nd.hpp>.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace b2nd {

/// Back-port of C++20 std::endian.
enum class endian {  // NOLINT(readability-identifier-naming): mirrors std::endian
    little = __ORDER_LITTLE_ENDIAN__,
    big = __ORDER_BIG_ENDIAN__,
    native = __BYTE_ORDER__
};

namespace format {

/// Reverses the bytes of an unsigned integer.
template <class U>
constexpr U byteswap(U v) noexcept {
    static_assert(std::is_unsigned_v<U>, "byteswap needs an unsigned type");
    if constexpr (sizeof(U) == 1) {
        return v;
    } else if constexpr (sizeof(U) == 2) {
        return static_cast<U>(__builtin_bswap16(v));
    } else if constexpr (sizeof(U) == 4) {
        return static_cast<U>(__builtin_bswap32(v));
    } else {
        static_assert(sizeof(U) == 8, "byteswap supports 1, 2, 4 and 8 byte integers");
        return static_cast<U>(__builtin_bswap64(v));
    }
}

namespace detail {
template <std::size_t N>
struct UnsignedOf;
template <>
struct UnsignedOf<1> {
    using type = std::uint8_t;
};
template <>
struct UnsignedOf<2> {
    using type = std::uint16_t;
};
template <>
struct UnsignedOf<4> {
    using type = std::uint32_t;
};
template <>
struct UnsignedOf<8> {
    using type = std::uint64_t;
};
}  // namespace detail

/// Loads a little-endian T (integer or floating point) from unaligned memory.
template <class T>
T load_le(const void* p) noexcept {
    using U = typename detail::UnsignedOf<sizeof(T)>::type;
    U u;
    std::memcpy(&u, p, sizeof(U));
    if constexpr (endian::native == endian::big) {
        u = byteswap(u);
    }
    T v;
    std::memcpy(&v, &u, sizeof(T));
    return v;
}

/// Loads a big-endian T from unaligned memory.
template <class T>
T load_be(const void* p) noexcept {
    using U = typename detail::UnsignedOf<sizeof(T)>::type;
    U u;
    std::memcpy(&u, p, sizeof(U));
    if constexpr (endian::native == endian::little) {
        u = byteswap(u);
    }
    T v;
    std::memcpy(&v, &u, sizeof(T));
    return v;
}

/// Stores v little-endian into unaligned memory.
template <class T>
void store_le(void* p, T v) noexcept {
    using U = typename detail::UnsignedOf<sizeof(T)>::type;
    U u;
    std::memcpy(&u, &v, sizeof(T));
    if constexpr (endian::native == endian::big) {
        u = byteswap(u);
    }
    std::memcpy(p, &u, sizeof(U));
}

/// Stores v big-endian into unaligned memory.
template <class T>
void store_be(void* p, T v) noexcept {
    using U = typename detail::UnsignedOf<sizeof(T)>::type;
    U u;
    std::memcpy(&u, &v, sizeof(T));
    if constexpr (endian::native == endian::little) {
        u = byteswap(u);
    }
    std::memcpy(p, &u, sizeof(U));
}

}  // namespace format
}  // namespace b2nd
