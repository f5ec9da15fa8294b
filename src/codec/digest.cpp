// The XXH3-64 gate (digest.hpp): the baseline build, and the dispatch to the AVX2 one (of both
// the one-span digest and the two-span one that hashes each chunk's head and record).
#include "digest.hpp"

#include <cstring>

#include "simd.hpp"

#define XXH_INLINE_ALL
#include "digest_two_spans.hpp"  // <xxhash.h>, inlined

namespace b2nd::codec::detail {

std::uint64_t digest64_baseline(const std::uint8_t* p, std::size_t n) noexcept {
    return XXH3_64bits(p, n);
}

namespace {

using DigestFn = std::uint64_t (*)(const std::uint8_t*, std::size_t) noexcept;
using PairFn = std::uint64_t (*)(ByteSpan, ByteSpan) noexcept;

#ifdef B2ND_HAVE_X86_KERNELS
bool use_avx2() noexcept {
    const SimdKernels* k = best_kernels();
    return k != nullptr && std::strncmp(k->name, "avx2", 4) == 0;  // "avx2" or "avx2+gfni"
}
#endif

std::uint64_t pair_baseline(ByteSpan a, ByteSpan b) noexcept {
    return xxh3_two_spans(a, b);
}

DigestFn choose() noexcept {
#ifdef B2ND_HAVE_X86_KERNELS
    if (use_avx2()) {
        return &digest64_avx2;
    }
#endif
    return &digest64_baseline;
}

PairFn choose_pair() noexcept {
#ifdef B2ND_HAVE_X86_KERNELS
    if (use_avx2()) {
        return &digest64_avx2;
    }
#endif
    return &pair_baseline;
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
    static const PairFn fn = choose_pair();
    return fn(a, b);
}

}  // namespace b2nd::codec::detail
