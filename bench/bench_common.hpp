// Shared by the benchmark programs: timing and the splitmix64 finalizer of BENCHMARKS.md.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>

#include <b2nd/b2nd.hpp>

namespace b2nd::bench {

/// Best time of one call of fn over at least min_reps repetitions lasting min_seconds in all.
inline double best_seconds(const std::function<void()>& fn, double min_seconds, int min_reps = 3) {
    double best = 1e30, total = 0;
    for (int reps = 0; reps < min_reps || total < min_seconds; ++reps) {
        const auto t0 = std::chrono::steady_clock::now();
        fn();
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best = std::min(best, s);
        total += s;
    }
    return best;
}

/// Seconds one call of fn takes.
inline double seconds(const std::function<void()>& fn) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The smallest and largest of values over runs.
struct Range {
    double lo = 1e300, hi = 0;
    void add(double v) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
};

/// Where a benchmark writes: a new directory of its own, PARENT/b2nd-bench-NAME-XXXXXX (PARENT:
/// the user's --dir, else the temporary directory), removed at the end with what the benchmark
/// made in it, and nothing else: the user's directory and what it held stay.
class WorkDir {
public:
    WorkDir(const std::string& name, const std::string& parent = {}) {
        const std::filesystem::path base =
            parent.empty() ? std::filesystem::temp_directory_path() : std::filesystem::path(parent);
        std::filesystem::create_directories(base);
        std::string templ = (base / ("b2nd-bench-" + name + "-XXXXXX")).string();
        if (::mkdtemp(templ.data()) == nullptr) {
            throw std::runtime_error("cannot create a directory in " + base.string());
        }
        path_ = templ;
    }
    ~WorkDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    WorkDir(const WorkDir&) = delete;
    WorkDir& operator=(const WorkDir&) = delete;
    const std::string& path() const noexcept { return path_; }

private:
    std::string path_;
};

/// BENCHMARKS.md's mix(x).
inline std::uint64_t mix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/// BENCHMARKS.md's f32cube value at C-order position `flat` of a cube of `edge`^3.
inline float f32cube_value(std::size_t flat, std::int64_t edge) {
    constexpr double kTp = 2 * 3.14159265358979323846;
    const auto e = static_cast<std::size_t>(edge);
    const auto i = static_cast<double>(flat / (e * e));
    const auto j = static_cast<double>((flat / e) % e);
    const auto k = static_cast<double>(flat % e);
    const double a =
        20 * std::sin(kTp * i / 256) * std::cos(kTp * j / 300) + 0.05 * (j - 256) / 256;
    const double u = static_cast<double>(mix(flat) >> 11) / 9007199254740992.0;
    return static_cast<float>(a + 10 * std::sin(kTp * (i + k) / 200) + 0.01 * (u - 0.5));
}

/// The f32cube of `edge`^3 as an array at `path`, with `scale` and `shift` applied (operands
/// that differ), written chunk by chunk.
inline b2nd::NDArray<float> f32cube_array(const std::string& path,
                                          std::int64_t edge,
                                          float scale,
                                          float shift,
                                          const b2nd::CreateOptions& o) {
    auto a = b2nd::create<float>(path, {edge, edge, edge}, o);
    a.any().write_chunks(
        a.any().all_chunks(), [&](std::int64_t, const b2nd::Box& r, std::uint8_t* out) {
            float* p = reinterpret_cast<float*>(out);
            for (std::int64_t i = r.start[0]; i < r.start[0] + r.count[0]; ++i) {
                for (std::int64_t j = r.start[1]; j < r.start[1] + r.count[1]; ++j) {
                    for (std::int64_t k = r.start[2]; k < r.start[2] + r.count[2]; ++k) {
                        const auto flat = static_cast<std::size_t>((i * edge + j) * edge + k);
                        *p++ = f32cube_value(flat, edge) * scale + shift;
                    }
                }
            }
        });
    return a;
}

}  // namespace b2nd::bench
