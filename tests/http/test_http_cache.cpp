// The persistent cache of arrays read over HTTP (OpenOptions::http_cache), from nginx on
// 127.0.0.1: what one handle fetched, the next one (in another process too) reads without a
// request; the file is python-blosc2's Proxy layout; a changed remote file empties it; its size
// stays within its bound; a file that is no cache is never replaced.
#include <filesystem>
#include <fstream>
#include <random>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/objects.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/storage/http.hpp>
#include <b2nd/store.hpp>
#include <b2nd/value.hpp>

#include "support/files.hpp"
#include "support/http_servers.hpp"
#include "support/served_array.hpp"
#include "support/temp_dir.hpp"
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using b2nd::test::ServerProcess;

namespace {

std::unique_ptr<b2nd::test::ServedArray> serve(std::string& why) {
    return b2nd::test::serve_array(why);
}

/// Requests a read made, on a fresh handle.
std::uint64_t requests_of(const b2nd::AnyArray& a, const std::function<void()>& read) {
    const std::uint64_t before = a.frame().transfers().requests;
    read();
    return a.frame().transfers().requests - before;
}

const b2nd::Box kA{{2, 3, 4}, {5, 6, 7}, {1, 1, 1}};        // blocks of chunk 0
const b2nd::Box kB{{9, 20, 20}, {6, 10, 10}, {1, 1, 1}};    // other blocks of chunk 0
const b2nd::Box kBoth{{2, 3, 4}, {13, 27, 26}, {1, 1, 1}};  // both (and more)

}  // namespace

TEST_CASE("http cache: what one handle fetched, the next reads without a request", "[http][fork]") {
    B2ND_HTTP_FIXTURE(s, serve);
    {
        const auto a = b2nd::AnyArray::open(s.url(), s.cached());
        CHECK(requests_of(a, [&] { CHECK(a.read(kA) == s.local().read(kA)); }) > 0);
    }
    {
        const auto b = b2nd::AnyArray::open(s.url(), s.cached());
        CHECK(requests_of(b, [&] { CHECK(b.read(kA) == s.local().read(kA)); }) == 0);
        // Other blocks of the same chunk: fetched, and spliced in beside the first ones.
        CHECK(requests_of(b, [&] { CHECK(b.read(kB) == s.local().read(kB)); }) > 0);
    }
    // In another process: both boxes from the cache alone.
    const pid_t pid = ::fork();
    if (pid == 0) {
        int code = 0;
        try {
            b2nd::OpenOptions o = s.cached();
            o.nthreads = 1;
            const auto c = b2nd::AnyArray::open(s.url(), o);
            const std::uint64_t before = c.frame().transfers().requests;
            const bool same = c.read(kA) == s.local().read(kA) && c.read(kB) == s.local().read(kB);
            code = !same ? 1 : (c.frame().transfers().requests != before ? 2 : 0);
        } catch (...) {
            code = 3;
        }
        ::_exit(code);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);  // 1: wrong values, 2: requests made, 3: an error
    // The union reads right, whatever mix of cache and network serves it.
    const auto d = b2nd::AnyArray::open(s.url(), s.cached());
    CHECK(d.read(kBoth) == s.local().read(kBoth));
    CHECK(d.read() == s.local().read());
    const auto e = b2nd::AnyArray::open(s.url(), s.cached());
    CHECK(requests_of(e, [&] { CHECK(e.read() == s.local().read()); }) == 0);
}

TEST_CASE("http cache: the file is a python-blosc2 Proxy cache", "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    {
        const auto a = b2nd::AnyArray::open(s.url(), s.cached());
        (void)a.read(kA);
    }
    const std::string cache = s.own / "cache.b2nd";
    const auto f = b2nd::storage::Frame::open(cache);
    REQUIRE(f.metalayer("proxy-source") != nullptr);
    REQUIRE(f.metalayer("b2nd") != nullptr);
    for (const char* name : {"proxy-fetched-blocks", "proxy-fetched-bpc", "proxy-stamp"}) {
        CHECK(f.vlmeta(name).has_value());
    }
    const auto bpc = b2nd::Value::from_msgpack(*f.vlmeta("proxy-fetched-bpc"));
    CHECK(bpc.as<std::int64_t>() == 8);  // (16/8) * (32/16) * (32/16) blocks per chunk
    // Read as python-blosc2's proxy object: the fetched blocks are there, the others refused.
    const auto p = b2nd::AnyArray::open(cache);
    CHECK(b2nd::object_kind(p.frame()) == b2nd::ObjectKind::proxy);
    CHECK(p.read(kA) == s.local().read(kA));
    CHECK_THROWS_WITH(p.read(b2nd::Box{{20, 40, 40}, {4, 4, 4}, {1, 1, 1}}),
                      Catch::Contains("never fetched"));
    // The URL is named without credentials.
    const auto src = b2nd::Value::from_msgpack(f.metalayer("proxy-source")->content);
    CHECK(src.find("url")->as<std::string>() == s.url());
}

TEST_CASE("http cache: a changed remote file empties its cache", "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    {
        const auto a = b2nd::AnyArray::open(s.url(), s.cached());
        CHECK(a.read() == s.local().read());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // a new Last-Modified second
    s.write(500);                                                  // new values, new ETag
    const auto b = b2nd::AnyArray::open(s.url(), s.cached());
    CHECK(b.read(kA) == s.local().read(kA));  // not the old values the cache held
    CHECK(b.read() == s.local().read());
    const auto stamp = b2nd::Value::from_msgpack(
        *b2nd::storage::Frame::open(s.own / "cache.b2nd").vlmeta("proxy-stamp"));
    CHECK(stamp.as<std::string>() == b.frame().stamp());
}

TEST_CASE("http cache: the cache stays within its bound", "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    const std::uint64_t bound = 40000;  // a few of the 8 chunks of about 30 KB
    const auto a = b2nd::AnyArray::open(s.url(), s.cached(bound));
    CHECK(a.read() == s.local().read());
    b2nd::OpenOptions raw;
    raw.raw_objects = true;
    const auto c = b2nd::AnyArray::open(s.own / "cache.b2nd", raw);
    std::uint64_t stored = 0;
    for (std::int64_t i = 0; i < c.frame().nchunks(); ++i) {
        stored += c.frame().chunk_unchecked(i).bytes.size();
    }
    CHECK(stored <= bound);
    CHECK(stored > 0);
    // Still right through a cache that dropped chunks.
    const auto b = b2nd::AnyArray::open(s.url(), s.cached(bound));
    CHECK(b.read() == s.local().read());
}

TEST_CASE("http cache: a file that is no cache is refused, never replaced", "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    const std::string other = s.own / "cache.b2nd";
    std::filesystem::copy_file(s.dir / "a.b2nd", other);
    const auto before = b2nd::test::read_file(other);
    CHECK_THROWS_WITH(b2nd::AnyArray::open(s.url(), s.cached()),
                      Catch::Contains("not a proxy cache"));
    CHECK(b2nd::test::read_file(other) == before);
}

TEST_CASE("http cache: a cache file is used only when this user made it for this URL",
          "[http][cache]") {
    B2ND_HTTP_FIXTURE(s, serve);
    // b.b2nd: another array of the same geometry, other values.
    {
        const auto a = s.local();
        std::vector<float> v(static_cast<std::size_t>(a.size()));
        a.read(b2nd::Box::region({0, 0, 0}, {32, 64, 64}), v.data(), v.size() * sizeof(float));
        for (float& x : v) {
            x += 500;
        }
        b2nd::CreateOptions co;
        co.chunk_shape = a.chunk_shape();
        co.block_shape = a.block_shape();
        (void)b2nd::NDArray<float>::create_from(s.dir / "b.b2nd", a.shape(), v.data(), v.size(),
                                                co);
    }
    const std::string url_b = s.server->url("b.b2nd");
    b2nd::OpenOptions for_b = s.cached();
    for_b.http_cache = s.own / "b-cache.b2nd";
    CHECK(b2nd::AnyArray::open(url_b, for_b).read() != s.local().read());
    const std::string stamp_a = b2nd::AnyArray::open(s.url()).frame().stamp();
    // Planted: B's cache under A's cache name, its stamp set to A's. Its source is B: refused.
    std::filesystem::copy_file(s.own / "b-cache.b2nd", s.own / "cache.b2nd");
    {
        b2nd::storage::OpenOptions w;
        w.writable = true;
        auto f = b2nd::storage::Frame::open(s.own / "cache.b2nd", w);
        f.set_vlmeta("proxy-stamp", b2nd::Value(stamp_a).to_msgpack());
    }
    CHECK_THROWS_WITH(b2nd::AnyArray::open(s.url(), s.cached()),
                      Catch::Contains("cache.b2nd") && Catch::Contains("another array") &&
                          Catch::Contains("b.b2nd"));
    std::filesystem::remove(s.own / "cache.b2nd");
    // A's own cache, full; then made writable by the group, then owned by another user: not
    // used (every block fetched again, the right values), and left as it is.
    {
        const auto a = b2nd::AnyArray::open(s.url(), s.cached());
        CHECK(a.read() == s.local().read());
    }
    const auto fresh = [&] {
        const auto a = b2nd::AnyArray::open(s.url(), s.cached());
        return requests_of(a, [&] { CHECK(a.read(kA) == s.local().read(kA)); });
    };
    CHECK(fresh() == 0);
    const std::string cache = s.own / "cache.b2nd";
    REQUIRE(::chmod(cache.c_str(), 0664) == 0);
    const auto before = b2nd::test::read_file(cache);
    CHECK(fresh() > 0);
    CHECK(b2nd::test::read_file(cache) == before);
    REQUIRE(::chmod(cache.c_str(), 0644) == 0);
    CHECK(fresh() == 0);
    if (::geteuid() == 0) {
        REQUIRE(::chown(cache.c_str(), 65534, 65534) == 0);
        CHECK(fresh() > 0);
        CHECK(b2nd::test::read_file(cache) == before);
    }
    // A link to a cache file is not one.
    REQUIRE(::chown(cache.c_str(), ::geteuid(), ::getegid()) == 0);
    std::filesystem::rename(cache, s.own / "real.b2nd");
    std::filesystem::create_symlink(s.own / "real.b2nd", cache);
    CHECK(fresh() > 0);
}

TEST_CASE("http cache: a leaf of a remote .b2z store uses the persistent cache", "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    {
        auto w = b2nd::StoreWriter::create(s.dir / "s.b2z");
        w.put("/group/a", s.local());
        w.commit();
    }
    const b2nd::Store store = b2nd::Store::open(s.server->url("s.b2z"));
    b2nd::OpenOptions o = s.cached();
    {
        const auto a = store.open_array("/group/a", o);
        CHECK(a.frame().remote());
        CHECK(requests_of(a, [&] { CHECK(a.read(kA) == s.local().read(kA)); }) > 0);
    }
    // A new handle on the leaf: kA's blocks come from the cache file, with no request.
    const auto b = store.open_array("/group/a", o);
    CHECK(requests_of(b, [&] { CHECK(b.read(kA) == s.local().read(kA)); }) == 0);
    CHECK(requests_of(b, [&] { CHECK(b.read(kB) == s.local().read(kB)); }) > 0);
    CHECK(std::filesystem::exists(s.own / "cache.b2nd"));
}

TEST_CASE("http cache: a remote store's options reach its leaves, one cache file per leaf",
          "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    {
        auto w = b2nd::StoreWriter::create(s.dir / "s.b2z");
        w.put("/group/a", s.local());
        w.put("/b", s.local());
        w.commit();
    }
    b2nd::OpenOptions o = s.cached();
    o.http_cache = s.own / "leaves";  // a directory, made by Store::open
    {
        const b2nd::Store store = b2nd::Store::open(s.server->url("s.b2z"), o);
        const auto a = store.open_array("/group/a");
        CHECK(requests_of(a, [&] { CHECK(a.read(kA) == s.local().read(kA)); }) > 0);
        const auto b = store.open_array("b");
        CHECK(requests_of(b, [&] { CHECK(b.read(kB) == s.local().read(kB)); }) > 0);
    }
    CHECK(b2nd::Store::leaf_cache_name("/group/a") == "group%2Fa.b2nd");
    CHECK(std::filesystem::is_regular_file(s.own / "leaves/group%2Fa.b2nd"));
    CHECK(std::filesystem::is_regular_file(s.own / "leaves/b.b2nd"));
    // Another store handle: what each leaf read comes from its own cache file, with no request;
    // what it did not read is fetched.
    const b2nd::Store again = b2nd::Store::open(s.server->url("s.b2z"), o);
    const auto a = again.open_array("/group/a");
    CHECK(requests_of(a, [&] { CHECK(a.read(kA) == s.local().read(kA)); }) == 0);
    CHECK(requests_of(a, [&] { CHECK(a.read(kB) == s.local().read(kB)); }) > 0);
    const auto b = again.open<float>("/b");
    CHECK(requests_of(b.any(), [&] { CHECK(b.any().read(kB) == s.local().read(kB)); }) == 0);
    // Options of its own: the leaf's, not the store's (no cache here).
    const auto plain = again.open_array("/b", b2nd::OpenOptions{});
    CHECK(requests_of(plain, [&] { CHECK(plain.read(kB) == s.local().read(kB)); }) > 0);
}

TEST_CASE("http cache: a store's http_cache that is not a directory is refused by name", "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    {
        auto w = b2nd::StoreWriter::create(s.dir / "s.b2z");
        w.put("/a", s.local());
        w.commit();
    }
    b2nd::OpenOptions o = s.cached();
    {
        std::ofstream f(s.own / "file");
        f << "user data";
    }
    o.http_cache = s.own / "file";
    CHECK_THROWS_WITH(b2nd::Store::open(s.server->url("s.b2z"), o),
                      Catch::Contains("file") && Catch::Contains("names a directory"));
    std::ifstream in(s.own / "file");
    std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(content == "user data");
}
