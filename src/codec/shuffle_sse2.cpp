// SSE2 instantiation of the shuffle kernels (SSE2 is part of the x86-64 baseline).
#include "simd.hpp"

#if defined(B2ND_HAVE_X86_KERNELS)
#include "shuffle_kernels.hpp"
#include <emmintrin.h>

namespace {

struct Sse2Ops {
    using V = __m128i;
    static constexpr std::size_t kWidth = 16;

    static V load(const std::uint8_t* p) noexcept {
        return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    }
    static void store(std::uint8_t* p, V v) noexcept {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
    }

    /// Interleaves U-byte units of a and b; lo gets the first 16 bytes, hi the next 16.
    template <std::size_t U>
    static void zip(V a, V b, V& lo, V& hi) noexcept {
        if constexpr (U == 1) {
            lo = _mm_unpacklo_epi8(a, b);
            hi = _mm_unpackhi_epi8(a, b);
        } else if constexpr (U == 2) {
            lo = _mm_unpacklo_epi16(a, b);
            hi = _mm_unpackhi_epi16(a, b);
        } else if constexpr (U == 4) {
            lo = _mm_unpacklo_epi32(a, b);
            hi = _mm_unpackhi_epi32(a, b);
        } else {
            lo = _mm_unpacklo_epi64(a, b);
            hi = _mm_unpackhi_epi64(a, b);
        }
    }

    /// A 128-bit vector is one lane: nothing to rearrange around the rounds.
    template <std::size_t T>
    static void after_zip(V* /*l*/) noexcept {}
    template <std::size_t T>
    static void before_unzip(V* /*l*/) noexcept {}

    /// Splits the U-byte units of [lo, hi] into those at even and at odd positions.
    template <std::size_t U>
    static void unzip(V lo, V hi, V& even, V& odd) noexcept {
        if constexpr (U == 1) {
            const V mask = _mm_set1_epi16(0x00FF);
            even = _mm_packus_epi16(_mm_and_si128(lo, mask), _mm_and_si128(hi, mask));
            odd = _mm_packus_epi16(_mm_srli_epi16(lo, 8), _mm_srli_epi16(hi, 8));
        } else if constexpr (U == 2) {
            const V a =
                _mm_shuffle_epi32(_mm_shufflehi_epi16(_mm_shufflelo_epi16(lo, 0xD8), 0xD8), 0xD8);
            const V b =
                _mm_shuffle_epi32(_mm_shufflehi_epi16(_mm_shufflelo_epi16(hi, 0xD8), 0xD8), 0xD8);
            even = _mm_unpacklo_epi64(a, b);
            odd = _mm_unpackhi_epi64(a, b);
        } else if constexpr (U == 4) {
            const V a = _mm_shuffle_epi32(lo, 0xD8);
            const V b = _mm_shuffle_epi32(hi, 0xD8);
            even = _mm_unpacklo_epi64(a, b);
            odd = _mm_unpackhi_epi64(a, b);
        } else {
            even = _mm_unpacklo_epi64(lo, hi);
            odd = _mm_unpackhi_epi64(lo, hi);
        }
    }

    /// Transposes the 8x8 bit matrix of each 64-bit lane (bit b of byte m <-> bit m of byte b).
    static V bit_transpose8x8(V x) noexcept {
        V t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 7)),
                            _mm_set1_epi64x(0x00AA00AA00AA00AALL));
        x = _mm_xor_si128(_mm_xor_si128(x, t), _mm_slli_epi64(t, 7));
        t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 14)),
                          _mm_set1_epi64x(0x0000CCCC0000CCCCLL));
        x = _mm_xor_si128(_mm_xor_si128(x, t), _mm_slli_epi64(t, 14));
        t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 28)),
                          _mm_set1_epi64x(0x00000000F0F0F0F0LL));
        return _mm_xor_si128(_mm_xor_si128(x, t), _mm_slli_epi64(t, 28));
    }
};

bool shuffle_sse2(int t, std::size_t n, const std::uint8_t* src, std::uint8_t* dst) {
    return shuffle_dispatch<Sse2Ops>(t, n, src, dst);
}
bool unshuffle_sse2(int t, std::size_t n, const std::uint8_t* src, std::uint8_t* dst) {
    return unshuffle_dispatch<Sse2Ops>(t, n, src, dst);
}
std::size_t words_to_rows_sse2(std::size_t nwords, const std::uint8_t* src, std::uint8_t* dst) {
    return words_to_rows_vec<Sse2Ops>(nwords, src, dst);
}
std::size_t rows_to_words_sse2(std::size_t nwords, const std::uint8_t* src, std::uint8_t* dst) {
    return rows_to_words_vec<Sse2Ops>(nwords, src, dst);
}

}  // namespace

namespace b2nd::codec::detail {
const SimdKernels& sse2_kernels() noexcept {
    static const SimdKernels k{"sse2",
                               &shuffle_sse2,
                               &unshuffle_sse2,
                               &words_to_rows_sse2,
                               &rows_to_words_sse2,
                               &unshuffle_rows_dispatch<Sse2Ops>};
    return k;
}
}  // namespace b2nd::codec::detail
#endif
