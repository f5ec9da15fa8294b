// An out-of-core pipeline: anomaly = field - climatology, computed chunk by chunk in parallel
// with a memory budget, whatever the size of the arrays. The climatology (2-D) broadcasts
// along the field's first axis.
#include <cmath>
#include <cstdio>

#include <b2nd/xtensor.hpp>

#include "example_dir.hpp"

int main() {
    const ExampleDir dir;  // removed, with the arrays, when main returns
    b2nd::CreateOptions o;
    o.chunk_shape = {8, 60, 80};  // 150 KiB chunks: many of them, a few in memory at a time
    o.block_shape = {4, 30, 40};
    auto field = b2nd::create<float>(dir / "field.b2nd", {48, 120, 160}, o);
    b2nd::evaluate(
        field, [](const auto& x) { return x + 10.0f; }, field);  // a constant field
    auto clim = b2nd::create<float>(dir / "clim.b2nd", {120, 160});
    b2nd::write(clim, xt::arange<float>(160.0f) * 0.01f);

    auto anomaly = b2nd::create<float>(dir / "anomaly.b2nd", field.shape(), o);
    b2nd::EvaluateOptions eo;
    eo.memory_budget = std::size_t{4} << 20;
    eo.progress = [](std::int64_t done, std::int64_t total) {
        if (done == total) {
            std::printf("%lld chunks evaluated\n", static_cast<long long>(total));
        }
    };
    b2nd::evaluate(
        anomaly, eo, [](const auto& f, const auto& c) { return f - c; }, field, clim);
    const float v = anomaly(47, 119, 159);
    std::printf("anomaly(47, 119, 159) = %.2f\n", static_cast<double>(v));
    return std::fabs(v - (10.0f - 1.59f)) < 1e-4f ? 0 : 1;
}
