// The b2nd-cpp demo, end to end: a synthetic 3-D temperature field of 256 MiB is generated
// straight to a compressed b2nd file (chunk by chunk, never whole in memory), described, read
// in slices, run through an out-of-core anomaly pipeline (field minus its mean over time) and
// reduced. Every step prints its time.
//
//   demo               works in a fresh temporary directory, removed at the end
//   demo --keep DIR    works in DIR (created if missing) and leaves the arrays there
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include <b2nd/xtensor.hpp>

#include "example_dir.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::uint64_t mix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/// The f32cube field of BENCHMARKS.md at (i, j, k) of a (., 512, 512) cube.
float field(std::int64_t i, std::int64_t j, std::int64_t k) {
    const double tp = 2 * M_PI;
    const auto flat = static_cast<std::uint64_t>((i * 512 + j) * 512 + k);
    const double a = 20 * std::sin(tp * static_cast<double>(i) / 256) *
                         std::cos(tp * static_cast<double>(j) / 300) +
                     0.05 * static_cast<double>(j - 256) / 256;
    const double u = static_cast<double>(mix(flat) >> 11) / 9007199254740992.0;
    return static_cast<float>(a + 10 * std::sin(tp * static_cast<double>(i + k) / 200) +
                              0.01 * (u - 0.5));
}

void step(const char* what, double seconds, const std::string& detail) {
    std::printf("  %-34s %8.1f ms   %s\n", what, seconds * 1e3, detail.c_str());
}

std::string gbs(double bytes, double seconds) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f GB/s", bytes / seconds / 1e9);
    return b;
}

}  // namespace

int main(int argc, char** argv) {
    if (!(argc == 1 || (argc == 3 && std::string(argv[1]) == "--keep"))) {
        std::fprintf(stderr, "usage: demo [--keep DIR]\n");
        return 2;
    }
    // Declared first, so that it is removed after every array in it is closed.
    const ExampleDir dir = argc == 3 ? ExampleDir(argv[2]) : ExampleDir();
    const b2nd::Shape shape{256, 512, 512};
    const double nbytes = 256.0 * 512 * 512 * 4;
    b2nd::CreateOptions o;  // Zstd 1 + SHUFFLE; chunk and block shapes from the CPU caches
    o.overwrite = true;
    std::printf("b2nd-cpp demo: a (256, 512, 512) float32 field, 256 MiB, in %s\n\n",
                dir.path().c_str());

    // 1. Generate straight to disk, chunk by chunk.
    auto t0 = Clock::now();
    auto t = b2nd::create<float>(dir / "temperature.b2nd", shape, o);
    t.any().write_chunks(
        t.any().all_chunks(), [](std::int64_t, const b2nd::Box& r, std::uint8_t* out) {
            float* p = reinterpret_cast<float*>(out);
            for (std::int64_t i = 0; i < r.count[0]; ++i) {
                for (std::int64_t j = 0; j < r.count[1]; ++j) {
                    for (std::int64_t k = 0; k < r.count[2]; ++k) {
                        *p++ = field(r.start[0] + i, r.start[1] + j, r.start[2] + k);
                    }
                }
            }
        });
    step("generate and compress", since(t0), gbs(nbytes, since(t0)));

    // 2. What is on disk.
    const auto a = b2nd::open<float>(dir / "temperature.b2nd");
    std::printf("\n  shape %s, dtype %s, chunks %s, blocks %s\n",
                b2nd::to_string(a.shape()).c_str(), a.dtype().str().c_str(),
                b2nd::to_string(a.chunk_shape()).c_str(), b2nd::to_string(a.block_shape()).c_str());
    std::printf("  %s, %.1f MiB on disk, compression ratio %.2f\n\n",
                std::string(b2nd::codec::codec_name(a.any().compression().codec)).c_str(),
                static_cast<double>(a.any().cbytes()) / (1 << 20),
                nbytes / static_cast<double>(a.any().cbytes()));

    // 3. Slices: only the touched blocks are decoded.
    t0 = Clock::now();
    const float x = a(120, 40, 7);
    step("a(120, 40, 7)", since(t0), "one block decoded: " + std::to_string(x));
    t0 = Clock::now();
    const float y = a(120, 41, 7);
    step("a(120, 41, 7)", since(t0), "same block, from the cache: " + std::to_string(y));
    t0 = Clock::now();
    const xt::xarray<float> plane = b2nd::read(a, xt::all(), 100, xt::all());
    step("a[:, 100, :]", since(t0), gbs(static_cast<double>(plane.size()) * 4, since(t0)));
    t0 = Clock::now();
    const xt::xarray<float> day = b2nd::read(a, 7, xt::all(), xt::all());
    step("a[7, :, :]", since(t0), gbs(static_cast<double>(day.size()) * 4, since(t0)));
    t0 = Clock::now();
    const auto lazy = b2nd::view(a, xt::range(0, 64), xt::range(0, 512, 4), xt::range(0, 512, 4));
    const double lazy_mean = static_cast<double>(xt::mean(lazy)());
    step("mean of a lazy strided view", since(t0), std::to_string(lazy_mean));

    // 4. Climatology: the mean over time, chunk by chunk in parallel.
    t0 = Clock::now();
    const xt::xarray<double> clim_mem = b2nd::mean(a, 0);
    b2nd::CreateOptions o2 = o;
    auto clim = b2nd::create<float>(dir / "climatology.b2nd", {512, 512}, o2);
    b2nd::write(clim, clim_mem);
    step("climatology = mean(a, axis 0)", since(t0), gbs(nbytes, since(t0)));

    // 5. Anomaly pipeline: out of core, within a memory budget.
    auto anomaly = b2nd::create<float>(dir / "anomaly.b2nd", shape, o);
    b2nd::EvaluateOptions eo;
    eo.memory_budget = std::size_t{128} << 20;
    b2nd::reset_memory_peak();
    const std::int64_t before = b2nd::memory_stats().current;
    t0 = Clock::now();
    b2nd::evaluate(
        anomaly, eo, [](const auto& f, const auto& c) { return f - c; }, a, clim);
    const double pipeline = since(t0);
    step("anomaly = a - climatology", pipeline,
         gbs(nbytes, pipeline) + ", peak " +
             std::to_string((b2nd::memory_stats().peak - before) >> 20) +
             " MiB of a 128 MiB budget");

    // 6. Reductions of the result.
    t0 = Clock::now();
    const double mean = b2nd::mean(anomaly);
    const float lo = b2nd::amin(anomaly);
    const float hi = b2nd::amax(anomaly);
    char buf[96];
    std::snprintf(buf, sizeof buf, "mean %.2e (about 0), range [%.2f, %.2f]", mean,
                  static_cast<double>(lo), static_cast<double>(hi));
    step("mean, min, max of the anomaly", since(t0), buf);

    const bool ok =
        x == field(120, 40, 7) && plane(5, 9) == field(5, 100, 9) && std::fabs(mean) < 1e-3;
    std::printf("\n%s\n", ok ? "all checks passed" : "CHECK FAILED");
    if (dir.kept()) {
        std::printf("(the arrays stay in %s; try: build/b2nd info %s)\n", dir.path().c_str(),
                    (dir / "temperature.b2nd").c_str());
    } else {
        std::printf(
            "(the arrays were in a temporary directory, now removed; "
            "demo --keep DIR keeps them)\n");
    }
    return ok ? 0 : 1;
}
