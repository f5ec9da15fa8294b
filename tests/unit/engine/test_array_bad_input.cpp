// Hostile and damaged array files: every truncation, bit flips, metalayers that contradict the
// frame, corrupt chunks located in their file. Only b2nd::Error may come out, naming the file;
// never a crash.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/format/b2nd_meta.hpp>
#include <b2nd/storage/frame.hpp>

#include "../../support/data.hpp"
#include "../../support/files.hpp"
#include "../../support/temp_dir.hpp"

using b2nd::AnyArray;
using Catch::Matchers::Contains;

namespace {

void write_bytes(const std::string& path, const std::vector<std::uint8_t>& b, std::size_t n) {
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(n));
}

std::string small_array(const b2nd::test::TempDir& tmp) {
    b2nd::CreateOptions o;
    o.chunk_shape = {4, 6};
    o.block_shape = {2, 3};
    o.compression.filters = {{b2nd::Filter::shuffle, 0}, {b2nd::Filter::delta, 0}};
    auto v = b2nd::test::generate<std::int32_t>(10 * 11, [](std::size_t i) { return i * i; });
    auto a = b2nd::NDArray<std::int32_t>::create_from(tmp / "s.b2nd", {10, 11}, v, o);
    a.any().set_vlmeta("note", std::vector<std::uint8_t>{0xa2, 'o', 'k'});
    return tmp / "s.b2nd";
}

/// Opens and reads everything; returns normally or throws b2nd::Error.
void open_and_read(const std::string& path) {
    const AnyArray a = AnyArray::open(path);
    (void)a.read();
    std::vector<std::uint8_t> one(static_cast<std::size_t>(a.itemsize()));
    if (a.size() > 0) {
        const b2nd::Shape last = [&] {
            b2nd::Shape s = a.shape();
            for (auto& x : s) {
                --x;
            }
            return s;
        }();
        a.read_element(last.data(), one.data());
    }
}

}  // namespace

TEST_CASE("bad arrays: every truncation raises b2nd::Error", "[array]") {
    b2nd::test::TempDir tmp;
    const auto good = b2nd::test::read_file(small_array(tmp));
    const std::string cut = tmp / "cut.b2nd";
    for (std::size_t n = 0; n < good.size(); ++n) {
        INFO("truncated to " << n << " of " << good.size() << " bytes");
        write_bytes(cut, good, n);
        CHECK_THROWS_AS(open_and_read(cut), b2nd::Error);
    }
    write_bytes(cut, good, good.size());
    CHECK_NOTHROW(open_and_read(cut));
}

TEST_CASE("bad arrays: bit flips never crash", "[array]") {
    b2nd::test::TempDir tmp;
    const auto good = b2nd::test::read_file(small_array(tmp));
    const std::string bad = tmp / "bad.b2nd";
    b2nd::test::SplitMix rng(99);
    int errors = 0;
    for (int k = 0; k < 600; ++k) {
        auto b = good;
        const int flips = 1 + static_cast<int>(rng.below(3));
        for (int f = 0; f < flips; ++f) {
            b[rng.below(b.size())] ^= static_cast<std::uint8_t>(1u << rng.below(8));
        }
        write_bytes(bad, b, b.size());
        try {
            open_and_read(bad);
        } catch (const b2nd::Error& e) {
            ++errors;
            CHECK_THAT(e.what(), Contains("bad.b2nd"));
        }
    }
    CHECK(errors > 0);  // most flips in headers, indexes and streams are caught
}

TEST_CASE("bad arrays: a metalayer that contradicts the frame", "[array]") {
    b2nd::test::TempDir tmp;
    const std::string path = small_array(tmp);
    const auto meta_of = [&](b2nd::Shape shape, b2nd::Shape chunks, b2nd::Shape blocks) {
        b2nd::format::B2ndMeta m;
        m.shape = std::move(shape);
        m.chunk_shape.assign(chunks.begin(), chunks.end());
        m.block_shape.assign(blocks.begin(), blocks.end());
        m.dtype = "<i4";
        return b2nd::format::write_b2nd_meta(m);
    };
    auto rewrite = [&](const std::vector<std::uint8_t>& meta) {
        b2nd::storage::OpenOptions w;
        w.writable = true;
        b2nd::storage::Frame f = b2nd::storage::Frame::open(path, w);
        f.update_metalayer("b2nd", meta);
    };
    rewrite(meta_of({100, 11}, {4, 6}, {2, 3}));  // more chunks than the frame holds
    CHECK_THROWS_WITH(AnyArray::open(path), Contains("s.b2nd") && Contains("needs 50 chunks"));
    rewrite(meta_of({10, 11}, {4, 6}, {4, 3}));  // different blocks: the chunk size still matches
    // Every chunk is wrong; which one a parallel read reports first is not fixed.
    CHECK_THROWS_WITH(open_and_read(path),
                      Contains("s.b2nd\": chunk ") && Contains("has blocks of 24 bytes"));
    rewrite(meta_of({10, 11}, {5, 4}, {2, 3}));  // as many chunks (2 x 3), of another size
    CHECK_THROWS_WITH(AnyArray::open(path), Contains("chunk size"));
    rewrite(meta_of({10, 11}, {4, 6}, {8, 3}));  // blocks larger than chunks
    CHECK_THROWS_WITH(AnyArray::open(path), Contains("invalid array"));
    rewrite(meta_of({10, 11}, {4, 6}, {2, 3}));
    CHECK_NOTHROW(open_and_read(path));
}

TEST_CASE("arrays embedded at an offset in a larger file", "[array]") {
    b2nd::test::TempDir tmp;
    const auto frame = b2nd::test::read_file(small_array(tmp));
    {
        std::ofstream out(tmp / "big.bin", std::ios::binary);
        out << std::string(1000, '\xee');
        out.write(reinterpret_cast<const char*>(frame.data()),
                  static_cast<std::streamsize>(frame.size()));
        out << std::string(77, '\xdd');
    }
    b2nd::OpenOptions o;
    o.offset = 1000;
    const auto a = AnyArray::open(tmp / "big.bin", o);
    const auto b = AnyArray::open(tmp / "s.b2nd");
    CHECK(a.shape() == b.shape());
    CHECK(a.read() == b.read());
    CHECK(*a.vlmeta("note") == std::vector<std::uint8_t>{0xa2, 'o', 'k'});
    // And from memory.
    const auto m = AnyArray::open_buffer({frame.data(), frame.size()});
    CHECK(m.read() == b.read());
    CHECK_FALSE(m.writable());
    // From memory at an offset (the whole file image, as mapped by the caller).
    const auto big = b2nd::test::read_file(tmp / "big.bin");
    const auto mo = AnyArray::open_buffer({big.data(), big.size()}, o);
    CHECK(mo.read() == b.read());
    b2nd::OpenOptions past;
    past.offset = big.size() + 1;
    CHECK_THROWS_WITH(AnyArray::open_buffer({big.data(), big.size()}, past),
                      Contains("past the end"));
}

TEST_CASE("bad arrays: a corrupt chunk is named with its file and its offset in the file",
          "[array]") {
    b2nd::test::TempDir tmp;
    for (const bool sparse : {false, true}) {
        INFO((sparse ? "sparse" : "contiguous"));
        const std::string path = tmp / (sparse ? "c.b2frame" : "c.b2nd");
        b2nd::CreateOptions o;
        o.chunk_shape = {64};
        o.block_shape = {16};
        o.sparse = sparse;
        auto v = b2nd::test::generate<std::int32_t>(256, [](std::size_t i) { return i / 3; });
        (void)b2nd::NDArray<std::int32_t>::create_from(path, {256}, v, o);
        // Chunk 2's block 1 start (4 bytes after the 32-byte chunk header) points outside it.
        const auto frame = b2nd::storage::Frame::open(path);
        const auto entry = static_cast<std::uint64_t>(frame.index_entry(2));
        char name[32];
        std::snprintf(name, sizeof name, "%08X.chunk", static_cast<unsigned>(entry));
        const std::string file = sparse ? path + "/" + name : path;
        const std::uint64_t chunk_at =
            sparse ? 0 : static_cast<std::uint64_t>(frame.header().header_len) + entry;
        {
            std::fstream f(file, std::ios::binary | std::ios::in | std::ios::out);
            f.seekp(static_cast<std::streamoff>(chunk_at + 36));
            f.write("\xf0\xff\xff\xff", 4);
        }
        const std::string where = sparse ? "chunk 2 (file " + std::string(name) + ")" : "chunk 2";
        {
            // The checksum finds it first, naming the chunk's start in its file.
            const auto checked = b2nd::NDArray<std::int32_t>::open(path);
            CHECK(checked(64 + 5) == 23);
            CHECK_THROWS_WITH(checked(128 + 20), Contains(path) && Contains(where + ": its ") &&
                                                     Contains("do not match their checksum") &&
                                                     Catch::Matchers::EndsWith(
                                                         "at offset " + std::to_string(chunk_at)));
        }
        // Without it, the decoder locates the bad field itself.
        b2nd::OpenOptions unchecked;
        unchecked.verify_checksums = false;
        const auto a = b2nd::NDArray<std::int32_t>::open(path, unchecked);
        CHECK(a(64 + 5) == 23);  // chunk 1 is intact
        const std::string at = "at offset " + std::to_string(chunk_at + 36);
        CHECK_THROWS_WITH(a(128 + 20), Contains(path) && Contains(where + ": chunk: block 1") &&
                                           Catch::Matchers::EndsWith(at));
        CHECK_THROWS_WITH(a.read(), Contains(where) && Catch::Matchers::EndsWith(at));
        try {
            (void)a.read();
        } catch (const b2nd::FormatError& e) {
            CHECK(e.offset() == chunk_at + 36);
        }
    }
}

TEST_CASE("bad arrays: a chunk that contradicts the grid names the header field", "[array]") {
    b2nd::test::TempDir tmp;
    const std::string path = tmp / "g.b2nd";
    b2nd::CreateOptions o;
    o.chunk_shape = {64};
    o.block_shape = {16};
    o.checksums = false;  // else the checksum finds the change first
    auto v = b2nd::test::generate<std::int32_t>(256, [](std::size_t i) { return i / 3; });
    (void)b2nd::NDArray<std::int32_t>::create_from(path, {256}, v, o);
    const auto frame = b2nd::storage::Frame::open(path);
    const auto chunk_at = static_cast<std::uint64_t>(frame.header().header_len) +
                          static_cast<std::uint64_t>(frame.index_entry(1));
    REQUIRE_FALSE(b2nd::codec::ChunkDecoder(frame.chunk(1).bytes).memcpyed());
    {
        // nbytes (bytes 4-7 of the chunk header) one item short.
        std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
        f.seekp(static_cast<std::streamoff>(chunk_at + 4));
        const std::int32_t nbytes = 64 * 4 - 4;
        f.write(reinterpret_cast<const char*>(&nbytes), 4);
    }
    CHECK_THROWS_WITH(open_and_read(path),
                      Contains("chunk 1: holds 252 bytes; this array's chunks hold 256") &&
                          Catch::Matchers::EndsWith("at offset " + std::to_string(chunk_at + 4)));
}
