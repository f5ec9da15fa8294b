// bench_array --cache: what the block cache costs reads that use a block once, and what it saves
// reads that come back to it (issue 58). On one thread, best of 5 per round, `runs` rounds:
//   - the 8 hyperplanes along axis 0 of the workloads, a fresh handle per plane, with the default
//     cache and with cache_bytes = 0;
//   - a sweep: planes 0-63 along axis 0 read one after the other on one handle, both ways;
//   - both with checksums verified and not (the arrays carry a checksum table).
// Printed: milliseconds as ranges over the rounds, and the ratios the issue states (default /
// no cache for the planes, verified / not for both).
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "array_workloads.hpp"

namespace b2nd::bench::array {

inline void bench_cache(const Spec& s,
                        const std::vector<std::uint8_t>& data,
                        const std::string& dir,
                        int runs) {
    const b2nd::DType dt = b2nd::DType::parse(s.dtype);
    const std::string path = dir + "/" + s.name + ".cache.b2nd";
    (void)b2nd::AnyArray::create_from(path, dt, s.shape, {data.data(), data.size()},
                                      spec_options(s));
    const Requests req = make_requests(s.shape, 1);
    const auto isz = static_cast<std::size_t>(dt.itemsize());
    std::vector<std::uint8_t> out(data.size());
    const auto plane = [&](std::int64_t i) {
        Box b = Box::whole(s.shape);
        b.start[0] = i;
        b.count[0] = 1;
        return b;
    };
    const auto opts = [](bool cache, bool verify) {
        b2nd::OpenOptions o;
        o.nthreads = 1;
        o.verify_checksums = verify;
        if (!cache) {
            o.cache_bytes = 0;
        }
        return o;
    };
    // Each workload checks what it read against the data (a wrong answer is no speed).
    const auto check = [&](const Box& b) {
        const std::size_t row = static_cast<std::size_t>(b.size()) * isz;
        const std::size_t at = static_cast<std::size_t>(b.start[0]) * row;
        if (std::memcmp(out.data(), data.data() + at, row) != 0) {
            std::fprintf(stderr, "%s: plane %lld differs from the data\n", s.name.c_str(),
                         static_cast<long long>(b.start[0]));
            std::exit(1);
        }
    };
    const auto best_of = [](int n, const std::function<void()>& fn) {
        double best = 1e30;
        for (int k = 0; k < n; ++k) {
            best = std::min(best, b2nd::bench::seconds(fn));
        }
        return best;
    };
    const auto fresh_planes = [&](bool cache, bool verify) {
        return best_of(5, [&] {
            for (const Box& b : req.planes[0]) {
                const b2nd::AnyArray a = b2nd::AnyArray::open(path, opts(cache, verify));
                a.read(b, out.data(), static_cast<std::size_t>(b.size()) * isz);
                check(b);
            }
        });
    };
    const auto sweep = [&](bool cache, bool verify) {
        return best_of(5, [&] {
            const b2nd::AnyArray a = b2nd::AnyArray::open(path, opts(cache, verify));
            for (std::int64_t i = 0; i < 64; ++i) {
                const Box b = plane(i);
                a.read(b, out.data(), static_cast<std::size_t>(b.size()) * isz);
                check(b);
            }
        });
    };
    struct Series {
        std::vector<double> planes_cached, planes_none, planes_unverified, sweep_cached, sweep_none,
            sweep_unverified;
    } t;
    for (int r = 0; r < runs; ++r) {
        t.planes_cached.push_back(fresh_planes(true, true));
        t.planes_none.push_back(fresh_planes(false, true));
        t.planes_unverified.push_back(fresh_planes(true, false));
        t.sweep_cached.push_back(sweep(true, true));
        t.sweep_none.push_back(sweep(false, true));
        t.sweep_unverified.push_back(sweep(true, false));
    }
    const auto ms = [](const std::vector<double>& v) {
        const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
        char buf[48];
        std::snprintf(buf, sizeof buf, "%6.1f-%6.1f ms", *lo * 1e3, *hi * 1e3);
        return std::string(buf);
    };
    const auto ratio = [](const std::vector<double>& a, const std::vector<double>& b) {
        double lo = 1e30, hi = 0;
        for (std::size_t k = 0; k < a.size(); ++k) {
            lo = std::min(lo, a[k] / b[k]);
            hi = std::max(hi, a[k] / b[k]);
        }
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.2f-%.2f", lo, hi);
        return std::string(buf);
    };
    std::printf(
        "%-16s 8 axis-0 planes, fresh handles, 1t: default cache %s, none %s "
        "(default/none %s); unverified %s (verified/not %s)\n",
        s.name.c_str(), ms(t.planes_cached).c_str(), ms(t.planes_none).c_str(),
        ratio(t.planes_cached, t.planes_none).c_str(), ms(t.planes_unverified).c_str(),
        ratio(t.planes_cached, t.planes_unverified).c_str());
    std::printf(
        "%-16s planes 0-63 on one handle, 1t:     default cache %s, none %s "
        "(default/none %s); unverified %s (verified/not %s)\n",
        s.name.c_str(), ms(t.sweep_cached).c_str(), ms(t.sweep_none).c_str(),
        ratio(t.sweep_cached, t.sweep_none).c_str(), ms(t.sweep_unverified).c_str(),
        ratio(t.sweep_cached, t.sweep_unverified).c_str());
    std::fflush(stdout);
    std::filesystem::remove(path);
}

}  // namespace b2nd::bench::array
