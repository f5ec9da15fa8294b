// bench_array --checksums: what verifying checksums costs on the standard arrays (issue 27).
//
// Checks happen once per chunk per mapping, so every timed run opens the array afresh (with
// OpenOptions::verify_checksums on, then off, alternately): the full read, the hyperplane slices
// along every axis, the 16-edge boxes and the random points with a cold block cache each pay for
// the chunks they touch. `runs` rounds of (on, off) best-of times; printed: GB/s on and off and
// the time with checks over the time without, as a range over the rounds.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "array_workloads.hpp"

namespace b2nd::bench::array {

inline void bench_checksums(const Spec& s,
                            const std::vector<std::uint8_t>& data,
                            const std::string& dir,
                            int runs) {
    const b2nd::DType dt = b2nd::DType::parse(s.dtype);
    const std::string path = dir + "/" + s.name + ".sums.b2nd";
    (void)b2nd::AnyArray::create_from(path, dt, s.shape, {data.data(), data.size()},
                                      spec_options(s));
    if (b2nd::AnyArray::open(path).frame().checksums().state !=
        b2nd::storage::ChecksumReport::State::covered) {
        std::fprintf(stderr, "%s: written without checksums\n", path.c_str());
        std::exit(1);
    }
    const Requests req = make_requests(s.shape, 10000);
    std::vector<std::uint8_t> out(data.size());
    const auto isz = static_cast<std::size_t>(dt.itemsize());
    struct Workload {
        std::string name;
        double bytes;
        std::function<void(const b2nd::AnyArray&)> run;
    };
    std::vector<Workload> work;
    work.push_back({"full", static_cast<double>(data.size()), [&](const b2nd::AnyArray& a) {
                        a.read(Box::whole(s.shape), out.data(), out.size());
                    }});
    for (std::size_t ax = 0; ax < s.shape.size(); ++ax) {
        double bytes = 0;
        for (const Box& b : req.planes[ax]) {
            bytes += static_cast<double>(b.size()) * static_cast<double>(isz);
        }
        work.push_back(
            {"slices axis " + std::to_string(ax), bytes, [&, ax](const b2nd::AnyArray& a) {
                 for (const Box& b : req.planes[ax]) {
                     a.read(b, out.data(), static_cast<std::size_t>(b.size()) * isz);
                 }
             }});
    }
    double box_bytes = 0;
    for (const Box& b : req.boxes) {
        box_bytes += static_cast<double>(b.size()) * static_cast<double>(isz);
    }
    work.push_back({"boxes 16-edge", box_bytes, [&](const b2nd::AnyArray& a) {
                        for (const Box& b : req.boxes) {
                            a.read(b, out.data(), static_cast<std::size_t>(b.size()) * isz);
                        }
                    }});
    work.push_back({"points (cold)", static_cast<double>(req.points.size() * isz),
                    [&](const b2nd::AnyArray& a) {
                        for (const Shape& p : req.points) {
                            a.read_element(p.data(), out.data());
                        }
                    }});
    for (int threads : {1, 2}) {
        for (const Workload& w : work) {
            std::vector<double> on, off;
            for (int r = 0; r < runs; ++r) {
                for (const bool verify : {true, false}) {
                    b2nd::OpenOptions o;
                    o.nthreads = threads;
                    o.verify_checksums = verify;
                    o.cache_bytes = w.name == "points (cold)" ? std::size_t{2} << 30 : 0;
                    double best = 1e30;
                    for (int k = 0; k < 3; ++k) {
                        const auto t0 = Clock::now();
                        const b2nd::AnyArray a = b2nd::AnyArray::open(path, o);  // fresh: unchecked
                        w.run(a);
                        best = std::min(best,
                                        std::chrono::duration<double>(Clock::now() - t0).count());
                    }
                    (verify ? on : off).push_back(best);
                }
            }
            std::vector<double> ratio(on.size());
            for (std::size_t k = 0; k < on.size(); ++k) {
                ratio[k] = on[k] / off[k];
            }
            const auto [rmin, rmax] = std::minmax_element(ratio.begin(), ratio.end());
            const auto [onmin, onmax] = std::minmax_element(on.begin(), on.end());
            const auto [offmin, offmax] = std::minmax_element(off.begin(), off.end());
            std::printf(
                "%-16s %-18s %dt  checks on %6.2f-%6.2f GB/s  off %6.2f-%6.2f GB/s  "
                "on/off time %.3f-%.3f\n",
                s.name.c_str(), w.name.c_str(), threads, w.bytes / *onmax / 1e9,
                w.bytes / *onmin / 1e9, w.bytes / *offmax / 1e9, w.bytes / *offmin / 1e9, *rmin,
                *rmax);
            std::fflush(stdout);
        }
    }
    std::filesystem::remove(path);
}

}  // namespace b2nd::bench::array
