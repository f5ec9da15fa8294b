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

    /// Interleaves U-byte units of a and b over the full 32 bytes. The AVX2 unpacks work per
    /// 128-bit lane, so the inputs' middle quadwords are swapped first.
    template <std::size_t U>
    static void zip(V a, V b, V& lo, V& hi) noexcept {
        const V a2 = _mm256_permute4x64_epi64(a, 0xD8);
        const V b2 = _mm256_permute4x64_epi64(b, 0xD8);
        if constexpr (U == 1) {
            lo = _mm256_unpacklo_epi8(a2, b2);
            hi = _mm256_unpackhi_epi8(a2, b2);
        } else if constexpr (U == 2) {
            lo = _mm256_unpacklo_epi16(a2, b2);
            hi = _mm256_unpackhi_epi16(a2, b2);
        } else if constexpr (U == 4) {
            lo = _mm256_unpacklo_epi32(a2, b2);
            hi = _mm256_unpackhi_epi32(a2, b2);
        } else {
            lo = _mm256_unpacklo_epi64(a2, b2);
            hi = _mm256_unpackhi_epi64(a2, b2);
        }
    }

    /// Splits the U-byte units of [lo, hi] into even and odd positions; the per-lane results
    /// are put back in order by swapping the middle quadwords.
    template <std::size_t U>
    static void unzip(V lo, V hi, V& even, V& odd) noexcept {
        V e;
        V o;
        if constexpr (U == 1) {
            const V mask = _mm256_set1_epi16(0x00FF);
            e = _mm256_packus_epi16(_mm256_and_si256(lo, mask), _mm256_and_si256(hi, mask));
            o = _mm256_packus_epi16(_mm256_srli_epi16(lo, 8), _mm256_srli_epi16(hi, 8));
        } else if constexpr (U == 2) {
            const V m = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15, 0, 1,
                                         4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
            const V a = _mm256_shuffle_epi8(lo, m);
            const V b = _mm256_shuffle_epi8(hi, m);
            e = _mm256_unpacklo_epi64(a, b);
            o = _mm256_unpackhi_epi64(a, b);
        } else if constexpr (U == 4) {
            const V a = _mm256_shuffle_epi32(lo, 0xD8);
            const V b = _mm256_shuffle_epi32(hi, 0xD8);
            e = _mm256_unpacklo_epi64(a, b);
            o = _mm256_unpackhi_epi64(a, b);
        } else {
            e = _mm256_unpacklo_epi64(lo, hi);
            o = _mm256_unpackhi_epi64(lo, hi);
        }
        even = _mm256_permute4x64_epi64(e, 0xD8);
        odd = _mm256_permute4x64_epi64(o, 0xD8);
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
