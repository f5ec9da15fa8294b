// Hostile frames: truncations and bit flips end in a b2nd::Error (naming the file) or a clean
// read, never anything else (this runs under ASan/UBSan in CI).
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>

#include "support/files.hpp"
#include "support/temp_dir.hpp"

using namespace b2nd;
using storage::Frame;

namespace {

/// Opening without checksum verification: what the structural checks find on their own.
storage::OpenOptions unchecked() {
    storage::OpenOptions o;
    o.verify_checksums = false;
    return o;
}

/// Reads everything a frame offers; false only through a b2nd::Error.
bool read_all(ByteSpan bytes) {
    try {
        storage::OpenOptions o;
        o.max_chunks = 1 << 16;
        const Frame f = Frame::from_buffer(bytes, o);
        for (std::int64_t i = 0; i < f.nchunks(); ++i) {
            if (f.chunk(i).nbytes <= (1 << 22)) {
                (void)f.decode_chunk(i);
            }
        }
        for (const auto& n : f.vlmeta_names()) {
            (void)f.vlmeta(n);
        }
        return true;
    } catch (const Error&) {
        return false;
    }
}

std::vector<std::uint8_t> small_frame(const test::TempDir& dir) {
    const std::string path = dir / "small.b2nd";
    storage::FrameParams fp;
    fp.typesize = 2;
    fp.chunksize = 600;
    fp.blocksize = 200;
    {
        Frame f = Frame::create(path, fp, false, {{"b2nd", {0x97, 0x00}, 0}});
        codec::EncodeParams p;
        p.typesize = 2;
        p.blocksize = 200;
        std::vector<std::uint8_t> data(600);
        for (std::size_t i = 0; i < data.size(); ++i) {
            data[i] = static_cast<std::uint8_t>(i % 17);
        }
        const auto c = codec::encode_chunk(data, p);
        f.append_chunks({c, codec::make_zeros_chunk(600, 2, 200), c});
        f.update_chunk(0, c);
        f.set_vlmeta("v", std::vector<std::uint8_t>{1, 2, 3});
    }
    return test::read_file(path);
}

}  // namespace

TEST_CASE("frame must fail: every truncation of a small frame is a FormatError",
          "[storage][fuzz]") {
    test::TempDir dir;
    const auto bytes = small_frame(dir);
    REQUIRE(read_all(bytes));
    for (std::size_t n = 0; n < bytes.size(); ++n) {
        INFO("truncated to " << n);
        REQUIRE_THROWS_AS(Frame::from_buffer(ByteSpan(bytes.data(), n)), FormatError);
    }
}

TEST_CASE("frame must fail: seeded bit flips end in an Error or a clean read", "[storage][fuzz]") {
    test::TempDir dir;
    const auto bytes = small_frame(dir);
    test::SplitMix rng(99);
    int rejected = 0;
    for (int round = 0; round < 4000; ++round) {
        auto b = bytes;
        const std::size_t span = round % 2 == 0 ? std::min<std::size_t>(b.size(), 140) : b.size();
        for (std::uint64_t k = 0; k < 1 + rng.below(2); ++k) {
            b[rng.below(span)] ^= static_cast<std::uint8_t>(1U << rng.below(8));
        }
        rejected += read_all(b) ? 0 : 1;
    }
    CHECK(rejected > 1000);
}

TEST_CASE("frame must fail: corpus frames truncated and flipped", "[storage][fuzz][golden]") {
    if (test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const char* names[] = {"meta_user_and_vl_f4.b2nd",
                           "special_zeros_i4.b2nd",
                           "zstd_dict_i4.b2nd",
                           "upstream/frame_simple-zstd.b2frame",
                           "upstream/vlblocks-lz4-variable-3.0.0.b2frame",
                           "legacy-2x/v2.7.0/geom_empty_shape.b2nd"};
    test::SplitMix rng(5);
    for (const char* name : names) {
        const auto bytes = test::read_file(test::corpus_dir() + "/" + name);
        INFO(name);
        REQUIRE(read_all(bytes));
        for (std::size_t n = 0; n < bytes.size(); n += 1 + bytes.size() / 300) {
            REQUIRE_FALSE(read_all(ByteSpan(bytes.data(), n)));
        }
        for (int round = 0; round < 400; ++round) {
            auto b = bytes;
            const std::size_t span =
                round % 2 == 0 ? std::min<std::size_t>(b.size(), 256) : b.size();
            b[rng.below(span)] ^= static_cast<std::uint8_t>(1U << rng.below(8));
            (void)read_all(b);
        }
    }
    SUCCEED("no crash, no foreign exception");
}

TEST_CASE("frame must fail: errors on disk name the file", "[storage]") {
    test::TempDir dir;
    const auto bytes = small_frame(dir);
    const std::string cut = dir / "cut.b2nd";
    std::ofstream(cut, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), 200);
    REQUIRE_THROWS_WITH(Frame::open(cut), Catch::Matchers::Contains("cut.b2nd") &&
                                              Catch::Matchers::Contains("truncated: 200 of the"));
    // A sparse frame missing a chunk file: the frame opens, that chunk fails with IoError.
    const std::string sp = dir / "s.b2frame";
    {
        storage::FrameParams fp;
        fp.typesize = 1;
        fp.chunksize = 100;
        Frame f = Frame::create(sp, fp, true);
        codec::EncodeParams p;
        p.typesize = 1;
        const std::vector<std::uint8_t> data(100, 3);
        std::vector<std::uint8_t> data2(100);
        for (std::size_t i = 0; i < data2.size(); ++i) {
            data2[i] = static_cast<std::uint8_t>(i);
        }
        f.append_chunks({codec::encode_chunk(data, p), codec::encode_chunk(data2, p)});
    }
    std::filesystem::remove(sp + "/00000001.chunk");
    const Frame f = Frame::open(sp);
    CHECK(f.decode_chunk(0) == std::vector<std::uint8_t>(100, 3));
    REQUIRE_THROWS_WITH(f.chunk(1), Catch::Matchers::Contains("00000001.chunk"));
    REQUIRE_THROWS_AS(f.chunk(1), IoError);
}

namespace {

/// Overwrites 4 bytes of a file at `at` with a little-endian int32.
void patch_i32(const std::string& path, std::uint64_t at, std::int32_t v) {
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    const char b[4] = {static_cast<char>(v & 0xff), static_cast<char>((v >> 8) & 0xff),
                       static_cast<char>((v >> 16) & 0xff), static_cast<char>((v >> 24) & 0xff)};
    f.seekp(static_cast<std::streamoff>(at));
    f.write(b, 4);
}

}  // namespace

TEST_CASE("frame must fail: a corrupt chunk is located in its file", "[storage]") {
    test::TempDir dir;
    storage::FrameParams fp;
    fp.typesize = 2;
    fp.chunksize = 600;
    fp.blocksize = 200;
    codec::EncodeParams p;
    p.typesize = 2;
    p.blocksize = 200;
    std::vector<std::uint8_t> data(600);
    for (std::size_t i = 0; i < data.size(); ++i) {
        data[i] = static_cast<std::uint8_t>((i / 8) % 5);
    }
    const auto c = codec::encode_chunk(data, p);
    REQUIRE(codec::ChunkDecoder(c).nblocks() == 3);
    REQUIRE_FALSE(codec::ChunkDecoder(c).memcpyed());
    // bstarts[1] sits 4 bytes after the 32-byte header; -16 lies outside any chunk.
    constexpr std::uint64_t kBstart1 = 36;

    SECTION("contiguous frame: the offset counts from the start of the file") {
        const std::string path = dir / "c.b2nd";
        std::uint64_t chunk2_at = 0;
        {
            Frame f = Frame::create(path, fp);
            f.append_chunks({c, c, c});
            chunk2_at = static_cast<std::uint64_t>(f.header().header_len + f.index_entry(2));
        }
        patch_i32(path, chunk2_at + kBstart1, -16);
        // The checksum finds it first (the block table is in the head that a chunk's digest
        // covers), at the chunk's start; without it, the decoder, exactly.
        REQUIRE_THROWS_WITH(
            Frame::open(path).decode_chunk(2),
            Catch::Matchers::Contains("c.b2nd\": chunk 2: its header, block table or block "
                                      "digests (308 bytes) do not match their checksum") &&
                Catch::Matchers::EndsWith("at offset " + std::to_string(chunk2_at)));
        const Frame f = Frame::open(path, unchecked());
        CHECK(f.decode_chunk(1) == data);
        REQUIRE_THROWS_WITH(
            f.decode_chunk(2),
            Catch::Matchers::Contains("c.b2nd\": chunk 2: chunk: block 1: block start -16") &&
                Catch::Matchers::EndsWith("at offset " + std::to_string(chunk2_at + kBstart1)));
    }
    SECTION("sparse frame: the message names the chunk's file, the offset counts in it") {
        const std::string path = dir / "s.b2frame";
        {
            Frame f = Frame::create(path, fp, true);
            f.append_chunks({c, c, c});
        }
        patch_i32(path + "/00000002.chunk", kBstart1, -16);
        REQUIRE_THROWS_WITH(Frame::open(path).decode_chunk(2),
                            Catch::Matchers::Contains("chunk 2 (file 00000002.chunk): its header, "
                                                      "block table or block digests (308 bytes) "
                                                      "do not match their checksum") &&
                                Catch::Matchers::EndsWith("at offset 0"));
        const Frame f = Frame::open(path, unchecked());
        REQUIRE_THROWS_WITH(
            f.decode_chunk(2),
            Catch::Matchers::Contains("chunk 2 (file 00000002.chunk): chunk: block 1") &&
                Catch::Matchers::EndsWith("at offset 36"));
    }
}

TEST_CASE("frame must fail: a problem with no byte position has no offset", "[storage]") {
    test::TempDir dir;
    const std::string path = dir / "tiny.b2nd";
    std::ofstream(path, std::ios::binary).write("b2frame", 7);
    try {
        (void)Frame::open(path);
        FAIL("a 7-byte file opened as a frame");
    } catch (const FormatError& e) {
        CHECK_FALSE(e.offset().has_value());
        CHECK(std::string(e.what()).find("at offset") == std::string::npos);
        CHECK_THAT(e.what(), Catch::Matchers::Contains("tiny.b2nd") &&
                                 Catch::Matchers::Contains("cannot hold a frame header"));
    }
    const FormatError at(std::string("bad marker"), 7);
    CHECK(at.offset() == std::uint64_t{7});
    CHECK(std::string(at.what()) == "bad marker at offset 7");
}
