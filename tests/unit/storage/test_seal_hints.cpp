// Sealing a chunk from what its writer knows (block_seals.hpp, SealHint): the digests of a
// version-3 chunk's decoded pieces, taken from the blocks as the encoder reads them, and the
// record a chunk copied as stored carries from its source. Either spares the writer a decode of
// the chunk; neither may change a byte of what is written, and neither is used where it does
// not fit the chunk.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/format/chunk_header.hpp>
#include <b2nd/ops.hpp>
#include <b2nd/storage/frame.hpp>

#include "storage/block_seals.hpp"
#include "support/files.hpp"
#include "support/pieced.hpp"
#include "support/temp_dir.hpp"

using namespace b2nd;
using storage::Frame;
namespace seals = storage::detail;

namespace {

/// `n` bytes no codec compresses.
std::vector<std::uint8_t> noise(std::size_t n) {
    std::mt19937_64 rng(41);
    std::vector<std::uint8_t> b(n);
    for (auto& x : b) {
        x = static_cast<std::uint8_t>(rng());
    }
    return b;
}

/// Encodes `data` with `p`, showing the blocks to `pieces`, whole or block by block.
std::vector<std::uint8_t> encode_watched(const std::vector<std::uint8_t>& data,
                                         const codec::EncodeParams& p,
                                         seals::PieceDigests& pieces,
                                         bool by_blocks) {
    std::vector<std::uint8_t> out(codec::max_encoded_size(data.size()));
    std::size_t n = 0;
    if (by_blocks) {
        const auto bs = static_cast<std::size_t>(
            codec::effective_blocksize(p, static_cast<std::int64_t>(data.size())));
        n = codec::encode_chunk(
            static_cast<std::int64_t>(data.size()),
            [&](std::int32_t i, std::uint8_t* dest, std::size_t len) {
                std::memcpy(dest, data.data() + static_cast<std::size_t>(i) * bs, len);
            },
            p, {out.data(), out.size()}, pieces.watch());
    } else {
        n = codec::encode_chunk({data.data(), data.size()}, p, {out.data(), out.size()},
                                pieces.watch());
    }
    out.resize(n);
    return out;
}

seals::SealHint with(const seals::PieceDigests& pieces) {
    seals::SealHint h;
    h.pieces = &pieces;
    return h;
}

}  // namespace

TEST_CASE("seal hints: pieces digested while encoding are those a seal decodes", "[storage]") {
    // 4 blocks of 32 KiB and a short fifth; compressed (LZ4 + shuffle, BloscLZ) or stored as
    // they are (noise, or level 0), on 1 and 2 threads, from a buffer or block by block.
    const std::size_t n = 4 * 32768 + 12000;
    struct Case {
        const char* name;
        std::vector<std::uint8_t> data;
        codec::EncodeParams p;
    };
    const std::vector<Case> cases = {
        {"lz4 shuffle", test::repeating_floats(n / 4),
         test::float_params(Codec::lz4, 5, Filter::shuffle)},
        {"blosclz", test::repeating_floats(n / 4),
         test::float_params(Codec::blosclz, 5, Filter::none)},
        {"noise", noise(n), test::float_params(Codec::lz4, 5, Filter::shuffle)},
        {"level 0", test::repeating_floats(n / 4),
         test::float_params(Codec::blosclz, 0, Filter::none)},
    };
    for (const Case& c : cases) {
        for (const int threads : {1, 2}) {
            for (const bool by_blocks : {false, true}) {
                INFO(c.name << ", " << threads << " threads" << (by_blocks ? ", by blocks" : ""));
                codec::EncodeParams p = c.p;
                p.nthreads = threads;
                seals::PieceDigests pieces(p, static_cast<std::int64_t>(c.data.size()), 3);
                REQUIRE(pieces.pieces() == 8);
                REQUIRE(pieces.watch() != nullptr);
                const std::vector<std::uint8_t> chunk =
                    encode_watched(c.data, p, pieces, by_blocks);
                const ByteSpan b(chunk.data(), chunk.size());
                REQUIRE(seals::sealed_pieces(b, 3) == 8);
                CHECK(pieces.fit(seals::seal_layout(b, 3)));
                const seals::Seal decoded = seals::seal(b, 3);
                const seals::Seal hinted = seals::seal(b, 3, with(pieces));
                CHECK(hinted.record == decoded.record);
                CHECK(hinted.digest == decoded.digest);
            }
        }
    }
}

TEST_CASE("seal hints: digests that do not fit the chunk are not used", "[storage]") {
    const std::vector<std::uint8_t> data = test::repeating_floats(4 * 8192);
    const codec::EncodeParams p = test::float_params(Codec::lz4, 5, Filter::shuffle);
    const auto nbytes = static_cast<std::int64_t>(data.size());
    std::vector<std::uint8_t> chunk(codec::max_encoded_size(data.size()));
    chunk.resize(codec::encode_chunk({data.data(), data.size()}, p, {chunk.data(), chunk.size()}));
    const ByteSpan b(chunk.data(), chunk.size());
    const seals::SealLayout layout = seals::seal_layout(b, 3);
    const seals::Seal decoded = seals::seal(b, 3);

    // Every block given, but other bytes: used as given (what shows that hints are used).
    const std::vector<std::uint8_t> other = noise(data.size());
    seals::PieceDigests wrong(p, nbytes, 3);
    for (std::int32_t i = 0; i < 4; ++i) {
        wrong.give(i, other.data() + static_cast<std::size_t>(i) * 32768, 32768);
    }
    REQUIRE(wrong.fit(layout));
    CHECK(seals::seal(b, 3, with(wrong)).record != decoded.record);

    // A block missing, or given with a length that is not its own: the chunk is decoded.
    seals::PieceDigests partial(p, nbytes, 3);
    for (std::int32_t i = 0; i < 3; ++i) {
        partial.give(i, other.data(), 32768);
    }
    partial.give(3, other.data(), 1000);
    partial.give(4, other.data(), 32768);   // no such block
    partial.give(-1, other.data(), 32768);  // nor this one
    CHECK_FALSE(partial.fit(layout));
    CHECK(seals::seal(b, 3, with(partial)).record == decoded.record);

    // Made for another geometry (16 KiB blocks, another typesize, another size).
    codec::EncodeParams small = p;
    small.blocksize = 16384;
    codec::EncodeParams wide = p;
    wide.typesize = 8;
    for (auto* q : {&small, &wide}) {
        seals::PieceDigests geometry(*q, nbytes, 3);
        for (std::int32_t i = 0; i < 8; ++i) {
            geometry.give(i, other.data(), std::min<std::size_t>(32768, other.size()));
        }
        CHECK_FALSE(geometry.fit(layout));
        CHECK(seals::seal(b, 3, with(geometry)).record == decoded.record);
    }
    seals::PieceDigests longer(p, nbytes + 4096, 3);
    CHECK_FALSE(longer.fit(layout));

    // Chunks that carry no pieces get no digests to take.
    for (const auto& q : {test::float_params(Codec::zstd, 1, Filter::shuffle),
                          test::float_params(Codec::lz4, 5, Filter::bitshuffle),
                          test::float_params(Codec::lz4, 5, Filter::shuffle, 4096)}) {
        seals::PieceDigests none(q, nbytes, 3);
        CHECK(none.pieces() == 0);
        CHECK(none.watch() == nullptr);
    }
    seals::PieceDigests two(p, nbytes, 2);
    CHECK(two.pieces() == 0);
    // Parameters encode_chunk refuses get none either (and are not read out of range).
    for (const int clevel : {-1, 10, 100}) {
        codec::EncodeParams bad = p;
        bad.clevel = clevel;
        bad.blocksize = 0;  // automatic: the block size would follow the level
        CHECK(seals::PieceDigests(bad, nbytes, 3).pieces() == 0);
    }
}

TEST_CASE("seal hints: a carried record is used only with the size of this table's record",
          "[storage]") {
    const std::vector<std::uint8_t> data = test::repeating_floats(4 * 8192);
    const std::vector<std::uint8_t> chunk =
        codec::encode_chunk(data, test::float_params(Codec::lz4, 5, Filter::shuffle));
    const ByteSpan b(chunk.data(), chunk.size());
    const seals::Seal three = seals::seal(b, 3);
    const seals::Seal two = seals::seal(b, 2);
    REQUIRE(three.record.size() == 8 * 4 * 9);
    seals::SealHint h;
    // A version-2 record (block digests only) does not make a version-3 one, nor the reverse.
    h.record = {two.record.data(), two.record.size()};
    CHECK(seals::seal(b, 3, h).record == three.record);
    h.record = {three.record.data(), three.record.size()};
    CHECK(seals::seal(b, 2, h).record == two.record);
    // One of the right size is taken as it is, and the table entry covers it.
    std::vector<std::uint8_t> carried = three.record;
    carried[100] ^= 1;
    h.record = {carried.data(), carried.size()};
    const seals::Seal s = seals::seal(b, 3, h);
    CHECK(s.record == carried);
    CHECK(s.digest == seals::sealed_digest(b, seals::seal_layout(b, 3), h.record));
    CHECK(s.digest != three.digest);
}

TEST_CASE("seal hints: what arrays write has the records a seal decodes", "[storage]") {
    test::TempDir dir;
    const std::vector<std::uint8_t> bytes = test::repeating_floats(96 * 1024);
    std::vector<float> v(96 * 1024);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    const std::vector<std::uint8_t> rough = noise(32 * 1024 * 4);
    std::memcpy(v.data() + 64 * 1024, rough.data(), rough.size());  // the last chunk: memcpyed
    for (const int threads : {1, 2}) {
        INFO(threads << " threads");
        CreateOptions o;
        o.chunk_shape = {32, 1024};
        o.block_shape = {8, 1024};
        o.compression = CompressionParams{Codec::lz4, 5, {{Filter::shuffle, 0}}};
        o.nthreads = threads;
        const std::string path = dir / ("a" + std::to_string(threads) + ".b2nd");
        auto a = NDArray<float>::create_from(path, {96, 1024}, v, o);
        // A write into part of a chunk (decoded, patched, encoded again) and one that covers
        // a chunk (gathered block by block).
        const std::vector<float> part(4 * 1024, 2.5F);
        a.write(Box::region({40, 0}, {4, 1024}), part);
        std::vector<float> whole(v.begin() + 32 * 1024, v.begin() + 64 * 1024);
        std::reverse(whole.begin(), whole.end());
        a.write(Box::region({32, 0}, {32, 1024}), whole);

        const Frame f = Frame::open(path);
        REQUIRE(f.checksums().version == 3);
        REQUIRE(f.nchunks() == 3);
        for (std::int64_t i = 0; i < f.nchunks(); ++i) {
            INFO("chunk " << i);
            const storage::StoredChunk c = f.chunk(i);
            REQUIRE(seals::sealed_pieces(c.bytes, 3) == 8);
            const seals::Seal s = seals::seal(c.bytes, 3);
            CHECK(std::vector<std::uint8_t>(c.record.begin(), c.record.end()) == s.record);
        }
        CHECK(format::read_chunk_header(f.chunk(2).bytes).memcpyed());
    }
}

TEST_CASE("seal hints: a copy as stored carries the records its source checked", "[storage]") {
    test::TempDir dir;
    const std::string src = dir / "s.b2nd";
    const std::vector<float> v = test::make_pieced(src, false);
    const auto records = [](const std::string& path) {
        const Frame f = Frame::open(path);
        std::vector<std::vector<std::uint8_t>> r;
        for (std::int64_t i = 0; i < f.nchunks(); ++i) {
            const storage::StoredChunk c = f.chunk(i);
            r.emplace_back(c.record.begin(), c.record.end());
        }
        return r;
    };
    (void)copy(AnyArray::open(src), dir / "c.b2nd");
    CHECK(records(dir / "c.b2nd") == records(src));

    // A block digest of chunk 0 flipped in the source's record: a checked copy refuses the
    // chunk; an unchecked one does not carry the record it did not check, but seals the chunk
    // anew (its blocks are sound), and the copy reads.
    const storage::StoredChunk c0 = Frame::open(src).chunk(0);
    const std::string bad = dir / "b.b2nd";
    std::filesystem::copy_file(src, bad);
    test::flip_byte(bad, c0.offset + c0.bytes.size() + 3);
    CHECK_THROWS_AS(copy(AnyArray::open(bad), dir / "d.b2nd"), FormatError);
    CHECK_FALSE(std::filesystem::exists(dir / "d.b2nd"));
    OpenOptions unchecked;
    unchecked.verify_checksums = false;
    (void)copy(AnyArray::open(bad, unchecked), dir / "e.b2nd");
    CHECK(records(dir / "e.b2nd") == records(src));
    CHECK(NDArray<float>::open(dir / "e.b2nd").read() == v);
}
