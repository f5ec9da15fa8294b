// Chunk header parsing: one test per field, from hand-assembled bytes.
#include <catch2/catch.hpp>

#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>

#include "../../support/bytes.hpp"

using b2nd::FormatError;
using b2nd::UnsupportedError;
using b2nd::format::ChunkHeader;
using b2nd::format::read_chunk_header;
using b2nd::format::write_chunk_header;
using b2nd::test::hex;
using Catch::Matchers::Contains;
using Catch::Matchers::Message;

namespace {

// A valid extended header: a memcpyed chunk of 8 float32 zeros.
//   05 version, 01 versionlz, 07 flags (shuffle|memcpy|bitshuffle = extended + memcpyed),
//   04 typesize, nbytes 32, blocksize 32, cbytes 64, filters 0 0 0 0 0 1 (shuffle),
//   udcodec 5, compcode_meta 0, filters_meta 0 x6, flags2 0, blosc2_flags 0
std::vector<std::uint8_t> memcpyed_chunk() {
    auto b =
        hex("05 01 07 04  20 00 00 00  20 00 00 00  40 00 00 00"
            "00 00 00 00 00 01  05 00  00 00 00 00 00 00  00 00");
    b.resize(64, 0);
    return b;
}

}  // namespace

TEST_CASE("chunk header: a valid extended header parses field by field", "[format]") {
    const auto b = memcpyed_chunk();
    const ChunkHeader h = read_chunk_header(b);
    CHECK(h.version == 5);
    CHECK(h.versionlz == 1);
    CHECK(h.typesize == 4);
    CHECK(h.nbytes == 32);
    CHECK(h.blocksize == 32);
    CHECK(h.cbytes == 64);
    CHECK(h.extended);
    CHECK(h.memcpyed());
    CHECK(h.filters[5] == 1);
    CHECK(h.udcodec == 5);
    CHECK(h.header_size() == 32);
    CHECK(h.nblocks() == 1);
    CHECK(h.special() == 0);
}

TEST_CASE("chunk header: write then read gives the same fields", "[format]") {
    ChunkHeader h;
    h.version = 5;
    h.versionlz = 1;
    h.flags = 0x95;  // zstd (4 << 5) | dont_split | extended
    h.typesize = 8;
    h.nbytes = 1000;
    h.blocksize = 256;
    h.cbytes = 200;
    h.extended = true;
    h.filters = {0, 0, 0, 4, 3, 2};
    h.filters_meta = {0, 0, 0, 0xf6, 0, 0};
    h.udcodec = 5;
    std::vector<std::uint8_t> b(200, 0);
    write_chunk_header(h, b.data());
    const ChunkHeader r = read_chunk_header(b);
    CHECK(r.flags == h.flags);
    CHECK(r.comp_format() == 4);
    CHECK(!r.split());
    CHECK(r.filters == h.filters);
    CHECK(r.filters_meta == h.filters_meta);
    CHECK(r.nblocks() == 4);
}

TEST_CASE("chunk header: fewer than 16 bytes is a truncation", "[format]") {
    const auto b = hex("05 01 07 04 20 00 00 00");
    REQUIRE_THROWS_MATCHES(
        read_chunk_header(b), FormatError,
        Message("truncated reading chunk header blocksize (need 4 bytes, 0 left) at offset 8"));
}

TEST_CASE("chunk header: version above 6 is unsupported", "[format]") {
    auto b = memcpyed_chunk();
    b[0] = 7;
    REQUIRE_THROWS_MATCHES(
        read_chunk_header(b), UnsupportedError,
        Message(
            "chunk header: format version 7 is newer than the highest supported (6) at offset 0"));
}

TEST_CASE("chunk header: typesize 0 is rejected", "[format]") {
    auto b = memcpyed_chunk();
    b[3] = 0;
    REQUIRE_THROWS_MATCHES(read_chunk_header(b), FormatError,
                           Message("chunk header: typesize is 0 at offset 3"));
}

TEST_CASE("chunk header: negative nbytes is rejected", "[format]") {
    auto b = memcpyed_chunk();
    b[7] = 0x80;  // nbytes = 0x80000020
    REQUIRE_THROWS_WITH(read_chunk_header(b),
                        Contains("nbytes is negative") && Contains("offset 4"));
}

TEST_CASE("chunk header: blocksize must be positive and bounded", "[format]") {
    auto b = memcpyed_chunk();
    b[8] = 0;  // blocksize 0
    REQUIRE_THROWS_WITH(read_chunk_header(b), Contains("blocksize must be positive, got 0"));
    b[8] = 0;
    b[11] = 0x7f;  // blocksize 0x7f000000 > BLOSC2_MAXBLOCKSIZE
    REQUIRE_THROWS_WITH(read_chunk_header(b), Contains("exceeds the format maximum 536866816"));
}

TEST_CASE("chunk header: cbytes below the header size is rejected", "[format]") {
    auto b = memcpyed_chunk();
    b[12] = 20;  // cbytes 20 < 32 with an extended header
    REQUIRE_THROWS_WITH(read_chunk_header(b),
                        Contains("cbytes 20 is smaller than the 32-byte extended header"));
    b[12] = 8;
    REQUIRE_THROWS_WITH(read_chunk_header(b), Contains("smaller than the 16-byte header"));
}

TEST_CASE("chunk header: cbytes beyond the available bytes is a truncation", "[format]") {
    auto b = memcpyed_chunk();
    b.resize(63);
    REQUIRE_THROWS_MATCHES(
        read_chunk_header(b), FormatError,
        Message("chunk header: cbytes 64 exceeds the 63 bytes available at offset 12"));
}

TEST_CASE("chunk header: memcpyed chunks need cbytes = nbytes + header", "[format]") {
    auto b = memcpyed_chunk();
    b[4] = 31;  // nbytes 31, cbytes 64
    REQUIRE_THROWS_WITH(read_chunk_header(b),
                        Contains("memcpyed chunk must have cbytes = nbytes + 32"));
}

TEST_CASE("chunk header: unknown blosc2_flags2 bits are unsupported", "[format]") {
    auto b = memcpyed_chunk();
    b[30] = 0x02;
    REQUIRE_THROWS_AS(read_chunk_header(b), UnsupportedError);
}

TEST_CASE("chunk header: lazy and instrumented chunks are refused", "[format]") {
    auto b = memcpyed_chunk();
    b[31] = 0x08;
    REQUIRE_THROWS_WITH(read_chunk_header(b), Contains("lazy-chunk flag"));
    b[31] = 0x80;
    REQUIRE_THROWS_AS(read_chunk_header(b), UnsupportedError);
}

TEST_CASE("chunk header: special value kinds above 4 are rejected", "[format]") {
    auto b = memcpyed_chunk();
    b[31] = 0x50;  // special kind 5
    REQUIRE_THROWS_WITH(read_chunk_header(b), Contains("unknown special value kind 5"));
}

TEST_CASE("chunk header: a repeated-value chunk's value must tile nbytes", "[format]") {
    // 05 01 05 08, nbytes 40, blocksize 40, cbytes 32+3: a 3-byte value cannot tile 40 bytes.
    auto b =
        hex("05 01 05 08  28 00 00 00  28 00 00 00  23 00 00 00"
            "00 00 00 00 00 00  00 00  00 00 00 00 00 00  00 30  01 02 03");
    REQUIRE_THROWS_WITH(read_chunk_header(b),
                        Contains("repeated value of 3 bytes does not tile nbytes 40"));
    b[12] = 0x20;  // no value stored at all
    b.resize(32);
    REQUIRE_THROWS_WITH(read_chunk_header(b), Contains("repeated-value chunk stores no value"));
}

TEST_CASE("chunk header: VL blocks cannot be memcpyed or special", "[format]") {
    auto b = memcpyed_chunk();
    b[30] = 0x01;  // VL blocks + memcpyed
    REQUIRE_THROWS_WITH(read_chunk_header(b), Contains("VL-block chunk cannot be memcpyed"));
    b[2] = 0x05;
    b[31] = 0x10;
    REQUIRE_THROWS_WITH(read_chunk_header(b), Contains("VL-block chunk cannot be a special chunk"));
}

TEST_CASE("chunk header: a Blosc1 header expands its flags into the pipeline", "[format]") {
    // version 2, lz4 (1 << 5) + shuffle + delta: 0x29, typesize 4, nbytes 64, blocksize 64, cbytes
    // 16
    const auto b = hex("02 01 29 04  40 00 00 00  40 00 00 00  10 00 00 00");
    const ChunkHeader h = read_chunk_header(b);
    CHECK(!h.extended);
    CHECK(h.header_size() == 16);
    CHECK(h.filters[5] == 1);
    CHECK(h.filters[4] == 3);
    CHECK(h.comp_format() == 1);
}

TEST_CASE("chunk header: blocksize above nbytes is clamped like c-blosc2", "[format]") {
    auto b = memcpyed_chunk();
    b[9] = 0x10;  // blocksize 0x1020
    CHECK(read_chunk_header(b).blocksize == 32);
}
