// A persisted expression opened by URL finds its operands on the same server, never among the
// client's files.
#include <filesystem>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/http.hpp>

#include "support/files.hpp"
#include "support/http_servers.hpp"
#include "support/temp_dir.hpp"

using b2nd::test::ServerProcess;

namespace {

void carrier(const std::string& path, const std::string& operand) {
    b2nd::CreateOptions o;
    o.metalayers = {{"b2o", b2nd::Value::map({{"kind", "lazyexpr"}, {"version", 1}}).to_msgpack()}};
    auto a = b2nd::AnyArray::create(path, b2nd::dtype_of<double>(), {4}, o);
    a.attrs().set(
        "b2o",
        b2nd::Value::map(
            {{"kind", "lazyexpr"},
             {"version", 1},
             {"expression", "x + 1"},
             {"operands", b2nd::Value::map({{"x", b2nd::Value::map({{"kind", "urlpath"},
                                                                    {"version", 1},
                                                                    {"urlpath", operand}})}})}}));
}

}  // namespace

TEST_CASE("http operands: a served expression reads its operands from its server only",
          "[http][objects]") {
    if (!b2nd::storage::http_available()) {
        B2ND_SKIP("this build has no libcurl");
    }
    b2nd::test::TempDir served;
    b2nd::test::TempDir client;  // the client's own, private array
    const std::vector<double> theirs{10, 20, 30, 40}, mine{7, 7, 7, 7};
    (void)b2nd::NDArray<double>::create_from(served / "x.b2nd", {4}, theirs.data(), 4);
    (void)b2nd::NDArray<double>::create_from(client / "x.b2nd", {4}, mine.data(), 4);
    carrier(served / "rel.b2nd", "x.b2nd");
    carrier(served / "abs.b2nd", client / "x.b2nd");  // names a path that exists on the client
    const auto server = ServerProcess::nginx(served.path());
    if (!server) {
        WARN("nginx is not installed: skipped");
        return;
    }
    const auto rel = b2nd::NDArray<double>::open(server->url("rel.b2nd"));
    CHECK(rel.read() == std::vector<double>{11, 21, 31, 41});
    // The absolute path is looked for on the server (where it is not), never read locally.
    try {
        const auto a = b2nd::NDArray<double>::open(server->url("abs.b2nd"));
        const auto got = a.read();
        CHECK(got != std::vector<double>{8, 8, 8, 8});
        FAIL("a carrier naming a client path opened");
    } catch (const b2nd::Error& e) {
        CHECK_THAT(e.what(), Catch::Contains("127.0.0.1") && Catch::Contains("x.b2nd"));
    }
}
