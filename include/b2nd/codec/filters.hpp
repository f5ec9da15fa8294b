// The Blosc2 filters as plain functions over byte buffers. The chunk codec calls these; they are
// public for tests, benchmarks and tools. Buffers must not overlap unless stated.
//
// Advanced (b2nd::codec, the chunk codec): for tools that encode or decode single chunks.
// Programs that read and write arrays need only <b2nd/b2nd.hpp>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace b2nd::codec {

/// Byte shuffle: for the n = nbytes / unit whole elements, byte j of element i moves to
/// position j * n + i. The nbytes % unit trailing bytes are copied unchanged. unit >= 1.
void shuffle(int unit, std::size_t nbytes, const std::uint8_t* src, std::uint8_t* dst);
/// Inverse of shuffle().
void unshuffle(int unit, std::size_t nbytes, const std::uint8_t* src, std::uint8_t* dst);

/// Bit shuffle (the bitshuffle algorithm, as c-blosc2 applies it): the largest multiple of 8 of
/// the nbytes / typesize elements is transposed to 8 * typesize rows of bits; the remaining bytes
/// are copied. `scratch` must hold nbytes bytes.
void bitshuffle(int typesize,
                std::size_t nbytes,
                const std::uint8_t* src,
                std::uint8_t* dst,
                std::uint8_t* scratch);
/// Inverse of bitshuffle(). With `blosc1_layout` (chunk format version <= 2) a block whose
/// element count is not a multiple of 8 was stored untransposed and is copied, and otherwise the
/// bytes past the last whole element (never stored by Blosc 1.x) read as zeros.
void bitunshuffle(int typesize,
                  std::size_t nbytes,
                  const std::uint8_t* src,
                  std::uint8_t* dst,
                  std::uint8_t* scratch,
                  bool blosc1_layout = false);

/// The element size DELTA works in for a given typesize (1, 2, 4, 8; 8 for multiples of 8,
/// otherwise 1), as c-blosc2 does.
int delta_unit(int typesize) noexcept;
/// DELTA encoding of one block. For the chunk's first block (`first_block`) each element is
/// XORed with the previous one of `src`; for other blocks with the same element of `ref`, the
/// chunk's first block as it reads back. Trailing bytes past the last whole element are copied.
void delta_encode(const std::uint8_t* ref,
                  bool first_block,
                  int typesize,
                  std::size_t nbytes,
                  const std::uint8_t* src,
                  std::uint8_t* dst);
/// Inverse of delta_encode(). `dst` may equal `src` (in place). For a non-first block `ref` is
/// the decoded first block of the chunk.
void delta_decode(const std::uint8_t* ref,
                  bool first_block,
                  int typesize,
                  std::size_t nbytes,
                  const std::uint8_t* src,
                  std::uint8_t* dst);

/// TRUNC_PREC: zeroes low mantissa bits of float32 (typesize 4) or float64 (typesize 8) values.
/// prec_bits > 0 keeps that many mantissa bits, < 0 removes -prec_bits bits (c-blosc2's meaning).
/// \throws UsageError for other typesizes or a precision out of range.
void trunc_prec(
    int prec_bits, int typesize, std::size_t nbytes, const std::uint8_t* src, std::uint8_t* dst);
/// Whether trunc_prec() accepts these parameters.
bool trunc_prec_valid(int prec_bits, int typesize) noexcept;

/// BYTEDELTA (filter id 35): per byte channel of `unit`-byte elements, stores differences of
/// consecutive bytes. Meant to follow SHUFFLE. Trailing bytes are copied.
void bytedelta_encode(int unit, std::size_t nbytes, const std::uint8_t* src, std::uint8_t* dst);
/// Inverse of bytedelta_encode(). `legacy` decodes the buggy id-34 variant of c-blosc2 2.8/2.9
/// (as built with SIMD: the running sum restarts at each channel's 16-byte-aligned tail).
void bytedelta_decode(
    int unit, std::size_t nbytes, const std::uint8_t* src, std::uint8_t* dst, bool legacy = false);

/// The shuffle kernels in use: "avx2+gfni", "avx2", "sse2" or "generic".
std::string_view simd_backend() noexcept;

}  // namespace b2nd::codec
