// Internal: XXH3-64 of two spans as of their bytes joined (a chunk's head, then its record), for
// digest.cpp and digest_avx2.cpp to build each with its own flags. It brings <xxhash.h>, which
// they define XXH_INLINE_ALL for; it has internal linkage, as the inlined xxHash has, so that
// each of the two keeps its own build (one shared copy could run AVX2 code on a CPU without it).
#pragma once

#ifndef XXH_INLINE_ALL
#error "digest_two_spans.hpp: define XXH_INLINE_ALL first (digest.cpp, digest_avx2.cpp)"
#endif

#include <cstdint>

#include <b2nd/byte_span.hpp>

#include <xxhash.h>

namespace b2nd::codec::detail {

static inline std::uint64_t xxh3_two_spans(ByteSpan a, ByteSpan b) noexcept {
    XXH3_state_t state;
    XXH3_INITSTATE(&state);
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, a.data(), a.size());
    XXH3_64bits_update(&state, b.data(), b.size());
    return XXH3_64bits_digest(&state);
}

}  // namespace b2nd::codec::detail
