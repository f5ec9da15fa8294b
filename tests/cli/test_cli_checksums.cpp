// The tool and checksums: b2nd verify (every bad chunk, what it could check), b2nd checksum
// [add].
#include <cstring>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/storage/frame.hpp>

#include "../support/files.hpp"
#include "../support/reference.hpp"
#include "../support/temp_dir.hpp"
#include "run.hpp"

using b2nd::test::q;
using b2nd::test::run;
using b2nd::test::Run;
using Catch::Matchers::Contains;

namespace {

void write_bytes(const std::string& path, const std::vector<std::uint8_t>& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
}

/// A 64 x 64 int32 array in 4 chunks of 4 blocks each (2 x 2).
void make_array(const std::string& path, bool checksums = true) {
    std::vector<std::int32_t> v(64 * 64);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<std::int32_t>(i * 2654435761U % 1000);
    }
    b2nd::CreateOptions o;
    o.chunk_shape = {16, 64};
    o.block_shape = {8, 32};
    o.checksums = checksums;
    (void)b2nd::NDArray<std::int32_t>::create_from(path, {64, 64}, v, o);
}

}  // namespace

TEST_CASE("cli: verify checks checksums and lists every corrupt chunk", "[cli]") {
    b2nd::test::TempDir tmp;
    make_array(tmp / "a.b2nd");
    Run r = run("verify " + q(tmp / "a.b2nd"));
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("ok: ") && Contains("4 chunks") &&
                             Contains("structure, decoding and checksums"));
    CHECK_THAT(run("checksum " + q(tmp / "a.b2nd")).output, Contains("checksums: current"));
    CHECK_THAT(run("info " + q(tmp / "a.b2nd")).output, Contains("checksums   current"));
    CHECK_THAT(run("info --json " + q(tmp / "a.b2nd")).output,
               Contains("\"checksums\": \"current\""));
    // Chunk 1: one byte of its last block's compressed data changed (it may still decode);
    // chunk 3: its block starts overwritten. 0 and 2 stay whole.
    auto bytes = b2nd::test::read_file(tmp / "a.b2nd");
    {
        const auto frame = b2nd::storage::Frame::open(tmp / "a.b2nd");
        const auto c1 = frame.chunk(1);
        bytes[static_cast<std::size_t>(c1.offset) + c1.bytes.size() - 3] ^= 0x10;
        const auto c3 = frame.chunk(3);
        for (std::size_t k = 32; k < 40; ++k) {
            bytes[static_cast<std::size_t>(c3.offset) + k] = 0xee;
        }
    }
    write_bytes(tmp / "b.b2nd", bytes);
    r = run("verify " + q(tmp / "b.b2nd"));
    CHECK(r.status == 1);
    // verify checks every block: chunk 1's last block, chunk 3's head (its block table).
    CHECK_THAT(r.output, Contains("chunk 1: block 3: its ") &&
                             Contains("chunk 3: its header, block table or block digests") &&
                             Contains("do not match their checksum") && !Contains("chunk 0:") &&
                             !Contains("chunk 2:") && Contains("2 of 4 chunks corrupt"));
    // Reads refuse what they would decode of them, naming it; the rest reads.
    const auto b = b2nd::NDArray<std::int32_t>::open(tmp / "b.b2nd");
    CHECK_NOTHROW(b(0, 0));
    CHECK_NOTHROW(b(16, 0));  // chunk 1, block 0
    CHECK_THROWS_WITH(b(24, 40),
                      Contains("chunk 1") && Contains("block 3") && Contains("checksum"));
    CHECK_THROWS_WITH(b(48, 0), Contains("chunk 3") && Contains("checksum"));
    CHECK_THROWS_AS(b.read(), b2nd::FormatError);

    // The dtype in the b2nd metalayer changed ('<i4' to '<u4'): the header no longer matches.
    bytes = b2nd::test::read_file(tmp / "a.b2nd");
    const std::string needle = "<i4";
    const auto at = std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end());
    REQUIRE(at != bytes.end());
    *(at + 1) = 'u';
    write_bytes(tmp / "m.b2nd", bytes);
    CHECK_THROWS_WITH(b2nd::AnyArray::open(tmp / "m.b2nd"),
                      Contains("m.b2nd") && Contains("its header") && Contains("checksum"));
    r = run("verify " + q(tmp / "m.b2nd"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output,
               Contains("its header") && Contains("0 of 4 chunks corrupt, and its metadata"));
    r = run("checksum " + q(tmp / "m.b2nd"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("checksums: broken") && Contains("its header"));
}

TEST_CASE("cli: checksum add covers a file without them, and refuses a corrupt one", "[cli]") {
    b2nd::test::TempDir tmp;
    make_array(tmp / "plain.b2nd", false);
    Run r = run("verify " + q(tmp / "plain.b2nd"));
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("carries no checksums, so changed values cannot be detected"));
    CHECK_THAT(run("checksum " + q(tmp / "plain.b2nd")).output, Contains("checksums: none"));
    CHECK_THAT(run("info --json " + q(tmp / "plain.b2nd")).output,
               Contains("\"checksums\": \"none\""));
    const auto before = b2nd::AnyArray::open(tmp / "plain.b2nd").read();
    r = run("checksum add " + q(tmp / "plain.b2nd"));
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("added: ") && Contains("4 chunks covered"));
    CHECK_THAT(run("checksum " + q(tmp / "plain.b2nd")).output, Contains("checksums: current"));
    CHECK(b2nd::AnyArray::open(tmp / "plain.b2nd").read() == before);
    CHECK_THAT(run("verify " + q(tmp / "plain.b2nd")).output,
               Contains("structure, decoding and checksums"));

    // A corrupt file gets none: its chunks are decoded first.
    make_array(tmp / "bad.b2nd", false);
    auto garbled = b2nd::test::read_file(tmp / "bad.b2nd");
    {
        // Chunk 1's block starts overwritten: it no longer decodes.
        const auto c1 = b2nd::storage::Frame::open(tmp / "bad.b2nd").chunk(1);
        std::fill_n(garbled.begin() + static_cast<std::ptrdiff_t>(c1.offset) + 32, 8,
                    std::uint8_t{0xee});
    }
    write_bytes(tmp / "bad.b2nd", garbled);
    r = run("checksum add " + q(tmp / "bad.b2nd"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("not added"));
    CHECK(b2nd::test::read_file(tmp / "bad.b2nd") == garbled);

    // A zip store cannot change in place: said, nothing written.
    r = run("checksum add " + q(tmp / "s.b2z"));
    CHECK(r.status != 0);
}

TEST_CASE("cli: checksums another program made stale are reported as such", "[cli]") {
    b2nd::test::TempDir tmp;
    make_array(tmp / "a.b2nd");
    // What c-blosc2 does to the trailer when it changes a frame: fingerprint type 0, zeros.
    auto bytes = b2nd::test::read_file(tmp / "a.b2nd");
    std::fill(bytes.end() - 17, bytes.end(), std::uint8_t{0});
    write_bytes(tmp / "a.b2nd", bytes);
    CHECK_THAT(run("checksum " + q(tmp / "a.b2nd")).output, Contains("checksums: stale"));
    const Run r = run("verify " + q(tmp / "a.b2nd"));
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("its checksums are stale"));
    CHECK(run("checksum add " + q(tmp / "a.b2nd")).status == 0);
    CHECK_THAT(run("checksum " + q(tmp / "a.b2nd")).output, Contains("checksums: current"));
}

TEST_CASE(
    "cli: a sparse frame missing a chunk file is described, and export --salvage gets the "
    "rest",
    "[cli]") {
    b2nd::test::TempDir tmp;
    const std::string s = tmp / "s.b2frame";
    {
        std::vector<std::int32_t> v(64 * 64);
        for (std::size_t i = 0; i < v.size(); ++i) {
            v[i] = static_cast<std::int32_t>(i + 1);
        }
        b2nd::CreateOptions o;
        o.chunk_shape = {16, 64};
        o.sparse = true;
        (void)b2nd::NDArray<std::int32_t>::create_from(s, {64, 64}, v, o);
    }
    REQUIRE(std::filesystem::remove(s + "/00000002.chunk"));
    // info: the array described, the missing file named, exit 1.
    Run r = run("info " + q(s));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("shape       (64, 64)") && Contains("00000002.chunk") &&
                             Contains("the file is missing"));
    // export fails naming it; --salvage writes the rest, the chunk as zeros, and says so.
    r = run("export " + q(s) + " " + q(tmp / "a.npy"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("00000002.chunk"));
    CHECK_FALSE(std::filesystem::exists(tmp / "a.npy"));
    r = run("export " + q(s) + " " + q(tmp / "a.npy") + " --salvage");
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("written as zeros") && Contains("00000002.chunk"));
    const auto npy = b2nd::test::read_npy_payload(tmp / "a.npy").data;
    REQUIRE(npy.size() == 64 * 64 * 4);
    int zeros = 0, right = 0;
    for (std::size_t i = 0; i < 64 * 64; ++i) {
        std::int32_t x = 0;
        std::memcpy(&x, npy.data() + 4 * i, 4);
        zeros += x == 0 ? 1 : 0;
        right += x == static_cast<std::int32_t>(i + 1) ? 1 : 0;
    }
    CHECK(zeros == 16 * 64);  // the one chunk
    CHECK(right == 64 * 64 - 16 * 64);
    // A contiguous frame with a chunk that fails its checksum: the same.
    make_array(tmp / "c.b2nd");
    b2nd::test::garble_middle(tmp / "c.b2nd");
    r = run("export " + q(tmp / "c.b2nd") + " " + q(tmp / "c.npy") + " --salvage");
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("written as zeros"));
    CHECK(b2nd::test::read_npy_payload(tmp / "c.npy").data.size() == 64 * 64 * 4);
}

TEST_CASE("cli: checksum add of a .b2d never writes through a link inside it", "[cli]") {
    b2nd::test::TempDir tmp;
    std::filesystem::create_directories(tmp / "s.b2d");
    make_array(tmp / "s.b2d/own.b2nd", false);
    make_array(tmp / "outside.b2nd", false);
    const auto before = b2nd::test::read_file(tmp / "outside.b2nd");
    std::filesystem::remove(tmp / "outside.b2nd.b2lock");  // its writer's; none must come back
    std::filesystem::create_symlink(tmp / "outside.b2nd", tmp / "s.b2d/linked.b2nd");
    const Run r = run("checksum add " + q(tmp / "s.b2d"));
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("linked.b2nd") && Contains("symbolic link"));
    CHECK(b2nd::test::read_file(tmp / "outside.b2nd") == before);
    CHECK_FALSE(std::filesystem::exists(tmp / "outside.b2nd.b2lock"));
}
