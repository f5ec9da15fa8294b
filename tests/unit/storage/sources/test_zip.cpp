// Zip archives as directories of byte sources: python-blosc2's .b2z stores (../shared/corpus/
// stores) list their members, and every array member opens in place, as a window of the one
// mapping of the archive, with its expected content; damaged archives are refused by name.
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/storage/zip.hpp>
#include <b2nd/store.hpp>

#include "support/files.hpp"
#include "support/reference.hpp"
#include "support/temp_dir.hpp"

using b2nd::ByteSpan;
using b2nd::storage::ZipDirectory;

namespace {

std::string stores_dir() {
    const std::string c = b2nd::test::corpus_dir();
    return c.empty() ? c : c + "/stores";
}

std::shared_ptr<const b2nd::storage::ByteSource> in_memory(const std::vector<std::uint8_t>& b,
                                                           const std::string& name) {
    return b2nd::storage::memory_source(ByteSpan(b.data(), b.size()), nullptr, name);
}

}  // namespace

TEST_CASE("zip: every array of python-blosc2's .b2z stores opens in place with its content",
          "[storage][zip][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    int arrays = 0;
    for (const char* store : {"trees/t1", "trees/t2", "dicts/d1"}) {
        const std::string path = stores_dir() + "/" + store + ".b2z";
        INFO(path);
        const auto mapping = b2nd::storage::MappedFile::open(path);
        const ZipDirectory zip = ZipDirectory::read(b2nd::storage::mapped_source(mapping));
        REQUIRE(!zip.members().empty());
        REQUIRE(zip.find("embed.b2e") != nullptr);  // python-blosc2 writes one in every store
        for (const auto& m : zip.members()) {
            INFO(m.name);
            const auto src = zip.open(m);
            CHECK(src->size() == m.size);
            // A window of the one mapping: no copy.
            const ByteSpan view = src->view()->bytes;
            CHECK(view.data() >= mapping->bytes().data());
            CHECK(view.data() + view.size() <= mapping->bytes().data() + mapping->size());
            const std::string suffix = ".b2nd";
            if (m.name.size() <= suffix.size() ||
                m.name.compare(m.name.size() - suffix.size(), suffix.size(), suffix) != 0) {
                continue;
            }
            const std::string npy = stores_dir() + "/" + std::string(store).substr(0, 5) +
                                    "/expected/" + std::string(store).substr(6) + "/" +
                                    m.name.substr(0, m.name.size() - suffix.size()) + ".npy";
            if (!std::filesystem::exists(npy)) {
                continue;  // the manifest gives some members no .npy (kinds of issue 25)
            }
            const b2nd::AnyArray a = b2nd::AnyArray::open(src);
            B2ND_REQUIRE_SAME_BYTES(a.read(), b2nd::test::read_npy_payload(npy).data);
            ++arrays;
        }
    }
    CHECK(arrays >= 6);
}

TEST_CASE("zip: a damaged archive is refused by name, never misread", "[storage][zip][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const auto good = b2nd::test::read_file(stores_dir() + "/trees/t1.b2z");
    SECTION(
        "cut anywhere, or a byte changed in its directory: an Error naming it, or the same "
        "members") {
        const ZipDirectory whole = ZipDirectory::read(in_memory(good, "t1.b2z"));
        for (std::size_t n = 0; n < good.size(); n += 7) {
            const std::vector<std::uint8_t> cut(good.begin(),
                                                good.begin() + static_cast<std::ptrdiff_t>(n));
            CHECK_THROWS_WITH(ZipDirectory::read(in_memory(cut, "cut.b2z")),
                              Catch::Contains("\"cut.b2z\""));
        }
        const std::uint64_t cd = whole.members().back().header_at;  // the directory follows
        for (std::size_t at = static_cast<std::size_t>(cd); at < good.size(); ++at) {
            std::vector<std::uint8_t> bad = good;
            bad[at] ^= 0x5a;
            try {
                const ZipDirectory z = ZipDirectory::read(in_memory(bad, "bad.b2z"));
                for (const auto& m : z.members()) {
                    (void)z.open(m);  // every window lies inside the archive, or throws
                }
            } catch (const b2nd::Error& e) {
                CHECK_THAT(e.what(), Catch::Contains("bad.b2z"));
            }
        }
    }
    SECTION("not a zip archive") {
        const auto npy = b2nd::test::read_file(stores_dir() + "/trees/expected/t1/names.npy");
        CHECK_THROWS_WITH(ZipDirectory::read(in_memory(npy, "names.npy")),
                          Catch::Contains("\"names.npy\"") &&
                              Catch::Contains("no end of central directory record"));
    }
    SECTION("a compressed member is refused, not read as stored") {
        std::vector<std::uint8_t> bad = good;
        const ZipDirectory z = ZipDirectory::read(in_memory(good, "t1.b2z"));
        // The method of the first central directory entry (offset 10 in the entry).
        const std::uint64_t cd = [&] {
            for (std::size_t k = good.size() - 22;; --k) {
                if (good[k] == 0x50 && good[k + 1] == 0x4b && good[k + 2] == 5 &&
                    good[k + 3] == 6) {
                    std::uint32_t off;
                    std::memcpy(&off, good.data() + k + 16, 4);
                    return std::uint64_t{off};
                }
            }
        }();
        bad[static_cast<std::size_t>(cd) + 10] = 8;  // deflate
        const ZipDirectory zb = ZipDirectory::read(in_memory(bad, "deflated.b2z"));
        CHECK_THROWS_AS(zb.open(zb.members().front()), b2nd::UnsupportedError);
        CHECK_THROWS_WITH(zb.open(zb.members().front()),
                          Catch::Contains("deflated.b2z") && Catch::Contains("compressed"));
        CHECK(z.members().front().method == 0);
    }
}

namespace {

void put(std::vector<std::uint8_t>& b, std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) {
        b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    }
}

/// A one-member stored archive written the ZIP64 way: 32-bit sizes and offset all 0xffffffff in
/// the central directory (the real ones in its ZIP64 extra field), and a ZIP64 end record.
std::vector<std::uint8_t> zip64_archive(const std::string& name, const std::string& data) {
    std::vector<std::uint8_t> b;
    put(b, 0x04034b50, 4);  // local header
    put(b, 45, 2);
    put(b, 0, 2);
    put(b, 0, 2);  // stored
    put(b, 0, 4);
    put(b, 0, 4);  // crc (not checked)
    put(b, data.size(), 4);
    put(b, data.size(), 4);
    put(b, name.size(), 2);
    put(b, 0, 2);
    b.insert(b.end(), name.begin(), name.end());
    b.insert(b.end(), data.begin(), data.end());
    const std::uint64_t cd = b.size();
    put(b, 0x02014b50, 4);  // central directory entry
    put(b, 45, 2);
    put(b, 45, 2);
    put(b, 0, 2);
    put(b, 0, 2);
    put(b, 0, 4);
    put(b, 0, 4);
    put(b, 0xffffffff, 4);
    put(b, 0xffffffff, 4);
    put(b, name.size(), 2);
    put(b, 4 + 24, 2);  // extra: the ZIP64 field
    put(b, 0, 2);
    put(b, 0, 2);
    put(b, 0, 2);
    put(b, 0, 4);
    put(b, 0xffffffff, 4);
    b.insert(b.end(), name.begin(), name.end());
    put(b, 0x0001, 2);
    put(b, 24, 2);
    put(b, data.size(), 8);  // size, compressed size, local header offset
    put(b, data.size(), 8);
    put(b, 0, 8);
    const std::uint64_t cd_size = b.size() - cd;
    const std::uint64_t end64 = b.size();
    put(b, 0x06064b50, 4);  // ZIP64 end record
    put(b, 44, 8);
    put(b, 45, 2);
    put(b, 45, 2);
    put(b, 0, 4);
    put(b, 0, 4);
    put(b, 1, 8);
    put(b, 1, 8);
    put(b, cd_size, 8);
    put(b, cd, 8);
    put(b, 0x07064b50, 4);  // its locator
    put(b, 0, 4);
    put(b, end64, 8);
    put(b, 1, 4);
    put(b, 0x06054b50, 4);  // the end record, every field pointing to ZIP64
    put(b, 0xffff, 2);
    put(b, 0xffff, 2);
    put(b, 0xffff, 2);
    put(b, 0xffff, 2);
    put(b, 0xffffffff, 4);
    put(b, 0xffffffff, 4);
    put(b, 0, 2);
    return b;
}

}  // namespace

TEST_CASE("zip: ZIP64 end records and extra fields are read", "[storage][zip]") {
    const auto bytes = zip64_archive("group/m.b2nd", "hello, zip64");
    const ZipDirectory z = ZipDirectory::read(in_memory(bytes, "z64.zip"));
    REQUIRE(z.members().size() == 1);
    const auto& m = z.members().front();
    CHECK(m.name == "group/m.b2nd");
    CHECK(m.size == 12);
    CHECK(m.header_at == 0);
    const auto src = z.open(m);
    const ByteSpan v = src->read(0, src->size()).bytes;
    CHECK(std::string(reinterpret_cast<const char*>(v.data()), v.size()) == "hello, zip64");
    // The locator pointing elsewhere is refused by name.
    std::vector<std::uint8_t> bad = bytes;
    bad[bad.size() - 22 - 20 + 8] ^= 0x01;
    CHECK_THROWS_WITH(ZipDirectory::read(in_memory(bad, "z64bad.zip")),
                      Catch::Contains("\"z64bad.zip\"") && Catch::Contains("ZIP64"));
}

TEST_CASE("zip: archives ZipWriter writes read back, plain and ZIP64, and pass Python's zipfile",
          "[storage][zip]") {
    b2nd::test::TempDir tmp;
    std::vector<std::uint8_t> big(300000), small{1, 2, 3};
    for (std::size_t i = 0; i < big.size(); ++i) {
        big[i] = static_cast<std::uint8_t>(i * 31 + 7);
    }
    for (const bool zip64 : {false, true}) {
        INFO((zip64 ? "ZIP64" : "plain"));
        const std::string path = tmp / (zip64 ? "z64.zip" : "z.zip");
        {
            b2nd::storage::ZipWriter w(path, zip64);
            w.add("dir/big.bin", *in_memory(big, "big"));
            w.add("small.bin", *in_memory(small, "small"));
            w.add("empty.bin", *in_memory({}, "empty"));
            CHECK_THROWS_AS(w.add("small.bin", *in_memory(small, "again")), b2nd::UsageError);
            w.finish();
        }
        const auto zip =
            ZipDirectory::read(b2nd::storage::mapped_source(b2nd::storage::MappedFile::open(path)));
        REQUIRE(zip.members().size() == 3);
        CHECK(zip.members()[0].name == "dir/big.bin");
        const auto read_member = [&](const char* name) {
            const auto src = zip.open(*zip.find(name));
            const ByteSpan v = src->view()->bytes;
            return std::vector<std::uint8_t>(v.begin(), v.end());
        };
        CHECK(read_member("dir/big.bin") == big);
        CHECK(read_member("small.bin") == small);
        CHECK(read_member("empty.bin").empty());
        if (std::system("python3 -c 'import zipfile' >/dev/null 2>&1") == 0) {
            const std::string cmd =
                "python3 -c \"import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); "
                "assert z.testzip() is None; assert len(z.read('dir/big.bin')) == 300000; "
                "assert z.read('small.bin') == bytes([1,2,3])\" '" +
                path + "'";
            CHECK(std::system(cmd.c_str()) == 0);
        }
    }
}

TEST_CASE("zip: names that are not ASCII are marked UTF-8, as Python's zipfile marks them",
          "[storage][zip]") {
    b2nd::test::TempDir tmp;
    const std::string path = tmp / "u.zip";
    const std::string name =
        "donn\xc3\xa9"
        "es/temp\xc3\xa9rature.b2nd";  // données/température
    {
        b2nd::storage::ZipWriter w(path);
        w.add(name, *in_memory({1, 2, 3}, "one"));
        w.add("plain.bin", *in_memory({4}, "two"));
        w.finish();
    }
    const auto zip =
        ZipDirectory::read(b2nd::storage::mapped_source(b2nd::storage::MappedFile::open(path)));
    REQUIRE(zip.find(name) != nullptr);
    CHECK((zip.find(name)->flags & 0x800) != 0);
    CHECK((zip.find("plain.bin")->flags & 0x800) == 0);
    // The local header says the same (bytes 6-7 of the first member's header).
    const auto bytes = b2nd::test::read_file(path);
    CHECK((bytes[6] | (bytes[7] << 8)) == 0x800);
    if (std::system("python3 -c 'import zipfile' >/dev/null 2>&1") == 0) {
        const std::string cmd =
            "python3 -c \"import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); "
            "assert z.namelist()[0] == 'donn\\u00e9es/temp\\u00e9rature.b2nd', z.namelist()\" '" +
            path + "'";
        CHECK(std::system(cmd.c_str()) == 0);
    }
}

TEST_CASE("zip: an archive with two members of one name is refused, naming it", "[storage][zip]") {
    b2nd::test::TempDir tmp;
    const std::string path = tmp / "twice.b2z";
    {
        b2nd::storage::ZipWriter w(path);
        w.add("embed.b2e", *in_memory({1, 2, 3}, "first"));
        w.add("embed.b2X", *in_memory({4, 5, 6}, "second"));
        w.finish();
    }
    // Renamed in place (local header and central directory): two members 'embed.b2e'.
    auto bytes = b2nd::test::read_file(path);
    const std::string from = "embed.b2X";
    for (std::size_t i = 0; i + from.size() <= bytes.size(); ++i) {
        if (std::memcmp(bytes.data() + i, from.data(), from.size()) == 0) {
            bytes[i + from.size() - 1] = 'e';
        }
    }
    {
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        f.write(reinterpret_cast<const char*>(bytes.data()),
                static_cast<std::streamsize>(bytes.size()));
    }
    CHECK_THROWS_WITH(
        ZipDirectory::read(b2nd::storage::mapped_source(b2nd::storage::MappedFile::open(path))),
        Catch::Matchers::Contains("two members are named 'embed.b2e'") &&
            Catch::Matchers::Contains("twice.b2z"));
    CHECK_THROWS_AS(b2nd::Store::open(path), b2nd::FormatError);
}
