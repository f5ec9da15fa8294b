// Checksums (docs/CHECKSUMS.md): written by every commit, checked on first use, carried through
// edits and compaction, made stale (not wrong) by other writers, and no flipped bit of a file
// we wrote reads back as other data.
#include <filesystem>
#include <fstream>
#include <optional>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/store.hpp>

#include "support/files.hpp"
#include "support/temp_dir.hpp"

using namespace b2nd;
using Catch::Matchers::Contains;
using storage::ChecksumReport;
using storage::Frame;

namespace {

using State = ChecksumReport::State;

/// A 20 x 10 int32 array of 3 chunks (the last one ragged: 4 of its 8 rows) with a user
/// metalayer and an attribute: every part of a frame the table covers.
AnyArray make(const std::string& path, const CompressionParams& c, bool sparse = false) {
    std::vector<std::int32_t> v(20 * 10);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<std::int32_t>((i * 2654435761U) % 977) - 400;
    }
    CreateOptions o;
    o.chunk_shape = {8, 10};
    o.block_shape = {4, 5};
    o.compression = c;
    o.sparse = sparse;
    o.metalayers = {{"units", {1, 2, 3, 4}}};
    (void)AnyArray::create_from(path, DType::parse("<i4"), {20, 10},
                                {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * 4}, o);
    OpenOptions w;
    w.writable = true;
    AnyArray::open(path, w).set_vlmeta("note", std::vector<std::uint8_t>{0x91, 0x01});
    return AnyArray::open(path);
}

/// Opens and reads a mutant; nullopt when that fails with a b2nd::Error.
std::optional<std::vector<std::uint8_t>> read_mutant(const std::function<AnyArray()>& open) {
    try {
        const AnyArray a = open();
        if (a.shape() != Shape{20, 10} || a.dtype().str() != "<i4") {
            return std::vector<std::uint8_t>{};  // other data, by its description
        }
        std::vector<std::uint8_t> out = a.read();
        const auto note = a.frame().vlmeta("note");
        const auto* units = a.frame().metalayer("units");
        if (!note || *note != std::vector<std::uint8_t>{0x91, 0x01} || units == nullptr ||
            units->content != std::vector<std::uint8_t>{1, 2, 3, 4}) {
            return std::vector<std::uint8_t>{};
        }
        return out;
    } catch (const Error&) {
        return std::nullopt;
    }
}

}  // namespace

TEST_CASE("checksums: written by default, checked on reads, off on request", "[storage]") {
    test::TempDir dir;
    for (const bool sparse : {false, true}) {
        INFO((sparse ? "sparse" : "contiguous"));
        const std::string path = dir / (sparse ? "s.b2frame" : "c.b2nd");
        const AnyArray a = make(path, {}, sparse);
        const Frame f = Frame::open(path);
        CHECK(f.checksums().state == State::covered);
        CHECK(f.checksums().problems.empty());
        for (std::int64_t i = 0; i < f.nchunks(); ++i) {
            CHECK(f.check_chunk(i).empty());
        }
        // The table is not one of the array's vlmetalayers.
        CHECK(f.vlmeta_names() == std::vector<std::string>{"note"});
        // Without the option, nothing.
        CreateOptions off;
        off.checksums = false;
        off.sparse = sparse;
        const std::string plain = dir / (sparse ? "p.b2frame" : "p.b2nd");
        (void)AnyArray::create(plain, DType::parse("<f8"), {10}, off);
        CHECK(Frame::open(plain).checksums().state == State::none);
    }
}

TEST_CASE("checksums: a changed chunk is refused with its file, chunk and offset", "[storage]") {
    test::TempDir dir;
    for (const bool sparse : {false, true}) {
        INFO((sparse ? "sparse" : "contiguous"));
        const std::string path = dir / (sparse ? "s.b2frame" : "c.b2nd");
        // Memcpyed chunks (clevel 0): a changed byte is a changed value, and nothing else sees it.
        const std::vector<std::uint8_t> good = make(path, {Codec::blosclz, 0, {}}, sparse).read();
        std::string file = path;
        std::uint64_t chunk_at = 0, at = 0;
        {
            const Frame f = Frame::open(path);
            const storage::StoredChunk c = f.chunk(1);
            chunk_at = c.offset;
            at = c.offset + c.bytes.size() - 2;  // inside its last block
            if (sparse) {
                char name[32];
                std::snprintf(name, sizeof name, "/%08X.chunk", static_cast<unsigned>(c.file));
                file += name;
            }
        }
        auto bytes = test::read_file(file);
        bytes[at] ^= 0x01;
        test::write_file(file, bytes);
        const AnyArray a = AnyArray::open(path);
        // What reads headers only (sizes, kinds) does not hash chunks, and so does not fail.
        CHECK(a.cbytes() > 0);
        CHECK(Frame::open(path).chunk_unchecked(1).bytes.size() > 0);
        CHECK_THROWS_AS(Frame::open(path).chunk(1), FormatError);
        std::vector<std::uint8_t> row(40);
        a.read(Box::region({0, 0}, {1, 10}), row.data(), row.size());  // chunk 0: fine
        CHECK(std::equal(row.begin(), row.end(), good.begin()));
        try {
            (void)a.read();
            FAIL("no error");
        } catch (const FormatError& e) {
            CHECK_THAT(e.what(), Contains(path) && Contains("chunk 1") &&
                                     Contains("do not match their checksum"));
            if (sparse) {
                CHECK_THAT(e.what(), Contains(".chunk)"));
            }
            // At the block whose bytes changed (the chunk's last).
            REQUIRE(e.offset());
            CHECK(*e.offset() > chunk_at);
            CHECK(*e.offset() <= at);
        }
        // The same read again: still refused (a failed check is never remembered as passed).
        CHECK_THROWS_AS(a.read(), FormatError);
        // Threads that wait for the chunk another one fails to load fail too, and never hang.
        OpenOptions two;
        two.nthreads = 2;
        for (int rep = 0; rep < 20; ++rep) {
            CHECK_THROWS_AS(AnyArray::open(path, two).read(), FormatError);
        }
        // Verification off: the changed value comes back, silently (what checksums prevent).
        OpenOptions unchecked;
        unchecked.verify_checksums = false;
        const std::vector<std::uint8_t> bad = AnyArray::open(path, unchecked).read();
        REQUIRE(bad.size() == good.size());
        std::size_t differ = 0;
        for (std::size_t i = 0; i < good.size(); ++i) {
            differ += good[i] != bad[i] ? 1U : 0U;
        }
        CHECK(differ == 1);
    }
}

TEST_CASE("checksums: no flipped bit of a frame we wrote reads back as other data", "[storage]") {
    // Every bit of every byte of a contiguous frame (header, metalayers, chunks, index,
    // trailer, vlmetalayers, the table, the stamp), one at a time, for an unfiltered BloscLZ
    // array (73% of such mutants read as other data without checksums) and a default one.
    test::TempDir dir;
    for (const CompressionParams& c :
         {CompressionParams{Codec::blosclz, 5, {}}, CompressionParams{}}) {
        const std::string path = dir / "m.b2nd";
        std::filesystem::remove(path);
        const std::vector<std::uint8_t> good = make(path, c).read();
        const std::vector<std::uint8_t> file = test::read_file(path);
        std::vector<std::uint8_t> m = file;
        std::size_t refused = 0, same = 0, silent = 0;
        for (std::size_t i = 0; i < file.size(); ++i) {
            for (int bit = 0; bit < 8; ++bit) {
                m[i] = static_cast<std::uint8_t>(file[i] ^ (1U << bit));
                const auto got = read_mutant([&] {
                    return AnyArray::open_buffer({m.data(), m.size()});
                });
                if (!got) {
                    ++refused;
                } else if (*got == good) {
                    ++same;
                } else {
                    ++silent;
                    INFO("byte " << i << " bit " << bit);
                    CHECK(silent == 0);
                }
                m[i] = file[i];
            }
        }
        INFO(file.size() * 8 << " mutants: " << refused << " refused, " << same << " same data");
        CHECK(silent == 0);
        // What reads back the same: the dead space the vlmeta commit left (the previous index and
        // trailer), the has_vlmetalayers flag, the trailer's unused vlmetalayer index size, and
        // the blocks of the last chunk that lie wholly past the array's end (rows 20 to 23 of
        // 16 to 23: blocks 2 and 3), which no read decodes.
        const Frame f = Frame::from_buffer({file.data(), file.size()});
        const auto dead = static_cast<std::size_t>(f.dead_bytes());
        CHECK(dead > 0);
        const storage::StoredChunk last = f.chunk(2);
        const auto ext = codec::block_extents(last.bytes, format::read_chunk_header(last.bytes));
        REQUIRE(ext);
        REQUIRE(ext->size() == 4);
        const std::size_t padding =
            (*ext)[2].second - (*ext)[2].first + (*ext)[3].second - (*ext)[3].first;
        CHECK(same <= (dead + 4 + padding) * 8);
    }
}

TEST_CASE("checksums: no flipped bit of a sparse frame's files reads back as other data",
          "[storage]") {
    test::TempDir dir;
    const std::string path = dir / "s.b2frame";
    const std::vector<std::uint8_t> good = make(path, {Codec::blosclz, 5, {}}, true).read();
    OpenOptions o;
    o.locking = false;
    for (const char* name : {"/chunks.b2frame", "/00000001.chunk"}) {
        const std::string file = path + name;
        const std::vector<std::uint8_t> bytes = test::read_file(file);
        std::vector<std::uint8_t> m = bytes;
        std::size_t silent = 0, refused = 0;
        for (std::size_t i = 0; i < bytes.size(); ++i) {
            for (int bit = 0; bit < 8; bit += 3) {  // bits 0, 3, 6 of every byte
                m[i] = static_cast<std::uint8_t>(bytes[i] ^ (1U << bit));
                test::write_file(file, m);
                const auto got = read_mutant([&] { return AnyArray::open(path, o); });
                refused += got ? 0U : 1U;
                if (got && *got != good) {
                    ++silent;
                    INFO(name << ": byte " << i << " bit " << bit);
                    CHECK(silent == 0);
                }
                m[i] = bytes[i];
            }
        }
        test::write_file(file, bytes);
        INFO(name << ": " << refused << " refused");
        CHECK(silent == 0);
        CHECK(refused > 0);
    }
}

TEST_CASE("checksums: carried through updates, resizes and compaction", "[storage]") {
    test::TempDir dir;
    for (const bool sparse : {false, true}) {
        INFO((sparse ? "sparse" : "contiguous"));
        const std::string path = dir / (sparse ? "s.b2frame" : "c.b2nd");
        (void)make(path, {}, sparse);
        {
            OpenOptions w;
            w.writable = true;
            AnyArray a = AnyArray::open(path, w);
            std::vector<std::int32_t> v(4 * 10, 7);
            a.write(Box::region({2, 0}, {4, 10}),
                    {reinterpret_cast<const std::uint8_t*>(v.data()), 160});
            a.resize({30, 10});
            a.set_vlmeta("more", std::vector<std::uint8_t>{0xc0});
            a.compact();
        }
        const Frame f = Frame::open(path);
        CHECK(f.checksums().state == State::covered);
        for (std::int64_t i = 0; i < f.nchunks(); ++i) {
            INFO(f.check_chunk(i));
            CHECK(f.check_chunk(i).empty());
        }
        const NDArray<std::int32_t> back = NDArray<std::int32_t>::open(path);
        CHECK(back(3, 4) == 7);
        CHECK(back(25, 0) == 0);
    }
}

TEST_CASE("checksums: another writer's change makes them stale, our next commit drops them",
          "[storage]") {
    test::TempDir dir;
    const std::string path = dir / "c.b2nd";
    const std::vector<std::uint8_t> good = make(path, {}).read();
    // c-blosc2 rewrites the trailer with fingerprint type 0 and zeros when it changes a frame.
    auto bytes = test::read_file(path);
    std::fill(bytes.end() - 17, bytes.end(), std::uint8_t{0});
    test::write_file(path, bytes);
    CHECK(Frame::open(path).checksums().state == State::stale);
    CHECK(AnyArray::open(path).read() == good);  // unchecked, and readable
    {
        OpenOptions w;
        w.writable = true;
        AnyArray::open(path, w).set_vlmeta("x", std::vector<std::uint8_t>{0xc0});
    }
    CHECK(Frame::open(path).checksums().state == State::none);
    {
        storage::OpenOptions w;
        w.writable = true;
        Frame::open(path, w).add_checksums();
    }
    CHECK(Frame::open(path).checksums().state == State::covered);
    CHECK(AnyArray::open(path).read() == good);
    // A stamp without its table, or a table whose stamp changed: broken, refused by default.
    bytes = test::read_file(path);
    bytes[bytes.size() - 3] ^= 0x40;
    test::write_file(dir / "s.b2nd", bytes);
    CHECK_THROWS_WITH(AnyArray::open(dir / "s.b2nd"),
                      Contains("s.b2nd") && Contains("checksum stamp does not match"));
    // Two flips that would turn the table off (the stamp's type 0xF8 to 0x78, the table's name
    // to '_b2n$_checksums' in the live trailer; b2nd_mutate found such a mutant): still a
    // stamp, so refused.
    {
        auto two = test::read_file(path);
        two[two.size() - 17] ^= 0x80;
        const std::string name = "_b2nd_checksums";
        const auto at = std::find_end(two.begin(), two.end(), name.begin(), name.end());
        REQUIRE(at != two.end());
        *(at + 4) ^= 0x40;
        test::write_file(dir / "t.b2nd", two);
        CHECK_THROWS_WITH(AnyArray::open(dir / "t.b2nd"),
                          Contains("carries a checksum stamp but no '_b2nd_checksums'"));
    }
    storage::OpenOptions unchecked;
    unchecked.verify_checksums = false;
    const Frame s = Frame::open(dir / "s.b2nd", unchecked);
    CHECK(s.checksums().state == State::broken);
    CHECK(s.checksums().problems.size() == 1);
}

TEST_CASE("checksums: store members carry them, in a .b2z and a .b2d", "[storage][store]") {
    test::TempDir dir;
    const std::vector<std::uint8_t> good = make(dir / "src.b2nd", {Codec::blosclz, 0, {}}).read();
    for (const char* form : {"s.b2z", "s.b2d"}) {
        INFO(form);
        const std::string path = dir / form;
        {
            StoreWriter w = StoreWriter::create(path);  // threshold 0: every leaf a member file
            w.put("/run/a", AnyArray::open(dir / "src.b2nd"));
            w.commit();
        }
        std::string file;
        std::uint64_t at = 0;
        {
            const AnyArray leaf = Store::open(path).open_array("/run/a");
            CHECK(leaf.read() == good);
            CHECK(leaf.frame().checksums().state == State::covered);
            const storage::StoredChunk c = leaf.frame().chunk(1);
            at = c.offset + c.bytes.size() - 2;  // a value of chunk 1 (memcpyed)
            file = std::string(form) == "s.b2z" ? path : leaf.frame().path();
        }
        auto bytes = test::read_file(file);
        bytes[at] ^= 0x04;
        test::write_file(file, bytes);
        const AnyArray leaf = Store::open(path).open_array("/run/a");
        CHECK_THROWS_WITH(leaf.read(), Contains("chunk 1") && Contains("checksum"));
    }
}
