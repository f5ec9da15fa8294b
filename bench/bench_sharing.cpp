// The cost of sharing an array between processes (docs/sharing.md):
// reads with and without OpenOptions::follow and lock_reads, the latency of a commit with and
// without the lock protocol, and refresh() after another handle's commit. The array is the
// f32cube field of BENCHMARKS.md at 256^3 (64 MiB; chunks 64^3, blocks 16^3, zstd 1 + shuffle).
// Times are medians over repetitions, quoted with their spread over 5 rounds.
//
//   build-bench/bench/bench_sharing [--dir DIR]
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <b2nd/b2nd.hpp>

#include "bench_common.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using b2nd::Box;

/// Seconds per call of fn, the median of `rounds` rounds of `n` calls each: {min, median, max}.
struct Spread {
    double lo, mid, hi;
};
Spread per_call(int rounds, int n, const std::function<void(int)>& fn) {
    std::vector<double> t;
    for (int r = 0; r < rounds; ++r) {
        const auto t0 = Clock::now();
        for (int i = 0; i < n; ++i) {
            fn(i);
        }
        t.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / n);
    }
    std::sort(t.begin(), t.end());
    return {t.front(), t[t.size() / 2], t.back()};
}

void row(const char* what, const Spread& s, const char* unit, double scale) {
    std::printf("  %-52s %9.3f %s   (%.3f-%.3f)\n", what, s.mid * scale, unit, s.lo * scale,
                s.hi * scale);
}

std::vector<float> cube(std::int64_t edge) {
    std::vector<float> v(static_cast<std::size_t>(edge * edge * edge));
    for (std::size_t flat = 0; flat < v.size(); ++flat) {
        v[flat] = b2nd::bench::f32cube_value(flat, edge);
    }
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    const b2nd::bench::WorkDir work(
        "sharing", argc == 3 && std::string(argv[1]) == "--dir" ? argv[2] : std::string());
    const std::string& dir = work.path();
    const std::int64_t edge = 256;
    b2nd::CreateOptions co;
    co.chunk_shape = {64, 64, 64};
    co.block_shape = {16, 16, 16};
    co.nthreads = 1;
    const std::string path = dir + "/cube.b2nd";
    { auto w = b2nd::NDArray<float>::create_from(path, {edge, edge, edge}, cube(edge), co); }
    std::printf(
        "bench_sharing: f32cube %lld^3, chunks 64^3, blocks 16^3, zstd 1 + shuffle, "
        "1 thread; median (min-max) of 5 rounds\n\n",
        static_cast<long long>(edge));

    // Reads: the same boxes and elements through handles opened three ways.
    std::vector<Box> boxes;
    std::vector<std::array<std::int64_t, 3>> points;
    for (std::uint64_t i = 0; i < 512; ++i) {
        const auto r = [&](std::uint64_t k) {
            return static_cast<std::int64_t>(b2nd::bench::mix(i * 7 + k) % (edge - 16));
        };
        boxes.push_back(Box::region({r(1), r(2), r(3)}, {16, 16, 16}));
        points.push_back({r(4), r(5), r(6)});
    }
    std::vector<float> out(16 * 16 * 16);
    std::printf("reads (no writer running):\n");
    for (const int mode : {0, 1, 2}) {
        b2nd::OpenOptions o;
        o.nthreads = 1;
        o.follow = mode == 1;
        o.lock_reads = mode == 2;
        const char* name = mode == 0 ? "" : mode == 1 ? ", follow" : ", lock_reads";
        const auto a = b2nd::NDArray<float>::open(path, o);
        for (const auto& p : points) {
            (void)a(p[0], p[1], p[2]);  // warm the cache for the element reads
        }
        const Spread pt = per_call(5, 200000, [&](int i) {
            const auto& p = points[static_cast<std::size_t>(i) % points.size()];
            (void)a(p[0], p[1], p[2]);
        });
        row((std::string("element, warm cache") + name).c_str(), pt, "ns", 1e9);
        const auto nc = [&] {
            b2nd::OpenOptions n = o;
            n.cache_bytes = 0;
            return b2nd::NDArray<float>::open(path, n);
        }();
        const Spread bx = per_call(5, 512, [&](int i) {
            nc.read(boxes[static_cast<std::size_t>(i) % boxes.size()], out.data());
        });
        row((std::string("16^3 box, no cache") + name).c_str(), bx, "us", 1e6);
    }

    // Commits: one element written (its chunk re-encoded and committed), locking on and off.
    std::printf("\ncommits (one element: a chunk re-encoded, index, trailer, header):\n");
    for (const bool sparse : {false, true}) {
        for (const bool locking : {true, false}) {
            const std::string p = dir + (sparse ? "/small.b2frame" : "/small.b2nd");
            b2nd::CreateOptions so;
            so.chunk_shape = {16, 40};
            so.block_shape = {4, 40};
            so.sparse = sparse;
            so.overwrite = true;
            so.locking = locking;
            so.nthreads = 1;
            auto w = b2nd::NDArray<std::int32_t>::create(p, {208, 40}, so);
            const Spread c = per_call(5, sparse ? 200 : 1000, [&](int i) {
                w.set({i % 208, i % 40}, i);
            });
            char name[96];
            std::snprintf(name, sizeof name, "commit, %s, locking %s",
                          sparse ? "sparse" : "contiguous", locking ? "on" : "off");
            row(name, c, "us", 1e6);
        }
    }

    // refresh(): another handle committed; this one re-reads header, index and trailer.
    std::printf("\nfollowing another handle's commits:\n");
    {
        b2nd::OpenOptions wo;
        wo.writable = true;
        wo.nthreads = 1;
        auto w = b2nd::NDArray<float>::open(path, wo);
        auto r = b2nd::NDArray<float>::open(path);
        const Spread s = per_call(5, 200, [&](int i) {
            w.set({i % edge, 0, 0}, static_cast<float>(i));
            r.refresh();
        });
        const Spread c = per_call(5, 200, [&](int i) { w.set({i % edge, 1, 0}, 1.0f); });
        row("commit + refresh() of a reader (4096 chunks)", s, "us", 1e6);
        row("commit alone", c, "us", 1e6);
        const Spread nothing = per_call(5, 100000, [&](int) { r.refresh(); });
        row("refresh() with nothing new", nothing, "ns", 1e9);
    }
    return 0;
}
