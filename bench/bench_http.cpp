// Arrays over HTTP (issue 28): what reads of the f32cube cost through a server that answers each
// request after a fixed latency (tests/http/fault_server.py --delay-ms), fetching the touched
// blocks (the default) against fetching whole chunks; and a full read from nginx on the loopback
// interface against the local (page-cached) full read, at 2 threads; and that full read filling a
// persistent cache, without a bound and with one (the cache directory's ledger at each store).
//
//   bench_http [--runs N] [--latency-ms MS] [--codec zstd|lz4] [--dir DIR] [--s3]
//
// --s3 (issue 39): the same workloads from s3rver behind the signature-checking proxy, which adds
// the latency to each request; full reads at 1 and 2 threads from S3, from the HTTP server with
// the same latency and from the local file; and the upload of the array (512 MiB) to S3.
//
// Per workload and mode: requests made after open, bytes transferred over the compressed bytes of
// the touched blocks, wall time (and wall time over the latency: round trips, since each batch
// of requests runs in parallel). Each run opens the array afresh (nothing cached in memory).
// Ranges over runs. Needs nginx and python3; the array is generated once into --dir.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <b2nd/b2nd.hpp>
#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/format/endian.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/storage/http.hpp>

#include "bench_common.hpp"
#include "support/http_servers.hpp"
#include "support/s3_server.hpp"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using b2nd::Box;
using b2nd::Shape;

namespace {

constexpr std::int64_t kEdge = 512;

struct Range {
    double lo = 1e300, hi = 0;
    void add(double v) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    std::string str(int digits) const {
        char a[64], b[64];
        std::snprintf(a, sizeof a, "%.*f", digits, lo);
        std::snprintf(b, sizeof b, "%.*f", digits, hi);
        return std::string(a) == b ? a : std::string(a) + "-" + b;
    }
};

std::string make_array(const std::string& dir, const std::string& codec) {
    const std::string path = dir + "/f32cube_" + codec + ".b2nd";
    if (fs::exists(path)) {
        return path;
    }
    fs::create_directories(dir);
    std::printf("generating %s ...\n", path.c_str());
    std::vector<float> v(static_cast<std::size_t>(kEdge * kEdge * kEdge));
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = b2nd::bench::f32cube_value(i, kEdge);
    }
    b2nd::CreateOptions co;
    co.chunk_shape = {128, 128, 128};
    co.block_shape = {32, 32, 32};
    co.compression.codec = codec == "lz4" ? b2nd::Codec::lz4 : b2nd::Codec::zstd;
    co.compression.clevel = codec == "lz4" ? 5 : 1;
    co.checksums = false;  // as c-blosc2 writes it
    b2nd::AnyArray::create_from(
        path + ".tmp", b2nd::DType::parse("<f4"), {kEdge, kEdge, kEdge},
        {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * sizeof(float)}, co);
    fs::rename(path + ".tmp", path);
    return path;
}

/// The compressed bytes of each block of each chunk, from the local file.
std::vector<std::vector<std::uint64_t>> block_bytes(const b2nd::AnyArray& a) {
    const b2nd::storage::Frame& f = a.frame();
    std::vector<std::vector<std::uint64_t>> out(static_cast<std::size_t>(f.nchunks()));
    for (std::int64_t c = 0; c < f.nchunks(); ++c) {
        const b2nd::storage::StoredChunk sc = f.chunk(c);
        if (sc.index_only()) {
            continue;
        }
        const b2nd::codec::ChunkDecoder d(sc.bytes);
        std::vector<std::pair<std::uint64_t, std::int32_t>> starts;
        for (std::int32_t b = 0; b < d.nblocks(); ++b) {
            starts.emplace_back(b2nd::format::load_le<std::int32_t>(
                                    sc.bytes.data() + 32 + 4 * static_cast<std::size_t>(b)),
                                b);
        }
        std::sort(starts.begin(), starts.end());
        auto& sizes = out[static_cast<std::size_t>(c)];
        sizes.resize(starts.size());
        for (std::size_t k = 0; k < starts.size(); ++k) {
            const std::uint64_t end = k + 1 < starts.size() ? starts[k + 1].first : sc.bytes.size();
            sizes[static_cast<std::size_t>(starts[k].second)] = end - starts[k].first;
        }
    }
    return out;
}

struct Workload {
    std::string name;
    std::function<void(const b2nd::AnyArray&, std::vector<std::uint8_t>&)> read;
    std::set<std::pair<std::int64_t, std::int64_t>> touched;  // (chunk, block)
    std::size_t out_bytes = 0;
};

/// The (chunk, block) pairs a box touches (blocks of 32^3 in chunks of 128^3).
void touch_box(const Box& b, std::set<std::pair<std::int64_t, std::int64_t>>& out) {
    std::int64_t lo[3], hi[3];
    for (int d = 0; d < 3; ++d) {
        lo[d] = b.start[static_cast<std::size_t>(d)] / 32;
        hi[d] =
            (b.start[static_cast<std::size_t>(d)] + b.count[static_cast<std::size_t>(d)] - 1) / 32;
    }
    for (std::int64_t i = lo[0]; i <= hi[0]; ++i) {
        for (std::int64_t j = lo[1]; j <= hi[1]; ++j) {
            for (std::int64_t k = lo[2]; k <= hi[2]; ++k) {
                const std::int64_t chunk = (i / 4) * 16 + (j / 4) * 4 + (k / 4);
                const std::int64_t block = (i % 4) * 16 + (j % 4) * 4 + (k % 4);
                out.emplace(chunk, block);
            }
        }
    }
}

std::vector<Workload> workloads() {
    std::vector<Workload> w;
    const auto box = [&](const std::string& name, const Box& b) {
        Workload x;
        x.name = name;
        x.read = [b](const b2nd::AnyArray& a, std::vector<std::uint8_t>& out) {
            a.read(b, out.data(), static_cast<std::size_t>(b.size()) * 4);
        };
        touch_box(b, x.touched);
        x.out_bytes = static_cast<std::size_t>(b.size()) * 4;
        w.push_back(std::move(x));
    };
    box("box 16^3", Box{{200, 230, 300}, {16, 16, 16}, {1, 1, 1}});
    box("plane axis 0", Box{{300, 0, 0}, {1, kEdge, kEdge}, {1, 1, 1}});
    box("plane axis 1", Box{{0, 300, 0}, {kEdge, 1, kEdge}, {1, 1, 1}});
    box("plane axis 2", Box{{0, 0, 300}, {kEdge, kEdge, 1}, {1, 1, 1}});
    {
        Workload x;
        x.name = "1000 points";
        auto coords = std::make_shared<std::vector<std::int64_t>>();
        std::mt19937_64 rng(28);
        for (int p = 0; p < 1000; ++p) {
            std::int64_t c[3];
            for (auto& v : c) {
                v = static_cast<std::int64_t>(rng() % kEdge);
                coords->push_back(v);
            }
            touch_box(Box{{c[0], c[1], c[2]}, {1, 1, 1}, {1, 1, 1}}, x.touched);
        }
        x.read = [coords](const b2nd::AnyArray& a, std::vector<std::uint8_t>& out) {
            a.read_points(coords->data(), 1000, out.data());
        };
        x.out_bytes = 4000;
        w.push_back(std::move(x));
    }
    box("full read", Box{{0, 0, 0}, {kEdge, kEdge, kEdge}, {1, 1, 1}});
    return w;
}

struct Row {
    Range requests, ratio, ms, trips;
};

/// One table row per workload: requests after open, bytes transferred over those of the touched
/// blocks, wall time, over `url` opened with `base` (fresh each run).
void workload_rows(const std::vector<Workload>& ws,
                   const std::vector<std::vector<std::uint64_t>>& sizes,
                   const std::string& url,
                   const b2nd::OpenOptions& base,
                   int runs,
                   double latency,
                   std::vector<std::uint8_t>& out) {
    std::printf("| workload | requests | transferred / needed | wall ms | wall / latency |\n");
    std::printf("|---|---|---|---|---|\n");
    for (const Workload& w : ws) {
        std::uint64_t needed = 0;
        for (const auto& [c, b] : w.touched) {
            needed += sizes[static_cast<std::size_t>(c)][static_cast<std::size_t>(b)];
        }
        Row r;
        for (int run = 0; run < runs; ++run) {
            b2nd::OpenOptions o = base;
            o.nthreads = 2;
            const b2nd::AnyArray a = b2nd::AnyArray::open(url, o);
            const b2nd::storage::TransferStats s0 = a.frame().transfers();
            const auto t1 = Clock::now();
            w.read(a, out);
            const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
            const b2nd::storage::TransferStats s1 = a.frame().transfers();
            r.requests.add(static_cast<double>(s1.requests - s0.requests));
            r.ratio.add(static_cast<double>(s1.bytes - s0.bytes) / static_cast<double>(needed));
            r.ms.add(ms);
            r.trips.add(ms / latency);
        }
        std::printf("| %s | %s | %s | %s | %s |\n", w.name.c_str(), r.requests.str(0).c_str(),
                    r.ratio.str(2).c_str(), r.ms.str(0).c_str(), r.trips.str(1).c_str());
        std::fflush(stdout);
    }
}

/// --s3: the workloads over S3, full reads against HTTP and local, and the upload.
int s3_mode(const std::string& path,
            const std::string& http_url,
            int runs,
            double latency,
            const std::vector<Workload>& ws,
            const std::vector<std::vector<std::uint64_t>>& sizes,
            std::vector<std::uint8_t>& out) {
    std::string why;
    const auto s3 = b2nd::test::S3Store::start(why);
    if (!s3 || !s3->put({path}, "bench/")) {
        std::fprintf(stderr, "bench_http --s3: %s\n", s3 ? "s3cmd put failed" : why.c_str());
        return 1;
    }
    const std::string url = s3->url("bench/" + fs::path(path).filename().string());
    b2nd::OpenOptions base;
    base.s3 = s3->options();
    char delay[32];
    std::snprintf(delay, sizeof delay, "delay_ms=%.0f", latency);
    if (!s3->faults(delay)) {
        std::fprintf(stderr, "bench_http --s3: the proxy does not answer\n");
        return 1;
    }
    std::printf("S3 (s3rver behind the signature-checking proxy), %d runs, %.0f ms per request\n\n",
                runs, latency);
    workload_rows(ws, sizes, url, base, runs, latency, out);

    const double gb = static_cast<double>(out.size()) / 1e9;
    const Box all{{0, 0, 0}, {kEdge, kEdge, kEdge}, {1, 1, 1}};
    std::printf("\nfull read, GB/s of uncompressed data (ranges over runs; each opens afresh)\n\n");
    std::printf("| threads | local | HTTP (%.0f ms) | S3 (%.0f ms) | S3 / HTTP |\n", latency,
                latency);
    std::printf("|---|---|---|---|---|\n");
    for (const int threads : {1, 2}) {
        Range l, h, s, ratio;
        for (int run = 0; run < runs; ++run) {
            b2nd::OpenOptions o = base;
            o.nthreads = threads;
            const auto timed = [&](const std::string& where) {
                const auto t0 = Clock::now();
                b2nd::AnyArray::open(where, o).read(all, out.data(), out.size());
                return std::chrono::duration<double>(Clock::now() - t0).count();
            };
            const double tl = timed(path), th = timed(http_url), ts = timed(url);
            l.add(gb / tl);
            h.add(gb / th);
            s.add(gb / ts);
            ratio.add(th / ts);
        }
        std::printf("| %d | %s | %s | %s | %s |\n", threads, l.str(2).c_str(), h.str(2).c_str(),
                    s.str(2).c_str(), ratio.str(2).c_str());
        std::fflush(stdout);
    }

    // The upload: a copy of the array as one object (a multipart upload of 8 MiB parts).
    const b2nd::AnyArray local = b2nd::AnyArray::open(path);
    Range up, mbs;
    for (int run = 0; run < runs; ++run) {
        b2nd::CopyOptions co;
        co.overwrite = true;
        co.s3 = base.s3;
        co.nthreads = 2;
        const auto t0 = Clock::now();
        (void)b2nd::copy(local, s3->url("bench/upload.b2nd"), co);
        const double t = std::chrono::duration<double>(Clock::now() - t0).count();
        up.add(gb / t);
        mbs.add(static_cast<double>(fs::file_size(path)) / 1e6 / t);
    }
    std::printf(
        "\nupload of the array (%.0f MiB, %.0f MiB stored) to S3 with %.0f ms per request: "
        "%s GB/s of uncompressed data, %s MB/s stored\n",
        static_cast<double>(out.size()) / 1048576.0,
        static_cast<double>(fs::file_size(path)) / 1048576.0, latency, up.str(2).c_str(),
        mbs.str(0).c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    int runs = 3;
    double latency = 20;
    std::string codec = "zstd";
    std::string dir = "/tmp/b2nd-bench-http";
    bool s3 = false;
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        if (k == "--s3") {
            s3 = true;
            continue;
        }
        if (i + 1 >= argc) {
            break;
        }
        const char* v = argv[++i];
        if (k == "--runs") {
            runs = std::atoi(v);
        } else if (k == "--latency-ms") {
            latency = std::atof(v);
        } else if (k == "--codec") {
            codec = v;
        } else if (k == "--dir") {
            dir = v;
        }
    }
    const std::string path = make_array(dir, codec);
    const std::string file = fs::path(path).filename().string();
    auto slow = b2nd::test::ServerProcess::faults(dir, latency);
    auto nginx = b2nd::test::ServerProcess::nginx(dir);
    if (!slow || !nginx) {
        std::fprintf(stderr, "bench_http needs python3 and nginx\n");
        return 1;
    }
    const b2nd::AnyArray local = b2nd::AnyArray::open(path);
    const auto sizes = block_bytes(local);
    std::vector<Workload> ws = workloads();
    std::vector<std::uint8_t> out(static_cast<std::size_t>(kEdge * kEdge * kEdge) * 4, 1);
    if (s3) {
        return s3_mode(path, slow->url(file), runs, latency, ws, sizes, out);
    }

    std::printf("f32cube_%s, %d runs, server latency %.0f ms per request\n\n", codec.c_str(), runs,
                latency);
    std::printf(
        "| workload | mode | requests | transferred / needed | wall ms | wall / latency |\n");
    std::printf("|---|---|---|---|---|---|\n");
    Range open_ms, open_requests;
    for (const Workload& w : ws) {
        std::uint64_t needed = 0;
        for (const auto& [c, b] : w.touched) {
            needed += sizes[static_cast<std::size_t>(c)][static_cast<std::size_t>(b)];
        }
        // The warm cache: filled by one read first (not timed), then read through.
        const std::string cache = dir + "/cache.b2nd";
        fs::remove(cache);
        fs::remove(cache + ".b2lock");
        {
            b2nd::OpenOptions o;
            o.http_cache = cache;
            w.read(b2nd::AnyArray::open(slow->url(file), o), out);
        }
        for (const int mode : {0, 1, 2}) {  // blocks, whole chunks, warm cache
            Row r;
            for (int run = 0; run < runs; ++run) {
                b2nd::OpenOptions o;
                o.http.block_reads = mode != 1;
                o.nthreads = 2;
                if (mode == 2) {
                    o.http_cache = cache;
                }
                const auto t0 = Clock::now();
                const b2nd::AnyArray a = b2nd::AnyArray::open(slow->url(file), o);
                const auto t1 = Clock::now();
                const b2nd::storage::TransferStats s0 = a.frame().transfers();
                open_ms.add(std::chrono::duration<double, std::milli>(t1 - t0).count());
                open_requests.add(static_cast<double>(s0.requests));
                w.read(a, out);
                const double ms =
                    std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
                const b2nd::storage::TransferStats s1 = a.frame().transfers();
                r.requests.add(static_cast<double>(s1.requests - s0.requests));
                r.ratio.add(static_cast<double>(s1.bytes - s0.bytes) / static_cast<double>(needed));
                r.ms.add(ms);
                r.trips.add(ms / latency);
            }
            const char* names[] = {"blocks", "whole chunks", "warm cache"};
            std::printf("| %s | %s | %s | %s | %s | %s |\n", w.name.c_str(), names[mode],
                        r.requests.str(0).c_str(), r.ratio.str(2).c_str(), r.ms.str(0).c_str(),
                        r.trips.str(1).c_str());
            std::fflush(stdout);
        }
    }
    std::printf("\nopen: %s requests, %s ms\n", open_requests.str(0).c_str(),
                open_ms.str(0).c_str());

    // Full read at 2 threads: nginx on the loopback interface against the local file.
    Range local_gbs, http_gbs, ratio;
    const double gb = static_cast<double>(out.size()) / 1e9;
    for (int run = 0; run < runs; ++run) {
        b2nd::OpenOptions o;
        o.nthreads = 2;
        const b2nd::AnyArray la = b2nd::AnyArray::open(path, o);
        const double tl = b2nd::bench::best_seconds(
            [&] {
                la.read(Box{{0, 0, 0}, {kEdge, kEdge, kEdge}, {1, 1, 1}}, out.data(), out.size());
            },
            0.5);
        const double th = b2nd::bench::best_seconds(
            [&] {
                const b2nd::AnyArray ra = b2nd::AnyArray::open(nginx->url(file), o);
                ra.read(Box{{0, 0, 0}, {kEdge, kEdge, kEdge}, {1, 1, 1}}, out.data(), out.size());
            },
            0.5);
        local_gbs.add(gb / tl);
        http_gbs.add(gb / th);
        ratio.add(tl / th);
    }
    std::printf("\nfull read, 2 threads: local %s GB/s, nginx over loopback %s GB/s: %s of local\n",
                local_gbs.str(2).c_str(), http_gbs.str(2).c_str(), ratio.str(2).c_str());

    // Filling a persistent cache: the same full read storing every chunk it fetches, without a
    // bound, and with a bound of half the file (each store then goes through the directory's
    // ledger, and gives up older chunks to fit).
    const std::string fill = dir + "/fill";
    const auto bound = static_cast<std::uint64_t>(fs::file_size(path)) / 2;
    Range unbounded_gbs, bounded_gbs, cost;
    for (int run = 0; run < runs; ++run) {
        double seconds[2] = {0, 0};
        for (const int bounded : {0, 1}) {
            fs::remove_all(fill);
            fs::create_directory(fill);
            b2nd::OpenOptions o;
            o.nthreads = 2;
            o.http_cache = fill + "/cache.b2nd";
            o.http_cache_bytes = bounded != 0 ? bound : 0;
            const auto t0 = Clock::now();
            const b2nd::AnyArray ra = b2nd::AnyArray::open(nginx->url(file), o);
            ra.read(Box{{0, 0, 0}, {kEdge, kEdge, kEdge}, {1, 1, 1}}, out.data(), out.size());
            seconds[bounded] = std::chrono::duration<double>(Clock::now() - t0).count();
        }
        unbounded_gbs.add(gb / seconds[0]);
        bounded_gbs.add(gb / seconds[1]);
        cost.add(seconds[1] / seconds[0]);
    }
    fs::remove_all(fill);
    std::printf(
        "\nfilling a persistent cache, full read, 2 threads: no bound %s GB/s, bound of half "
        "the file %s GB/s: %sx the time\n",
        unbounded_gbs.str(2).c_str(), bounded_gbs.str(2).c_str(), cost.str(2).c_str());
    return 0;
}
