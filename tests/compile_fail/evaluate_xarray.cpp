// Must not compile: an in-memory xt::xarray is no input of b2nd::evaluate. The test checks that
// the compiler says so in words (a static_assert), not with a wall of template errors.
#include <b2nd/b2nd.hpp>
#include <b2nd/xtensor.hpp>

int main() {
    auto out = b2nd::NDArray<float>::create("out.b2nd", {4});
    xt::xarray<float> in = xt::zeros<float>({4});
    b2nd::evaluate(
        out, [](const auto& x) { return x * 2.0f; }, in);
}
