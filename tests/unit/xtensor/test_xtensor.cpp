// The xtensor layer against xtensor itself: b2nd::read / b2nd::view equal xt::view on the same
// data in memory for seeded random shapes, chunkings and slices; b2nd::write equals the same
// assignment in memory; lazy views work inside expressions and reducers and across slabs;
// evaluate() runs pipelines within a memory budget; reductions equal xtensor's.
#include <atomic>
#include <variant>

#include <catch2/catch.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xrandom.hpp>

#include <b2nd/xtensor.hpp>

#include "../../support/files.hpp"
#include "../../support/temp_dir.hpp"
#include "fixture.hpp"

using b2nd::Shape;
using b2nd::test::Fixture;
using b2nd::test::make_array;
using b2nd::test::SplitMix;

namespace {

using Range = decltype(xt::range(0L, 1L, 1L));
using Dim = std::variant<Range, long>;

/// A random slice of a dimension of n elements: a range with any start/stop (negative and out
/// of range too) and step, or an in-range integer.
Dim random_dim(SplitMix& rng, long n, bool allow_int) {
    if (allow_int && n > 0 && rng.below(4) == 0) {
        return static_cast<long>(rng.below(static_cast<std::uint64_t>(n)));
    }
    static const long steps[] = {1, 1, 2, 3, -1, -2, 5};
    for (;;) {
        const long step = steps[rng.below(7)];
        const long a = static_cast<long>(rng.below(static_cast<std::uint64_t>(n + 6))) - 3;
        const long b = static_cast<long>(rng.below(static_cast<std::uint64_t>(n + 6))) - 3;
        // xt::view misbehaves on ranges walking away from their stop (negative sizes); b2nd
        // reads them as empty. Compare where xtensor is defined.
        if (xt::range(a, b, step).get(static_cast<std::size_t>(n)).size() >= 0) {
            return xt::range(a, b, step);
        }
    }
}

}  // namespace

TEST_CASE("xtensor: read and view equal xt::view for random slices", "[xtensor]") {
    b2nd::test::TempDir tmp;
    SplitMix rng(5);
    for (int k = 0; k < 40; ++k) {
        const Shape shape{1 + static_cast<std::int64_t>(rng.below(12)),
                          1 + static_cast<std::int64_t>(rng.below(12)),
                          1 + static_cast<std::int64_t>(rng.below(12))};
        Fixture f = make_array(tmp / "a.b2nd", rng, shape);
        for (int j = 0; j < 10; ++j) {
            const Dim d0 = random_dim(rng, static_cast<long>(shape[0]), true);
            const Dim d1 = random_dim(rng, static_cast<long>(shape[1]), true);
            const Dim d2 = random_dim(rng, static_cast<long>(shape[2]), true);
            std::visit(
                [&](auto s0, auto s1, auto s2) {  // copies: xt::view wants non-const slices
                    const xt::xarray<float> want = xt::view(f.mem, s0, s1, s2);
                    const xt::xarray<float> got = b2nd::read(f.arr, s0, s1, s2);
                    REQUIRE((got.shape() == want.shape()));
                    CHECK((got == want));
                    // Through the stepper (an expression, not a plain assignment).
                    const auto lazy = b2nd::view(f.arr, s0, s1, s2);
                    const xt::xarray<float> twice = lazy * 2.0f;
                    CHECK((twice == want * 2.0f));
                    if (want.size() > 0) {
                        CHECK(xt::sum(lazy)() == Approx(xt::sum(want)()));
                    }
                },
                d0, d1, d2);
        }
    }
}

TEST_CASE("xtensor: all, newaxis, ellipsis and views of views", "[xtensor]") {
    b2nd::test::TempDir tmp;
    SplitMix rng(6);
    Fixture f = make_array(tmp / "b.b2nd", rng, {7, 9, 11});
    CHECK((b2nd::read(f.arr, xt::all(), 3) == xt::view(f.mem, xt::all(), 3)));
    // xt::view has no ellipsis: xt::strided_view is the reference for those.
    CHECK((b2nd::read(f.arr, xt::newaxis(), 2, xt::ellipsis(), xt::newaxis()) ==
           xt::strided_view(f.mem, {xt::newaxis(), 2, xt::ellipsis(), xt::newaxis()})));
    CHECK((b2nd::read(f.arr, xt::ellipsis(), xt::range(1, 8, 3)) ==
           xt::strided_view(f.mem, {xt::ellipsis(), xt::range(1, 8, 3)})));
    CHECK(
        (b2nd::read(f.arr, xt::range(xt::placeholders::_, 4), xt::range(5, xt::placeholders::_)) ==
         xt::view(f.mem, xt::range(xt::placeholders::_, 4), xt::range(5, xt::placeholders::_))));

    const auto outer = b2nd::view(f.arr, xt::range(1, 7), xt::newaxis(), xt::range(8, 0, -2));
    const auto inner = b2nd::view(outer, xt::range(4, 0, -1), 0, xt::all(), 2);
    const auto mem_outer = xt::view(f.mem, xt::range(1, 7), xt::newaxis(), xt::range(8, 0, -2));
    const xt::xarray<float> want = xt::view(mem_outer, xt::range(4, 0, -1), 0, xt::all(), 2);
    const xt::xarray<float> got = inner;
    CHECK((got == want));
    // xtensor's own views of a lazy view.
    const xt::xarray<float> xv = xt::view(outer, xt::all(), 0, 1);
    CHECK((xv == xt::view(mem_outer, xt::all(), 0, 1)));
    // Element access.
    CHECK((outer(2, 0, 1, 5) == mem_outer(2, 0, 1, 5)));
    CHECK((outer(1, 5) == mem_outer(0, 0, 1, 5)));  // xtensor's rule: missing leading indices are 0
    CHECK((b2nd::read(f.arr, 6, 8, 10)() == f.mem(6, 8, 10)));
    CHECK_THROWS_AS(b2nd::read(f.arr, 7), b2nd::UsageError);
}

TEST_CASE("xtensor: lazy views decode slab by slab and stay lazy until evaluated", "[xtensor]") {
    b2nd::test::TempDir tmp;
    SplitMix rng(7);
    Fixture f = make_array(tmp / "c.b2nd", rng, {23, 17, 5});
    const b2nd::Resolved all = b2nd::resolve(f.arr.shape(), {});
    // Slabs of about one row: every step along the first dimension loads a new one.
    const b2nd::LazyView<float> tiny(f.arr, all, 64);
    const b2nd::MemoryStats before = b2nd::memory_stats();
    CHECK(xt::mean(tiny)() == Approx(xt::mean(f.mem)()));
    CHECK((xt::amax(tiny)() == xt::amax(f.mem)()));
    const xt::xarray<double> by_axis = xt::sum(tiny, {0, 2});
    CHECK(xt::allclose(by_axis, xt::sum(f.mem, {0, 2})));
    const xt::xarray<float> mixed = tiny + xt::view(f.mem, xt::all(), xt::all(), xt::range(4, 5));
    CHECK((mixed == f.mem + xt::view(f.mem, xt::all(), xt::all(), xt::range(4, 5))));
    CHECK(b2nd::memory_stats().current <=
          before.current + 64 * 1024);  // slabs freed with the steppers
    // Making a view reads nothing: a view of a corrupt file's shape only fails when evaluated.
    const auto lazy = b2nd::view(f.arr, xt::range(0, 3));
    CHECK((lazy.shape() == std::vector<std::size_t>{3, 17, 5}));
}

TEST_CASE("xtensor: write equals the same assignment in memory", "[xtensor]") {
    b2nd::test::TempDir tmp;
    SplitMix rng(8);
    for (int k = 0; k < 25; ++k) {
        const Shape shape{1 + static_cast<std::int64_t>(rng.below(10)),
                          1 + static_cast<std::int64_t>(rng.below(10)),
                          1 + static_cast<std::int64_t>(rng.below(10))};
        Fixture f = make_array(tmp / "w.b2nd", rng, shape);
        const Dim d0 = random_dim(rng, static_cast<long>(shape[0]), true);
        const Dim d1 = random_dim(rng, static_cast<long>(shape[1]), false);
        const Dim d2 = random_dim(rng, static_cast<long>(shape[2]), true);
        const float scalar = static_cast<float>(k);
        std::visit(
            [&](auto s0, auto s1, auto s2) {  // copies: xt::view wants non-const slices
                auto target = xt::view(f.mem, s0, s1, s2);
                if (target.size() == 0) {
                    return;
                }
                if (k % 3 == 0) {
                    b2nd::write(f.arr, s0, s1, s2, scalar);
                    target = scalar;
                } else {
                    // An expression of the target's shape, or broadcast from its last dimension.
                    xt::xarray<float> e = xt::eval(target * 3.0f + 1.0f);
                    if (k % 3 == 2 && target.dimension() > 0) {
                        e = xt::arange<float>(static_cast<float>(target.shape().back()));
                    }
                    b2nd::write(f.arr, s0, s1, s2, e);
                    target = e;
                }
            },
            d0, d1, d2);
        CHECK((b2nd::read(f.arr) == f.mem));
    }
}

TEST_CASE("xtensor: write of an expression of the wrong shape names the array and both shapes",
          "[xtensor]") {
    b2nd::test::TempDir tmp;
    auto a = b2nd::NDArray<float>::create(tmp / "w.b2nd", {5, 4});
    const xt::xtensor<float, 2> e = xt::ones<float>({3, 4});
    CHECK_THROWS_AS(b2nd::write(a, e), b2nd::UsageError);
    CHECK_THROWS_WITH(b2nd::write(a, e),
                      Catch::Matchers::Contains("w.b2nd") &&
                          Catch::Matchers::Contains("an expression of shape (3, 4)") &&
                          Catch::Matchers::Contains("the selection's shape (5, 4)") &&
                          !Catch::Matchers::Contains("Incompatible dimension"));
    CHECK_THROWS_WITH(
        b2nd::write(a, xt::range(0, 2), xt::all(), xt::ones<float>({2, 1, 4})),
        Catch::Matchers::Contains("(2, 1, 4)") && Catch::Matchers::Contains("(2, 4)"));
    // Broadcastable ones are written.
    b2nd::write(a, xt::range(0, 2), xt::all(), xt::ones<float>({1, 4}) * 2.0f);
    CHECK(a(1, 3) == 2.0f);
    CHECK(a(2, 0) == 0.0f);
}

TEST_CASE("xtensor: evaluate runs pipelines chunk by chunk", "[xtensor]") {
    b2nd::test::TempDir tmp;
    SplitMix rng(9);
    Fixture a = make_array(tmp / "a.b2nd", rng, {20, 18, 16});
    Fixture b = make_array(tmp / "b.b2nd", rng, {20, 18, 16});    // other chunk shapes
    Fixture clim = make_array(tmp / "clim.b2nd", rng, {18, 16});  // broadcast along axis 0
    b2nd::CreateOptions o;
    o.chunk_shape = {6, 7, 16};
    o.block_shape = {3, 7, 4};
    auto out = b2nd::create<float>(tmp / "out.b2nd", {20, 18, 16}, o);
    b2nd::evaluate(
        out, [](const auto& x, const auto& y, const auto& c) { return x - y + c; }, a.arr, b.arr,
        clim.arr);
    CHECK((b2nd::read(out) == a.mem - b.mem + clim.mem));
    // Lazy inputs, progress, in place on one of the inputs.
    std::atomic<int> calls{0};
    b2nd::EvaluateOptions eo;
    eo.progress = [&](std::int64_t done, std::int64_t total) {
        ++calls;
        CHECK(done <= total);
    };
    b2nd::evaluate(
        a.arr, eo, [](const auto& x, const auto& y) { return x * 2.0f + y; }, a.arr,
        b2nd::view(b.arr, xt::all(), xt::all(), xt::all()));
    CHECK((b2nd::read(a.arr) == a.mem * 2.0f + b.mem));
    CHECK((calls.load() == static_cast<int>(a.arr.any().grid().nchunks())));
    // Shapes that do not fit are refused.
    Fixture small = make_array(tmp / "s.b2nd", rng, {3, 16});
    CHECK_THROWS_AS(b2nd::evaluate(
                        out, [](const auto& x) { return x; }, small.arr),
                    b2nd::UsageError);
    CHECK_THROWS_AS(b2nd::evaluate(
                        out,
                        [](const auto& x) {
                            return xt::view(x, xt::range(0, 1), xt::range(0, 1), xt::range(0, 2));
                        },
                        a.arr),
                    b2nd::UsageError);
}

TEST_CASE("xtensor: a pipeline over an array larger than its memory budget stays within it",
          "[xtensor]") {
    b2nd::test::TempDir tmp;
    b2nd::CreateOptions o;
    o.chunk_shape = {16, 64, 64};  // 256 KiB chunks of float
    o.block_shape = {8, 32, 32};
    o.nthreads = 2;
    const Shape shape{128, 128, 128};  // 8 MiB per array
    auto a = b2nd::create<float>(tmp / "a.b2nd", shape, o);
    auto b = b2nd::create<float>(tmp / "b.b2nd", shape, o);
    b2nd::evaluate(
        a, [](const auto& x) { return x + 1.0f; }, a);  // fill with something
    b2nd::evaluate(
        b, [](const auto& x) { return x * 0.0f + 2.0f; }, b);
    auto out = b2nd::create<float>(tmp / "out.b2nd", shape, o);
    b2nd::EvaluateOptions eo;
    eo.memory_budget = std::size_t{3} << 20;  // 3 MiB for 24 MiB of arrays
    b2nd::reset_memory_peak();
    const std::int64_t start = b2nd::memory_stats().current;
    b2nd::evaluate(
        out, eo, [](const auto& x, const auto& y) { return x * y; }, a, b);
    const std::int64_t used = b2nd::memory_stats().peak - start;
    INFO("peak above start: " << used << " bytes");
    CHECK(used <= static_cast<std::int64_t>(eo.memory_budget));
    CHECK(used > 0);
    CHECK((b2nd::amin(out) == 2.0f));  // (0 + 1) * (0 * 0 + 2)
    CHECK((b2nd::amax(out) == 2.0f));
    eo.memory_budget = 1 << 16;
    CHECK_THROWS_WITH(b2nd::evaluate(
                          out, eo, [](const auto& x) { return x; }, a),
                      Catch::Matchers::Contains("cannot hold one chunk"));
}

TEST_CASE("xtensor: reductions equal xtensor's, uniform chunks included", "[xtensor]") {
    b2nd::test::TempDir tmp;
    SplitMix rng(10);
    b2nd::CreateOptions o;
    o.chunk_shape = {5, 6, 7};
    o.block_shape = {2, 3, 4};
    // Integers: exact. Zero chunks (never written) and a repeated-value region.
    auto ints = b2nd::create<std::int32_t>(tmp / "i.b2nd", {17, 13, 9}, o);
    xt::xarray<std::int32_t> mem = xt::zeros<std::int32_t>({17, 13, 9});
    const xt::xarray<std::int32_t> fill =
        xt::random::randint<std::int32_t>({17, 6, 9}, -100000, 100000);
    b2nd::write(ints, xt::all(), xt::range(0, 6), xt::all(), fill);
    xt::view(mem, xt::all(), xt::range(0, 6), xt::all()) = fill;
    b2nd::write(ints, xt::range(5, 10), xt::range(6, 12), xt::all(), -7);
    xt::view(mem, xt::range(5, 10), xt::range(6, 12), xt::all()) = -7;
    REQUIRE((b2nd::read(ints) == mem));
    const xt::xarray<std::int64_t> wide = xt::cast<std::int64_t>(mem);
    CHECK((b2nd::sum(ints) == xt::sum(wide)()));
    CHECK((b2nd::amin(ints) == xt::amin(mem)()));
    CHECK((b2nd::amax(ints) == xt::amax(mem)()));
    CHECK(b2nd::mean(ints) == Approx(xt::mean(wide)()));
    for (int axis = 0; axis < 3; ++axis) {
        INFO("axis " << axis);
        CHECK((b2nd::sum(ints, axis) == xt::sum(wide, {axis})));
        CHECK((b2nd::amin(ints, axis) == xt::amin(mem, {axis})));
        CHECK((b2nd::amax(ints, axis) == xt::amax(mem, {axis})));
        CHECK(xt::allclose(b2nd::mean(ints, axis), xt::mean(wide, {axis})));
    }
    CHECK((b2nd::sum(ints, -1) == xt::sum(wide, {2})));
    CHECK_THROWS_AS(b2nd::sum(ints, 3), b2nd::UsageError);
    // Floats, big-endian storage: within tolerance.
    b2nd::CreateOptions fo;
    fo.chunk_shape = {7, 9};
    fo.block_shape = {3, 4};
    auto be = b2nd::NDArray<double>(
        b2nd::AnyArray::create(tmp / "f.b2nd", b2nd::DType::parse(">f8"), {30, 40}, fo));
    const xt::xarray<double> fm = xt::random::rand<double>({30, 40}, -1.0, 1.0);
    b2nd::write(be, fm);
    CHECK(b2nd::sum(be) == Approx(xt::sum(fm)()).epsilon(1e-12));
    CHECK(xt::allclose(b2nd::sum(be, 1), xt::sum(fm, {1})));
    CHECK((b2nd::amin(be) == xt::amin(fm)()));
    auto empty = b2nd::create<float>(tmp / "e.b2nd", {0, 4});
    CHECK((b2nd::sum(empty) == 0.0));
    CHECK_THROWS_AS(b2nd::mean(empty), b2nd::UsageError);
}

TEST_CASE("xtensor: a corrupt chunk is a b2nd::Error everywhere, never a terminate", "[xtensor]") {
    b2nd::test::TempDir tmp;
    b2nd::CreateOptions o;
    o.chunk_shape = {16, 16};
    o.block_shape = {8, 8};
    const std::string path = tmp / "c.b2nd";
    {
        auto a = b2nd::create<float>(path, {64, 64}, o);
        b2nd::write(a, xt::arange<float>(64.0f));
    }
    // Garble bytes inside the compressed chunks (headers and index stay readable).
    b2nd::test::garble_middle(path);
    const auto a = b2nd::open<float>(path);
    auto out = b2nd::create<float>(tmp / "out.b2nd", {64, 64});
    // Through a stepper built inside xtensor's noexcept stepper_begin: must throw, not abort.
    CHECK_THROWS_AS(xt::xarray<float>(b2nd::view(a) * 2.0f), b2nd::FormatError);
    CHECK_THROWS_AS(xt::sum(b2nd::view(a))(), b2nd::FormatError);
    CHECK_THROWS_AS(b2nd::read(a), b2nd::FormatError);
    CHECK_THROWS_WITH(b2nd::sum(a), Catch::Matchers::Contains("c.b2nd"));
    CHECK_THROWS_AS(b2nd::mean(a, 1), b2nd::FormatError);
    CHECK_THROWS_AS(b2nd::evaluate(
                        out, [](const auto& x) { return x; }, a),
                    b2nd::FormatError);
}

TEST_CASE("xtensor: empty and zero-dimensional arrays", "[xtensor]") {
    b2nd::test::TempDir tmp;
    auto e = b2nd::create<float>(tmp / "e.b2nd", {0, 4});
    auto e2 = b2nd::create<float>(tmp / "e2.b2nd", {0, 4});
    b2nd::evaluate(
        e2, [](const auto& x) { return x + 1.0f; }, e);
    CHECK((b2nd::read(e).shape() == std::vector<std::size_t>{0, 4}));
    CHECK(b2nd::sum(e, 1).size() == 0);
    CHECK((b2nd::sum(e, 0) == xt::xarray<double>{0.0, 0.0, 0.0, 0.0}));
    const xt::xarray<float> lazy_empty = b2nd::view(e) * 2.0f;
    CHECK(lazy_empty.size() == 0);

    auto z = b2nd::create<double>(tmp / "z.b2nd", {});
    b2nd::write(z, 3.5);
    CHECK(b2nd::read(z)() == 3.5);
    b2nd::evaluate(
        z, [](const auto& x) { return x * 2.0; }, z);
    CHECK(z() == 7.0);
    CHECK(b2nd::sum(z) == 7.0);
    const xt::xarray<double> lz = b2nd::view(z) * 1.0;
    CHECK(lz() == 7.0);
    CHECK_THROWS_AS(b2nd::sum(z, 0), b2nd::UsageError);
}

TEST_CASE("xtensor: views and evaluate of a following array read one committed state",
          "[xtensor]") {
    b2nd::test::TempDir tmp;
    const std::string path = tmp / "src.b2nd";
    b2nd::CreateOptions co;
    co.chunk_shape = {4, 8};
    co.block_shape = {2, 8};
    auto writer = b2nd::create<float>(path, {16, 8}, co);
    b2nd::write(writer, 1.0f);
    b2nd::OpenOptions fo;
    fo.follow = true;
    const auto src = b2nd::open<float>(path, fo);

    // A lazy view made before a commit reads the state it was made on, slab by slab.
    const auto lazy = b2nd::LazyView<float>(src, b2nd::resolve(src.shape(), {}), 64);
    b2nd::write(writer, 2.0f);
    CHECK(xt::sum(lazy)() == Approx(16 * 8 * 1.0));
    CHECK(src(0, 0) == 2.0f);  // the handle itself follows

    // evaluate reads its inputs as they were when it started, even when a commit lands while
    // it runs (here: from inside the first chunk's function).
    auto out = b2nd::create<float>(tmp / "out.b2nd", {16, 8}, co);
    std::atomic<bool> committed{false};
    b2nd::EvaluateOptions eo;
    eo.nthreads = 1;
    b2nd::evaluate(
        out, eo,
        [&](const auto& x) {
            if (!committed.exchange(true)) {
                b2nd::write(writer, 3.0f);
            }
            return x + 0.0f;
        },
        src);
    CHECK(committed.load());
    CHECK(b2nd::amin(out) == 2.0f);
    CHECK(b2nd::amax(out) == 2.0f);
    CHECK(src(15, 7) == 3.0f);
}
