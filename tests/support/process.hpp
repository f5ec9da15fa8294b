// Test-side helpers for tests with real processes: start a program with posix_spawn, read what
// it prints, wait for it or kill it.
#pragma once

#include <chrono>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace b2nd::test {

class Child {
public:
    /// Starts `argv[0]` with these arguments; its standard output goes to a pipe.
    explicit Child(const std::vector<std::string>& argv) {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) {
            throw std::runtime_error("pipe failed");
        }
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
        std::vector<char*> args;
        for (const auto& a : argv) {
            args.push_back(const_cast<char*>(a.c_str()));
        }
        args.push_back(nullptr);
        const int rc = ::posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        ::close(fds[1]);
        if (rc != 0) {
            ::close(fds[0]);
            throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
        }
        out_ = fds[0];
    }
    ~Child() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            int status = 0;
            ::waitpid(pid_, &status, 0);
        }
        if (out_ >= 0) {
            ::close(out_);
        }
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

    pid_t pid() const noexcept { return pid_; }

    /// Waits for the process to end and returns all it printed; `status` gets waitpid's status.
    std::string finish(int* status = nullptr) {
        std::string text = std::move(early_);
        early_.clear();
        char buf[4096];
        for (;;) {
            const ssize_t n = ::read(out_, buf, sizeof buf);
            if (n > 0) {
                text.append(buf, static_cast<std::size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                break;
            }
        }
        int st = 0;
        ::waitpid(pid_, &st, 0);
        pid_ = -1;
        if (status != nullptr) {
            *status = st;
        }
        return text;
    }

    /// Waits until the process has printed at least `n` bytes (kept for finish()): false when it
    /// closes its output first or `timeout_ms` passes.
    bool printed(std::size_t n, int timeout_ms) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        char buf[4096];
        while (early_.size() < n) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                until - std::chrono::steady_clock::now());
            pollfd p{out_, POLLIN, 0};
            if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) != 1) {
                return false;
            }
            const ssize_t got = ::read(out_, buf, sizeof buf);
            if (got <= 0) {
                return false;
            }
            early_.append(buf, static_cast<std::size_t>(got));
        }
        return true;
    }

    /// SIGKILL, then reap.
    void kill() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            int status = 0;
            ::waitpid(pid_, &status, 0);
            pid_ = -1;
        }
    }

private:
    pid_t pid_ = -1;
    int out_ = -1;
    std::string early_;  // what printed() read
};

/// The number after "key=" in `text`, or -1.
inline long long field(const std::string& text, const std::string& key) {
    const auto at = text.find(key + "=");
    return at == std::string::npos ? -1 : std::stoll(text.substr(at + key.size() + 1));
}

}  // namespace b2nd::test
