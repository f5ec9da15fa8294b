// Internal: the AVX2 vector operations of the shuffle kernels, shared by the AVX2 and the
// AVX2+GFNI translation units (both compiled with -mavx2). Unnamed namespace: each includer gets
// its own copy, so kernels built with different target flags never merge.
#pragma once

#include <cstddef>
#include <cstdint>

#include <immintrin.h>

namespace {

struct Avx2Ops {
    using V = __m256i;
    static constexpr std::size_t kWidth = 32;

    static V load(const std::uint8_t* p) noexcept {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    }
    static void store(std::uint8_t* p, V v) noexcept {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
    }

    /// Interleaves U-byte units of a and b within each 128-bit lane: each lane runs the SSE2
    /// network on its own 16 elements, and after_zip() puts the lanes in memory order once.
    template <std::size_t U>
    static void zip(V a, V b, V& lo, V& hi) noexcept {
        if constexpr (U == 1) {
            lo = _mm256_unpacklo_epi8(a, b);
            hi = _mm256_unpackhi_epi8(a, b);
        } else if constexpr (U == 2) {
            lo = _mm256_unpacklo_epi16(a, b);
            hi = _mm256_unpackhi_epi16(a, b);
        } else if constexpr (U == 4) {
            lo = _mm256_unpacklo_epi32(a, b);
            hi = _mm256_unpackhi_epi32(a, b);
        } else {
            lo = _mm256_unpacklo_epi64(a, b);
            hi = _mm256_unpackhi_epi64(a, b);
        }
    }

    /// After the zip rounds, vector k holds in lane 0 the SSE2 result k for the first 16
    /// elements and in lane 1 that for the next 16; output vector j is results 2j and 2j + 1.
    template <std::size_t T>
    static void after_zip(V* l) noexcept {
        V r[T];
        for (std::size_t k = 0; k < T; ++k) {
            r[k] = l[k];
        }
        for (std::size_t j = 0; j < T / 2; ++j) {
            l[j] = _mm256_permute2x128_si256(r[2 * j], r[2 * j + 1], 0x20);
            l[j + T / 2] = _mm256_permute2x128_si256(r[2 * j], r[2 * j + 1], 0x31);
        }
    }

    /// The inverse: lane 0 of vector k gets 16-byte chunk k of the input, lane 1 chunk k + T,
    /// so that each lane then runs the SSE2 unzip network on its own half.
    template <std::size_t T>
    static void before_unzip(V* l) noexcept {
        V in[T];
        for (std::size_t k = 0; k < T; ++k) {
            in[k] = l[k];
        }
        for (std::size_t k = 0; k < T; k += 2) {  // the immediates must be constants
            l[k] = _mm256_permute2x128_si256(in[k / 2], in[(k + T) / 2], 0x20);
            l[k + 1] = _mm256_permute2x128_si256(in[k / 2], in[(k + T) / 2], 0x31);
        }
    }

    /// Splits the U-byte units of [lo, hi] into even and odd positions within each lane
    /// (before_unzip() has arranged the lanes).
    template <std::size_t U>
    static void unzip(V lo, V hi, V& even, V& odd) noexcept {
        if constexpr (U == 1) {
            const V mask = _mm256_set1_epi16(0x00FF);
            even = _mm256_packus_epi16(_mm256_and_si256(lo, mask), _mm256_and_si256(hi, mask));
            odd = _mm256_packus_epi16(_mm256_srli_epi16(lo, 8), _mm256_srli_epi16(hi, 8));
        } else if constexpr (U == 2) {
            const V m = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15, 0, 1,
                                         4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
            const V a = _mm256_shuffle_epi8(lo, m);
            const V b = _mm256_shuffle_epi8(hi, m);
            even = _mm256_unpacklo_epi64(a, b);
            odd = _mm256_unpackhi_epi64(a, b);
        } else if constexpr (U == 4) {
            const V a = _mm256_shuffle_epi32(lo, 0xD8);
            const V b = _mm256_shuffle_epi32(hi, 0xD8);
            even = _mm256_unpacklo_epi64(a, b);
            odd = _mm256_unpackhi_epi64(a, b);
        } else {
            even = _mm256_unpacklo_epi64(lo, hi);
            odd = _mm256_unpackhi_epi64(lo, hi);
        }
    }

    static V bit_transpose8x8(V x) noexcept {
        V t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64(x, 7)),
                               _mm256_set1_epi64x(0x00AA00AA00AA00AALL));
        x = _mm256_xor_si256(_mm256_xor_si256(x, t), _mm256_slli_epi64(t, 7));
        t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64(x, 14)),
                             _mm256_set1_epi64x(0x0000CCCC0000CCCCLL));
        x = _mm256_xor_si256(_mm256_xor_si256(x, t), _mm256_slli_epi64(t, 14));
        t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64(x, 28)),
                             _mm256_set1_epi64x(0x00000000F0F0F0F0LL));
        return _mm256_xor_si256(_mm256_xor_si256(x, t), _mm256_slli_epi64(t, 28));
    }
};

}  // namespace
