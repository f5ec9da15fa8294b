// Selections: NumPy's slice and index semantics resolved against a shape, their text form, box
// checks, and reading a selection from an array (against the element-by-element reference).
// This file also tests the deprecated orthogonal spellings (read_orthogonal, write_orthogonal),
// which stay working until they are removed.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/storage/frame.hpp>

#include "../../support/data.hpp"
#include "../../support/reference.hpp"
#include "../../support/temp_dir.hpp"

using b2nd::Box;
using b2nd::Shape;
using b2nd::Slice;
using Catch::Matchers::Contains;

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

TEST_CASE("selection: AnyArray and NDArray read what the reference slicer picks", "[array]") {
    b2nd::test::TempDir tmp;
    const std::vector<std::int16_t> v =
        b2nd::test::generate<std::int16_t>(9 * 10 * 11, [](std::size_t i) { return i * 3 % 1000; });
    const auto t = b2nd::NDArray<std::int16_t>::create_from(
        tmp / "s.b2nd", {9, 10, 11}, v, b2nd::test::chunked({4, 5, 6}, {2, 3, 4}));
    const b2nd::AnyArray& a = t.any();
    const std::vector<std::uint8_t> bytes(
        reinterpret_cast<const std::uint8_t*>(v.data()),
        reinterpret_cast<const std::uint8_t*>(v.data() + v.size()));
    for (const char* text : {"", "3", "1:8:3, ::-2", "..., 4", "-1, 2:-2, ::5", "::-1, 0, 10"}) {
        INFO(text);
        const b2nd::Selection sel = b2nd::parse_selection(text);
        const b2nd::Resolved r = b2nd::resolve(a.shape(), sel);
        const auto want =
            b2nd::test::reference_slice(bytes, a.shape(), 2, r.box.start, r.box.count, r.box.step);
        CHECK(a.read(sel) == want);
        const std::vector<std::int16_t> typed = t.read(sel);
        REQUIRE(typed.size() * 2 == want.size());
        CHECK(std::memcmp(typed.data(), want.data(), want.size()) == 0);
    }
    CHECK(a.read({2, Slice(1, 3)}) ==
          b2nd::test::reference_slice(bytes, a.shape(), 2, {2, 1, 0}, {1, 2, 11}, {1, 1, 1}));
    CHECK_THROWS_WITH(a.read(b2nd::parse_selection("9")),
                      Contains("out of range for dimension 0 of size 9"));
    CHECK_THROWS_AS(a.read({0, 0, 0, 0}), b2nd::UsageError);
}

TEST_CASE("selection: orthogonal index lists read what a loop over the lists picks", "[array]") {
    // Lists in any order, with repeats, negative indices and empty lists, over chunks and blocks
    // that pad the array's edges; uniform chunks; with and without the block cache; 1 and 2
    // threads. The reference indexes a copy of the data in memory.
    b2nd::test::TempDir tmp;
    b2nd::test::SplitMix rng(5);
    struct Geometry {
        b2nd::Shape shape, chunks, blocks;
    };
    for (const Geometry& geo : {Geometry{{37}, {10}, {3}}, Geometry{{9, 13}, {4, 5}, {3, 2}},
                                Geometry{{7, 9, 11}, {4, 5, 6}, {2, 3, 4}}}) {
        const std::int64_t n = b2nd::test::count_of(geo.shape);
        std::vector<std::int32_t> v(static_cast<std::size_t>(n));
        for (auto& x : v) {
            x = static_cast<std::int32_t>(rng.below(100000));
        }
        auto a = b2nd::NDArray<std::int32_t>::create_from(
            tmp / ("o" + std::to_string(geo.shape.size()) + ".b2nd"), geo.shape, v,
            b2nd::test::chunked(geo.chunks, geo.blocks));
        // The first chunk made uniform: a special chunk, read without decoding.
        b2nd::Box first = b2nd::Box::region(b2nd::Shape(geo.shape.size(), 0), geo.chunks);
        a.write(first, std::vector<std::int32_t>(static_cast<std::size_t>(first.size()), -3));
        std::vector<std::int64_t> cstride(geo.shape.size(), 1);
        for (std::size_t d = geo.shape.size() - 1; d > 0; --d) {
            cstride[d - 1] = cstride[d] * geo.shape[d];
        }
        const auto at = [&](const std::vector<std::int64_t>& idx) {
            bool in_first = true;
            std::int64_t flat = 0;
            for (std::size_t d = 0; d < idx.size(); ++d) {
                in_first = in_first && idx[d] < geo.chunks[d];
                flat += idx[d] * cstride[d];
            }
            return in_first ? -3 : v[static_cast<std::size_t>(flat)];
        };
        for (int round = 0; round < 40; ++round) {
            std::vector<std::vector<std::int64_t>> lists(geo.shape.size());
            for (std::size_t d = 0; d < lists.size(); ++d) {
                const std::uint64_t len = round == 0 && d == 0 ? 0 : rng.below(7);
                for (std::uint64_t k = 0; k < len; ++k) {
                    const auto e = static_cast<std::uint64_t>(geo.shape[d]);
                    lists[d].push_back(static_cast<std::int64_t>(rng.below(2 * e)) - geo.shape[d]);
                }
            }
            // The reference: C order over the lists.
            std::vector<std::int32_t> want;
            std::vector<std::size_t> k(lists.size(), 0);
            bool empty = false;
            for (const auto& l : lists) {
                empty = empty || l.empty();
            }
            while (!empty) {
                std::vector<std::int64_t> idx(lists.size());
                for (std::size_t d = 0; d < lists.size(); ++d) {
                    const std::int64_t i = lists[d][k[d]];
                    idx[d] = i < 0 ? i + geo.shape[d] : i;
                }
                want.push_back(at(idx));
                std::size_t d = lists.size();
                while (d > 0 && ++k[d - 1] == lists[d - 1].size()) {
                    k[--d] = 0;
                }
                if (d == 0) {
                    break;
                }
            }
            for (int threads : {1, 2}) {
                for (std::size_t cache : {std::size_t{0}, std::size_t{1} << 20}) {
                    INFO(b2nd::to_string(geo.shape)
                         << " round " << round << ", " << threads << " threads, cache " << cache);
                    a.any().set_nthreads(threads);
                    a.any().set_cache_bytes(cache);
                    REQUIRE(a.read_orthogonal(lists) == want);
                }
            }
        }
        // An index out of range names its axis; a missing list is a usage error.
        std::vector<std::vector<std::int64_t>> bad(geo.shape.size(), std::vector<std::int64_t>{0});
        bad.back() = {1, geo.shape.back()};
        CHECK_THROWS_WITH(a.read_orthogonal(bad),
                          Contains("index " + std::to_string(geo.shape.back()) + " on axis " +
                                   std::to_string(geo.shape.size() - 1)));
        bad.back() = {-geo.shape.back() - 1};
        CHECK_THROWS_AS(a.read_orthogonal(bad), b2nd::UsageError);
        bad.pop_back();
        CHECK_THROWS_WITH(a.read_orthogonal(bad), Contains("one index list per dimension"));
        // Lists whose product of lengths overflows 64 bits: a usage error, not a wrapped size.
        std::vector<std::vector<std::int64_t>> huge(
            geo.shape.size(), std::vector<std::int64_t>(std::size_t{1} << 22, 0));
        if (huge.size() == 3) {  // (2^22)^3 elements
            CHECK_THROWS_WITH(a.read_orthogonal(huge), Contains("is too large"));
            CHECK_THROWS_WITH(a.write_orthogonal(huge, 1), Contains("is too large"));
        }
        std::vector<std::uint8_t> small(3);
        CHECK_THROWS_AS(a.any().read_orthogonal(std::vector<std::vector<std::int64_t>>(
                                                    geo.shape.size(), std::vector<std::int64_t>{0}),
                                                small.data(), small.size()),
                        b2nd::UsageError);
    }
}

TEST_CASE("selection: orthogonal writes match a loop over the lists, last repeat wins", "[array]") {
    b2nd::test::TempDir tmp;
    b2nd::test::SplitMix rng(9);
    const b2nd::Shape shape{9, 13};
    std::vector<std::int32_t> model(9 * 13);
    for (auto& x : model) {
        x = static_cast<std::int32_t>(rng.below(1000));
    }
    auto a = b2nd::NDArray<std::int32_t>::create_from(tmp / "w.b2nd", shape, model,
                                                      b2nd::test::chunked({4, 5}, {3, 2}));
    for (int round = 0; round < 30; ++round) {
        std::vector<std::vector<std::int64_t>> lists(2);
        for (std::size_t d = 0; d < 2; ++d) {
            const std::uint64_t len = 1 + rng.below(5);
            for (std::uint64_t k = 0; k < len; ++k) {
                const auto e = static_cast<std::uint64_t>(shape[d]);
                lists[d].push_back(static_cast<std::int64_t>(rng.below(2 * e)) - shape[d]);
            }
        }
        const std::size_t n = lists[0].size() * lists[1].size();
        const bool scalar = round % 3 == 0;
        std::vector<std::int32_t> data(scalar ? 1 : n);
        for (auto& x : data) {
            x = 5000 + static_cast<std::int32_t>(rng.below(1000));
        }
        // The reference: C order over the lists, so the last of repeated indices wins.
        std::size_t flat = 0;
        for (std::int64_t i : lists[0]) {
            for (std::int64_t j : lists[1]) {
                const std::int64_t r = i < 0 ? i + 9 : i, c = j < 0 ? j + 13 : j;
                model[static_cast<std::size_t>(r * 13 + c)] = data[scalar ? 0 : flat];
                ++flat;
            }
        }
        // Chunks the selection does not touch keep their bytes where they were.
        std::vector<bool> touched(3 * 3, false);
        for (std::int64_t i : lists[0]) {
            for (std::int64_t j : lists[1]) {
                touched[static_cast<std::size_t>(((i + 9) % 9 / 4) * 3 + (j + 13) % 13 / 5)] = true;
            }
        }
        std::vector<std::uint64_t> before(9);
        {
            const auto f = b2nd::storage::Frame::open(tmp / "w.b2nd");
            for (std::int64_t ci = 0; ci < 9; ++ci) {
                before[static_cast<std::size_t>(ci)] = f.chunk(ci).offset;
            }
        }
        a.any().set_nthreads(round % 2 + 1);
        INFO("round " << round);
        if (scalar) {
            a.write_orthogonal(lists, data[0]);
        } else {
            a.write_orthogonal(lists, data);
        }
        REQUIRE(a.read() == model);
        const auto f = b2nd::storage::Frame::open(tmp / "w.b2nd");
        for (std::int64_t ci = 0; ci < 9; ++ci) {
            if (!touched[static_cast<std::size_t>(ci)]) {
                CHECK(f.chunk(ci).offset == before[static_cast<std::size_t>(ci)]);
            }
        }
    }
    REQUIRE(b2nd::open<std::int32_t>(tmp / "w.b2nd").read() == model);
    // Wrong amounts of data, indices out of range, read-only arrays: usage errors, nothing
    // written.
    CHECK_THROWS_AS(a.write_orthogonal({{0, 1}, {2, 3}}, std::vector<std::int32_t>(3, 0)),
                    b2nd::UsageError);
    CHECK_THROWS_WITH(a.write_orthogonal({{0, 9}, {2}}, 7), Contains("index 9 on axis 0"));
    auto ro = b2nd::open<std::int32_t>(tmp / "w.b2nd");
    CHECK_THROWS_AS(ro.write_orthogonal({{0}, {0}}, 7), b2nd::UsageError);
    CHECK(a.read() == model);
}

TEST_CASE("selection: point writes, in order (the last of repeated points wins)", "[array]") {
    b2nd::test::TempDir tmp;
    b2nd::test::SplitMix rng(21);
    const b2nd::Shape shape{7, 9, 11};
    std::vector<std::int16_t> model(7 * 9 * 11);
    for (auto& x : model) {
        x = static_cast<std::int16_t>(rng.below(1000));
    }
    auto a = b2nd::NDArray<std::int16_t>::create_from(tmp / "p.b2nd", shape, model,
                                                      b2nd::test::chunked({4, 5, 6}, {2, 3, 4}));
    for (int round = 0; round < 20; ++round) {
        std::vector<b2nd::Shape> points;
        const std::uint64_t n = rng.below(12);
        for (std::uint64_t k = 0; k < n; ++k) {
            if (k > 0 && rng.below(4) == 0) {
                points.push_back(points[rng.below(k)]);  // a repeated point
                continue;
            }
            points.push_back({static_cast<std::int64_t>(rng.below(7)),
                              static_cast<std::int64_t>(rng.below(9)),
                              static_cast<std::int64_t>(rng.below(11))});
        }
        const bool scalar = round % 4 == 0;
        std::vector<std::int16_t> data(scalar ? 1 : points.size());
        for (auto& x : data) {
            x = static_cast<std::int16_t>(2000 + rng.below(1000));
        }
        std::vector<bool> touched(2 * 2 * 2, false);
        for (std::size_t k = 0; k < points.size(); ++k) {
            const b2nd::Shape& p = points[k];
            model[static_cast<std::size_t>((p[0] * 9 + p[1]) * 11 + p[2])] = data[scalar ? 0 : k];
            touched[static_cast<std::size_t>((p[0] / 4 * 2 + p[1] / 5) * 2 + p[2] / 6)] = true;
        }
        std::vector<std::uint64_t> before(8);
        {
            const auto f = b2nd::storage::Frame::open(tmp / "p.b2nd");
            for (std::int64_t ci = 0; ci < 8; ++ci) {
                before[static_cast<std::size_t>(ci)] = f.chunk(ci).offset;
            }
        }
        INFO("round " << round << ", " << points.size() << " points");
        a.any().set_nthreads(round % 2 + 1);
        if (scalar) {
            a.write_points(points, data[0]);
        } else {
            a.write_points(points, data);
        }
        REQUIRE(a.read() == model);
        const auto f = b2nd::storage::Frame::open(tmp / "p.b2nd");
        for (std::int64_t ci = 0; ci < 8; ++ci) {
            if (!touched[static_cast<std::size_t>(ci)]) {
                CHECK(f.chunk(ci).offset == before[static_cast<std::size_t>(ci)]);
            }
        }
    }
    CHECK_THROWS_WITH(a.write_points({{0, 0, 0}, {7, 0, 0}}, std::int16_t{1}),
                      Contains("point 1 (7, 0, 0): index 7 on axis 0 is out of range"));
    CHECK_THROWS_AS(a.write_points({{0, 0}}, std::int16_t{1}), b2nd::UsageError);
    CHECK_THROWS_AS(a.write_points({{0, 0, 0}, {1, 1, 1}}, std::vector<std::int16_t>(3, 1)),
                    b2nd::UsageError);
    CHECK(a.read() == model);
    CHECK(b2nd::open<std::int16_t>(tmp / "p.b2nd").read() == model);
}
