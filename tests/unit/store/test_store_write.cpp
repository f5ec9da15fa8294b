// Writing python-blosc2 stores (store.hpp, StoreWriter): what we write reads back with our
// reader, keeps python's layout (python's threshold rule, paths and suffixes, uncompressed
// members with embed.b2e last), and passes Python's own zipfile checks when python3 is found.
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/storage/zip.hpp>
#include <b2nd/store.hpp>

#include "support/files.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using b2nd::LeafStorage;
using b2nd::Value;

namespace {

b2nd::AnyArray iota(std::int64_t n, double start = 0) {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = start + static_cast<double>(i);
    }
    return b2nd::AnyArray::create_in_memory_from(
        b2nd::dtype_of<double>(), {n},
        {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * sizeof(double)});
}

std::vector<double> values(const b2nd::AnyArray& a) {
    const auto b = a.read();
    std::vector<double> v(b.size() / sizeof(double));
    std::memcpy(v.data(), b.data(), b.size());
    return v;
}

/// Python's zipfile on `path`: every member stored, CRCs right (testzip), embed.b2e last.
/// Empty when python3 is absent; else "ok" or what is wrong.
std::string python_zip_check(const std::string& path) {
    if (std::system("python3 -c 'import zipfile' >/dev/null 2>&1") != 0) {
        return "";
    }
    const std::string script =
        "import sys, zipfile\n"
        "z = zipfile.ZipFile(sys.argv[1])\n"
        "names = [i.filename for i in z.infolist()]\n"
        "assert names[-1] == 'embed.b2e', names\n"
        "assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())\n"
        "assert z.testzip() is None\n"
        "sizes = [i.file_size for i in z.infolist()[:-1]]\n"
        "assert sizes == sorted(sizes, reverse=True), sizes\n"
        "print('ok')\n";
    b2nd::test::TempDir tmp;
    std::ofstream(tmp / "check.py") << script;
    const std::string out = tmp / "out.txt";
    const int rc =
        std::system(("python3 " + tmp / "check.py" + " '" + path + "' >" + out + " 2>&1").c_str());
    std::ifstream in(out);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    return rc == 0 ? "ok" : text;
}

}  // namespace

TEST_CASE("store write: a new tree in both forms reads back, laid out as python lays it out",
          "[storage][store][write]") {
    for (const char* name : {"t.b2z", "t.b2d"}) {
        INFO(name);
        b2nd::test::TempDir tmp;
        const std::string path = tmp / name;
        b2nd::StoreOptions o;
        o.threshold = 1000;  // 8,000 bytes: a file of its own; 80 bytes: embedded
        auto w = b2nd::StoreWriter::create(path, o);
        w.put("/big", iota(1000));
        w.put("/g/small", iota(10, 5));
        w.put("/g/sub/deep", iota(200, -3));
        w.set_vlmeta("/", "title", Value("made here"));
        w.set_vlmeta("/g", "units", Value::tuple({1, "m"}));
        w.commit();

        const b2nd::Store s = b2nd::Store::open(path);
        CHECK(s.kind() == b2nd::ObjectKind::treestore);
        std::set<std::string> keys;
        for (const auto& e : s.entries()) {
            keys.insert(e.key);
        }
        CHECK(keys == std::set<std::string>{"/big", "/g", "/g/small", "/g/sub", "/g/sub/deep"});
        const bool zip = std::string(name) == "t.b2z";
        CHECK(s.find("/big")->storage == (zip ? LeafStorage::member : LeafStorage::external));
        CHECK(s.find("/big")->file == "big.b2nd");
        CHECK(s.find("/g/small")->storage == LeafStorage::embedded);
        CHECK(s.find("/g/sub/deep")->storage ==
              (zip ? LeafStorage::member : LeafStorage::external));
        CHECK(values(s.open_array("/big")) == values(iota(1000)));
        CHECK(values(s.open_array("/g/small")) == values(iota(10, 5)));
        CHECK(values(s.open_array("/g/sub/deep")) == values(iota(200, -3)));
        const auto root = s.vlmeta("/");
        REQUIRE(root.size() == 1);
        CHECK(root[0].second == Value("made here"));
        const auto g = s.vlmeta("/g");
        REQUIRE(g.size() == 1);
        CHECK(g[0].second.tuple_items() == Value::Array{1, "m"});
        if (zip) {
            const std::string py = python_zip_check(path);
            CHECK((py.empty() || py == "ok"));
            if (!py.empty()) {
                INFO(py);
            }
        } else {
            CHECK(fs::exists(tmp / "t.b2d/big.b2nd"));
            CHECK(fs::exists(tmp / "t.b2d/g/sub/deep.b2nd"));
            CHECK(fs::exists(tmp / "t.b2d/embed.b2e"));
            // No temporary names left behind.
            for (const auto& f : fs::recursive_directory_iterator(tmp / "t.b2d")) {
                CHECK(f.path().filename().string().find(".b2nd-tmp-") == std::string::npos);
            }
        }
    }
}

TEST_CASE("store write: python's stores change in place: replace, remove, attributes",
          "[storage][store][write][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string trees = b2nd::test::corpus_dir() + "/stores/trees";
    for (const char* name : {"t2.b2z", "t2.b2d"}) {
        INFO(name);
        b2nd::test::TempDir tmp;
        const std::string path = tmp / name;
        b2nd::test::copy_writable(trees + "/" + name, path);
        const b2nd::Store before = b2nd::Store::open(path);
        const auto big = values(before.open_array("/big"));
        const auto random = values(before.open_array("/emb/random"));
        {
            auto w = b2nd::StoreWriter::open(path, 16384);
            w.put("/emb/a", iota(3, 100));  // replaces an embedded value
            CHECK(w.remove("/ext"));        // a group and its leaf
            CHECK(!w.remove("/nope"));
            w.put("/new/far", iota(4000));  // 32,000 bytes: a file of its own
            w.set_vlmeta("/emb", "note", Value("changed"));
            CHECK(w.erase_vlmeta("/", "pair"));
            w.commit();
        }
        const b2nd::Store s = b2nd::Store::open(path);
        CHECK(s.find("/ext") == nullptr);
        CHECK(s.find("/ext/x") == nullptr);
        CHECK(values(s.open_array("/emb/a")) == values(iota(3, 100)));
        CHECK(values(s.open_array("/new/far")) == values(iota(4000)));
        CHECK(s.find("/new/far")->file == "new/far.b2nd");
        // What was not touched reads as before.
        CHECK(values(s.open_array("/big")) == big);
        CHECK(values(s.open_array("/emb/random")) == random);
        const auto emb = s.vlmeta("/emb");
        REQUIRE(emb.size() == 1);
        CHECK(emb[0].second == Value("changed"));
        for (const auto& [n, v] : s.vlmeta("/")) {
            CHECK(n != "pair");
        }
        if (std::string(name) == "t2.b2d") {
            CHECK(!fs::exists(tmp / "t2.b2d/ext/x.b2nd"));  // the removed leaf's file is gone
        } else {
            const std::string py = python_zip_check(path);
            CHECK((py.empty() || py == "ok"));
        }
    }
}

TEST_CASE("store write: bad keys and kinds are refused by name", "[storage][store][write]") {
    b2nd::test::TempDir tmp;
    auto w = b2nd::StoreWriter::create(tmp / "s.b2z");
    w.put("/a/b", iota(3));
    CHECK_THROWS_WITH(w.put("/a", iota(3)), Catch::Contains("group"));
    CHECK_THROWS_WITH(w.put("/a/b/c", iota(3)), Catch::Contains("leaf"));
    CHECK_THROWS_AS(w.put("/x//y", iota(3)), b2nd::UsageError);
    CHECK_THROWS_AS(w.put("/x/", iota(3)), b2nd::UsageError);
    CHECK_THROWS_AS(w.put("/g/__vlmeta__", iota(3)), b2nd::UsageError);
    CHECK_THROWS_AS(w.set_vlmeta("/nope", "x", Value(1)), b2nd::UsageError);
    CHECK_THROWS_AS(b2nd::StoreWriter::create(tmp / "s.b2z"), b2nd::UsageError);  // exists
    b2nd::StoreOptions dict;
    dict.kind = b2nd::ObjectKind::dictstore;
    auto d = b2nd::StoreWriter::create(tmp / "d.b2d", dict);
    CHECK_THROWS_AS(d.set_vlmeta("/g", "x", Value(1)), b2nd::UsageError);
    d.set_vlmeta("/", "x", Value(1));
    CHECK(d.store().vlmeta("/").at(0).second == Value(1));
    CHECK(d.store().kind() == b2nd::ObjectKind::dictstore);
}

TEST_CASE("store: a damaged embed map is refused by name, never misread", "[storage][store]") {
    b2nd::test::TempDir tmp;
    const std::string path = tmp / "d.b2d";
    b2nd::StoreOptions o;
    o.threshold = std::nullopt;  // everything embedded
    auto w = b2nd::StoreWriter::create(path, o);
    w.put("/a", iota(50));
    w.put("/b", iota(7));
    const auto set_map = [&](const Value& map) {
        b2nd::storage::OpenOptions fo;
        fo.writable = true;
        b2nd::storage::Frame f = b2nd::storage::Frame::open(path + "/embed.b2e", fo);
        const auto bytes = map.to_msgpack();
        f.set_vlmeta("estore_metadata", {bytes.data(), bytes.size()});
    };
    const auto entry = [](std::int64_t off, std::int64_t len) {
        return Value::map({{"offset", off}, {"length", len}});
    };
    const Value b_entry = [&] {  // /b's entry as written
        const auto stored =
            *b2nd::storage::Frame::open(path + "/embed.b2e").vlmeta("estore_metadata");
        return *Value::from_msgpack({stored.data(), stored.size()}, "map")
                    .find("embed_map")
                    ->find("/b");
    }();
    // A window that is not a frame (inside another value's bytes): the store opens, lists it
    // as "unknown", and refuses it by name; the other values stay readable.
    set_map(Value::map({{"embed_map", Value::map({{"/x", entry(3, 40)}, {"/b", b_entry}})},
                        {"current_offset", 400}}));
    {
        const b2nd::Store s = b2nd::Store::open(path);
        REQUIRE(s.find("/x") != nullptr);
        CHECK(s.find("/x")->kind == "unknown");
        CHECK_THROWS_WITH(s.describe("/x"), Catch::Contains("/x"));
        CHECK_THROWS_AS(s.open_array("/x"), b2nd::FormatError);
        CHECK(s.open_array("/b").read() == iota(7).read());
    }
    // One past the end, one with a negative offset, and a map that is not one.
    set_map(Value::map(
        {{"embed_map", Value::map({{"/y", entry(0, 1 << 30)}})}, {"current_offset", 400}}));
    CHECK_THROWS_WITH(b2nd::Store::open(path), Catch::Contains("/y") && Catch::Contains("beyond"));
    set_map(
        Value::map({{"embed_map", Value::map({{"/z", entry(-5, 10)}})}, {"current_offset", 1}}));
    CHECK_THROWS_AS(b2nd::Store::open(path), b2nd::FormatError);
    set_map(Value::map({{"embed_map", Value(3)}, {"current_offset", 1}}));
    CHECK_THROWS_WITH(b2nd::Store::open(path), Catch::Contains("embed map"));
}

TEST_CASE("store write: an embedded value larger than 16 MiB reads back, decoded as read",
          "[storage][store]") {
    b2nd::test::TempDir tmp;
    const std::string path = tmp / "big.b2z";
    std::vector<std::uint64_t> v(3 << 20);  // 24 MiB that do not compress
    std::uint64_t x = 88172645463325252ULL;
    for (auto& e : v) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        e = x;
    }
    b2nd::CreateOptions o;
    o.chunk_shape = {1 << 18};
    o.durable = false;
    (void)b2nd::NDArray<std::uint64_t>::create_from(tmp / "v.b2nd",
                                                    {static_cast<std::int64_t>(v.size())}, v, o);
    {
        b2nd::StoreOptions so;
        so.threshold = std::nullopt;  // every value embedded in embed.b2e
        auto w = b2nd::StoreWriter::create(path, so);
        w.put("/v", b2nd::NDArray<std::uint64_t>::open(tmp / "v.b2nd"));
        w.commit();
    }
    const b2nd::Store s = b2nd::Store::open(path);
    REQUIRE(s.find("/v") != nullptr);
    CHECK(s.find("/v")->storage == LeafStorage::embedded);
    const auto a = s.open<std::uint64_t>("/v");
    CHECK(a.read({b2nd::Slice(1000, 1010)}) ==
          std::vector<std::uint64_t>(v.begin() + 1000, v.begin() + 1010));
    CHECK(a.read() == v);
}
