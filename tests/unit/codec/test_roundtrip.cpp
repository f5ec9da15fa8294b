// Round trips through encode_chunk/decode for every compressor x clevel x pipeline x typesize x
// split mode, with odd sizes; and the encoder's observable c-blosc2 behaviours.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>

#include <catch2/catch.hpp>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/error.hpp>

#include "support/data.hpp"
#include "support/files.hpp"

using namespace b2nd::codec;

namespace {

/// What TRUNC_PREC leaves of `in` (a reference written here, not the code under test).
std::vector<std::uint8_t> truncated(const std::vector<std::uint8_t>& in, int typesize, int bits) {
    std::vector<std::uint8_t> out(in);
    const int mantissa = typesize == 4 ? 23 : 52;
    const int zeroed = bits >= 0 ? mantissa - bits : -bits;
    const auto ts = static_cast<std::size_t>(typesize);
    for (std::size_t e = 0; e + ts <= out.size(); e += ts) {
        for (int bit = 0; bit < zeroed; ++bit) {
            out[e + static_cast<std::size_t>(bit / 8)] &=
                static_cast<std::uint8_t>(~(1U << (bit % 8)));
        }
    }
    return out;
}

struct Pipeline {
    const char* name;
    FilterPipeline filters;
    int trunc_bits;  // 0: no trunc_prec
};

std::vector<Pipeline> pipelines() {
    return {
        {"none", make_pipeline({}), 0},
        {"shuffle", make_pipeline({{Filter::shuffle, 0}}), 0},
        {"bitshuffle", make_pipeline({{Filter::bitshuffle, 0}}), 0},
        {"delta+shuffle", make_pipeline({{Filter::delta, 0}, {Filter::shuffle, 0}}), 0},
        {"truncprec+bitshuffle", make_pipeline({{Filter::trunc_prec, 12}, {Filter::bitshuffle, 0}}),
         12},
    };
}

void check_roundtrip(const std::vector<std::uint8_t>& in,
                     const EncodeParams& p,
                     const std::vector<std::uint8_t>& want) {
    const auto chunk = encode_chunk(in, p);
    REQUIRE(chunk.size() <= max_encoded_size(in.size()));
    ChunkDecoder dec(chunk);
    REQUIRE(dec.nbytes() == static_cast<std::int64_t>(in.size()));
    REQUIRE(dec.typesize() == (p.typesize > 255 ? 1 : p.typesize));
    if (p.clevel == 0 || in.size() < 32) {
        REQUIRE(dec.memcpyed());
    }
    std::vector<std::uint8_t> out(in.size(), 0x5A);
    dec.decode(out);
    B2ND_REQUIRE_SAME_BYTES(out, want);
    std::vector<std::uint8_t> out2(in.size(), 0xA5);
    dec.decode(out2, 2);
    B2ND_REQUIRE_SAME_BYTES(out2, want);
    for (std::int32_t b = dec.nblocks() - 1; b >= 0; --b) {
        std::vector<std::uint8_t> blk(static_cast<std::size_t>(dec.block_nbytes(b)));
        dec.decode_block(b, blk);
        const auto off = static_cast<std::ptrdiff_t>(dec.block_offset(b));
        REQUIRE(std::equal(blk.begin(), blk.end(), want.begin() + off));
    }
    // Multithreaded encoding gives the same bytes.
    EncodeParams p2 = p;
    p2.nthreads = 2;
    REQUIRE(encode_chunk(in, p2) == chunk);
    // So does encoding block by block from a fill function, on one thread and two.
    const std::int32_t bs = effective_blocksize(p, static_cast<std::int64_t>(in.size()));
    std::atomic<bool> bad_request{false};
    const BlockFill fill = [&](std::int32_t i, std::uint8_t* dest, std::size_t n) {
        const auto off = static_cast<std::size_t>(i) * static_cast<std::size_t>(bs);
        if (i < 0 || off >= std::max<std::size_t>(in.size(), 1) ||
            n != std::min(static_cast<std::size_t>(bs), in.size() - off)) {
            bad_request = true;
            return;
        }
        std::memcpy(dest, in.data() + off, n);
    };
    for (const EncodeParams* q : std::initializer_list<const EncodeParams*>{&p, &p2}) {
        std::vector<std::uint8_t> filled(max_encoded_size(in.size()), 0xEE);
        filled.resize(encode_chunk(static_cast<std::int64_t>(in.size()), fill, *q, filled));
        REQUIRE_FALSE(bad_request);
        REQUIRE(filled == chunk);
    }
}

}  // namespace

TEST_CASE("round trip: every compressor x clevel x pipeline x typesize x splitmode", "[codec]") {
    // One run per codec: a failure names it, and the other codecs still run.
    const Codec c = GENERATE(Codec::blosclz, Codec::lz4, Codec::lz4hc, Codec::zlib, Codec::zstd);
    const SplitMode modes[] = {SplitMode::always, SplitMode::never, SplitMode::automatic,
                               SplitMode::forward_compat};
    for (const Pipeline& pl : pipelines()) {
        for (int typesize : {1, 2, 3, 4, 7, 8, 16}) {
            if (pl.trunc_bits != 0 && typesize != 4 && typesize != 8) {
                continue;  // trunc_prec is defined for float32 and float64 only
            }
            const std::int32_t blocksize = 64 * typesize;  // small blocks: many per chunk
            // multi-block with a short last block; one partial block; a size that is not a
            // multiple of the typesize; empty.
            const std::size_t sizes[] = {
                static_cast<std::size_t>(blocksize) * 3 + static_cast<std::size_t>(typesize) * 5,
                static_cast<std::size_t>(blocksize) / 2,
                static_cast<std::size_t>(blocksize) * 2 + 1, 0};
            for (std::size_t nbytes : sizes) {
                const auto in = b2nd::test::smooth_bytes(
                    nbytes, typesize, nbytes + static_cast<std::size_t>(typesize));
                const auto want = pl.trunc_bits != 0 ? truncated(in, typesize, pl.trunc_bits) : in;
                for (int clevel : {0, 1, 5, 9}) {
                    for (SplitMode m : modes) {
                        EncodeParams p;
                        p.codec = c;
                        p.clevel = clevel;
                        p.filters = pl.filters;
                        p.typesize = typesize;
                        p.blocksize = blocksize;
                        p.splitmode = m;
                        INFO(codec_name(c)
                             << " clevel " << clevel << " " << pl.name << " typesize " << typesize
                             << " " << split_mode_name(m) << " nbytes " << nbytes);
                        check_roundtrip(in, p, want);
                    }
                }
            }
        }
    }
}

TEST_CASE("round trip: automatic block sizes on a 1 MiB float32 field", "[codec]") {
    const auto in = b2nd::test::smooth_bytes(1 << 20, 4, 3);
    for (Codec c : {Codec::blosclz, Codec::lz4, Codec::zstd}) {
        EncodeParams p;
        p.codec = c;
        p.clevel = 5;
        p.typesize = 4;
        INFO(codec_name(c));
        const auto chunk = encode_chunk(in, p);
        CHECK(chunk.size() < in.size() * 3 / 4);
        ChunkDecoder dec(chunk);
        CHECK(dec.blocksize() == effective_blocksize(p, static_cast<std::int64_t>(in.size())));
        CHECK(dec.nblocks() > 1);
        B2ND_REQUIRE_SAME_BYTES(decode_chunk(chunk), in);
    }
}

TEST_CASE("encoder: automatic block size and split follow c-blosc2's rules", "[codec]") {
    EncodeParams p;
    p.typesize = 4;
    p.codec = Codec::zstd;
    p.clevel = 1;  // split (zstd <= 5 with shuffle): 32 KiB x typesize
    CHECK(effective_blocksize(p, 4 << 20) == 128 * 1024);
    CHECK(splits_streams(p, 128 * 1024));
    p.clevel = 9;  // not split; HCR: 32K * 2 * 8 * 2
    CHECK(effective_blocksize(p, 4 << 20) == 1024 * 1024);
    CHECK_FALSE(splits_streams(p, 1024 * 1024));
    p.codec = Codec::lz4hc;
    p.clevel = 5;
    CHECK_FALSE(splits_streams(p, 256 * 1024));
    p.codec = Codec::blosclz;
    p.filters = make_pipeline({});
    CHECK_FALSE(splits_streams(p, 256 * 1024));  // no shuffle: not split
    p.splitmode = SplitMode::always;
    CHECK(splits_streams(p, 256 * 1024));
    p.splitmode = SplitMode::never;
    p.filters = make_pipeline({{Filter::shuffle, 0}});
    CHECK_FALSE(splits_streams(p, 256 * 1024));
    p.splitmode = SplitMode::automatic;
    p.typesize = 32;  // more than 16 streams: not split
    CHECK_FALSE(splits_streams(p, 256 * 1024));
    EncodeParams small;
    small.typesize = 8;
    CHECK(effective_blocksize(small, 4) == 1);     // fewer bytes than one element
    CHECK(effective_blocksize(small, 100) == 96);  // clamped to nbytes, rounded to the typesize
}

TEST_CASE("encoder: an all-zero chunk becomes a special zeros chunk", "[codec]") {
    const std::vector<std::uint8_t> zeros(100000, 0);
    EncodeParams p;
    p.typesize = 4;
    const auto chunk = encode_chunk(zeros, p);
    REQUIRE(chunk.size() == 32);
    ChunkDecoder dec(chunk);
    CHECK(dec.special() == Special::zeros);
    B2ND_REQUIRE_SAME_BYTES(decode_chunk(chunk), zeros);
}

TEST_CASE("encoder: byte runs are stored as run streams", "[codec]") {
    std::vector<std::uint8_t> in(40000, 7);
    EncodeParams p;
    p.typesize = 4;
    p.blocksize = 4000;
    const auto chunk = encode_chunk(in, p);
    // 10 blocks x 4 streams x (4 size bytes + 1 token) after the header and the starts table.
    CHECK(chunk.size() == 32 + 10 * 4 + 10 * 4 * 5);
    B2ND_REQUIRE_SAME_BYTES(decode_chunk(chunk), in);
}

TEST_CASE("encoder: incompressible data falls back to a memcpyed chunk", "[codec]") {
    std::vector<std::uint8_t> in(50000);
    b2nd::test::SplitMix rng(5);
    for (auto& b : in) {
        b = static_cast<std::uint8_t>(rng.next());
    }
    for (Codec c : {Codec::blosclz, Codec::lz4, Codec::zstd}) {
        EncodeParams p;
        p.codec = c;
        p.typesize = 1;
        const auto chunk = encode_chunk(in, p);
        ChunkDecoder dec(chunk);
        CHECK(dec.memcpyed());
        CHECK(chunk.size() == in.size() + 32);
        B2ND_REQUIRE_SAME_BYTES(decode_chunk(chunk), in);
    }
}

TEST_CASE("encoder: typesizes above 255 are coded as 1, like c-blosc2", "[codec]") {
    const auto in = b2nd::test::smooth_bytes(300 * 40, 300, 1);
    EncodeParams p;
    p.typesize = 300;
    const auto chunk = encode_chunk(in, p);
    CHECK(ChunkDecoder(chunk).typesize() == 1);
    B2ND_REQUIRE_SAME_BYTES(decode_chunk(chunk), in);
}

TEST_CASE("encoder: shuffle meta groups bytes in units other than the typesize", "[codec]") {
    const auto in = b2nd::test::smooth_bytes(4096, 4, 9);
    EncodeParams p;
    p.typesize = 16;  // e.g. a <U4 string: 16 bytes made of four 4-byte code points
    p.filters = make_pipeline({{Filter::shuffle, 4}});
    const auto chunk = encode_chunk(in, p);
    CHECK(ChunkDecoder(chunk).header().filters_meta[5] == 4);
    B2ND_REQUIRE_SAME_BYTES(decode_chunk(chunk), in);
}

TEST_CASE("encoder: bytedelta after shuffle round trips", "[codec]") {
    const auto in = b2nd::test::smooth_bytes(8192, 4, 2);
    EncodeParams p;
    p.typesize = 4;
    p.filters = make_pipeline({{Filter::shuffle, 0}, {Filter::bytedelta, 0}});
    B2ND_REQUIRE_SAME_BYTES(decode_chunk(encode_chunk(in, p)), in);
}

TEST_CASE("encoder: delta after trunc_prec uses the truncated reference and reads back",
          "[codec]") {
    const auto in = b2nd::test::smooth_bytes(16384, 4, 4);
    EncodeParams p;
    p.typesize = 4;
    p.blocksize = 1024;
    p.filters = make_pipeline({{Filter::trunc_prec, 10}, {Filter::delta, 0}, {Filter::shuffle, 0}});
    B2ND_REQUIRE_SAME_BYTES(decode_chunk(encode_chunk(in, p)), truncated(in, 4, 10));
}

TEST_CASE("encoder: invalid parameters are usage errors", "[codec]") {
    const std::vector<std::uint8_t> in(100, 1);
    EncodeParams p;
    p.clevel = 10;
    REQUIRE_THROWS_AS(encode_chunk(in, p), b2nd::UsageError);
    p = EncodeParams{};
    p.typesize = 0;
    REQUIRE_THROWS_AS(encode_chunk(in, p), b2nd::UsageError);
    p = EncodeParams{};
    p.typesize = 2;
    p.filters = make_pipeline({{Filter::trunc_prec, 5}});
    REQUIRE_THROWS_WITH(encode_chunk(in, p), Catch::Matchers::Contains("trunc_prec precision 5"));
    p.typesize = 4;
    p.filters = make_pipeline({{Filter::shuffle, 0}, {Filter::trunc_prec, 5}});
    REQUIRE_THROWS_WITH(encode_chunk(in, p), Catch::Matchers::Contains("must come before"));
    p.filters = make_pipeline({{Filter::bytedelta_legacy, 0}});
    REQUIRE_THROWS_AS(encode_chunk(in, p), b2nd::UsageError);
    p = EncodeParams{};
    p.blocksize = -1;
    REQUIRE_THROWS_AS(encode_chunk(in, p), b2nd::UsageError);
    std::vector<std::uint8_t> small(50);
    REQUIRE_THROWS_AS(encode_chunk(in, EncodeParams{}, small), b2nd::UsageError);
}

TEST_CASE("special chunk builders", "[codec]") {
    const auto z = make_zeros_chunk(4000, 8, 800);
    ChunkDecoder dz(z);
    CHECK(dz.special() == Special::zeros);
    CHECK(dz.nblocks() == 5);
    CHECK(decode_chunk(z) == std::vector<std::uint8_t>(4000, 0));

    const auto nan = make_nans_chunk(64, 8);
    const auto nan_bytes = decode_chunk(nan);
    for (std::size_t i = 0; i < 8; ++i) {
        double d;
        std::memcpy(&d, nan_bytes.data() + 8 * i, 8);
        CHECK(std::isnan(d));
    }
    const auto nanf = decode_chunk(make_nans_chunk(16, 4));
    float f;
    std::memcpy(&f, nanf.data() + 12, 4);
    CHECK(std::isnan(f));
    REQUIRE_THROWS_AS(make_nans_chunk(16, 2), b2nd::UsageError);

    const std::vector<std::uint8_t> value = {1, 2, 3};
    const auto rep = make_repeated_chunk(30, value, 9);
    REQUIRE(rep.size() == 35);
    ChunkDecoder dr(rep);
    CHECK(dr.special() == Special::value);
    const auto rb = decode_chunk(rep);
    for (std::size_t i = 0; i < rb.size(); ++i) {
        CHECK(rb[i] == value[i % 3]);
    }
    // A block boundary (9) that does not fall on a value boundary keeps the pattern's phase.
    std::vector<std::uint8_t> blk(9);
    dr.decode_block(1, blk);
    CHECK(blk[0] == value[0]);
    std::vector<std::uint8_t> part(5);
    dr.decode_range(4, part);
    CHECK(part == std::vector<std::uint8_t>({2, 3, 1, 2, 3}));
    REQUIRE_THROWS_AS(make_repeated_chunk(31, value), b2nd::UsageError);

    const auto un = make_uninit_chunk(40, 4);
    CHECK(ChunkDecoder(un).special() == Special::uninit);
    CHECK(decode_chunk(un) == std::vector<std::uint8_t>(40, 0));
}

TEST_CASE("encoding block by block: incompressible chunks and DELTA after TRUNC_PREC", "[codec]") {
    // Paths of the fill encoder that the round-trip matrix does not reach: a chunk that does not
    // compress (stored memcpyed: every block filled a second time), and DELTA whose reference is
    // block 0 truncated.
    b2nd::test::SplitMix rng(77);
    std::vector<std::uint8_t> noise(4096 + 12);
    for (auto& b : noise) {
        b = static_cast<std::uint8_t>(rng.next());
    }
    const auto smooth = b2nd::test::smooth_bytes(4096, 4, 5);
    struct Case {
        const char* name;
        const std::vector<std::uint8_t>* in;
        FilterPipeline filters;
    };
    const Case cases[] = {
        {"noise, shuffle", &noise, make_pipeline({{Filter::shuffle, 0}})},
        {"smooth, trunc_prec+delta+shuffle", &smooth,
         make_pipeline({{Filter::trunc_prec, 10}, {Filter::delta, 0}, {Filter::shuffle, 0}})},
    };
    for (const Case& c : cases) {
        for (int threads : {1, 2}) {
            INFO(c.name << ", " << threads << " threads");
            EncodeParams p;
            p.codec = Codec::lz4;
            p.clevel = 5;
            p.typesize = 4;
            p.blocksize = 512;
            p.filters = c.filters;
            p.nthreads = threads;
            const auto& in = *c.in;
            const auto whole = encode_chunk(in, p);
            std::atomic<int> calls{0};
            const BlockFill fill = [&](std::int32_t i, std::uint8_t* dest, std::size_t n) {
                ++calls;
                std::memcpy(dest, in.data() + static_cast<std::size_t>(i) * 512, n);
            };
            std::vector<std::uint8_t> filled(max_encoded_size(in.size()));
            filled.resize(encode_chunk(static_cast<std::int64_t>(in.size()), fill, p, filled));
            REQUIRE(filled == whole);
            const ChunkDecoder dec(filled);
            const int nblocks = dec.nblocks();
            if (&in == &noise) {
                REQUIRE(dec.memcpyed());
                // tried until the encoding outgrew the chunk, then every block stored
                CHECK(calls > nblocks);
                CHECK(calls <= 2 * nblocks);
            } else {
                REQUIRE_FALSE(dec.memcpyed());
                CHECK(calls == nblocks + 1);  // block 0 once more, as DELTA's reference
            }
        }
    }
    // An empty fill function is a usage error, not a crash.
    std::vector<std::uint8_t> out(max_encoded_size(64));
    CHECK_THROWS_AS(encode_chunk(64, BlockFill{}, EncodeParams{}, out), b2nd::UsageError);
}

TEST_CASE("encoder: BlockSeen is shown every block's input, compressed or stored", "[codec]") {
    // Each block is shown with its input bytes, on any thread; a chunk that ends up stored as it
    // is shows its blocks again as stored (a watcher keeps the last of them).
    b2nd::test::SplitMix rng(78);
    std::vector<std::uint8_t> noise(5 * 512 + 100);
    for (auto& b : noise) {
        b = static_cast<std::uint8_t>(rng.next());
    }
    const auto smooth = b2nd::test::smooth_bytes(5 * 512 + 100, 4, 5);
    const std::vector<std::uint8_t>* inputs[] = {&noise, &smooth};
    for (const auto* in : inputs) {
        for (const int threads : {1, 2}) {
            for (const bool by_blocks : {false, true}) {
                INFO((in == &noise ? "noise" : "smooth")
                     << ", " << threads << " threads" << (by_blocks ? ", by blocks" : ""));
                EncodeParams p;
                p.codec = Codec::lz4;
                p.clevel = 5;
                p.typesize = 4;
                p.blocksize = 512;
                p.filters = make_pipeline({{Filter::shuffle, 0}});
                p.nthreads = threads;
                std::vector<std::vector<std::uint8_t>> shown(6);
                std::mutex m;
                const BlockSeen seen = [&](std::int32_t i, const std::uint8_t* d, std::size_t n) {
                    std::lock_guard<std::mutex> l(m);
                    shown.at(static_cast<std::size_t>(i)).assign(d, d + n);
                };
                std::vector<std::uint8_t> out(max_encoded_size(in->size()));
                if (by_blocks) {
                    const BlockFill fill = [&](std::int32_t i, std::uint8_t* dest, std::size_t n) {
                        std::memcpy(dest, in->data() + static_cast<std::size_t>(i) * 512, n);
                    };
                    out.resize(
                        encode_chunk(static_cast<std::int64_t>(in->size()), fill, p, out, &seen));
                } else {
                    out.resize(encode_chunk(*in, p, out, &seen));
                }
                CHECK(out == encode_chunk(*in, p));  // watching changes nothing
                CHECK(ChunkDecoder(out).memcpyed() == (in == &noise));
                for (std::size_t i = 0; i < 6; ++i) {
                    const std::size_t a = i * 512;
                    const std::size_t e = std::min(in->size(), a + 512);
                    CHECK(shown[i] == std::vector<std::uint8_t>(in->data() + a, in->data() + e));
                }
            }
        }
    }
}
