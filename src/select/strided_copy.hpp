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

/// Copies every element of the box (itemsize bytes each) from src to dst. With `stream`, runs
/// contiguous in both buffers are written with non-temporal stores (no read of the destination
/// into the cache, nothing evicted): several times faster into a destination much larger than
/// the cache, slower for one that is read right after. Call stream_fence() before the data is
/// handed to another thread.
void copy_strided(const StridedBox& box,
                  const std::uint8_t* src,
                  std::uint8_t* dst,
                  std::int64_t itemsize,
                  bool stream = false) noexcept;

/// copy_strided from a source far larger than the caches whose rows lie far apart (gathering a
/// block from an array in memory): each row is prefetched a few rows ahead, since the hardware
/// prefetchers do not follow strides that cross pages.
void gather_strided(const StridedBox& box,
                    const std::uint8_t* src,
                    std::uint8_t* dst,
                    std::int64_t itemsize) noexcept;

/// Writes `pattern` (itemsize bytes) to every element of the box at dst (src strides unused);
/// `stream` as for copy_strided.
void fill_strided(const StridedBox& box,
                  std::uint8_t* dst,
                  const std::uint8_t* pattern,
                  std::int64_t itemsize,
                  bool stream = false) noexcept;

/// Copies n bytes from src to dst; with `stream`, as copy_strided with it.
void copy_run(std::uint8_t* dst, const std::uint8_t* src, std::size_t n, bool stream) noexcept;

/// Orders this thread's non-temporal stores before what follows (an sfence on x86).
void stream_fence() noexcept;

/// Destinations at least this large are written with non-temporal stores: they do not fit the
/// caches that would keep them, and writing them through the cache costs a read of each line.
inline constexpr std::uint64_t kStreamingBytes = std::uint64_t{32} << 20;

/// Fills dst[0, n) with copies of `element` (itemsize bytes; n a multiple of it).
void fill_elements(std::uint8_t* dst,
                   std::size_t n,
                   const std::uint8_t* element,
                   std::int64_t itemsize) noexcept;

}  // namespace b2nd::detail
