// Chunk codec benchmark: encode and decode GB/s (of uncompressed bytes) per compressor, with
// SHUFFLE and BITSHUFFLE, on a 4 MiB float32 chunk of a smooth field with noise (the f32cube of
// BENCHMARKS.md) and a 4 MiB int64 counter, with 1 and 2 threads; plus the shuffle kernels alone.
// When built against c-blosc2 (B2ND_HAVE_BLOSC2), c-blosc2 is timed in the same run and both
// decoders run on the *same* chunk (the one c-blosc2 wrote).
//
//   build-bench/bench/bench_codec [--quick]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/codec/filters.hpp>

#if defined(B2ND_HAVE_BLOSC2)
#include <blosc2.h>
#endif

#include "bench_common.hpp"

namespace {

using b2nd::bench::mix;

using namespace b2nd::codec;
using Clock = std::chrono::steady_clock;

double g_min_seconds = 0.25;

double best_seconds(const std::function<void()>& fn) {
    return b2nd::bench::best_seconds(fn, g_min_seconds);
}

std::vector<std::uint8_t> f32_field(std::size_t n) {
    const double tp = 2 * M_PI;
    std::vector<std::uint8_t> out(n * 4);
    for (std::size_t flat = 0; flat < n; ++flat) {
        const auto i = static_cast<double>(flat / (512 * 512));
        const auto j = static_cast<double>((flat / 512) % 512);
        const auto k = static_cast<double>(flat % 512);
        const double a =
            20 * std::sin(tp * i / 256) * std::cos(tp * j / 300) + 0.05 * (j - 256) / 256;
        const double u = static_cast<double>(mix(flat) >> 11) / 9007199254740992.0;
        const auto v = static_cast<float>(a + 10 * std::sin(tp * (i + k) / 200) + 0.01 * (u - 0.5));
        std::memcpy(&out[flat * 4], &v, 4);
    }
    return out;
}

std::vector<std::uint8_t> i64_counter(std::size_t n) {
    std::vector<std::uint8_t> out(n * 8);
    for (std::size_t i = 0; i < n; ++i) {
        const auto v = static_cast<std::int64_t>(i);
        std::memcpy(&out[i * 8], &v, 8);
    }
    return out;
}

struct Config {
    Codec c;
    int clevel;
};

#if defined(B2ND_HAVE_BLOSC2)
std::vector<std::uint8_t> blosc2_encode(const std::vector<std::uint8_t>& src,
                                        const EncodeParams& p,
                                        int nthreads) {
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.compcode = static_cast<std::uint8_t>(p.codec);
    cp.clevel = static_cast<std::uint8_t>(p.clevel);
    cp.typesize = p.typesize;
    cp.nthreads = static_cast<std::int16_t>(nthreads);
    for (int i = 0; i < 6; ++i) {
        cp.filters[i] = static_cast<std::uint8_t>(p.filters[static_cast<std::size_t>(i)].id);
        cp.filters_meta[i] = p.filters[static_cast<std::size_t>(i)].meta;
    }
    blosc2_context* ctx = blosc2_create_cctx(cp);
    std::vector<std::uint8_t> out(src.size() + BLOSC2_MAX_OVERHEAD);
    const int n = blosc2_compress_ctx(ctx, src.data(), static_cast<std::int32_t>(src.size()),
                                      out.data(), static_cast<std::int32_t>(out.size()));
    blosc2_free_ctx(ctx);
    if (n <= 0) {
        std::fprintf(stderr, "c-blosc2 compression failed (%d)\n", n);
        std::exit(1);
    }
    out.resize(static_cast<std::size_t>(n));
    return out;
}
#endif

void codec_table(const char* data_name, const std::vector<std::uint8_t>& src, int typesize) {
    const Config configs[] = {{Codec::blosclz, 5}, {Codec::lz4, 5},  {Codec::lz4hc, 9},
                              {Codec::zlib, 5},    {Codec::zstd, 1}, {Codec::zstd, 5}};
    const double gb = static_cast<double>(src.size()) / 1e9;
    std::vector<std::uint8_t> out(src.size());
    std::printf("\n%s, %zu bytes, typesize %d\n", data_name, src.size(), typesize);
#if defined(B2ND_HAVE_BLOSC2)
    std::printf("%-10s %-10s %3s | %6s %8s %8s | %6s %8s %8s | %9s %9s\n", "codec", "filter", "thr",
                "ratio", "enc", "dec", "c2 rat", "c2 enc", "c2 dec", "same:ours", "ours/c2");
#else
    std::printf("%-10s %-10s %3s | %6s %8s %8s\n", "codec", "filter", "thr", "ratio", "enc", "dec");
#endif
    for (const Config& cfg : configs) {
        for (Filter f : {Filter::shuffle, Filter::bitshuffle}) {
            for (int nthreads : {1, 2}) {
                EncodeParams p;
                p.codec = cfg.c;
                p.clevel = cfg.clevel;
                p.typesize = typesize;
                p.filters = make_pipeline({{f, 0}});
                p.nthreads = nthreads;
                std::vector<std::uint8_t> chunk;
                const double enc = best_seconds([&] { chunk = encode_chunk(src, p); });
                const ChunkDecoder dec(chunk);
                const double d = best_seconds([&] { dec.decode(out, nthreads); });
                if (std::memcmp(out.data(), src.data(), src.size()) != 0) {
                    std::fprintf(stderr, "round trip failed\n");
                    std::exit(1);
                }
                const std::string name =
                    std::string(codec_name(cfg.c)) + " " + std::to_string(cfg.clevel);
                const char* fname = f == Filter::shuffle ? "shuffle" : "bitshuffle";
                const double ratio =
                    static_cast<double>(src.size()) / static_cast<double>(chunk.size());
#if defined(B2ND_HAVE_BLOSC2)
                std::vector<std::uint8_t> c2chunk;
                const double c2enc =
                    best_seconds([&] { c2chunk = blosc2_encode(src, p, nthreads); });
                blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
                dp.nthreads = static_cast<std::int16_t>(nthreads);
                blosc2_context* dctx = blosc2_create_dctx(dp);
                const double c2dec = best_seconds([&] {
                    blosc2_decompress_ctx(dctx, c2chunk.data(),
                                          static_cast<std::int32_t>(c2chunk.size()), out.data(),
                                          static_cast<std::int32_t>(out.size()));
                });
                blosc2_free_ctx(dctx);
                const ChunkDecoder same(c2chunk);
                const double ours_same = best_seconds([&] { same.decode(out, nthreads); });
                if (std::memcmp(out.data(), src.data(), src.size()) != 0) {
                    std::fprintf(stderr, "decoding c-blosc2's chunk failed\n");
                    std::exit(1);
                }
                std::printf(
                    "%-10s %-10s %3d | %6.2f %8.2f %8.2f | %6.2f %8.2f %8.2f | %9.2f %8.2fx\n",
                    name.c_str(), fname, nthreads, ratio, gb / enc, gb / d,
                    static_cast<double>(src.size()) / static_cast<double>(c2chunk.size()),
                    gb / c2enc, gb / c2dec, gb / ours_same, c2dec / ours_same);
#else
                std::printf("%-10s %-10s %3d | %6.2f %8.2f %8.2f\n", name.c_str(), fname, nthreads,
                            ratio, gb / enc, gb / d);
#endif
            }
        }
    }
}

void filter_table(const std::vector<std::uint8_t>& src) {
    const double gb = static_cast<double>(src.size()) / 1e9;
    std::vector<std::uint8_t> a(src.size()), b(src.size()), scratch(src.size());
    std::printf("\nfilters alone, %zu bytes, one thread (kernels: %s)\n", src.size(),
                std::string(simd_backend()).c_str());
    std::printf("%-22s %8s\n", "filter", "GB/s");
    for (int t : {2, 4, 8, 16}) {
        const double s = best_seconds([&] { shuffle(t, src.size(), src.data(), a.data()); });
        const double u = best_seconds([&] { unshuffle(t, src.size(), a.data(), b.data()); });
        std::printf("shuffle   typesize %-3d %8.2f\nunshuffle typesize %-3d %8.2f\n", t, gb / s, t,
                    gb / u);
    }
    for (int t : {4, 8}) {
        const double s =
            best_seconds([&] { bitshuffle(t, src.size(), src.data(), a.data(), scratch.data()); });
        const double u =
            best_seconds([&] { bitunshuffle(t, src.size(), a.data(), b.data(), scratch.data()); });
        std::printf("bitshuffle   typesize %d %6.2f\nbitunshuffle typesize %d %6.2f\n", t, gb / s,
                    t, gb / u);
    }
    const double m = best_seconds([&] { std::memcpy(a.data(), src.data(), src.size()); });
    std::printf("%-22s %8.2f\n", "memcpy (reference)", gb / m);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "--quick") {
        g_min_seconds = 0.02;
    }
#if defined(B2ND_HAVE_BLOSC2)
    blosc2_init();
    std::printf("b2nd-cpp codec benchmark; c-blosc2 %s measured in the same run\n",
                BLOSC2_VERSION_STRING);
    std::printf(
        "columns: ours (ratio, encode, decode of our chunk) | c-blosc2 (its ratio, encode, decode "
        "of "
        "its chunk) | ours decoding c-blosc2's chunk, and c-blosc2 time / our time on it\n");
#else
    std::printf("b2nd-cpp codec benchmark (built without c-blosc2)\n");
#endif
    std::printf("GB/s of uncompressed bytes, best of repeated runs\n");
    const auto f32 = f32_field(1 << 20);
    const auto i64 = i64_counter(1 << 19);
    codec_table("float32 smooth field with noise", f32, 4);
    codec_table("int64 counter", i64, 8);
    filter_table(f32);
#if defined(B2ND_HAVE_BLOSC2)
    blosc2_destroy();
#endif
    return 0;
}
