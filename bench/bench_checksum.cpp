// The checksum choice (docs/CHECKSUMS.md): XXH3-64 as the library hashes (digest64; run with
// B2ND_SIMD=sse2 for its baseline build) against CRC32C with the SSE4.2 instruction, on one
// stream and on three interleaved ones (the combination of the three is not counted: an upper
// bound for an interleaved CRC32C), over buffers of 4 KiB, 256 KiB and 4 MiB touched beforehand;
// and XXH3-64 of two spans (300 bytes, then the rest), as a chunk's head and record are hashed.
//
//   bench_checksum [runs]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench_common.hpp"
#include "codec/digest.hpp"

#if defined(__x86_64__)
#include <nmmintrin.h>
#define B2ND_BENCH_CRC32C 1
#endif

namespace {

#ifdef B2ND_BENCH_CRC32C
__attribute__((target("sse4.2"))) std::uint64_t crc32c_1(const std::uint8_t* p, std::size_t n) {
    std::uint64_t c = 0xffffffffU;
    for (; n >= 8; n -= 8, p += 8) {
        std::uint64_t v;
        std::memcpy(&v, p, 8);
        c = _mm_crc32_u64(c, v);
    }
    for (; n > 0; --n, ++p) {
        c = _mm_crc32_u8(static_cast<std::uint32_t>(c), *p);
    }
    return c ^ 0xffffffffU;
}

__attribute__((target("sse4.2"))) std::uint64_t crc32c_3(const std::uint8_t* p, std::size_t n) {
    const std::size_t third = n / 24 * 8;
    std::uint64_t a = 0xffffffffU, b = a, c = a;
    for (std::size_t i = 0; i < third; i += 8) {
        std::uint64_t x, y, z;
        std::memcpy(&x, p + i, 8);
        std::memcpy(&y, p + third + i, 8);
        std::memcpy(&z, p + 2 * third + i, 8);
        a = _mm_crc32_u64(a, x);
        b = _mm_crc32_u64(b, y);
        c = _mm_crc32_u64(c, z);
    }
    return a ^ b ^ c ^ crc32c_1(p + 3 * third, n - 3 * third);
}
#endif

double gbps(std::uint64_t (*fn)(const std::uint8_t*, std::size_t),
            const std::vector<std::uint8_t>& b) {
    volatile std::uint64_t sink = 0;
    const std::size_t reps = std::max<std::size_t>(1, (std::size_t{1} << 30) / b.size());
    const double s = b2nd::bench::best_seconds(
        [&] {
            for (std::size_t r = 0; r < reps; ++r) {
                sink = sink + fn(b.data(), b.size());
            }
        },
        0.2);
    return static_cast<double>(b.size() * reps) / s / 1e9;
}

std::uint64_t xxh3(const std::uint8_t* p, std::size_t n) {
    return b2nd::codec::detail::digest64(p, n);
}

/// As a chunk's table entry is hashed: its head (here 300 bytes) and then its record.
std::uint64_t xxh3_two(const std::uint8_t* p, std::size_t n) {
    const std::size_t head = std::min<std::size_t>(300, n);
    return b2nd::codec::detail::digest64(b2nd::ByteSpan(p, head),
                                         b2nd::ByteSpan(p + head, n - head));
}

}  // namespace

int main(int argc, char** argv) {
    const int runs = argc > 1 ? std::atoi(argv[1]) : 3;
    const char* simd = std::getenv("B2ND_SIMD");
    std::printf("%-10s %-22s %s\n", "size", "hash", "GB/s per run");
    for (const std::size_t size :
         {std::size_t{4} << 10, std::size_t{256} << 10, std::size_t{4} << 20}) {
        std::vector<std::uint8_t> buf(size);
        for (std::size_t i = 0; i < size; ++i) {
            buf[i] = static_cast<std::uint8_t>(b2nd::bench::mix(i) >> 24);
        }
        struct Row {
            const char* name;
            std::uint64_t (*fn)(const std::uint8_t*, std::size_t);
        };
        std::vector<Row> rows = {{simd != nullptr ? "XXH3-64 (B2ND_SIMD)" : "XXH3-64", xxh3},
                                 {"XXH3-64, two spans", xxh3_two}};
#ifdef B2ND_BENCH_CRC32C
        if (__builtin_cpu_supports("sse4.2") != 0) {
            rows.push_back({"CRC32C, 1 stream", crc32c_1});
            rows.push_back({"CRC32C, 3 streams", crc32c_3});
        }
#endif
        for (const Row& r : rows) {
            std::printf("%-10zu %-22s", size, r.name);
            for (int k = 0; k < runs; ++k) {
                std::printf(" %6.1f", gbps(r.fn, buf));
            }
            std::printf("\n");
        }
    }
}
