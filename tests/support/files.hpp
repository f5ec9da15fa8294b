// Test helpers: the shared corpus location, whole-file reads, deterministic data.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace b2nd::test {

/// The corpus folder (CMake's B2ND_CORPUS_DIR), or "" when it is absent.
inline std::string corpus_dir() {
    std::ifstream probe(std::string(B2ND_CORPUS_DIR) + "/README.md");
    return probe ? std::string(B2ND_CORPUS_DIR) : std::string();
}

/// Marks the running test as skipped (ctest reports it as such through SKIP_REGULAR_EXPRESSION).
#define B2ND_SKIP(why)                                            \
    do {                                                          \
        WARN("B2ND-SKIP: " << why);                               \
        std::printf("B2ND-SKIP: %s\n", std::string(why).c_str()); \
        return;                                                   \
    } while (0)

/// Copies a file or directory of the corpus (read-only, and never written by tests) into a test's
/// own directory, writable by its owner: b2nd's writers refuse read-only files.
inline void copy_writable(const std::string& from, const std::string& to) {
    namespace fs = std::filesystem;
    fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    fs::permissions(to, fs::perms::owner_write, fs::perm_options::add);
    if (fs::is_directory(to)) {
        for (const auto& e : fs::recursive_directory_iterator(to)) {
            fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
        }
    }
}

inline std::vector<std::uint8_t> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot open " + path);
    }
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Replaces the file's bytes with `bytes`.
inline void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
}

/// Flips bit 4 of the file's byte `at`.
inline void flip_byte(const std::string& path, std::uint64_t at) {
    auto bytes = read_file(path);
    bytes.at(static_cast<std::size_t>(at)) ^= 0x10;
    write_file(path, bytes);
}

inline std::string read_text(const std::string& path) {
    const auto b = read_file(path);
    return {b.begin(), b.end()};
}

/// Overwrites `n` bytes of the file from a third of its length with 0x5a: inside the compressed
/// chunks of a small array, while its header and chunk index stay readable.
inline void garble_middle(const std::string& path, std::size_t n = 8) {
    auto bytes = read_file(path);
    for (std::size_t i = bytes.size() / 3; i < bytes.size() / 3 + n && i < bytes.size(); ++i) {
        bytes[i] = 0x5a;
    }
    write_file(path, bytes);
}

inline std::vector<std::string> read_lines(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        if (!line.empty()) {
            lines.push_back(line);
        }
    }
    return lines;
}

/// splitmix64: deterministic pseudo-random numbers for test data.
struct SplitMix {
    std::uint64_t state;
    explicit SplitMix(std::uint64_t seed) : state(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    /// Uniform in [0, n).
    std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }
};

}  // namespace b2nd::test

namespace b2nd::test {

/// "" when equal, else a description of the first difference (keeps Catch2 from printing MBs).
template <class A, class B>
std::string first_difference(const A& got, const B& want) {
    const std::size_t n = std::min<std::size_t>(got.size(), want.size());
    for (std::size_t i = 0; i < n; ++i) {
        if (got[i] != want[i]) {
            return "first difference at byte " + std::to_string(i) + ": got " +
                   std::to_string(static_cast<int>(got[i])) + ", want " +
                   std::to_string(static_cast<int>(want[i])) + " (sizes " +
                   std::to_string(got.size()) + " / " + std::to_string(want.size()) + ")";
        }
    }
    if (got.size() != want.size()) {
        return "sizes differ: got " + std::to_string(got.size()) + ", want " +
               std::to_string(want.size());
    }
    return "";
}

}  // namespace b2nd::test

#define B2ND_REQUIRE_SAME_BYTES(got, want) \
    REQUIRE(b2nd::test::first_difference((got), (want)) == std::string())
