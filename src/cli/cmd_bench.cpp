// b2nd bench PATH: the standard workloads (BENCHMARKS.md) on the user's own array.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>
#include <b2nd/value.hpp>

#include "cli.hpp"

namespace b2nd::cli {

namespace {

const char* const kBenchHelp =
    "usage: b2nd bench PATH [--repeat N] [--nthreads N] [--json]\n"
    "\n"
    "Times reading the array as the project's benchmarks do, with the file in the page cache\n"
    "(one read first) and buffers allocated and touched before timing:\n"
    "  full    the whole array into one buffer (skipped when it does not fit in memory)\n"
    "  slice   8 evenly spaced hyperplanes per axis, time per plane\n"
    "  point   1000 random elements, per element, with a cold and a warm block cache\n"
    "  box     200 random boxes of edge 16 (clipped at the end), per box\n"
    "Each is run --repeat times (default 3); the range over runs is printed, with throughput in\n"
    "GB/s of uncompressed data.\n"
    "\n"
    "example:\n"
    "  b2nd bench t.b2nd --nthreads 1\n";

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Range {
    double lo = 1e300, hi = 0;
    void add(double v) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
};

/// v with `digits` significant digits (%g), or fixed with `digits` decimals when `fixed`.
std::string fmt(double v, int digits, bool fixed) {
    char buf[64];
    if (fixed) {
        std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    } else {
        std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    }
    return buf;
}

/// "1.23–1.31 ms" from a range of seconds, in a unit that fits.
std::string time_range(const Range& r) {
    const char* unit = "s";
    double k = 1;
    if (r.hi < 1e-3) {
        unit = "us";
        k = 1e6;
    } else if (r.hi < 1) {
        unit = "ms";
        k = 1e3;
    }
    return fmt(r.lo * k, 3, false) + "-" + fmt(r.hi * k, 3, false) + " " + unit;
}

std::string rate_range(const Range& seconds, double bytes) {
    return fmt(bytes / seconds.hi / 1e9, 2, true) + "-" + fmt(bytes / seconds.lo / 1e9, 2, true) +
           " GB/s";
}

}  // namespace

int cmd_bench(const std::vector<std::string>& argv) {
    const Args a = Args::parse(argv, {"--repeat", "--nthreads", "--dtype"}, {"--json", "--help"});
    if (a.has("--help")) {
        std::cout << kBenchHelp;
        return 0;
    }
    if (a.positional.size() != 1) {
        throw ArgError("expected one PATH");
    }
    const int repeat = static_cast<int>(a.get_int("--repeat", 3, 1, 1000));
    OpenOptions o = input_options(a);
    o.cache_bytes = kDefaultCacheBytes;
    AnyArray arr = open_input(a.positional[0], o);
    const Grid& g = arr.grid();
    const int nd = arr.ndim();
    const auto isz = static_cast<double>(arr.itemsize());
    std::mt19937_64 rng(12345);
    Value::Map results;

    // full
    bool fits = true;
    try {
        detail::require_memory(arr, static_cast<std::uint64_t>(arr.size()), "bench");
    } catch (const UsageError&) {
        fits = false;
    }
    if (fits && arr.size() > 0) {
        std::vector<std::uint8_t> buf(static_cast<std::size_t>(arr.nbytes()), 1);  // touched
        const Box all = Box::whole(arr.shape());
        arr.read(all, buf.data(), buf.size());  // page cache warm
        Range r;
        for (int i = 0; i < repeat; ++i) {
            arr.clear_cache();
            const auto t0 = Clock::now();
            arr.read(all, buf.data(), buf.size());
            r.add(seconds_since(t0));
        }
        results.emplace_back(
            "full", Value::map({{"seconds_min", r.lo},
                                {"seconds_max", r.hi},
                                {"text", time_range(r) + ", " +
                                             rate_range(r, static_cast<double>(arr.nbytes()))}}));
    }
    // slices: 8 hyperplanes per axis
    for (int d = 0; d < nd && arr.size() > 0; ++d) {
        const auto du = static_cast<std::size_t>(d);
        std::vector<Box> planes;
        for (int k = 0; k < 8; ++k) {
            Box b = Box::whole(arr.shape());
            b.start[du] = (arr.shape()[du] - 1) * k / 7;
            b.count[du] = 1;
            planes.push_back(b);
        }
        const auto bytes = static_cast<std::size_t>(planes[0].size() * arr.itemsize());
        std::vector<std::uint8_t> buf(bytes, 1);
        Range r;
        for (int i = 0; i < repeat; ++i) {
            arr.clear_cache();
            const auto t0 = Clock::now();
            for (const Box& b : planes) {
                arr.read(b, buf.data(), buf.size());
            }
            r.add(seconds_since(t0) / static_cast<double>(planes.size()));
        }
        results.emplace_back("slice axis " + std::to_string(d),
                             Value::map({{"seconds_min", r.lo},
                                         {"seconds_max", r.hi},
                                         {"text", time_range(r) + " per plane, " +
                                                      rate_range(r, static_cast<double>(bytes))}}));
    }
    // points: 1000 random elements, cold then warm
    if (arr.size() > 0) {
        const int n = 1000;
        std::vector<std::int64_t> coords(static_cast<std::size_t>(n * nd));
        for (int i = 0; i < n; ++i) {
            for (int d = 0; d < nd; ++d) {
                coords[static_cast<std::size_t>(i * nd + d)] = static_cast<std::int64_t>(
                    rng() % static_cast<std::uint64_t>(arr.shape()[static_cast<std::size_t>(d)]));
            }
        }
        std::vector<std::uint8_t> item(static_cast<std::size_t>(arr.itemsize()));
        Range cold, warm;
        for (int i = 0; i < repeat; ++i) {
            arr.clear_cache();
            auto t0 = Clock::now();
            for (int p = 0; p < n; ++p) {
                arr.read_element(&coords[static_cast<std::size_t>(p * nd)], item.data());
            }
            cold.add(seconds_since(t0) / n);
            t0 = Clock::now();
            for (int p = 0; p < n; ++p) {
                arr.read_element(&coords[static_cast<std::size_t>(p * nd)], item.data());
            }
            warm.add(seconds_since(t0) / n);
        }
        results.emplace_back("point",
                             Value::map({{"seconds_min", cold.lo},
                                         {"seconds_max", cold.hi},
                                         {"warm_seconds_min", warm.lo},
                                         {"warm_seconds_max", warm.hi},
                                         {"text", time_range(cold) + " cold, " + time_range(warm) +
                                                      " warm, per element"}}));
    }
    // boxes: 200 random boxes of edge 16
    if (arr.size() > 0) {
        std::vector<Box> boxes;
        std::int64_t items = 0;
        for (int i = 0; i < 200; ++i) {
            Shape start(static_cast<std::size_t>(nd)), count(static_cast<std::size_t>(nd));
            for (int d = 0; d < nd; ++d) {
                const auto du = static_cast<std::size_t>(d);
                start[du] =
                    static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(arr.shape()[du]));
                count[du] = std::min<std::int64_t>(16, arr.shape()[du] - start[du]);
            }
            boxes.push_back(Box::region(start, count));
            items += boxes.back().size();
        }
        std::int64_t max_items = 0;
        for (const Box& b : boxes) {
            max_items = std::max(max_items, b.size());
        }
        std::vector<std::uint8_t> buf(static_cast<std::size_t>(max_items * arr.itemsize()), 1);
        Range r;
        for (int i = 0; i < repeat; ++i) {
            arr.clear_cache();
            const auto t0 = Clock::now();
            for (const Box& b : boxes) {
                arr.read(b, buf.data(), static_cast<std::size_t>(b.size() * arr.itemsize()));
            }
            r.add(seconds_since(t0) / static_cast<double>(boxes.size()));
        }
        const double per_box = static_cast<double>(items) / 200.0 * isz;
        results.emplace_back(
            "box", Value::map({{"seconds_min", r.lo},
                               {"seconds_max", r.hi},
                               {"text", time_range(r) + " per box, " + rate_range(r, per_box)}}));
    }

    if (a.has("--json")) {
        Value::Map out;
        out.emplace_back("path", a.positional[0]);
        out.emplace_back("nthreads", arr.nthreads());
        out.emplace_back("repeat", repeat);
        out.emplace_back("results", Value::map(results));
        std::cout << Value::map(out).to_json(2) << "\n";
        return 0;
    }
    std::cout << a.positional[0] << ": " << to_string(arr.shape()) << " " << arr.dtype().str()
              << ", chunks " << to_string(g.chunk_shape()) << ", blocks "
              << to_string(g.block_shape()) << ", " << arr.nthreads() << " thread(s), " << repeat
              << " runs (min-max)\n";
    for (const auto& [name, v] : results) {
        std::string label = name.as<std::string>();
        label.resize(std::max<std::size_t>(label.size(), 13), ' ');
        std::cout << "  " << label << " " << v["text"].as<std::string>() << "\n";
    }
    return 0;
}

}  // namespace b2nd::cli
