// Grid arithmetic and C-order index helpers, checked against direct definitions; automatic chunk
// and block shapes.
#include <catch2/catch.hpp>

#include <b2nd/error.hpp>
#include <b2nd/grid.hpp>
#include <b2nd/params.hpp>
#include <b2nd/shape.hpp>

using b2nd::Box;
using b2nd::Grid;
using b2nd::Shape;
using Catch::Matchers::Contains;

TEST_CASE("grid: padded chunks and counts", "[array]") {
    const Grid g({10, 9}, {16, 16}, {4, 16}, 4);  // corpus geom_chunk_gt_shape
    CHECK(g.ext_chunk_shape() == Shape{16, 16});
    CHECK(g.nchunks() == 1);
    CHECK(g.chunk_nbytes() == 1024);
    CHECK(g.block_nbytes() == 256);
    CHECK(g.nblocks() == 4);
    CHECK(g.chunk_extent(0, 0) == 10);

    const Grid h({7, 11, 11}, {6, 5, 5}, {3, 3, 3}, 1);
    CHECK(h.ext_chunk_shape() == Shape{6, 6, 6});
    CHECK(h.chunks_in(0) == 2);
    CHECK(h.chunks_in(1) == 3);
    CHECK(h.blocks_in(2) == 2);
    CHECK(h.nchunks() == 18);
    CHECK(h.chunk_extent(1, 2) == 1);
    CHECK(h.size() == 7 * 11 * 11);
}

TEST_CASE("grid: locate agrees with the definition of the padded layout", "[array]") {
    const Grid g({13, 7, 9}, {5, 4, 9}, {2, 3, 4}, 2);
    for (std::int64_t i = 0; i < 13; ++i) {
        for (std::int64_t j = 0; j < 7; ++j) {
            for (std::int64_t k = 0; k < 9; ++k) {
                const std::int64_t idx[] = {i, j, k};
                const Grid::Location l = g.locate(idx);
                const std::int64_t cc[] = {i / 5, j / 4, k / 9};
                CHECK(l.chunk == g.chunk_index(cc));
                // Position in the chunk, block of it and offset in the block.
                const std::int64_t p[] = {i % 5, j % 4, k % 9};
                const std::int64_t block =
                    ((p[0] / 2) * g.blocks_in(1) + p[1] / 3) * g.blocks_in(2) + p[2] / 4;
                const std::int64_t offset = ((p[0] % 2) * 3 + p[1] % 3) * 4 + p[2] % 4;
                CHECK(l.block == block);
                CHECK(l.offset == offset);
            }
        }
    }
    std::int64_t c[3];
    for (std::int64_t k = 0; k < g.nchunks(); ++k) {
        g.chunk_coords(k, c);
        CHECK(g.chunk_index(c) == k);
    }
}

TEST_CASE("grid: ndim 0 and empty arrays", "[array]") {
    const Grid scalar({}, {}, {}, 8);
    CHECK(scalar.size() == 1);
    CHECK(scalar.nchunks() == 1);
    CHECK(scalar.chunk_nbytes() == 8);
    const Grid empty({5, 0, 4}, {3, 2, 4}, {2, 2, 2}, 4);
    CHECK(empty.size() == 0);
    CHECK(empty.nchunks() == 0);
    CHECK(empty.chunk_nbytes() == 128);
}

TEST_CASE("grid: invalid geometries are refused with a reason", "[array]") {
    CHECK_THAT(Grid::check({4}, {2, 2}, {1, 1}, 1), Contains("differ in ndim"));
    CHECK_THAT(Grid::check({-1}, {2}, {1}, 1), Contains("negative"));
    CHECK_THAT(Grid::check({8}, {2}, {4}, 1), Contains("exceeds chunk shape"));
    CHECK_THAT(Grid::check({8}, {0}, {0}, 1), Contains("zero chunk or block size"));
    CHECK_THAT(Grid::check({1 << 20, 1 << 20}, {1 << 16, 1 << 16}, {1, 1}, 1),
               Contains("too large"));
    CHECK_THAT(Grid::check({INT64_MAX, 4}, {1, 1}, {1, 1}, 1), Contains("overflows"));
    CHECK_THAT(Grid::check({1000}, {1000}, {10}, 0), Contains("item size"));
    CHECK_THAT(Grid::check(Shape(17, 1), Shape(17, 1), Shape(17, 1), 1), Contains("ndim 17"));
    CHECK(Grid::check({0}, {0}, {0}, 1).empty());  // empty dimensions may have empty chunks
    CHECK_THAT(Grid::check({5, 0}, {0, 1}, {0, 1}, 1),
               Contains("zero chunk or block size in dimension 0"));
    CHECK_THAT(Grid::check({0}, {3}, {0}, 1), Contains("zero chunk or block size"));
    CHECK_THROWS_AS(Grid({8}, {2}, {4}, 1), b2nd::UsageError);
}

TEST_CASE("auto chunk and block shapes fit the array and the targets", "[array]") {
    const auto [chunks, blocks] = b2nd::auto_chunk_block_shapes({512, 512, 512}, 4);
    REQUIRE(chunks.size() == 3);
    std::int64_t citems = 1, bitems = 1;
    for (std::size_t d = 0; d < 3; ++d) {
        CHECK(chunks[d] <= 512);
        CHECK(blocks[d] <= chunks[d]);
        citems *= chunks[d];
        bitems *= blocks[d];
    }
    CHECK(citems * 4 <= (std::int64_t{8} << 20));
    CHECK(bitems * 4 <= (std::int64_t{1} << 20));
    CHECK(Grid::check({512, 512, 512}, chunks, blocks, 4).empty());
    const auto small = b2nd::auto_chunk_block_shapes({3, 0}, 8);
    CHECK(small.first == Shape{3, 1});
    CHECK(Grid::check({3, 0}, small.first, small.second, 8).empty());
}

TEST_CASE("grid: chunk_box and block_key agree with locate", "[array]") {
    const Grid g({13, 7, 9}, {5, 4, 9}, {2, 3, 4}, 2);
    std::vector<int> seen(static_cast<std::size_t>(g.nchunks() * g.nblocks()), 0);
    for (std::int64_t ci = 0; ci < g.nchunks(); ++ci) {
        const Box b = g.chunk_box(ci);
        CHECK(b.step == Shape{1, 1, 1});
        // Every element of the box is in chunk ci, and the box is all of chunk ci's elements.
        std::int64_t n = 0;
        for (std::int64_t i = 0; i < 13; ++i) {
            for (std::int64_t j = 0; j < 7; ++j) {
                for (std::int64_t k = 0; k < 9; ++k) {
                    const std::int64_t idx[] = {i, j, k};
                    const Grid::Location l = g.locate(idx);
                    const bool inside = i >= b.start[0] && i < b.start[0] + b.count[0] &&
                                        j >= b.start[1] && j < b.start[1] + b.count[1] &&
                                        k >= b.start[2] && k < b.start[2] + b.count[2];
                    REQUIRE(inside == (l.chunk == ci));
                    if (inside) {
                        ++n;
                        const std::uint64_t key = g.block_key(ci, l.block);
                        REQUIRE(key < seen.size());
                        seen[key] = 1;
                    }
                }
            }
        }
        CHECK(n == b.size());
    }
    // Keys of different (chunk, block) pairs differ: every block holding valid elements got its
    // own key. Blocks with valid elements, per chunk coordinate: rows 5, 5, 3 in blocks of 2 ->
    // 3, 3, 2; columns 4, 3 in blocks of 3 -> 2, 1; depth 9 in blocks of 4 -> 3.
    std::int64_t used = 0;
    for (int v : seen) {
        used += v;
    }
    CHECK(used == (3 + 3 + 2) * (2 + 1) * 3);
}

TEST_CASE("shape: c_strides and next_index walk C order", "[array]") {
    const Shape extent{3, 1, 4, 2};
    const Shape s = b2nd::c_strides(extent, 8);
    CHECK(s == Shape{64, 64, 16, 8});
    Shape idx(4, 0);
    std::int64_t flat = 0;
    do {
        // The flat position by definition, and through the strides.
        const std::int64_t want = ((idx[0] * 1 + idx[1]) * 4 + idx[2]) * 2 + idx[3];
        REQUIRE(flat == want);
        REQUIRE(idx[0] * s[0] + idx[1] * s[1] + idx[2] * s[2] + idx[3] * s[3] == 8 * want);
        ++flat;
    } while (b2nd::next_index(idx.data(), extent.data(), idx.size()));
    CHECK(flat == 3 * 1 * 4 * 2);
    CHECK(idx == Shape{0, 0, 0, 0});
    // ndim 0: one position; an empty extent: the walk ends at once.
    CHECK_FALSE(b2nd::next_index(idx.data(), extent.data(), 0));
    CHECK(b2nd::c_strides(Shape{}, 4).empty());
}
