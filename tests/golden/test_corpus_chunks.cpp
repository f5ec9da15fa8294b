// Every bare chunk of ../shared/corpus/chunks/ decodes to its expected bytes: whole, block by
// block, by byte ranges, and with two threads.
#include <algorithm>
#include <cstring>
#include <string>

#include <catch2/catch.hpp>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/registry.hpp>
#include <b2nd/error.hpp>

#include "../support/files.hpp"
#include "../support/json.hpp"

using b2nd::test::Json;

namespace {

struct Case {
    std::string folder;
    std::string name;
    std::vector<std::uint8_t> chunk;
    std::vector<std::uint8_t> expected;
    Json entry;
};

std::vector<std::uint8_t> expected_bytes(const std::string& dir, const Json& e) {
    if (!e["expected"].is_null()) {
        return b2nd::test::read_file(dir + "/" + e["expected"].as_string());
    }
    // "int32 little-endian i for i in 0..nbytes/4-1"
    REQUIRE(e["expected_pattern"].as_string().rfind("int32 little-endian i", 0) == 0);
    const auto n = static_cast<std::size_t>(e["nbytes"].as_int());
    std::vector<std::uint8_t> out(n);
    for (std::size_t i = 0; i < n / 4; ++i) {
        const auto v = static_cast<std::uint32_t>(i);
        out[4 * i + 0] = static_cast<std::uint8_t>(v);
        out[4 * i + 1] = static_cast<std::uint8_t>(v >> 8);
        out[4 * i + 2] = static_cast<std::uint8_t>(v >> 16);
        out[4 * i + 3] = static_cast<std::uint8_t>(v >> 24);
    }
    return out;
}

std::vector<Case> load_folder(const std::string& folder) {
    std::vector<Case> cases;
    const std::string dir = b2nd::test::corpus_dir() + "/chunks/" + folder;
    for (const auto& line : b2nd::test::read_lines(dir + "/index.jsonl")) {
        Case c;
        c.folder = folder;
        c.entry = Json::parse(line);
        c.name = c.entry["chunk"].as_string();
        c.chunk = b2nd::test::read_file(dir + "/" + c.name);
        c.expected = expected_bytes(dir, c.entry);
        cases.push_back(std::move(c));
    }
    return cases;
}

/// Uninitialized special chunks have unspecified content; we define it as zeros, which is also
/// what c-blosc2 wrote into the expected files.
/// The block shape an index line gives (from-plugins/: ZFP, NDCELL and NDMEAN need it).
std::vector<std::int64_t> blockshape_of(const Json& e) {
    std::vector<std::int64_t> s;
    if (e.has("blockshape") && !e["blockshape"].is_null()) {
        for (const Json& v : e["blockshape"].as_array()) {
            s.push_back(v.as_int());
        }
    }
    return s;
}

/// Whether the chunk needs ZFP (a compressor this build may lack).
bool needs_zfp(const Json& e) {
    return e.has("compformat") && e["compformat"].as_int() == 6 && e["udcodec"].as_int() >= 33 &&
           e["udcodec"].as_int() <= 35;
}

void check_case(const Case& c) {
    INFO(c.folder << "/" << c.name);
    b2nd::codec::ChunkDecoder dec(c.chunk, blockshape_of(c.entry));
    if (needs_zfp(c.entry) && !b2nd::codec::has_zfp()) {
        // Built without libzfp: decoding is refused clearly, unless no stream reaches zfp.
        std::vector<std::uint8_t> out(c.expected.size());
        try {
            dec.decode(out, 1);
            B2ND_REQUIRE_SAME_BYTES(out, c.expected);
        } catch (const b2nd::UnsupportedError& e) {
            CHECK_THAT(e.what(), Catch::Matchers::Contains("built without ZFP"));
        }
        return;
    }
    REQUIRE(dec.nbytes() == c.entry["nbytes"].as_int());
    REQUIRE(static_cast<int>(dec.header().version) == c.entry["version"].as_int());
    REQUIRE(static_cast<int>(dec.header().flags) == c.entry["flags"].as_int());
    REQUIRE(c.expected.size() == static_cast<std::size_t>(dec.nbytes()));

    if (dec.special() == b2nd::codec::Special::uninit) {
        // Unspecified content: c-blosc2 leaves its buffer as it was (the .bin holds whatever
        // that was); we define it as zeros.
        std::vector<std::uint8_t> out(c.expected.size(), 0xAB);
        dec.decode(out, 1);
        REQUIRE(std::all_of(out.begin(), out.end(), [](std::uint8_t v) { return v == 0; }));
        return;
    }
    std::vector<std::uint8_t> out(c.expected.size(), 0xAB);
    dec.decode(out, 1);
    B2ND_REQUIRE_SAME_BYTES(out, c.expected);

    std::vector<std::uint8_t> out2(c.expected.size(), 0xCD);
    dec.decode(out2, 2);
    B2ND_REQUIRE_SAME_BYTES(out2, c.expected);

    // Block by block, out of order (blocks after 0 first, so DELTA's reference is exercised).
    for (std::int32_t b = dec.nblocks() - 1; b >= 0; --b) {
        const auto off = static_cast<std::size_t>(dec.block_offset(b));
        const auto n = static_cast<std::size_t>(dec.block_nbytes(b));
        std::vector<std::uint8_t> blk(n, 0xEE);
        dec.decode_block(b, blk);
        const std::vector<std::uint8_t> want(
            c.expected.begin() + static_cast<std::ptrdiff_t>(off),
            c.expected.begin() + static_cast<std::ptrdiff_t>(off + n));
        INFO("block " << b);
        B2ND_REQUIRE_SAME_BYTES(blk, want);
    }

    // A few byte ranges that straddle block boundaries.
    b2nd::test::SplitMix rng(c.expected.size());
    for (int k = 0; k < 8 && !c.expected.empty(); ++k) {
        const std::size_t a = rng.below(c.expected.size());
        const std::size_t len = 1 + rng.below(std::min<std::size_t>(c.expected.size() - a, 300000));
        std::vector<std::uint8_t> part(len);
        dec.decode_range(static_cast<std::int64_t>(a), part);
        const std::vector<std::uint8_t> want(
            c.expected.begin() + static_cast<std::ptrdiff_t>(a),
            c.expected.begin() + static_cast<std::ptrdiff_t>(a + len));
        INFO("range " << a << " + " << len);
        B2ND_REQUIRE_SAME_BYTES(part, want);
    }
}

void run_folder(const std::string& folder) {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const auto cases = load_folder(folder);
    REQUIRE(!cases.empty());
    for (const auto& c : cases) {
        check_case(c);
    }
}

}  // namespace

TEST_CASE("corpus chunks: Blosc 1.x, 2.0 and 3.0 compat chunks decode", "[codec][golden]") {
    run_folder("blosc-compat");
}

TEST_CASE("corpus chunks: chunks of c-blosc2 3.3 frames decode", "[codec][golden]") {
    run_folder("from-frames");
}

TEST_CASE("corpus chunks: chunks of c-blosc2 2.x frames decode", "[codec][golden]") {
    run_folder("from-legacy-2x");
}

TEST_CASE("corpus chunks: chunks of upstream frames (VL blocks) decode", "[codec][golden]") {
    run_folder("from-upstream");
}

TEST_CASE("corpus chunks: chunks of plugin arrays decode with their geometry", "[codec][golden]") {
    run_folder("from-plugins");
}

TEST_CASE("corpus chunks: geometry plugins without a block shape say so", "[codec][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    int refused = 0;
    int lossless_without = 0;
    for (const auto& c : load_folder("from-plugins")) {
        INFO(c.name);
        b2nd::codec::ChunkDecoder dec(c.chunk);  // no geometry
        if (dec.special() != b2nd::codec::Special::none || dec.memcpyed()) {
            continue;
        }
        const auto& fl = c.entry["filters"].as_array();
        const bool geometry_filter = std::any_of(fl.begin(), fl.end(), [](const Json& f) {
            return f.as_int() == 32 || f.as_int() == 33;  // ndcell, ndmean
        });
        const bool zfp = needs_zfp(c.entry) && b2nd::codec::has_zfp();
        if (needs_zfp(c.entry) && !zfp) {
            continue;  // refused for another reason (check_case)
        }
        std::vector<std::uint8_t> out(c.expected.size());
        if (zfp || geometry_filter) {
            // A block that is all one value or stored raw never reaches the plugin, but a
            // chunk of them all is unlikely: at least one block must need the geometry.
            bool threw = false;
            try {
                dec.decode(out, 1);
            } catch (const b2nd::UnsupportedError& e) {
                threw = true;
                CHECK_THAT(e.what(), Catch::Matchers::Contains("block shape"));
            }
            refused += threw ? 1 : 0;
        } else {
            dec.decode(out, 1);  // NDLZ, INT_TRUNC, BYTEDELTA: the chunk is enough
            B2ND_REQUIRE_SAME_BYTES(out, c.expected);
            ++lossless_without;
        }
    }
    CHECK(refused >= (b2nd::codec::has_zfp() ? 40 : 10));
    CHECK(lossless_without >= 30);
}

TEST_CASE("corpus chunks: plugin chunks with a wrong geometry or corrupt streams fail cleanly",
          "[codec][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    int tried = 0;
    for (const auto& c : load_folder("from-plugins")) {
        INFO(c.name);
        const auto shape = blockshape_of(c.entry);
        const b2nd::codec::ChunkDecoder plain(c.chunk);
        if (plain.special() != b2nd::codec::Special::none || plain.memcpyed() || shape.empty()) {
            continue;
        }
        const bool geometry =
            needs_zfp(c.entry) ||
            std::any_of(c.entry["filters"].as_array().begin(), c.entry["filters"].as_array().end(),
                        [](const Json& f) { return f.as_int() == 32 || f.as_int() == 33; });
        if (!geometry || (needs_zfp(c.entry) && !b2nd::codec::has_zfp())) {
            continue;
        }
        ++tried;
        std::int64_t items = 1;
        for (std::int64_t d : shape) {
            items *= d;
        }
        // A shape whose items do not fill the blocks is refused up front.
        auto bigger = shape;
        bigger.back() += 1;
        CHECK_THROWS_AS(b2nd::codec::ChunkDecoder(c.chunk, bigger), b2nd::FormatError);
        std::vector<std::uint8_t> out(c.expected.size());
        // The same items read as one long row (what a wrong metalayer gives): garbage or a
        // FormatError, never a crash (the sanitizer builds run this).
        try {
            b2nd::codec::ChunkDecoder(c.chunk, {items}).decode(out, 1);
        } catch (const b2nd::FormatError&) {
        }
        // One byte flipped, at eight places of the chunk in turn.
        for (std::size_t k = 1; k <= 8; ++k) {
            auto bad = c.chunk;
            const std::size_t at = bad.size() * k / 9;
            bad[at] = static_cast<std::uint8_t>(~bad[at]);
            try {
                b2nd::codec::ChunkDecoder(bad, shape).decode(out, 1);
            } catch (const b2nd::FormatError&) {
            }
        }
        // Cut short: the header's cbytes no longer fits.
        const std::vector<std::uint8_t> cut(
            c.chunk.begin(), c.chunk.begin() + static_cast<std::ptrdiff_t>(c.chunk.size() / 2));
        CHECK_THROWS_AS(b2nd::codec::ChunkDecoder(cut, shape), b2nd::FormatError);
    }
    CHECK(tried >= (b2nd::codec::has_zfp() ? 40 : 10));
}
