// Internal: the checksum b2nd files carry (src/storage/checksums.hpp): XXH3-64, seed 0, from
// Debian's libxxhash. Only digest.cpp and digest_avx2.cpp see <xxhash.h>, used header-only
// (XXH_INLINE_ALL): its AVX2 build runs at 32-36 GB/s over 4-256 KiB in cache here against
// 12-19 GB/s for the SSE2 one (bench/bench_checksum.cpp, 2026-11-28; ~47 GB/s in an earlier
// session), and so does the two-span digest of a chunk's head and record.
#pragma once

#include <cstddef>
#include <cstdint>

#include <b2nd/byte_span.hpp>

namespace b2nd::codec::detail {

/// XXH3-64 (seed 0) of n bytes at p, with the best kernels this CPU has (the choice of
/// best_kernels(): AVX2 for "avx2" and "avx2+gfni", else SSE2).
std::uint64_t digest64(const std::uint8_t* p, std::size_t n) noexcept;
inline std::uint64_t digest64(ByteSpan b) noexcept {
    return digest64(b.data(), b.size());
}

/// XXH3-64 (seed 0) of the bytes of `a` followed by those of `b`, without joining them.
std::uint64_t digest64(ByteSpan a, ByteSpan b) noexcept;

/// The baseline build (SSE2 on x86-64), which digest64 uses on CPUs without AVX2.
std::uint64_t digest64_baseline(const std::uint8_t* p, std::size_t n) noexcept;

#if defined(__x86_64__) || defined(_M_X64)
/// The AVX2 build (digest_avx2.cpp); only for CPUs that have AVX2.
std::uint64_t digest64_avx2(const std::uint8_t* p, std::size_t n) noexcept;
/// digest64(a, b), built for AVX2.
std::uint64_t digest64_avx2(ByteSpan a, ByteSpan b) noexcept;
#endif

}  // namespace b2nd::codec::detail
