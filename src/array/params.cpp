#include <algorithm>

#include <b2nd/params.hpp>

#include <unistd.h>

namespace b2nd {

namespace {

/// Halves the largest dimension (the first of equals) until at most `target` items remain.
Shape shrink(Shape s, std::int64_t target) {
    target = std::max<std::int64_t>(target, 1);
    for (;;) {
        std::int64_t items = 1;
        bool over = false;
        for (std::int64_t v : s) {
            over = over || __builtin_mul_overflow(items, v, &items);
        }
        if (!over && items <= target) {
            return s;
        }
        const auto it = std::max_element(s.begin(), s.end());
        *it = (*it + 1) / 2;
    }
}

}  // namespace

std::pair<Shape, Shape> auto_chunk_block_shapes(const Shape& shape, std::int64_t itemsize) {
    long l2 = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l2 <= 0) {
        l2 = 1 << 20;
    }
    const std::int64_t block_bytes = std::clamp<std::int64_t>(l2 / 4, 16 << 10, 1 << 20);
    const std::int64_t chunk_bytes = std::max<std::int64_t>(4 << 20, 4 * block_bytes);
    const std::int64_t isz = std::max<std::int64_t>(itemsize, 1);
    Shape start = shape;
    for (std::int64_t& v : start) {
        v = std::max<std::int64_t>(v, 1);
    }
    Shape chunks = shrink(start, chunk_bytes / isz);
    Shape blocks = shrink(chunks, block_bytes / isz);
    return {chunks, blocks};
}

}  // namespace b2nd
