// S3 configuration resolved as the AWS CLI resolves it (storage/s3.hpp): what S3Options set wins,
// then AWS_* variables, then the profile's section of the credentials file, then of the config
// file; region and endpoint likewise; addressing path-style for a custom endpoint and
// virtual-hosted for AWS. Nothing here prints a secret.
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/error.hpp>
#include <b2nd/storage/s3.hpp>

#include "support/temp_dir.hpp"

using b2nd::storage::resolve_s3;
using b2nd::storage::S3Options;
using Catch::Matchers::Contains;

namespace {

/// Sets (or unsets, for null) environment variables for one scope, restoring them after.
class Env {
public:
    Env(std::initializer_list<std::pair<const char*, const char*>> vars) {
        for (const char* name : kAll) {
            const char* old = std::getenv(name);
            saved_.push_back({name, old != nullptr, old != nullptr ? old : ""});
            ::unsetenv(name);
        }
        for (const auto& [k, v] : vars) {
            if (v != nullptr) {
                ::setenv(k, v, 1);
            }
        }
    }
    ~Env() {
        for (const Saved& s : saved_) {
            if (s.had) {
                ::setenv(s.name, s.value.c_str(), 1);
            } else {
                ::unsetenv(s.name);
            }
        }
    }
    Env(const Env&) = delete;
    Env& operator=(const Env&) = delete;

private:
    static constexpr const char* kAll[] = {"AWS_ACCESS_KEY_ID",
                                           "AWS_SECRET_ACCESS_KEY",
                                           "AWS_SESSION_TOKEN",
                                           "AWS_PROFILE",
                                           "AWS_REGION",
                                           "AWS_DEFAULT_REGION",
                                           "AWS_ENDPOINT_URL_S3",
                                           "AWS_ENDPOINT_URL",
                                           "AWS_NO_SIGN_REQUEST",
                                           "AWS_CONFIG_FILE",
                                           "AWS_SHARED_CREDENTIALS_FILE"};
    struct Saved {
        const char* name;
        bool had;
        std::string value;
    };
    std::vector<Saved> saved_;
};

}  // namespace

TEST_CASE("s3 config: options win, then the environment, then the profile's files",
          "[storage][s3]") {
    b2nd::test::TempDir dir;
    const std::string creds = dir / "credentials";
    const std::string config = dir / "config";
    std::ofstream(creds) << "# comment\n[default]\naws_access_key_id = FILEKEY\n"
                         << "aws_secret_access_key = filesecret\n\n[work]\n"
                         << "aws_access_key_id=WORKKEY\naws_secret_access_key=worksecret\n"
                         << "aws_session_token = worktoken\n";
    std::ofstream(config) << "[default]\nregion = eu-west-1\n[profile work]\nregion = ap-south-1\n"
                          << "s3 =\n  addressing_style = path\n";
    {
        Env env(
            {{"AWS_SHARED_CREDENTIALS_FILE", creds.c_str()}, {"AWS_CONFIG_FILE", config.c_str()}});
        const auto c = resolve_s3();
        CHECK(c.access_key_id == "FILEKEY");
        CHECK(c.secret_access_key == "filesecret");
        CHECK(c.region == "eu-west-1");
        CHECK(c.endpoint.empty());
        CHECK(c.sign);
        CHECK(c.credentials_from == creds + " [default]");
    }
    {
        Env env({{"AWS_SHARED_CREDENTIALS_FILE", creds.c_str()},
                 {"AWS_CONFIG_FILE", config.c_str()},
                 {"AWS_PROFILE", "work"}});
        const auto c = resolve_s3();
        CHECK(c.access_key_id == "WORKKEY");
        CHECK(c.session_token == "worktoken");
        CHECK(c.region == "ap-south-1");  // [profile work] in the config file
    }
    {
        Env env({{"AWS_SHARED_CREDENTIALS_FILE", creds.c_str()},
                 {"AWS_CONFIG_FILE", config.c_str()},
                 {"AWS_ACCESS_KEY_ID", "ENVKEY"},
                 {"AWS_SECRET_ACCESS_KEY", "envsecret"},
                 {"AWS_DEFAULT_REGION", "us-west-2"},
                 {"AWS_ENDPOINT_URL", "http://127.0.0.1:9000/"},
                 {"AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9001/"}});
        auto c = resolve_s3();
        CHECK(c.access_key_id == "ENVKEY");
        CHECK(c.secret_access_key == "envsecret");
        CHECK(c.session_token.empty());  // never mixed with the file's
        CHECK(c.credentials_from == "environment");
        CHECK(c.region == "us-west-2");
        CHECK(c.endpoint == "http://127.0.0.1:9001");  // the S3-specific one, its '/' dropped
        S3Options o;
        o.access_key_id = "OPTKEY";
        o.secret_access_key = "optsecret";
        o.region = "sa-east-1";
        o.endpoint = "http://minio:9000";
        c = resolve_s3(o);
        CHECK(c.access_key_id == "OPTKEY");
        CHECK(c.region == "sa-east-1");
        CHECK(c.endpoint == "http://minio:9000");
        CHECK(c.credentials_from == "options");
        o.use_environment = false;
        o.region.clear();
        o.endpoint.clear();
        c = resolve_s3(o);
        CHECK(c.region == "us-east-1");
        CHECK(c.endpoint.empty());
    }
    {
        Env env({{"AWS_SHARED_CREDENTIALS_FILE", (dir / "none").c_str()},
                 {"AWS_CONFIG_FILE", (dir / "none").c_str()},
                 {"AWS_NO_SIGN_REQUEST", "YES"}});
        const auto c = resolve_s3();
        CHECK_FALSE(c.sign);
        CHECK(c.credentials_from == "none");
        CHECK(c.region == "us-east-1");
        S3Options o;
        o.no_sign = false;
        CHECK(resolve_s3(o).sign);
    }
}

TEST_CASE("s3 config: a profile's endpoint_url is taken; a profile that is not there is named",
          "[storage][s3]") {
    b2nd::test::TempDir dir;
    const std::string creds = dir / "credentials";
    const std::string config = dir / "config";
    std::ofstream(creds) << "[lab]\naws_access_key_id = LABKEY\naws_secret_access_key = s\n";
    std::ofstream(config) << "[profile lab]\nregion = eu-north-1\n"
                          << "endpoint_url = http://127.0.0.1:9000/\n";
    {
        Env env({{"AWS_SHARED_CREDENTIALS_FILE", creds.c_str()},
                 {"AWS_CONFIG_FILE", config.c_str()},
                 {"AWS_PROFILE", "lab"}});
        const auto c = resolve_s3();
        CHECK(c.access_key_id == "LABKEY");
        CHECK(c.region == "eu-north-1");
        CHECK(c.endpoint == "http://127.0.0.1:9000");  // as the AWS CLI takes it
    }
    {
        Env env({{"AWS_SHARED_CREDENTIALS_FILE", creds.c_str()},
                 {"AWS_CONFIG_FILE", config.c_str()},
                 {"AWS_PROFILE", "labb"}});
        // It said "no S3 credentials".
        CHECK_THROWS_WITH(resolve_s3(), Contains("AWS profile \"labb\" not found") &&
                                            Contains("credentials") && Contains("[profile labb]"));
        S3Options o;
        o.profile = "lab";  // the options' profile wins over AWS_PROFILE
        CHECK(resolve_s3(o).access_key_id == "LABKEY");
    }
}

TEST_CASE("s3 config: a damaged credentials file is refused by name, never quoting it",
          "[storage][s3]") {
    b2nd::test::TempDir dir;
    const std::string creds = dir / "credentials";
    std::ofstream(creds) << "[default]\naws_access_key_id = K\nsupersecretvalue-without-equals\n";
    Env env({{"AWS_SHARED_CREDENTIALS_FILE", creds.c_str()},
             {"AWS_CONFIG_FILE", (dir / "none").c_str()}});
    try {
        (void)resolve_s3();
        FAIL("a damaged credentials file was read");
    } catch (const b2nd::FormatError& e) {
        const std::string what = e.what();
        CHECK_THAT(what, Catch::Contains(creds) && Catch::Contains("line 3"));
        CHECK(what.find("supersecret") == std::string::npos);
    }
}

TEST_CASE("s3 config: a region that is no region name is refused, never made a host",
          "[storage][s3]") {
    Env env({});
    for (const char* bad : {"x.example.org/", "eu-west-1:s3", "a b", "us-east-1@evil"}) {
        INFO(bad);
        S3Options o;
        o.use_environment = false;
        o.region = bad;
        CHECK_THROWS_AS(resolve_s3(o), b2nd::UsageError);
    }
    S3Options ok;
    ok.use_environment = false;
    ok.region = "eu-west-1";
    CHECK(resolve_s3(ok).region == "eu-west-1");
}

TEST_CASE("s3 config: URLs map to path-style requests for an endpoint, virtual-hosted for AWS",
          "[storage][s3]") {
    b2nd::storage::S3Config c;
    c.region = "eu-central-1";
    CHECK(b2nd::storage::s3_request_url("s3://climate/run 7/t.b2nd", c) ==
          "https://climate.s3.eu-central-1.amazonaws.com/run%207/t.b2nd");
    c.endpoint = "http://127.0.0.1:9000";
    CHECK(b2nd::storage::s3_request_url("s3://climate/a/b.b2nd", c) ==
          "http://127.0.0.1:9000/climate/a/b.b2nd");
    CHECK(b2nd::storage::s3_bucket_key("S3://b/k/x") ==
          std::pair<std::string, std::string>{"b", "k/x"});
    for (const char* bad : {"s3://", "s3://bucket", "s3://bucket/", "s3:///key", "http://b/k",
                            "s3://user@host/key", "s3://b:1/key"}) {
        INFO(bad);
        CHECK_THROWS_AS(b2nd::storage::s3_bucket_key(bad), b2nd::UsageError);
    }
}
