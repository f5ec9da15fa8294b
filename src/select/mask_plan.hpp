// Internal: a boolean mask as a selection (include/b2nd/mask.hpp). A mask is read in slabs of
// whole rows along the first axis, aligned to the blocks, so that C order over a slab is C order
// over the array and no block is decoded by two slabs; each slab's true elements are one plan:
// their points, or, where most are true, the slab's box (ops/mask.cpp keeps the true ones).
#pragma once

#include <cstdint>
#include <vector>

#include <b2nd/grid.hpp>
#include <b2nd/shape.hpp>

namespace b2nd::detail {

/// Rows [r0, r1) along the first axis (the whole array for ndim 0).
struct Slab {
    std::int64_t r0, r1;
};

/// The slabs a mask over an array of grid `g` is read in.
std::vector<Slab> row_slabs(const Grid& g);
/// Slabs of `shape` whose edges along axis 0 are edges of blocks (c0, b0: the chunk and block
/// extents along it).
std::vector<Slab> row_slabs(const Shape& shape, std::int64_t c0, std::int64_t b0);
/// The box of slab `s` of an array of `shape`.
Box slab_box(const Shape& shape, const Slab& s);
/// How many of the n mask bytes at m are true.
std::int64_t count_true(const std::uint8_t* m, std::int64_t n);
/// Appends the array coordinates of the true elements of `box` (mask bytes mb, C order) to
/// coords, in order (a points plan of them).
void append_true_coords(const Box& box, const std::uint8_t* mb, std::vector<std::int64_t>& coords);

}  // namespace b2nd::detail
