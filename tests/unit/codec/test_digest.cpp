// The checksum's hash (src/codec/digest.hpp): XXH3-64 as published, the same from every build.
#include <vector>

#include <catch2/catch.hpp>

#include "codec/digest.hpp"

using namespace b2nd::codec::detail;

TEST_CASE("digest: XXH3-64 of the empty input is the published value", "[codec]") {
    // XXH3_64bits("", 0) with seed 0, from xxHash's documentation and test vectors.
    CHECK(digest64(nullptr, 0) == 0x2D06800538D394C2ULL);
    CHECK(digest64_baseline(nullptr, 0) == 0x2D06800538D394C2ULL);
}

TEST_CASE("digest: the AVX2 and baseline builds agree on every length", "[codec]") {
    std::vector<std::uint8_t> b(1 << 20);
    std::uint64_t x = 88172645463325252ULL;
    for (auto& v : b) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v = static_cast<std::uint8_t>(x);
    }
    std::vector<std::size_t> lengths;
    for (std::size_t n = 0; n <= 300; ++n) {
        lengths.push_back(n);
    }
    for (std::size_t n : {std::size_t{1023}, std::size_t{4096}, std::size_t{65537}, b.size()}) {
        lengths.push_back(n);
    }
    std::uint64_t previous = 0;
    for (const std::size_t n : lengths) {
        INFO(n << " bytes");
        const std::uint64_t d = digest64(b.data(), n);
        CHECK(d == digest64_baseline(b.data(), n));
#if defined(__x86_64__)
        if (__builtin_cpu_supports("avx2") != 0) {
            CHECK(d == digest64_avx2(b.data(), n));
        }
#endif
        CHECK(d != previous);
        previous = d;
    }
    // One flipped bit anywhere changes it.
    const std::uint64_t whole = digest64(b.data(), 4096);
    for (std::size_t i = 0; i < 4096 * 8; i += 97) {
        b[i / 8] ^= static_cast<std::uint8_t>(1U << (i % 8));
        CHECK(digest64(b.data(), 4096) != whole);
        b[i / 8] ^= static_cast<std::uint8_t>(1U << (i % 8));
    }
}

TEST_CASE("digest: two spans hash as their bytes joined", "[codec]") {
    // The two-span digest (a chunk's head, then its record) runs the streaming code of the
    // kernel the CPU has; it must equal the one-span digest of the joined bytes at any split.
    std::vector<std::uint8_t> b(70000);
    for (std::size_t i = 0; i < b.size(); ++i) {
        b[i] = static_cast<std::uint8_t>((i * 2654435761U) >> 13);
    }
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{240}, std::size_t{241},
                                std::size_t{4096}, std::size_t{16896}, b.size()}) {
        const std::uint64_t whole = digest64(b.data(), n);
        for (const std::size_t cut :
             {std::size_t{0}, std::size_t{1}, std::size_t{32}, n / 3, n / 2 + 1, n}) {
            if (cut > n) {
                continue;
            }
            INFO(n << " bytes cut at " << cut);
            CHECK(digest64(b2nd::ByteSpan(b.data(), cut),
                           b2nd::ByteSpan(b.data() + cut, n - cut)) == whole);
        }
    }
}
