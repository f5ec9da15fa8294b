// Appending at the speed of acquisition (issue 57, docs/BENCHMARKS.md): FRAMES frames of
// 1024 x 1024 uint16 pushed one at a time through an Appender (chunks of 16 frames, LZ4 5 +
// shuffle, durable), against create_from of the same frames at once in the same run, with and
// without checksums, at 1 and 2 threads; NDArray::append per frame (what there was before) with
// --legacy; h5py's resize + write per frame with the Blosc filter and zarr-python's append as
// peers, run by append_peers.py when python3 has them. GB/s of uncompressed data, best of
// --runs, ranges over runs; the appender's peak memory beside the frames' size.
//
//   build-bench/bench/bench_append [--frames N] [--runs R] [--dir DIR] [--legacy] [--no-peers]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <b2nd/appender.hpp>
#include <b2nd/b2nd.hpp>

#include "bench_common.hpp"
#include <sys/resource.h>

namespace {

constexpr std::int64_t kSide = 1024;
constexpr std::int64_t kFrameItems = kSide * kSide;

/// Frame k: a detector-like image (a smooth background, a moving spot, low-bit noise).
void make_frame(std::int64_t k, std::vector<std::uint16_t>& f) {
    std::uint64_t s = 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(k + 1);
    for (std::int64_t i = 0; i < kSide; ++i) {
        for (std::int64_t j = 0; j < kSide; ++j) {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            const std::int64_t di = i - (k * 3) % kSide, dj = j - (k * 5) % kSide;
            const std::int64_t spot = di * di + dj * dj < 400 ? 2000 : 0;
            f[static_cast<std::size_t>(i * kSide + j)] =
                static_cast<std::uint16_t>(100 + (i + j) / 16 + spot + static_cast<int>(s & 7));
        }
    }
}

b2nd::CreateOptions options(int threads, bool checksums) {
    b2nd::CreateOptions o;
    o.chunk_shape = {16, kSide, kSide};
    o.compression.codec = b2nd::Codec::lz4;
    o.compression.clevel = 5;
    o.nthreads = threads;
    o.checksums = checksums;
    o.overwrite = true;
    o.durable = true;
    return o;
}

long peak_rss_mib() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss / 1024;
}

}  // namespace

int main(int argc, char** argv) {
    std::int64_t frames = 256;
    int runs = 3;
    std::string dir;
    bool legacy = false, peers = true;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--frames" && i + 1 < argc) {
            frames = std::stoll(argv[++i]);
        } else if (a == "--runs" && i + 1 < argc) {
            runs = std::stoi(argv[++i]);
        } else if (a == "--dir" && i + 1 < argc) {
            dir = argv[++i];
        } else if (a == "--legacy") {
            legacy = true;
        } else if (a == "--no-peers") {
            peers = false;
        } else {
            std::fprintf(stderr,
                         "usage: bench_append [--frames N] [--runs R] [--dir DIR] "
                         "[--legacy] [--no-peers]\n");
            return 2;
        }
    }
    b2nd::bench::WorkDir work("append", dir);
    const std::string path = work.path() + "/run.b2nd";
    const double gb = static_cast<double>(frames * kFrameItems * 2) / 1e9;
    std::printf(
        "%lld frames of %lldx%lld uint16 (%.2f GB), chunks of 16 frames, lz4 5 + "
        "shuffle, durable; best of %d, [range]\n",
        static_cast<long long>(frames), static_cast<long long>(kSide),
        static_cast<long long>(kSide), gb, runs);

    // The frames, made once (and touched once): pushed one by one, or all at once.
    std::vector<std::uint16_t> all(static_cast<std::size_t>(frames * kFrameItems));
    std::vector<std::uint16_t> f(static_cast<std::size_t>(kFrameItems));
    for (std::int64_t k = 0; k < frames; ++k) {
        make_frame(k, f);
        std::copy(f.begin(), f.end(), all.begin() + k * kFrameItems);
    }
    const long before = peak_rss_mib();
    std::int64_t held = 0;  // the most the library held during an appender's run
    for (const int threads : {2, 1}) {
        for (const bool checksums : {true, false}) {
            b2nd::bench::Range app, bulk;
            for (int r = 0; r < runs; ++r) {
                const std::int64_t base = b2nd::memory_stats().current;
                b2nd::reset_memory_peak();
                app.add(b2nd::bench::seconds([&] {
                    auto a = b2nd::NDArray<std::uint16_t>::create(path, {0, kSide, kSide},
                                                                  options(threads, checksums));
                    b2nd::Appender<std::uint16_t> push(a, 0);
                    for (std::int64_t k = 0; k < frames; ++k) {
                        push.push(all.data() + k * kFrameItems, 1);
                    }
                    push.close();
                }));
                held = std::max(held, b2nd::memory_stats().peak - base);
                bulk.add(b2nd::bench::seconds([&] {
                    (void)b2nd::NDArray<std::uint16_t>::create_from(
                        path, {frames, kSide, kSide}, all, options(threads, checksums));
                }));
            }
            std::printf(
                "%d thread%s, checksums %-3s  appender %.2f GB/s [%.2f-%.2f]  "
                "create_from %.2f GB/s [%.2f-%.2f]  ratio %.2f\n",
                threads, threads == 1 ? " " : "s", checksums ? "on" : "off", gb / app.lo,
                gb / app.hi, gb / app.lo, gb / bulk.lo, gb / bulk.hi, gb / bulk.lo,
                bulk.lo / app.lo);
        }
    }
    std::printf(
        "appender memory: at most %lld MiB held by the library (rows of 32 MiB, queue 2); "
        "process peak RSS %ld MiB, of which the frames made up front %lld MiB (%ld MiB before "
        "the runs)\n",
        static_cast<long long>(held >> 20), peak_rss_mib(),
        static_cast<long long>(frames * kFrameItems * 2 >> 20), before);
    if (legacy) {
        const double s = b2nd::bench::seconds([&] {
            auto a =
                b2nd::NDArray<std::uint16_t>::create(path, {0, kSide, kSide}, options(2, true));
            for (std::int64_t k = 0; k < frames; ++k) {
                a.any().append(0,
                               {reinterpret_cast<const std::uint8_t*>(all.data() + k * kFrameItems),
                                static_cast<std::size_t>(kFrameItems * 2)});
            }
        });
        std::printf("NDArray::append per frame (2 threads, checksums on): %.2f GB/s (%.2f s)\n",
                    gb / s, s);
    }
    if (peers) {
        const std::string cmd = "/usr/bin/python3 " + std::string(B2ND_APPEND_PEERS) + " " +
                                std::to_string(frames) + " " + work.path();
        std::fflush(stdout);
        if (std::system(cmd.c_str()) != 0) {
            std::printf(
                "peers: not run (python3 with h5py, zarr and numcodecs, and Debian's "
                "hdf5-filter-plugin-blosc-serial)\n");
        }
    }
    return 0;
}
