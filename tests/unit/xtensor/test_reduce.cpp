// Reductions against xtensor on the same data in memory: several axes, keepdims, where= masks,
// the new operations (prod, var, std, any, all, count_nonzero, argmin, argmax), NaN and ties as
// NumPy treats them, compensated sums, and results that do not depend on the thread count.
#include <cmath>
#include <filesystem>
#include <limits>

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

/// xtensor's axes argument for ReduceOptions::axes (empty: all of them).
std::vector<std::size_t> xt_axes(const std::vector<int>& axes, std::size_t nd) {
    std::vector<std::size_t> out;
    if (axes.empty()) {
        for (std::size_t d = 0; d < nd; ++d) {
            out.push_back(d);
        }
    }
    for (int a : axes) {
        out.push_back(static_cast<std::size_t>(a < 0 ? a + static_cast<int>(nd) : a));
    }
    std::sort(out.begin(), out.end());
    return out;
}

/// The shape of a reduction result with keepdims (xtensor's keep_dims is not in every version).
template <class E>
xt::xarray<typename E::value_type> keep(const E& r,
                                        const std::vector<std::size_t>& shape,
                                        const std::vector<std::size_t>& axes) {
    std::vector<std::size_t> s = shape;
    for (std::size_t a : axes) {
        s[a] = 1;
    }
    xt::xarray<typename E::value_type> out = r;
    out.reshape(s);
    return out;
}

/// argmin (larger = false) or argmax along `axis` of a 3-d array, the first on ties, by a loop.
xt::xarray<std::int64_t> ref_arg(const xt::xarray<float>& m, std::size_t axis, bool larger) {
    std::vector<std::size_t> out_shape;
    for (std::size_t d = 0; d < 3; ++d) {
        if (d != axis) {
            out_shape.push_back(m.shape()[d]);
        }
    }
    xt::xarray<std::int64_t> out = xt::xarray<std::int64_t>::from_shape(out_shape);
    for (std::size_t i = 0; i < out_shape[0]; ++i) {
        for (std::size_t j = 0; j < out_shape[1]; ++j) {
            std::int64_t best = 0;
            auto at = [&](std::size_t k) {
                std::size_t idx[3];
                std::size_t q = 0;
                for (std::size_t d = 0; d < 3; ++d) {
                    idx[d] = d == axis ? k : (q++ == 0 ? i : j);
                }
                return m(idx[0], idx[1], idx[2]);
            };
            for (std::size_t k = 1; k < m.shape()[axis]; ++k) {
                const float v = at(k), b = at(static_cast<std::size_t>(best));
                if (larger ? v > b : v < b) {
                    best = static_cast<std::int64_t>(k);
                }
            }
            out(i, j) = best;
        }
    }
    return out;
}

/// The flat argmin / argmax, the first on ties.
std::int64_t ref_flat_arg(const xt::xarray<float>& m, bool larger) {
    std::size_t best = 0;
    for (std::size_t k = 1; k < m.size(); ++k) {
        if (larger ? m.flat(k) > m.flat(best) : m.flat(k) < m.flat(best)) {
            best = k;
        }
    }
    return static_cast<std::int64_t>(best);
}

}  // namespace

TEST_CASE("reductions over several axes with keepdims equal xtensor's", "[xtensor]") {
    b2nd::test::TempDir tmp;
    SplitMix rng(41);
    const std::vector<std::vector<int>> choices = {{},     {0},     {1},    {2},
                                                   {0, 2}, {-1, 0}, {1, 2}, {0, 1, 2}};
    for (int k = 0; k < 12; ++k) {
        const Shape shape{1 + static_cast<std::int64_t>(rng.below(9)),
                          1 + static_cast<std::int64_t>(rng.below(9)),
                          1 + static_cast<std::int64_t>(rng.below(9))};
        Fixture f = make_array(tmp / "r.b2nd", rng, shape);
        // A uniform region (a repeated-value chunk when it covers one).
        b2nd::write(f.arr, xt::range(0, 2), xt::all(), xt::all(), 3.5f);
        xt::view(f.mem, xt::range(0, 2), xt::all(), xt::all()) = 3.5f;
        const xt::xarray<double> m = xt::cast<double>(f.mem);
        const std::vector<std::size_t> s(f.mem.shape().begin(), f.mem.shape().end());
        // Products of values in [0.9, 1.1], which neither overflow nor vanish.
        const xt::xarray<double> near_one_mem = 1.0 + (m - 250.0) / 2500.0;
        b2nd::CreateOptions po;
        po.overwrite = true;
        const auto near_one = b2nd::NDArray<double>::create_from(
            tmp / "p.b2nd", shape, std::vector<double>(near_one_mem.begin(), near_one_mem.end()),
            po);
        for (const auto& axes : choices) {
            for (bool keepdims : {false, true}) {
                INFO("array " << k << " " << b2nd::to_string(shape) << ", axes " << axes.size()
                              << ", keepdims " << keepdims);
                b2nd::ReduceOptions o;
                o.axes = axes;
                o.keepdims = keepdims;
                const auto xa = xt_axes(axes, 3);
                auto want = [&](const auto& r) {
                    return keepdims ? xt::xarray<double>(keep(r, s, xa)) : xt::xarray<double>(r);
                };
                CHECK(xt::allclose(b2nd::sum(f.arr, o), want(xt::sum(m, xa))));
                CHECK(xt::allclose(b2nd::mean(f.arr, o), want(xt::mean(m, xa))));
                CHECK(xt::allclose(b2nd::var(f.arr, o), want(xt::variance(m, xa))));
                CHECK(xt::allclose(b2nd::std(f.arr, o), want(xt::stddev(m, xa))));
                CHECK(xt::allclose(b2nd::prod(near_one, o), want(xt::prod(near_one_mem, xa))));
                CHECK((b2nd::amin(f.arr, o) == xt::xarray<float>(want(xt::amin(f.mem, xa)))));
                CHECK((b2nd::amax(f.arr, o) == xt::xarray<float>(want(xt::amax(f.mem, xa)))));
                CHECK((b2nd::count_nonzero(f.arr, o) ==
                       xt::xarray<std::int64_t>(want(xt::sum(xt::not_equal(f.mem, 0.0f), xa)))));
                CHECK((b2nd::any(f.arr, o) ==
                       xt::xarray<bool>(want(xt::sum(xt::not_equal(f.mem, 0.0f), xa)) > 0.0)));
                CHECK(
                    (b2nd::all(f.arr, o) ==
                     xt::xarray<bool>(xt::equal(want(xt::sum(xt::equal(f.mem, 0.0f), xa)), 0.0))));
            }
        }
        // argmin / argmax along each axis and flat, ties to the first (the uniform region).
        for (int axis = 0; axis < 3; ++axis) {
            const auto ax = static_cast<std::size_t>(axis);
            CHECK((b2nd::argmin(f.arr, axis) == ref_arg(f.mem, ax, false)));
            CHECK((b2nd::argmax(f.arr, axis) == ref_arg(f.mem, ax, true)));
        }
        CHECK(b2nd::argmin(f.arr) == ref_flat_arg(f.mem, false));
        CHECK(b2nd::argmax(f.arr) == ref_flat_arg(f.mem, true));
        CHECK(b2nd::std(f.arr) == Approx(xt::stddev(m)()));
        // ddof 1: NaN where an axis of length 1 leaves no degree of freedom, as in NumPy.
        CHECK(xt::all(
            xt::isclose(b2nd::var(f.arr, 1, 1), xt::variance(m, {1}, 1), 1e-5, 1e-8, true)));
    }
}

TEST_CASE("reductions with a where= mask equal the masked reduction in memory", "[xtensor]") {
    b2nd::test::TempDir tmp;
    SplitMix rng(42);
    Fixture f = make_array(tmp / "w.b2nd", rng, {13, 7, 11});
    const xt::xarray<bool> keep_mask = f.mem > 150.0f;
    b2nd::ReduceOptions o;
    o.axes = {0, 2};
    o.where = b2nd::mask_of(b2nd::view(f.arr) > 150.0f, f.arr.shape());
    const xt::xarray<double> m = xt::cast<double>(f.mem);
    const xt::xarray<double> zeroed = xt::where(keep_mask, m, 0.0);
    const xt::xarray<double> n = xt::sum(xt::cast<double>(keep_mask), {0, 2});
    CHECK(xt::allclose(b2nd::sum(f.arr, o), xt::sum(zeroed, {0, 2})));
    CHECK(xt::allclose(b2nd::mean(f.arr, o), xt::sum(zeroed, {0, 2}) / n));
    const xt::xarray<float> low = xt::where(keep_mask, f.mem, std::numeric_limits<float>::max());
    CHECK((b2nd::amin(f.arr, o) == xt::amin(low, {0, 2})));
    CHECK((b2nd::count_nonzero(f.arr, o) == xt::cast<std::int64_t>(n)));
    // The variance of the kept elements, per column, computed directly.
    const xt::xarray<double> v = b2nd::var(f.arr, o);
    for (std::size_t j = 0; j < 7; ++j) {
        double s = 0, s2 = 0, c = 0;
        for (std::size_t i = 0; i < 13; ++i) {
            for (std::size_t k = 0; k < 11; ++k) {
                if (keep_mask(i, j, k)) {
                    s += m(i, j, k);
                    s2 += m(i, j, k) * m(i, j, k);
                    c += 1;
                }
            }
        }
        CHECK(v(j) == Approx(s2 / c - (s / c) * (s / c)).epsilon(1e-9));
    }
    // A mask with nothing true: identities, NaN means, -1 positions.
    b2nd::ReduceOptions none;
    none.where = b2nd::mask_of(b2nd::view(f.arr) < -1.0f, f.arr.shape());
    CHECK(b2nd::sum(f.arr, none)() == 0.0);
    CHECK(std::isnan(b2nd::mean(f.arr, none)()));
    CHECK(b2nd::argmax(f.arr, none)() == -1);
    const std::vector<std::uint8_t> bits(13 * 7, 1);
    none.where = b2nd::Mask::of(bits.data(), {13, 7});
    CHECK_THROWS_WITH(b2nd::sum(f.arr, none), Contains("a where= mask of shape (13, 7)"));
}

TEST_CASE("reductions: NaN, ties, integers, booleans and bad axes as NumPy has them", "[xtensor]") {
    b2nd::test::TempDir tmp;
    b2nd::CreateOptions o;
    o.chunk_shape = {3, 4};
    o.block_shape = {2, 2};
    std::vector<double> v(6 * 8, 1.0);
    v[13] = std::numeric_limits<double>::quiet_NaN();
    v[40] = std::numeric_limits<double>::quiet_NaN();
    v[5] = 7.0;
    v[30] = 7.0;  // a tie: the first in C order wins
    auto a = b2nd::NDArray<double>::create_from(tmp / "n.b2nd", {6, 8}, v, o);
    CHECK(std::isnan(b2nd::amax(a)));
    CHECK(b2nd::argmax(a) == 13);  // the first NaN
    CHECK(b2nd::argmin(a) == 13);
    v[13] = v[40] = 0.5;
    a.write(b2nd::Box::whole({6, 8}), v);
    CHECK(b2nd::argmax(a) == 5);
    CHECK(b2nd::argmin(a) == 13);
    CHECK((b2nd::argmax(a, 0) == xt::xarray<std::int64_t>{0, 0, 0, 0, 0, 0, 3, 0}));

    // Integer products wrap like NumPy's int64; bool sums count.
    auto ints = b2nd::NDArray<std::int32_t>::create_from(tmp / "i.b2nd", {4, 8},
                                                         std::vector<std::int32_t>(32, 65536), o);
    CHECK(b2nd::prod(ints) == 0);  // 2^(16 * 32) wraps to 0 in 64 bits
    CHECK((b2nd::prod(ints, 1) == xt::xarray<std::int64_t>(xt::zeros<std::int64_t>({4}))));
    std::vector<bool> bits(32);
    for (std::size_t i = 0; i < bits.size(); ++i) {
        bits[i] = i % 3 == 0;
    }
    auto b = b2nd::NDArray<bool>::create_from(tmp / "b.b2nd", {4, 8}, bits, o);
    CHECK(b2nd::sum(b) == 11);
    CHECK(b2nd::count_nonzero(b) == 11);
    CHECK(b2nd::any(b));
    CHECK_FALSE(b2nd::all(b));

    b2nd::ReduceOptions twice;
    twice.axes = {1, -1};
    CHECK_THROWS_WITH(b2nd::sum(a, twice), Contains("given twice"));
    twice.axes = {2};
    CHECK_THROWS_WITH(b2nd::sum(a, twice), Contains("axis 2 out of range"));
    auto empty = b2nd::create<float>(tmp / "e.b2nd", {0, 4});
    CHECK_THROWS_AS(b2nd::argmax(empty), b2nd::UsageError);
    CHECK_THROWS_WITH(b2nd::argmax(empty, 0), Contains("along axes of length 0"));
    CHECK(b2nd::argmax(empty, 1).size() == 0);
    CHECK_FALSE(b2nd::any(empty));
    CHECK(b2nd::all(empty));
    CHECK(b2nd::prod(empty) == 1.0);
}

TEST_CASE("sums are compensated and do not depend on the thread count", "[xtensor]") {
    b2nd::test::TempDir tmp;
    // Rows of one chunk each: 1e16, then 999 rows holding a single 1.0, then -1e16. Adding in
    // double without compensation loses every 1.0 (1e16 + 1 rounds back to 1e16).
    const std::int64_t rows = 1001, cols = 64;
    std::vector<double> v(static_cast<std::size_t>(rows * cols), 0.0);
    v[0] = 1e16;
    for (std::int64_t r = 1; r + 1 < rows; ++r) {
        v[static_cast<std::size_t>(r * cols + 5)] = 1.0;
    }
    v[static_cast<std::size_t>((rows - 1) * cols)] = -1e16;
    b2nd::CreateOptions o;
    o.chunk_shape = {1, cols};
    o.block_shape = {1, cols};
    auto a = b2nd::NDArray<double>::create_from(tmp / "k.b2nd", {rows, cols}, v, o);
    CHECK(b2nd::sum(a) == 999.0);
    CHECK(b2nd::mean(a) == Approx(999.0 / static_cast<double>(rows * cols)));

    // Floats of mixed magnitudes: the same bits from 1 and 2 threads, every time.
    SplitMix rng(44);
    Fixture f = make_array(tmp / "t.b2nd", rng, {40, 30, 20});
    for (auto& x : f.mem) {
        x = static_cast<float>(std::ldexp(static_cast<double>(rng.below(1000)) - 500.0,
                                          static_cast<int>(rng.below(40)) - 20));
    }
    b2nd::write(f.arr, f.mem);
    b2nd::ReduceOptions ax;
    ax.axes = {0, 2};
    f.arr.any().set_nthreads(1);
    const double one = b2nd::sum(f.arr);
    const xt::xarray<double> one_ax = b2nd::sum(f.arr, ax);
    const xt::xarray<double> one_var = b2nd::var(f.arr, ax);
    f.arr.any().set_nthreads(2);
    for (int rep = 0; rep < 5; ++rep) {
        CHECK(b2nd::sum(f.arr) == one);
        CHECK((b2nd::sum(f.arr, ax) == one_ax));
        CHECK((b2nd::var(f.arr, ax) == one_var));
    }
    CHECK(one == Approx(xt::sum(xt::cast<double>(f.mem))()).epsilon(1e-12));
}

TEST_CASE("reduce: a python-blosc2 persisted expression reduces and reads as its values",
          "[xtensor][reduce][golden]") {
    const std::string corpus = B2ND_CORPUS_DIR;
    if (!std::filesystem::exists(corpus + "/stores/lazy/expr_arith.b2nd")) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    // expr_arith: a + b * 2 over (30, 40) float64 operands; its carrier's chunks are zeros.
    const auto e = b2nd::NDArray<double>::open(corpus + "/stores/lazy/expr_arith.b2nd");
    const auto a = b2nd::read(b2nd::NDArray<double>::open(corpus + "/stores/lazy/a.b2nd"));
    const auto b = b2nd::read(b2nd::NDArray<double>::open(corpus + "/stores/lazy/b.b2nd"));
    const xt::xarray<double> want = a + b * 2.0;
    b2nd::ReduceOptions o;
    o.axes = {1};
    CHECK(xt::allclose(b2nd::sum(e, o), xt::sum(want, {1})));
    CHECK(xt::allclose(b2nd::read(e), want));
    const bool all_zero = xt::all(xt::equal(b2nd::read(e), 0.0));
    CHECK(!all_zero);
}
