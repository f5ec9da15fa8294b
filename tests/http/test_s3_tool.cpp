// The tool on S3 where users look (issue 56): ls of a bucket and a prefix, a .npy read back from
// S3, S3's own error codes passed on, store-leaf names refused as outputs, Zarr exported to an
// s3:// prefix (HDF5 refused as a usage error). s3rver on 127.0.0.1, started here.
#include <algorithm>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "support/cli_tool.hpp"
#include "support/files.hpp"
#include "support/s3_server.hpp"
#include "support/temp_dir.hpp"

#ifdef B2ND_CLI_PATH

using b2nd::test::S3Store;
using Catch::Matchers::Contains;

namespace {

std::unique_ptr<S3Store> empty_store(std::string& why) {
    return S3Store::start(why);
}

/// The environment of an AWS CLI user reaching `s3`.
std::string env_of(const S3Store& s3) {
    return "AWS_ENDPOINT_URL='" + s3.endpoint() +
           "' AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER "
           "AWS_SHARED_CREDENTIALS_FILE=/nonexistent AWS_CONFIG_FILE=/nonexistent";
}

bool has_key(const std::vector<std::string>& keys, const std::string& part) {
    return std::any_of(keys.begin(), keys.end(),
                       [&](const std::string& k) { return k.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("s3 tool: ls lists a bucket and a prefix; a .npy on S3 imports", "[http][s3]") {
    B2ND_HTTP_FIXTURE(s3, empty_store);
    const std::string env = env_of(s3);
    b2nd::test::TempDir tmp;
    const std::string t = tmp / "t.b2nd";
    (void)b2nd::NDArray<double>::create_from(t, {4}, std::vector<double>{1, 2, 3, 4});
    REQUIRE(b2nd::test::tool("export " + t + " " + s3.url("run7/t.npy"), env) == 0);
    REQUIRE(b2nd::test::tool("convert " + t + " " + s3.url("run7/t.b2nd"), env) == 0);
    REQUIRE(b2nd::test::tool("convert " + t + " " + s3.url("run7/s.b2nd") + " --sframe", env) == 0);
    REQUIRE(b2nd::test::tool("export " + t + " " + s3.url("z.zarr"), env) == 0);
    // The bucket, one level down: a prefix, and a Zarr array told by its files.
    const std::string bucket = b2nd::test::tool_text("ls s3://bkt", env);
    CHECK_THAT(bucket, Contains("run7/") && Contains("prefix") && Contains("z.zarr/") &&
                           Contains("zarr") && !Contains("t.npy"));
    const std::string prefix = b2nd::test::tool_text("ls " + s3.url("run7/") + " --json", env);
    CHECK_THAT(prefix, Contains("{\"name\": \"t.npy\", \"kind\": \"npy\"}") &&
                           Contains("{\"name\": \"t.b2nd\", \"kind\": \"frame\"}") &&
                           Contains("\"name\": \"s.b2nd/\", \"kind\": \"sparse frame\""));
    // The tool writes .npy to S3 and reads it back (it said "No such file or directory").
    REQUIRE(b2nd::test::tool("import " + s3.url("run7/t.npy") + " " + (tmp / "back.b2nd"), env) ==
            0);
    CHECK(b2nd::NDArray<double>::open(tmp / "back.b2nd").read() == std::vector<double>{1, 2, 3, 4});
}

TEST_CASE("s3 tool: S3's error codes are passed on; a missing bucket is said to be one",
          "[http][s3]") {
    B2ND_HTTP_FIXTURE(s3, empty_store);
    const std::string env = env_of(s3);
    b2nd::test::TempDir tmp;
    const std::string t = tmp / "t.b2nd";
    (void)b2nd::NDArray<double>::create_from(t, {4}, std::vector<double>{1, 2, 3, 4});
    CHECK_THAT(
        b2nd::test::tool_text("info " + s3.url("nope.b2nd"), env),
        Contains("s3://bkt/nope.b2nd") && Contains("NoSuchKey") && !Contains("expected 206"));
    for (const std::string& cmd :
         {std::string("info s3://nobucket/x.b2nd"), "convert " + t + " s3://nobucket/y.b2nd"}) {
        INFO(cmd);
        const std::string out = b2nd::test::tool_text(cmd, env);
        CHECK_THAT(out, Contains("nobucket") && Contains("NoSuchBucket"));
        CHECK_THAT(out, !Contains("cannot list"));
    }
    CHECK_THAT(b2nd::test::tool_text("convert " + t + " s3://nobucket/y.b2nd", env),
               Contains("the bucket does not exist"));
}

TEST_CASE("s3 tool: store-leaf names are refused as outputs; Zarr is written to S3, HDF5 is not",
          "[http][s3]") {
    B2ND_HTTP_FIXTURE(s3, empty_store);
    const std::string env = env_of(s3);
    b2nd::test::TempDir tmp;
    const std::string t = tmp / "t.b2nd";
    (void)b2nd::NDArray<double>::create_from(t, {6}, std::vector<double>{1, 2, 3, 4, 5, 6});
    // A leaf of a store as a single array's output: refused, nothing of that name made.
    for (const std::string& out : {s3.url("stores/runs.b2d:/run3/t"), tmp / "runs.b2z:/run3/t"}) {
        INFO(out);
        const std::string said = b2nd::test::tool_text("convert " + t + " '" + out + "'", env);
        CHECK_THAT(said, Contains("names a leaf of the store") && Contains("Store::set"));
        CHECK(b2nd::test::tool("convert " + t + " '" + out + "'", env) == 2);
    }
    CHECK_FALSE(has_key(s3.keys(), "runs.b2d:"));
    // Zarr on S3: chunks, then metadata; read back in place; replaced only with --overwrite,
    // and a v2 replacement leaves none of the v3 objects.
    const std::string z = s3.url("out/z.zarr");
    REQUIRE(b2nd::test::tool("export " + t + " " + z, env) == 0);
    CHECK(has_key(s3.keys("out/"), "z.zarr/zarr.json"));
    CHECK_THAT(b2nd::test::tool_text("show " + z, env), Contains("[1. 2. 3. 4. 5. 6.]"));
    CHECK(b2nd::test::tool("export " + t + " " + z, env) == 2);
    REQUIRE(b2nd::test::tool("export " + t + " " + z + " --overwrite --zarr-format 2", env) == 0);
    const std::vector<std::string> keys = s3.keys("out/");
    CHECK(has_key(keys, "z.zarr/.zarray"));
    CHECK_FALSE(has_key(keys, "z.zarr/zarr.json"));
    CHECK_THAT(b2nd::test::tool_text("show " + z, env), Contains("[1. 2. 3. 4. 5. 6.]"));
    // A prefix holding the user's other objects is never replaced.
    std::ofstream(tmp / "NOTES.txt") << "mine\n";
    REQUIRE(s3.put({tmp / "NOTES.txt"}, "out/z.zarr/"));
    CHECK(b2nd::test::tool("export " + t + " " + z + " --overwrite", env) == 2);
    CHECK(has_key(s3.keys("out/"), "z.zarr/NOTES.txt"));
    // An upload of several parts draws its own bar (the command's stopped at 89% before).
    std::vector<std::uint8_t> noise(std::size_t{12} << 20);
    std::uint32_t x = 12345;
    for (std::uint8_t& b : noise) {
        x = x * 1664525U + 1013904223U;
        b = static_cast<std::uint8_t>(x >> 24);
    }
    b2nd::CreateOptions raw;
    raw.compression.clevel = 0;
    (void)b2nd::AnyArray::create_from(tmp / "big.b2nd", b2nd::dtype_of<std::uint8_t>(),
                                      {static_cast<std::int64_t>(noise.size())},
                                      {noise.data(), noise.size()}, raw);
    const std::string bar = b2nd::test::tool_text(
        "convert " + (tmp / "big.b2nd") + " " + s3.url("big.b2nd"), "B2ND_PROGRESS=1 " + env);
    CHECK_THAT(bar, Contains("upload"));
    CHECK(has_key(s3.keys(), "big.b2nd"));
    // HDF5 is written by libhdf5 to files: a usage error, saying what to do.
    const std::string h5 = b2nd::test::tool_text("export " + t + " " + s3.url("o.h5:/x"), env);
    CHECK_THAT(h5, Contains("local paths only"));
    CHECK(b2nd::test::tool("export " + t + " " + s3.url("o.h5:/x"), env) == 2);
}

#endif
