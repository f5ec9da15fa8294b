// Writes from xtensor expressions: any expression, broadcast to the selected region, is
// encoded chunk by chunk; partly covered chunks are read, patched and re-encoded.
#include <cstdio>

#include <b2nd/xtensor.hpp>

#include "example_dir.hpp"

using xt::placeholders::_;

int main() {
    const ExampleDir dir;  // removed, with the array, when main returns
    auto a = b2nd::create<double>(dir / "write.b2nd", {64, 64});
    const xt::xarray<double> ramp = xt::linspace<double>(0.0, 1.0, 64);
    b2nd::write(a, xt::range(0, 32), xt::all(), ramp);                // rows 0-31: a ramp per row
    b2nd::write(a, xt::range(32, 64), xt::all(), 7.0);                // rows 32-63: a constant
    b2nd::write(a, xt::range(0, 64, 8), 0, xt::arange<double>(8.0));  // every 8th row, column 0
    const xt::xarray<double> back = b2nd::read(a, xt::range(30, 34), xt::range(_, 2));
    std::printf("rows 30-33, columns 0-1:\n");
    for (std::size_t i = 0; i < back.shape()[0]; ++i) {
        std::printf("  %.3f %.3f\n", back(i, 0), back(i, 1));
    }
    return back(2, 1) == 7.0 && back(0, 1) == ramp(1) && b2nd::read(a, 32, 0)() == 4.0 ? 0 : 1;
}
