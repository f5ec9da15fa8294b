// Test helpers: the b2nd tool run through the shell (B2ND_CLI_PATH), as a user runs it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include <catch2/catch.hpp>

#include <sys/wait.h>

#ifdef B2ND_CLI_PATH

namespace b2nd::test {

/// Runs the b2nd tool with `args` (a shell command line's tail; `env` before it, as
/// "NAME=value ..."); its exit code.
inline int tool(const std::string& args, const std::string& env = {}) {
    const int status = std::system(
        (env + (env.empty() ? "" : " ") + B2ND_CLI_PATH + " " + args + " > /dev/null 2>&1")
            .c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace b2nd::test

#endif

namespace b2nd::test {

/// Runs a shell command; what it prints (add 2>&1 for stderr); `status`: its exit code, or -1
/// when killed.
inline std::string command_text(const std::string& cmd, int* status = nullptr) {
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string out;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) {
        out.append(buf, n);
    }
    const int st = ::pclose(p);
    if (status != nullptr) {
        *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    }
    return out;
}

#ifdef B2ND_CLI_PATH
/// Runs the b2nd tool; what it prints (stderr too).
inline std::string tool_text(const std::string& args, const std::string& env = {}) {
    return command_text(env + (env.empty() ? "" : " ") + B2ND_CLI_PATH + " " + args + " 2>&1");
}
#endif

}  // namespace b2nd::test
