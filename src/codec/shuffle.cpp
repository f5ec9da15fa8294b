// Byte shuffle and bit shuffle with runtime dispatch to the SIMD kernels.
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <b2nd/codec/filters.hpp>

#include "../detail/memory.hpp"
#include "shuffle_kernels.hpp"
#include "simd.hpp"

namespace b2nd::codec {

namespace detail {

namespace {

const SimdKernels* choose_kernels() noexcept {
#if defined(B2ND_HAVE_X86_KERNELS)
    const char* force = std::getenv("B2ND_SIMD");
    const std::string_view want = force != nullptr ? force : "";
    if (want == "generic") {
        return nullptr;
    }
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2") != 0;
    if (want != "sse2" && want != "avx2" && avx2 && __builtin_cpu_supports("gfni") != 0) {
        return &gfni_kernels();
    }
    if (want != "sse2" && avx2) {
        return &avx2_kernels();
    }
    return &sse2_kernels();
#else
    return nullptr;
#endif
}

}  // namespace

const SimdKernels* best_kernels() noexcept {
    static const SimdKernels* const kernels = choose_kernels();
    return kernels;
}

void unshuffle_rows(int typesize,
                    std::size_t nelems,
                    const std::uint8_t* src,
                    std::size_t row_elems,
                    std::size_t nrows,
                    std::uint8_t* dst,
                    const std::ptrdiff_t* offsets) {
    if (const auto* k = best_kernels();
        k != nullptr && typesize > 1 &&
        k->unshuffle_rows(typesize, nelems, src, row_elems, nrows, dst, offsets)) {
        return;
    }
    for (std::size_t r = 0; r < nrows; ++r) {
        unshuffle_scalar(typesize, row_elems, 0, nelems, src + r * row_elems, dst + offsets[r]);
    }
}

}  // namespace detail

namespace {

/// Transposes an 8x8 matrix of bytes held as 8 little-endian words (byte k of w[r] <-> byte r
/// of w[k]): three rounds of swapping bytes, byte pairs and 4-byte halves between word pairs.
inline void transpose8x8_bytes(std::uint64_t* w) noexcept {
    constexpr std::uint64_t m1 = 0x00FF00FF00FF00FFULL, m2 = 0x0000FFFF0000FFFFULL,
                            m3 = 0x00000000FFFFFFFFULL;
    for (int k = 0; k < 8; k += 2) {
        const std::uint64_t t = ((w[k] >> 8) ^ w[k + 1]) & m1;
        w[k + 1] ^= t;
        w[k] ^= t << 8;
    }
    for (int k : {0, 1, 4, 5}) {
        const std::uint64_t t = ((w[k] >> 16) ^ w[k + 2]) & m2;
        w[k + 2] ^= t;
        w[k] ^= t << 16;
    }
    for (int k = 0; k < 4; ++k) {
        const std::uint64_t t = ((w[k] >> 32) ^ w[k + 4]) & m3;
        w[k + 4] ^= t;
        w[k] ^= t << 32;
    }
}

void shuffle_generic(int t, std::size_t n, const std::uint8_t* src, std::uint8_t* dst) {
    const auto ts = static_cast<std::size_t>(t);
    std::size_t i0 = 0;
    if constexpr (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) {
        // unshuffle_generic's transposes the other way: 8 elements' bytes j..j+7 in, 8 bytes of
        // each of streams j..j+7 out (and 4 streams through the same transpose).
        for (; i0 + 8 <= n; i0 += 8) {
            std::size_t j = 0;
            for (; j + 8 <= ts; j += 8) {
                std::uint64_t w[8];
                for (std::size_t r = 0; r < 8; ++r) {
                    b2nd::detail::copy_bytes(&w[r], src + (i0 + r) * ts + j, 8);
                }
                transpose8x8_bytes(w);
                for (std::size_t r = 0; r < 8; ++r) {
                    b2nd::detail::copy_bytes(dst + (j + r) * n + i0, &w[r], 8);
                }
            }
            if (ts - j >= 4) {
                std::uint64_t w[8] = {};
                for (std::size_t r = 0; r < 8; ++r) {
                    b2nd::detail::copy_bytes(&w[r], src + (i0 + r) * ts + j, 4);
                }
                transpose8x8_bytes(w);
                for (std::size_t r = 0; r < 4; ++r) {
                    b2nd::detail::copy_bytes(dst + (j + r) * n + i0, &w[r], 8);
                }
                j += 4;
            }
            for (; j < ts; ++j) {
                for (std::size_t r = 0; r < 8; ++r) {
                    dst[j * n + i0 + r] = src[(i0 + r) * ts + j];
                }
            }
        }
    }
    for (std::size_t j = 0; j < ts; ++j) {
        std::uint8_t* out = dst + j * n;
        const std::uint8_t* in = src + j;
        for (std::size_t i = i0; i < n; ++i) {
            out[i] = in[i * ts];
        }
    }
}

void unshuffle_generic(int t, std::size_t n, const std::uint8_t* src, std::uint8_t* dst) {
    const auto ts = static_cast<std::size_t>(t);
    std::size_t i0 = 0;
    if constexpr (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) {
        // 8 elements x 8 streams at a time: 8 words read (one per stream), transposed, and
        // written as 8 bytes of each element; the streams past a multiple of 8 byte by byte.
        const std::size_t js = ts / 8 * 8;
        for (; i0 + 8 <= n; i0 += 8) {
            for (std::size_t j = 0; j < js; j += 8) {
                std::uint64_t w[8];
                for (std::size_t r = 0; r < 8; ++r) {
                    b2nd::detail::copy_bytes(&w[r], src + (j + r) * n + i0, 8);
                }
                transpose8x8_bytes(w);
                for (std::size_t r = 0; r < 8; ++r) {
                    b2nd::detail::copy_bytes(dst + (i0 + r) * ts + j, &w[r], 8);
                }
            }
            std::size_t j = js;
            if (ts - j >= 4) {  // 4 more streams: the same transpose, half the words empty
                std::uint64_t w[8] = {};
                for (std::size_t r = 0; r < 4; ++r) {
                    b2nd::detail::copy_bytes(&w[r], src + (j + r) * n + i0, 8);
                }
                transpose8x8_bytes(w);
                for (std::size_t r = 0; r < 8; ++r) {
                    b2nd::detail::copy_bytes(dst + (i0 + r) * ts + j, &w[r], 4);
                }
                j += 4;
            }
            for (; j < ts; ++j) {
                const std::uint8_t* in = src + j * n + i0;
                for (std::size_t r = 0; r < 8; ++r) {
                    dst[(i0 + r) * ts + j] = in[r];
                }
            }
        }
    }
    for (std::size_t j = 0; j < ts; ++j) {
        const std::uint8_t* in = src + j * n;
        std::uint8_t* out = dst + j;
        for (std::size_t i = i0; i < n; ++i) {
            out[i * ts] = in[i];
        }
    }
}

/// Transposes the bits of each 8-byte word (bit b of byte m <-> bit m of byte b).
std::uint64_t bit_transpose8x8(std::uint64_t x) noexcept {
    std::uint64_t t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAULL;
    x = x ^ t ^ (t << 7);
    t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCULL;
    x = x ^ t ^ (t << 14);
    t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ULL;
    return x ^ t ^ (t << 28);
}

std::uint64_t load_word(const std::uint8_t* p) noexcept {
    std::uint64_t x;
    b2nd::detail::copy_bytes(&x, p, 8);
    if constexpr (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) {
        x = __builtin_bswap64(x);
    }
    return x;
}

/// Bit-transposes each of `nwords` words of one byte stream and splits the results into 8 rows
/// of nwords bytes (row b = byte b of each transposed word).
void words_to_rows(std::size_t nwords, const std::uint8_t* src, std::uint8_t* dst) {
    std::size_t done = 0;
    if (const auto* k = detail::best_kernels()) {
        done = k->words_to_rows(nwords, src, dst);
    }
    for (std::size_t w = done; w < nwords; ++w) {
        const std::uint64_t x = bit_transpose8x8(load_word(src + w * 8));
        for (std::size_t b = 0; b < 8; ++b) {
            dst[b * nwords + w] = static_cast<std::uint8_t>(x >> (8 * b));
        }
    }
}

/// The inverse of words_to_rows.
void rows_to_words(std::size_t nwords, const std::uint8_t* src, std::uint8_t* dst) {
    std::size_t done = 0;
    if (const auto* k = detail::best_kernels()) {
        done = k->rows_to_words(nwords, src, dst);
    }
    for (std::size_t w = done; w < nwords; ++w) {
        std::uint64_t x = 0;
        for (std::size_t b = 0; b < 8; ++b) {
            x |= std::uint64_t{src[b * nwords + w]} << (8 * b);
        }
        x = bit_transpose8x8(x);
        for (std::size_t b = 0; b < 8; ++b) {
            dst[w * 8 + b] = static_cast<std::uint8_t>(x >> (8 * b));
        }
    }
}

/// Shuffles nelems whole elements (no trailing bytes).
void shuffle_elems(int t, std::size_t nelems, const std::uint8_t* src, std::uint8_t* dst) {
    if (t == 1) {
        b2nd::detail::copy_bytes(dst, src, nelems);
        return;
    }
    if (const auto* k = detail::best_kernels(); k != nullptr && k->shuffle(t, nelems, src, dst)) {
        return;
    }
    shuffle_generic(t, nelems, src, dst);
}

void unshuffle_elems(int t, std::size_t nelems, const std::uint8_t* src, std::uint8_t* dst) {
    if (t == 1) {
        b2nd::detail::copy_bytes(dst, src, nelems);
        return;
    }
    if (const auto* k = detail::best_kernels(); k != nullptr && k->unshuffle(t, nelems, src, dst)) {
        return;
    }
    unshuffle_generic(t, nelems, src, dst);
}

}  // namespace

void shuffle(int unit, std::size_t nbytes, const std::uint8_t* src, std::uint8_t* dst) {
    if (nbytes == 0) {
        return;
    }
    const auto u = static_cast<std::size_t>(unit);
    const std::size_t n = nbytes / u;
    shuffle_elems(unit, n, src, dst);
    b2nd::detail::copy_bytes(dst + n * u, src + n * u, nbytes - n * u);
}

void unshuffle(int unit, std::size_t nbytes, const std::uint8_t* src, std::uint8_t* dst) {
    if (nbytes == 0) {
        return;
    }
    const auto u = static_cast<std::size_t>(unit);
    const std::size_t n = nbytes / u;
    unshuffle_elems(unit, n, src, dst);
    b2nd::detail::copy_bytes(dst + n * u, src + n * u, nbytes - n * u);
}

// Bit shuffle of n elements (n a multiple of 8) of t bytes, in two passes:
//   1. byte shuffle: t streams of n bytes (stream j = byte j of every element);
//   2. per stream, words_to_rows: the 8x8 bit transpose of word g puts in its byte b bit b of
//      byte j of elements 8g..8g+7, and row b collects byte b of every word.
// Row j*8+b therefore holds bit b of byte j of every element, 8 elements per byte, element i at
// bit i % 8 of byte i / 8: the bitshuffle layout.
void bitshuffle(int typesize,
                std::size_t nbytes,
                const std::uint8_t* src,
                std::uint8_t* dst,
                std::uint8_t* scratch) {
    const auto t = static_cast<std::size_t>(typesize);
    std::size_t n = nbytes / t;
    n -= n % 8;
    const std::size_t body = n * t;
    if (n > 0) {
        shuffle_elems(typesize, n, src, scratch);
        for (std::size_t j = 0; j < t; ++j) {
            words_to_rows(n / 8, scratch + j * n, dst + j * n);
        }
    }
    b2nd::detail::copy_bytes(dst + body, src + body, nbytes - body);
}

void bitunshuffle(int typesize,
                  std::size_t nbytes,
                  const std::uint8_t* src,
                  std::uint8_t* dst,
                  std::uint8_t* scratch,
                  bool blosc1_layout) {
    const auto t = static_cast<std::size_t>(typesize);
    std::size_t n = nbytes / t;
    if (blosc1_layout && n % 8 != 0) {
        b2nd::detail::copy_bytes(dst, src, nbytes);
        return;
    }
    n -= n % 8;
    const std::size_t body = n * t;
    if (n > 0) {
        for (std::size_t j = 0; j < t; ++j) {
            rows_to_words(n / 8, src + j * n, scratch + j * n);
        }
        unshuffle_elems(typesize, n, scratch, dst);
    }
    if (blosc1_layout) {
        // Blosc 1.x encoders did not store the bytes past the last whole element here (and
        // c-blosc2 does not write them); they read as zeros. See CONFORMANCE.md.
        b2nd::detail::fill_bytes(dst + body, 0, nbytes - body);
        return;
    }
    b2nd::detail::copy_bytes(dst + body, src + body, nbytes - body);
}

namespace detail {

void bitunshuffle_rows(int typesize,
                       std::size_t nelems,
                       const std::uint8_t* src,
                       std::uint8_t* scratch,
                       std::size_t row_elems,
                       std::size_t nrows,
                       std::uint8_t* dst,
                       const std::ptrdiff_t* offsets) {
    const auto t = static_cast<std::size_t>(typesize);
    for (std::size_t j = 0; j < t; ++j) {
        rows_to_words(nelems / 8, src + j * nelems, scratch + j * nelems);
    }
    unshuffle_rows(typesize, nelems, scratch, row_elems, nrows, dst, offsets);
}

}  // namespace detail

std::string_view simd_backend() noexcept {
    const auto* k = detail::best_kernels();
    return k != nullptr ? k->name : "generic";
}

}  // namespace b2nd::codec
