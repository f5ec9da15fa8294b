// AVX2 instantiation of the shuffle kernels; this file alone is compiled with -mavx2 and is only
// called after a runtime CPU check (see shuffle.cpp).
#include "simd.hpp"

#if defined(B2ND_HAVE_X86_KERNELS)
#include "shuffle_avx2_ops.hpp"
#include "shuffle_kernels.hpp"

namespace {

bool shuffle_avx2(int t, std::size_t n, const std::uint8_t* src, std::uint8_t* dst) {
    return shuffle_dispatch<Avx2Ops>(t, n, src, dst);
}
bool unshuffle_avx2(int t, std::size_t n, const std::uint8_t* src, std::uint8_t* dst) {
    return unshuffle_dispatch<Avx2Ops>(t, n, src, dst);
}
std::size_t words_to_rows_avx2(std::size_t nwords, const std::uint8_t* src, std::uint8_t* dst) {
    return words_to_rows_vec<Avx2Ops>(nwords, src, dst);
}
std::size_t rows_to_words_avx2(std::size_t nwords, const std::uint8_t* src, std::uint8_t* dst) {
    return rows_to_words_vec<Avx2Ops>(nwords, src, dst);
}

}  // namespace

namespace b2nd::codec::detail {
const SimdKernels& avx2_kernels() noexcept {
    static const SimdKernels k{"avx2",
                               &shuffle_avx2,
                               &unshuffle_avx2,
                               &words_to_rows_avx2,
                               &rows_to_words_avx2,
                               &unshuffle_rows_dispatch<Avx2Ops>};
    return k;
}
}  // namespace b2nd::codec::detail
#endif
