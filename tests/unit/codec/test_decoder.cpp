// Decoder behaviour on hand-assembled chunks: stream kinds, errors with offsets, ranges.
#include <cmath>
#include <cstring>

#include <catch2/catch.hpp>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/error.hpp>

#include "support/bytes.hpp"
#include "support/files.hpp"

using namespace b2nd::codec;
using b2nd::test::hex;
using Catch::Matchers::Contains;

namespace {

// A 2-block chunk, typesize 2, split (2 streams per full block), blosclz, no filters:
// nbytes 12, blocksize 8 -> block 0 = 8 bytes (2 streams of 4), block 1 = 4 bytes (leftover:
// one stream).
//   header: 05 01 05 02 | 0c000000 | 08000000 | cbytes | filters 0 | udcodec 0 | meta 0 | 00 00
//   bstarts: 40 (0x28), 49 (0x31)
//   block 0: stream 0 csize 0 (zeros); stream 1 csize -7 (run of 7) + token 01
//   block 1: csize 4, raw bytes 01 02 03 04
std::vector<std::uint8_t> hand_chunk() {
    return hex(
        "05 01 05 02  0c 00 00 00  08 00 00 00  39 00 00 00"
        "00 00 00 00 00 00  00 00  00 00 00 00 00 00  00 00"
        "28 00 00 00  31 00 00 00"
        "00 00 00 00  f9 ff ff ff 01"
        "04 00 00 00  01 02 03 04");
}

}  // namespace

TEST_CASE("decoder: zero streams, byte runs and raw streams", "[codec]") {
    const auto chunk = hand_chunk();
    REQUIRE(chunk.size() == 0x39);
    ChunkDecoder dec(chunk);
    CHECK(dec.nblocks() == 2);
    CHECK(dec.block_nbytes(1) == 4);
    const auto out = decode_chunk(chunk);
    CHECK(out == std::vector<std::uint8_t>({0, 0, 0, 0, 7, 7, 7, 7, 1, 2, 3, 4}));
    std::vector<std::uint8_t> part(6);
    dec.decode_range(5, part);
    CHECK(part == std::vector<std::uint8_t>({7, 7, 7, 1, 2, 3}));
}

TEST_CASE("decoder: a block start outside the data is reported with its offset", "[codec]") {
    auto chunk = hand_chunk();
    chunk[36] = 0x70;  // bstart[1] = 0x70 > cbytes
    ChunkDecoder dec(chunk);
    REQUIRE_THROWS_WITH(decode_chunk(chunk),
                        Contains("block 1: block start 112 outside the chunk's data [40, 57)") &&
                            Contains("at offset 36"));
    // Block 0 alone still decodes.
    std::vector<std::uint8_t> b0(8);
    dec.decode_block(0, b0);
    CHECK(b0[4] == 7);
}

TEST_CASE("decoder: a stream longer than the chunk is a FormatError", "[codec]") {
    auto chunk = hand_chunk();
    chunk[49] = 0x40;  // block 1 csize 64
    REQUIRE_THROWS_WITH(decode_chunk(chunk),
                        Contains("block 1: stream 0: compressed size 64 exceeds the chunk"));
}

TEST_CASE("decoder: unknown run tokens are unsupported, bad run codes malformed", "[codec]") {
    auto chunk = hand_chunk();
    chunk[48] = 0x02;
    REQUIRE_THROWS_AS(decode_chunk(chunk), b2nd::UnsupportedError);
    chunk = hand_chunk();
    chunk[44] = 0x00;
    chunk[45] = 0xfe;  // csize = -512: not a byte
    REQUIRE_THROWS_WITH(decode_chunk(chunk), Contains("does not encode a byte"));
}

TEST_CASE("decoder: a corrupt compressed stream names the codec", "[codec]") {
    std::vector<std::uint8_t> in(4000);
    for (std::size_t i = 0; i < in.size(); ++i) {
        in[i] = static_cast<std::uint8_t>(i % 13);
    }
    EncodeParams p;
    p.codec = Codec::lz4;
    p.typesize = 1;
    p.filters = make_pipeline({});
    auto chunk = encode_chunk(in, p);
    ChunkDecoder dec(chunk);
    REQUIRE(!dec.memcpyed());
    chunk[chunk.size() - 3] ^= 0xff;
    chunk[chunk.size() - 20] ^= 0xff;
    REQUIRE_THROWS_WITH(decode_chunk(chunk), Contains("lz4 stream of"));
}

TEST_CASE("decoder: unregistered plugin codecs and filters are UnsupportedError", "[codec]") {
    auto chunk = hand_chunk();
    chunk[2] = static_cast<std::uint8_t>(0x05 | (6 << 5));  // user-defined codec
    chunk[22] = 150;                                        // nothing registered there
    REQUIRE_THROWS_MATCHES(ChunkDecoder(chunk), b2nd::UnsupportedError,
                           Catch::Matchers::Message("chunk header: plugin codec 150 is not "
                                                    "registered (b2nd::codec::register_codec) "
                                                    "at offset 22"));
    chunk = hand_chunk();
    chunk[21] = 40;  // an unregistered plugin filter id in slot 5
    REQUIRE_THROWS_WITH(ChunkDecoder(chunk),
                        Contains("filter filter40 in slot 5 is not registered"));
}

TEST_CASE("decoder: dictionaries are bounds-checked", "[codec]") {
    auto chunk = hand_chunk();
    chunk[31] = 0x01;  // use_dict: the dict size is read where block 0's data starts
    REQUIRE_THROWS_WITH(ChunkDecoder(chunk), Contains("dictionary size 0 outside 1..32768"));
}

TEST_CASE("decoder: decode_range and decode_block check their arguments", "[codec]") {
    const auto chunk = hand_chunk();
    ChunkDecoder dec(chunk);
    std::vector<std::uint8_t> buf(4);
    REQUIRE_THROWS_AS(dec.decode_range(10, buf), b2nd::UsageError);
    REQUIRE_THROWS_AS(dec.decode_range(-1, buf), b2nd::UsageError);
    REQUIRE_THROWS_AS(dec.decode_block(2, buf), b2nd::UsageError);
    std::vector<std::uint8_t> small(3);
    REQUIRE_THROWS_AS(dec.decode_block(0, small), b2nd::UsageError);
}

TEST_CASE("decoder: a DELTA block decodes alone and with a caller-provided block 0", "[codec]") {
    std::vector<std::uint8_t> in(8000);  // 1000 slowly growing uint64 values
    for (std::size_t i = 0; i < in.size(); i += 8) {
        const std::uint64_t v = 1000000 + i / 8 * 3;
        std::memcpy(&in[i], &v, 8);
    }
    EncodeParams p;
    p.typesize = 8;
    p.blocksize = 800;
    p.filters = make_pipeline({{Filter::delta, 0}, {Filter::shuffle, 0}});
    const auto chunk = encode_chunk(in, p);
    ChunkDecoder dec(chunk);
    REQUIRE(dec.needs_block0());
    std::vector<std::uint8_t> b0(800), b5(800), b5again(800);
    dec.decode_block(5, b5);
    dec.decode_block(0, b0);
    dec.decode_block(5, b5again, b0.data());
    CHECK(std::equal(b5.begin(), b5.end(), in.begin() + 4000));
    CHECK(b5again == b5);
    std::vector<std::uint8_t> part(1000);
    dec.decode_range(3500, part);
    CHECK(std::equal(part.begin(), part.end(), in.begin() + 3500));
}

TEST_CASE("decoder: an empty VL-block chunk claiming blocks has none (fuzzer finding)", "[codec]") {
    // nbytes 0, "blocksize" (the VL block count) 1, cbytes 32: nothing is stored.
    const auto chunk =
        hex("01 07 05 01  00 00 00 00  01 00 00 00  20 00 00 00"
            "02 00 00 01 00 00  00 00  00 01 05 00 00 00  01 00");
    ChunkDecoder dec(chunk);
    CHECK(dec.nbytes() == 0);
    CHECK(dec.nblocks() == 0);
    std::vector<std::uint8_t> out;
    dec.decode(out);
    CHECK(decode_chunk(chunk).empty());
}

TEST_CASE("decoder: a block's prefix equals the same bytes of the whole block", "[codec]") {
    const Codec codec = GENERATE(Codec::blosclz, Codec::lz4, Codec::lz4hc, Codec::zstd);
    const int typesize = GENERATE(1, 2, 4, 8);
    const int pipeline = GENERATE(0, 1, 2, 3);  // none, shuffle, bitshuffle, delta + shuffle
    const SplitMode split = GENERATE(SplitMode::always, SplitMode::never);
    CAPTURE(static_cast<int>(codec), typesize, pipeline, static_cast<int>(split));
    b2nd::test::SplitMix rng(static_cast<std::uint64_t>(typesize * 100 + pipeline));
    // Smooth values with noise in the low bytes: every stream compresses, none is uniform.
    std::vector<std::uint8_t> in(static_cast<std::size_t>(typesize) * 5003);
    for (std::size_t i = 0; i < in.size(); ++i) {
        in[i] = static_cast<std::uint8_t>((i / 97) + (i % 3 == 0 ? rng.below(7) : 0));
    }
    EncodeParams p;
    p.codec = codec;
    p.clevel = 5;
    p.typesize = typesize;
    p.blocksize = typesize * 1024;  // 4 full blocks and a leftover block of 907 items
    p.splitmode = split;
    const std::vector<FilterPipeline> pipelines{
        make_pipeline({}), make_pipeline({{Filter::shuffle, 0}}),
        make_pipeline({{Filter::bitshuffle, 0}}),
        make_pipeline({{Filter::delta, 0}, {Filter::shuffle, 0}})};
    p.filters = pipelines[static_cast<std::size_t>(pipeline)];
    const auto chunk = encode_chunk(in, p);
    const ChunkDecoder dec(chunk);
    // Less than whole blocks: LZ4 and BloscLZ streams holding the items' bytes in order (one
    // stream, no filter) or one stream per byte of the item under a byte shuffle.
    bool stops_early = false;
    if (codec != Codec::zstd && pipeline == 0) {
        stops_early = split == SplitMode::never || typesize == 1;
    } else if (codec != Codec::zstd && pipeline == 1) {
        stops_early = split == SplitMode::always || typesize == 1;
    }
    CHECK(dec.decodes_prefix() == stops_early);
    for (std::int32_t b = 0; b < dec.nblocks(); ++b) {
        const auto n = static_cast<std::size_t>(dec.block_nbytes(b));
        for (std::size_t need : {std::size_t{1}, std::size_t{7}, n / 3, n - 1, n, n + 5}) {
            std::vector<std::uint8_t> out(n, 0xee);
            dec.decode_block_prefix(b, out, need);
            const std::size_t k = std::min(need, n);
            CHECK(std::equal(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(k),
                             in.begin() + static_cast<std::ptrdiff_t>(b) * p.blocksize));
        }
    }
    std::vector<std::uint8_t> small(3);
    CHECK_THROWS_AS(dec.decode_block_prefix(0, small, 1), b2nd::UsageError);
}

TEST_CASE("decoder: prefixes of special and memcpyed chunks", "[codec]") {
    std::vector<std::uint8_t> out(4000, 0xee);
    const auto nans = make_nans_chunk(8000, 4, 4000);
    ChunkDecoder(nans).decode_block_prefix(1, out, 10);
    float f[2];
    std::memcpy(f, out.data(), 8);
    CHECK((std::isnan(f[0]) && std::isnan(f[1])));
    CHECK(out[12] == 0xee);  // only what was asked for is written
    std::vector<std::uint8_t> in(4000);
    for (std::size_t i = 0; i < in.size(); ++i) {
        in[i] = static_cast<std::uint8_t>(i * 7);
    }
    EncodeParams p;
    p.clevel = 0;  // stored memcpyed
    p.blocksize = 1000;
    const auto raw = encode_chunk(in, p);
    const ChunkDecoder dec(raw);
    REQUIRE(dec.memcpyed());
    dec.decode_block_prefix(2, out, 300);
    CHECK(std::equal(out.begin(), out.begin() + 300, in.begin() + 2000));
}

TEST_CASE("decoder: decode_block_rows scatters a block's rows, unshuffling in place", "[codec]") {
    const Codec codec = GENERATE(Codec::lz4, Codec::zstd);
    const int typesize = GENERATE(1, 2, 3, 4, 8, 16);
    // none, shuffle, bitshuffle, delta + shuffle, shuffle of 2-byte units, memcpyed
    const int pipeline = GENERATE(0, 1, 2, 3, 4, 5);
    const SplitMode split = GENERATE(SplitMode::always, SplitMode::never);
    CAPTURE(static_cast<int>(codec), typesize, pipeline, static_cast<int>(split));
    b2nd::test::SplitMix rng(static_cast<std::uint64_t>(typesize * 10 + pipeline));
    const auto ts = static_cast<std::size_t>(typesize);
    // Blocks of 1184 items (32 rows of 37: vector loops and their scalar tails; whole groups of 8
    // for bitshuffle), and a leftover block of 111 items (3 rows, not groups of 8).
    std::vector<std::uint8_t> in(ts * (1184 * 3 + 111));
    for (std::size_t i = 0; i < in.size(); ++i) {
        in[i] = static_cast<std::uint8_t>((i / 61) * 3 + (i % 29 == 0 ? rng.below(3) : 0));
    }
    EncodeParams p;
    p.codec = codec;
    p.clevel = pipeline == 5 ? 0 : 5;
    p.typesize = typesize;
    p.blocksize = typesize * 1184;
    p.splitmode = split;
    const std::vector<FilterPipeline> pipelines{
        make_pipeline({}),
        make_pipeline({{Filter::shuffle, 0}}),
        make_pipeline({{Filter::bitshuffle, 0}}),
        make_pipeline({{Filter::delta, 0}, {Filter::shuffle, 0}}),
        make_pipeline({{Filter::shuffle, 2}}),
        make_pipeline({{Filter::shuffle, 0}})};
    p.filters = pipelines[static_cast<std::size_t>(pipeline)];
    const auto chunk = encode_chunk(in, p);
    const ChunkDecoder dec(chunk);
    REQUIRE(dec.memcpyed() == (pipeline == 5));
    for (std::int32_t b = 0; b < dec.nblocks(); ++b) {
        const auto n = static_cast<std::size_t>(dec.block_nbytes(b));
        const std::size_t row = 37 * ts;
        const std::size_t nrows = n / row;
        // Rows in reverse order, each 13 bytes after the previous one's end, from byte 5.
        std::vector<std::ptrdiff_t> offsets(nrows);
        for (std::size_t r = 0; r < nrows; ++r) {
            offsets[r] = static_cast<std::ptrdiff_t>(5 + (nrows - 1 - r) * (row + 13));
        }
        std::vector<std::uint8_t> out(5 + nrows * (row + 13), 0xee);
        dec.decode_block_rows(b, out.data(), {row, nrows, offsets.data()});
        std::vector<std::uint8_t> want(out.size(), 0xee);
        for (std::size_t r = 0; r < nrows; ++r) {
            std::memcpy(want.data() + offsets[r],
                        in.data() + static_cast<std::size_t>(b) * ts * 1184 + r * row, row);
        }
        CHECK(out == want);
    }
    // Rows that do not hold the block are a usage error.
    std::vector<std::uint8_t> out(ts * 1184);
    const std::ptrdiff_t offsets[2] = {0, 0};
    CHECK_THROWS_AS(dec.decode_block_rows(0, out.data(), {ts * 37, 2, offsets}), b2nd::UsageError);
}

TEST_CASE("block_extents: each block ends at the next larger start, shared starts share an end",
          "[codec]") {
    // A chunk of 1000 one-byte blocks (as a corrupted table could claim) whose starts are all
    // equal but for the last two: found in one pass, not one scan per block.
    const std::int32_t nb = 1000;
    b2nd::format::ChunkHeader h;
    h.version = 5;
    h.versionlz = 1;
    h.flags = 0x05;  // extended header
    h.typesize = 1;
    h.nbytes = nb;
    h.blocksize = 1;
    h.extended = true;
    const std::int32_t table_end = 32 + 4 * nb;
    h.cbytes = table_end + 100;
    std::vector<std::uint8_t> chunk(static_cast<std::size_t>(h.cbytes));
    b2nd::format::write_chunk_header(h, chunk.data());
    for (std::int32_t b = 0; b < nb; ++b) {
        const std::int32_t start = b == nb - 1 ? table_end + 90
                                   : b == 0    ? table_end + 50
                                               : table_end;
        std::memcpy(chunk.data() + 32 + 4 * b, &start, 4);
    }
    const auto ext = block_extents({chunk.data(), chunk.size()}, h);
    REQUIRE(ext);
    REQUIRE(ext->size() == static_cast<std::size_t>(nb));
    const auto t = static_cast<std::uint32_t>(table_end);
    CHECK((*ext)[1] == std::make_pair(t, t + 50));
    CHECK((*ext)[nb / 2] == std::make_pair(t, t + 50));
    CHECK((*ext)[0] == std::make_pair(t + 50, t + 90));
    CHECK((*ext)[nb - 1] == std::make_pair(t + 90, t + 100));
}
