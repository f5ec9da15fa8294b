// Checksums of arrays read over HTTP (docs/CHECKSUMS.md), from nginx on 127.0.0.1: a read that
// fetches some blocks of a chunk checks those blocks (with the chunk's header and record,
// fetched with them); a changed block is refused by the reads that need it and only by those,
// and the persistent cache never keeps it. Version 3's pieces check a read of a block's first
// rows over HTTP as they do locally.
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/storage/frame.hpp>

#include "support/files.hpp"
#include "support/http_servers.hpp"
#include "support/pieced.hpp"
#include "support/served_array.hpp"
#include "support/temp_dir.hpp"

using Catch::Matchers::Contains;

namespace {

std::unique_ptr<b2nd::test::ServedArray> serve(std::string& why) {
    return b2nd::test::serve_array(why);
}

const b2nd::Box kA{{2, 3, 4}, {5, 6, 7}, {1, 1, 1}};      // block 0 of chunk 0
const b2nd::Box kB{{9, 20, 20}, {6, 10, 10}, {1, 1, 1}};  // block 7 of chunk 0

/// Flips a byte inside block `block` of chunk 0 of the served file; the values it held before.
void change_block(const std::string& path, std::size_t block) {
    const b2nd::storage::StoredChunk c = b2nd::storage::Frame::open(path).chunk(0);
    const auto ext = b2nd::codec::block_extents(c.bytes, b2nd::format::read_chunk_header(c.bytes));
    REQUIRE(ext);
    REQUIRE(ext->size() == 8);
    std::vector<std::uint8_t> b = b2nd::test::read_file(path);
    b[c.offset + ((*ext)[block].first + (*ext)[block].second) / 2] ^= 0x04;
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

}  // namespace

TEST_CASE("http checksums: a changed block is refused by the reads that fetch it, only those",
          "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    const std::vector<std::uint8_t> a_before = s.local().read(kA);
    change_block(s.dir / "a.b2nd", 7);
    for (const bool blocks : {true, false}) {
        INFO((blocks ? "block reads" : "whole chunks"));
        b2nd::OpenOptions o;
        o.http.block_reads = blocks;
        const auto a = b2nd::AnyArray::open(s.url(), o);
        CHECK(a.frame().checksums().version == 3);
        CHECK(a.read(kA) == a_before);
        CHECK_THROWS_WITH(a.read(kB), Contains("chunk 0") && Contains("block 7") &&
                                          Contains("do not match their checksum"));
        CHECK_THROWS_AS(a.read(kB), b2nd::FormatError);  // and again
        CHECK(a.read(kA) == a_before);
    }
}

TEST_CASE("http checksums: the persistent cache never keeps a block that failed its check",
          "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    change_block(s.dir / "a.b2nd", 7);
    for (int round = 0; round < 2; ++round) {
        INFO("handle " << round);
        const auto a = b2nd::AnyArray::open(s.url(), s.cached());
        const std::uint64_t before = a.frame().transfers().requests;
        CHECK_THROWS_WITH(a.read(kB), Contains("block 7"));
        CHECK(a.frame().transfers().requests > before);  // fetched each time, never cached
        CHECK(a.read(kA) == s.local().read(kA));
    }
}

TEST_CASE(
    "http checksums: with DELTA, the block 0 a read fetches as reference is checked before "
    "it is cached",
    "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    // d.b2nd beside a.b2nd: the same values, DELTA after the shuffle (blocks need block 0).
    const std::vector<std::uint8_t> all = s.local().read();
    b2nd::CreateOptions co;
    co.chunk_shape = {16, 32, 32};
    co.block_shape = {8, 16, 16};
    co.compression = {b2nd::Codec::lz4, 5, {{b2nd::Filter::shuffle, 0}, {b2nd::Filter::delta, 0}}};
    const std::string d = s.dir / "d.b2nd";
    (void)b2nd::AnyArray::create_from(d, b2nd::DType::parse("<f4"), {32, 64, 64},
                                      {all.data(), all.size()}, co);
    change_block(d, 0);
    for (int round = 0; round < 2; ++round) {
        INFO("handle " << round);
        const auto a = b2nd::AnyArray::open(s.server->url("d.b2nd"), s.cached());
        CHECK_THROWS_WITH(a.read(kB), Contains("chunk 0") && Contains("block 0"));
    }
}

TEST_CASE("http checksums: a read of a block's first rows checks the pieces it decodes", "[http]") {
    // p.b2nd beside a.b2nd: LZ4 + shuffle blocks of 8 rows of 4 KiB, in 8 pieces of a row each
    // (checksum version 3). A byte changed late in block 1 (rows 8-15) leaves row 8 readable,
    // and correct, over HTTP without a block cache; the rows it reaches are refused.
    B2ND_HTTP_FIXTURE(s, serve);
    const std::string p = s.dir / "p.b2nd";
    const std::vector<float> v = b2nd::test::make_pieced(p, false);
    const b2nd::storage::StoredChunk c = b2nd::storage::Frame::open(p).chunk(0);
    const auto ext = b2nd::codec::block_extents(c.bytes, b2nd::format::read_chunk_header(c.bytes));
    REQUIRE(ext);
    b2nd::test::flip_byte(p, c.offset + (*ext)[1].second - 2);
    const std::vector<float> row8(v.begin() + 8 * 1024, v.begin() + 9 * 1024);
    for (const bool blocks : {true, false}) {
        INFO((blocks ? "block reads" : "whole chunks"));
        b2nd::OpenOptions o;
        o.cache_bytes = 0;
        o.http.block_reads = blocks;
        const auto a = b2nd::NDArray<float>::open(s.server->url("p.b2nd"), o);
        REQUIRE(a.any().frame().checksums().version == 3);
        CHECK(a.read(b2nd::Box::region({8, 0}, {1, 1024})) == row8);
        CHECK_THROWS_WITH(a.read(b2nd::Box::region({15, 0}, {1, 1024})),
                          Contains("chunk 0") && Contains("block 1"));
        CHECK_THROWS_AS(a.read(), b2nd::FormatError);
        CHECK(a.read(b2nd::Box::region({8, 0}, {1, 1024})) == row8);
    }
}
