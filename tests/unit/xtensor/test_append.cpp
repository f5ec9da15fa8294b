// Appending xtensor expressions (xtensor/append.hpp): one slab, or many along the axis (in
// pieces, across chunk rows), converted to the array's type, from containers and from lazy views
// of another array; shapes that are neither are refused by name.

#include <catch2/catch.hpp>
#include <xtensor/xmath.hpp>

#include <b2nd/xtensor.hpp>

#include "../../support/temp_dir.hpp"

using b2nd::Shape;
using Catch::Matchers::Contains;

namespace {

b2nd::CreateOptions grid(const Shape& chunks, const Shape& blocks) {
    b2nd::CreateOptions o;
    o.chunk_shape = chunks;
    o.block_shape = blocks;
    o.nthreads = 2;
    return o;
}

}  // namespace

TEST_CASE("xtensor push: slabs of expressions along axis 0 and axis 1", "[xtensor][append]") {
    b2nd::test::TempDir tmp;
    SECTION("axis 0: a frame at a time, converted") {
        auto a = b2nd::NDArray<std::int16_t>::create(tmp / "a.b2nd", {0, 5, 6},
                                                     grid({3, 5, 6}, {2, 5, 3}));
        b2nd::Appender<std::int16_t> app(a, 0);
        xt::xarray<double> frame = xt::arange<double>(30.0);
        frame.reshape({5, 6});
        xt::xarray<std::int16_t> model = xt::zeros<std::int16_t>({7, 5, 6});
        for (int k = 0; k < 7; ++k) {
            b2nd::push(app, frame * 2.0 + static_cast<double>(k));  // a double expression
            xt::view(model, k) = xt::cast<std::int16_t>(frame * 2.0 + static_cast<double>(k));
        }
        app.close();
        const xt::xarray<std::int16_t> back =
            b2nd::read(b2nd::NDArray<std::int16_t>::open(tmp / "a.b2nd"));
        CHECK(xt::all(xt::equal(back, model)));
        CHECK(back.shape() == model.shape());
    }
    SECTION("axis 1: slabs of several extents, from a lazy view of another array") {
        const xt::xarray<float> src = xt::reshape_view(xt::arange<float>(4 * 9 * 3), {4, 9, 3});
        auto s = b2nd::NDArray<float>::create_from(tmp / "s.b2nd", {4, 9, 3},
                                                   std::vector<float>(src.begin(), src.end()),
                                                   grid({2, 4, 3}, {2, 2, 3}));
        auto a =
            b2nd::NDArray<float>::create(tmp / "t.b2nd", {4, 0, 3}, grid({2, 2, 3}, {1, 2, 3}));
        b2nd::Appender<float> app(a, 1);
        b2nd::push(app, b2nd::view(s, xt::all(), xt::range(0, 4)) * 10.0F);  // 4 slabs
        b2nd::push(app, b2nd::view(s, xt::all(), 4) * 10.0F);                // 1 slab (4, 3)
        b2nd::push(app, b2nd::view(s, xt::all(), xt::range(5, 9)) * 10.0F);  // 4 more
        app.close();
        const xt::xarray<float> expect = src * 10.0F;
        const xt::xarray<float> back = b2nd::read(b2nd::NDArray<float>::open(tmp / "t.b2nd"));
        CHECK(back.shape() == expect.shape());
        CHECK(xt::all(xt::equal(back, expect)));
    }
}

TEST_CASE("xtensor push: an expression of another shape is refused", "[xtensor][append]") {
    b2nd::test::TempDir tmp;
    auto a = b2nd::NDArray<std::int32_t>::create(tmp / "r.b2nd", {0, 4}, grid({2, 4}, {1, 4}));
    b2nd::Appender<std::int32_t> app(a, 0);
    const xt::xarray<std::int32_t> wrong = xt::zeros<std::int32_t>({3});
    CHECK_THROWS_WITH(b2nd::push(app, wrong),
                      Contains("r.b2nd") && Contains("(3,)") && Contains("neither a slab (4,)"));
    const xt::xarray<std::int32_t> wrong2 = xt::zeros<std::int32_t>({2, 5});
    CHECK_THROWS_AS(b2nd::push(app, wrong2), b2nd::UsageError);
    app.close();
    CHECK(b2nd::AnyArray::open(tmp / "r.b2nd").shape() == Shape{0, 4});
}
