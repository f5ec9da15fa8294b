// Zarr arrays over HTTP: the bridges corpus served by nginx on loopback opens by URL as it does
// from disk (v2, v3, sharded: shard indexes and inner chunks fetched by range), missing chunks
// (404) read as the fill value, and a damaged array is refused by name.
#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../support/bridge_cases.hpp"
#include "../support/files.hpp"
#include "../support/http_servers.hpp"
#include "../support/reference.hpp"

using Catch::Matchers::Contains;

namespace {

std::unique_ptr<b2nd::test::ServerProcess> bridges_server(std::string& why) {
    return b2nd::test::nginx_or_why(b2nd::test::bridges_dir(), why);
}

}  // namespace

TEST_CASE("http bridges: Zarr arrays open by URL and read as from disk", "[http][bridges]") {
    if (!b2nd::test::have_bridges()) {
        B2ND_SKIP("bridges corpus not found under " B2ND_CORPUS_DIR);
    }
    B2ND_HTTP_FIXTURE(nginx, bridges_server);
    int n = 0;
    for (const auto& c : b2nd::test::bridge_cases({"zarr2", "zarr3"})) {
        INFO(c.name);
        const std::string rel = c.entry["src"].as_string();
        const b2nd::AnyArray remote = b2nd::AnyArray::open(nginx.url(rel));
        CHECK(remote.read() == b2nd::test::read_npy_payload(c.expect).data);
        CHECK(remote.attrs().names() == b2nd::AnyArray::open(c.src).attrs().names());
        ++n;
    }
    CHECK(n >= 45);
    // A shard whose index was cut short: refused, naming the shard's URL.
    const b2nd::AnyArray bad =
        b2nd::AnyArray::open(nginx.url("fail/bad_z3_truncated_shard_index.zarr"));
    CHECK_THROWS_WITH(bad.read(), Contains("bad_z3_truncated_shard_index.zarr/c/0/1"));
}
