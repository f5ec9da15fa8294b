#include "strided_copy.hpp"

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace b2nd::detail {

namespace {

/// Drops unit dimensions and merges dimensions contiguous in both buffers. Returns false when
/// the box is empty.
bool simplify(const StridedBox& in, StridedBox& out, bool use_src) noexcept {
    out.ndim = 0;
    for (int d = 0; d < in.ndim; ++d) {
        if (in.extent[d] == 0) {
            return false;
        }
        if (in.extent[d] == 1) {
            continue;
        }
        if (out.ndim > 0) {
            const int p = out.ndim - 1;
            // Merge the previous (outer) dimension into this one when stepping it equals stepping
            // over all of this one, in both buffers.
            const bool dst_ok = out.dst_stride[p] == in.dst_stride[d] * in.extent[d];
            const bool src_ok = !use_src || out.src_stride[p] == in.src_stride[d] * in.extent[d];
            if (dst_ok && src_ok) {
                out.extent[p] *= in.extent[d];
                out.dst_stride[p] = in.dst_stride[d];
                out.src_stride[p] = in.src_stride[d];
                continue;
            }
        }
        out.extent[out.ndim] = in.extent[d];
        out.src_stride[out.ndim] = in.src_stride[d];
        out.dst_stride[out.ndim] = in.dst_stride[d];
        ++out.ndim;
    }
    return true;
}

template <std::int64_t N>
void copy_elements(const std::uint8_t* src,
                   std::int64_t ss,
                   std::uint8_t* dst,
                   std::int64_t ds,
                   std::int64_t n) noexcept {
    for (std::int64_t i = 0; i < n; ++i) {
        std::memcpy(dst + i * ds, src + i * ss, N);
    }
}

/// memcpy with non-temporal stores for the 16-byte-aligned middle of the destination.
void stream_bytes(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) noexcept {
#if defined(__SSE2__)
    const std::size_t head = (16 - (reinterpret_cast<std::uintptr_t>(dst) & 15)) & 15;
    if (n < head + 64) {
        std::memcpy(dst, src, n);
        return;
    }
    std::memcpy(dst, src, head);
    std::size_t i = head;
    for (; i + 16 <= n; i += 16) {
        _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    }
    std::memcpy(dst + i, src + i, n - i);
#else
    std::memcpy(dst, src, n);
#endif
}

void copy_row(const std::uint8_t* src,
              std::int64_t ss,
              std::uint8_t* dst,
              std::int64_t ds,
              std::int64_t n,
              std::int64_t itemsize,
              bool stream) noexcept {
    if (ss == itemsize && ds == itemsize) {
        if (stream) {
            stream_bytes(dst, src, static_cast<std::size_t>(n * itemsize));
        } else {
            std::memcpy(dst, src, static_cast<std::size_t>(n * itemsize));
        }
        return;
    }
    switch (itemsize) {
        case 1:
            copy_elements<1>(src, ss, dst, ds, n);
            return;
        case 2:
            copy_elements<2>(src, ss, dst, ds, n);
            return;
        case 4:
            copy_elements<4>(src, ss, dst, ds, n);
            return;
        case 8:
            copy_elements<8>(src, ss, dst, ds, n);
            return;
        case 16:
            copy_elements<16>(src, ss, dst, ds, n);
            return;
        default:
            for (std::int64_t i = 0; i < n; ++i) {
                std::memcpy(dst + i * ds, src + i * ss, static_cast<std::size_t>(itemsize));
            }
    }
}

void fill_row(std::uint8_t* dst,
              std::int64_t ds,
              std::int64_t n,
              const std::uint8_t* pattern,
              std::int64_t itemsize,
              bool zero,
              bool stream) noexcept {
    const auto isz = static_cast<std::size_t>(itemsize);
    if (ds == itemsize) {
#if defined(__SSE2__)
        if (stream && (16 % isz == 0) && static_cast<std::size_t>(n) * isz >= 64) {
            // Sixteen bytes of the pattern, stored from a 16-byte boundary of the destination
            // (the pattern rotated to the boundary's phase).
            const std::size_t total = static_cast<std::size_t>(n) * isz;
            const std::size_t head = (16 - (reinterpret_cast<std::uintptr_t>(dst) & 15)) & 15;
            alignas(16) std::uint8_t v[16];
            for (std::size_t k = 0; k < 16; ++k) {
                v[k] = pattern[(head + k) % isz];
            }
            for (std::size_t k = 0; k < head; ++k) {
                dst[k] = pattern[k % isz];
            }
            const __m128i x = _mm_load_si128(reinterpret_cast<const __m128i*>(v));
            std::size_t i = head;
            for (; i + 16 <= total; i += 16) {
                _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), x);
            }
            for (; i < total; ++i) {
                dst[i] = pattern[i % isz];
            }
            return;
        }
#endif
        if (zero) {
            std::memset(dst, 0, static_cast<std::size_t>(n) * isz);
            return;
        }
        // Doubling copies: log2(n) memcpy calls.
        std::memcpy(dst, pattern, isz);
        std::size_t done = isz;
        const std::size_t total = static_cast<std::size_t>(n) * isz;
        while (done < total) {
            const std::size_t k = done < total - done ? done : total - done;
            std::memcpy(dst + done, dst, k);
            done += k;
        }
        return;
    }
    for (std::int64_t i = 0; i < n; ++i) {
        std::memcpy(dst + i * ds, pattern, isz);
    }
}

template <class Row>
void walk(const StridedBox& b, const std::uint8_t* src, std::uint8_t* dst, Row&& row) noexcept {
    if (b.ndim == 0) {
        row(src, 0, dst, 0, 1);
        return;
    }
    const int inner = b.ndim - 1;
    std::int64_t idx[16] = {};
    for (;;) {
        row(src, b.src_stride[inner], dst, b.dst_stride[inner], b.extent[inner]);
        int d = inner - 1;
        for (; d >= 0; --d) {
            src += b.src_stride[d];
            dst += b.dst_stride[d];
            if (++idx[d] < b.extent[d]) {
                break;
            }
            src -= b.src_stride[d] * b.extent[d];
            dst -= b.dst_stride[d] * b.extent[d];
            idx[d] = 0;
        }
        if (d < 0) {
            return;
        }
    }
}

}  // namespace

void copy_strided(const StridedBox& box,
                  const std::uint8_t* src,
                  std::uint8_t* dst,
                  std::int64_t itemsize,
                  bool stream) noexcept {
    StridedBox b;
    if (!simplify(box, b, true)) {
        return;
    }
    walk(
        b, src, dst,
        [itemsize, stream](const std::uint8_t* s, std::int64_t ss, std::uint8_t* d, std::int64_t ds,
                           std::int64_t n) { copy_row(s, ss, d, ds, n, itemsize, stream); });
}

void gather_strided(const StridedBox& box,
                    const std::uint8_t* src,
                    std::uint8_t* dst,
                    std::int64_t itemsize) noexcept {
    StridedBox b;
    if (!simplify(box, b, true)) {
        return;
    }
    constexpr std::int64_t kAhead = 8;     // rows
    constexpr std::int64_t kMaxLines = 4;  // of a row
    if (b.ndim < 2) {
        copy_strided(b, src, dst, itemsize);
        return;
    }
    const int outer = b.ndim - 2;
    const std::int64_t row_step = b.src_stride[outer];
    const std::int64_t inner = b.ndim - 1;
    const std::int64_t row_bytes = std::min<std::int64_t>(
        (b.extent[inner] - 1) * b.src_stride[inner] + itemsize, kMaxLines * 64);
    std::int64_t r = 0;  // the row's index along `outer`
    walk(b, src, dst,
         [&](const std::uint8_t* s, std::int64_t ss, std::uint8_t* d, std::int64_t ds,
             std::int64_t n) {
             if (r + kAhead < b.extent[outer] && row_step > 0) {
                 const std::uint8_t* ahead = s + kAhead * row_step;
                 for (std::int64_t off = 0; off < row_bytes; off += 64) {
                     __builtin_prefetch(ahead + off);
                 }
             }
             copy_row(s, ss, d, ds, n, itemsize, false);
             r = r + 1 == b.extent[outer] ? 0 : r + 1;
         });
}

void copy_run(std::uint8_t* dst, const std::uint8_t* src, std::size_t n, bool stream) noexcept {
    if (stream) {
        stream_bytes(dst, src, n);
    } else {
        if (n != 0) {
            std::memcpy(dst, src, n);
        }
    }
}

void stream_fence() noexcept {
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

void fill_strided(const StridedBox& box,
                  std::uint8_t* dst,
                  const std::uint8_t* pattern,
                  std::int64_t itemsize,
                  bool stream) noexcept {
    StridedBox in = box;
    for (int d = 0; d < in.ndim; ++d) {
        in.src_stride[d] = 0;
    }
    StridedBox b;
    if (!simplify(in, b, false)) {
        return;
    }
    bool zero = true;
    for (std::int64_t i = 0; i < itemsize; ++i) {
        zero = zero && pattern[i] == 0;
    }
    walk(b, dst, dst,
         [&](const std::uint8_t*, std::int64_t, std::uint8_t* d, std::int64_t ds, std::int64_t n) {
             fill_row(d, ds, n, pattern, itemsize, zero, stream);
         });
}

void fill_elements(std::uint8_t* dst,
                   std::size_t n,
                   const std::uint8_t* element,
                   std::int64_t itemsize) noexcept {
    StridedBox box;
    box.ndim = 1;
    box.extent[0] = static_cast<std::int64_t>(n) / itemsize;
    box.dst_stride[0] = itemsize;
    fill_strided(box, dst, element, itemsize);
}

}  // namespace b2nd::detail
