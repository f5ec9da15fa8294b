// Checksum table version 3 (docs/CHECKSUMS.md): for blocks a read may decode in part (LZ4,
// BloscLZ or memcpyed, no filter or a byte shuffle), each chunk's record also holds the digests
// of its blocks' decoded bytes in equal pieces. A read that decodes a block's first rows checks
// the pieces it decoded instead of hashing the whole stored block; version-2 files stay
// readable and keep their version through writes.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/format/endian.hpp>
#include <b2nd/storage/frame.hpp>

#include "codec/digest.hpp"
#include "storage/block_seals.hpp"
#include "support/files.hpp"
#include "support/pieced.hpp"
#include "support/temp_dir.hpp"

using namespace b2nd;
using Catch::Matchers::Contains;
using storage::Frame;
namespace seals = storage::detail;

namespace {

/// 4 blocks of 32 KiB of float32 values.
std::vector<std::uint8_t> values() {
    return test::repeating_floats(4 * 8192);
}

std::vector<std::uint8_t> encoded(const std::vector<std::uint8_t>& data,
                                  Codec codec,
                                  int clevel,
                                  Filter filter,
                                  std::int32_t blocksize = 32768) {
    return codec::encode_chunk(data, test::float_params(codec, clevel, filter, blocksize));
}

}  // namespace

TEST_CASE("block pieces: which chunks have them, and how large the record is", "[storage]") {
    const std::vector<std::uint8_t> data = values();
    const auto lz4 = encoded(data, Codec::lz4, 5, Filter::shuffle);
    const auto blosclz = encoded(data, Codec::blosclz, 5, Filter::none);
    const auto raw = encoded(data, Codec::blosclz, 0, Filter::none);
    const auto zstd = encoded(data, Codec::zstd, 1, Filter::shuffle);
    const auto bits = encoded(data, Codec::lz4, 5, Filter::bitshuffle);
    const auto small = encoded(data, Codec::lz4, 5, Filter::shuffle, 4096);
    for (const auto* c : {&lz4, &blosclz, &raw}) {
        const ByteSpan b(c->data(), c->size());
        CHECK(seals::sealed_pieces(b, 3) == 8);  // 32 KiB blocks in pieces of 4 KiB
        CHECK(seals::sealed_pieces(b, 2) == 0);
        CHECK(seals::record_size(b, 3) == 8 * 4 * (1 + 8));
        CHECK(seals::record_size(b, 2) == 8 * 4);
        CHECK(seals::seal(b, 3).record.size() == seals::record_size(b, 3));
    }
    for (const auto* c : {&zstd, &bits, &small}) {  // whole-block decoders, or blocks of 4 KiB
        const ByteSpan b(c->data(), c->size());
        CHECK(seals::sealed_pieces(b, 3) == 0);
        CHECK(seals::record_size(b, 3) == seals::record_size(b, 2));
        CHECK(seals::seal(b, 3).record == seals::seal(b, 2).record);
    }
}

TEST_CASE("block pieces: a chunk cut short of its cbytes is refused before it is sealed",
          "[storage]") {
    // The fuzz finding: a header that declares more bytes (cbytes) than the chunk is given. Its
    // record could not have the size the header promises: seal refuses it, as the decoder does,
    // whatever the number of blocks it claims (no allocation follows the claim).
    const auto all = encoded(values(), Codec::lz4, 5, Filter::shuffle);
    for (const std::size_t cut : {all.size() - 1, all.size() / 2, std::size_t{40}}) {
        const ByteSpan b(all.data(), cut);
        for (const int version : {2, 3}) {
            INFO("cut at " << cut << ", version " << version);
            CHECK_THROWS_WITH(seals::seal(b, version),
                              Contains("cbytes") && Contains("cannot be sealed"));
        }
        CHECK_THROWS_AS(codec::ChunkDecoder(b), FormatError);
    }
    // Whole, it seals into a record of the promised size, which opens.
    const ByteSpan whole(all.data(), all.size());
    const seals::Seal s = seals::seal(whole, 3);
    CHECK(s.record.size() == seals::record_size(whole, 3));
    std::string why;
    CHECK(seals::ChunkSeal::open(whole, {s.record.data(), s.record.size()}, 3, s.digest, true,
                                 why) != nullptr);
}

TEST_CASE("block pieces: digests of the decoded bytes, checked up to a piece boundary",
          "[storage]") {
    const std::vector<std::uint8_t> data = values();
    const std::vector<std::uint8_t> chunk = encoded(data, Codec::lz4, 5, Filter::shuffle);
    const ByteSpan c(chunk.data(), chunk.size());
    const seals::Seal s = seals::seal(c, 3);
    // The pieces' digests are those of the values encoded, 4 KiB at a time, after the blocks'.
    for (std::size_t i = 0; i < 4; ++i) {
        for (std::size_t j = 0; j < 8; ++j) {
            const std::uint64_t want =
                codec::detail::digest64(data.data() + i * 32768 + j * 4096, 4096);
            CHECK(format::load_le<std::uint64_t>(s.record.data() + (4 + i * 8 + j) * 8) == want);
        }
    }
    std::string why;
    const auto seal =
        seals::ChunkSeal::open(c, {s.record.data(), s.record.size()}, 3, s.digest, false, why);
    REQUIRE(seal);
    CHECK(seal->prefix_end(1, 1) == 4096);
    CHECK(seal->prefix_end(1, 4096) == 4096);
    CHECK(seal->prefix_end(1, 4097) == 8192);
    CHECK(seal->prefix_end(1, 32768) == 32768);
    const std::uint8_t* block1 = data.data() + 32768;
    CHECK(seal->check_prefix(1, block1, 8192));
    CHECK(seal->check_prefix(1, block1, 32768));
    CHECK_FALSE(seal->check_prefix(1, block1, 5000));  // not a piece boundary
    CHECK_FALSE(seal->check_prefix(0, block1, 4096));  // another block's bytes
    std::vector<std::uint8_t> changed(block1, block1 + 8192);
    changed[8191] ^= 1;
    CHECK(seal->check_prefix(1, changed.data(), 4096));  // the change lies past the prefix
    CHECK_FALSE(seal->check_prefix(1, changed.data(), 8192));
    // Read as a version-2 record, the same bytes are too long; a version-2 record too short.
    CHECK_FALSE(
        seals::ChunkSeal::open(c, {s.record.data(), s.record.size()}, 2, s.digest, false, why));
    CHECK(why.find("truncated") != std::string::npos);
    const seals::Seal two = seals::seal(c, 2);
    CHECK_FALSE(seals::ChunkSeal::open(c, {two.record.data(), two.record.size()}, 3, two.digest,
                                       false, why));
}

TEST_CASE("block pieces: chunks that compress far, in streams of runs, are digested whole",
          "[storage]") {
    // 8 MiB of mostly zeros: the split streams become runs of a byte, and the chunk takes a few
    // KiB (thousands of times smaller); its pieces are still those of every decoded byte.
    std::vector<std::uint8_t> data(std::size_t{64} << 17, 0);
    data[40000] = 7;
    data[5000000] = 9;
    const std::vector<std::uint8_t> chunk =
        encoded(data, Codec::lz4, 5, Filter::shuffle, std::int32_t{1} << 17);
    REQUIRE(chunk.size() * 1024 < data.size());
    const ByteSpan c(chunk.data(), chunk.size());
    const seals::Seal s = seals::seal(c, 3);
    REQUIRE(s.record.size() == 8 * 64 * (1 + 32));
    for (std::size_t i = 0; i < 64; ++i) {
        for (std::size_t j = 0; j < 32; ++j) {
            const std::uint64_t want =
                codec::detail::digest64(data.data() + (i << 17) + j * 4096, 4096);
            REQUIRE(format::load_le<std::uint64_t>(s.record.data() + (64 + i * 32 + j) * 8) ==
                    want);
        }
    }
}

TEST_CASE("block pieces: a read of a block's first rows checks the pieces it decodes",
          "[storage]") {
    test::TempDir dir;
    std::vector<float> v;
    const auto row = [&](std::int64_t r) {
        return std::vector<float>(v.begin() + r * 1024, v.begin() + (r + 1) * 1024);
    };
    for (const bool sparse : {false, true}) {
        INFO((sparse ? "sparse" : "contiguous"));
        const std::string path = dir / (sparse ? "p.b2frame" : "p.b2nd");
        v = test::make_pieced(path, sparse);
        REQUIRE(Frame::open(path).checksums().version == 3);
        const storage::StoredChunk c = Frame::open(path).chunk(0);
        CHECK(c.record.size() == 8 * 4 * (1 + 8));
        const format::ChunkHeader h = format::read_chunk_header(c.bytes);
        const auto blocks = *codec::block_extents(c.bytes, h);
        std::string file = path;
        if (c.file >= 0) {
            char name[32];
            std::snprintf(name, sizeof name, "/%08X.chunk", static_cast<unsigned>(c.file));
            file += name;
        }
        const std::string copy = dir / (sparse ? "q.b2frame" : "q.b2nd");
        std::filesystem::remove_all(copy);
        std::filesystem::copy(path, copy, std::filesystem::copy_options::recursive);
        const std::string copy_file = copy + file.substr(path.size());

        // A byte late in block 1 (rows 8-15): the end of its last stream.
        test::flip_byte(copy_file, c.offset + blocks[1].second - 2);
        OpenOptions no_cache;
        no_cache.cache_bytes = 0;
        CHECK(NDArray<float>::open(copy, no_cache).read(Box::region({8, 0}, {1, 1024})) == row(8));
        CHECK_THROWS_WITH(
            NDArray<float>::open(copy, no_cache).read(Box::region({15, 0}, {1, 1024})),
            Contains("block 1"));
        {
            // With a block cache: the first read of the block decodes what it needs, as without
            // one; the second decodes the block whole, to keep it, and meets the flipped byte.
            const NDArray<float> cached = NDArray<float>::open(copy);
            CHECK(cached.read(Box::region({8, 0}, {1, 1024})) == row(8));
            CHECK_THROWS_AS(cached.read(Box::region({8, 0}, {1, 1024})), FormatError);
        }
        CHECK_THROWS_AS(NDArray<float>::open(copy, no_cache).read(), FormatError);

        // A byte early in block 1: the first row's read is refused.
        test::flip_byte(copy_file, c.offset + blocks[1].second - 2);  // mended
        test::flip_byte(copy_file, c.offset + blocks[1].first + 6);
        CHECK_THROWS_AS(NDArray<float>::open(copy, no_cache).read(Box::region({8, 0}, {1, 1024})),
                        FormatError);
        CHECK(NDArray<float>::open(copy, no_cache).read(Box::region({0, 0}, {1, 1024})) == row(0));
    }
}

TEST_CASE("block pieces: version-2 files read, keep version 2 through writes, and upgrade",
          "[storage]") {
    const std::string seeds = B2ND_FUZZ_SEEDS;
    const std::string v2 = seeds + "/fuzz_array_read/sums2-f4-2d-lz4-shuffle.b2nd";
    test::TempDir dir;
    const std::string path = dir / "v2.b2nd";
    std::filesystem::copy_file(v2, path);
    std::vector<float> want(40 * 512);
    for (std::size_t i = 0; i < want.size(); ++i) {
        want[i] = static_cast<float>((i * 2654435761U) % 1000) * 0.25F;
    }
    {
        const NDArray<float> a = NDArray<float>::open(path);
        REQUIRE(Frame::open(path).checksums().version == 2);
        CHECK(Frame::open(path).chunk(0).record.size() == 8 * 2);  // a digest per block, no pieces
        CHECK(a.read() == want);
        OpenOptions no_cache;
        no_cache.cache_bytes = 0;
        CHECK(NDArray<float>::open(path, no_cache).read(Box::region({8, 0}, {1, 512})) ==
              std::vector<float>(want.begin() + 8 * 512, want.begin() + 9 * 512));
    }
    {
        OpenOptions w;
        w.writable = true;
        NDArray<float> a = NDArray<float>::open(path, w);
        a.write(Box::region({16, 0}, {8, 512}), std::vector<float>(8 * 512, 1.5F));
    }
    std::fill(want.begin() + 16 * 512, want.begin() + 24 * 512, 1.5F);
    {
        const NDArray<float> a = NDArray<float>::open(path);
        CHECK(Frame::open(path).checksums().version == 2);
        CHECK(Frame::open(path).checksums().state == storage::ChecksumReport::State::covered);
        CHECK(Frame::open(path).chunk(1).record.size() == 8 * 2);
        CHECK(a.read() == want);
    }
    {
        OpenOptions w;
        w.writable = true;
        Frame f = Frame::open(path, w);
        f.add_checksums();
    }
    const NDArray<float> a = NDArray<float>::open(path);
    CHECK(Frame::open(path).checksums().version == 3);
    CHECK(Frame::open(path).chunk(0).record.size() == 8 * 2 * (1 + 4));  // 16 KiB blocks: 4 pieces
    CHECK(a.read() == want);
}

TEST_CASE("block pieces: a record cut inside its pieces is refused, not read past", "[storage]") {
    test::TempDir dir;
    const std::string path = dir / "t.b2frame";
    const std::vector<float> v = test::make_pieced(path, true);
    const storage::StoredChunk c = Frame::open(path).chunk(1);
    REQUIRE(c.record.size() == 8 * 4 * (1 + 8));
    char name[32];
    std::snprintf(name, sizeof name, "/%08X.chunk", static_cast<unsigned>(c.file));
    const std::string file = path + name;
    std::vector<std::uint8_t> b = test::read_file(file);
    b.resize(c.bytes.size() + 8 * 4 + 100);  // the block digests whole, the pieces cut
    test::write_file(file, b);
    OpenOptions no_cache;
    no_cache.cache_bytes = 0;
    const NDArray<float> a = NDArray<float>::open(path, no_cache);
    CHECK(a.read(Box::region({0, 0}, {1, 1024})) ==
          std::vector<float>(v.begin(), v.begin() + 1024));  // chunk 0 is whole
    CHECK_THROWS_WITH(a.read(Box::region({32, 0}, {1, 1024})), Contains("are truncated"));
    CHECK_THROWS_WITH(NDArray<float>::open(path).read(Box::region({40, 0}, {8, 1024})),
                      Contains("are truncated"));
}
