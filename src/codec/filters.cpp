// DELTA, TRUNC_PREC and BYTEDELTA.
#include <cstring>
#include <string>

#include <b2nd/codec/filters.hpp>
#include <b2nd/error.hpp>

#include "../detail/memory.hpp"

namespace b2nd::codec {

namespace {

template <class U>
U load(const std::uint8_t* p) noexcept {
    U v;
    b2nd::detail::copy_bytes(&v, p, sizeof(U));
    return v;
}

template <class U>
void store(std::uint8_t* p, U v) noexcept {
    b2nd::detail::copy_bytes(p, &v, sizeof(U));
}

template <class U>
void delta_encode_as(const std::uint8_t* ref,
                     bool first_block,
                     std::size_t n,
                     const std::uint8_t* src,
                     std::uint8_t* dst) {
    constexpr std::size_t k = sizeof(U);
    if (first_block) {
        if (n > 0) {
            store<U>(dst, load<U>(src));
        }
        for (std::size_t i = 1; i < n; ++i) {
            store<U>(dst + i * k,
                     static_cast<U>(load<U>(src + i * k) ^ load<U>(src + (i - 1) * k)));
        }
    } else {
        for (std::size_t i = 0; i < n; ++i) {
            store<U>(dst + i * k, static_cast<U>(load<U>(src + i * k) ^ load<U>(ref + i * k)));
        }
    }
}

template <class U>
void delta_decode_as(const std::uint8_t* ref,
                     bool first_block,
                     std::size_t n,
                     const std::uint8_t* src,
                     std::uint8_t* dst) {
    constexpr std::size_t k = sizeof(U);
    if (first_block) {
        U prev = 0;
        for (std::size_t i = 0; i < n; ++i) {
            prev = static_cast<U>(load<U>(src + i * k) ^ prev);
            store<U>(dst + i * k, prev);
        }
    } else {
        for (std::size_t i = 0; i < n; ++i) {
            store<U>(dst + i * k, static_cast<U>(load<U>(src + i * k) ^ load<U>(ref + i * k)));
        }
    }
}

constexpr int kMantissaBits32 = 23;
constexpr int kMantissaBits64 = 52;

/// Number of low mantissa bits trunc_prec() zeroes, or -1 when the parameters are invalid.
int zeroed_bits(int prec_bits, int typesize) noexcept {
    int mantissa = 0;
    if (typesize == 4) {
        mantissa = kMantissaBits32;
    } else if (typesize == 8) {
        mantissa = kMantissaBits64;
    } else {
        return -1;
    }
    if (prec_bits > mantissa || prec_bits < -mantissa) {
        return -1;
    }
    const int zeroed = prec_bits >= 0 ? mantissa - prec_bits : -prec_bits;
    return zeroed >= mantissa ? -1 : zeroed;
}

}  // namespace

int delta_unit(int typesize) noexcept {
    switch (typesize) {
        case 1:
        case 2:
        case 4:
        case 8:
            return typesize;
        default:
            return typesize % 8 == 0 ? 8 : 1;
    }
}

namespace {

/// Calls f with a value of the unsigned type DELTA works in for this typesize.
template <class F>
void with_delta_unit(int typesize, F&& f) {
    switch (delta_unit(typesize)) {
        case 1:
            f(std::uint8_t{});
            break;
        case 2:
            f(std::uint16_t{});
            break;
        case 4:
            f(std::uint32_t{});
            break;
        default:
            f(std::uint64_t{});
            break;
    }
}

}  // namespace

void delta_encode(const std::uint8_t* ref,
                  bool first_block,
                  int typesize,
                  std::size_t nbytes,
                  const std::uint8_t* src,
                  std::uint8_t* dst) {
    with_delta_unit(typesize, [&](auto unit) {
        using U = decltype(unit);
        delta_encode_as<U>(ref, first_block, nbytes / sizeof(U), src, dst);
    });
    const auto unit = static_cast<std::size_t>(delta_unit(typesize));
    const std::size_t done = nbytes / unit * unit;
    b2nd::detail::copy_bytes(dst + done, src + done, nbytes - done);
}

void delta_decode(const std::uint8_t* ref,
                  bool first_block,
                  int typesize,
                  std::size_t nbytes,
                  const std::uint8_t* src,
                  std::uint8_t* dst) {
    with_delta_unit(typesize, [&](auto unit) {
        using U = decltype(unit);
        delta_decode_as<U>(ref, first_block, nbytes / sizeof(U), src, dst);
    });
    const auto unit = static_cast<std::size_t>(delta_unit(typesize));
    const std::size_t done = nbytes / unit * unit;
    if (dst != src) {
        b2nd::detail::copy_bytes(dst + done, src + done, nbytes - done);
    }
}

bool trunc_prec_valid(int prec_bits, int typesize) noexcept {
    return zeroed_bits(prec_bits, typesize) >= 0;
}

void trunc_prec(
    int prec_bits, int typesize, std::size_t nbytes, const std::uint8_t* src, std::uint8_t* dst) {
    const int zeroed = zeroed_bits(prec_bits, typesize);
    if (zeroed < 0) {
        throw UsageError("trunc_prec: precision " + std::to_string(prec_bits) +
                         " is invalid for typesize " + std::to_string(typesize) +
                         " (float32 or float64 only; |bits| below the mantissa width)");
    }
    const auto ts = static_cast<std::size_t>(typesize);
    const std::size_t n = nbytes / ts;
    if (typesize == 4) {
        const std::uint32_t mask = ~((std::uint32_t{1} << zeroed) - 1);
        for (std::size_t i = 0; i < n; ++i) {
            store<std::uint32_t>(dst + i * 4, load<std::uint32_t>(src + i * 4) & mask);
        }
    } else {
        const std::uint64_t mask = ~((std::uint64_t{1} << zeroed) - 1);
        for (std::size_t i = 0; i < n; ++i) {
            store<std::uint64_t>(dst + i * 8, load<std::uint64_t>(src + i * 8) & mask);
        }
    }
    b2nd::detail::copy_bytes(dst + n * ts, src + n * ts, nbytes - n * ts);
}

void bytedelta_encode(int unit, std::size_t nbytes, const std::uint8_t* src, std::uint8_t* dst) {
    const auto u = static_cast<std::size_t>(unit);
    const std::size_t len = nbytes / u;
    for (std::size_t c = 0; c < u; ++c) {
        const std::uint8_t* in = src + c * len;
        std::uint8_t* out = dst + c * len;
        std::uint8_t prev = 0;
        for (std::size_t i = 0; i < len; ++i) {
            out[i] = static_cast<std::uint8_t>(in[i] - prev);
            prev = in[i];
        }
    }
    b2nd::detail::copy_bytes(dst + len * u, src + len * u, nbytes - len * u);
}

void bytedelta_decode(
    int unit, std::size_t nbytes, const std::uint8_t* src, std::uint8_t* dst, bool legacy) {
    const auto u = static_cast<std::size_t>(unit);
    const std::size_t len = nbytes / u;
    // The legacy (id 34) SIMD decoder summed 16-byte groups, then restarted the running sum
    // from 0 for the scalar tail of each channel.
    const std::size_t restart = legacy ? len / 16 * 16 : len + 1;
    for (std::size_t c = 0; c < u; ++c) {
        const std::uint8_t* in = src + c * len;
        std::uint8_t* out = dst + c * len;
        std::uint8_t acc = 0;
        for (std::size_t i = 0; i < len; ++i) {
            if (i == restart) {
                acc = 0;
            }
            acc = static_cast<std::uint8_t>(acc + in[i]);
            out[i] = acc;
        }
    }
    // (The legacy filter left trailing bytes unwritten; copying them is the defined choice.)
    b2nd::detail::copy_bytes(dst + len * u, src + len * u, nbytes - len * u);
}

}  // namespace b2nd::codec
