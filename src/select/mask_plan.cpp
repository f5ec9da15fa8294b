// Masks planned in slabs (mask_plan.hpp).
#include "mask_plan.hpp"

#include <algorithm>
#include <cstring>

namespace b2nd::detail {

namespace {

/// Elements of mask per slab, about (a slab holds at least one row of blocks).
constexpr std::int64_t kSlabElements = std::int64_t{4} << 20;

}  // namespace

std::vector<Slab> row_slabs(const Shape& shape, std::int64_t c0, std::int64_t b0) {
    if (shape.empty()) {
        return {{0, 1}};
    }
    const std::int64_t n0 = shape[0];
    std::int64_t row = 1;
    for (std::size_t d = 1; d < shape.size(); ++d) {
        row *= shape[d];
    }
    if (row == 0 || n0 == 0) {
        return {};
    }
    const std::int64_t rows = std::max<std::int64_t>(1, kSlabElements / row);
    // The first block boundary along axis 0 after r (a chunk's edge, or a block's in a chunk).
    auto next_boundary = [&](std::int64_t r) {
        const std::int64_t c = r / c0;
        const std::int64_t end = std::min((c + 1) * c0, n0);
        return std::min(end, c * c0 + ((r - c * c0) / b0 + 1) * b0);
    };
    // The last block boundary at or before r.
    auto boundary_before = [&](std::int64_t r) {
        if (r >= n0) {
            return n0;
        }
        const std::int64_t c = r / c0;
        return c * c0 + ((r - c * c0) / b0) * b0;
    };
    std::vector<Slab> slabs;
    for (std::int64_t r0 = 0; r0 < n0;) {
        std::int64_t r1 = boundary_before(r0 + rows);
        if (r1 <= r0) {
            r1 = next_boundary(r0);
        }
        slabs.push_back({r0, r1});
        r0 = r1;
    }
    return slabs;
}

std::vector<Slab> row_slabs(const Grid& g) {
    return g.ndim() == 0 ? row_slabs(g.shape(), 1, 1)
                         : row_slabs(g.shape(), g.chunk_shape()[0], g.block_shape()[0]);
}

Box slab_box(const Shape& shape, const Slab& s) {
    Box b = Box::region(Shape(shape.size(), 0), shape);
    if (!shape.empty()) {
        b.start[0] = s.r0;
        b.count[0] = s.r1 - s.r0;
    }
    return b;
}

std::int64_t count_true(const std::uint8_t* m, std::int64_t n) {
    std::int64_t c = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        c += m[i] != 0 ? 1 : 0;
    }
    return c;
}

/// Appends the array coordinates of the true elements of `box` (mask bytes mb, C order) to
/// coords, in order: zero 8-byte words of the mask are skipped and only true positions are
/// unravelled.
void append_true_coords(const Box& box, const std::uint8_t* mb, std::vector<std::int64_t>& coords) {
    const std::int64_t n = box.size();
    const auto nd = static_cast<std::size_t>(box.ndim());
    for (std::int64_t i = 0; i < n;) {
        if (i + 8 <= n) {
            std::uint64_t word;
            std::memcpy(&word, mb + i, 8);
            if (word == 0) {
                i += 8;
                continue;
            }
        }
        if (mb[i] != 0) {
            const std::size_t at = coords.size();
            coords.resize(at + nd);
            std::int64_t rest = i;
            for (std::size_t d = nd; d-- > 0;) {
                coords[at + d] = box.start[d] + rest % box.count[d];
                rest /= box.count[d];
            }
        }
        ++i;
    }
}

}  // namespace b2nd::detail
