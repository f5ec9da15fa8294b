// Assigning expressions over lazy views to containers (assign.hpp): element-wise functions and
// reducers of lazy views, containers and scalars equal the same expression over the arrays'
// contents in memory, for any slicing, broadcasting and number of slabs; the slab path holds a
// few slabs, not the arrays; errors reach the caller.

#include <catch2/catch.hpp>
#include <xtensor/xmath.hpp>

#include <b2nd/xtensor.hpp>

#include "../../support/files.hpp"
#include "../../support/temp_dir.hpp"

using b2nd::Shape;
using b2nd::test::SplitMix;

namespace {

template <class T>
struct Stored {
    b2nd::NDArray<T> arr;
    xt::xarray<T> mem;
};

/// An array of random values with these chunk and block shapes, and its content in memory.
template <class T>
Stored<T> stored(
    const std::string& path, SplitMix& rng, const Shape& shape, Shape chunks, Shape blocks) {
    xt::xarray<T> mem(std::vector<std::size_t>(shape.begin(), shape.end()));
    for (auto& x : mem) {
        x = static_cast<T>(static_cast<double>(rng.below(2000)) * 0.25 - 250.0);
    }
    b2nd::CreateOptions o;
    o.chunk_shape = std::move(chunks);
    o.block_shape = std::move(blocks);
    o.overwrite = true;
    std::vector<T> flat(mem.begin(), mem.end());
    return {b2nd::NDArray<T>::create_from(path, shape, flat, o), mem};
}

/// Makes slabs small for the scope of one test, so that small arrays take many slabs.
struct SmallSlabs {
    std::size_t saved = b2nd::xtensor_detail::assign_slab_bytes.load();
    explicit SmallSlabs(std::size_t bytes) { b2nd::xtensor_detail::assign_slab_bytes = bytes; }
    ~SmallSlabs() { b2nd::xtensor_detail::assign_slab_bytes = saved; }
};

}  // namespace

TEST_CASE("assign: element-wise expressions of lazy views equal the same in memory",
          "[xtensor][assign]") {
    b2nd::test::TempDir tmp;
    SplitMix rng(21);
    auto a = stored<float>(tmp / "a.b2nd", rng, {70, 45, 33}, {16, 20, 33}, {8, 10, 11});
    auto b = stored<double>(tmp / "b.b2nd", rng, {70, 45, 33}, {32, 45, 16}, {5, 9, 16});
    auto n = stored<std::int32_t>(tmp / "n.b2nd", rng, {70, 45, 33}, {70, 45, 33}, {7, 45, 33});
    const auto slab_bytes = GENERATE(std::size_t{1}, std::size_t{40000}, std::size_t{8} << 20);
    const int threads = GENERATE(1, 2);
    CAPTURE(slab_bytes, threads);
    const SmallSlabs small(slab_bytes);
    a.arr.any().set_nthreads(threads);

    const auto va = b2nd::view(a.arr);
    const auto vb = b2nd::view(b.arr);
    {
        const xt::xarray<double> got = va + vb * 2.0;
        const xt::xarray<double> want = a.mem + b.mem * 2.0;
        CHECK((got == want));
    }
    {  // math functions, casts, a fixed-rank container as the target
        const xt::xtensor<double, 3> got =
            xt::sqrt(xt::abs(va)) + xt::cast<double>(b2nd::view(n.arr)) - xt::sin(vb);
        const xt::xtensor<double, 3> want =
            xt::sqrt(xt::abs(a.mem)) + xt::cast<double>(n.mem) - xt::sin(b.mem);
        CHECK((got == want));
    }
    {  // sliced views, an integer index, a negative step, and a container leaf
        const auto sa = b2nd::view(a.arr, xt::range(3, 60), xt::all(), xt::range(1, 31, 2));
        const auto sb = b2nd::view(b.arr, xt::range(69, 12, -1), xt::all(), xt::range(0, 15));
        const xt::xarray<double> c =
            xt::view(b.mem, xt::range(13, 70), xt::all(), xt::range(0, 15));
        const xt::xarray<double> got = sa * sb + c;
        const xt::xarray<double> want =
            xt::view(a.mem, xt::range(3, 60), xt::all(), xt::range(1, 31, 2)) *
                xt::view(b.mem, xt::range(69, 12, -1), xt::all(), xt::range(0, 15)) +
            c;
        CHECK((got == want));
        const xt::xarray<float> plane = b2nd::view(a.arr, xt::all(), 5, xt::all()) + 1.0f;
        CHECK((plane == xt::view(a.mem, xt::all(), 5, xt::all()) + 1.0f));
    }
    {  // broadcast leaves: a row, a column container, a first extent of 1, a scalar
        const auto row = b2nd::view(b.arr, 0, 0, xt::all());  // shape {33}
        const auto top = b2nd::view(a.arr, xt::range(0, 1));  // shape {1, 45, 33}
        xt::xarray<double> col = xt::arange<double>(70.0);
        col.reshape({70, 1, 1});
        const xt::xarray<double> got = va + row * col - top + 1.5;
        const xt::xarray<double> want =
            a.mem + xt::view(b.mem, 0, 0, xt::all()) * col - xt::view(a.mem, xt::range(0, 1)) + 1.5;
        CHECK((got == want));
    }
    {  // computed assignment and noalias into an existing container
        xt::xarray<double> acc = b.mem;
        acc += va * 3.0f;
        CHECK((acc == b.mem + a.mem * 3.0f));
        xt::xarray<float> out(std::vector<std::size_t>{70, 45, 33});
        xt::noalias(out) = va - 2.0f;
        CHECK((out == a.mem - 2.0f));
        const auto evaluated = xt::eval(va * va);
        CHECK((evaluated == a.mem * a.mem));
    }
}

TEST_CASE("assign: reducers over lazy expressions equal xtensor's in memory", "[xtensor][assign]") {
    b2nd::test::TempDir tmp;
    SplitMix rng(22);
    auto a = stored<float>(tmp / "a.b2nd", rng, {61, 24, 19}, {16, 8, 19}, {4, 8, 10});
    auto b = stored<double>(tmp / "b.b2nd", rng, {61, 24, 19}, {61, 24, 19}, {13, 24, 19});
    const auto slab_bytes = GENERATE(std::size_t{1}, std::size_t{20000}, std::size_t{8} << 20);
    const int threads = GENERATE(1, 2);
    CAPTURE(slab_bytes, threads);
    const SmallSlabs small(slab_bytes);
    a.arr.any().set_nthreads(threads);
    const auto va = b2nd::view(a.arr);
    const auto vb = b2nd::view(b.arr);
    const xt::xarray<double> prod = xt::cast<double>(a.mem) * 2.0 - b.mem;

    // Values are multiples of 1/4 below 2^12 in magnitude, so sums of a few thousand are exact
    // in double whatever the order: the comparisons can be exact.
    const xt::xarray<double> s0 = xt::sum(va * 2.0 - vb, {0});
    CHECK((s0 == xt::sum(prod, {0})));
    const xt::xarray<double> s1 = xt::sum(va * 2.0 - vb, {1});
    CHECK((s1 == xt::sum(prod, {1})));
    const xt::xarray<double> s02 = xt::sum(va * 2.0 - vb, {0, 2});
    CHECK((s02 == xt::sum(prod, {0, 2})));
    const xt::xarray<double> all = xt::sum(va * 2.0 - vb);
    CHECK(all() == xt::sum(prod)());
    const xt::xarray<double> kept = xt::sum(va * 2.0 - vb, {0}, xt::keep_dims);
    CHECK((kept == xt::sum(prod, {0}, xt::keep_dims)));
    const xt::xarray<float> hi = xt::amax(va, {0, 1});
    CHECK((hi == xt::amax(a.mem, {0, 1})));
    const xt::xarray<float> lo = xt::amin(va, {2});
    CHECK((lo == xt::amin(a.mem, {2})));
    // An initial value counts once, also when the first axis is reduced.
    const xt::xarray<double> init = xt::sum(vb, {0}, xt::initial(5.0));
    CHECK((init == xt::sum(b.mem, {0}, xt::initial(5.0))));
    // mean is a function of a reducer: the reducer is evaluated first, then the division.
    const xt::xarray<double> m0 = xt::mean(va * 2.0 - vb, {0});
    CHECK(xt::allclose(m0, xt::mean(prod, {0})));
    const xt::xarray<double> m = xt::mean(va * 2.0 - vb, {1}) + xt::sum(vb, {1});
    CHECK(xt::allclose(m, xt::mean(prod, {1}) + xt::sum(b.mem, {1})));
    // Through xt::eval, and a reducer inside an element-wise function of lazy views.
    CHECK((xt::eval(xt::sum(vb, {2})) == xt::sum(b.mem, {2})));
    const xt::xarray<double> centered = vb - xt::mean(vb, {0});
    CHECK(xt::allclose(centered, b.mem - xt::mean(b.mem, {0})));
    // Evaluated in place, element by element (not this path): still right.
    CHECK(xt::sum(va)() == Approx(xt::sum(a.mem)()));
}

TEST_CASE("assign: expressions it does not split are still right", "[xtensor][assign]") {
    b2nd::test::TempDir tmp;
    SplitMix rng(23);
    auto a = stored<float>(tmp / "a.b2nd", rng, {12, 10, 9}, {4, 5, 9}, {2, 5, 3});
    const SmallSlabs small(1);
    const auto va = b2nd::view(a.arr);
    const xt::xarray<float> t = xt::transpose(va) + 1.0f;
    CHECK((t == xt::transpose(a.mem) + 1.0f));
    const xt::xarray<float> v = xt::view(va * 2.0f, xt::range(1, 5), 3);
    CHECK((v == xt::view(a.mem * 2.0f, xt::range(1, 5), 3)));
    const xt::xarray<float> bc = xt::broadcast(b2nd::view(a.arr, 0), {3, 10, 9});
    CHECK((bc == xt::broadcast(xt::view(a.mem, 0), {3, 10, 9})));
    // A leaf broadcast along a dimension of extent 1, stepped element by element.
    const xt::xarray<float> stepped = xt::view(va - b2nd::view(a.arr, xt::range(0, 1)), xt::all());
    CHECK((stepped == a.mem - xt::view(a.mem, xt::range(0, 1))));
    // Backwards through the steppers.
    const std::vector<float> backwards(va.crbegin(), va.crend());
    CHECK((backwards == std::vector<float>(a.mem.crbegin(), a.mem.crend())));
    // A column-major target.
    xt::xarray<float, xt::layout_type::column_major> cm = va * 2.0f;
    CHECK((cm == a.mem * 2.0f));
    // A zero-dimensional view inside an expression.
    const xt::xarray<float> zero = b2nd::view(a.arr, 1, 2, 3) * 2.0f;
    CHECK(zero() == a.mem(1, 2, 3) * 2.0f);
}

TEST_CASE("assign: slab by slab holds a few slabs, not the arrays", "[xtensor][assign]") {
    b2nd::test::TempDir tmp;
    SplitMix rng(24);
    // 8 MiB per array; slabs of 8 rows (the blocks' height) are 512 KiB per leaf.
    auto a = stored<float>(tmp / "a.b2nd", rng, {128, 128, 128}, {32, 64, 128}, {8, 64, 128});
    auto b = stored<float>(tmp / "b.b2nd", rng, {128, 128, 128}, {64, 128, 128}, {8, 128, 128});
    a.arr.any().set_nthreads(2);
    const SmallSlabs small(64 * 1024);
    xt::xarray<float> out(std::vector<std::size_t>{128, 128, 128});
    // A first run: the pool's threads make the engine's per-thread decode scratch.
    xt::noalias(out) = b2nd::view(a.arr) + b2nd::view(b.arr);
    const auto before = b2nd::memory_stats();
    b2nd::reset_memory_peak();
    xt::noalias(out) = b2nd::view(a.arr) - b2nd::view(b.arr);
    const auto after = b2nd::memory_stats();
    CHECK((out == a.mem - b.mem));
    // Two threads, two leaves, a slab of each in flight, plus the engine's decode scratch.
    CHECK(after.peak - before.current < 4 * 1024 * 1024);
    CHECK(after.current == before.current);  // scratch returned
}

TEST_CASE("assign: a corrupt chunk is a b2nd::Error from a slab", "[xtensor][assign]") {
    b2nd::test::TempDir tmp;
    const std::string path = tmp / "c.b2nd";
    {
        b2nd::CreateOptions o;
        o.chunk_shape = {16, 16};
        o.block_shape = {8, 8};
        auto a = b2nd::create<float>(path, {64, 64}, o);
        b2nd::write(a, xt::arange<float>(64.0f));
    }
    b2nd::test::garble_middle(path);
    auto a = b2nd::open<float>(path);
    a.any().set_nthreads(2);
    const SmallSlabs small(1);
    CHECK_THROWS_WITH(xt::xarray<float>(b2nd::view(a) * 2.0f), Catch::Matchers::Contains("c.b2nd"));
    CHECK_THROWS_AS(xt::xarray<float>(xt::sum(b2nd::view(a), {0})), b2nd::FormatError);
    // Failing again and again holds nothing more: the slabs' scratch goes back. What may grow is
    // the engine's per-thread scratch (a decoded block, 256 bytes here) of a pool thread that
    // had not taken part in a failure yet; a leak of even one block per failure would add
    // 20 x 256 bytes.
    const auto before = b2nd::memory_stats().current;
    for (int rep = 0; rep < 20; ++rep) {
        CHECK_THROWS_AS(xt::xarray<float>(b2nd::view(a) * 2.0f), b2nd::FormatError);
        CHECK_THROWS_AS(xt::xarray<float>(xt::sum(b2nd::view(a), {0})), b2nd::FormatError);
    }
    CHECK(b2nd::memory_stats().current <= before + 2 * 256);
}
