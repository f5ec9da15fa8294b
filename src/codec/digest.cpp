// The XXH3-64 gate (digest.hpp): the baseline build, and the dispatch to the AVX2 one.
#include "digest.hpp"

#include <cstring>

#include "simd.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace b2nd::codec::detail {

std::uint64_t digest64_baseline(const std::uint8_t* p, std::size_t n) noexcept {
    return XXH3_64bits(p, n);
}

namespace {

using DigestFn = std::uint64_t (*)(const std::uint8_t*, std::size_t) noexcept;

DigestFn choose() noexcept {
#ifdef B2ND_HAVE_X86_KERNELS
    const SimdKernels* k = best_kernels();
    if (k != nullptr && std::strncmp(k->name, "avx2", 4) == 0) {  // "avx2" or "avx2+gfni"
        return &digest64_avx2;
    }
#endif
    return &digest64_baseline;
}

}  // namespace

std::uint64_t digest64(const std::uint8_t* p, std::size_t n) noexcept {
    static const DigestFn fn = choose();
    return fn(p, n);
}

std::uint64_t digest64(ByteSpan a, ByteSpan b) noexcept {
    if (b.empty()) {
        return digest64(a);
    }
    XXH3_state_t state;
    XXH3_INITSTATE(&state);
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, a.data(), a.size());
    XXH3_64bits_update(&state, b.data(), b.size());
    return XXH3_64bits_digest(&state);
}

}  // namespace b2nd::codec::detail
