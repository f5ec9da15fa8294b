// The selection pipeline (src/select/plan.hpp): every kind of selection is one SelectionPlan,
// and the engine reads and writes plans and nothing else. Checked here against a model computed
// independently: part of each element (as a field of a structured dtype will be) through every
// kind of plan, a selection kind that exists only in this file, and plans that no longer fit.
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "engine/engine_access.hpp"
#include "select/plan.hpp"
#include "support/temp_dir.hpp"

using b2nd::AnyArray;
using b2nd::Box;
using b2nd::EngineAccess;
using b2nd::Shape;
using b2nd::detail::ElementPart;
using b2nd::detail::SelectionPlan;

namespace {

constexpr std::int64_t kRows = 10, kCols = 13, kItem = 12;  // [('a', '<i4'), ('b', '<f8')]

/// Byte j of element (r, c) of the model.
std::uint8_t model_byte(std::int64_t r, std::int64_t c, std::int64_t j) {
    return static_cast<std::uint8_t>((r * 31 + c * 7 + j * 13) % 251);
}

/// A 10 x 13 array of 12-byte records over chunks of 4 x 5 and blocks of 2 x 3 (edge chunks and
/// blocks included), filled from the model.
AnyArray make_array(const std::string& path) {
    b2nd::CreateOptions o;
    o.chunk_shape = {4, 5};
    o.block_shape = {2, 3};
    AnyArray a = AnyArray::create(path, b2nd::DType::parse("[('a', '<i4'), ('b', '<f8')]"),
                                  {kRows, kCols}, o);
    std::vector<std::uint8_t> all(static_cast<std::size_t>(kRows * kCols * kItem));
    for (std::int64_t r = 0; r < kRows; ++r) {
        for (std::int64_t c = 0; c < kCols; ++c) {
            for (std::int64_t j = 0; j < kItem; ++j) {
                all[static_cast<std::size_t>((r * kCols + c) * kItem + j)] = model_byte(r, c, j);
            }
        }
    }
    a.write(Box::whole({kRows, kCols}), all);
    return a;
}

/// The model's bytes [part.offset, + part.width) of each of `cells`, in order.
std::vector<std::uint8_t> model_parts(
    const std::vector<std::pair<std::int64_t, std::int64_t>>& cells, const ElementPart& part) {
    std::vector<std::uint8_t> out;
    for (const auto& [r, c] : cells) {
        for (std::int64_t j = part.offset; j < part.offset + part.width; ++j) {
            out.push_back(model_byte(r, c, j));
        }
    }
    return out;
}

std::vector<std::uint8_t> read_plan(const AnyArray& a, const SelectionPlan& p) {
    std::vector<std::uint8_t> out(
        static_cast<std::size_t>(p.size() * static_cast<std::uint64_t>(p.element_bytes(kItem))));
    EngineAccess::core(a).read(p, out.data());
    return out;
}

/// A selection kind that exists only here: every k-th element of the flat (C-order) index range
/// [first, last), planned as points. Nothing else is needed to read and write it.
SelectionPlan every_kth(const Shape& shape, std::int64_t first, std::int64_t last, std::int64_t k) {
    auto coords = std::make_shared<std::vector<std::int64_t>>();
    for (std::int64_t f = first; f < last; f += k) {
        std::int64_t rest = f;
        std::vector<std::int64_t> idx(shape.size());
        for (std::size_t d = shape.size(); d-- > 0;) {
            idx[d] = rest % shape[d];
            rest /= shape[d];
        }
        coords->insert(coords->end(), idx.begin(), idx.end());
    }
    const std::int64_t* data = coords->data();
    const std::size_t n = coords->size() / shape.size();
    return SelectionPlan::of_points(data, n, static_cast<int>(shape.size()), std::move(coords));
}

}  // namespace

TEST_CASE("plans: part of each element is read through boxes, index lists and points",
          "[array][plan]") {
    b2nd::test::TempDir dir;
    const AnyArray a = make_array(dir / "rec.b2nd");
    const ElementPart b{4, 8};  // field 'b'
    SECTION("a strided box walking one axis backwards") {
        Box box{{8, 1}, {4, 4}, {-2, 3}};  // rows 8, 6, 4, 2; columns 1, 4, 7, 10
        std::vector<std::pair<std::int64_t, std::int64_t>> cells;
        for (std::int64_t r : {8, 6, 4, 2}) {
            for (std::int64_t c : {1, 4, 7, 10}) {
                cells.emplace_back(r, c);
            }
        }
        CHECK(read_plan(a, SelectionPlan::of_box(box).with_part(b, kItem)) ==
              model_parts(cells, b));
        CHECK(read_plan(a, SelectionPlan::of_box(box).with_part({0, 4}, kItem)) ==
              model_parts(cells, {0, 4}));
    }
    SECTION("index lists, with repeats and negative indices") {
        const std::vector<std::vector<std::int64_t>> lists{{9, 0, -1}, {12, 5, 5}};
        std::vector<std::pair<std::int64_t, std::int64_t>> cells;
        for (std::int64_t r : {9, 0, 9}) {
            for (std::int64_t c : {12, 5, 5}) {
                cells.emplace_back(r, c);
            }
        }
        CHECK(read_plan(a, SelectionPlan::of_lists(lists).with_part(b, kItem)) ==
              model_parts(cells, b));
    }
    SECTION("points") {
        const std::vector<std::int64_t> coords{3, 3, 0, 12, 9, 0, 3, 3};
        CHECK(
            read_plan(a, SelectionPlan::of_points(coords.data(), 4, 2).with_part({2, 5}, kItem)) ==
            model_parts({{3, 3}, {0, 12}, {9, 0}, {3, 3}}, {2, 5}));
    }
    SECTION("a chunk stored as one repeated element (not decoded)") {
        b2nd::test::TempDir d2;
        AnyArray u = make_array(d2 / "uniform.b2nd");
        std::vector<std::uint8_t> rec(kItem);
        std::iota(rec.begin(), rec.end(), std::uint8_t{40});
        std::vector<std::uint8_t> same;
        for (int i = 0; i < 20; ++i) {
            same.insert(same.end(), rec.begin(), rec.end());
        }
        u.write(Box::region({4, 5}, {4, 5}), same);                     // chunk (1, 1), whole
        REQUIRE(EngineAccess::core(u).stored_chunk(1 * 3 + 1).second);  // stored uniform
        const std::vector<std::uint8_t> got =
            read_plan(u, SelectionPlan::of_box(Box::region({5, 6}, {2, 3})).with_part(b, kItem));
        std::vector<std::uint8_t> want;
        for (int i = 0; i < 6; ++i) {
            want.insert(want.end(), rec.begin() + 4, rec.end());
        }
        CHECK(got == want);
    }
    SECTION("a part that is not inside an element is refused") {
        CHECK_THROWS_AS(SelectionPlan::of_box(Box::whole({kRows, kCols})).with_part({8, 5}, kItem),
                        b2nd::UsageError);
        // An empty part is not the whole element (it would read past the element's end).
        CHECK_THROWS_AS(SelectionPlan::of_box(Box::whole({kRows, kCols})).with_part({4, 0}, kItem),
                        b2nd::UsageError);
        CHECK_THROWS_AS(SelectionPlan::of_box(Box::whole({kRows, kCols})).with_part({12, 0}, kItem),
                        b2nd::UsageError);
    }
}

TEST_CASE("plans: writing part of each element keeps the other bytes", "[array][plan]") {
    b2nd::test::TempDir dir;
    AnyArray a = make_array(dir / "rec.b2nd");
    const ElementPart b{4, 8};
    std::vector<std::vector<std::uint8_t>> want(static_cast<std::size_t>(kRows * kCols));
    for (std::int64_t r = 0; r < kRows; ++r) {
        for (std::int64_t c = 0; c < kCols; ++c) {
            for (std::int64_t j = 0; j < kItem; ++j) {
                want[static_cast<std::size_t>(r * kCols + c)].push_back(model_byte(r, c, j));
            }
        }
    }
    const auto set_b = [&](std::int64_t r, std::int64_t c, std::uint8_t v) {
        for (std::int64_t j = 4; j < 12; ++j) {
            want[static_cast<std::size_t>(r * kCols + c)][static_cast<std::size_t>(j)] = v;
        }
    };
    // A whole chunk and a bit (chunks are rebuilt from their old bytes, never made fresh).
    {
        const Box box = Box::region({0, 0}, {5, 6});
        std::vector<std::uint8_t> data(static_cast<std::size_t>(box.size() * 8), 0xa1);
        EngineAccess::writable_core(a).write(SelectionPlan::of_box(box).with_part(b, kItem),
                                             data.data());
        for (std::int64_t r = 0; r < 5; ++r) {
            for (std::int64_t c = 0; c < 6; ++c) {
                set_b(r, c, 0xa1);
            }
        }
    }
    // Index lists and points, one value for all (zero strides).
    {
        const std::uint8_t v[8] = {0xb2, 0xb2, 0xb2, 0xb2, 0xb2, 0xb2, 0xb2, 0xb2};
        const std::vector<std::int64_t> zero{0, 0};
        EngineAccess::writable_core(a).write(
            SelectionPlan::of_lists({{7, 9}, {0, 12}}).with_part(b, kItem), v, zero.data());
        for (std::int64_t r : {7, 9}) {
            for (std::int64_t c : {0, 12}) {
                set_b(r, c, 0xb2);
            }
        }
        const std::vector<std::int64_t> coords{6, 6, 2, 11};
        const std::vector<std::uint8_t> two{0xc3, 0xc3, 0xc3, 0xc3, 0xc3, 0xc3, 0xc3, 0xc3,
                                            0xd4, 0xd4, 0xd4, 0xd4, 0xd4, 0xd4, 0xd4, 0xd4};
        EngineAccess::writable_core(a).write(
            SelectionPlan::of_points(coords.data(), 2, 2).with_part(b, kItem), two.data());
        set_b(6, 6, 0xc3);
        set_b(2, 11, 0xd4);
    }
    const std::vector<std::uint8_t> got = AnyArray::open(dir / "rec.b2nd").read();
    std::vector<std::uint8_t> flat;
    for (const auto& e : want) {
        flat.insert(flat.end(), e.begin(), e.end());
    }
    CHECK(got == flat);
}

TEST_CASE(
    "plans: a selection kind defined outside the library reads and writes through the "
    "one pipeline",
    "[array][plan]") {
    b2nd::test::TempDir dir;
    AnyArray a = make_array(dir / "rec.b2nd");
    const SelectionPlan p = every_kth({kRows, kCols}, 5, 120, 7);
    REQUIRE(p.size() == 17);
    std::vector<std::pair<std::int64_t, std::int64_t>> cells;
    for (std::int64_t f = 5; f < 120; f += 7) {
        cells.emplace_back(f / kCols, f % kCols);
    }
    CHECK(read_plan(a, p) == model_parts(cells, {0, kItem}));
    CHECK(read_plan(a, p.with_part({0, 4}, kItem)) == model_parts(cells, {0, 4}));
    // Written with one element for all: exactly those elements change.
    std::vector<std::uint8_t> one(kItem, 0x5a);
    const std::int64_t zero = 0;
    EngineAccess::writable_core(a).write(p, one.data(), &zero);
    const std::vector<std::uint8_t> got = a.read();
    for (std::int64_t f = 0; f < kRows * kCols; ++f) {
        const bool hit = f >= 5 && f < 120 && (f - 5) % 7 == 0;
        for (std::int64_t j = 0; j < kItem; ++j) {
            INFO("element " << f << " byte " << j);
            CHECK(got[static_cast<std::size_t>(f * kItem + j)] ==
                  (hit ? 0x5a : model_byte(f / kCols, f % kCols, j)));
        }
    }
}

TEST_CASE("plans: a plan that no longer fits the array is refused by name", "[array][plan]") {
    b2nd::test::TempDir dir;
    AnyArray a = make_array(dir / "rec.b2nd");
    const SelectionPlan box = SelectionPlan::of_box(Box::region({8, 0}, {2, 2}));
    const std::vector<std::int64_t> coords{9, 12};
    const SelectionPlan point = SelectionPlan::of_points(coords.data(), 1, 2);
    const SelectionPlan lists = SelectionPlan::of_lists({{9}, {1}});
    a.resize({6, kCols});
    std::vector<std::uint8_t> out(64);
    for (const SelectionPlan* p : {&box, &point, &lists}) {
        CHECK_THROWS_WITH(EngineAccess::core(a).read(*p, out.data()),
                          Catch::Contains("rec.b2nd") && Catch::Contains("out of range"));
    }
}
