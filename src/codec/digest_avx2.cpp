// XXH3-64 built for AVX2 (compiled with -mavx2; called only on CPUs that have it).
#include "digest.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#define XXH_INLINE_ALL
#include "digest_two_spans.hpp"  // <xxhash.h>, inlined

namespace b2nd::codec::detail {

std::uint64_t digest64_avx2(const std::uint8_t* p, std::size_t n) noexcept {
    return XXH3_64bits(p, n);
}

std::uint64_t digest64_avx2(ByteSpan a, ByteSpan b) noexcept {
    return xxh3_two_spans(a, b);
}

}  // namespace b2nd::codec::detail

#endif
