// The b2nd-cpp demo. Part 1, arrays: a 256^3 float32 field (the f32cube of BENCHMARKS.md, 64 MiB)
// becomes a b2nd file; we reopen it and read an element, a plane, a box and the whole array,
// append and remove planes, and show what `b2nd info` would. Part 2, the chunk codec: 16 MiB of
// the same field compressed in 4 MiB chunks with each codec and filter (ratio, GB/s).
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <b2nd/b2nd.hpp>
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

int array_demo() {
    const std::string dir = (std::filesystem::temp_directory_path() / "b2nd-demo").string();
    std::filesystem::create_directories(dir);
    const std::string path = dir + "/temperature.b2nd";
    const std::vector<float> field = f32cube(std::size_t{256} * 512 * 512);  // the first 256 planes
    std::vector<float> cube(std::size_t{256} * 256 * 256);
    for (std::size_t i = 0; i < 256; ++i) {  // a 256^3 corner of it
        for (std::size_t j = 0; j < 256; ++j) {
            std::memcpy(&cube[(i * 256 + j) * 256], &field[(i * 512 + j) * 512],
                        256 * sizeof(float));
        }
    }
    std::printf("b2nd-cpp demo, part 1: arrays\n\n");

    b2nd::CreateOptions o;  // Zstd 1 + SHUFFLE; chunk and block shapes chosen automatically
    o.overwrite = true;
    auto t0 = std::chrono::steady_clock::now();
    auto t = b2nd::NDArray<float>::create_from(path, {256, 256, 256}, cube, o);
    const double created = seconds_since(t0);
    std::printf("created %s: shape %s, chunks %s, blocks %s\n", path.c_str(),
                b2nd::to_string(t.shape()).c_str(), b2nd::to_string(t.chunk_shape()).c_str(),
                b2nd::to_string(t.block_shape()).c_str());
    std::printf("  64 MiB written in %.1f ms (%.2f GB/s), compression ratio %.2f\n", created * 1e3,
                0.0671 / created,
                static_cast<double>(t.any().nbytes()) / static_cast<double>(t.any().cbytes()));
    t = {};

    t0 = std::chrono::steady_clock::now();
    const auto a = b2nd::open<float>(path);  // maps the file; reads the header and the index
    std::printf("opened in %.0f us: dtype %s\n", seconds_since(t0) * 1e6, a.dtype().str().c_str());

    t0 = std::chrono::steady_clock::now();
    const float x = a(120, 40, 7);  // decodes one block
    const double cold = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    const float y = a(120, 41, 7);  // the same block, from the cache
    const double warm = seconds_since(t0);
    std::printf(
        "a(120, 40, 7) = %.4f in %.1f us (one block decoded); a(120, 41, 7) = %.4f in %.2f us "
        "(cached)\n",
        static_cast<double>(x), cold * 1e6, static_cast<double>(y), warm * 1e6);

    t0 = std::chrono::steady_clock::now();
    const std::vector<float> plane = a.read({b2nd::Slice::all(), 100, b2nd::Slice::all()});
    std::printf("a[:, 100, :]: %zu values in %.2f ms\n", plane.size(), seconds_since(t0) * 1e3);
    t0 = std::chrono::steady_clock::now();
    const std::vector<float> box = a.read(b2nd::Box::region({10, 20, 30}, {16, 16, 16}));
    std::printf("a[10:26, 20:36, 30:46]: %zu values in %.0f us\n", box.size(),
                seconds_since(t0) * 1e6);
    t0 = std::chrono::steady_clock::now();
    const std::vector<float> all = a.read();
    const double whole = seconds_since(t0);
    std::printf("the whole array in %.1f ms (%.2f GB/s, %d threads), %s\n", whole * 1e3,
                0.0671 / whole, a.any().nthreads(),
                all == cube ? "identical to what was written" : "DIFFERENT");
    if (all != cube || plane[5 * 256 + 9] != cube[(5 * 256 + 100) * 256 + 9] ||
        x != cube[(120 * 256 + 40) * 256 + 7]) {
        return 1;
    }

    b2nd::OpenOptions w;
    w.writable = true;
    auto rw = b2nd::open<float>(path, w);
    rw.append(0, std::vector<float>(16 * 256 * 256, -1.0f));
    std::printf("appended 16 planes: shape %s, a(270, 0, 0) = %.1f\n",
                b2nd::to_string(rw.shape()).c_str(), static_cast<double>(rw(270, 0, 0)));
    rw.remove(0, 256, 16);
    std::printf("removed them again: shape %s\n", b2nd::to_string(rw.shape()).c_str());
    std::printf("(try: b2nd info %s)\n\n", path.c_str());
    return 0;
}

int main() {
    using namespace b2nd::codec;
    if (array_demo() != 0) {
        std::printf("ARRAY DEMO FAILED\n");
        return 1;
    }
    constexpr std::size_t kChunkElems = 1 << 20;  // 4 MiB of float32
    constexpr std::size_t kChunks = 4;
    const std::vector<float> data = f32cube(kChunkElems * kChunks);
    const double gb = static_cast<double>(data.size() * sizeof(float)) / 1e9;

    std::printf(
        "b2nd-cpp demo, part 2: the chunk codec on %zu chunks of 4 MiB float32 (SIMD: %s)\n\n",
        kChunks, std::string(simd_backend()).c_str());
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
