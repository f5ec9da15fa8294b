// BloscLZ: hand-made streams, round trips, and hostile streams.
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "codec/compressors.hpp"
#include "support/bytes.hpp"
#include "support/files.hpp"

using b2nd::codec::detail::blosclz_compress;
using b2nd::codec::detail::blosclz_decompress;

namespace {

std::vector<std::uint8_t> compress(const std::vector<std::uint8_t>& in, int clevel) {
    std::vector<std::uint8_t> out(in.size() + 64);
    const std::size_t n = blosclz_compress(clevel, in.data(), in.size(), out.data(), out.size());
    out.resize(n);
    return out;
}

std::vector<std::vector<std::uint8_t>> sample_inputs() {
    std::vector<std::vector<std::uint8_t>> v;
    b2nd::test::SplitMix rng(42);
    v.emplace_back(100000, 0);  // one long run
    std::vector<std::uint8_t> random(70000);
    for (auto& b : random) {
        b = static_cast<std::uint8_t>(rng.next());
    }
    v.push_back(random);
    for (std::size_t period : std::vector<std::size_t>{2, 3, 7, 64, 1000}) {
        std::vector<std::uint8_t> p(50000 + period);
        for (std::size_t i = 0; i < p.size(); ++i) {
            p[i] = static_cast<std::uint8_t>((i % period) * 37 + 11);
        }
        v.push_back(p);
    }
    std::string text;
    while (text.size() < 60000) {
        text += "the quick brown fox " + std::to_string(text.size() % 977) + " jumps; ";
    }
    v.emplace_back(text.begin(), text.end());
    // A far repetition: 20000 random bytes then the first 3000 again (distance > 8191).
    std::vector<std::uint8_t> far(23000);
    for (std::size_t i = 0; i < far.size(); ++i) {
        far[i] = random[i < 20000 ? i : i - 20000];
    }
    v.push_back(far);
    for (std::size_t n : std::vector<std::size_t>{16, 17, 31, 100, 257}) {
        v.emplace_back(random.begin(), random.begin() + static_cast<std::ptrdiff_t>(n));
        v.emplace_back(n, 7);
    }
    return v;
}

}  // namespace

TEST_CASE("blosclz: a hand-made stream with literals, a short match and the format marker",
          "[codec]") {
    // 0x22: literal run of 3 (ctrl 2) with the 001 marker in the top bits; "abc";
    // 0x80: match, L = 4 -> length 6, distance high bits 0; code 2 -> distance 3;
    // 0x00 'z': literal run of 1.
    const auto s = b2nd::test::hex("22 61 62 63  80 02  00 7a");
    std::vector<std::uint8_t> out(10);
    REQUIRE(blosclz_decompress(s.data(), s.size(), out.data(), out.size()));
    CHECK(std::string(out.begin(), out.end()) == "abcabcabcz");
    // The output size must match exactly.
    std::vector<std::uint8_t> bigger(11);
    CHECK_FALSE(blosclz_decompress(s.data(), s.size(), bigger.data(), bigger.size()));
}

TEST_CASE("blosclz: long and far matches decode", "[codec]") {
    // "ab", then a long match: 0xE0 (L = 7) + extension 11 -> length 9 + 11 = 20, distance 2
    // (code 1), then literal "!".
    const auto s = b2nd::test::hex("21 61 62  e0 0b 01  00 21");
    std::vector<std::uint8_t> out(23);
    REQUIRE(blosclz_decompress(s.data(), s.size(), out.data(), out.size()));
    std::string want;
    for (int i = 0; i < 11; ++i) {
        want += "ab";
    }
    CHECK(std::string(out.begin(), out.end()) == want + "!");
}

TEST_CASE("blosclz: round trips at every clevel", "[codec]") {
    for (const auto& in : sample_inputs()) {
        for (int clevel = 1; clevel <= 9; ++clevel) {
            INFO("size " << in.size() << " clevel " << clevel);
            const auto c = compress(in, clevel);
            if (c.empty()) {
                continue;  // incompressible: the chunk codec stores it raw
            }
            CHECK((c[0] >> 5) == 1);  // format marker
            std::vector<std::uint8_t> out(in.size());
            REQUIRE(blosclz_decompress(c.data(), c.size(), out.data(), out.size()));
            B2ND_REQUIRE_SAME_BYTES(out, in);
        }
    }
}

TEST_CASE("blosclz: compressible inputs do compress", "[codec]") {
    const auto inputs = sample_inputs();
    CHECK(compress(inputs[0], 5).size() < 1000);  // zeros
    CHECK(compress(inputs[2], 5).size() < 5000);  // period 2
    const auto& far = inputs[8];
    const auto c = compress(far, 9);
    REQUIRE(!c.empty());
    // 20000 incompressible bytes cost 20000 + 20000/32 literal-run bytes; the 3000 repeated ones
    // must shrink to a single far match.
    CHECK(c.size() < 20000 + 625 + 40);
}

TEST_CASE("blosclz: refuses output it cannot fit", "[codec]") {
    std::vector<std::uint8_t> in(1000);
    b2nd::test::SplitMix rng(1);
    for (auto& b : in) {
        b = static_cast<std::uint8_t>(rng.next());
    }
    std::vector<std::uint8_t> out(1000);
    CHECK(blosclz_compress(5, in.data(), in.size(), out.data(), 999) == 0);
}

TEST_CASE("blosclz: hostile streams fail cleanly", "[codec]") {
    std::vector<std::uint8_t> out(64);
    // A match reaching before the start of the output.
    const auto before = b2nd::test::hex("21 61 62  80 09  00 21");
    CHECK_FALSE(blosclz_decompress(before.data(), before.size(), out.data(), 10));
    // A literal run longer than the input.
    const auto lit = b2nd::test::hex("1f 61 62");
    CHECK_FALSE(blosclz_decompress(lit.data(), lit.size(), out.data(), 32));
    // A length extension that never ends.
    const auto ext = b2nd::test::hex("20 61  e0 ff ff ff");
    CHECK_FALSE(blosclz_decompress(ext.data(), ext.size(), out.data(), 64));
    // Every truncation of a valid stream fails or decodes to the exact size, never overruns.
    const auto inputs = sample_inputs();
    const auto c = compress(inputs[7], 5);  // text
    REQUIRE(!c.empty());
    std::vector<std::uint8_t> dst(inputs[7].size());
    for (std::size_t n = 0; n < c.size(); n += 7) {
        CHECK_FALSE(blosclz_decompress(c.data(), n, dst.data(), dst.size()));
    }
}
