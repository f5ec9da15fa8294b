// Zarr arrays in xtensor pipelines: a Zarr array (here one b2nd wrote, sharded) is a lazy view
// like any array, and `evaluate` computes from it into a b2nd array chunk by chunk.
#include <catch2/catch.hpp>
#include <xtensor/xmath.hpp>

#include <b2nd/xtensor.hpp>

#include "../../support/temp_dir.hpp"

TEST_CASE("xtensor bridges: views of a Zarr array and evaluate from it into b2nd",
          "[xtensor][bridges]") {
    b2nd::test::TempDir tmp;
    xt::xarray<float> mem = xt::arange<float>(0.0F, 24.0F * 20 * 9).reshape({24, 20, 9});
    b2nd::CreateOptions o;
    o.chunk_shape = {8, 10, 9};
    o.block_shape = {4, 5, 3};
    const std::vector<float> flat(mem.begin(), mem.end());
    const auto a = b2nd::NDArray<float>::create_from(tmp / "a.b2nd", {24, 20, 9}, flat, o);
    b2nd::export_zarr(a.any(), tmp / "a.zarr");
    const auto z = b2nd::open<float>(tmp / "a.zarr");

    const xt::xarray<float> plane = b2nd::view(z, xt::all(), 7, xt::range(1, 9, 2)) * 2.0F;
    CHECK((plane == xt::view(mem, xt::all(), 7, xt::range(1, 9, 2)) * 2.0F));

    auto out = b2nd::create<float>(tmp / "out.b2nd", {24, 20, 9}, o);
    b2nd::evaluate(
        out, [](const auto& x, const auto& y) { return xt::sqrt(x) + y; }, z, a);
    CHECK((b2nd::read(out) == xt::sqrt(mem) + mem));
}
