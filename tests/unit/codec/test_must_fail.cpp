// Hostile chunks: every truncation and thousands of seeded bit flips end in a b2nd::Error or a
// decode of the declared size, never in another exception, a crash or an over-read (this file
// runs under ASan/UBSan in CI).
#include <cstring>

#include <catch2/catch.hpp>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/endian.hpp>

#include "support/files.hpp"

using namespace b2nd::codec;

namespace {

std::vector<std::uint8_t> sample(std::size_t n, int typesize) {
    std::vector<std::uint8_t> v(n);
    b2nd::test::SplitMix rng(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = static_cast<std::uint8_t>((i / static_cast<std::size_t>(typesize)) % 251 +
                                         (rng.below(16) == 0 ? rng.below(3) : 0));
    }
    return v;
}

/// Small chunks covering every codec, split and unsplit streams, each filter, runs, memcpy and
/// special chunks.
std::vector<std::vector<std::uint8_t>> small_chunks() {
    std::vector<std::vector<std::uint8_t>> chunks;
    struct Spec {
        Codec c;
        FilterPipeline f;
        SplitMode m;
        int ts;
    };
    const Spec specs[] = {
        {Codec::blosclz, make_pipeline({{Filter::shuffle, 0}}), SplitMode::always, 4},
        {Codec::lz4, make_pipeline({{Filter::bitshuffle, 0}}), SplitMode::never, 2},
        {Codec::lz4hc, make_pipeline({{Filter::delta, 0}, {Filter::shuffle, 0}}),
         SplitMode::automatic, 8},
        {Codec::zlib, make_pipeline({{Filter::shuffle, 0}, {Filter::bytedelta, 0}}),
         SplitMode::always, 4},
        {Codec::zstd, make_pipeline({{Filter::trunc_prec, 10}, {Filter::bitshuffle, 0}}),
         SplitMode::forward_compat, 4},
    };
    for (const Spec& s : specs) {
        EncodeParams p;
        p.codec = s.c;
        p.clevel = 5;
        p.filters = s.f;
        p.splitmode = s.m;
        p.typesize = s.ts;
        p.blocksize = 128 * s.ts;
        chunks.push_back(
            encode_chunk(sample(static_cast<std::size_t>(p.blocksize) * 3 + 40, s.ts), p));
    }
    EncodeParams store;
    store.clevel = 0;
    chunks.push_back(encode_chunk(sample(300, 1), store));
    std::vector<std::uint8_t> runs(2048, 9);
    runs[700] = 0;
    chunks.push_back(encode_chunk(runs, EncodeParams{}));
    chunks.push_back(make_repeated_chunk(64, std::vector<std::uint8_t>{1, 2, 3, 4}));
    chunks.push_back(make_nans_chunk(64, 4));
    return chunks;
}

/// Decodes `bytes` every way there is; returns false only through a b2nd::Error.
bool try_decode(const std::vector<std::uint8_t>& bytes) {
    try {
        ChunkDecoder dec(bytes);
        if (dec.nbytes() > (1 << 24)) {
            // A flip in nbytes of a special chunk legitimately claims up to 2 GiB; sample it.
            std::vector<std::uint8_t> part(4096);
            dec.decode_range(dec.nbytes() - 4096, part);
            return true;
        }
        std::vector<std::uint8_t> out(static_cast<std::size_t>(dec.nbytes()));
        dec.decode(out);
        if (dec.nblocks() > 0) {
            const std::int32_t last = dec.nblocks() - 1;
            std::vector<std::uint8_t> blk(static_cast<std::size_t>(dec.block_nbytes(last)));
            dec.decode_block(last, blk);
        }
        if (dec.nbytes() > 2) {
            std::vector<std::uint8_t> part(static_cast<std::size_t>(dec.nbytes() / 2));
            dec.decode_range(1, part);
        }
        return true;
    } catch (const b2nd::Error&) {
        return false;
    }
}

}  // namespace

TEST_CASE("must fail: every truncation of small chunks raises FormatError", "[codec][fuzz]") {
    for (const auto& chunk : small_chunks()) {
        REQUIRE(try_decode(chunk));
        for (std::size_t n = 0; n < chunk.size(); ++n) {
            const std::vector<std::uint8_t> cut(chunk.begin(),
                                                chunk.begin() + static_cast<std::ptrdiff_t>(n));
            INFO("truncated to " << n << " of " << chunk.size());
            REQUIRE_THROWS_AS(ChunkDecoder(cut), b2nd::FormatError);
        }
    }
}

TEST_CASE("must fail: truncations with cbytes patched to match are caught inside",
          "[codec][fuzz]") {
    for (const auto& chunk : small_chunks()) {
        for (std::size_t n = 32; n < chunk.size(); ++n) {
            std::vector<std::uint8_t> cut(chunk.begin(),
                                          chunk.begin() + static_cast<std::ptrdiff_t>(n));
            b2nd::format::store_le<std::int32_t>(cut.data() + 12, static_cast<std::int32_t>(n));
            INFO("truncated to " << n << " of " << chunk.size());
            // Either rejected, or (a chunk whose tail held only unused bytes) decoded in full.
            (void)try_decode(cut);
        }
    }
    SUCCEED("no crash, no foreign exception");
}

TEST_CASE("must fail: seeded random bit flips end in an Error or a decode", "[codec][fuzz]") {
    const auto chunks = small_chunks();
    b2nd::test::SplitMix rng(20261122);
    int failures = 0;
    int decodes = 0;
    for (int round = 0; round < 6000; ++round) {
        auto bytes = chunks[static_cast<std::size_t>(round) % chunks.size()];
        const std::uint64_t flips = 1 + rng.below(3);
        for (std::uint64_t k = 0; k < flips; ++k) {
            // Bias a third of the flips into the headers and tables where the structure lives.
            const std::size_t span =
                rng.below(3) == 0 ? std::min<std::size_t>(bytes.size(), 64) : bytes.size();
            bytes[rng.below(span)] ^= static_cast<std::uint8_t>(1U << rng.below(8));
        }
        if (try_decode(bytes)) {
            ++decodes;
        } else {
            ++failures;
        }
    }
    INFO(failures << " rejected, " << decodes << " decoded");
    CHECK(failures > 500);  // the checks do fire
    CHECK(decodes > 100);   // and flips in stored data can still decode
}

TEST_CASE("must fail: hostile headers do not make the decoder allocate", "[codec][fuzz]") {
    // A 32-byte special-zeros chunk claiming 2 GiB - 33 bytes: decode_chunk refuses above a limit.
    auto z = make_zeros_chunk(1 << 20, 4);
    b2nd::format::store_le<std::int32_t>(z.data() + 4, 0x7fffffdf);
    ChunkDecoder dec(z);
    CHECK(dec.nbytes() == 0x7fffffdf);
    REQUIRE_THROWS_AS(decode_chunk(z, 1, 1 << 26), b2nd::UsageError);
    // A destination smaller than the chunk is a usage error, not an overrun.
    std::vector<std::uint8_t> small(10);
    REQUIRE_THROWS_AS(dec.decode(small), b2nd::UsageError);
    std::vector<std::uint8_t> tail(0x100);
    REQUIRE_THROWS_AS(dec.decode_range(0x7fffff00, tail), b2nd::UsageError);
}

TEST_CASE("must fail: corpus chunks with flipped bits", "[codec][fuzz][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string dir = b2nd::test::corpus_dir() + "/chunks/";
    const char* names[] = {"from-frames/codec_blosclz_clevel5.c0000.chunk",
                           "from-frames/zstd_dict_i4.c0000.chunk",
                           "from-upstream/vlblocks-lz4-fixed-3.0.0.c0000.chunk",
                           "from-frames/filter_delta_shuffle_f8.c0000.chunk",
                           "blosc-compat/blosc-1.7.0-zlib.c0000.chunk"};
    b2nd::test::SplitMix rng(7);
    for (const char* name : names) {
        const auto chunk = b2nd::test::read_file(dir + name);
        REQUIRE(try_decode(chunk));
        for (int round = 0; round < 300; ++round) {
            auto bytes = chunk;
            const std::size_t span =
                round % 2 == 0 ? std::min<std::size_t>(bytes.size(), 128) : bytes.size();
            bytes[rng.below(span)] ^= static_cast<std::uint8_t>(1U << rng.below(8));
            (void)try_decode(bytes);
        }
    }
    SUCCEED("no crash, no foreign exception");
}
