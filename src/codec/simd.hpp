// Internal: entry points of the per-instruction-set shuffle kernels and runtime dispatch.
#pragma once

#include <cstddef>
#include <cstdint>

namespace b2nd::codec::detail {

/// One instruction set's kernels. `shuffle`/`unshuffle` return false for element sizes they do
/// not vectorize (the caller then uses the generic loops). `words_to_rows` (bit-transpose each
/// 8-byte word, then split the words into 8 byte rows) and its inverse `rows_to_words` return how
/// many words they processed; the caller finishes the rest.
struct SimdKernels {
    const char* name;
    bool (*shuffle)(int typesize, std::size_t nelems, const std::uint8_t* src, std::uint8_t* dst);
    bool (*unshuffle)(int typesize, std::size_t nelems, const std::uint8_t* src, std::uint8_t* dst);
    std::size_t (*words_to_rows)(std::size_t nwords, const std::uint8_t* src, std::uint8_t* dst);
    std::size_t (*rows_to_words)(std::size_t nwords, const std::uint8_t* src, std::uint8_t* dst);
    /// unshuffle_rows (below) for the element sizes it vectorizes (false for others).
    bool (*unshuffle_rows)(int typesize,
                           std::size_t nelems,
                           const std::uint8_t* src,
                           std::size_t row_elems,
                           std::size_t nrows,
                           std::uint8_t* dst,
                           const std::ptrdiff_t* offsets);
};

#if defined(__x86_64__) || defined(_M_X64)
#define B2ND_HAVE_X86_KERNELS 1
const SimdKernels& sse2_kernels() noexcept;
const SimdKernels& avx2_kernels() noexcept;
const SimdKernels& gfni_kernels() noexcept;  // AVX2 + GFNI
#endif

/// The best kernels for this CPU, chosen once (B2ND_SIMD=generic|sse2|avx2|gfni overrides).
const SimdKernels* best_kernels() noexcept;

/// Unshuffles a block of nelems elements of `typesize` bytes (byte-shuffled: typesize streams of
/// nelems bytes at src) straight into its place in a larger array: the block is nrows rows of
/// row_elems elements (nrows * row_elems == nelems), row r goes to dst + offsets[r].
void unshuffle_rows(int typesize,
                    std::size_t nelems,
                    const std::uint8_t* src,
                    std::size_t row_elems,
                    std::size_t nrows,
                    std::uint8_t* dst,
                    const std::ptrdiff_t* offsets);

/// unshuffle_rows for a bit-shuffled block (nelems a multiple of 8, no trailing bytes): the
/// bit transpose goes to `scratch` (nelems * typesize bytes), the byte unshuffle to the rows.
void bitunshuffle_rows(int typesize,
                       std::size_t nelems,
                       const std::uint8_t* src,
                       std::uint8_t* scratch,
                       std::size_t row_elems,
                       std::size_t nrows,
                       std::uint8_t* dst,
                       const std::ptrdiff_t* offsets);

}  // namespace b2nd::codec::detail
