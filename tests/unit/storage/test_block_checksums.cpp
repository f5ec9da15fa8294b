// Checksum tables versions 2 and 3 (docs/CHECKSUMS.md): a digest per block, after each chunk.
// A read checks the blocks it decodes and only those; a chunk's head and record are checked on
// its first use; paths that hand out chunks as stored check every block; version-1 tables stay
// readable, and `add_checksums` upgrades them.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/storage/frame.hpp>

#include "support/files.hpp"
#include "support/temp_dir.hpp"

using namespace b2nd;
using Catch::Matchers::Contains;
using storage::ChecksumReport;
using storage::Frame;

namespace {

/// A 64 x 64 float32 array of two chunks (rows 0-31, 32-63), each of 4 blocks of 8 rows.
std::vector<float> make(const std::string& path, const CompressionParams& c, bool sparse) {
    std::vector<float> v(64 * 64);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<float>((i * 2654435761U) % 1000) * 0.25F;
    }
    CreateOptions o;
    o.chunk_shape = {32, 64};
    o.block_shape = {8, 64};
    o.compression = c;
    o.sparse = sparse;
    (void)NDArray<float>::create_from(path, {64, 64}, v, o);
    return v;
}

/// The file holding chunk i's bytes, and where chunk i and its blocks are in it.
struct Located {
    std::string file;
    std::uint64_t chunk_at = 0;
    std::size_t cbytes = 0, record = 0;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> blocks;  // in the chunk
};

Located locate(const std::string& path, std::int64_t i) {
    const Frame f = Frame::open(path);
    const storage::StoredChunk c = f.chunk(i);
    Located l;
    l.file = path;
    if (c.file >= 0) {
        char name[32];
        std::snprintf(name, sizeof name, "/%08X.chunk", static_cast<unsigned>(c.file));
        l.file += name;
    }
    l.chunk_at = c.offset;
    l.cbytes = c.bytes.size();
    l.record = c.record.size();
    const format::ChunkHeader h = format::read_chunk_header(c.bytes);
    if (h.memcpyed()) {
        for (std::uint32_t b = 0; b < 4; ++b) {
            const auto bs = static_cast<std::uint32_t>(h.blocksize);
            l.blocks.emplace_back(32 + b * bs, 32 + (b + 1) * bs);
        }
    } else {
        l.blocks = *codec::block_extents(c.bytes, h);
    }
    return l;
}

std::vector<float> rows(const std::vector<float>& v, std::int64_t from, std::int64_t n) {
    return {v.begin() + from * 64, v.begin() + (from + n) * 64};
}

}  // namespace

TEST_CASE("block checksums: a changed block is refused by the reads that decode it, only those",
          "[storage]") {
    test::TempDir dir;
    const CompressionParams lz4{Codec::lz4, 5, {{Filter::shuffle, 0}}};
    const CompressionParams memcpyed{Codec::blosclz, 0, {}};
    for (const bool sparse : {false, true}) {
        for (const CompressionParams& c : {lz4, memcpyed}) {
            const bool raw = c.clevel == 0;
            INFO((sparse ? "sparse " : "contiguous ") << (raw ? "memcpyed" : "lz4"));
            const std::string path =
                dir / (std::string(raw ? "m" : "z") + (sparse ? ".b2frame" : ".b2nd"));
            const std::vector<float> v = make(path, c, sparse);
            const Located l = locate(path, 1);
            REQUIRE(l.blocks.size() == 4);
            CHECK(l.record == 4 * 8);  // a digest per block
            CHECK(Frame::open(path).checksums().version == 3);
            // A byte inside block 2 of chunk 1 (rows 48 to 55).
            const auto [b2, e2] = l.blocks[2];
            test::flip_byte(l.file, l.chunk_at + (b2 + e2) / 2);

            const NDArray<float> a = NDArray<float>::open(path);
            // Rows of chunk 1 in its other blocks, a point among them, and chunk 0: correct.
            CHECK(a.read(Box::region({32, 0}, {16, 64})) == rows(v, 32, 16));
            CHECK(a.read(Box::region({56, 0}, {8, 64})) == rows(v, 56, 8));
            CHECK(a(40, 7) == v[40 * 64 + 7]);
            CHECK(a.read(Box::region({0, 0}, {32, 64})) == rows(v, 0, 32));
            // What decodes block 2 is refused, at the block, naming the chunk and the block.
            for (int rep = 0; rep < 2; ++rep) {  // a failed check is never remembered as passed
                try {
                    (void)a.read(Box::region({50, 3}, {1, 5}));
                    FAIL("no error");
                } catch (const FormatError& e) {
                    CHECK_THAT(e.what(), Contains("chunk 1") && Contains("block 2") &&
                                             Contains("do not match their checksum"));
                    if (sparse) {
                        CHECK_THAT(e.what(), Contains(".chunk)"));
                    }
                    REQUIRE(e.offset());
                    CHECK(*e.offset() == l.chunk_at + b2);
                }
            }
            CHECK_THROWS_AS(NDArray<float>::open(path)(55, 63), FormatError);
            CHECK_THROWS_AS(NDArray<float>::open(path).read(), FormatError);
            // Handed out as stored, the chunk is checked whole.
            CHECK_THROWS_AS(Frame::open(path).chunk(1), FormatError);
            CHECK_THAT(Frame::open(path).check_chunk(1), Contains("block 2"));
            CHECK(Frame::open(path).check_chunk(0).empty());
            CHECK_THROWS_AS(copy(AnyArray::open(path), dir / "copy.b2nd"), FormatError);
            CHECK_FALSE(std::filesystem::exists(dir / "copy.b2nd"));
            // Verification off: the changed block is read (what the checksums prevent).
            OpenOptions unchecked;
            unchecked.verify_checksums = false;
            CHECK(NDArray<float>::open(path, unchecked).read(Box::region({48, 0}, {8, 64})) !=
                  rows(v, 48, 8));
        }
    }
}

TEST_CASE("block checksums: a changed header, block table or record is refused at first use",
          "[storage]") {
    test::TempDir dir;
    for (const bool sparse : {false, true}) {
        INFO((sparse ? "sparse" : "contiguous"));
        for (const char* part : {"header", "table", "record"}) {
            INFO(part);
            const std::string path = dir / (std::string(part) + (sparse ? ".b2frame" : ".b2nd"));
            const std::vector<float> v =
                make(path, {Codec::zstd, 1, {{Filter::shuffle, 0}}}, sparse);
            const Located l = locate(path, 1);
            const std::string p = part;
            const std::uint64_t at = p == "header"  ? 20              // a filter byte
                                     : p == "table" ? 36              // block 1's start
                                                    : l.cbytes + 13;  // block 1's digest
            test::flip_byte(l.file, l.chunk_at + at);
            const NDArray<float> a = NDArray<float>::open(path);
            CHECK(a.read(Box::region({0, 0}, {32, 64})) == rows(v, 0, 32));
            try {
                (void)a(33, 0);  // block 0 of chunk 1: the chunk's head and record fail first
                FAIL("no error");
            } catch (const FormatError& e) {
                CHECK_THAT(e.what(),
                           Contains("chunk 1") && Contains("header, block table or block digests"));
                REQUIRE(e.offset());
                CHECK(*e.offset() == l.chunk_at);
            }
        }
    }
}

TEST_CASE("block checksums: a record cut short is refused, not read past", "[storage]") {
    test::TempDir dir;
    const std::string path = dir / "s.b2frame";
    (void)make(path, {}, true);
    const Located l = locate(path, 1);
    std::vector<std::uint8_t> b = test::read_file(l.file);
    b.resize(l.cbytes + l.record - 3);
    test::write_file(l.file, b);
    CHECK(NDArray<float>::open(path)(0, 0) == Approx(0.0));
    CHECK_THROWS_WITH(NDArray<float>::open(path)(40, 0), Contains("are truncated"));
}

TEST_CASE("block checksums: version-1 tables stay readable, and add_checksums upgrades them",
          "[storage]") {
    const std::string seeds = B2ND_FUZZ_SEEDS;
    const std::string v1 = seeds + "/fuzz_array_read/sums1-f4-3d-zstd-shuffle.b2nd";
    const std::string plain = seeds + "/fuzz_array_read/f4-3d-zstd-shuffle.b2nd";
    const AnyArray old = AnyArray::open(v1);
    const ChecksumReport r = old.frame().checksums();
    REQUIRE(r.state == ChecksumReport::State::covered);
    CHECK(r.version == 1);
    const std::vector<std::uint8_t> want = AnyArray::open(plain).read();
    CHECK(old.read() == want);
    CHECK(old.frame().chunk(0).record.empty());

    test::TempDir dir;
    {
        // A changed byte in chunk 0: refused, whole (version 1 has no blocks to check).
        const std::string bad = dir / "bad.b2nd";
        std::filesystem::copy_file(v1, bad);
        const storage::StoredChunk c = Frame::open(bad).chunk(0);
        test::flip_byte(bad, c.offset + c.bytes.size() - 3);
        std::vector<std::uint8_t> one(4);
        const AnyArray a = AnyArray::open(bad);
        const auto nd = static_cast<std::size_t>(a.ndim());
        CHECK_THROWS_WITH(a.read(Box::region(Shape(nd, 0), Shape(nd, 1)), one.data(), one.size()),
                          Contains("chunk 0") && Contains("stored bytes do not match"));
    }
    const std::string path = dir / "v1.b2nd";
    std::filesystem::copy_file(v1, path);
    std::filesystem::permissions(path, std::filesystem::perms::owner_write,
                                 std::filesystem::perm_options::add);
    {
        // Commits and compaction keep version 1 (the chunks have no records).
        OpenOptions w;
        w.writable = true;
        AnyArray a = AnyArray::open(path, w);
        a.set_vlmeta("touched", std::vector<std::uint8_t>{0xc3});
        a.compact();
    }
    CHECK(Frame::open(path).checksums().version == 1);
    CHECK(AnyArray::open(path).read() == want);
    {
        OpenOptions w;
        w.writable = true;
        Frame f = Frame::open(path, w);
        f.add_checksums();
    }
    const Frame f = Frame::open(path);
    CHECK(f.checksums().state == ChecksumReport::State::covered);
    CHECK(f.checksums().version == 3);
    CHECK(f.dead_bytes() == 0);  // compacted after the rewrite
    for (std::int64_t i = 0; i < f.nchunks(); ++i) {
        CHECK(f.check_chunk(i).empty());
        if (!f.chunk(i).index_only()) {
            CHECK_FALSE(f.chunk(i).record.empty());
        }
    }
    CHECK(AnyArray::open(path).read() == want);
    CHECK(AnyArray::open(path).vlmeta("touched").has_value());
}
