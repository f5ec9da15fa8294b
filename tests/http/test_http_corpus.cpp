// Arrays over HTTP from nginx on 127.0.0.1 (started here with a generated configuration over
// the corpus): every corpus array read by URL equals its local read, whole and by random boxes,
// for contiguous frames, sparse frames and the leaves of .b2z stores; what a read fetches stays
// within what the issue allows (2 requests to open, 2 batches per read, touched blocks only).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/storage/http.hpp>
#include <b2nd/store.hpp>

#include "support/cli_tool.hpp"
#include "support/files.hpp"
#include "support/http_servers.hpp"
#include "support/json.hpp"
#include "support/remote_reads.hpp"
#include "support/temp_dir.hpp"
#include <sys/wait.h>

namespace fs = std::filesystem;
using b2nd::test::Json;
using b2nd::test::same_reads;
using b2nd::test::ServerProcess;

namespace {

/// nginx over `root` (the corpus when empty), or null with `why` set: then the test skips.
std::unique_ptr<ServerProcess> serve(std::string& why, std::string root = {}) {
    if (root.empty()) {
        root = b2nd::test::corpus_dir();
        if (root.empty()) {
            why = "corpus not found at " B2ND_CORPUS_DIR;
            return nullptr;
        }
    }
    return b2nd::test::nginx_or_why(root, why);
}

}  // namespace

TEST_CASE("http: corpus arrays read over HTTP equal their local reads", "[http]") {
    std::string why;
    const auto nginx = serve(why);
    if (!nginx) {
        B2ND_SKIP(why);
    }
    const std::string dir = b2nd::test::corpus_dir();
    std::mt19937 rng(28);
    const Json m = b2nd::test::load_json_file(dir + "/manifest.json");
    int contiguous = 0, sparse = 0;
    for (const Json& c : m["cases"].as_array()) {
        const std::string file = c["file"].as_string();
        INFO(file);
        b2nd::AnyArray local;
        try {
            local = b2nd::AnyArray::open(dir + "/" + file);
        } catch (const b2nd::Error&) {
            // Files the library refuses locally are refused remotely too (same message kind).
            CHECK_THROWS_AS(b2nd::AnyArray::open(nginx->url(file)), b2nd::Error);
            continue;
        }
        const b2nd::AnyArray remote = b2nd::AnyArray::open(nginx->url(file));
        CHECK(remote.frame().remote());
        if (fs::is_directory(dir + "/" + file)) {
            ++sparse;
        } else {
            ++contiguous;
            // Two requests to open (the head, then index and trailer), or one for a file that
            // fits in the head.
            CHECK(remote.frame().transfers().requests <= 2);
        }
        same_reads(local, remote, rng);
    }
    CHECK(contiguous > 80);
    CHECK(sparse > 5);
}

TEST_CASE("http: a sparse frame opens by its directory URL, with or without the slash", "[http]") {
    std::string why;
    const auto nginx = serve(why);
    if (!nginx) {
        B2ND_SKIP(why);
    }
    const std::string dir = b2nd::test::corpus_dir();
    const std::string name = "append_general_i8_sframe.b2frame";
    REQUIRE(fs::is_directory(dir + "/" + name));
    const auto local = b2nd::AnyArray::open(dir + "/" + name);
    for (const std::string& url : {nginx->url(name), nginx->url(name + "/")}) {
        const auto remote = b2nd::AnyArray::open(url);
        CHECK(remote.frame().sparse());
        CHECK(remote.read() == local.read());
    }
}

TEST_CASE("http: a remote frame is read-only as a whole: every write is refused before any step",
          "[http]") {
    std::string why;
    const auto nginx = serve(why);
    if (!nginx) {
        B2ND_SKIP(why);
    }
    const std::string dir = b2nd::test::corpus_dir();
    for (const std::string name : {"append_general_i8_sframe.b2frame", "append_general_f4.b2nd"}) {
        INFO(name);
        REQUIRE(fs::exists(dir + "/" + name));
        b2nd::storage::Frame f = b2nd::storage::Frame::open_url(nginx->url(name));
        REQUIRE(f.remote());
        const std::int64_t n = f.nchunks();
        const b2nd::storage::StoredChunk c0 = f.chunk(0);
        const std::vector<std::uint8_t> chunk(c0.bytes.begin(), c0.bytes.end());
        // (Matchers combined with && keep references: the parts must outlive the combination.)
        const auto fetched = Catch::Contains("fetched");
        const auto read_only = Catch::Contains("read-only");
        CHECK_THROWS_AS(f.apply(f.keep_all()), b2nd::UsageError);
        CHECK_THROWS_WITH(f.apply(f.keep_all()), fetched && read_only);
        CHECK_THROWS_WITH(f.append_chunk({chunk.data(), chunk.size()}), fetched && read_only);
        CHECK_THROWS_WITH(f.stage({chunk.data(), chunk.size()}), fetched && read_only);
        const std::uint8_t v = 1;
        CHECK_THROWS_WITH(f.set_vlmeta("x", {&v, 1}), fetched && read_only);
        CHECK_THROWS_WITH(f.sync(), fetched && read_only);
        CHECK_THROWS_WITH(f.compact(), fetched && read_only);
        CHECK_THROWS_WITH(f.add_checksums(), fetched && read_only);
        // Nothing changed: the frame reads as before, and refresh() finds the same file.
        CHECK(f.nchunks() == n);
        CHECK_FALSE(f.refresh());
        CHECK(f.chunk(0).bytes.size() == chunk.size());
    }
}

TEST_CASE("http: a sparse frame opens by its directory URL where the server lists directories",
          "[http]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    if (!b2nd::storage::http_available()) {
        B2ND_SKIP("this build has no libcurl");
    }
    // nginx's autoindex: the directory URL answers 200 with an HTML listing, chunked.
    const auto nginx = ServerProcess::nginx(b2nd::test::corpus_dir(), {}, {}, true);
    if (!nginx) {
        B2ND_SKIP("nginx is not installed (Debian package nginx)");
    }
    const std::string rel = "append_general_i8_sframe.b2frame";
    const auto local = b2nd::AnyArray::open(b2nd::test::corpus_dir() + "/" + rel);
    for (const std::string& url : {nginx->url(rel), nginx->url(rel) + "/"}) {
        INFO(url);
        const auto remote = b2nd::AnyArray::open(url);
        CHECK(remote.sparse());
        CHECK(remote.read() == local.read());
    }
    // A file that is not there is still its own 404.
    try {
        (void)b2nd::AnyArray::open(nginx->url("stores"));
        FAIL("a directory without chunks.b2frame opened");
    } catch (const b2nd::Error& e) {
        CHECK_THAT(e.what(), Catch::Matchers::Contains("stores"));
    }
}

TEST_CASE("http: leaves of .b2z stores read over HTTP equal their local reads", "[http]") {
    std::string why;
    const auto nginx = serve(why);
    if (!nginx) {
        B2ND_SKIP(why);
    }
    const std::string dir = b2nd::test::corpus_dir();
    std::mt19937 rng(7);
    int leaves = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir + "/stores")) {
        if (e.path().extension() != ".b2z") {
            continue;
        }
        const std::string rel = fs::relative(e.path(), dir).generic_string();
        INFO(rel);
        const b2nd::Store local = b2nd::Store::open(e.path().string());
        const b2nd::Store remote = b2nd::Store::open(nginx->url(rel));
        REQUIRE(remote.entries().size() == local.entries().size());
        for (const b2nd::StoreEntry& entry : local.entries()) {
            INFO(entry.key);
            b2nd::AnyArray a;
            try {
                a = local.open_array(entry.key);
            } catch (const b2nd::Error&) {
                continue;  // a group, or an object kind that is no array
            }
            same_reads(a, remote.open_array(entry.key), rng);
            ++leaves;
        }
    }
    CHECK(leaves >= 4);
    // A .b2d (a directory: plain HTTP cannot list its files) is refused by name, with what to
    // do instead, before any request.
    for (const std::string& u : {nginx->url("stores/s.b2d"), nginx->url("stores/s.b2d/")}) {
        CHECK_THROWS_WITH(b2nd::Store::open(u),
                          Catch::Contains("s.b2d") && Catch::Contains("b2nd pack"));
    }
}

TEST_CASE("http: a box fetches its touched blocks only, in two batches", "[http]") {
    b2nd::test::TempDir tmp;
    // 64^3 float32 in 32^3 chunks of 8^3 blocks: 64 blocks per chunk, each on its own.
    const b2nd::Shape shape{64, 64, 64};
    std::vector<float> values(64 * 64 * 64);
    std::mt19937 rng(3);
    for (float& v : values) {
        v = std::uniform_real_distribution<float>(0, 1)(rng);  // incompressible: blocks are big
    }
    b2nd::CreateOptions co;
    co.chunk_shape = {32, 32, 32};
    co.block_shape = {8, 8, 8};
    co.compression.codec = b2nd::Codec::lz4;
    b2nd::AnyArray::create_from(
        tmp / "a.b2nd", b2nd::DType::parse("<f4"), shape,
        {reinterpret_cast<const std::uint8_t*>(values.data()), values.size() * sizeof(float)}, co);
    std::string why;
    const auto nginx = serve(why, tmp.path());
    if (!nginx) {
        B2ND_SKIP(why);
    }
    b2nd::OpenOptions o;
    o.http.head_bytes = 4096;  // the file is larger than the head: chunks are fetched apart
    const auto remote = b2nd::AnyArray::open(nginx->url("a.b2nd"), o);
    const auto local = b2nd::AnyArray::open(tmp / "a.b2nd");
    const b2nd::storage::TransferStats opened = remote.frame().transfers();
    CHECK(opened.requests == 2);
    // A 4^3 box inside one block of chunk 0, then an 8^3 box straddling 8 blocks of 8 chunks.
    const b2nd::Box small{{9, 9, 9}, {4, 4, 4}, {1, 1, 1}};
    CHECK(remote.read(small) == local.read(small));
    const b2nd::storage::TransferStats one = remote.frame().transfers();
    // Two batches: the chunk's head (unless in the file's) with its block digests (at the chunk's
    // end: a request of their own), then the block.
    CHECK(one.requests - opened.requests <= 3);
    const std::uint64_t block_bytes = 8 * 8 * 8 * 4;
    CHECK(one.bytes - opened.bytes < 2 * block_bytes + 4096);
    const b2nd::Box straddling{{28, 28, 28}, {8, 8, 8}, {1, 1, 1}};
    CHECK(remote.read(straddling) == local.read(straddling));
    const b2nd::storage::TransferStats two = remote.frame().transfers();
    // Round trips, not requests, are what the goal counts: heads of the 7 new chunks (with their
    // block digests) in one batch, then the 8 blocks (one per chunk) in another; each batch's
    // requests run together.
    CHECK(two.requests - one.requests <= 7 + 7 + 8);
    CHECK(two.bytes - one.bytes < 8 * (block_bytes + 64 * 4 + 256) * 3 / 2);
    // Repeats come from the decoded-block cache: nothing more is fetched.
    CHECK(remote.read(straddling) == local.read(straddling));
    CHECK(remote.frame().transfers().requests == two.requests);
    // One request in flight: each batch is one request of many ranges (the heads of the 8
    // chunks, then their blocks), whatever the ranges' number.
    b2nd::OpenOptions one_at_a_time = o;
    one_at_a_time.http.max_in_flight = 1;
    const auto serial = b2nd::AnyArray::open(nginx->url("a.b2nd"), one_at_a_time);
    const std::uint64_t opened_serial = serial.frame().transfers().requests;
    CHECK(serial.read(straddling) == local.read(straddling));
    CHECK(serial.frame().transfers().requests - opened_serial == 2);
    // Chunk headers asked for one after the other (b2nd info's sizes and kinds): one request.
    const auto info = b2nd::AnyArray::open(nginx->url("a.b2nd"), one_at_a_time);
    const std::uint64_t opened_info = info.frame().transfers().requests;
    for (std::int64_t c = 0; c < info.frame().nchunks(); ++c) {
        CHECK(info.frame().chunk_unchecked(c).nbytes == 32 * 32 * 32 * 4);
    }
    CHECK(info.frame().transfers().requests - opened_info <= 1);
    // 300 scattered points touch most blocks of all 8 chunks: several ranges go out per request
    // (multipart/byteranges), so two batches of at most max_in_flight requests.
    std::vector<std::int64_t> coords;
    for (int p = 0; p < 300 * 3; ++p) {
        coords.push_back(std::uniform_int_distribution<std::int64_t>(0, 63)(rng));
    }
    const auto fresh = b2nd::AnyArray::open(nginx->url("a.b2nd"), o);
    const std::uint64_t before = fresh.frame().transfers().requests;
    std::vector<float> got(300), want(300);
    fresh.read_points(coords.data(), 300, got.data());
    local.read_points(coords.data(), 300, want.data());
    CHECK(got == want);
    CHECK(fresh.frame().transfers().requests - before <= 2 * 8);
}

#ifdef B2ND_CLI_PATH
using b2nd::test::tool;
using b2nd::test::tool_text;

TEST_CASE("http: the tool's read commands take URLs", "[http]") {
    std::string why;
    const auto nginx = serve(why);
    if (!nginx) {
        B2ND_SKIP(why);
    }
    const std::string dir = b2nd::test::corpus_dir();
    b2nd::test::TempDir tmp;
    // A contiguous frame, a sparse frame and a .b2z leaf: exported by URL and from the file,
    // the same .npy bytes.
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"codec_lz4_clevel5.b2nd", "0:50, 3:40"},
        {"append_general_i8_sframe.b2frame", ""},
        {"stores/trees/t1.b2z:/group/sub/counts", "1:11, :, 2"},
    };
    for (const auto& [rel, slice] : cases) {
        INFO(rel);
        const std::string sel = slice.empty() ? "" : " --slice \"" + slice + "\"";
        REQUIRE(tool("export " + nginx->url(rel) + " " + (tmp / "remote.npy") + sel) == 0);
        REQUIRE(tool("export " + dir + "/" + rel + " " + (tmp / "local.npy") + sel) == 0);
        CHECK(b2nd::test::read_file(tmp / "remote.npy") ==
              b2nd::test::read_file(tmp / "local.npy"));
        std::filesystem::remove(tmp / "remote.npy");
        std::filesystem::remove(tmp / "local.npy");
        CHECK(tool("info " + nginx->url(rel)) == 0);
        CHECK(tool("verify " + nginx->url(rel)) == 0);
    }
    CHECK(tool("ls " + nginx->url("stores/trees/t1.b2z")) == 0);
    CHECK(tool("info " + nginx->url("nothere.b2nd")) == 1);  // a bad file: exit 1, said why
    // A UTF8Array by URL: its strings, as from the files (not its offsets).
    const std::string u8 = "records/utf8/u8_mixed.b2nd";
    const std::string local = tool_text("show " + dir + "/" + u8 + " --json");
    CHECK(local.compare(0, 2, "[\"") == 0);
    CHECK(tool_text("show " + nginx->url(u8) + " --json") == local);
}

TEST_CASE("http: one size per file: info says the same locally and over HTTP", "[http]") {
    b2nd::test::TempDir tmp;
    std::string why;
    const auto nginx = serve(why, tmp.path());
    if (!nginx) {
        B2ND_SKIP(why);
    }
    // A file with dead space: the first commit's chunks, replaced by a second write.
    std::vector<double> v(200 * 100);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<double>(i % 977) * 0.25;
    }
    b2nd::CreateOptions co;
    co.chunk_shape = {20, 100};
    (void)b2nd::NDArray<double>::create_from(tmp / "a.b2nd", {200, 100}, v, co);
    {
        b2nd::OpenOptions w;
        w.writable = true;
        w.auto_compact = false;
        auto arr = b2nd::NDArray<double>::open(tmp / "a.b2nd", w);
        std::reverse(v.begin(), v.end());
        arr.write(b2nd::Box::whole(arr.shape()), v);
    }
    const auto local = b2nd::AnyArray::open(tmp / "a.b2nd");
    const auto remote = b2nd::AnyArray::open(nginx->url("a.b2nd"));
    REQUIRE(local.frame().dead_bytes() > 0);
    CHECK(remote.frame().dead_bytes() == local.frame().dead_bytes());
    CHECK(remote.cbytes() == local.cbytes());
    // The tool's lines on sizes, word for word.
    const auto sizes = [](const std::string& path) {
        const std::string out = tool_text("info '" + path + "'");
        std::string lines;
        std::size_t at = 0;
        for (std::size_t nl; (nl = out.find('\n', at)) != std::string::npos; at = nl + 1) {
            const std::string line = out.substr(at, nl - at);
            if (line.compare(0, 4, "size") == 0 || line.compare(0, 4, "dead") == 0) {
                lines += line + "\n";
            }
        }
        return lines;
    };
    const std::string want = sizes(tmp / "a.b2nd");
    CHECK_THAT(want, Catch::Matchers::Contains("dead space"));
    CHECK(sizes(nginx->url("a.b2nd")) == want);
}
#endif

TEST_CASE("http: https with HTTP/2 (nginx, a certificate made here)", "[http]") {
    const std::string openssl = b2nd::test::find_program("openssl");
    if (openssl.empty() || !b2nd::storage::http_available()) {
        B2ND_SKIP("openssl or libcurl missing");
    }
    b2nd::test::TempDir tmp;
    const std::string cert = tmp / "cert.pem", key = tmp / "key.pem";
    const std::string make = openssl +
                             " req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
                             "-addext subjectAltName=IP:127.0.0.1 -keyout " +
                             key + " -out " + cert + " > /dev/null 2>&1";
    REQUIRE(std::system(make.c_str()) == 0);
    std::vector<std::int32_t> v(40 * 50 * 60);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<std::int32_t>(i * 7 % 1001);
    }
    b2nd::CreateOptions co;
    co.chunk_shape = {20, 25, 30};
    co.block_shape = {5, 5, 10};
    b2nd::AnyArray::create_from(tmp / "a.b2nd", b2nd::DType::parse("<i4"), {40, 50, 60},
                                {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * 4},
                                co);
    const auto server = ServerProcess::nginx(tmp.path(), cert, key);
    if (!server) {
        B2ND_SKIP("nginx is not installed (Debian package nginx)");
    }
    REQUIRE(server->url("a.b2nd").rfind("https://", 0) == 0);
    b2nd::OpenOptions o;
    o.http.ca_file = cert;
    o.http.head_bytes = 1024;
    const auto local = b2nd::AnyArray::open(tmp / "a.b2nd");
    const auto remote = b2nd::AnyArray::open(server->url("a.b2nd"), o);
    const b2nd::Box box{{3, 7, 11}, {30, 30, 30}, {1, 1, 1}};
    CHECK(remote.read(box) == local.read(box));
    CHECK(remote.read() == local.read());
    // Servers are verified: without the certificate, an error at once (retrying cannot help).
    b2nd::OpenOptions plain;
    plain.http.retries = 3;
    try {
        (void)b2nd::AnyArray::open(server->url("a.b2nd"), plain);
        FAIL("an unverified server was read");
    } catch (const b2nd::HttpError& e) {
        CHECK(e.status() == 0);
        CHECK_THAT(e.what(), !Catch::Contains("attempts") && Catch::Contains("127.0.0.1"));
    }
}
