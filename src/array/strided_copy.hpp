// Internal: copies and fills of N-dimensional strided boxes of fixed-size elements, the step
// between a decoded block and a caller's buffer. Contiguous innermost runs go through memcpy;
// dimensions that are contiguous in both buffers are merged first so runs are as long as possible.
#pragma once

#include <cstdint>

namespace b2nd::detail {

/// A box walk: extent per dimension and byte strides of source and destination.
struct StridedBox {
    int ndim = 0;
    std::int64_t extent[16];
    std::int64_t src_stride[16];
    std::int64_t dst_stride[16];
};

/// Copies every element of the box (itemsize bytes each) from src to dst.
void copy_strided(const StridedBox& box,
                  const std::uint8_t* src,
                  std::uint8_t* dst,
                  std::int64_t itemsize) noexcept;

/// Writes `pattern` (itemsize bytes) to every element of the box at dst (src strides unused).
void fill_strided(const StridedBox& box,
                  std::uint8_t* dst,
                  const std::uint8_t* pattern,
                  std::int64_t itemsize) noexcept;

/// Fills dst[0, n) with copies of `element` (itemsize bytes; n a multiple of it).
void fill_elements(std::uint8_t* dst,
                   std::size_t n,
                   const std::uint8_t* element,
                   std::int64_t itemsize) noexcept;

}  // namespace b2nd::detail
