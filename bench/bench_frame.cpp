// Frame benchmark: time to open a contiguous frame (header + offsets index + trailer) with 10,
// 10^4 and 10^6 chunks, the page faults opening takes (chunk bytes must not be touched), and the
// cost of looking up one chunk's span afterwards (O(1)); then commits per second, durable (the
// default) and not; and the checksum table's size and open cost. With c-blosc2 available
// (B2ND_HAVE_BLOSC2), blosc2_schunk_open is timed on the same files.
//
//   build-bench/bench/bench_frame [DIR]     (default DIR: /tmp)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/storage/frame.hpp>

#include <sys/resource.h>

#if defined(B2ND_HAVE_BLOSC2)
#include <blosc2.h>
#endif

#include "bench_common.hpp"

namespace {

using b2nd::bench::mix;

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

long minor_faults() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt + u.ru_majflt;
}

/// A contiguous frame with n stored chunks of 1 KiB (a few hundred bytes each once encoded), in
/// blocks of `blocksize` bytes, with a checksum table or without.
void make_frame(const std::string& path,
                std::int64_t n,
                std::int32_t blocksize = 1024,
                bool checksums = true) {
    std::filesystem::remove(path);
    b2nd::storage::FrameParams fp;
    fp.typesize = 4;
    fp.chunksize = 1024;
    fp.blocksize = blocksize;
    fp.checksums = checksums;
    auto f = b2nd::storage::Frame::create(path, fp);
    b2nd::codec::EncodeParams p;
    p.typesize = 4;
    p.clevel = 5;
    p.blocksize = blocksize;
    std::vector<std::uint32_t> data(256);
    std::vector<std::vector<std::uint8_t>> batch;
    for (std::int64_t i = 0; i < n; ++i) {
        for (std::size_t k = 0; k < data.size(); ++k) {
            data[k] =
                static_cast<std::uint32_t>(i) * 256U + static_cast<std::uint32_t>(mix(k) & 15);
        }
        batch.push_back(b2nd::codec::encode_chunk(b2nd::as_bytes(data.data(), data.size()), p));
        if (batch.size() == 100000 || i == n - 1) {
            std::vector<b2nd::ByteSpan> spans(batch.begin(), batch.end());
            f.append_chunks(spans);
            batch.clear();
        }
    }
}

/// Opening a frame: the best time of 5, the page faults it took, the table's size, the chunks.
struct Opened {
    double best = 1e9;
    long faults = 0;
    std::size_t table = 0;
    std::int64_t nchunks = 0;
};

Opened time_open(const std::string& path) {
    Opened o;
    for (int rep = 0; rep < 5; ++rep) {
        const long f0 = minor_faults();
        const auto t0 = Clock::now();
        const auto f = b2nd::storage::Frame::open(path);
        o.best = std::min(o.best, seconds(t0));
        o.faults = minor_faults() - f0;
        o.table = f.checksums().table_bytes;
        o.nchunks = f.nchunks();
    }
    return o;
}

/// The checksum table's cost (docs/CHECKSUMS.md): frames of 10^4 and 10^6 chunks of 64 blocks,
/// with a table (version 2: 8 bytes per chunk in the table, a record of 64 digests after each
/// chunk) and without; the table's size, the records' size, and the best open time of 5.
void table_cost(const std::string& dir) {
    std::printf("\nchecksum table (chunks of 64 blocks; open: best of 5)\n");
    std::printf("%10s %10s %12s %12s %12s %14s %14s\n", "chunks", "table", "table KiB",
                "records MiB", "file MiB", "open ms", "open faults");
    for (std::int64_t n : {10000LL, 1000000LL}) {
        for (const bool sums : {false, true}) {
            const std::string path = dir + "/b2nd-table-" + std::to_string(n) + ".b2nd";
            make_frame(path, n, 16, sums);
            const auto size = std::filesystem::file_size(path);
            const Opened o = time_open(path);
            std::size_t records = 0;
            {
                const auto f = b2nd::storage::Frame::open(path);
                for (std::int64_t i = 0; sums && i < n; i += n / 100) {
                    records += f.chunk(i).record.size() * static_cast<std::size_t>(n / 100);
                }
            }
            std::printf("%10lld %10s %12.1f %12.1f %12.1f %14.3f %14ld\n",
                        static_cast<long long>(n), sums ? "version 2" : "none",
                        static_cast<double>(o.table) / 1024,
                        static_cast<double>(records) / (1 << 20),
                        static_cast<double>(size) / (1 << 20), o.best * 1e3, o.faults);
            std::filesystem::remove(path);
        }
    }
}

/// Commits per second: one-chunk appends, each its own commit, durable (the default: fsyncs
/// before and after the commit point) and not, both frame kinds, interleaved over 3 runs; the
/// range over runs and the ratio of the medians.
void commits(const std::string& dir) {
    constexpr int kCommits = 200;
    b2nd::storage::FrameParams fp;
    fp.typesize = 4;
    fp.chunksize = 1024;
    fp.blocksize = 1024;
    b2nd::codec::EncodeParams p;
    p.typesize = 4;
    std::vector<std::uint32_t> data(256);
    for (std::size_t k = 0; k < data.size(); ++k) {
        data[k] = static_cast<std::uint32_t>(mix(k));
    }
    const auto chunk = b2nd::codec::encode_chunk(b2nd::as_bytes(data.data(), data.size()), p);
    std::vector<double> rate[2][2];  // [sparse][durable]
    for (int run = 0; run < 3; ++run) {
        for (const bool sparse : {false, true}) {
            for (const bool durable : {true, false}) {
                const std::string path = dir + "/commits" + (sparse ? ".b2frame" : ".b2nd");
                std::filesystem::remove_all(path);
                std::filesystem::remove(path + ".b2lock");
                auto f = b2nd::storage::Frame::create(path, fp, sparse, {}, durable);
                const auto t0 = Clock::now();
                for (int i = 0; i < kCommits; ++i) {
                    f.append_chunk(chunk);
                }
                rate[sparse][durable].push_back(kCommits / seconds(t0));
            }
        }
    }
    std::printf("\ncommits per second (one-chunk appends, %d per run, range over 3 runs)\n",
                kCommits);
    for (const bool sparse : {false, true}) {
        auto& d = rate[sparse][true];
        auto& n = rate[sparse][false];
        std::sort(d.begin(), d.end());
        std::sort(n.begin(), n.end());
        std::printf("  %-10s durable %8.0f-%-8.0f not durable %8.0f-%-8.0f (durable/not %.3f)\n",
                    sparse ? "sparse" : "contiguous", d.front(), d.back(), n.front(), n.back(),
                    d[1] / n[1]);
    }
    std::filesystem::remove_all(dir + "/commits.b2frame");
    std::filesystem::remove(dir + "/commits.b2nd");
    std::filesystem::remove(dir + "/commits.b2nd.b2lock");
}

}  // namespace

int main(int argc, char** argv) {
    const b2nd::bench::WorkDir work("frame", argc > 1 ? argv[1] : std::string());
    const std::string& dir = work.path();
#if defined(B2ND_HAVE_BLOSC2)
    blosc2_init();
    std::printf("b2nd-cpp frame benchmark; c-blosc2 %s measured on the same files\n",
                BLOSC2_VERSION_STRING);
#else
    std::printf("b2nd-cpp frame benchmark (built without c-blosc2)\n");
#endif
    std::printf("%10s %12s %12s %14s %16s %14s\n", "chunks", "file MiB", "open ms", "open faults",
                "file pages", "lookup ns");
    for (std::int64_t n : {10LL, 10000LL, 1000000LL}) {
        const std::string path = dir + "/b2nd-bench-" + std::to_string(n) + ".b2nd";
        make_frame(path, n);
        const auto size = std::filesystem::file_size(path);
        const Opened o = time_open(path);
        const double best = o.best;
        const long faults = o.faults;
        if (o.nchunks != n) {
            std::fprintf(stderr, "wrong chunk count\n");
            return 1;
        }
        // Lookups: random chunk spans, touching one byte of each so the work is real.
        const auto f = b2nd::storage::Frame::open(path);
        const int lookups = 2000000;
        std::uint64_t sink = 0;
        const auto t0 = Clock::now();
        for (int k = 0; k < lookups; ++k) {
            const auto c = f.chunk(static_cast<std::int64_t>(mix(static_cast<std::uint64_t>(k)) %
                                                             static_cast<std::uint64_t>(n)));
            sink += c.bytes.size();
        }
        const double lookup_ns = seconds(t0) / lookups * 1e9;
        std::printf("%10lld %12.1f %12.3f %14ld %16llu %14.1f\n", static_cast<long long>(n),
                    static_cast<double>(size) / (1 << 20), best * 1e3, faults,
                    static_cast<unsigned long long>(size / 4096), lookup_ns);
#if defined(B2ND_HAVE_BLOSC2)
        double c2 = 1e9;
        for (int rep = 0; rep < 5; ++rep) {
            const auto t1 = Clock::now();
            blosc2_schunk* sc = blosc2_schunk_open(path.c_str());
            c2 = std::min(c2, seconds(t1));
            blosc2_schunk_free(sc);
        }
        std::printf("%10s c-blosc2 blosc2_schunk_open: %.3f ms (ours %.2fx faster)\n", "", c2 * 1e3,
                    c2 / best);
#endif
        std::filesystem::remove(path);
        if (sink == 0) {
            std::printf("(no bytes)\n");
        }
    }
    table_cost(dir);
    commits(dir);
#if defined(B2ND_HAVE_BLOSC2)
    blosc2_destroy();
#endif
    return 0;
}
