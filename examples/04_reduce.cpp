// Reductions of arrays of any size, chunk by chunk in parallel: chunks that are uniform (never
// written, or filled with one value) are not even decoded.
#include <cstdio>

#include <b2nd/xtensor.hpp>

#include "example_dir.hpp"

int main() {
    const ExampleDir dir;  // removed, with the array, when main returns
    auto a =
        b2nd::create<std::int32_t>(dir / "reduce.b2nd", {1000, 1000});  // zeros: nothing stored
    b2nd::write(a, xt::range(0, 10), xt::all(), xt::arange<std::int32_t>(1000));
    b2nd::write(a, xt::range(500, 600), xt::range(0, 100), -3);
    const std::int64_t total = b2nd::sum(a);
    const xt::xarray<double> col_means = b2nd::mean(a, 0);
    std::printf("sum %lld, min %d, max %d, mean of column 999 %.4f\n",
                static_cast<long long>(total), b2nd::amin(a), b2nd::amax(a), col_means(999));
    return total == 10LL * 999 * 1000 / 2 - 3 * 100 * 100 && b2nd::amin(a) == -3 ? 0 : 1;
}
