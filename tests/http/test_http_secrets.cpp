// Secrets never shown: URL credentials and query tokens, fields named as secrets in metadata.
// Every output of the tool, --json included, and every exception (redact_secrets, error.hpp).
#include <filesystem>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/http.hpp>
#include <b2nd/value.hpp>

#ifdef B2ND_CLI_PATH
#include "cli/run.hpp"
#endif
#include "support/files.hpp"
#include "support/http_servers.hpp"
#include "support/temp_dir.hpp"
#include <sys/wait.h>

using b2nd::test::ServerProcess;
using Catch::Matchers::Contains;

namespace {

#ifdef B2ND_CLI_PATH
/// All the tool prints, stdout and stderr, for `b2nd ARGS`.
std::string tool(const std::string& args) {
    return b2nd::test::run(args).output;
}
#endif

}  // namespace

TEST_CASE("secrets: redact_secrets and every Error remove credentials, queries and tokens",
          "[http][secrets]") {
    CHECK(b2nd::redact_secrets("open \"https://ann:SECRET1@example.org/a.b2nd?sig=SECRET2\"") ==
          "open \"https://example.org/a.b2nd\"");
    CHECK(b2nd::redact_secrets(R"({"urlbase": "s3://k:SECRET3@b/", "auth_token": "SECRET4"})") ==
          R"({"urlbase": "s3://b/", "auth_token": "<redacted>"})");
    CHECK(b2nd::redact_secrets("{'password': 'SECRET5', 'user': 'ann'}") ==
          "{'password': '<redacted>', 'user': 'ann'}");
    CHECK(b2nd::redact_secrets("Authorization: Bearer SECRET6") ==
          "Authorization: Bearer <redacted>");
    CHECK(b2nd::redact_secrets("no secret: \"x.b2nd\" at offset 12") ==
          "no secret: \"x.b2nd\" at offset 12");
    const b2nd::FormatError e("\"http://u:SECRET7@h/x?t=SECRET8\": bad", 3);
    CHECK_THAT(std::string(e.what()), !Contains("SECRET") && Contains("\"http://h/x\": bad"));
    CHECK_THAT(e.detail(), !Contains("SECRET"));
    const b2nd::Value v =
        b2nd::Value::map({{"auth_token", "SECRET9"},
                          {"nested", b2nd::Value::map({{"aws_secret_access_key", "SECRET10"}})},
                          {"urlpath", b2nd::Value::tuple({"x.b2nd", "https://u:SECRET11@h/"})}});
    CHECK_THAT(v.redacted().to_json(),
               !Contains("SECRET") && Contains("<redacted>") && Contains("https://h/"));
}

#ifdef B2ND_CLI_PATH
TEST_CASE("secrets: no output of the tool shows a planted secret", "[http][secrets]") {
    b2nd::test::TempDir tmp;
    const std::string a = tmp / "a.b2nd";
    b2nd::CreateOptions o;
    o.chunk_shape = {8};
    (void)b2nd::NDArray<double>::create_from(a, {16}, std::vector<double>(16, 1.0), o);
    tool("meta " + a + " creds " +
         "'{\"password\": \"PLANTED1\", \"src\": \"https://u:PLANTED2@h/x.b2nd?token=PLANTED3\"}'");
    REQUIRE_THAT(b2nd::AnyArray::open(a).attrs().get("creds").to_json(), Contains("PLANTED1"));
    // The file's own metadata is shown as it is (a field named "password" is the file's word,
    // issue 55); the credentials of URLs never are, wherever they stand.
    std::string all;
    for (const std::string& args : std::vector<std::string>{
             "info " + a, "info --json " + a, "meta " + a, "meta --json " + a,
             "meta " + a + " creds", "verify " + a,
             "info 'http://u:PLANTED4@127.0.0.1:1/a.b2nd?sig=PLANTED5' --timeout 1",
             "show 'https://u:PLANTED6@127.0.0.1:1/a.b2nd' --timeout 1"}) {
        const std::string out = tool(args);
        INFO(args << "\n" << out);
        for (const char* url_secret :
             {"PLANTED2", "PLANTED3", "PLANTED4", "PLANTED5", "PLANTED6"}) {
            CHECK_THAT(out, !Contains(url_secret));
        }
        all += out;
    }
    CHECK_THAT(all, Contains("https://h/x.b2nd") && Contains("PLANTED1"));

    // Over HTTP, from a real server: the path line, --json and verify name the URL bare.
    if (!b2nd::storage::http_available()) {
        WARN("B2ND-SKIP: this build has no libcurl: the served part of this test is skipped");
        return;
    }
    const auto server = ServerProcess::nginx(tmp.path());
    if (!server) {
        WARN("nginx is not installed: the served part of this test is skipped");
        return;
    }
    std::string url = server->url("a.b2nd");
    url.insert(url.find("://") + 3, "ann:PLANTED7@");
    url += "?sig=PLANTED8";
    for (const std::string& args : {"info '" + url + "'", "info --json '" + url + "'",
                                    "verify '" + url + "'", "show '" + url + "' --slice 99"}) {
        const std::string out = tool(args);
        INFO(args << "\n" << out);
        CHECK_THAT(out, !Contains("PLANTED7") && !Contains("PLANTED8") && !Contains("PLANTED2") &&
                            !Contains("PLANTED3"));
        CHECK((args.rfind("show", 0) == 0 || out.find("127.0.0.1") != std::string::npos));
    }
}
#endif
