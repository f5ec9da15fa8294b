// Test helpers: HTTP servers on 127.0.0.1, as real processes the tests start and stop.
//   - nginx (Debian's package) with a generated configuration over a directory;
//   - the fault-injecting server tests/http/fault_server.py (Python's standard library).
// Each is absent-tolerant: nginx() / faults() return nothing when the program is missing, and
// the test skips, saying so.
#pragma once

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <b2nd/storage/http.hpp>

#include "temp_dir.hpp"
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace b2nd::test {

/// The first of `names` that is an executable file, searched in $PATH and /usr/sbin.
inline std::string find_program(const std::string& name) {
    std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
    path += ":/usr/sbin:/usr/local/sbin";
    std::size_t at = 0;
    while (at <= path.size()) {
        const std::size_t end = std::min(path.find(':', at), path.size());
        const std::string candidate = path.substr(at, end - at) + "/" + name;
        if (end > at && ::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
        at = end + 1;
    }
    return {};
}

/// A port nobody listens on now (the kernel's pick).
inline int free_port() {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(s);
    return ntohs(a.sin_port);
}

/// Whether something accepts connections on 127.0.0.1:port.
inline bool listening(int port) {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(s);
    return ok;
}

/// A server process, stopped (SIGTERM, then SIGKILL) when this goes.
class ServerProcess {
public:
    /// nginx serving `root` (static files, Range, ETag), or nothing when nginx is not installed.
    /// With `cert` and `key` (PEM files): https, HTTP/2 offered.
    /// `autoindex`: directories answer with nginx's HTML listing (200, chunked, no length).
    static std::unique_ptr<ServerProcess> nginx(const std::string& root,
                                                const std::string& cert = {},
                                                const std::string& key = {},
                                                bool autoindex = false) {
        const std::string bin = find_program("nginx");
        if (bin.empty()) {
            return nullptr;
        }
        // The port is picked before nginx binds it: another test may take it first (then nginx
        // exits), so a few tries.
        for (int attempt = 0; attempt < 4; ++attempt) {
            if (auto s = start_nginx(bin, root, cert, key, autoindex)) {
                return s;
            }
        }
        return nullptr;
    }
    /// tests/http/fault_server.py serving `root`, or nothing when python3 is not installed.
    static std::unique_ptr<ServerProcess> faults(const std::string& root, double delay_ms = 0) {
        const std::string bin = find_program("python3");
        if (bin.empty()) {
            return nullptr;
        }
        auto s = std::unique_ptr<ServerProcess>(new ServerProcess);
        s->spawn({bin, B2ND_FAULT_SERVER, "--root", root, "--delay-ms", std::to_string(delay_ms)},
                 true);
        if (s->port_ == 0 || !s->wait_listening()) {
            return nullptr;
        }
        return s;
    }

#ifdef B2ND_SIGV4_PROXY
    /// tests/http/sigv4_proxy.py in front of `upstream` (http://127.0.0.1:PORT): it forwards
    /// requests whose Signature Version 4 is right for `secret`, and answers 403 to the others;
    /// nothing when python3 is not installed.
    static std::unique_ptr<ServerProcess> sigv4_proxy(const std::string& upstream,
                                                      const std::string& secret) {
        const std::string bin = find_program("python3");
        if (bin.empty()) {
            return nullptr;
        }
        auto s = std::unique_ptr<ServerProcess>(new ServerProcess);
        s->spawn({bin, B2ND_SIGV4_PROXY, "--upstream", upstream, "--secret", secret}, true);
        if (s->port_ == 0 || !s->wait_listening()) {
            return nullptr;
        }
        return s;
    }
#endif
    /// s3rver (npm's s3rver@3.7.1, a real S3 protocol server) on a loopback port, with a data
    /// directory of its own holding `buckets`, or nothing when it is not installed. Its
    /// credentials are fixed: S3RVER / S3RVER. (It checks the access key; it does not check
    /// Signature Version 4 signatures.)
    static std::unique_ptr<ServerProcess> s3rver(const std::vector<std::string>& buckets) {
        const std::string bin = find_program("s3rver");
        if (bin.empty()) {
            return nullptr;
        }
        for (int attempt = 0; attempt < 4; ++attempt) {
            auto s = std::unique_ptr<ServerProcess>(new ServerProcess);
            s->port_ = free_port();
            const std::string data = s->dir_ / "data";
            ::mkdir(data.c_str(), 0700);
            std::vector<std::string> args = {
                bin, "-d", data, "-a", "127.0.0.1", "-p", std::to_string(s->port_), "--silent"};
            for (const std::string& b : buckets) {
                args.push_back("--configure-bucket");
                args.push_back(b);
            }
            s->spawn(args, false);
            if (s->wait_listening(1000)) {  // node takes a moment to start
                return s;
            }
        }
        return nullptr;
    }

private:
    static std::unique_ptr<ServerProcess> start_nginx(const std::string& bin,
                                                      const std::string& root,
                                                      const std::string& cert,
                                                      const std::string& key,
                                                      bool autoindex) {
        auto s = std::unique_ptr<ServerProcess>(new ServerProcess);
        s->port_ = free_port();
        s->tls_ = !cert.empty();
        const std::string conf = s->dir_ / "nginx.conf";
        std::ofstream(conf) << "daemon off;\nmaster_process off;\nworker_processes 1;\n"
                            << "error_log " << (s->dir_ / "error.log") << ";\n"
                            << "pid " << (s->dir_ / "nginx.pid") << ";\n"
                            << "events { worker_connections 512; }\n"
                            << "http {\n  access_log off;\n  sendfile on;\n"
                            << "  client_body_temp_path " << s->dir_.path() << ";\n"
                            << "  proxy_temp_path " << s->dir_.path() << ";\n"
                            << "  fastcgi_temp_path " << s->dir_.path() << ";\n"
                            << "  uwsgi_temp_path " << s->dir_.path() << ";\n"
                            << "  scgi_temp_path " << s->dir_.path() << ";\n"
                            << "  keepalive_requests 100000;\n"
                            << "  server { listen 127.0.0.1:" << s->port_
                            << (cert.empty() ? "" : " ssl http2") << "; root " << root << ";"
                            << (autoindex ? " autoindex on;" : "")
                            << (cert.empty() ? ""
                                             : " ssl_certificate " + cert +
                                                   "; ssl_certificate_key " + key + ";")
                            << " }\n}\n";
        s->spawn({bin, "-c", conf, "-p", s->dir_.path(), "-e", s->dir_ / "error.log"}, false);
        if (!s->wait_listening()) {
            return nullptr;
        }
        return s;
    }

public:
    ~ServerProcess() {
        if (pid_ > 0) {
            ::kill(pid_, SIGTERM);
            for (int i = 0; i < 100; ++i) {
                if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
                    return;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
    }
    ServerProcess(const ServerProcess&) = delete;
    ServerProcess& operator=(const ServerProcess&) = delete;

    int port() const noexcept {
        return port_;
    }
    /// http://127.0.0.1:PORT/rel (https:// for a server started with a certificate)
    std::string url(const std::string& rel) const {
        return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) +
               "/" + rel;
    }

private:
    ServerProcess() = default;

    void spawn(const std::vector<std::string>& args, bool read_port) {
        std::vector<char*> argv;
        for (const std::string& a : args) {
            argv.push_back(const_cast<char*>(a.c_str()));
        }
        argv.push_back(nullptr);
        int pipefd[2] = {-1, -1};
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        // The server's output goes nowhere (it must not hold the test's output open), but for
        // the fault server's first line: its port.
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        if (read_port) {
            if (::pipe(pipefd) != 0) {
                return;
            }
            posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
            posix_spawn_file_actions_addclose(&fa, pipefd[0]);
        }
        if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ) != 0) {
            pid_ = -1;
        }
        posix_spawn_file_actions_destroy(&fa);
        if (read_port) {
            ::close(pipefd[1]);
            // "PORT <n>\n"
            std::string line;
            char c = 0;
            while (line.size() < 64 && ::read(pipefd[0], &c, 1) == 1 && c != '\n') {
                line += c;
            }
            ::close(pipefd[0]);
            if (line.rfind("PORT ", 0) == 0) {
                port_ = std::atoi(line.c_str() + 5);
            }
        }
    }
    /// Whether the server came up: listening on its port, and still running (a server that could
    /// not bind exits, while another process may listen on that port).
    bool wait_listening(int polls = 250) {
        for (int i = 0; i < polls && pid_ > 0; ++i) {
            if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
                pid_ = -1;
                return false;
            }
            if (listening(port_)) {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
                    pid_ = -1;
                    return false;
                }
                return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return false;
    }

    TempDir dir_;
    int port_ = 0;
    bool tls_ = false;
    pid_t pid_ = -1;
};

/// nginx over `root` where this build reads URLs and nginx is installed; else null, and `why`
/// says which is missing (for B2ND_SKIP).
inline std::unique_ptr<ServerProcess> nginx_or_why(const std::string& root, std::string& why) {
    if (!b2nd::storage::http_available()) {
        why = "this build has no libcurl";
        return nullptr;
    }
    auto s = ServerProcess::nginx(root);
    if (!s) {
        why = "nginx is not installed (Debian package nginx)";
    }
    return s;
}

}  // namespace b2nd::test

/// `const auto& name = *make(why)`, or the test skips saying `why` when make returns null
/// (a server that could not be started: nginx or python3 missing, no libcurl).
#define B2ND_HTTP_FIXTURE(name, make)           \
    std::string name##_why;                     \
    const auto name##_owner = make(name##_why); \
    if (!name##_owner) {                        \
        B2ND_SKIP(name##_why);                  \
    }                                           \
    const auto& name = *name##_owner
