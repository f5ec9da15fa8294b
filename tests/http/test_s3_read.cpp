// Arrays and stores read from an S3 store: s3rver on 127.0.0.1 (started here), objects put by
// s3cmd. Every corpus array read by s3:// URL equals its local read, at the open cost of HTTP;
// leaves of a .b2z store open in place; bad credentials and missing objects are errors naming
// the s3:// URL and the status, never the secret.
#include <filesystem>
#include <random>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/storage/s3.hpp>
#include <b2nd/store.hpp>

#include "support/cli_tool.hpp"
#include "support/files.hpp"
#include "support/json.hpp"
#include "support/remote_reads.hpp"
#include "support/s3_server.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using b2nd::test::Json;
using b2nd::test::S3Store;

namespace {

/// An S3 store holding `names` of the corpus (all its cases when empty) under corpus/, or null
/// with `why` set.
std::unique_ptr<S3Store> store_with(std::string& why, std::vector<std::string> names) {
    const std::string dir = b2nd::test::corpus_dir();
    if (dir.empty()) {
        why = "corpus not found at " B2ND_CORPUS_DIR;
        return nullptr;
    }
    auto s = S3Store::start(why);
    if (!s) {
        return nullptr;
    }
    if (names.empty()) {
        const Json m = b2nd::test::load_json_file(dir + "/manifest.json");
        for (const Json& c : m["cases"].as_array()) {
            names.push_back(c["file"].as_string());
        }
    }
    std::vector<std::string> paths;
    for (const std::string& n : names) {
        paths.push_back(dir + "/" + n);
    }
    REQUIRE(s->put(paths, "corpus/"));
    return s;
}

std::unique_ptr<S3Store> store_with_corpus(std::string& why) {
    return store_with(why, {});
}

std::unique_ptr<S3Store> store_with_stores(std::string& why) {
    return store_with(why, {"stores", "append_general_f4.b2nd"});
}

std::unique_ptr<S3Store> store_with_one(std::string& why) {
    return store_with(why, {"append_general_f4.b2nd"});
}

std::unique_ptr<S3Store> store_with_medium(std::string& why) {
    return store_with(why, {"medium_f4_3d.b2nd"});
}

b2nd::OpenOptions options_of(const S3Store& s) {
    b2nd::OpenOptions o;
    o.s3 = s.options();
    return o;
}

}  // namespace

TEST_CASE("s3: corpus arrays read from S3 equal their local reads", "[http][s3]") {
    B2ND_HTTP_FIXTURE(s3, store_with_corpus);
    const std::string dir = b2nd::test::corpus_dir();
    const b2nd::OpenOptions o = options_of(s3);
    std::mt19937 rng(39);
    const Json m = b2nd::test::load_json_file(dir + "/manifest.json");
    int contiguous = 0, sparse = 0;
    for (const Json& c : m["cases"].as_array()) {
        const std::string file = c["file"].as_string();
        const std::string url = s3.url("corpus/" + file);
        INFO(url);
        b2nd::AnyArray local;
        try {
            local = b2nd::AnyArray::open(dir + "/" + file);
        } catch (const b2nd::Error&) {
            CHECK_THROWS_AS(b2nd::AnyArray::open(url, o), b2nd::Error);
            continue;
        }
        const b2nd::AnyArray remote = b2nd::AnyArray::open(url, o);
        CHECK(remote.frame().remote());
        CHECK(remote.frame().name() == url);  // messages name the s3:// URL
        if (fs::is_directory(dir + "/" + file)) {
            ++sparse;
        } else {
            ++contiguous;
            CHECK(remote.frame().transfers().requests <= 2);  // as over HTTP
        }
        b2nd::test::same_reads(local, remote, rng);
    }
    CHECK(contiguous > 80);
    CHECK(sparse > 5);
}

TEST_CASE("s3: leaves of .b2z and .b2d stores open in place, and typed opens take s3:// URLs",
          "[http][s3]") {
    B2ND_HTTP_FIXTURE(s3, store_with_stores);
    const std::string dir = b2nd::test::corpus_dir() + "/stores";
    int leaves = 0, listed = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        // A .b2z is one object; a .b2d a prefix of objects, found by a listing.
        const bool zip = e.path().extension() == ".b2z";
        if (!zip && !(e.path().extension() == ".b2d" && e.is_directory())) {
            continue;
        }
        const std::string rel = "corpus/stores/" + fs::relative(e.path(), dir).string();
        INFO(rel);
        b2nd::Store local;
        try {
            local = b2nd::Store::open(e.path().string());
        } catch (const b2nd::Error&) {
            continue;  // a damaged store of the corpus: its refusal is tested locally
        }
        const b2nd::Store remote = b2nd::Store::open(s3.url(rel), options_of(s3));
        REQUIRE(remote.entries().size() == local.entries().size());
        for (const b2nd::StoreEntry& k : local.entries()) {
            if (k.storage != b2nd::LeafStorage::member &&
                k.storage != b2nd::LeafStorage::external) {
                continue;
            }
            b2nd::AnyArray a;
            try {
                a = local.open_array(k.key);
            } catch (const b2nd::Error&) {
                continue;  // kinds that are no array (refused the same way remotely)
            }
            const b2nd::AnyArray b = remote.open_array(k.key);  // the store's options
            CHECK(b.frame().remote());
            CHECK(b.read() == a.read());
            ++leaves;
            listed += zip ? 0 : 1;
        }
    }
    CHECK(leaves > 0);
    CHECK(listed > 0);
    const auto t = b2nd::open<float>(s3.url("corpus/append_general_f4.b2nd"), options_of(s3));
    const auto l = b2nd::open<float>(b2nd::test::corpus_dir() + "/append_general_f4.b2nd");
    CHECK(t.any().read() == l.any().read());
}

TEST_CASE("s3: a listed .b2d packs into a .b2z of the remote's leaves; hostile keys are refused",
          "[http][s3]") {
    B2ND_HTTP_FIXTURE(s3, store_with_stores);
    const std::string dir = b2nd::test::corpus_dir() + "/stores";
    b2nd::test::TempDir tmp;
    int packed = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        if (!(e.path().extension() == ".b2d" && e.is_directory())) {
            continue;
        }
        b2nd::Store local;
        try {
            local = b2nd::Store::open(e.path().string());
        } catch (const b2nd::Error&) {
            continue;  // a damaged store of the corpus
        }
        const std::string rel = "corpus/stores/" + fs::relative(e.path(), dir).string();
        INFO(rel);
        const std::string out = tmp / ("packed" + std::to_string(packed) + ".b2z");
        b2nd::pack_store(s3.url(rel), out, false, s3.options());
        const b2nd::Store back = b2nd::Store::open(out);
        REQUIRE(back.entries().size() == local.entries().size());
        for (const b2nd::StoreEntry& k : local.entries()) {
            if (k.storage != b2nd::LeafStorage::external) {
                continue;
            }
            b2nd::OpenOptions raw;
            raw.raw_objects = true;
            std::vector<std::uint8_t> want;
            try {
                want = local.open_array(k.key, raw).read();
            } catch (const b2nd::Error&) {
                continue;  // no array (refused the same way from the packed store)
            }
            CHECK(back.open_array(k.key, raw).read() == want);
        }
        ++packed;
    }
    CHECK(packed > 0);
    // A server whose listing names a key climbing out of the store, or an absolute one (once
    // joined to a local path: a local file, here a real one): refused by name, nothing read.
    const std::string secret = tmp / "secret.b2nd";
    std::vector<float> v{1, 2, 3};
    (void)b2nd::NDArray<float>::create_from(secret, {3}, v.data(), v.size());
    const std::string store = "corpus/stores/trees/t1.b2d";
    for (const std::string& key : {store + "/../outside.b2nd", store + "/" + secret}) {
        INFO(key);
        REQUIRE(s3.faults("list_key=" + key));
        CHECK_THROWS_WITH(b2nd::pack_store(s3.url(store), tmp / "h.b2z", false, s3.options()),
                          Catch::Contains("t1.b2d") &&
                              Catch::Contains(key.substr(store.size() + 1)) &&
                              Catch::Contains("no file of a store"));
        CHECK(!fs::exists(tmp / "h.b2z"));
    }
    // A key outside the prefix listed.
    REQUIRE(s3.faults("list_key=elsewhere/x.b2nd"));
    CHECK_THROWS_WITH(b2nd::Store::open(s3.url(store), options_of(s3)),
                      Catch::Contains("elsewhere/x.b2nd") && Catch::Contains("not under it"));
    // A listing that never ends (two continuation tokens in turn): refused at the second.
    REQUIRE(s3.faults("list_loop=1"));
    CHECK_THROWS_WITH(b2nd::Store::open(s3.url(store), options_of(s3)),
                      Catch::Contains("does not end") && Catch::Contains("continuation token"));
    REQUIRE(s3.faults(""));
    CHECK(b2nd::Store::open(s3.url(store), options_of(s3)).entries().size() > 0);
}

TEST_CASE("s3: bad credentials and missing objects are errors naming the URL, never the secret",
          "[http][s3]") {
    B2ND_HTTP_FIXTURE(s3, store_with_one);
    const std::string url = s3.url("corpus/append_general_f4.b2nd");
    const std::string secret = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY";
    b2nd::OpenOptions o = options_of(s3);
    o.s3.access_key_id = "AKIAIOSFODNN7EXAMPLE";  // not an account of this store
    o.s3.secret_access_key = secret;
    try {
        (void)b2nd::AnyArray::open(url, o);
        FAIL("opened with credentials the store does not know");
    } catch (const b2nd::RemoteError& e) {
        const std::string what = e.what();
        CHECK(e.status() == 403);
        CHECK_THAT(what, Catch::Contains(url) && Catch::Contains("403"));
        CHECK(what.find(secret) == std::string::npos);
    }
    // The store's key with a wrong secret: the signature is wrong (403), and the message
    // still never holds the secret.
    b2nd::OpenOptions wrong = options_of(s3);
    wrong.s3.secret_access_key = secret;
    try {
        (void)b2nd::AnyArray::open(url, wrong);
        FAIL("opened with a wrong secret");
    } catch (const b2nd::RemoteError& e) {
        CHECK(e.status() == 403);
        CHECK_THAT(e.what(), Catch::Contains(url));
        CHECK(std::string(e.what()).find(secret) == std::string::npos);
    }
    // A session token is sent (and signed) when there is one.
    b2nd::OpenOptions token = options_of(s3);
    token.s3.session_token = "FQoGZXIvYXdzEXAMPLETOKEN";
    CHECK(b2nd::AnyArray::open(url, token).read() ==
          b2nd::AnyArray::open(b2nd::test::corpus_dir() + "/append_general_f4.b2nd").read());
    // No credentials at all, and signing asked for: refused before any request.
    b2nd::OpenOptions none = options_of(s3);
    none.s3.access_key_id.clear();
    none.s3.secret_access_key.clear();
    CHECK_THROWS_WITH(b2nd::AnyArray::open(url, none),
                      Catch::Contains(url) && Catch::Contains("no S3 credentials"));
    // A missing object: its 404, by its s3:// URL.
    try {
        (void)b2nd::AnyArray::open(s3.url("corpus/none.b2nd"), options_of(s3));
        FAIL("a missing object opened");
    } catch (const b2nd::RemoteError& e) {
        CHECK(e.status() == 404);
        CHECK_THAT(e.what(), Catch::Contains("none.b2nd"));
    }
    // A .b2d store (a prefix of objects) that has no objects: refused by name.
    CHECK_THROWS_WITH(
        b2nd::Store::open(s3.url("stores/d.b2d"), options_of(s3)),
        Catch::Contains("s3://bkt/stores/d.b2d") && Catch::Contains("no objects under it"));
    // Writing is refused by name (objects are rewritten whole, not updated).
    b2nd::OpenOptions w = options_of(s3);
    w.writable = true;
    CHECK_THROWS_WITH(b2nd::AnyArray::open(url, w), Catch::Contains("read-only"));
}

TEST_CASE("s3: the persistent cache works as over HTTP: a second handle reads with no request",
          "[http][s3]") {
    B2ND_HTTP_FIXTURE(s3, store_with_medium);
    b2nd::test::TempDir tmp;
    const std::string url = s3.url("corpus/medium_f4_3d.b2nd");
    const auto local = b2nd::AnyArray::open(b2nd::test::corpus_dir() + "/medium_f4_3d.b2nd").read();
    b2nd::OpenOptions o = options_of(s3);
    o.http_cache = tmp / "cache.b2nd";
    o.http.head_bytes = 1024;  // the chunks are fetched, not part of the open
    {
        const auto a = b2nd::AnyArray::open(url, o);
        const std::uint64_t before = a.frame().transfers().requests;
        CHECK(a.read() == local);
        CHECK(a.frame().transfers().requests > before);
    }
    REQUIRE(std::filesystem::exists(tmp / "cache.b2nd"));
    const auto b = b2nd::AnyArray::open(url, o);
    const std::uint64_t before = b.frame().transfers().requests;
    CHECK(b.read() == local);
    CHECK(b.frame().transfers().requests == before);  // every block from the cache file
}

TEST_CASE("s3: a box inside one block costs at most 2 requests; a new version is read anew",
          "[http][s3]") {
    B2ND_HTTP_FIXTURE(s3, store_with_medium);
    const std::string rel = "medium_f4_3d.b2nd";  // (48, 80, 96), chunks (32, 40, 64)
    const std::string url = s3.url("corpus/" + rel);
    b2nd::OpenOptions o = options_of(s3);
    o.http.head_bytes = 1024;  // no chunk comes with the open
    const auto a = b2nd::AnyArray::open(url, o);
    const std::uint64_t opened = a.frame().transfers().requests;
    CHECK(opened <= 2);
    const auto local = b2nd::AnyArray::open(b2nd::test::corpus_dir() + "/" + rel);
    // Inside block 0 (8, 16, 32) of chunk 2.
    const b2nd::Box one_block = b2nd::Box::region({1, 41, 2}, {4, 4, 4});
    CHECK(a.read(one_block) == local.read(one_block));
    // The chunk's head, then the block: no probe of the file's end (S3's ETag is checked in
    // every answer instead).
    CHECK(a.frame().transfers().requests - opened == 2);

    // Another version of the object under the same key (a new ETag): the next read that makes
    // a request restarts on it, and gives its values.
    b2nd::test::TempDir tmp;
    const std::string v2 = tmp / rel;
    std::filesystem::copy_file(b2nd::test::corpus_dir() + "/" + rel, v2);
    std::filesystem::permissions(v2, std::filesystem::perms::owner_write,
                                 std::filesystem::perm_options::add);
    {
        b2nd::OpenOptions w;
        w.writable = true;
        auto b = b2nd::AnyArray::open(v2, w);
        const std::vector<float> ones(48 * 80 * 96, 1.0F);
        b.write(b2nd::Box::region({0, 0, 0}, {48, 80, 96}),
                {reinterpret_cast<const std::uint8_t*>(ones.data()), ones.size() * 4});
    }
    REQUIRE(s3.put({v2}, "corpus/" + rel));
    const b2nd::Box other = b2nd::Box::region({40, 70, 90}, {3, 3, 3});  // another chunk
    const auto got = a.read(other);
    CHECK(got == b2nd::AnyArray::open(v2).read(other));
    CHECK(got != local.read(other));
}

TEST_CASE("s3: keys with spaces, '#' and '?' name their own objects, not a query", "[http][s3]") {
    B2ND_HTTP_FIXTURE(s3, store_with_one);
    b2nd::test::TempDir tmp;
    const std::string src = b2nd::test::corpus_dir() + "/append_general_f4.b2nd";
    const std::string odd = "odd key #1?v=2.b2nd";
    std::filesystem::copy_file(src, tmp / odd);
    REQUIRE(s3.put({tmp / odd}, "odd/"));
    const auto a = b2nd::AnyArray::open(s3.url("odd/" + odd), options_of(s3));
    CHECK(a.read() == b2nd::AnyArray::open(src).read());
    // The key without what follows '#' is another object, which is not there.
    try {
        (void)b2nd::AnyArray::open(s3.url("odd/odd key "), options_of(s3));
        FAIL("a missing object opened");
    } catch (const b2nd::RemoteError& e) {
        CHECK(e.status() == 404);
    }
}

#ifdef B2ND_CLI_PATH
TEST_CASE("s3: the tool's read commands take s3:// URLs, configured as the AWS CLI is",
          "[http][s3]") {
    B2ND_HTTP_FIXTURE(s3, store_with_stores);
    const std::string dir = b2nd::test::corpus_dir();
    b2nd::test::TempDir tmp;
    // The environment of an AWS CLI user, and nothing else (no files).
    const std::string env = "AWS_ENDPOINT_URL='" + s3.endpoint() +
                            "' AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER "
                            "AWS_SHARED_CREDENTIALS_FILE=/nonexistent AWS_CONFIG_FILE=/nonexistent";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"append_general_f4.b2nd", ""},
        {"stores/trees/t1.b2z:/group/sub/counts", "1:11, :, 2"},
    };
    for (const auto& [rel, slice] : cases) {
        INFO(rel);
        const std::string sel = slice.empty() ? "" : " --slice \"" + slice + "\"";
        REQUIRE(b2nd::test::tool(
                    "export " + s3.url("corpus/" + rel) + " " + (tmp / "remote.npy") + sel, env) ==
                0);
        REQUIRE(b2nd::test::tool("export " + dir + "/" + rel + " " + (tmp / "local.npy") + sel) ==
                0);
        CHECK(b2nd::test::read_file(tmp / "remote.npy") ==
              b2nd::test::read_file(tmp / "local.npy"));
        std::filesystem::remove(tmp / "remote.npy");
        std::filesystem::remove(tmp / "local.npy");
        CHECK(b2nd::test::tool("info " + s3.url("corpus/" + rel), env) == 0);
    }
    CHECK(b2nd::test::tool("ls " + s3.url("corpus/stores/trees/t1.b2z"), env) == 0);
    // A wrong secret in the environment: exit 1, the URL and 403 said, the secret never.
    const std::string bad = "AWS_ENDPOINT_URL='" + s3.endpoint() +
                            "' AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=TopSecret-7Q "
                            "AWS_SHARED_CREDENTIALS_FILE=/nonexistent";
    const std::string out =
        b2nd::test::tool_text("info " + s3.url("corpus/append_general_f4.b2nd"), bad);
    CHECK_THAT(out,
               Catch::Contains("s3://bkt/corpus/append_general_f4.b2nd") && Catch::Contains("403"));
    CHECK(out.find("TopSecret") == std::string::npos);
    CHECK(b2nd::test::tool("info " + s3.url("corpus/append_general_f4.b2nd"), bad) == 1);
}
#endif

TEST_CASE("s3: the process's cache budget bounds fetched chunk images of all arrays together",
          "[http][s3]") {
    const std::vector<std::string> names = {
        "medium_f4_4d_bitshuffle.b2nd", "medium_f4_3d.b2nd",
        "codec_blosclz_clevel0.b2nd",   "ndim8.b2nd",
        "geom_nonmultiple_3d.b2nd",     "codec_zlib_clevel0.b2nd"};
    std::string why;
    const auto owner = store_with(why, names);
    if (!owner) {
        B2ND_SKIP(why);
    }
    const S3Store& s3 = *owner;
    // Images only (no decoded blocks kept): what the budget bounds is what was fetched.
    b2nd::OpenOptions o = options_of(s3);
    o.cache_bytes = 0;
    const auto read_all = [&] {
        std::vector<b2nd::AnyArray> open;
        std::uint64_t largest = 0;  // each array keeps its most recent chunk image
        for (const std::string& n : names) {
            open.push_back(b2nd::AnyArray::open(s3.url("corpus/" + n), o));
            (void)open.back().read();
            // A chunk stores at most its bytes and a header (and blocks' starts).
            largest += static_cast<std::uint64_t>(open.back().frame().header().chunksize) + 4096;
        }
        return std::make_pair(b2nd::cache_held(), largest);
    };
    const std::uint64_t base = b2nd::cache_held();
    const auto [unbounded, slack] = read_all();
    CHECK(unbounded - base > 2u << 20);  // every chunk fetched is kept without a budget
    const std::uint64_t budget = 512u << 10;
    b2nd::set_cache_budget(budget);
    const auto [bounded, slack2] = read_all();
    b2nd::set_cache_budget(0);
    CHECK(bounded - base <= budget + slack2);
    CHECK(bounded < unbounded);
    (void)slack;
}
