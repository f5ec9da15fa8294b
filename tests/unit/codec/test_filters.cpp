// Filters against naive reference implementations written from the format description.
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/codec/filters.hpp>
#include <b2nd/error.hpp>

#include "codec/simd.hpp"
#include "support/files.hpp"

using namespace b2nd::codec;

namespace {

std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint64_t seed) {
    b2nd::test::SplitMix rng(seed);
    std::vector<std::uint8_t> v(n);
    for (auto& b : v) {
        b = static_cast<std::uint8_t>(rng.next());
    }
    return v;
}

// shuffled[j * n + i] = plain[i * T + j]; trailing bytes unchanged.
std::vector<std::uint8_t> naive_shuffle(int t, const std::vector<std::uint8_t>& in) {
    const auto ts = static_cast<std::size_t>(t);
    const std::size_t n = in.size() / ts;
    std::vector<std::uint8_t> out(in);
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < ts; ++j) {
            out[j * n + i] = in[i * ts + j];
        }
    }
    return out;
}

// Row j*8+b holds bit b of byte j of each of the first n8 elements, element i at bit i%8 of
// byte i/8 of the row; the rest is copied.
std::vector<std::uint8_t> naive_bitshuffle(int t, const std::vector<std::uint8_t>& in) {
    const auto ts = static_cast<std::size_t>(t);
    std::size_t n = in.size() / ts;
    n -= n % 8;
    std::vector<std::uint8_t> out(in);
    std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n * ts), 0);
    const std::size_t row_bytes = n / 8;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < ts; ++j) {
            for (unsigned b = 0; b < 8; ++b) {
                const unsigned bit = (in[i * ts + j] >> b) & 1U;
                out[(j * 8 + b) * row_bytes + i / 8] |= static_cast<std::uint8_t>(bit << (i % 8));
            }
        }
    }
    return out;
}

const std::vector<std::size_t> kSizes = {0,   1,   7,    15,   16,       17,        31,
                                         32,  33,  63,   64,   100,      255,       256,
                                         257, 511, 1000, 1024, 4096 + 3, 65536 + 17};

}  // namespace

TEST_CASE("shuffle and unshuffle match the reference for every unit and size", "[codec]") {
    std::vector<int> units;
    for (int t = 1; t <= 20; ++t) {
        units.push_back(t);
    }
    // Record-like sizes: the generic unshuffle goes 8 streams x 8 elements at a time.
    units.insert(units.end(), {24, 33, 36, 41, 64});
    for (int t : units) {
        for (std::size_t n : kSizes) {
            INFO("unit " << t << " bytes " << n);
            const auto in = random_bytes(n, n * 31 + static_cast<std::size_t>(t));
            std::vector<std::uint8_t> out(n), back(n);
            shuffle(t, n, in.data(), out.data());
            B2ND_REQUIRE_SAME_BYTES(out, naive_shuffle(t, in));
            unshuffle(t, n, out.data(), back.data());
            B2ND_REQUIRE_SAME_BYTES(back, in);
        }
    }
}

TEST_CASE("each SIMD kernel set agrees with the reference", "[codec]") {
    std::vector<const b2nd::codec::detail::SimdKernels*> kernels;
#if defined(B2ND_HAVE_X86_KERNELS)
    kernels.push_back(&b2nd::codec::detail::sse2_kernels());
    if (__builtin_cpu_supports("avx2")) {
        kernels.push_back(&b2nd::codec::detail::avx2_kernels());
        if (__builtin_cpu_supports("gfni")) {
            kernels.push_back(&b2nd::codec::detail::gfni_kernels());
        }
    }
#endif
    if (kernels.empty()) {
        B2ND_SKIP("no SIMD kernels on this architecture");
    }
    for (const auto* k : kernels) {
        for (int t : {2, 4, 8, 16}) {
            for (std::size_t nelem :
                 std::vector<std::size_t>{0, 1, 15, 16, 31, 32, 33, 64, 65, 1000, 4099}) {
                INFO(k->name << " unit " << t << " elements " << nelem);
                const std::size_t n = nelem * static_cast<std::size_t>(t);
                const auto in = random_bytes(n, nelem + static_cast<std::size_t>(t));
                std::vector<std::uint8_t> out(n), back(n);
                REQUIRE(k->shuffle(t, nelem, in.data(), out.data()));
                B2ND_REQUIRE_SAME_BYTES(out, naive_shuffle(t, in));
                REQUIRE(k->unshuffle(t, nelem, out.data(), back.data()));
                B2ND_REQUIRE_SAME_BYTES(back, in);
            }
        }
        // The fused bitshuffle steps: on one byte stream, words_to_rows is the bit shuffle of
        // 1-byte elements (word counts that are multiples of every vector width).
        for (std::size_t nwords : std::vector<std::size_t>{32, 64, 320}) {
            INFO(k->name << " words " << nwords);
            const auto in = random_bytes(nwords * 8, nwords);
            std::vector<std::uint8_t> rows(in.size()), words(in.size());
            REQUIRE(k->words_to_rows(nwords, in.data(), rows.data()) == nwords);
            B2ND_REQUIRE_SAME_BYTES(rows, naive_bitshuffle(1, in));
            REQUIRE(k->rows_to_words(nwords, rows.data(), words.data()) == nwords);
            B2ND_REQUIRE_SAME_BYTES(words, in);
        }
        CHECK_FALSE(k->shuffle(3, 10, nullptr, nullptr));
    }
}

TEST_CASE("bitshuffle matches the bit-level reference and inverts", "[codec]") {
    for (int t : {1, 2, 3, 4, 5, 7, 8, 12, 16, 17}) {
        for (std::size_t n : kSizes) {
            INFO("typesize " << t << " bytes " << n);
            const auto in = random_bytes(n, n * 7 + static_cast<std::size_t>(t));
            std::vector<std::uint8_t> out(n), back(n), scratch(n);
            bitshuffle(t, n, in.data(), out.data(), scratch.data());
            B2ND_REQUIRE_SAME_BYTES(out, naive_bitshuffle(t, in));
            bitunshuffle(t, n, out.data(), back.data(), scratch.data());
            B2ND_REQUIRE_SAME_BYTES(back, in);
        }
    }
}

TEST_CASE("bitunshuffle with the Blosc1 layout copies blocks whose element count is odd",
          "[codec]") {
    // 12 elements of 4 bytes: not a multiple of 8, so Blosc 1.x stored them untransposed.
    const auto in = random_bytes(48, 1);
    std::vector<std::uint8_t> out(48), scratch(48);
    bitunshuffle(4, 48, in.data(), out.data(), scratch.data(), true);
    B2ND_REQUIRE_SAME_BYTES(out, in);
    // 16 elements + 3 stray bytes: transposed body, stray bytes read as zeros.
    auto plain = random_bytes(67, 2);
    std::vector<std::uint8_t> shuffled(67), back(67), s2(67);
    bitshuffle(4, 67, plain.data(), shuffled.data(), s2.data());
    bitunshuffle(4, 67, shuffled.data(), back.data(), s2.data(), true);
    plain[64] = plain[65] = plain[66] = 0;
    B2ND_REQUIRE_SAME_BYTES(back, plain);
}

TEST_CASE("delta encodes against the previous element in block 0 and block 0 elsewhere",
          "[codec]") {
    for (int t : {1, 2, 3, 4, 8, 16}) {
        const int unit = delta_unit(t);
        CHECK((unit == 1 || unit == 2 || unit == 4 || unit == 8));
        const auto in = random_bytes(37, static_cast<std::uint64_t>(t));
        std::vector<std::uint8_t> enc(37), dec(37);
        delta_encode(nullptr, true, t, 37, in.data(), enc.data());
        // first unit verbatim; the next is XOR of two consecutive units
        const auto u = static_cast<std::size_t>(unit);
        for (std::size_t k = 0; k < u; ++k) {
            CHECK(enc[k] == in[k]);
            CHECK(enc[u + k] == (in[u + k] ^ in[k]));
        }
        delta_decode(nullptr, true, t, 37, enc.data(), dec.data());
        B2ND_REQUIRE_SAME_BYTES(dec, in);
        // in place
        delta_decode(nullptr, true, t, 37, enc.data(), enc.data());
        B2ND_REQUIRE_SAME_BYTES(enc, in);
    }
    const auto block0 = random_bytes(40, 9);
    const auto in = random_bytes(40, 10);
    std::vector<std::uint8_t> enc(40), dec(40);
    delta_encode(block0.data(), false, 4, 38, in.data(), enc.data());
    for (std::size_t k = 0; k < 36; ++k) {
        CHECK(enc[k] == (in[k] ^ block0[k]));
    }
    CHECK(enc[36] == in[36]);  // trailing bytes past the last whole element are copied
    delta_decode(block0.data(), false, 4, 38, enc.data(), dec.data());
    CHECK(std::equal(dec.begin(), dec.begin() + 38, in.begin()));
}

TEST_CASE("trunc_prec zeroes low mantissa bits of float32 and float64", "[codec]") {
    float f[3] = {1.0f / 3.0f, -2.7182817f, 1e30f};
    float out[3];
    trunc_prec(10, 4, sizeof f, reinterpret_cast<const std::uint8_t*>(f),
               reinterpret_cast<std::uint8_t*>(out));
    for (int i = 0; i < 3; ++i) {
        std::uint32_t a, b;
        std::memcpy(&a, &f[i], 4);
        std::memcpy(&b, &out[i], 4);
        CHECK(b == (a & ~((1U << 13) - 1)));  // keep 10 of 23 bits
    }
    double d = 3.141592653589793, dout;
    trunc_prec(-20, 8, 8, reinterpret_cast<const std::uint8_t*>(&d),
               reinterpret_cast<std::uint8_t*>(&dout));
    std::uint64_t a, b;
    std::memcpy(&a, &d, 8);
    std::memcpy(&b, &dout, 8);
    CHECK(b == (a & ~((std::uint64_t{1} << 20) - 1)));
    CHECK(trunc_prec_valid(22, 4));
    CHECK_FALSE(trunc_prec_valid(0, 4));  // would remove every mantissa bit
    CHECK_FALSE(trunc_prec_valid(24, 4));
    CHECK_FALSE(trunc_prec_valid(10, 2));
    REQUIRE_THROWS_AS(trunc_prec(10, 2, 2, nullptr, nullptr), b2nd::UsageError);
}

TEST_CASE("bytedelta stores byte differences per channel and inverts", "[codec]") {
    // unit 4, 9 bytes: four channels of 2 bytes ([10 12] [15 15] [1 200] [3 4]) and 1 stray byte
    const std::vector<std::uint8_t> in = {10, 12, 15, 15, 1, 200, 3, 4, 99};
    std::vector<std::uint8_t> enc(in.size()), dec(in.size());
    bytedelta_encode(4, in.size(), in.data(), enc.data());
    const std::vector<std::uint8_t> want = {10, 2, 15, 0, 1, 199, 3, 1, 99};
    CHECK(enc == want);
    bytedelta_decode(4, in.size(), enc.data(), dec.data());
    CHECK(dec == in);
    for (std::size_t n : kSizes) {
        const auto r = random_bytes(n, n + 5);
        std::vector<std::uint8_t> e(n), d(n);
        bytedelta_encode(3, n, r.data(), e.data());
        bytedelta_decode(3, n, e.data(), d.data());
        B2ND_REQUIRE_SAME_BYTES(d, r);
    }
}

TEST_CASE("legacy bytedelta restarts the running sum at each channel's 16-byte tail", "[codec]") {
    // One channel of 20 bytes, all ones: the first 16 sum to 1..16, then restart at 1..4.
    const std::vector<std::uint8_t> in(20, 1);
    std::vector<std::uint8_t> out(20);
    bytedelta_decode(1, 20, in.data(), out.data(), true);
    for (std::size_t i = 0; i < 16; ++i) {
        CHECK(out[i] == i + 1);
    }
    for (std::size_t i = 16; i < 20; ++i) {
        CHECK(out[i] == i - 15);
    }
}

TEST_CASE("the SIMD backend reports its name", "[codec]") {
    const auto name = simd_backend();
    CHECK((name == "avx2+gfni" || name == "avx2" || name == "sse2" || name == "generic"));
}
