// Zarr arrays over HTTP and S3: the bridges corpus served by nginx on loopback, and put in s3rver,
// opens by URL as it does from disk (v2, v3, sharded: shard indexes and inner chunks fetched by
// range), missing chunks (404) read as the fill value, and a damaged array is refused by name.
#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../support/bridge_cases.hpp"
#include "../support/files.hpp"
#include "../support/http_servers.hpp"
#include "../support/reference.hpp"
#include "../support/s3_server.hpp"

using Catch::Matchers::Contains;

namespace {

std::unique_ptr<b2nd::test::ServerProcess> bridges_server(std::string& why) {
    return b2nd::test::nginx_or_why(b2nd::test::bridges_dir(), why);
}

std::unique_ptr<b2nd::test::S3Store> bridges_in_s3(std::string& why) {
    auto s = b2nd::test::S3Store::start(why);
    if (s) {
        REQUIRE(s->put({b2nd::test::bridges_dir() + "/zarr3", b2nd::test::bridges_dir() + "/zarr2"},
                       "bridges/"));
    }
    return s;
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

TEST_CASE("s3 bridges: Zarr arrays open by s3:// URL", "[http][s3][bridges]") {
    if (!b2nd::test::have_bridges()) {
        B2ND_SKIP("bridges corpus not found under " B2ND_CORPUS_DIR);
    }
    B2ND_HTTP_FIXTURE(s3, bridges_in_s3);
    b2nd::OpenOptions o;
    o.s3 = s3.options();
    for (const char* name : {"z3_sharded_end_f8", "z3_missing_chunks_float64_fill_nan",
                             "z2_blosc_zlib4_shuffle_uint16_F", "z3_in_group_sub_deep_b"}) {
        INFO(name);
        const auto c = b2nd::test::bridge_case(name);
        const b2nd::AnyArray remote =
            b2nd::AnyArray::open(s3.url("bridges/" + c.entry["src"].as_string()), o);
        CHECK(remote.read() == b2nd::test::read_npy_payload(c.expect).data);
    }
}
