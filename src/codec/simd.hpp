// Internal: entry points of the per-instruction-set shuffle kernels and runtime dispatch.
#pragma once

#include <cstddef>
#include <cstdint>

namespace b2nd::codec::detail {

/// One instruction set's kernels. `shuffle`/`unshuffle` return false for element sizes they do
/// not vectorize (the caller then uses the generic loops); `bit_transpose` returns how many
/// 8-byte words it transposed (the caller finishes the rest).
struct SimdKernels {
    const char* name;
    bool (*shuffle)(int typesize, std::size_t nelems, const std::uint8_t* src, std::uint8_t* dst);
    bool (*unshuffle)(int typesize, std::size_t nelems, const std::uint8_t* src, std::uint8_t* dst);
    std::size_t (*bit_transpose)(std::size_t nwords, const std::uint8_t* src, std::uint8_t* dst);
};

#if defined(__x86_64__) || defined(_M_X64)
#define B2ND_HAVE_X86_KERNELS 1
const SimdKernels& sse2_kernels() noexcept;
const SimdKernels& avx2_kernels() noexcept;
#endif

/// The best kernels for this CPU, chosen once (B2ND_SIMD=generic|sse2|avx2 overrides).
const SimdKernels* best_kernels() noexcept;

}  // namespace b2nd::codec::detail
