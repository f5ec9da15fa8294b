// Runs the b2nd tool (B2ND_CLI_PATH) through the shell and collects its exit code and output.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <sys/wait.h>

namespace b2nd::test {

struct Run {
    int status;  // exit code; -1 when killed by a signal
    std::string output;
};

/// Runs `b2nd ARGS` (stderr merged into the output; `env` is put before the command).
inline Run run(const std::string& args, const std::string& env = "") {
    const std::string cmd = env + " '" + B2ND_CLI_PATH + "' " + args + " 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    Run r{0, {}};
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) {
        r.output.append(buf, n);
    }
    const int st = ::pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

/// A .npy file's bytes, made by hand (not by the library under test): version 1.0, C order.
inline std::vector<std::uint8_t> npy_bytes(const std::string& descr,
                                           const std::string& shape,
                                           const std::vector<std::uint8_t>& payload) {
    std::string dict =
        "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    while ((10 + dict.size() + 1) % 64 != 0) {
        dict += ' ';
    }
    dict += '\n';
    std::vector<std::uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    out.push_back(static_cast<std::uint8_t>(dict.size() & 0xff));
    out.push_back(static_cast<std::uint8_t>(dict.size() >> 8));
    out.insert(out.end(), dict.begin(), dict.end());
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

/// The peak resident memory, in KiB, of `b2nd ARGS` (output to /dev/null), as GNU time
/// measures it (a process spawned from this one would report this one's peak as well); -1 when
/// it fails.
/// Whether peak_rss_kib measures anything meaningful in this build (not under a sanitizer).
inline bool memory_measurable() {
#ifdef B2ND_SANITIZED
    return false;
#else
    return true;
#endif
}

inline long peak_rss_kib(const std::string& args) {
    const std::string cmd = "/usr/bin/time -f '%M' -o /dev/fd/3 '" + std::string(B2ND_CLI_PATH) +
                            "' " + args + " 3>&1 > /dev/null 2>/dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[64] = {};
    const std::size_t n = std::fread(buf, 1, sizeof buf - 1, p);
    const int st = ::pclose(p);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 && n > 0 ? std::atol(buf) : -1;
}

inline std::string q(const std::string& s) {
    return "'" + s + "'";
}

/// Debian's python3 (with python3-h5py and python3-zarr), else the one on the PATH.
inline std::string python3() {
    return std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

/// Runs a Python `script` (written to DIR/make.py) with DIR as its argument, `env` before it:
/// how tests make files with h5py and zarr-python. The script exits 77 when a module it needs
/// is missing. \returns its exit status
inline int run_python(const std::string& script,
                      const std::string& dir,
                      const std::string& env = "") {
    {
        std::ofstream f(dir + "/make.py");
        f << script;
    }
    const std::string cmd = env + (env.empty() ? "" : " ") + python3() + " " + q(dir + "/make.py") +
                            " " + q(dir) + " > /dev/null 2>&1";
    const int st = std::system(cmd.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/// run_python with numpy imported as np first (the script exits 77 without it): how tests make
/// their expected arrays. \returns its exit status
inline int run_numpy(const std::string& body, const std::string& dir) {
    return run_python(
        "import sys\n"
        "try:\n"
        "    import numpy as np\n"
        "except ImportError:\n"
        "    sys.exit(77)\n" +
            body,
        dir);
}

}  // namespace b2nd::test

/// Runs `body` with run_numpy in `dir`; the test is skipped, saying so, when numpy is missing.
#define B2ND_NUMPY_OR_SKIP(body, dir)                               \
    do {                                                            \
        const int numpy_status_ = b2nd::test::run_numpy(body, dir); \
        if (numpy_status_ == 77) {                                  \
            B2ND_SKIP("numpy is not installed (python3-numpy)");    \
        }                                                           \
        REQUIRE(numpy_status_ == 0);                                \
    } while (0)
