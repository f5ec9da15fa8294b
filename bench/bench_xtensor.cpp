// xtensor-layer benchmark on the f32cube of BENCHMARKS.md (512^3 float32, chunks 128^3, blocks
// 32^3, zstd 1 + SHUFFLE) and a second array of the same geometry:
//   evaluate(out, a + b)   vs (1) reading a and b whole into xt::xarray and computing a + b in
//                          memory, (2) the same plus compressing and writing the result, and
//                          (3) element-wise evaluation through per-element array access (what
//                          xt::chunked_array-style code does), timed on a slab and scaled;
//   sum(a)                 vs reading a whole and xt::sum.
// Throughput is GB/s of uncompressed input.
//
//   build-bench/bench/bench_xtensor [--quick]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>

#include <xtensor/xmath.hpp>

#include <b2nd/xtensor.hpp>

#include "bench_common.hpp"

namespace {

using b2nd::bench::mix;

using Clock = std::chrono::steady_clock;

/// Best of `reps` runs (whole-array operations take seconds: no minimum time).
double best_of(int reps, const std::function<void()>& fn) {
    return b2nd::bench::best_seconds(fn, 0.0, reps);
}

void fill(b2nd::NDArray<float>& t, std::int64_t edge, double phase) {
    t.any().write_chunks(t.any().all_chunks(), [&](std::int64_t, const b2nd::Box& r,
                                                   std::uint8_t* out) {
        const double tp = 2 * M_PI;
        float* p = reinterpret_cast<float*>(out);
        for (std::int64_t i = r.start[0]; i < r.start[0] + r.count[0]; ++i) {
            for (std::int64_t j = r.start[1]; j < r.start[1] + r.count[1]; ++j) {
                for (std::int64_t k = r.start[2]; k < r.start[2] + r.count[2]; ++k) {
                    const auto flat = static_cast<std::uint64_t>((i * edge + j) * edge + k);
                    const double a = 20 * std::sin(tp * static_cast<double>(i) / 256 + phase) *
                                         std::cos(tp * static_cast<double>(j) / 300) +
                                     0.05 * static_cast<double>(j - 256) / 256;
                    const double u = static_cast<double>(mix(flat) >> 11) / 9007199254740992.0;
                    *p++ = static_cast<float>(a +
                                              10 * std::sin(tp * static_cast<double>(i + k) / 200) +
                                              0.01 * (u - 0.5));
                }
            }
        }
    });
}

void row(const char* what, int threads, double seconds, double bytes, double baseline) {
    std::printf("%-46s %2d  %9.1f ms  %6.2f GB/s", what, threads, seconds * 1e3,
                bytes / seconds / 1e9);
    if (baseline > 0) {
        std::printf("   %5.2fx the baseline's time", seconds / baseline);
    }
    std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
    const std::int64_t edge = quick ? 256 : 512;
    const b2nd::bench::WorkDir work("xtensor");
    const std::string& dir = work.path();
    b2nd::CreateOptions o;
    o.chunk_shape = {128, 128, 128};
    o.block_shape = {32, 32, 32};
    o.overwrite = true;
    o.cache_bytes = 0;
    const b2nd::Shape shape{edge, edge, edge};
    auto a = b2nd::create<float>(dir + "/a.b2nd", shape, o);
    auto b = b2nd::create<float>(dir + "/b.b2nd", shape, o);
    fill(a, edge, 0.0);
    fill(b, edge, 1.0);
    const double in_bytes = static_cast<double>(a.any().nbytes());  // per input
    std::printf(
        "f32cube %lld^3, zstd 1 + shuffle, chunks 128^3, blocks 32^3; GB/s of one input's "
        "bytes\n\n",
        static_cast<long long>(edge));
    const int reps = quick ? 2 : 3;
    for (int threads : {1, 2}) {
        a.any().set_nthreads(threads);
        b.any().set_nthreads(threads);
        auto out = b2nd::create<float>(dir + "/out.b2nd", shape, [&] {
            b2nd::CreateOptions oo = o;
            oo.nthreads = threads;
            return oo;
        }());

        // evaluate(out, a + b)
        const double ev = best_of(reps, [&] {
            b2nd::evaluate(
                out, [](const auto& x, const auto& y) { return x + y; }, a, b);
        });
        // (1) in memory: decompress both whole, add.
        double mem = 0, mem_write = 0;
        {
            xt::xarray<float> xa, xb, c;
            mem = best_of(reps, [&] {
                xa = b2nd::read(a);
                xb = b2nd::read(b);
                c = xa + xb;
            });
            // (2) ... and compress and write the result.
            mem_write = best_of(reps, [&] {
                xa = b2nd::read(a);
                xb = b2nd::read(b);
                c = xa + xb;
                b2nd::CreateOptions oo = o;
                oo.nthreads = threads;
                b2nd::NDArray<float>::create_from(dir + "/c.b2nd", shape, c.data(), c.size(), oo);
            });
            if (!(b2nd::read(out) == c)) {
                std::fprintf(stderr, "evaluate's result differs from the in-memory sum\n");
                return 1;
            }
        }
        // (3) element by element through per-element access, on a slab of 8 planes.
        const std::int64_t planes = 8;
        a.any().set_cache_bytes(std::size_t{1} << 30);
        b.any().set_cache_bytes(std::size_t{1} << 30);
        double checksum = 0;
        const double elem =
            best_of(1,
                    [&] {
                        for (std::int64_t i = 0; i < planes; ++i) {
                            for (std::int64_t j = 0; j < edge; ++j) {
                                for (std::int64_t k = 0; k < edge; ++k) {
                                    checksum += static_cast<double>(a(i, j, k) + b(i, j, k));
                                }
                            }
                        }
                    }) *
            static_cast<double>(edge) / static_cast<double>(planes);
        a.any().set_cache_bytes(0);
        b.any().set_cache_bytes(0);

        row("in memory: read a, b whole; c = a + b", threads, mem, in_bytes, 0);
        row("in memory, then compress and write c", threads, mem_write, in_bytes, 0);
        row("evaluate(out, a + b)", threads, ev, in_bytes, mem_write);
        std::printf("%-46s %2s  %35s %5.2fx (1)'s time\n", "", "", "", ev / mem);
        row("element-wise a(i,j,k) + b(i,j,k), scaled", threads, elem, in_bytes, 0);

        // Assigning expressions of lazy views to containers (slab-parallel, assign.hpp), against
        // the same expression over both arrays read whole into memory. The targets are
        // allocated and touched once, outside the timings.
        {
            const std::vector<std::size_t> full(shape.begin(), shape.end());
            xt::xarray<float> xa(full), xb(full), c(full), lazy(full);
            const double mem_expr = best_of(reps, [&] {
                xt::noalias(xa) = b2nd::view(a);
                xt::noalias(xb) = b2nd::view(b);
                xt::noalias(c) = xa + xb * 2.0f;
            });
            const double lazy_expr =
                best_of(reps, [&] { xt::noalias(lazy) = b2nd::view(a) + b2nd::view(b) * 2.0f; });
            if (!(lazy == c)) {
                std::fprintf(stderr, "the lazy assignment differs from the in-memory one\n");
                return 1;
            }
            row("in memory: read a, b; c = a + b * 2", threads, mem_expr, in_bytes, 0);
            row("c = view(a) + view(b) * 2", threads, lazy_expr, in_bytes, mem_expr);

            const std::vector<std::size_t> plane(full.begin() + 1, full.end());
            xt::xarray<float> s_mem(plane), s_lazy(plane);
            const double mem_red = best_of(reps, [&] {
                xt::noalias(xa) = b2nd::view(a);
                xt::noalias(s_mem) = xt::sum(xa * 2.0f, {0});
            });
            const double lazy_red =
                best_of(reps, [&] { xt::noalias(s_lazy) = xt::sum(b2nd::view(a) * 2.0f, {0}); });
            // Float sums in another order: equal up to rounding, relative to the sums' scale.
            const float scale = xt::amax(xt::abs(s_mem))();
            if (xt::amax(xt::abs(s_lazy - s_mem))() > 1e-5f * scale) {
                std::fprintf(stderr, "the lazy reduction differs from the in-memory one\n");
                return 1;
            }
            row("in memory: read a; xt::sum(a * 2, {0})", threads, mem_red, in_bytes, 0);
            row("xt::sum(view(a) * 2, {0})", threads, lazy_red, in_bytes, mem_red);

            const std::vector<std::size_t> lines(full.begin(), full.end() - 1);
            xt::xarray<float> m_mem(lines), m_lazy(lines);
            const double mem_mean = best_of(reps, [&] {
                xt::noalias(xa) = b2nd::view(a);
                xt::noalias(m_mem) = xt::amax(xa, {2});
            });
            const double lazy_mean =
                best_of(reps, [&] { xt::noalias(m_lazy) = xt::amax(b2nd::view(a), {2}); });
            if (!(m_lazy == m_mem)) {
                std::fprintf(stderr, "the lazy amax differs from the in-memory one\n");
                return 1;
            }
            row("in memory: read a; xt::amax(a, {2})", threads, mem_mean, in_bytes, 0);
            row("xt::amax(view(a), {2})", threads, lazy_mean, in_bytes, mem_mean);

            // A reducer evaluated in place steps through the view element by element.
            float stepped = 0;
            const double in_place = best_of(1, [&] { stepped = xt::sum(b2nd::view(a))(); });
            row("xt::sum(view(a))() (element by element)", threads, in_place, in_bytes, mem_red);
            (void)stepped;
        }

        // sum(a)
        const double s = best_of(reps, [&] { (void)b2nd::sum(a); });
        double ref = 0;
        const double sm = best_of(reps, [&] {
            const xt::xarray<float> xa = b2nd::read(a);
            ref = xt::sum(xa, xt::evaluation_strategy::immediate)();
        });
        row("in memory: read a whole; xt::sum", threads, sm, in_bytes, 0);
        row("b2nd::sum(a)", threads, s, in_bytes, sm);
        std::printf("(checks: sum %.6g vs %.6g; element-wise checksum %.3g)\n\n",
                    static_cast<double>(b2nd::sum(a)), ref, checksum);
    }
    return 0;
}
