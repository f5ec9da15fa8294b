// S3 configuration as the AWS CLI resolves it (s3.hpp): options, then the environment, then
// the shared credentials and config files.
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <b2nd/error.hpp>
#include <b2nd/storage/s3.hpp>

#include "../../detail/text.hpp"

namespace b2nd::storage {

namespace {

using Section = std::map<std::string, std::string>;

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr ? std::string(v) : std::string();
}

std::string trim(const std::string& s) {
    const std::size_t a = s.find_first_not_of(" \t\r");
    if (a == std::string::npos) {
        return {};
    }
    const std::size_t b = s.find_last_not_of(" \t\r");
    return s.substr(a, b - a + 1);
}

/// Section `name` of the INI file at `path` (empty when the file or the section is missing;
/// `found`, when given, says whether the section's header is there)
/// \throws FormatError naming the file and line for a line that is neither a section, a
/// `key = value` nor a comment (never quoting the line: it may hold a secret)
Section ini_section(const std::string& path, const std::string& name, bool* found = nullptr) {
    std::ifstream in(path);
    Section out;
    if (!in) {
        return out;
    }
    std::string line;
    std::string current;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        const std::string t = trim(line);
        if (t.empty() || t[0] == '#' || t[0] == ';') {
            continue;
        }
        if (t.front() == '[') {
            if (t.back() != ']') {
                throw FormatError(detail::quoted_path(path) + ": line " + std::to_string(number) +
                                  ": a section header without its ']'");
            }
            current = trim(t.substr(1, t.size() - 2));
            if (found != nullptr && current == name) {
                *found = true;
            }
            continue;
        }
        const std::size_t eq = t.find('=');
        if (eq == std::string::npos) {
            if (line.find_first_not_of(" \t") != 0) {
                continue;  // an indented continuation (nested settings): not ours
            }
            throw FormatError(detail::quoted_path(path) + ": line " + std::to_string(number) +
                              ": neither a [section] nor a key = value");
        }
        if (current == name) {
            out[trim(t.substr(0, eq))] = trim(t.substr(eq + 1));
        }
    }
    return out;
}

std::string home_file(const char* var, const char* rel) {
    if (std::string p = env(var); !p.empty()) {
        return p;
    }
    const std::string home = env("HOME");
    return home.empty() ? std::string() : home + "/" + rel;
}

bool yes(const std::string& v) {
    std::string l;
    for (char c : v) {
        l += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    return l == "yes" || l == "true" || l == "1";
}

}  // namespace

S3Config resolve_s3(const S3Options& o) {
    S3Config c;
    const bool envs = o.use_environment;
    const bool named = !o.profile.empty() || (envs && !env("AWS_PROFILE").empty());
    const std::string profile =
        !o.profile.empty() ? o.profile
                           : (envs && !env("AWS_PROFILE").empty() ? env("AWS_PROFILE") : "default");
    bool profile_found = false;
    Section creds;
    Section config;
    std::string creds_file;
    std::string config_file;
    if (envs) {
        creds_file = home_file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
        config_file = home_file("AWS_CONFIG_FILE", ".aws/config");
        if (!creds_file.empty()) {
            creds = ini_section(creds_file, profile, &profile_found);
        }
        if (!config_file.empty()) {
            config = ini_section(
                config_file, profile == "default" ? std::string("default") : "profile " + profile,
                &profile_found);
        }
        if (named && !profile_found) {
            // As the AWS CLI: a profile asked for by name must exist (not "no credentials").
            throw UsageError("AWS profile \"" + profile + "\" not found: no [" + profile + "] in " +
                             detail::quoted_path(creds_file) + " and no [" +
                             (profile == "default" ? profile : "profile " + profile) + "] in " +
                             detail::quoted_path(config_file));
        }
    }
    const auto from = [](const Section& s, const char* key) {
        const auto it = s.find(key);
        return it != s.end() ? it->second : std::string();
    };
    // Credentials: all from one place, never mixed.
    if (!o.access_key_id.empty()) {
        c.access_key_id = o.access_key_id;
        c.secret_access_key = o.secret_access_key;
        c.session_token = o.session_token;
        c.credentials_from = "options";
    } else if (envs && !env("AWS_ACCESS_KEY_ID").empty()) {
        c.access_key_id = env("AWS_ACCESS_KEY_ID");
        c.secret_access_key = env("AWS_SECRET_ACCESS_KEY");
        c.session_token = env("AWS_SESSION_TOKEN");
        c.credentials_from = "environment";
    } else if (!from(creds, "aws_access_key_id").empty()) {
        c.access_key_id = from(creds, "aws_access_key_id");
        c.secret_access_key = from(creds, "aws_secret_access_key");
        c.session_token = from(creds, "aws_session_token");
        c.credentials_from = creds_file + " [" + profile + "]";
    } else if (!from(config, "aws_access_key_id").empty()) {
        c.access_key_id = from(config, "aws_access_key_id");
        c.secret_access_key = from(config, "aws_secret_access_key");
        c.session_token = from(config, "aws_session_token");
        c.credentials_from = config_file + " [" + profile + "]";
    } else {
        c.credentials_from = "none";
    }
    // The first that is set: options, then variables (when the environment is read), then a
    // fallback.
    const auto first = [&](const std::string& set, std::initializer_list<const char*> vars,
                           const std::string& otherwise) {
        if (!set.empty()) {
            return set;
        }
        for (const char* v : vars) {
            if (envs && !env(v).empty()) {
                return env(v);
            }
        }
        return otherwise;
    };
    c.region = first(o.region, {"AWS_REGION", "AWS_DEFAULT_REGION"},
                     from(config, "region").empty() ? "us-east-1" : from(config, "region"));
    // A region becomes part of a host name and of the signature's scope: letters, digits and
    // '-' only, or a region such as "x.example.org/" would send requests to another host.
    for (const char ch : c.region) {
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '-')) {
            throw UsageError("S3 region \"" + c.region +
                             "\": not a region name (letters, digits and '-')");
        }
    }
    c.endpoint = first(o.endpoint, {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"},
                       from(config, "endpoint_url"));
    while (!c.endpoint.empty() && c.endpoint.back() == '/') {
        c.endpoint.pop_back();
    }
    if (o.no_sign.has_value()) {
        c.sign = !*o.no_sign;
    } else {
        c.sign = !(envs && yes(env("AWS_NO_SIGN_REQUEST")));
    }
    return c;
}

std::pair<std::string, std::string> s3_bucket_key(const std::string& url) {
    constexpr std::size_t kScheme = 5;  // "s3://"
    const auto lower = [](char ch) { return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch; };
    const bool scheme = url.size() > kScheme && lower(url[0]) == 's' && url[1] == '3' &&
                        url.compare(2, 3, "://") == 0;
    const std::size_t slash = scheme ? url.find('/', kScheme) : std::string::npos;
    if (!scheme || slash == kScheme || slash == std::string::npos || slash + 1 == url.size()) {
        throw UsageError("\"" + url + "\": not an s3://BUCKET/KEY URL");
    }
    std::string bucket = url.substr(kScheme, slash - kScheme);
    // Bucket names are letters, digits, '.', '-' (and '_' in old ones): anything else would
    // name another host or port in the request's URL.
    for (const char ch : bucket) {
        const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                        (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_';
        if (!ok || bucket.size() > 255) {
            throw UsageError("\"" + url.substr(0, slash) +
                             "\": not an S3 bucket name (letters, digits, '.', '-', '_')");
        }
    }
    return {std::move(bucket), url.substr(slash + 1)};
}

std::string s3_request_url(const std::string& url, const S3Config& c) {
    const auto [bucket, key] = s3_bucket_key(url);
    // The key, each byte outside S3's safe set percent-encoded ('/' kept).
    const std::string path = detail::percent_encoded(key, "-_.~/");
    if (!c.endpoint.empty()) {
        return c.endpoint + "/" + bucket + "/" + path;
    }
    return "https://" + bucket + ".s3." + c.region + ".amazonaws.com/" + path;
}

}  // namespace b2nd::storage
