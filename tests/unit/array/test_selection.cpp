// Selections: NumPy's slice and index semantics resolved against a shape, their text form, box
// checks, and reading a selection from an array (against the element-by-element reference).
#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

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
