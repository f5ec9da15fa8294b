// Index-list and boolean selections in the xtensor layer against xtensor on the same data in
// memory: views with xt::keep / xt::drop equal xt::view, writes through them equal the same
// assignment, filter equals xt::filter, where equals xt::where, masked writes and
// compress_where equal the mask applied in memory.
#include <array>
#include <cstring>

#include <catch2/catch.hpp>

#include <b2nd/xtensor.hpp>

#include "../../support/temp_dir.hpp"
#include "fixture.hpp"

using b2nd::Shape;
using b2nd::test::Fixture;
using b2nd::test::make_array;
using b2nd::test::SplitMix;
using Catch::Matchers::Contains;

namespace {

/// Random indices of a dimension of n elements, negative ones too (-n .. n - 1), 0-6 of them.
std::vector<long> random_list(SplitMix& rng, long n, bool allow_empty) {
    std::vector<long> v;
    const std::uint64_t len = (allow_empty ? 0 : 1) + rng.below(allow_empty ? 7 : 6);
    for (std::uint64_t k = 0; k < len; ++k) {
        v.push_back(static_cast<long>(rng.below(2 * static_cast<std::uint64_t>(n))) - n);
    }
    return v;
}

/// Distinct sorted indices to drop, fewer than n.
std::vector<long> random_drop(SplitMix& rng, long n) {
    std::vector<long> v;
    for (long i = 0; i < n; ++i) {
        if (rng.below(3) == 0 && static_cast<long>(v.size()) + 1 < n) {
            v.push_back(i);
        }
    }
    return v;
}

}  // namespace

TEST_CASE("xtensor: views with keep and drop equal xt::view", "[xtensor]") {
    b2nd::test::TempDir tmp;
    SplitMix rng(31);
    for (int k = 0; k < 25; ++k) {
        const Shape shape{1 + static_cast<std::int64_t>(rng.below(10)),
                          1 + static_cast<std::int64_t>(rng.below(10)),
                          1 + static_cast<std::int64_t>(rng.below(10))};
        Fixture f = make_array(tmp / "a.b2nd", rng, shape);
        const long n0 = static_cast<long>(shape[0]);
        const long n1 = static_cast<long>(shape[1]);
        const long n2 = static_cast<long>(shape[2]);
        for (int j = 0; j < 6; ++j) {
            INFO("array " << k << " selection " << j);
            // xtensor's own keep wraps negative indices; empty lists give 0-size results.
            const auto keep0 = xt::keep(random_list(rng, n0, true));
            const auto keep2 = xt::keep(random_list(rng, n2, false));
            const auto drop1 = xt::drop(random_drop(rng, n1));
            const long i1 = static_cast<long>(rng.below(static_cast<std::uint64_t>(n1)));
            {
                const xt::xarray<float> want = xt::view(f.mem, keep0, xt::all(), keep2);
                const xt::xarray<float> got = b2nd::view(f.arr, keep0, xt::all(), keep2);
                REQUIRE((got.shape() == want.shape()));
                CHECK((got == want));
                // Through an expression (the slab assigner) and element access.
                const xt::xarray<float> twice = b2nd::view(f.arr, keep0, xt::all(), keep2) * 2.0f;
                CHECK((twice == want * 2.0f));
            }
            {
                const xt::xarray<float> want = xt::view(f.mem, xt::range(0, n0, 2), drop1, keep2);
                const xt::xarray<float> got = b2nd::read(f.arr, xt::range(0, n0, 2), drop1, keep2);
                REQUIRE((got.shape() == want.shape()));
                CHECK((got == want));
            }
            {
                const xt::xarray<float> want = xt::view(f.mem, 0, i1, keep2);
                const xt::xarray<float> got = b2nd::read(f.arr, 0, i1, keep2);
                CHECK((got == want));
            }
            // A view of a keep view, and keep on a view.
            const auto outer = b2nd::view(f.arr, xt::all(), drop1, xt::range(n2 - 1, -n2 - 1, -1));
            const auto mem_outer =
                xt::view(f.mem, xt::all(), drop1, xt::range(n2 - 1, -n2 - 1, -1));
            const auto keep_again = xt::keep(random_list(rng, n0, false));
            const xt::xarray<float> want = xt::view(mem_outer, keep_again, xt::range(0, 2));
            const xt::xarray<float> got = b2nd::view(outer, keep_again, xt::range(0, 2));
            REQUIRE((got.shape() == want.shape()));
            CHECK((got == want));
            if (want.size() > 0) {
                const auto lazy = b2nd::view(outer, keep_again, xt::range(0, 2));
                CHECK(lazy(0, 0, 0) == want(0, 0, 0));
                CHECK(xt::sum(lazy)() == Approx(xt::sum(want)()));
            }
        }
    }
    Fixture f = make_array(tmp / "e.b2nd", rng, {5, 6, 7});
    CHECK_THROWS_WITH(b2nd::read(f.arr, xt::keep(0, 5)),
                      Contains("index 5 in the list for dimension 0"));
}

TEST_CASE("xtensor: index_view equals xt::index_view", "[xtensor]") {
    b2nd::test::TempDir tmp;
    SplitMix rng(35);
    Fixture f = make_array(tmp / "i.b2nd", rng, {11, 7, 13});
    std::vector<std::array<std::size_t, 3>> idx;
    for (int k = 0; k < 200; ++k) {
        idx.push_back({static_cast<std::size_t>(rng.below(11)),
                       static_cast<std::size_t>(rng.below(7)),
                       static_cast<std::size_t>(rng.below(13))});
    }
    const xt::xarray<float> want = xt::index_view(f.mem, idx);
    CHECK((b2nd::index_view(f.arr, idx) == want));
    CHECK((b2nd::index_view(f.arr, {{10, 6, 12}, {0, 0, 0}}) ==
           xt::xarray<float>{f.mem(10, 6, 12), f.mem(0, 0, 0)}));
    CHECK_THROWS_WITH(b2nd::index_view(f.arr, {{0, 7, 0}}),
                      Contains("index 7 on axis 1 is out of range for its size 7"));
}

TEST_CASE("xtensor: writes through keep equal the assignment in memory", "[xtensor]") {
    b2nd::test::TempDir tmp;
    SplitMix rng(32);
    Fixture f = make_array(tmp / "w.b2nd", rng, {9, 8, 7});
    for (int j = 0; j < 10; ++j) {
        // Distinct indices: with repeats, the element written last is xtensor's choice.
        std::vector<long> rows;
        for (long i = 0; i < 9; ++i) {
            if (rng.below(2) == 0) {
                rows.push_back(i);
            }
        }
        if (rows.empty()) {
            rows.push_back(4);
        }
        std::reverse(rows.begin(), rows.end());
        const auto keep = xt::keep(rows);
        xt::xarray<float> values =
            xt::view(f.mem, keep, xt::range(1, 8, 3), xt::all()) * -1.0f - static_cast<float>(j);
        xt::view(f.mem, keep, xt::range(1, 8, 3), xt::all()) = values;
        b2nd::write(f.arr, keep, xt::range(1, 8, 3), xt::all(), values);
        // A broadcast scalar through drop.
        xt::view(f.mem, xt::drop(0, 2), 3, xt::all()) = 100.0f + static_cast<float>(j);
        b2nd::write(f.arr, xt::drop(0, 2), 3, xt::all(), 100.0f + static_cast<float>(j));
        const xt::xarray<float> got = b2nd::read(f.arr);
        REQUIRE((got == f.mem));
    }
}

TEST_CASE("xtensor: filter, masked writes and compress_where equal the mask in memory",
          "[xtensor]") {
    b2nd::test::TempDir tmp;
    SplitMix rng(33);
    for (int k = 0; k < 8; ++k) {
        const Shape shape{1 + static_cast<std::int64_t>(rng.below(20)),
                          1 + static_cast<std::int64_t>(rng.below(20)),
                          1 + static_cast<std::int64_t>(rng.below(20))};
        INFO("array " << k << " of shape " << b2nd::to_string(shape));
        Fixture f = make_array(tmp / "m.b2nd", rng, shape);
        const float cut = static_cast<float>(rng.below(500));
        // An expression over the lazy view, an in-memory container, a bool array on disk.
        const xt::xarray<float> want = xt::filter(f.mem, f.mem > cut);
        const xt::xarray<float> by_expr = b2nd::filter(f.arr, b2nd::view(f.arr) > cut);
        CHECK((by_expr == want));
        const xt::xarray<bool> mem_mask = f.mem > cut;
        CHECK((b2nd::filter(f.arr, mem_mask) == want));
        std::vector<bool> bits(mem_mask.begin(), mem_mask.end());
        b2nd::CreateOptions replace;
        replace.overwrite = true;
        auto stored = b2nd::NDArray<bool>::create_from(tmp / "mask.b2nd", shape, bits, replace);
        CHECK((b2nd::filter(f.arr, stored) == want));
        // An expression mixing the view, a container and a scalar.
        const xt::xarray<float> plus = f.mem * 0.5f;
        CHECK((b2nd::filter(f.arr, b2nd::view(f.arr) + plus > cut) ==
               xt::filter(f.mem, f.mem + plus > cut)));

        b2nd::CreateOptions o;
        o.overwrite = true;
        const auto c = b2nd::compress_where(f.arr, b2nd::view(f.arr) > cut, tmp / "c.b2nd", o);
        const xt::xarray<float> compressed = b2nd::read(c);
        CHECK((compressed == want));

        // a[a < cut] = -1, then a[a == -1] = data.
        b2nd::write_masked(f.arr, b2nd::view(f.arr) < cut, -1.0f);
        xt::filter(f.mem, f.mem < cut) = -1.0f;
        CHECK((b2nd::read(f.arr) == f.mem));
        const auto n = static_cast<std::size_t>(xt::sum(xt::equal(f.mem, -1.0f))());
        std::vector<float> data(n);
        for (std::size_t i = 0; i < n; ++i) {
            data[i] = static_cast<float>(i) + 0.25f;
        }
        const xt::xarray<bool> minus = xt::equal(f.mem, -1.0f);
        b2nd::write_masked(f.arr, minus, data);
        std::size_t i = 0;
        for (std::size_t p = 0; p < f.mem.size(); ++p) {
            if (minus.flat(p)) {
                f.mem.flat(p) = data[i++];
            }
        }
        CHECK((b2nd::read(f.arr) == f.mem));
    }
    Fixture f = make_array(tmp / "bad.b2nd", rng, {4, 5, 6});
    const xt::xarray<bool> wrong = xt::ones<bool>({4, 6, 5});
    CHECK_THROWS_WITH(b2nd::filter(f.arr, wrong),
                      Contains("a condition of shape (4, 6, 5) for an array of shape (4, 5, 6)"));
}

TEST_CASE("xtensor: where runs chunk by chunk and equals xt::where", "[xtensor]") {
    b2nd::test::TempDir tmp;
    SplitMix rng(34);
    for (int k = 0; k < 6; ++k) {
        const Shape shape{1 + static_cast<std::int64_t>(rng.below(30)),
                          1 + static_cast<std::int64_t>(rng.below(30)),
                          1 + static_cast<std::int64_t>(rng.below(30))};
        Fixture x = make_array(tmp / "x.b2nd", rng, shape);
        Fixture y = make_array(tmp / "y.b2nd", rng, shape);
        b2nd::CreateOptions o;
        o.chunk_shape = {4, 5, 6};
        o.block_shape = {2, 5, 3};
        o.overwrite = true;
        auto out = b2nd::NDArray<float>::create(tmp / "out.b2nd", shape, o);
        b2nd::where(out, b2nd::view(x.arr) > b2nd::view(y.arr), x.arr, y.arr);
        CHECK((b2nd::read(out) == xt::where(x.mem > y.mem, x.mem, y.mem)));
        // Scalars, a broadcast row in memory, and the output read in place.
        const xt::xarray<float> row = xt::arange<float>(0.0f, static_cast<float>(shape[2]));
        b2nd::where(out, b2nd::view(out) > 200.0f, 0.0f, row);
        const xt::xarray<float> prev = xt::where(x.mem > y.mem, x.mem, y.mem);
        CHECK(
            (b2nd::read(out) == xt::where(prev > 200.0f, 0.0f, xt::broadcast(row, prev.shape()))));
    }
}

TEST_CASE("xtensor: squeeze and expand_dims are views that read nothing until evaluated",
          "[xtensor]") {
    b2nd::test::TempDir dir;
    SplitMix rng(71);
    Fixture f = make_array(dir / "a.b2nd", rng, {3, 1, 4, 1});
    f.arr.any().clear_cache();
    const auto before = f.arr.any().cache_stats();
    auto s = b2nd::squeeze(f.arr);
    auto s1 = b2nd::squeeze(f.arr, {-1});
    auto e0 = b2nd::expand_dims(f.arr, 0);
    auto back = b2nd::expand_dims(b2nd::squeeze(f.arr), 1);  // (3, 1, 4)
    const auto after = f.arr.any().cache_stats();
    CHECK(after.misses == before.misses);  // no block decoded yet
    CHECK(after.hits == before.hits);
    CHECK(s.shape() == std::vector<std::size_t>{3, 4});
    CHECK(s1.shape() == std::vector<std::size_t>{3, 1, 4});
    CHECK(e0.shape() == std::vector<std::size_t>{1, 3, 1, 4, 1});
    const xt::xarray<float> sv = s, s1v = s1, e0v = e0, bv = back;
    CHECK(sv == xt::squeeze(f.mem));
    CHECK(s1v == xt::squeeze(f.mem, {3}));
    CHECK(e0v == xt::expand_dims(f.mem, 0));
    CHECK(bv == xt::expand_dims(xt::squeeze(f.mem), 1));
    // Views of views: a slice of the squeezed view, then a new last axis.
    auto last = b2nd::expand_dims(b2nd::view(s, xt::range(1, 3), xt::all()), -1);
    const xt::xarray<float> lv = last;
    CHECK(lv == xt::expand_dims(xt::view(xt::squeeze(f.mem), xt::range(1, 3), xt::all()), 2));
    CHECK_THROWS_WITH(b2nd::squeeze(f.arr, {0}), Contains("a.b2nd") && Contains("axis 0"));
    CHECK_THROWS_AS(b2nd::squeeze(f.arr, {4}), b2nd::UsageError);
    CHECK_THROWS_AS(b2nd::expand_dims(f.arr, 5), b2nd::UsageError);
    CHECK(b2nd::expand_dims(f.arr, -5).shape() == std::vector<std::size_t>{1, 3, 1, 4, 1});
}

TEST_CASE("a field view of a structured array is an xtensor operand like any array",
          "[xtensor][fields]") {
    // Records (a int32, x float64, b uint8), packed: x at offset 4.
    const std::int64_t rows = 37, cols = 11;
    std::vector<std::uint8_t> recs(static_cast<std::size_t>(rows * cols * 13));
    xt::xarray<double> want = xt::zeros<double>({rows, cols});
    for (std::int64_t i = 0; i < rows * cols; ++i) {
        const double x = 0.5 * static_cast<double>(i % 97) - 3.0;
        const auto k = static_cast<std::int32_t>(i);
        std::memcpy(recs.data() + i * 13, &k, 4);
        std::memcpy(recs.data() + i * 13 + 4, &x, 8);
        recs[static_cast<std::size_t>(i * 13 + 12)] = static_cast<std::uint8_t>(i);
        want.flat(static_cast<std::size_t>(i)) = x;
    }
    b2nd::CreateOptions co;
    co.chunk_shape = {10, 6};
    co.block_shape = {4, 3};
    const auto a = b2nd::AnyArray::create_in_memory_from(
        b2nd::DType::parse("[('a', '<i4'), ('x', '<f8'), ('b', 'u1')]"), {rows, cols},
        {recs.data(), recs.size()}, co);
    const b2nd::NDArray<double> x(a.field("x"));
    const xt::xarray<double> got = b2nd::view(x, xt::range(3, 30, 2), xt::all());
    CHECK(got == xt::view(want, xt::range(3, 30, 2), xt::all()));
    CHECK(b2nd::sum(x) == Approx(xt::sum(want)()));
    const xt::xarray<double> by_row = b2nd::amax(x, 1);
    CHECK(by_row == xt::amax(want, {1}));
}
