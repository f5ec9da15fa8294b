// Grid arithmetic and selections, checked against direct definitions.
#include <catch2/catch.hpp>

#include <b2nd/error.hpp>
#include <b2nd/grid.hpp>
#include <b2nd/params.hpp>
#include <b2nd/selection.hpp>

using b2nd::Box;
using b2nd::Grid;
using b2nd::Shape;
using b2nd::Slice;
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

TEST_CASE("selection: Python slice semantics", "[array]") {
    const Shape shape{10};
    auto one = [&](Slice s) { return b2nd::resolve(shape, {s}).box; };
    Box b = one(Slice(2, 8, 3));
    CHECK(b.start == Shape{2});
    CHECK(b.count == Shape{2});  // 2, 5
    b = one(Slice({}, {}, -1));
    CHECK(b.start == Shape{9});
    CHECK(b.count == Shape{10});
    b = one(Slice(-3, {}));
    CHECK(b.start == Shape{7});
    CHECK(b.count == Shape{3});
    b = one(Slice(8, 2, -2));  // 8, 6, 4
    CHECK(b.start == Shape{8});
    CHECK(b.count == Shape{3});
    CHECK(b.step == Shape{-2});
    b = one(Slice(5, 100));
    CHECK(b.count == Shape{5});
    b = one(Slice(7, 3));
    CHECK(b.count == Shape{0});
    b = one(Slice(-100, 3));
    CHECK(b.count == Shape{3});
    b = one(Slice(100, {}, -1));
    CHECK(b.start == Shape{9});
    CHECK_THROWS_AS(one(Slice(0, 5, 0)), b2nd::UsageError);
}

TEST_CASE("selection: integers drop dimensions, ellipsis fills", "[array]") {
    const Shape shape{4, 5, 6};
    b2nd::Resolved r = b2nd::resolve(shape, {1, b2nd::DimIndex::ellipsis(), -1});
    CHECK(r.shape == Shape{5});
    CHECK(r.box.start == Shape{1, 0, 5});
    CHECK(r.box.count == Shape{1, 5, 1});
    r = b2nd::resolve(shape, {2});
    CHECK(r.shape == Shape{5, 6});
    CHECK_THROWS_WITH(b2nd::resolve(shape, {4}),
                      Contains("out of range for dimension 0 of size 4"));
    CHECK_THROWS_WITH(b2nd::resolve(shape, {0, 0, 0, 0}), Contains("too many indices"));
}

TEST_CASE("selection: text form", "[array]") {
    const Shape shape{10, 20, 30};
    const b2nd::Resolved r = b2nd::resolve(shape, b2nd::parse_selection(" 0:10 , 5, ::-2"));
    CHECK(r.shape == Shape{10, 15});
    CHECK(r.box.start == Shape{0, 5, 29});
    CHECK(r.box.step == Shape{1, 1, -2});
    CHECK(b2nd::parse_selection("").empty());
    CHECK(b2nd::resolve(shape, b2nd::parse_selection("...,3")).shape == Shape{10, 20});
    CHECK_THROWS_AS(b2nd::parse_selection("1:2:3:4"), b2nd::UsageError);
    CHECK_THROWS_AS(b2nd::parse_selection("a"), b2nd::UsageError);
    CHECK_THROWS_AS(b2nd::parse_selection("1,,2"), b2nd::UsageError);
    CHECK_THROWS_AS(b2nd::parse_selection("::0"), b2nd::UsageError);
    CHECK_THROWS_AS(b2nd::parse_selection("99999999999999999999"), b2nd::UsageError);
}

TEST_CASE("selection: check_box catches every out-of-range box", "[array]") {
    const Shape shape{10, 10};
    CHECK(b2nd::check_box(shape, Box::region({0, 0}, {10, 10})).empty());
    CHECK_FALSE(b2nd::check_box(shape, Box::region({0, 0}, {11, 10})).empty());
    CHECK_FALSE(b2nd::check_box(shape, Box::region({-1, 0}, {1, 1})).empty());
    CHECK_FALSE(b2nd::check_box(shape, Box::region({0, 0}, {-1, 1})).empty());
    CHECK_FALSE(b2nd::check_box(shape, Box::region({0}, {1})).empty());
    Box b = Box::region({9, 0}, {5, 1});
    b.step = {-2, 1};
    CHECK(b2nd::check_box(shape, b).empty());  // 9, 7, 5, 3, 1
    b.count[0] = 6;
    CHECK_FALSE(b2nd::check_box(shape, b).empty());
    b.count[0] = INT64_MAX;
    b.step[0] = INT64_MAX;
    CHECK_FALSE(b2nd::check_box(shape, b).empty());
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

TEST_CASE("selection: new axes and explicit strided ranges", "[array]") {
    const Shape shape{4, 5, 6};
    b2nd::Resolved r =
        b2nd::resolve(shape, {b2nd::DimIndex::newaxis(), 1, b2nd::DimIndex::newaxis(),
                              b2nd::DimIndex::strided(4, 2, -3)});
    CHECK(r.shape == Shape{1, 1, 2, 6});
    CHECK(r.dims == std::vector<int>{-1, -1, 1, 2});
    CHECK(r.box.start == Shape{1, 4, 0});
    CHECK(r.box.count == Shape{1, 2, 6});
    CHECK(r.box.step == Shape{1, -3, 1});
    CHECK(b2nd::resolve(shape, b2nd::parse_selection("None, ..., newaxis")).shape ==
          Shape{1, 4, 5, 6, 1});
    CHECK_THROWS_AS(b2nd::resolve(shape, {b2nd::DimIndex::strided(4, 3, 1)}), b2nd::UsageError);
    CHECK_THROWS_AS(b2nd::resolve(shape, {b2nd::DimIndex::strided(0, 1, 0)}), b2nd::UsageError);
    CHECK(b2nd::resolve(shape, {b2nd::DimIndex::strided(0, 0, 1)}).shape == Shape{0, 5, 6});
}
