// Lazy views: slice an array on disk with xtensor slices; nothing is decoded until the view is
// used, and then only the blocks it touches.
#include <cstdio>

#include <xtensor/xmath.hpp>

#include <b2nd/xtensor.hpp>

#include "example_dir.hpp"

using xt::placeholders::_;

int main() {
    const ExampleDir dir;  // removed, with the array, when main returns
    auto t = b2nd::create<float>(dir / "views.b2nd", {100, 200, 300});
    b2nd::write(t, xt::arange<float>(300.0f));  // broadcast along the first two axes

    auto day = b2nd::view(t, 7, xt::all(), xt::range(0, 300, 10));    // a lazy (200, 30) window
    auto corner = b2nd::view(day, xt::range(0, 5), xt::range(_, 3));  // a view of the view
    std::printf("day: shape (%zu, %zu), mean %.1f\n", day.shape()[0], day.shape()[1],
                static_cast<double>(xt::mean(day)()));
    const xt::xarray<float> c = corner;  // one read, straight into `c`
    std::printf("corner(4, 2) = %.1f\n", static_cast<double>(c(4, 2)));
    const xt::xarray<float> scaled = day * 2.0f + 1.0f;  // views work inside expressions
    std::printf("scaled(0, 29) = %.1f\n", static_cast<double>(scaled(0, 29)));
    return c(4, 2) == 20.0f && scaled(0, 29) == 581.0f ? 0 : 1;
}
