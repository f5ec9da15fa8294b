// The HTTP suite's faults, over S3: tests/http/fault_server.py misbehaves behind the
// signature-checking proxy (tests/http/sigv4_proxy.py), and arrays are read by s3:// URLs,
// signed. The bucket names the fault (s3://drop/3/a.b2nd is the fault server's /drop/3/a.b2nd):
// every fault ends in values equal to the local read, or in an HttpError naming the s3:// URL
// and the status, never the secret.
#include <filesystem>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/storage/http.hpp>

#include "support/files.hpp"
#include "support/http_servers.hpp"
#include "support/remote_reads.hpp"
#include "support/temp_dir.hpp"

using b2nd::test::http_error;
using b2nd::test::ServerProcess;

namespace {

struct Faulty {
    b2nd::test::TempDir dir;
    std::unique_ptr<ServerProcess> server, proxy;

    static void write(const std::string& path, float offset) {
        std::vector<float> v(32 * 64 * 64);
        for (std::size_t i = 0; i < v.size(); ++i) {
            v[i] = static_cast<float>(i % 977) * 0.5f + offset;
        }
        b2nd::CreateOptions co;
        co.chunk_shape = {16, 32, 32};
        co.block_shape = {8, 16, 16};
        (void)b2nd::NDArray<float>::create_from(path, {32, 64, 64}, v, co);
    }
    /// Options that reach the proxy with its secret, quick retries, a stall timed out in 1 s.
    b2nd::OpenOptions options(int retries = 4) const {
        b2nd::OpenOptions o;
        o.s3.endpoint = "http://127.0.0.1:" + std::to_string(proxy->port());
        o.s3.access_key_id = "S3RVER";
        o.s3.secret_access_key = "Fault-Secret-9";
        o.s3.use_environment = false;
        o.http.retries = retries;
        o.http.backoff_ms = 10;
        o.http.stall_timeout_ms = 1000;
        o.http.head_bytes = 1024;  // chunks are fetched apart
        return o;
    }
    b2nd::AnyArray local(const std::string& name = "a.b2nd") const {
        return b2nd::AnyArray::open(dir / name);
    }
};

std::unique_ptr<Faulty> serve(std::string& why) {
    if (!b2nd::storage::http_available()) {
        why = "this build has no libcurl";
        return nullptr;
    }
    auto s = std::make_unique<Faulty>();
    Faulty::write(s->dir / "a.b2nd", 0);
    Faulty::write(s->dir / "a.b2nd.v2", 1000);
    s->server = ServerProcess::faults(s->dir.path());
    if (s->server) {
        s->proxy = ServerProcess::sigv4_proxy(
            "http://127.0.0.1:" + std::to_string(s->server->port()), "Fault-Secret-9");
    }
    if (!s->server || !s->proxy) {
        why = "python3 is not installed: the fault server and the proxy need it";
        return nullptr;
    }
    return s;
}

const b2nd::Box kBox{{3, 5, 7}, {20, 40, 50}, {1, 1, 1}};

}  // namespace

TEST_CASE("s3 faults: stalls, dropped connections and short bodies are retried", "[http][s3]") {
    B2ND_HTTP_FIXTURE(s, serve);
    for (const std::string fault : {"delay/1", "drop/3", "short/3", "wrongrange/3"}) {
        INFO(fault);
        const auto a = b2nd::AnyArray::open("s3://" + fault + "/a.b2nd", s.options());
        CHECK(a.read(kBox) == s.local().read(kBox));
        CHECK(a.read() == s.local().read());
        CHECK(a.frame().transfers().retries >= 1);
    }
}

TEST_CASE("s3 faults: 5xx answers are retried; for good, an error naming the URL, not the secret",
          "[http][s3]") {
    B2ND_HTTP_FIXTURE(s, serve);
    const auto a = b2nd::AnyArray::open("s3://error/2/a.b2nd", s.options());
    CHECK(a.read() == s.local().read());
    const b2nd::HttpError e5 =
        http_error([&] { (void)b2nd::AnyArray::open("s3://error/99/a.b2nd", s.options(1)); });
    CHECK(e5.status() == 503);
    CHECK_THAT(e5.what(), Catch::Contains("s3://error/99/a.b2nd") && Catch::Contains("503"));
    CHECK(std::string(e5.what()).find("Fault-Secret-9") == std::string::npos);
    const b2nd::HttpError e4 =
        http_error([&] { (void)b2nd::AnyArray::open("s3://none/nothere.b2nd", s.options()); });
    CHECK(e4.status() == 404);
    CHECK_THAT(e4.what(), Catch::Contains("s3://none/nothere.b2nd"));
}

TEST_CASE("s3 faults: an object that changes mid-read is read again from its new header",
          "[http][s3]") {
    B2ND_HTTP_FIXTURE(s, serve);
    // The open's two requests see a.b2nd, every later one a.b2nd.v2 (a new ETag).
    const auto a = b2nd::AnyArray::open("s3://change/2/a.b2nd", s.options());
    CHECK(a.read(kBox) == s.local("a.b2nd.v2").read(kBox));
    CHECK(a.read() == s.local("a.b2nd.v2").read());
    // An object that keeps changing: one restart, then the error says so.
    const b2nd::HttpError e = http_error([&] {
        const auto b = b2nd::AnyArray::open("s3://flip/a.b2nd", s.options());
        (void)b.read();
    });
    CHECK(e.remote_changed());
    CHECK_THAT(e.what(), Catch::Contains("changed"));
}

TEST_CASE("s3 faults: a redirect is not followed: credentials never reach another host",
          "[http][s3]") {
    B2ND_HTTP_FIXTURE(s, serve);
    // Another server, which records the headers of what reaches it.
    b2nd::test::TempDir other;
    const auto capture = ServerProcess::faults(other.path());
    REQUIRE(capture);
    const auto ask = [&](const std::string& url) {
        const std::string cmd =
            "python3 -c \"import urllib.request; print(urllib.request.urlopen('" + url +
            "').read().decode())\"";
        std::string out;
        if (FILE* p = ::popen(cmd.c_str(), "r")) {
            char buf[4096];
            while (std::fgets(buf, sizeof buf, p) != nullptr) {
                out += buf;
            }
            ::pclose(p);
        }
        return out;
    };
    const std::string proxy = "http://127.0.0.1:" + std::to_string(s.proxy->port());
    const std::string elsewhere = "http://127.0.0.1:" + std::to_string(capture->port());
    REQUIRE(ask(proxy + "/_faults?redirect_to=" + elsewhere) == "{}\n");
    b2nd::OpenOptions o = s.options(0);
    o.s3.session_token = "Session-Token-7";
    const b2nd::HttpError e =
        http_error([&] { (void)b2nd::AnyArray::open("s3://error/0/a.b2nd", o); });
    CHECK(e.status() == 307);
    CHECK_THAT(e.what(), Catch::Contains("s3://error/0/a.b2nd"));
    CHECK(std::string(e.what()).find("Session-Token-7") == std::string::npos);
    // Nothing reached the other host: no token, no signature, no request at all.
    const std::string seen = ask(elsewhere + "/_headers");
    CHECK(seen.find("x-amz-security-token") == std::string::npos);
    CHECK(seen.find("x-amz-content-sha256") == std::string::npos);
    CHECK(seen.find("authorization") == std::string::npos);
    REQUIRE(ask(proxy + "/_faults") == "{}\n");
    CHECK(b2nd::AnyArray::open("s3://error/0/a.b2nd", s.options()).read(kBox) ==
          s.local().read(kBox));
}
