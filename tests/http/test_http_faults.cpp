// A bad network never gives wrong data: every fault tests/http/fault_server.py injects ends in
// values equal to the local read (after retries, or a restart on the new file) or in a clear
// HttpError naming the URL (without credentials), the range and the status.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/format/frame_header.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/storage/http.hpp>

#include "support/files.hpp"
#include "support/http_servers.hpp"
#include "support/remote_reads.hpp"
#include "support/temp_dir.hpp"
#include <sys/wait.h>

using b2nd::test::http_error;
using b2nd::test::ServerProcess;

namespace {

/// A served directory holding a.b2nd (8 chunks of 8 blocks) and a.b2nd.v2 (the same shape,
/// other values: the file after a change on the server), and small.b2nd.v2 (what a.b2nd
/// becomes when it shrinks).
struct Served {
    b2nd::test::TempDir dir;
    std::unique_ptr<ServerProcess> server;

    static void write(const std::string& path, const b2nd::Shape& shape, float offset) {
        std::vector<float> v(static_cast<std::size_t>(shape[0] * shape[1] * shape[2]));
        for (std::size_t i = 0; i < v.size(); ++i) {
            v[i] = static_cast<float>(i % 977) * 0.5f + offset;
        }
        b2nd::CreateOptions co;
        co.chunk_shape = {16, 32, 32};
        co.block_shape = {8, 16, 16};
        b2nd::AnyArray::create_from(
            path, b2nd::DType::parse("<f4"), shape,
            {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * sizeof(float)}, co);
    }
    std::string url(const std::string& fault) const { return server->url(fault + "a.b2nd"); }
    b2nd::AnyArray local(const std::string& name = "a.b2nd") const {
        return b2nd::AnyArray::open(dir / name);
    }
};

std::unique_ptr<Served> serve(std::string& why) {
    if (!b2nd::storage::http_available()) {
        why = "this build has no libcurl";
        return nullptr;
    }
    auto s = std::make_unique<Served>();
    Served::write(s->dir / "a.b2nd", {32, 64, 64}, 0);
    Served::write(s->dir / "a.b2nd.v2", {32, 64, 64}, 1000);
    Served::write(s->dir / "small.b2nd.v2", {16, 16, 16}, 7);
    s->server = ServerProcess::faults(s->dir.path());
    if (!s->server) {
        why = "python3 is not installed: the fault server needs it";
        return nullptr;
    }
    return s;
}

/// Quick retries, and a stall counted as a timeout after a second.
b2nd::OpenOptions quick(int retries = 4) {
    b2nd::OpenOptions o;
    o.http.retries = retries;
    o.http.backoff_ms = 10;
    o.http.stall_timeout_ms = 1000;
    o.http.head_bytes = 1024;  // the array is larger: chunks are fetched apart
    return o;
}

const b2nd::Box kBox{{3, 5, 7}, {20, 40, 50}, {1, 1, 1}};

}  // namespace

TEST_CASE("http faults: a server that stalls is timed out and asked again", "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    const auto a = b2nd::AnyArray::open(s.url("delay/1/"), quick());
    CHECK(a.frame().transfers().retries >= 1);
    CHECK(a.read() == s.local().read());
    // Without retries, the timeout is the error: no answer, so no status.
    const b2nd::HttpError e =
        http_error([&] { (void)b2nd::AnyArray::open(s.url("delay/5/"), quick(0)); });
    CHECK(e.status() == 0);
    CHECK_THAT(e.what(), Catch::Contains(s.url("delay/5/")) && Catch::Contains("bytes [0, "));
}

TEST_CASE("http faults: a server that never answers, or stalls after its header, costs timeout_ms",
          "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    b2nd::OpenOptions o = quick();
    o.http.timeout_ms = 2500;  // the whole of a request, retries included
    for (const char* fault : {"silent", "stall"}) {
        INFO(fault);
        const auto t0 = std::chrono::steady_clock::now();
        const b2nd::HttpError e =
            http_error([&] { (void)b2nd::AnyArray::open(s.url(std::string(fault) + "/"), o); });
        const double took =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        CHECK(took >= 2.0);
        CHECK(took < 2.5 + 5.0);  // bounded: not 5 attempts of a stall each
        CHECK_THAT(e.what(), Catch::Contains("ran out") && Catch::Contains("2.5 s in all") &&
                                 Catch::Contains("attempts"));
        // A 206 header, then nothing: no claim that 206 was expected and not given.
        CHECK_THAT(e.what(), !Catch::Contains("expected 206"));
    }
#ifdef B2ND_CLI_PATH
    // The tool: --timeout, and a bounded default.
    const auto t0 = std::chrono::steady_clock::now();
    const std::string cmd = std::string(B2ND_CLI_PATH) + " info " + s.url("silent/") +
                            " --timeout 1.5 > /dev/null 2>&1";
    const int status = std::system(cmd.c_str());
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);
    CHECK(took < 1.5 + 5.0);
#endif
}

TEST_CASE("http faults: connections dropped mid-body and short bodies are retried", "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    for (const std::string fault : {"drop/3/", "short/3/", "wrongrange/3/"}) {
        INFO(fault);
        const auto a = b2nd::AnyArray::open(s.url(fault), quick());
        CHECK(a.read(kBox) == s.local().read(kBox));
        CHECK(a.read() == s.local().read());
        CHECK(a.frame().transfers().retries >= 3);
    }
    // Always short: an error after the retries, saying what came and what was expected.
    const b2nd::HttpError e =
        http_error([&] { (void)b2nd::AnyArray::open(s.url("short/99/"), quick(2)); });
    CHECK_THAT(e.what(), Catch::Contains("short body: 512 bytes received") &&
                             Catch::Contains("after 3 attempts") &&
                             !Catch::Contains("expected 206"));  // a 206 came: only too short
}

TEST_CASE("http faults: 5xx answers are retried, 404 and 416 are errors", "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    const auto a = b2nd::AnyArray::open(s.url("error/2/"), quick());
    CHECK(a.read() == s.local().read());
    const b2nd::HttpError e5 =
        http_error([&] { (void)b2nd::AnyArray::open(s.url("error/99/"), quick(1)); });
    CHECK(e5.status() == 503);
    CHECK_THAT(e5.what(), Catch::Contains("HTTP 503"));
    const b2nd::HttpError e4 =
        http_error([&] { (void)b2nd::AnyArray::open(s.server->url("nothere.b2nd"), quick()); });
    CHECK(e4.status() == 404);
    CHECK_THAT(e4.what(), Catch::Contains("nothere.b2nd"));
    // A range past the end of the file (a caller of the byte source asking for it).
    const auto src = b2nd::storage::http_source(s.url(""));
    std::vector<std::uint8_t> buf(16);
    const b2nd::HttpError e416 = http_error([&] {
        src->read_into({{src->size() + 100, buf.size(), buf.data(), nullptr}});
    });
    CHECK(e416.status() == 416);
    CHECK_FALSE(e416.remote_changed());
}

TEST_CASE("http faults: a server that ignores Range still gives the right bytes", "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    const auto a = b2nd::AnyArray::open(s.url("norange/"), quick());
    CHECK(a.read(kBox) == s.local().read(kBox));
    CHECK(a.read() == s.local().read());
}

TEST_CASE("http faults: redirects are followed", "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    const auto a = b2nd::AnyArray::open(s.url("redirect/"), quick());
    CHECK(a.read() == s.local().read());
}

TEST_CASE("http faults: a file that changes mid-read is read again from its new header", "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    // The open's two requests see a.b2nd; every later one sees a.b2nd.v2 (a new ETag): the
    // read is refused by If-Match (412), the array re-opened, and the read made again.
    const auto a = b2nd::AnyArray::open(s.url("change/2/"), quick());
    CHECK(a.read(kBox) == s.local("a.b2nd.v2").read(kBox));
    CHECK(a.read() == s.local("a.b2nd.v2").read());
    // A file that keeps changing: one restart, then the error says so.
    const b2nd::HttpError e = http_error([&] {
        const auto b = b2nd::AnyArray::open(s.url("flip/"), quick());  // changes during open...
        (void)b.read();                                                // ... or during the read
    });
    CHECK(e.remote_changed());
    CHECK_THAT(e.what(), Catch::Contains("changed"));
}

TEST_CASE("http faults: a file that shrinks mid-read is read again, not torn", "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    std::filesystem::copy_file(s.dir / "small.b2nd.v2", s.dir / "s.b2nd.v2");
    std::filesystem::copy_file(s.dir / "a.b2nd", s.dir / "s.b2nd");
    const auto a = b2nd::AnyArray::open(s.server->url("change/2/s.b2nd"), quick());
    CHECK(a.shape() == b2nd::Shape{32, 64, 64});
    const std::vector<std::uint8_t> now = a.read();  // the new, smaller array
    CHECK(a.shape() == b2nd::Shape{16, 16, 16});
    CHECK(now == s.local("small.b2nd.v2").read());
}

TEST_CASE("http faults: credentials never appear in messages", "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    const std::string url = "http://reader:s3cr3t@127.0.0.1:" + std::to_string(s.server->port()) +
                            "/nothere.b2nd?token=t0k3n";
    const b2nd::HttpError e = http_error([&] { (void)b2nd::AnyArray::open(url, quick()); });
    CHECK_THAT(e.what(), !Catch::Contains("s3cr3t") && !Catch::Contains("t0k3n") &&
                             Catch::Contains("127.0.0.1"));
    CHECK(b2nd::storage::redacted_url(url) ==
          "http://127.0.0.1:" + std::to_string(s.server->port()) + "/nothere.b2nd");
}

TEST_CASE("http faults: a file claiming absurd metadata is refused, not believed into memory",
          "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    // a.b2nd grown (sparsely) to 3 GiB, its header saying the frame fills it and its chunks
    // take none of it: the offsets index and trailer would be 3 GiB.
    std::vector<std::uint8_t> bytes = b2nd::test::read_file(s.dir / "a.b2nd");
    const std::uint64_t huge = std::uint64_t{3} << 30;
    for (int k = 0; k < 8; ++k) {
        bytes[b2nd::format::frame_offsets::kFrameLen + static_cast<std::size_t>(k)] =
            static_cast<std::uint8_t>(huge >> (56 - 8 * k));
        bytes[b2nd::format::frame_offsets::kCbytes + static_cast<std::size_t>(k)] = 0;
    }
    {
        std::ofstream out(s.dir / "huge.b2nd", std::ios::binary);
        out.write(reinterpret_cast<const char*>(bytes.data()),
                  static_cast<std::streamsize>(bytes.size()));
    }
    std::filesystem::resize_file(s.dir / "huge.b2nd", huge);
    CHECK_THROWS_WITH(b2nd::AnyArray::open(s.server->url("huge.b2nd"), quick()),
                      Catch::Contains("huge.b2nd") && Catch::Contains("1 GiB at most"));
}
