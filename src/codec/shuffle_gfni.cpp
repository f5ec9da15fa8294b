// AVX2 + GFNI instantiation of the shuffle kernels: the AVX2 byte shuffles, with the 8x8 bit
// transpose of bitshuffle done by one GF2P8AFFINEQB. Compiled with -mavx2 -mgfni and called only
// after a runtime CPU check (see shuffle.cpp).
#include "simd.hpp"

#if defined(B2ND_HAVE_X86_KERNELS)
#include "shuffle_avx2_ops.hpp"
#include "shuffle_kernels.hpp"

namespace {

struct GfniOps : Avx2Ops {
    /// Output byte i, bit k = input byte k, bit i. GF2P8AFFINEQB(x, A) sets bit k of byte i to
    /// parity(A.byte[7 - k] & x.byte[i]); with x.byte[i] = 1 << i and A = the word with its bytes
    /// reversed, that is bit i of input byte k.
    static V bit_transpose8x8(V x) noexcept {
        const V reverse = _mm256_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7,
                                           6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8);
        const V select = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
        return _mm256_gf2p8affine_epi64_epi8(select, _mm256_shuffle_epi8(x, reverse), 0);
    }
};

bool shuffle_gfni(int t, std::size_t n, const std::uint8_t* src, std::uint8_t* dst) {
    return shuffle_dispatch<GfniOps>(t, n, src, dst);
}
bool unshuffle_gfni(int t, std::size_t n, const std::uint8_t* src, std::uint8_t* dst) {
    return unshuffle_dispatch<GfniOps>(t, n, src, dst);
}
std::size_t words_to_rows_gfni(std::size_t nwords, const std::uint8_t* src, std::uint8_t* dst) {
    return words_to_rows_vec<GfniOps>(nwords, src, dst);
}
std::size_t rows_to_words_gfni(std::size_t nwords, const std::uint8_t* src, std::uint8_t* dst) {
    return rows_to_words_vec<GfniOps>(nwords, src, dst);
}

}  // namespace

namespace b2nd::codec::detail {
const SimdKernels& gfni_kernels() noexcept {
    static const SimdKernels k{"avx2+gfni",         &shuffle_gfni,
                               &unshuffle_gfni,     &words_to_rows_gfni,
                               &rows_to_words_gfni, &unshuffle_rows_dispatch<GfniOps>};
    return k;
}
}  // namespace b2nd::codec::detail
#endif
