// Zarr arrays made to hurt the reader: metadata and chunk files that are links out of the array
// (never followed, never quoted), JSON errors that would quote another file, huge declared chunks
// (read a bounded block at a time, the chunk decoded once for its blocks), a sparse shard whose
// index claims 2^26 inner chunks (read by the entries a read needs), nested sharding and huge raw
// items (refused by name). Run under ASan in CI.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/attrs.hpp>
#include <b2nd/b2nd.hpp>
#include <b2nd/ops.hpp>

#include "../../support/bridge_cases.hpp"
#include "../../support/files.hpp"
#include "../../support/temp_dir.hpp"
#include <fcntl.h>
#include <unistd.h>

namespace fs = std::filesystem;
using b2nd::AnyArray;
using Catch::Matchers::Contains;

namespace {

void write_text(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary);
    f << text;
}

void write_bytes(const std::string& path, const std::vector<std::uint8_t>& b) {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

/// A Zarr v2 array's .zarray: uncompressed little-endian `dtype`, C order, fill 0.
std::string zarray(const std::string& shape, const std::string& chunks, const char* dtype) {
    return std::string("{\"zarr_format\": 2, \"shape\": ") + shape + ", \"chunks\": " + chunks +
           ", \"dtype\": \"" + dtype +
           "\", \"compressor\": null, \"fill_value\": 0, \"order\": \"C\", \"filters\": null}";
}

/// A Zarr v3 zarr.json of `shape`, chunks `chunks` and `codecs` (a JSON list).
std::string zarr_json(const std::string& shape,
                      const std::string& chunks,
                      const std::string& type,
                      const std::string& codecs,
                      const std::string& fill = "7") {
    return "{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": " + shape +
           ", \"data_type\": \"" + type +
           "\", \"chunk_grid\": {\"name\": \"regular\", \"configuration\": {\"chunk_shape\": " +
           chunks +
           "}}, \"chunk_key_encoding\": {\"name\": \"default\", \"configuration\": "
           "{\"separator\": \"/\"}}, \"fill_value\": " +
           fill + ", \"codecs\": " + codecs + "}";
}

}  // namespace

TEST_CASE("zarr hostile: metadata and chunks are read only inside the array, never quoted",
          "[bridges][zarr][hostile]") {
    b2nd::test::TempDir tmp, elsewhere;
    const std::string z = tmp / "a.zarr";
    fs::create_directories(z);
    write_text(z + "/.zarray", zarray("[4, 4]", "[2, 4]", "<i4"));
    std::vector<std::uint8_t> chunk(32);
    for (std::size_t i = 0; i < chunk.size(); i += 4) {
        chunk[i] = static_cast<std::uint8_t>(i / 4 + 1);
    }
    write_bytes(z + "/0.0", chunk);
    // A link inside the array: followed.
    write_bytes(z + "/real", chunk);
    fs::create_symlink("real", z + "/1.0");
    const auto both = AnyArray::open(z).read();
    CHECK(std::vector<std::uint8_t>(both.begin(), both.begin() + 32) == chunk);
    CHECK(std::vector<std::uint8_t>(both.begin() + 32, both.end()) == chunk);
    // A chunk that is a link out of the array: refused by name when read.
    write_bytes(elsewhere / "other", chunk);
    fs::remove(z + "/1.0");
    fs::create_symlink(elsewhere / "other", z + "/1.0");
    CHECK_THROWS_WITH(AnyArray::open(z).read(), Contains("1.0") && Contains("leads out"));
    fs::remove(z + "/1.0");
    // .zattrs linked to another JSON file: refused, not taken as the array's attributes.
    write_text(elsewhere / "other.json", "{\"secret\": \"from elsewhere\"}");
    fs::create_symlink(elsewhere / "other.json", z + "/.zattrs");
    CHECK_THROWS_WITH(AnyArray::open(z), Contains(".zattrs") && Contains("leads out"));
    fs::remove(z + "/.zattrs");
    // .zarray linked to a text file: refused without quoting it.
    write_text(elsewhere / "passwd", "root:x:0:0:SECRET-LINE:/root:/bin/bash\n");
    fs::remove(z + "/.zarray");
    fs::create_symlink(elsewhere / "passwd", z + "/.zarray");
    try {
        (void)AnyArray::open(z);
        FAIL("opened");
    } catch (const b2nd::Error& e) {
        CHECK_THAT(e.what(), Contains("leads out"));
        CHECK(std::string(e.what()).find("SECRET") == std::string::npos);
    }
    // Metadata that is not JSON, inside the array: the error gives a position, not the text.
    fs::remove(z + "/.zarray");
    write_text(z + "/.zarray", "root:x:0:0:SECRET-LINE:/root:/bin/bash\n");
    try {
        (void)AnyArray::open(z);
        FAIL("opened");
    } catch (const b2nd::Error& e) {
        CHECK_THAT(e.what(), Contains(".zarray") && Contains("character 1"));
        CHECK(std::string(e.what()).find("SECRET") == std::string::npos);
    }
}

TEST_CASE("zarr hostile: huge chunks are read a bounded block at a time, decoded once",
          "[bridges][zarr][hostile]") {
    b2nd::test::TempDir tmp;
    // 600 MiB chunks, none written: one element costs a block, not a chunk.
    const std::string big = tmp / "big.zarr";
    fs::create_directories(big);
    write_text(big + "/.zarray", zarray("[300000, 1000]", "[150000, 1000]", "<f4"));
    const AnyArray a = AnyArray::open(big);
    CHECK(a.chunk_shape() == b2nd::Shape{150000, 1000});
    CHECK(a.grid().block_nbytes() <= (std::int64_t{8} << 20));
    const auto one = a.read(b2nd::Box::region({299999, 999}, {1, 1}));
    CHECK(one == std::vector<std::uint8_t>(4, 0));
    // A real 16 MiB chunk, stored raw: its blocks are parts of it, every value where it was.
    const std::string real = tmp / "real.zarr";
    fs::create_directories(real);
    write_text(real + "/.zarray", zarray("[4096, 1100]", "[4096, 1024]", "<i4"));
    std::vector<std::int32_t> v(4096 * 1024);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<std::int32_t>(i * 7 + 3);
    }
    write_bytes(real + "/0.0", std::vector<std::uint8_t>(
                                   reinterpret_cast<std::uint8_t*>(v.data()),
                                   reinterpret_cast<std::uint8_t*>(v.data()) + v.size() * 4));
    const AnyArray r = AnyArray::open(real);
    CHECK(r.grid().block_nbytes() <= (std::int64_t{8} << 20));
    CHECK(r.grid().block_shape() != r.chunk_shape());
    const auto whole = r.read();
    REQUIRE(whole.size() == 4096u * 1100 * 4);
    std::size_t bad = 0;
    for (std::size_t row = 0; row < 4096; ++row) {
        for (std::size_t col = 0; col < 1100; ++col) {
            std::int32_t got = 0;
            std::memcpy(&got, &whole[(row * 1100 + col) * 4], 4);
            const std::int32_t want = col < 1024 ? v[row * 1024 + col] : 0;  // chunk 0.1: fill
            bad += got != want ? 1 : 0;
        }
    }
    CHECK(bad == 0);
    std::int32_t x = 0;
    const std::int64_t at[2] = {4000, 1000};
    r.read_points(at, 1, &x);
    CHECK(x == v[4000 * 1024 + 1000]);
}

TEST_CASE("zarr hostile: a shard index of 2^26 entries is read by the entries a read needs",
          "[bridges][zarr][hostile]") {
    b2nd::test::TempDir tmp;
    const std::string z = tmp / "sparse.zarr";
    fs::create_directories(z + "/c");
    const std::int64_t n = std::int64_t{1} << 26;
    write_text(z + "/zarr.json",
               zarr_json("[" + std::to_string(n) + "]", "[" + std::to_string(n) + "]", "uint8",
                         "[{\"name\": \"sharding_indexed\", \"configuration\": {\"chunk_shape\": "
                         "[1], \"codecs\": [{\"name\": \"bytes\"}], \"index_codecs\": [{\"name\": "
                         "\"bytes\", \"configuration\": {\"endian\": \"little\"}}, {\"name\": "
                         "\"crc32c\"}], \"index_location\": \"end\"}}]"));
    // The shard: one byte of data (inner chunk 6's), then the index (a sparse file of 1 GiB).
    const std::string shard = z + "/c/0";
    const int fd = ::open(shard.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    const std::uint64_t index_at = 1;
    REQUIRE(::ftruncate(
                fd, static_cast<off_t>(index_at + 16 * static_cast<std::uint64_t>(n) + 4)) == 0);
    const std::uint8_t value = 42;
    REQUIRE(::pwrite(fd, &value, 1, 0) == 1);
    const auto entry = [&](std::int64_t inner, std::uint64_t off, std::uint64_t nbytes) {
        std::uint8_t e[16];
        for (int b = 0; b < 8; ++b) {
            e[b] = static_cast<std::uint8_t>(off >> (8 * b));
            e[8 + b] = static_cast<std::uint8_t>(nbytes >> (8 * b));
        }
        REQUIRE(::pwrite(fd, e, 16,
                         static_cast<off_t>(index_at + 16 * static_cast<std::uint64_t>(inner))) ==
                16);
    };
    entry(5, ~std::uint64_t{0}, ~std::uint64_t{0});  // missing: the fill value
    entry(6, 0, 1);
    entry(7, ~std::uint64_t{0}, ~std::uint64_t{0});
    ::close(fd);
    const AnyArray a = AnyArray::open(z);
    CHECK(a.read(b2nd::Box::region({5}, {3})) == std::vector<std::uint8_t>{7, 42, 7});
    // An entry that points past the shard: refused by name.
    const int fd2 = ::open(shard.c_str(), O_WRONLY);
    REQUIRE(fd2 >= 0);
    std::uint8_t e[16];
    std::memset(e, 0x7f, sizeof e);
    REQUIRE(::pwrite(fd2, e, 16, static_cast<off_t>(index_at + 16 * 9)) == 16);
    ::close(fd2);
    CHECK_THROWS_WITH(AnyArray::open(z).read(b2nd::Box::region({9}, {1})),
                      Contains("inner chunk 9") && Contains("lies at bytes"));
}

TEST_CASE("zarr hostile: nested sharding and huge raw items are refused by name",
          "[bridges][zarr][hostile]") {
    b2nd::test::TempDir tmp;
    const std::string nested = tmp / "nested.zarr";
    fs::create_directories(nested);
    const std::string inner_shard =
        "{\"name\": \"sharding_indexed\", \"configuration\": {\"chunk_shape\": [2], \"codecs\": "
        "[{\"name\": \"bytes\"}]}}";
    write_text(nested + "/zarr.json",
               zarr_json("[16]", "[8]", "uint8",
                         "[{\"name\": \"sharding_indexed\", \"configuration\": {\"chunk_shape\": "
                         "[4], \"codecs\": [" +
                             inner_shard + "]}}]"));
    CHECK_THROWS_AS(AnyArray::open(nested), b2nd::UnsupportedError);
    CHECK_THROWS_WITH(AnyArray::open(nested),
                      Contains("nested.zarr") && Contains("nested sharding"));
    const std::string raw = tmp / "raw.zarr";
    fs::create_directories(raw);
    write_text(raw + "/zarr.json",
               zarr_json("[4]", "[4]", "r2147483640", "[{\"name\": \"bytes\"}]", "[0]"));
    CHECK_THROWS_WITH(AnyArray::open(raw), Contains("r2147483640") && Contains("items of more"));
    write_text(raw + "/zarr.json", zarr_json("[4]", "[4]", "r64", "[{\"name\": \"bytes\"}]",
                                             "[0, 0, 0, 0, 0, 0, 0, 0]"));
    CHECK(AnyArray::open(raw).itemsize() == 8);
}

TEST_CASE("zarr hostile: ten thousand attribute keys open, and a copy keeps them in one commit",
          "[bridges][zarr][hostile]") {
    b2nd::test::TempDir tmp;
    const std::string z = tmp / "many.zarr";
    fs::create_directories(z);
    write_text(z + "/.zarray", zarray("[4]", "[4]", "<i4"));
    // {"k0": 0, "k1": 1, ...} with n keys.
    const auto keys = [](int n) {
        std::string attrs = "{";
        for (int i = 0; i < n; ++i) {
            attrs += (i != 0 ? ", \"k" : "\"k") + std::to_string(i) + "\": " + std::to_string(i);
        }
        return attrs + "}";
    };
    write_text(z + "/.zattrs", keys(10000));
    const AnyArray a = AnyArray::open(z);
    REQUIRE(a.attrs().size() == 10000);
    CHECK(a.attrs().get<std::int64_t>("k9999") == 9999);
    // 8000 keys: within a frame's 8192, copied in one commit.
    write_text(z + "/.zattrs", keys(8000));
    const AnyArray b = b2nd::copy(AnyArray::open(z), tmp / "copy.b2nd");
    REQUIRE(b.attrs().size() == 8000);
    CHECK(b.attrs().get<std::int64_t>("k7999") == 7999);
}

TEST_CASE("zarr hostile: listing and attributes read metadata only inside the node, bounded",
          "[bridges][zarr]") {
    namespace fs = std::filesystem;
    b2nd::test::TempDir dir;
    const std::string g = dir / "g.zarr";
    fs::create_directories(g + "/a");
    fs::create_directories(g + "/b");
    std::ofstream(g + "/zarr.json") << R"({"zarr_format": 3, "node_type": "group",
        "attributes": {"title": "g"}})";
    std::ofstream(dir / "secret.json") << R"({"zarr_format": 3, "node_type": "group",
        "attributes": {"password": "hunter2"}})";
    // a/zarr.json leads out of the hierarchy; b/zarr.json is no JSON at all.
    fs::create_symlink(dir / "secret.json", g + "/a/zarr.json");
    std::ofstream(g + "/b/zarr.json") << "{\"zarr_format\": 3, not json";
    CHECK(b2nd::zarr_attributes(g) == b2nd::Value::Map{{"title", "g"}});
    CHECK_THROWS_WITH(b2nd::zarr_attributes(g + "/a"),
                      Contains("leads out") && !Contains("hunter2"));
    // The listing names both damaged members, quoting neither, and hides nothing else.
    const auto listed = b2nd::list_zarr(g);
    REQUIRE(listed.size() == 2);
    for (const auto& e : listed) {
        INFO(e.path);
        CHECK(e.kind == "unreadable");
        CHECK_THAT(e.note, !Contains("hunter2") && !Contains("not json"));
    }
    // A metadata file larger than any real one is refused before it is read.
    {
        std::ofstream big(g + "/zarr.json", std::ios::trunc);
        big << R"({"zarr_format": 3, "node_type": "group", "attributes": {"x": ")";
        big << std::string(std::size_t{17} << 20, 'a') << "\"}}";
    }
    CHECK_THROWS_WITH(b2nd::zarr_attributes(g), Contains("larger than 16 MiB"));
}
