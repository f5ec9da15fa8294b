// bench_array's arrays and workloads (../shared/BENCHMARKS.md): the generated arrays, the requests
// each workload makes, and timing helpers.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <b2nd/b2nd.hpp>
#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/ops.hpp>
#include <b2nd/storage/frame.hpp>

#if defined(B2ND_HAVE_BLOSC2)
#include <b2nd.h>
#include <blosc2.h>
#endif

#include "bench_common.hpp"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <fcntl.h>
#include <unistd.h>

namespace b2nd::bench::array {

using b2nd::bench::mix;

using Clock = std::chrono::steady_clock;
using b2nd::Box;
using b2nd::Shape;

inline double g_min_seconds = 0.5;
inline bool g_copies = true;      // --no-copy leaves the copy workloads out
inline bool g_copy_only = false;  // --copy-only: the write and the copy workloads only
inline bool g_zfp = false;        // --zfp: the ZFP arrays only

inline double best_seconds(const std::function<void()>& fn) {
    return b2nd::bench::best_seconds(fn, g_min_seconds);
}

inline void parallel_fill(std::size_t n,
                          const std::function<void(std::size_t, std::size_t)>& fill) {
    std::thread t([&] { fill(0, n / 2); });
    fill(n / 2, n);
    t.join();
}

inline std::vector<std::uint8_t> f32cube(std::int64_t edge) {
    const auto n = static_cast<std::size_t>(edge * edge * edge);
    std::vector<std::uint8_t> out(n * 4);
    parallel_fill(n, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t flat = lo; flat < hi; ++flat) {
            const float v = b2nd::bench::f32cube_value(flat, edge);
            std::memcpy(&out[flat * 4], &v, 4);
        }
    });
    return out;
}

inline std::vector<std::uint8_t> i64grid(std::int64_t rows, std::int64_t cols) {
    const auto n = static_cast<std::size_t>(rows * cols);
    std::vector<std::uint8_t> out(n * 8);
    parallel_fill(n, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t flat = lo; flat < hi; ++flat) {
            const auto i = static_cast<double>(flat / static_cast<std::size_t>(cols));
            const auto j = static_cast<double>(flat % static_cast<std::size_t>(cols));
            const std::int64_t v = std::llround(1e6 * std::sin(i / 1000) * std::cos(j / 500)) +
                                   37 * static_cast<std::int64_t>(i) -
                                   11 * static_cast<std::int64_t>(j) +
                                   static_cast<std::int64_t>(mix(flat) & 255);
            std::memcpy(&out[flat * 8], &v, 8);
        }
    });
    return out;
}

struct Spec {
    std::string name;
    std::string dtype;
    Shape shape, chunks, blocks;
    b2nd::Codec codec;
    int clevel;
    b2nd::Filter filter;
    int codec_meta = 0;  ///< plugin codecs (ZFP): their parameter
};

/// The workloads' requests, fixed per array (seeded).
struct Requests {
    std::vector<std::vector<Box>> planes;  // per axis, 8 hyperplanes
    std::vector<Shape> points;
    std::vector<Box> boxes;
    // Selections (issue 12): orthogonal index lists (unsorted, with repeats), 10^5 random points
    // (flat coordinates), a mask with 1% of its elements true.
    std::vector<std::vector<std::int64_t>> oindex_long;  // 1000 along axis 0, 4 along the others
    std::vector<std::vector<std::int64_t>> oindex_cube;  // 32 along every axis
    std::vector<std::int64_t> many_points;
    std::vector<std::uint8_t> mask;
};

/// The options that write `s` (its chunks, blocks and codec) on 2 threads, over any file.
inline b2nd::CreateOptions spec_options(const Spec& s) {
    b2nd::CreateOptions o;
    o.chunk_shape = s.chunks;
    o.block_shape = s.blocks;
    o.compression = b2nd::CompressionParams{s.codec, s.clevel, {{s.filter, 0}}};
    o.compression.codec_meta = static_cast<std::uint8_t>(s.codec_meta);
    o.overwrite = true;
    o.nthreads = 2;
    return o;
}

inline Requests make_requests(const Shape& shape, int npoints) {
    Requests r;
    const std::size_t nd = shape.size();
    for (std::size_t ax = 0; ax < nd; ++ax) {
        std::vector<Box> planes;
        for (int p = 0; p < 8; ++p) {
            Box b = Box::whole(shape);
            b.start[ax] = (2 * p + 1) * shape[ax] / 16;
            b.count[ax] = 1;
            planes.push_back(b);
        }
        r.planes.push_back(planes);
    }
    std::uint64_t s = 12345;
    for (int i = 0; i < npoints; ++i) {
        Shape idx;
        for (std::int64_t n : shape) {
            idx.push_back(static_cast<std::int64_t>(mix(s++) % static_cast<std::uint64_t>(n)));
        }
        r.points.push_back(idx);
    }
    for (int i = 0; i < 200; ++i) {
        Box b;
        for (std::int64_t n : shape) {
            const auto st = static_cast<std::int64_t>(mix(s++) % static_cast<std::uint64_t>(n));
            b.start.push_back(st);
            b.count.push_back(std::min<std::int64_t>(16, n - st));
            b.step.push_back(1);
        }
        r.boxes.push_back(b);
    }
    auto list = [&](std::int64_t n, int len) {
        std::vector<std::int64_t> l;
        for (int k = 0; k < len; ++k) {
            l.push_back(static_cast<std::int64_t>(mix(s++) % static_cast<std::uint64_t>(n)));
        }
        return l;
    };
    for (std::size_t d = 0; d < nd; ++d) {
        r.oindex_long.push_back(list(shape[d], d == 0 ? 1000 : 4));
        r.oindex_cube.push_back(list(shape[d], 32));
    }
    for (int i = 0; i < 100000; ++i) {
        for (std::int64_t n : shape) {
            r.many_points.push_back(
                static_cast<std::int64_t>(mix(s++) % static_cast<std::uint64_t>(n)));
        }
    }
    r.mask.resize(static_cast<std::size_t>(b2nd::Box::whole(shape).size()));
    for (std::size_t i = 0; i < r.mask.size(); ++i) {
        r.mask[i] = mix(s + i) % 100 == 0 ? 1 : 0;
    }
    return r;
}

inline std::string fmt_time(double s) {
    char buf[32];
    if (s >= 1) {
        std::snprintf(buf, sizeof buf, "%8.3f s ", s);
    } else if (s >= 1e-3) {
        std::snprintf(buf, sizeof buf, "%8.3f ms", s * 1e3);
    } else {
        std::snprintf(buf, sizeof buf, "%8.3f us", s * 1e6);
    }
    return buf;
}

/// Evicts a file's pages from the page cache (written back first, since dirty pages stay).
inline void drop_from_page_cache(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd >= 0) {
        ::fdatasync(fd);
        ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        ::close(fd);
    }
}

/// The codec limit of a workload: seconds to decode, on one thread, every block its requests
/// touch (each once per request, up to the request's last element in it where the streams can
/// stop early: ChunkDecoder::decode_block_prefix) with nothing else done — no planning, no
/// copying out.

}  // namespace b2nd::bench::array
