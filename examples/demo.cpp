// The b2nd-cpp demo, for now the chunk codec: a smooth float32 field with noise (the f32cube of
// BENCHMARKS.md, 16 MiB of it) is compressed and decompressed in 4 MiB chunks with each codec and
// filter; the table shows the ratio and the speed of each, in GB/s of uncompressed data.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/codec/filters.hpp>

namespace {

std::uint64_t mix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/// f32cube values for the first n elements of a (., 512, 512) cube.
std::vector<float> f32cube(std::size_t n) {
    const double tp = 2 * M_PI;
    std::vector<float> v(n);
    for (std::size_t flat = 0; flat < n; ++flat) {
        const double i = static_cast<double>(flat / (512 * 512));
        const double j = static_cast<double>((flat / 512) % 512);
        const double k = static_cast<double>(flat % 512);
        const double a =
            20 * std::sin(tp * i / 256) * std::cos(tp * j / 300) + 0.05 * (j - 256) / 256;
        const double u = static_cast<double>(mix(flat) >> 11) / 9007199254740992.0;
        v[flat] = static_cast<float>(a + 10 * std::sin(tp * (i + k) / 200) + 0.01 * (u - 0.5));
    }
    return v;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main() {
    using namespace b2nd::codec;
    constexpr std::size_t kChunkElems = 1 << 20;  // 4 MiB of float32
    constexpr std::size_t kChunks = 4;
    const std::vector<float> data = f32cube(kChunkElems * kChunks);
    const double gb = static_cast<double>(data.size() * sizeof(float)) / 1e9;

    std::printf("b2nd-cpp chunk codec demo: %zu chunks of 4 MiB float32 (SIMD: %s)\n\n", kChunks,
                std::string(simd_backend()).c_str());
    std::printf("%-8s %-11s %6s %10s %10s\n", "codec", "filter", "ratio", "enc GB/s", "dec GB/s");

    struct Filt {
        const char* name;
        FilterPipeline p;
    };
    const Filt filters[] = {{"none", make_pipeline({})},
                            {"shuffle", make_pipeline({{Filter::shuffle, 0}})},
                            {"bitshuffle", make_pipeline({{Filter::bitshuffle, 0}})}};
    const Compressor codecs[] = {Compressor::blosclz, Compressor::lz4, Compressor::lz4hc,
                                 Compressor::zlib, Compressor::zstd};
    std::vector<std::uint8_t> back(kChunkElems * sizeof(float));
    for (Compressor c : codecs) {
        for (const Filt& f : filters) {
            EncodeParams p;
            p.compressor = c;
            p.clevel = 5;
            p.filters = f.p;
            p.typesize = 4;
            std::vector<std::vector<std::uint8_t>> chunks;
            std::size_t cbytes = 0;
            auto t0 = std::chrono::steady_clock::now();
            for (std::size_t k = 0; k < kChunks; ++k) {
                chunks.push_back(
                    encode_chunk(b2nd::as_bytes(data.data() + k * kChunkElems, kChunkElems), p));
                cbytes += chunks.back().size();
            }
            const double enc = seconds_since(t0);
            t0 = std::chrono::steady_clock::now();
            bool ok = true;
            for (std::size_t k = 0; k < kChunks; ++k) {
                ChunkDecoder(chunks[k]).decode(back);
                ok =
                    ok && std::memcmp(back.data(), data.data() + k * kChunkElems, back.size()) == 0;
            }
            const double dec = seconds_since(t0);
            std::printf("%-8s %-11s %6.2f %10.2f %10.2f%s\n",
                        std::string(compressor_name(c)).c_str(), f.name,
                        static_cast<double>(data.size() * 4) / static_cast<double>(cbytes),
                        gb / enc, gb / dec, ok ? "" : "  ROUND TRIP FAILED");
            if (!ok) {
                return 1;
            }
        }
    }
    return 0;
}
