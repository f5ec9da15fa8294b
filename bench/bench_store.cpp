// python-blosc2 stores and persisted expressions (docs/stores.md):
//   open     Store::open of a .b2z and a .b2d of 1,000 leaves (ms; range over 30 runs);
//   leaf     full read of the f32cube (BENCHMARKS.md) as a .b2z member vs the same array in its
//            own file, runs interleaved, 1 and 2 threads: GB/s and the ratio of times, per run;
//   expr     a persisted expression `a * b + sin(c)` over three f32cube-sized operands,
//            materialized (b2nd::copy of the carrier) vs b2nd::evaluate with the same function
//            in C++ into an array of the same parameters: ratio of times, per run.
// Ranges are min-max over runs; buffers are allocated and touched before timing.
//
//   build-bench/bench/bench_store [--quick]      (--quick: 256^3 cubes, fewer runs)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <xtensor/xmath.hpp>

#include <b2nd/objects.hpp>
#include <b2nd/store.hpp>
#include <b2nd/xtensor.hpp>

#include "bench_common.hpp"

namespace fs = std::filesystem;

namespace {

using b2nd::bench::Range;
using b2nd::bench::seconds;

}  // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
    const std::int64_t edge = quick ? 256 : 512;
    const int runs = quick ? 3 : 5;
    const b2nd::bench::WorkDir work("store");
    const std::string& dir = work.path();

    // ---- open: 1,000 leaves ----
    {
        std::vector<float> v(64, 1.0f);
        const auto leaf = b2nd::AnyArray::create_in_memory_from(
            b2nd::dtype_of<float>(), {64},
            {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * 4});
        for (const char* form : {"many.b2z", "many.b2d"}) {
            auto w = b2nd::StoreWriter::create(dir + "/" + form);  // threshold 0: 1,000 files
            for (int i = 0; i < 1000; ++i) {
                w.put("/g" + std::to_string(i / 100) + "/leaf" + std::to_string(i), leaf);
            }
            w.commit();
            Range r;
            std::size_t keys = 0;
            for (int k = 0; k < 30; ++k) {
                r.add(
                    seconds([&] { keys = b2nd::Store::open(dir + "/" + form).entries().size(); }));
            }
            std::printf("open %-9s 1,000 leaves (%zu keys): %.2f-%.2f ms\n", form, keys, r.lo * 1e3,
                        r.hi * 1e3);
        }
    }

    // ---- the three operands ----
    b2nd::CreateOptions o;
    o.chunk_shape = {128, 128, 128};
    o.block_shape = {32, 32, 32};
    o.overwrite = true;
    o.cache_bytes = 0;
    auto a = b2nd::bench::f32cube_array(dir + "/a.b2nd", edge, 1.0f, 0.0f, o);
    auto b = b2nd::bench::f32cube_array(dir + "/b.b2nd", edge, 0.5f, 1.0f, o);
    auto c = b2nd::bench::f32cube_array(dir + "/c.b2nd", edge, 0.1f, -2.0f, o);
    const double cube_bytes = static_cast<double>(a.any().nbytes());
    std::printf("\nf32cube %lld^3 (%.0f MiB), zstd 1 + shuffle, chunks 128^3, blocks 32^3\n",
                static_cast<long long>(edge), cube_bytes / 1048576.0);

    // ---- leaf: a .b2z member vs its own file ----
    {
        b2nd::StoreOptions so;
        so.overwrite = true;
        auto w = b2nd::StoreWriter::create(dir + "/cube.b2z", so);
        w.put("/a", a.any());
        w.commit();
        const b2nd::Store s = b2nd::Store::open(dir + "/cube.b2z");
        std::vector<std::uint8_t> buf(static_cast<std::size_t>(a.any().nbytes()), 1);  // touched
        for (int threads : {1, 2}) {
            b2nd::OpenOptions ro;
            ro.nthreads = threads;
            ro.cache_bytes = 0;
            const b2nd::AnyArray own = b2nd::AnyArray::open(dir + "/a.b2nd", ro);
            const b2nd::AnyArray member = s.open_array("/a", ro);
            const b2nd::Box all = b2nd::Box::whole(own.shape());
            own.read(all, buf.data(), buf.size());  // warm the page cache
            member.read(all, buf.data(), buf.size());
            Range t_own, t_member, ratio;
            for (int k = 0; k < runs; ++k) {
                const double x = seconds([&] { own.read(all, buf.data(), buf.size()); });
                const double y = seconds([&] { member.read(all, buf.data(), buf.size()); });
                t_own.add(cube_bytes / x / 1e9);
                t_member.add(cube_bytes / y / 1e9);
                ratio.add(y / x);
            }
            std::printf(
                "leaf full read, %d thread%s: own file %.2f-%.2f GB/s, .b2z member "
                "%.2f-%.2f GB/s, member/own time %.2f-%.2f\n",
                threads, threads == 1 ? " " : "s", t_own.lo, t_own.hi, t_member.lo, t_member.hi,
                ratio.lo, ratio.hi);
        }
    }

    // ---- expr: a persisted expression vs evaluate in C++ ----
    {
        const std::string carrier = dir + "/expr.b2nd";
        b2nd::CreateOptions co = o;
        co.metalayers = {
            {"b2o", b2nd::Value::map({{"kind", "lazyexpr"}, {"version", 1}}).to_msgpack()}};
        {
            auto e =
                b2nd::AnyArray::create(carrier, b2nd::dtype_of<float>(), {edge, edge, edge}, co);
            const auto ref = [](const char* p) {
                return b2nd::Value::map({{"kind", "urlpath"}, {"version", 1}, {"urlpath", p}});
            };
            e.attrs().set("b2o", b2nd::Value::map({{"kind", "lazyexpr"},
                                                   {"version", 1},
                                                   {"expression", "a * b + sin(c)"},
                                                   {"operands", b2nd::Value::map({
                                                                    {"a", ref("a.b2nd")},
                                                                    {"b", ref("b.b2nd")},
                                                                    {"c", ref("c.b2nd")},
                                                                })}}));
        }
        for (int threads : {1, 2}) {
            b2nd::OpenOptions ro;
            ro.nthreads = threads;
            ro.cache_bytes = 0;  // every run computes (a cache would serve repeats)
            const b2nd::AnyArray lazy = b2nd::AnyArray::open(carrier, ro);
            a.any().set_nthreads(threads);
            b.any().set_nthreads(threads);
            c.any().set_nthreads(threads);
            b2nd::CreateOptions oo = o;
            oo.nthreads = threads;
            b2nd::CopyOptions cp;
            cp.nthreads = threads;
            cp.overwrite = true;
            Range t_ev, t_lazy, ratio;
            for (int k = 0; k < runs; ++k) {
                const double x = seconds([&] {
                    auto out = b2nd::create<float>(dir + "/out_eval.b2nd", {edge, edge, edge}, oo);
                    b2nd::evaluate(
                        out,
                        [](const auto& p, const auto& q, const auto& r) {
                            return p * q + xt::sin(r);
                        },
                        a, b, c);
                });
                const double y =
                    seconds([&] { (void)b2nd::copy(lazy, dir + "/out_lazy.b2nd", cp); });
                t_ev.add(3 * cube_bytes / x / 1e9);
                t_lazy.add(3 * cube_bytes / y / 1e9);
                ratio.add(y / x);
                if (std::getenv("B2ND_BENCH_VERBOSE") != nullptr) {
                    std::printf("  run %d: evaluate %.3f s, expression %.3f s\n", k, x, y);
                }
            }
            // The two results agree (float32 sin of the C library either way).
            double worst = 0;
            const auto e1 = b2nd::read(b2nd::NDArray<float>::open(dir + "/out_eval.b2nd"));
            const auto e2 = b2nd::read(b2nd::NDArray<float>::open(dir + "/out_lazy.b2nd"));
            for (std::size_t i = 0; i < e1.size(); i += 97) {
                worst =
                    std::max(worst, static_cast<double>(std::fabs(e1.data()[i] - e2.data()[i])));
            }
            std::printf(
                "expr a * b + sin(c), %d thread%s: evaluate %.2f-%.2f GB/s, persisted "
                "expression %.2f-%.2f GB/s (of the 3 inputs), expression/evaluate time "
                "%.2f-%.2f; largest difference %.3g\n",
                threads, threads == 1 ? " " : "s", t_ev.lo, t_ev.hi, t_lazy.lo, t_lazy.hi, ratio.lo,
                ratio.hi, worst);
        }
    }
    return 0;
}
