// Frames we write: every operation, contiguous and sparse, read back through a fresh open.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include <catch2/catch.hpp>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>

#include "storage/reserved_staging.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

using b2nd::storage::ReservedStaging;

using namespace b2nd;
using storage::Frame;

namespace {

constexpr std::int32_t kChunk = 4000;  // 1000 int32 per chunk

/// Chunk content: 1000 int32 values v, v+1, ...
std::vector<std::uint8_t> content(std::int32_t v, std::int32_t nbytes = kChunk) {
    std::vector<std::uint8_t> out(static_cast<std::size_t>(nbytes));
    for (std::int32_t i = 0; i < nbytes / 4; ++i) {
        const std::int32_t x = v + i;
        std::memcpy(out.data() + 4 * i, &x, 4);
    }
    return out;
}

std::vector<std::uint8_t> encoded(std::int32_t v, std::int32_t nbytes = kChunk) {
    codec::EncodeParams p;
    p.typesize = 4;
    p.blocksize = 1000;
    return codec::encode_chunk(content(v, nbytes), p);
}

storage::FrameParams params() {
    storage::FrameParams p;
    p.typesize = 4;
    p.chunksize = kChunk;
    p.blocksize = 1000;
    return p;
}

std::vector<format::Metalayer> metas() {
    return {{"b2nd", {0x97, 0x00, 0x01}, 0}, {"units", {1, 2, 3, 4}, 0}};
}

/// The decoded values' first element of each chunk, after a fresh open.
std::vector<std::int32_t> firsts(const std::string& path) {
    const Frame f = Frame::open(path);
    std::vector<std::int32_t> out;
    for (std::int64_t i = 0; i < f.nchunks(); ++i) {
        const auto b = f.decode_chunk(i);
        std::int32_t x = -1;
        if (b.size() >= 4) {
            std::memcpy(&x, b.data(), 4);
        }
        out.push_back(x);
    }
    return out;
}

}  // namespace

TEST_CASE("frame write: create, append, update, insert, delete; contiguous and sparse",
          "[storage]") {
    for (bool sparse : {false, true}) {
        INFO((sparse ? "sparse" : "contiguous"));
        test::TempDir dir;
        const std::string path = dir / (sparse ? "a.b2frame" : "a.b2nd");
        {
            Frame f = Frame::create(path, params(), sparse, metas());
            CHECK(f.nchunks() == 0);
            CHECK(f.writable());
        }
        CHECK(Frame::open(path).nchunks() == 0);
        CHECK(Frame::open(path).header().chunksize == kChunk);

        storage::OpenOptions rw;
        rw.writable = true;
        Frame f = Frame::open(path, rw);
        const auto c0 = encoded(0);
        const auto c1 = encoded(1000);
        const auto c2 = encoded(2000);
        f.append_chunks({c0, c1, c2});
        CHECK(firsts(path) == std::vector<std::int32_t>{0, 1000, 2000});
        f.update_chunk(1, encoded(7000));
        CHECK(firsts(path) == std::vector<std::int32_t>{0, 7000, 2000});
        f.insert_chunk(0, encoded(9000));
        CHECK(firsts(path) == std::vector<std::int32_t>{9000, 0, 7000, 2000});
        f.delete_chunk(2);
        CHECK(firsts(path) == std::vector<std::int32_t>{9000, 0, 2000});
        // A short last chunk is allowed; the header's nbytes tracks it.
        f.append_chunk(encoded(5, 400));
        CHECK(Frame::open(path).nbytes() == 3 * kChunk + 400);
        CHECK(Frame::open(path).decode_chunk(3) == content(5, 400));
        // ... but nothing may follow it.
        REQUIRE_THROWS_AS(f.append_chunk(encoded(6)), UsageError);
        f.delete_chunk(3);
        // Index-only special chunks.
        f.append_chunk(codec::make_zeros_chunk(kChunk, 4, 1000));
        f.append_chunk(codec::make_nans_chunk(kChunk, 4, 1000));
        const Frame g = Frame::open(path);
        REQUIRE(g.nchunks() == 5);
        CHECK(g.chunk(3).index_only());
        CHECK(g.chunk(3).special == codec::Special::zeros);
        CHECK(g.index_entry(3) == static_cast<std::int64_t>(0x8100000000000000ULL));
        CHECK(g.decode_chunk(3) == std::vector<std::uint8_t>(kChunk, 0));
        float nanv;
        std::memcpy(&nanv, g.decode_chunk(4).data() + 8, 4);
        CHECK(std::isnan(nanv));
        // Metalayers survive every rewrite.
        REQUIRE(g.metalayer("units") != nullptr);
        CHECK(g.metalayer("units")->content == std::vector<std::uint8_t>({1, 2, 3, 4}));
        // Delete everything: an empty frame again.
        for (int k = 0; k < 5; ++k) {
            f.delete_chunk(0);
        }
        CHECK(Frame::open(path).nchunks() == 0);
        CHECK(Frame::open(path).nbytes() == 0);
        f.append_chunk(c2);
        CHECK(firsts(path) == std::vector<std::int32_t>{2000});
    }
}

TEST_CASE("frame write: metalayers in place, vlmetalayers set and deleted", "[storage]") {
    for (bool sparse : {false, true}) {
        test::TempDir dir;
        const std::string path = dir / "m";
        Frame f = Frame::create(path, params(), sparse, metas());
        f.append_chunk(encoded(1));
        f.update_metalayer("units", std::vector<std::uint8_t>{9, 8, 7, 6});
        REQUIRE_THROWS_AS(f.update_metalayer("units", std::vector<std::uint8_t>{1}), UsageError);
        REQUIRE_THROWS_AS(f.update_metalayer("nope", std::vector<std::uint8_t>{1}), UsageError);
        const std::string text =
            "a vlmetalayer value that compresses: aaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        f.set_vlmeta("attrs", {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
        f.set_vlmeta("more", std::vector<std::uint8_t>{1, 2});
        f.set_vlmeta("attrs", std::vector<std::uint8_t>{5});
        {
            const Frame g = Frame::open(path);
            CHECK(g.metalayer("units")->content == std::vector<std::uint8_t>({9, 8, 7, 6}));
            CHECK(g.vlmeta_names() == std::vector<std::string>{"attrs", "more"});
            CHECK(*g.vlmeta("attrs") == std::vector<std::uint8_t>{5});
            CHECK(*g.vlmeta("more") == std::vector<std::uint8_t>({1, 2}));
            CHECK_FALSE(g.vlmeta("none").has_value());
            CHECK(g.header().has_vlmetalayers);
            CHECK(firsts(path) == std::vector<std::int32_t>{1});
        }
        CHECK(f.delete_vlmeta("attrs"));
        CHECK_FALSE(f.delete_vlmeta("attrs"));
        CHECK(f.delete_vlmeta("more"));
        CHECK(Frame::open(path).vlmeta_names().empty());
        // The checksum table is a vlmetalayer of its own (hidden from vlmeta_names) ...
        CHECK(Frame::open(path).header().has_vlmetalayers);
        REQUIRE_THROWS_WITH(f.set_vlmeta("_b2nd_checksums", std::vector<std::uint8_t>{1}),
                            Catch::Matchers::Contains("checksum table"));
        {
            // ... and without it the flag goes when the last vlmetalayer does.
            storage::FrameParams plain = params();
            plain.checksums = false;
            Frame g = Frame::create(dir / "plain", plain, sparse, metas());
            g.set_vlmeta("attrs", std::vector<std::uint8_t>{5});
            CHECK(Frame::open(dir / "plain").header().has_vlmetalayers);
            CHECK(g.delete_vlmeta("attrs"));
            CHECK_FALSE(Frame::open(dir / "plain").header().has_vlmetalayers);
        }
        REQUIRE_THROWS_AS(f.set_vlmeta(std::string(40, 'x'), std::vector<std::uint8_t>{1}),
                          UsageError);
    }
}

TEST_CASE("frame write: updates leave dead space that compact() reclaims", "[storage]") {
    test::TempDir dir;
    const std::string path = dir / "c.b2nd";
    Frame f = Frame::create(path, params());
    for (int i = 0; i < 10; ++i) {
        f.append_chunk(encoded(i * 1000));
    }
    for (int i = 0; i < 10; ++i) {
        f.update_chunk(i, encoded(50000 + i));
    }
    CHECK(f.dead_bytes() > 0);
    const auto before = std::filesystem::file_size(path);
    f.compact();
    CHECK(f.dead_bytes() == 0);
    CHECK(std::filesystem::file_size(path) < before);
    std::vector<std::int32_t> want;
    for (int i = 0; i < 10; ++i) {
        want.push_back(50000 + i);
    }
    CHECK(firsts(path) == want);
    f.append_chunk(encoded(1));  // still writable after compacting
    CHECK(Frame::open(path).nchunks() == 11);
}

TEST_CASE("frame write: chunk_bytes counts the live chunks alone, not dead space or digests",
          "[storage]") {
    test::TempDir dir;
    const std::string path = dir / "c.b2nd";
    Frame f = Frame::create(path, params());
    for (int i = 0; i < 6; ++i) {
        f.append_chunk(encoded(i * 1000));
    }
    f.update_chunk(2, encoded(70000));  // leaves the old chunk 2 behind, dead
    const auto live = [](const Frame& g) {
        std::int64_t n = 0;
        for (std::int64_t i = 0; i < g.nchunks(); ++i) {
            n += static_cast<std::int64_t>(g.chunk(i).bytes.size());
        }
        return n;
    };
    const Frame reopened = Frame::open(path);
    const Frame* const frames[] = {&f, &reopened};
    for (const Frame* g : frames) {
        REQUIRE(g->checksums().version >= 2);  // each chunk is followed by its record
        CHECK(g->record_bytes() > 0);
        CHECK(g->dead_bytes() > 0);
        CHECK(g->chunk_bytes() == live(*g));
        CHECK(g->chunk_bytes() == g->header().cbytes - g->dead_bytes() - g->record_bytes());
    }
}

TEST_CASE("frame write: an exclusive writer commits over the last index and leaves no dead space",
          "[storage]") {
    test::TempDir dir;
    const std::string path = dir / "x.b2nd";
    (void)Frame::create(path, params(), false, metas(), false, false);
    storage::OpenOptions o;
    o.writable = true;
    o.locking = false;
    o.exclusive = true;
    o.auto_compact = false;
    Frame f = Frame::open(path, o);
    for (int i = 0; i < 6; ++i) {
        f.append_chunk(encoded(i * 1000));  // six commits, each after the chunks, not the index
    }
    CHECK(f.dead_bytes() == 0);
    std::size_t stored = 0;  // each chunk and its block digests (checksum table version 2)
    for (int i = 0; i < 6; ++i) {
        stored += encoded(i * 1000).size() + f.chunk(i).record.size();
    }
    CHECK(f.chunk(0).record.size() > 0);
    CHECK(f.header().cbytes == static_cast<std::int64_t>(stored));
    // A commit that shrinks the frame cuts the file at the new end.
    storage::FrameEdit e = f.keep_all();
    e.erase(5);
    e.erase(4);
    f.apply(e);
    CHECK(f.dead_bytes() == 0);
    CHECK(std::filesystem::file_size(path) == f.header().frame_len);
    CHECK(firsts(path) == std::vector<std::int32_t>{0, 1000, 2000, 3000});
    // The same edits by an ordinary writer leave the earlier indexes behind.
    const std::string q = dir / "y.b2nd";
    Frame g = Frame::create(q, params());
    for (int i = 0; i < 6; ++i) {
        g.append_chunk(encoded(i * 1000));
    }
    CHECK(g.dead_bytes() > 0);
}

TEST_CASE("frame write: sparse frames number chunk files and remove replaced ones", "[storage]") {
    test::TempDir dir;
    const std::string path = dir / "s.b2frame";
    Frame f = Frame::create(path, params(), true);
    f.append_chunks({encoded(0), encoded(1000), encoded(2000)});
    CHECK(std::filesystem::exists(path + "/00000000.chunk"));
    CHECK(std::filesystem::exists(path + "/00000002.chunk"));
    f.update_chunk(1, encoded(5));
    CHECK_FALSE(std::filesystem::exists(path + "/00000001.chunk"));
    CHECK(std::filesystem::exists(path + "/00000003.chunk"));
    CHECK(Frame::open(path).index_entry(1) == 3);
    f.delete_chunk(0);
    CHECK_FALSE(std::filesystem::exists(path + "/00000000.chunk"));
    // An orphan chunk file (as an interrupted write leaves) goes away with compact().
    std::ofstream(path + "/0000000A.chunk") << "junk";
    f.compact();
    CHECK_FALSE(std::filesystem::exists(path + "/0000000A.chunk"));
    CHECK(firsts(path) == std::vector<std::int32_t>{5, 2000});
}

TEST_CASE("frame write: another handle sees appends after refresh()", "[storage]") {
    for (bool sparse : {false, true}) {
        test::TempDir dir;
        const std::string path = dir / "r";
        Frame w = Frame::create(path, params(), sparse);
        w.append_chunk(encoded(0));
        Frame r = Frame::open(path);
        REQUIRE(r.nchunks() == 1);
        const auto held = r.chunk(0);  // stays valid across the refresh
        w.append_chunks({encoded(1000), encoded(2000)});
        CHECK(r.nchunks() == 1);
        CHECK(r.refresh());
        CHECK_FALSE(r.refresh());
        REQUIRE(r.nchunks() == 3);
        CHECK(r.decode_chunk(2) == content(2000));
        CHECK(codec::decode_chunk(held.bytes) == content(0));
    }
}

TEST_CASE("frame read: a frame embedded at an offset, and in a memory buffer", "[storage]") {
    test::TempDir dir;
    const std::string path = dir / "plain.b2nd";
    {
        Frame f = Frame::create(path, params(), false, metas());
        f.append_chunks({encoded(0), encoded(1000)});
        f.set_vlmeta("v", std::vector<std::uint8_t>{4, 2});
    }
    const auto bytes = test::read_file(path);
    std::vector<std::uint8_t> big(777 + bytes.size() + 100, 0x11);  // junk around the frame
    std::fill(big.begin(), big.begin() + 777, 0xEE);
    std::copy(bytes.begin(), bytes.end(), big.begin() + 777);
    const std::string embedded = dir / "embedded.bin";
    std::ofstream(embedded, std::ios::binary)
        .write(reinterpret_cast<const char*>(big.data()), static_cast<std::streamsize>(big.size()));
    storage::OpenOptions o;
    o.offset = 777;
    const Frame e = Frame::open(embedded, o);
    CHECK(e.decode_chunk(1) == content(1000));
    CHECK(*e.vlmeta("v") == std::vector<std::uint8_t>({4, 2}));
    o.offset = 778;
    REQUIRE_THROWS_AS(Frame::open(embedded, o), FormatError);

    const Frame m = Frame::from_buffer(bytes);
    CHECK(m.path().empty());
    CHECK(m.decode_chunk(0) == content(0));
    CHECK_FALSE(m.writable());
    Frame mm = Frame::from_buffer(bytes);
    REQUIRE_THROWS_AS(mm.append_chunk(encoded(1)), UsageError);
}

TEST_CASE("frame read: concurrent readers agree", "[storage]") {
    for (bool sparse : {false, true}) {
        test::TempDir dir;
        const std::string path = dir / "t";
        {
            Frame f = Frame::create(path, params(), sparse);
            std::vector<std::vector<std::uint8_t>> chunks;
            for (int i = 0; i < 40; ++i) {
                chunks.push_back(encoded(i * 1000));
            }
            std::vector<ByteSpan> spans(chunks.begin(), chunks.end());
            f.append_chunks(spans);
        }
        storage::OpenOptions o;
        o.max_mapped_chunk_files = 5;  // force evictions while threads read
        const Frame f = Frame::open(path, o);
        std::vector<int> bad(8, 0);
        std::vector<std::thread> threads;
        for (int t = 0; t < 8; ++t) {
            threads.emplace_back([&, t] {
                test::SplitMix rng(static_cast<std::uint64_t>(t));
                for (int k = 0; k < 300; ++k) {
                    const auto i = static_cast<std::int32_t>(rng.below(40));
                    if (f.decode_chunk(i) != content(i * 1000)) {
                        ++bad[static_cast<std::size_t>(t)];
                    }
                }
            });
        }
        for (auto& th : threads) {
            th.join();
        }
        CHECK(bad == std::vector<int>(8, 0));
    }
}

TEST_CASE("frame write: invalid writes are usage errors", "[storage]") {
    test::TempDir dir;
    const std::string path = dir / "u.b2nd";
    Frame f = Frame::create(path, params());
    REQUIRE_THROWS_AS(Frame::create(path, params()), UsageError);
    REQUIRE_THROWS_AS(f.append_chunk(std::vector<std::uint8_t>{1, 2, 3}), UsageError);
    REQUIRE_THROWS_AS(f.append_chunk(encoded(0, 8000)), UsageError);  // larger than chunksize
    f.append_chunk(encoded(0));
    REQUIRE_THROWS_AS(f.update_chunk(5, encoded(0)), UsageError);
    REQUIRE_THROWS_AS(f.insert_chunk(3, encoded(0)), UsageError);
    REQUIRE_THROWS_AS(f.chunk(1), UsageError);
    const Frame ro = Frame::open(path);
    Frame ro2 = Frame::open(path);
    REQUIRE_THROWS_AS(ro2.append_chunk(encoded(0)), UsageError);
    REQUIRE_THROWS_AS(Frame::open(dir / "missing"), IoError);
    CHECK(ro.nchunks() == 1);
}

TEST_CASE("frame write: apply() reorders, reuses a new chunk and updates metalayers in one commit",
          "[storage]") {
    for (bool sparse : {false, true}) {
        test::TempDir dir;
        const std::string path = dir / "e";
        Frame f = Frame::create(path, params(), sparse, metas());
        f.append_chunks({encoded(0), encoded(1000), encoded(2000)});
        storage::FrameEdit e;
        const auto zeros = codec::make_zeros_chunk(kChunk, 4, 1000);
        const auto fresh = encoded(5000);
        e.keep(2);  // chunk 1 dropped
        e.add_new(zeros);
        e.keep(0);
        e.add_new(fresh);
        e.add_new(zeros);
        e.add_new(fresh);
        e.set_metalayer("units", {4, 4, 4, 4});
        f.apply(e);
        const Frame g = Frame::open(path);
        CHECK(firsts(path) == std::vector<std::int32_t>{2000, 0, 0, 5000, 0, 5000});
        CHECK(g.chunk(1).index_only());
        CHECK(g.metalayer("units")->content == std::vector<std::uint8_t>({4, 4, 4, 4}));
        storage::FrameEdit bad = f.keep_all();
        bad.keep(17);
        REQUIRE_THROWS_AS(f.apply(bad), UsageError);
        bad = f.keep_all();
        bad.set_metalayer("units", {1});
        REQUIRE_THROWS_AS(f.apply(bad), UsageError);
        REQUIRE_THROWS_AS(bad.replace(6, fresh), UsageError);  // positions 0..5
        REQUIRE_THROWS_AS(bad.erase(-1), UsageError);
        CHECK(Frame::open(path).nchunks() == 6);  // failed edits changed nothing
    }
}

TEST_CASE("frame write: staged chunks join the frame in one apply", "[storage]") {
    for (bool sparse : {false, true}) {
        INFO((sparse ? "sparse" : "contiguous"));
        test::TempDir dir;
        const std::string path = dir / (sparse ? "s.b2frame" : "s.b2nd");
        Frame f = Frame::create(path, params(), sparse, metas());
        f.append_chunks({encoded(0), encoded(1000)});
        // Stage from two threads at once, plus an index-only special chunk.
        std::vector<storage::StagedChunk> staged(8);
        std::thread other([&] {
            for (int k = 0; k < 4; ++k) {
                staged[static_cast<std::size_t>(k)] = f.stage(encoded(10000 + 1000 * k));
            }
        });
        for (int k = 4; k < 8; ++k) {
            staged[static_cast<std::size_t>(k)] = f.stage(encoded(10000 + 1000 * k));
        }
        other.join();
        const storage::StagedChunk zeros = f.stage(codec::make_zeros_chunk(kChunk, 4, 1000));
        CHECK(zeros.cbytes == 0);
        CHECK(firsts(path) == std::vector<std::int32_t>{0, 1000});  // nothing visible yet

        storage::FrameEdit e = f.keep_all();  // [0, 1]
        e.erase(0);                           // [1]
        e.add_staged(staged[7]);              // [1, s7]
        e.add_staged(staged[0]);              // [1, s7, s0]
        e.add_staged(zeros);                  // [1, s7, s0, z]
        e.keep(0);                            // [1, s7, s0, z, 0]
        e.add_staged(staged[3]);              // [1, s7, s0, z, 0, s3]
        f.apply(e);
        CHECK(firsts(path) == std::vector<std::int32_t>{1000, 17000, 10000, 0, 0, 13000});
        CHECK(Frame::open(path).chunk(3).special == codec::Special::zeros);
        if (sparse) {
            // Staged files no edit named are gone; the frame's are there.
            std::size_t files = 0;
            for (const auto& entry : std::filesystem::directory_iterator(path)) {
                files += entry.path().extension() == ".chunk" ? 1U : 0U;
            }
            CHECK(files == 5);
        }
        // Staged chunks do not outlive the commit.
        CHECK_THROWS_AS(f.apply(e), UsageError);
        // Bytes staged and never committed leave the frame as it was.
        (void)f.stage(encoded(99));
        f.append_chunk(encoded(5000));
        CHECK(firsts(path) == std::vector<std::int32_t>{1000, 17000, 10000, 0, 0, 13000, 5000});
        f.compact();
        CHECK(firsts(path) == std::vector<std::int32_t>{1000, 17000, 10000, 0, 0, 13000, 5000});
    }
}

TEST_CASE("frame write: chunks written by another handle into reserved room join in one apply",
          "[storage]") {
    for (bool sparse : {false, true}) {
        INFO((sparse ? "sparse" : "contiguous"));
        test::TempDir dir;
        const std::string path = dir / (sparse ? "r.b2frame" : "r.b2nd");
        Frame f = Frame::create(path, params(), sparse, metas());
        f.append_chunks({encoded(0), encoded(1000)});
        // Another handle, read-only (as another process would hold one), classifies and writes.
        std::optional<Frame> reader = Frame::open(path);
        const Frame& other = *reader;
        const auto c7 = encoded(7000), c8 = encoded(8000);
        const auto zeros = codec::make_zeros_chunk(kChunk, 4, 1000);
        const ReservedStaging::Classified k7 = ReservedStaging::classify(other, c7);
        const ReservedStaging::Classified kz = ReservedStaging::classify(other, zeros);
        CHECK(k7.bytes.size() == c7.size());
        CHECK(kz.bytes.empty());
        CHECK(kz.entry == static_cast<std::int64_t>(0x8100000000000000ULL));
        // Each chunk is written with its block digests after it (checksum table version 2).
        const ReservedStaging::Classified k8 = ReservedStaging::classify(other, c8);
        CHECK(k7.record.size() > 0);
        const auto r7 = ByteSpan(k7.record.data(), k7.record.size());
        const auto r8 = ByteSpan(k8.record.data(), k8.record.size());
        // Room for two chunks: bytes (contiguous, one write of both) or two file numbers.
        const std::uint64_t amount = sparse ? 2 : c7.size() + r7.size() + c8.size() + r8.size();
        const std::uint64_t at = ReservedStaging::reserve(f, amount);
        std::uint64_t at8 = at + 1;
        if (sparse) {
            ReservedStaging::write(other, at, c7, r7);
            ReservedStaging::write(other, at8, c8, r8);
        } else {
            std::vector<std::uint8_t> both(c7);
            both.insert(both.end(), r7.begin(), r7.end());
            both.insert(both.end(), c8.begin(), c8.end());
            ReservedStaging::write(other, at, both, r8);
            at8 = at + c7.size() + r7.size();
        }
        CHECK(firsts(path) == std::vector<std::int32_t>{0, 1000});  // nothing visible yet
        // Outside the reserved room, or a "special" entry that is none: refused.
        CHECK_THROWS_AS(ReservedStaging::adopt(f, at + amount + 64, kChunk, 100, 0), UsageError);
        CHECK_THROWS_AS(ReservedStaging::adopt(f, 12345, kChunk, 0, 0), UsageError);
        storage::FrameEdit e = f.keep_all();
        const std::uint64_t d8 = k8.digest;
        e.replace(0,
                  ReservedStaging::adopt(f, at8, kChunk, static_cast<std::int64_t>(c8.size()), d8));
        e.add_staged(
            ReservedStaging::adopt(f, static_cast<std::uint64_t>(kz.entry), kChunk, 0, kz.digest));
        e.add_staged(
            ReservedStaging::adopt(f, at, kChunk, static_cast<std::int64_t>(c7.size()), k7.digest));
        f.apply(e);
        CHECK(firsts(path) == std::vector<std::int32_t>{8000, 1000, 0, 7000});
        {
            // The digests the writers computed went into the table: every chunk checks out.
            const Frame back = Frame::open(path);
            CHECK(back.checksums().state == storage::ChecksumReport::State::covered);
            for (std::int64_t i = 0; i < back.nchunks(); ++i) {
                CHECK(back.check_chunk(i).empty());
            }
        }
        CHECK(Frame::open(path).chunk(2).special == codec::Special::zeros);
        // Reserved room is valid until the next commit only. (The other handle goes first: a
        // sparse frame keeps replaced chunk files while a reader's snapshot names them.)
        reader.reset();
        const std::uint64_t again = ReservedStaging::reserve(f, sparse ? 3 : 10);
        f.append_chunk(encoded(3000));
        CHECK_THROWS_AS(ReservedStaging::adopt(f, again, kChunk, sparse ? 100 : 10, 0), UsageError);
        CHECK(firsts(path) == std::vector<std::int32_t>{8000, 1000, 0, 7000, 3000});
        if (sparse) {
            // One file per stored chunk: replaced and unused reserved numbers are gone.
            std::size_t files = 0;
            for (const auto& entry : std::filesystem::directory_iterator(path)) {
                files += entry.path().extension() == ".chunk" ? 1U : 0U;
            }
            CHECK(files == 4);
        }
    }
}
