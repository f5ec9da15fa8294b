// Test helpers: an S3 store on 127.0.0.1 (s3rver, started per test) with a bucket, objects put
// into it by Debian's s3cmd (an independent client), and the S3Options that reach it. Our
// requests go through tests/http/sigv4_proxy.py, which checks their Signature Version 4 (s3rver
// checks only the access key) and answers 403 where it is wrong.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <b2nd/storage/http.hpp>
#include <b2nd/storage/s3.hpp>

#include "http_servers.hpp"
#include "temp_dir.hpp"

namespace b2nd::test {

class S3Store {
public:
    /// s3rver with bucket `bucket`, or null with `why` set (no libcurl, no s3rver, no s3cmd).
    static std::unique_ptr<S3Store> start(std::string& why, const std::string& bucket = "bkt") {
        if (!b2nd::storage::http_available()) {
            why = "this build has no libcurl";
            return nullptr;
        }
        if (find_program("s3cmd").empty()) {
            why = "s3cmd is not installed (Debian package s3cmd)";
            return nullptr;
        }
        auto s = std::unique_ptr<S3Store>(new S3Store);
        s->server_ = ServerProcess::s3rver({bucket});
        if (!s->server_) {
            why = "s3rver is not installed (npm install -g s3rver@3.7.1)";
            return nullptr;
        }
        s->bucket_ = bucket;
        s->proxy_ = ServerProcess::sigv4_proxy(
            "http://127.0.0.1:" + std::to_string(s->server_->port()), "S3RVER");
        if (!s->proxy_) {
            why = "python3 is not installed (it runs the signature-checking proxy)";
            return nullptr;
        }
        const std::string hostport = "127.0.0.1:" + std::to_string(s->server_->port());
        std::ofstream(s->config()) << "[default]\naccess_key = S3RVER\nsecret_key = S3RVER\n"
                                   << "host_base = " << hostport << "\nhost_bucket = " << hostport
                                   << "\nuse_https = False\nsignature_v2 = False\n";
        return s;
    }

    /// http://127.0.0.1:PORT of the signature-checking proxy in front of the store.
    std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(proxy_->port()); }
    /// s3://BUCKET/key
    std::string url(const std::string& key) const { return "s3://" + bucket_ + "/" + key; }
    /// Options that reach this store with its credentials, the environment ignored.
    b2nd::storage::S3Options options() const {
        b2nd::storage::S3Options o;
        o.endpoint = endpoint();
        o.access_key_id = "S3RVER";
        o.secret_access_key = "S3RVER";
        o.use_environment = false;
        return o;
    }
    /// Puts local files and directories (recursively) under s3://BUCKET/prefix with s3cmd, in
    /// one run; false when s3cmd failed.
    bool put(const std::vector<std::string>& paths, const std::string& prefix) const {
        std::string cmd = "s3cmd -q -c '" + config() + "' put --recursive";
        for (const std::string& p : paths) {
            cmd += " '" + p + "'";
        }
        cmd += " '" + url(prefix) + "' > /dev/null 2>&1";
        return std::system(cmd.c_str()) == 0;
    }
    /// Downloads s3://BUCKET/key to `local` with s3cmd; false when it failed.
    bool get(const std::string& key, const std::string& local) const {
        const std::string cmd = "s3cmd -q -c '" + config() + "' get --force '" + url(key) + "' '" +
                                local + "' > /dev/null 2>&1";
        return std::system(cmd.c_str()) == 0;
    }

    /// Downloads every object under s3://BUCKET/prefix/ into the directory `local` with s3cmd.
    bool get_tree(const std::string& prefix, const std::string& local) const {
        const std::string cmd = "mkdir -p '" + local + "' && s3cmd -q -c '" + config() +
                                "' get --recursive --force '" + url(prefix) + "/' '" + local +
                                "/' > /dev/null 2>&1";
        return std::system(cmd.c_str()) == 0;
    }
    /// The keys under s3://BUCKET/prefix, as s3cmd lists them (recursively).
    std::vector<std::string> keys(const std::string& prefix = "") const {
        const std::string cmd =
            "s3cmd -c '" + config() + "' ls --recursive '" + url(prefix) + "' 2>/dev/null";
        std::vector<std::string> out;
        if (FILE* p = ::popen(cmd.c_str(), "r")) {
            char line[4096];
            while (std::fgets(line, sizeof line, p) != nullptr) {
                std::string l(line);
                const std::size_t at = l.find("s3://" + bucket_ + "/");
                if (at != std::string::npos) {
                    l = l.substr(at + 6 + bucket_.size());
                    while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) {
                        l.pop_back();
                    }
                    out.push_back(l);
                }
            }
            ::pclose(p);
        }
        return out;
    }
    /// Sets the proxy's faults (sigv4_proxy.py's /_faults: "fail_part=N", "delay_ms=D",
    /// "delay_ms=D&delay_from_part=N"; empty resets them); false when the proxy did not answer.
    bool faults(const std::string& query) const {
        const std::string cmd = "python3 -c \"import urllib.request; urllib.request.urlopen('" +
                                endpoint() + "/_faults?" + query + "').read()\"";
        return std::system(cmd.c_str()) == 0;
    }
    /// The proxy's count of multipart upload parts it forwarded.
    long parts_forwarded() const {
        const std::string cmd =
            "python3 -c \"import urllib.request, json; print(json.load("
            "urllib.request.urlopen('" +
            endpoint() + "/_stats'))['parts'])\"";
        long n = -1;
        if (FILE* p = ::popen(cmd.c_str(), "r")) {
            if (std::fscanf(p, "%ld", &n) != 1) {
                n = -1;
            }
            ::pclose(p);
        }
        return n;
    }
    /// The environment of an AWS CLI user of this store, and nothing else (no AWS files).
    std::string environment() const {
        return "AWS_ENDPOINT_URL='" + endpoint() +
               "' AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER "
               "AWS_SHARED_CREDENTIALS_FILE=/nonexistent AWS_CONFIG_FILE=/nonexistent";
    }

private:
    S3Store() = default;
    std::string config() const { return dir_ / "s3cfg"; }

    TempDir dir_;
    std::unique_ptr<ServerProcess> server_;
    std::unique_ptr<ServerProcess> proxy_;
    std::string bucket_;
};

}  // namespace b2nd::test
