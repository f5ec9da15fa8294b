// Array benchmark: the arrays and workloads of ../shared/BENCHMARKS.md (f32cube with zstd 1, lz4 5
// and blosclz 5 + SHUFFLE; i64grid with zstd 5 + BITSHUFFLE), with 1 and 2 threads: whole-array
// read, hyperplane slices along every axis, random single elements (cold and warm block cache),
// random 16-edge boxes, and writing the whole array. Throughput is GB/s of uncompressed data.
//
// When built against c-blosc2 (B2ND_HAVE_BLOSC2), c-blosc2 writes each array too (timed), and both
// libraries then read the file c-blosc2 wrote; the last column is c-blosc2's time over ours.
//
// --zfp runs the lossy arrays instead: the same f32cube with ZFP accuracy 1e-2 and precision 14
// (no filter), decoded by both libraries through the same libzfp.
//
//   build-bench/bench/bench_array [--quick] [--dir DIR] [--array NAME | --zfp]
//                                 [--no-copy | --copy-only]
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

namespace {

using b2nd::bench::mix;

using Clock = std::chrono::steady_clock;
using b2nd::Box;
using b2nd::Shape;

double g_min_seconds = 0.5;
bool g_copies = true;      // --no-copy leaves the copy workloads out
bool g_copy_only = false;  // --copy-only: the write and the copy workloads only
bool g_zfp = false;        // --zfp: the ZFP arrays only

double best_seconds(const std::function<void()>& fn) {
    return b2nd::bench::best_seconds(fn, g_min_seconds);
}

void parallel_fill(std::size_t n, const std::function<void(std::size_t, std::size_t)>& fill) {
    std::thread t([&] { fill(0, n / 2); });
    fill(n / 2, n);
    t.join();
}

std::vector<std::uint8_t> f32cube(std::int64_t edge) {
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

std::vector<std::uint8_t> i64grid(std::int64_t rows, std::int64_t cols) {
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

Requests make_requests(const Shape& shape, int npoints) {
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

std::string fmt_time(double s) {
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
void drop_from_page_cache(const std::string& path) {
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
class CodecLimit {
public:
    CodecLimit(const std::string& path, const b2nd::Grid& g)
        : frame_(b2nd::storage::Frame::open(path)), g_(g) {
        for (std::int64_t c = 0; c < frame_.nchunks(); ++c) {
            const auto sc = frame_.chunk(c);
            decoders_.emplace_back(sc.index_only() ? nullptr
                                                   : std::make_unique<b2nd::codec::ChunkDecoder>(
                                                         sc.bytes, g.block_shape()));
        }
        scratch_.resize(static_cast<std::size_t>(g.block_nbytes()));
    }
    double seconds(const std::vector<Box>& boxes) {
        std::vector<Touch> work;
        for (const Box& b : boxes) {
            append_blocks(b, work);
        }
        return best_seconds([&] {
            for (const Touch& t : work) {
                if (decoders_[static_cast<std::size_t>(t.chunk)]) {
                    decoders_[static_cast<std::size_t>(t.chunk)]->decode_block_prefix(
                        static_cast<std::int32_t>(t.block), {scratch_.data(), scratch_.size()},
                        t.need);
                }
            }
        });
    }

private:
    /// A block a box touches and the bytes of it up to the box's last element there (what a
    /// decoder that can stop early needs).
    struct Touch {
        std::int64_t chunk, block;
        std::size_t need;
    };
    /// Per dimension: the chunk, the block in it, and the last coordinate used in the block.
    struct Span {
        std::int64_t chunk, block, last;
    };
    /// The blocks a step-1 box touches.
    void append_blocks(const Box& b, std::vector<Touch>& out) const {
        const int nd = g_.ndim();
        std::vector<std::vector<Span>> per_dim(static_cast<std::size_t>(nd));
        for (int d = 0; d < nd; ++d) {
            const auto u = static_cast<std::size_t>(d);
            const std::int64_t c = g_.chunk_shape()[u], bl = g_.block_shape()[u];
            const std::int64_t end = b.start[u] + b.count[u];
            for (std::int64_t p = b.start[u]; p < end;) {
                const std::int64_t ch = p / c, inb = (p % c) / bl;
                const std::int64_t next = ch * c + std::min((inb + 1) * bl, c);
                per_dim[u].push_back({ch, inb, std::min(end, next) - 1 - (ch * c + inb * bl)});
                p = next;
            }
        }
        std::vector<std::size_t> k(static_cast<std::size_t>(nd), 0);
        for (;;) {
            std::int64_t chunk = 0, block = 0, last = 0;
            for (int d = 0; d < nd; ++d) {
                const auto u = static_cast<std::size_t>(d);
                const Span& sp = per_dim[u][k[u]];
                chunk = chunk * g_.chunks_in(d) + sp.chunk;
                block = block * g_.blocks_in(d) + sp.block;
                last = last * g_.block_shape()[u] + sp.last;
            }
            out.push_back({chunk, block, static_cast<std::size_t>((last + 1) * g_.itemsize())});
            int d = nd - 1;
            for (; d >= 0; --d) {
                const auto u = static_cast<std::size_t>(d);
                if (++k[u] < per_dim[u].size()) {
                    break;
                }
                k[u] = 0;
            }
            if (d < 0) {
                return;
            }
        }
    }

    b2nd::storage::Frame frame_;
    b2nd::Grid g_;
    std::vector<std::unique_ptr<b2nd::codec::ChunkDecoder>> decoders_;
    std::vector<std::uint8_t> scratch_;
};

/// Seconds to store the whole of `out` once from a 128 KiB buffer in the cache, with
/// non-temporal stores (the memory's write rate for a buffer larger than the caches).
double store_seconds(std::vector<std::uint8_t>& out) {
    std::vector<std::uint8_t> src(std::size_t{128} << 10, 1);
    return best_seconds([&] {
        for (std::size_t off = 0; off < out.size(); off += src.size()) {
            const std::size_t n = std::min(src.size(), out.size() - off);
#if defined(__SSE2__)
            std::size_t i = 0;
            std::uint8_t* d = out.data() + off;
            for (; i < n && (reinterpret_cast<std::uintptr_t>(d + i) & 15) != 0; ++i) {
                d[i] = src[i];
            }
            for (; i + 16 <= n; i += 16) {
                _mm_stream_si128(reinterpret_cast<__m128i*>(d + i),
                                 _mm_loadu_si128(reinterpret_cast<const __m128i*>(&src[i])));
            }
            std::memcpy(d + i, &src[i], n - i);
#else
            std::memcpy(out.data() + off, src.data(), n);
#endif
        }
#if defined(__SSE2__)
        _mm_sfence();
#endif
    });
}

/// The codec limit of writing the array: seconds to encode, on one thread, every chunk as it is
/// stored (padded block layout, taken back from the file we wrote) with the array's parameters,
/// into a buffer already touched — no packing, no file.
double encode_limit(const std::string& path, const b2nd::Grid& g, const Spec& s) {
    const auto frame = b2nd::storage::Frame::open(path);
    std::vector<std::vector<std::uint8_t>> chunks;
    for (std::int64_t c = 0; c < frame.nchunks(); ++c) {
        const auto sc = frame.chunk(c);
        std::vector<std::uint8_t> buf(static_cast<std::size_t>(g.chunk_nbytes()));
        if (!sc.index_only()) {
            b2nd::codec::ChunkDecoder(sc.bytes, g.block_shape()).decode(buf, 1);
        }
        chunks.push_back(std::move(buf));
    }
    b2nd::codec::EncodeParams p;
    p.codec = s.codec;
    p.codec_meta = static_cast<std::uint8_t>(s.codec_meta);
    p.blockshape = g.block_shape();
    p.clevel = s.clevel;
    p.filters = b2nd::codec::make_pipeline({{s.filter, 0}});
    p.typesize = static_cast<int>(g.itemsize());
    p.blocksize = static_cast<std::int32_t>(g.block_nbytes());
    std::vector<std::uint8_t> dest(
        b2nd::codec::max_encoded_size(static_cast<std::size_t>(g.chunk_nbytes())));
    return best_seconds([&] {
        for (const auto& c : chunks) {
            b2nd::codec::encode_chunk({c.data(), c.size()}, p, {dest.data(), dest.size()});
        }
    });
}

/// Seconds to write `bytes` as a new file in `dir` (as a write of an array does: the old file is
/// gone, the kernel takes fresh pages for the new one), with one write() call.
double file_write_seconds(const std::string& dir, const std::vector<std::uint8_t>& bytes) {
    const std::string path = dir + "/write-floor.bin";
    const double t = best_seconds([&] {
        ::unlink(path.c_str());
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            throw std::runtime_error("cannot create " + path);
        }
        std::size_t done = 0;
        while (done < bytes.size()) {
            const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
            if (n <= 0) {
                ::close(fd);
                throw std::runtime_error("cannot write " + path);
            }
            done += static_cast<std::size_t>(n);
        }
        ::close(fd);
    });
    ::unlink(path.c_str());
    return t;
}

/// The codec limit for `threads` threads (one thread's time shared perfectly), or 0.
double g_limit = 0;

/// One measured row: seconds per operation and bytes per operation, for us and c-blosc2; with a
/// codec limit (g_limit, seconds per operation) the share of it we reach.
void row(const std::string& array,
         const std::string& workload,
         int threads,
         double ours,
         double bytes,
         double theirs) {
    std::printf("%-16s %-24s %2d  %s %7.2f GB/s", array.c_str(), workload.c_str(), threads,
                fmt_time(ours).c_str(), bytes / ours / 1e9);
    if (theirs > 0) {
        std::printf("  | %s %7.2f GB/s  %7.2fx", fmt_time(theirs).c_str(), bytes / theirs / 1e9,
                    theirs / ours);
    }
    if (g_limit > 0) {
        std::printf("  | %3.0f%% of codec limit", 100.0 * g_limit / threads / ours);
    }
    g_limit = 0;
    std::printf("\n");
    std::fflush(stdout);
}

#if defined(B2ND_HAVE_BLOSC2)
struct Blosc2Array {
    b2nd_array_t* arr = nullptr;
    explicit Blosc2Array(const std::string& path, int threads) {
        if (b2nd_open(path.c_str(), &arr) < 0) {
            std::fprintf(stderr, "c-blosc2 cannot open %s\n", path.c_str());
            std::exit(1);
        }
        blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
        dp.nthreads = static_cast<std::int16_t>(threads);
        dp.schunk = arr->sc;  // lazy chunks are read through the super-chunk
        blosc2_free_ctx(arr->sc->dctx);
        arr->sc->dctx = blosc2_create_dctx(dp);
    }
    ~Blosc2Array() { b2nd_free(arr); }
    void slice(const Box& b, void* out, std::int64_t nbytes) const {
        std::int64_t start[B2ND_MAX_DIM], stop[B2ND_MAX_DIM], shape[B2ND_MAX_DIM];
        for (int d = 0; d < b.ndim(); ++d) {
            const auto u = static_cast<std::size_t>(d);
            start[d] = b.start[u];
            stop[d] = b.start[u] + b.count[u];
            shape[d] = b.count[u];
        }
        if (b2nd_get_slice_cbuffer(arr, start, stop, out, shape, nbytes) < 0) {
            std::fprintf(stderr, "c-blosc2 slice %s failed\n", b.str().c_str());
            std::exit(1);
        }
    }
    void oindex(const std::vector<std::vector<std::int64_t>>& lists,
                void* out,
                std::int64_t nbytes) const {
        std::int64_t* sel[B2ND_MAX_DIM];
        std::int64_t sizes[B2ND_MAX_DIM];
        std::vector<std::vector<std::int64_t>> copy = lists;
        for (std::size_t d = 0; d < copy.size(); ++d) {
            sel[d] = copy[d].data();
            sizes[d] = static_cast<std::int64_t>(copy[d].size());
        }
        if (b2nd_get_orthogonal_selection(arr, sel, sizes, out, sizes, nbytes) < 0) {
            std::fprintf(stderr, "c-blosc2 orthogonal selection failed\n");
            std::exit(1);
        }
    }
};

/// A c-blosc2 context that creates an array of s.shape and s.dtype at `path` with these
/// compression parameters, chunks and blocks.
class Blosc2Context {
public:
    Blosc2Context(const Spec& s,
                  b2nd::Codec codec,
                  int clevel,
                  std::int64_t itemsize,
                  int threads,
                  const std::string& path,
                  bool contiguous,
                  const Shape& chunks,
                  const Shape& blocks)
        : path_(path) {
        cp_.compcode = static_cast<std::uint8_t>(codec);
        cp_.compcode_meta = static_cast<std::uint8_t>(s.codec_meta);
        cp_.clevel = static_cast<std::uint8_t>(clevel);
        cp_.typesize = static_cast<std::int32_t>(itemsize);
        cp_.nthreads = static_cast<std::int16_t>(threads);
        for (int i = 0; i < 5; ++i) {
            cp_.filters[i] = 0;
        }
        cp_.filters[5] = static_cast<std::uint8_t>(s.filter);
        dp_.nthreads = static_cast<std::int16_t>(threads);
        st_.contiguous = contiguous;
        st_.urlpath = path_.data();
        st_.cparams = &cp_;
        st_.dparams = &dp_;
        std::int64_t shape[B2ND_MAX_DIM];
        std::int32_t cs[B2ND_MAX_DIM], bs[B2ND_MAX_DIM];
        for (std::size_t d = 0; d < s.shape.size(); ++d) {
            shape[d] = s.shape[d];
            cs[d] = static_cast<std::int32_t>(chunks[d]);
            bs[d] = static_cast<std::int32_t>(blocks[d]);
        }
        ctx_ = b2nd_create_ctx(&st_, static_cast<std::int8_t>(s.shape.size()), shape, cs, bs,
                               s.dtype.c_str(), 0, nullptr, 0);
        if (ctx_ == nullptr) {
            std::fprintf(stderr, "c-blosc2 b2nd_create_ctx failed\n");
            std::exit(1);
        }
    }
    ~Blosc2Context() { b2nd_free_ctx(ctx_); }
    Blosc2Context(const Blosc2Context&) = delete;
    Blosc2Context& operator=(const Blosc2Context&) = delete;
    b2nd_context_t* get() const noexcept { return ctx_; }

private:
    std::string path_;
    blosc2_cparams cp_ = BLOSC2_CPARAMS_DEFAULTS;
    blosc2_dparams dp_ = BLOSC2_DPARAMS_DEFAULTS;
    blosc2_storage st_ = BLOSC2_STORAGE_DEFAULTS;
    b2nd_context_t* ctx_ = nullptr;
};

double blosc2_write(const Spec& s,
                    const std::vector<std::uint8_t>& data,
                    const std::string& path,
                    int threads,
                    std::int64_t itemsize) {
    return best_seconds([&] {
        std::filesystem::remove_all(path);
        const Blosc2Context ctx(s, s.codec, s.clevel, itemsize, threads, path, true, s.chunks,
                                s.blocks);
        b2nd_array_t* arr = nullptr;
        if (b2nd_from_cbuffer(ctx.get(), &arr, data.data(),
                              static_cast<std::int64_t>(data.size())) < 0) {
            std::fprintf(stderr, "c-blosc2 write failed\n");
            std::exit(1);
        }
        b2nd_free(arr);
    });
}
#endif

/// Copies of the array file at `src` (BENCHMARKS.md's "write" side of a conversion): chunks kept
/// as stored into a sparse frame, re-encoded with LZ4 5 (same geometry), and re-chunked to half
/// the chunk edge; against c-blosc2's b2nd_copy doing the same (it copies chunks as stored when
/// the shapes and cparams are equal, like us). Bytes counted: the uncompressed array.
void bench_copy(const Spec& s, const std::string& src, const std::string& dir, double nbytes) {
    struct Variant {
        const char* name;
        bool sparse;
        b2nd::Codec codec;
        int clevel;
        bool rechunk;
    };
    const Variant variants[] = {{"copy as stored (sframe)", true, s.codec, s.clevel, false},
                                {"copy to lz4 5", false, b2nd::Codec::lz4, 5, false},
                                {"copy re-chunked", false, s.codec, s.clevel, true}};
    for (const Variant& v : variants) {
        for (int threads : {1, 2}) {
            b2nd::OpenOptions oo;
            oo.nthreads = threads;
            oo.cache_bytes = 0;
            const b2nd::AnyArray a = b2nd::AnyArray::open(src, oo);
            b2nd::CopyOptions o;
            o.overwrite = true;
            o.sparse = v.sparse;
            o.nthreads = threads;
            o.compression = b2nd::CompressionParams{v.codec, v.clevel, {{s.filter, 0}}};
            Shape chunks = s.chunks, blocks = s.blocks;
            if (v.rechunk) {
                for (std::size_t d = 0; d < chunks.size(); ++d) {
                    chunks[d] /= 2;
                    blocks[d] = std::min(blocks[d], chunks[d]);
                }
                o.chunk_shape = chunks;
                o.block_shape = blocks;
            }
            const std::string dst = dir + "/copy" + (v.sparse ? ".b2frame" : ".b2nd");
            const double ours = best_seconds([&] { b2nd::copy(a, dst, o); });
            double theirs = 0;
#if defined(B2ND_HAVE_BLOSC2)
            const std::string cdst = dir + "/copy.c-blosc2" + (v.sparse ? ".b2frame" : ".b2nd");
            const Blosc2Array c(src, threads);
            theirs = best_seconds([&] {
                std::filesystem::remove_all(cdst);
                const Blosc2Context ctx(s, v.codec, v.clevel, c.arr->sc->typesize, threads, cdst,
                                        !v.sparse, chunks, blocks);
                b2nd_array_t* out = nullptr;
                if (b2nd_copy(ctx.get(), c.arr, &out) < 0) {
                    std::fprintf(stderr, "c-blosc2 b2nd_copy failed\n");
                    std::exit(1);
                }
                b2nd_free(out);
            });
#endif
            row(s.name, v.name, threads, ours, nbytes, theirs);
        }
    }
}

void bench_array(const Spec& s,
                 const std::vector<std::uint8_t>& data,
                 const std::string& dir,
                 int npoints) {
    const b2nd::DType dt = b2nd::DType::parse(s.dtype);
    const double nbytes = static_cast<double>(data.size());
    const std::string ours_path = dir + "/" + s.name + ".ours.b2nd";
    std::string read_path = ours_path;
    std::printf("\n%s: %s %s, chunks %s, blocks %s, %s %d + %s\n", s.name.c_str(), s.dtype.c_str(),
                b2nd::to_string(s.shape).c_str(), b2nd::to_string(s.chunks).c_str(),
                b2nd::to_string(s.blocks).c_str(),
                std::string(b2nd::codec::codec_name(s.codec)).c_str(), s.clevel,
                b2nd::codec::filter_name(static_cast<std::uint8_t>(s.filter)).c_str());

    // write
    double write_time[2] = {0, 0}, write_theirs[2] = {0, 0};
    for (int threads : {1, 2}) {
        b2nd::CreateOptions o;
        o.chunk_shape = s.chunks;
        o.block_shape = s.blocks;
        o.compression.codec = s.codec;
        o.compression.codec_meta = static_cast<std::uint8_t>(s.codec_meta);
        o.compression.clevel = s.clevel;
        o.compression.filters = {{s.filter, 0}};
        o.nthreads = threads;
        o.overwrite = true;
        o.cache_bytes = 0;
        const double ours = best_seconds([&] {
            b2nd::AnyArray::create_from(ours_path, dt, s.shape, {data.data(), data.size()}, o);
        });
        double theirs = 0;
#if defined(B2ND_HAVE_BLOSC2)
        read_path = dir + "/" + s.name + ".c-blosc2.b2nd";
        theirs = blosc2_write(s, data, read_path, threads, dt.itemsize());
#endif
        write_time[threads - 1] = ours;
        write_theirs[threads - 1] = theirs;
    }
    {
        const double limit = encode_limit(ours_path, b2nd::AnyArray::open(ours_path).grid(), s);
        for (int threads : {1, 2}) {
            g_limit = limit;
            row(s.name, "write", threads, write_time[threads - 1], nbytes,
                write_theirs[threads - 1]);
        }
        // What a write cannot go below on one core: encoding every chunk, then handing the
        // compressed bytes to the kernel (which, for a new file, takes and fills fresh pages).
        std::vector<std::uint8_t> file;
        {
            std::ifstream in(ours_path, std::ios::binary);
            file.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        }
        const double put = file_write_seconds(dir, file);
        std::printf(
            "%-16s write floor, 1 thread: encode %.1f ms + writing the file %.1f ms = "
            "%.1f ms (ours: %.0f%% of it)\n",
            s.name.c_str(), limit * 1e3, put * 1e3, (limit + put) * 1e3,
            100.0 * (limit + put) / write_time[0]);
    }
    {
        const b2nd::AnyArray a = b2nd::AnyArray::open(ours_path);
        std::printf("%-16s ratio %.2f (ours)", s.name.c_str(),
                    nbytes / static_cast<double>(a.cbytes()));
#if defined(B2ND_HAVE_BLOSC2)
        const b2nd::AnyArray c = b2nd::AnyArray::open(read_path);
        std::printf(", %.2f (c-blosc2); reads below use the file c-blosc2 wrote",
                    nbytes / static_cast<double>(c.cbytes()));
#endif
        std::printf("\n");
    }

    if (g_copy_only) {
        bench_copy(s, read_path, dir, nbytes);
        return;
    }
    const Requests req = make_requests(s.shape, npoints);
    std::vector<std::uint8_t> out(data.size());
    // What reads must give: the data, or for a lossy codec what c-blosc2 decodes from the file
    // (without c-blosc2, our own first read).
    std::vector<std::uint8_t> decoded;
    const bool lossy = !b2nd::codec::is_builtin(s.codec);
    if (lossy) {
        decoded.resize(data.size());
#if defined(B2ND_HAVE_BLOSC2)
        const Blosc2Array ref(read_path, 2);
        b2nd_to_cbuffer(ref.arr, decoded.data(), static_cast<std::int64_t>(decoded.size()));
#else
        b2nd::AnyArray::open(read_path).read(Box::whole(s.shape), decoded.data(), decoded.size());
#endif
    }
    const std::vector<std::uint8_t>& want = lossy ? decoded : data;
    for (int threads : {1, 2}) {
        b2nd::OpenOptions oo;
        oo.nthreads = threads;
        oo.cache_bytes = 0;
        // full, the file not in the page cache (dropped before each run; the array is opened
        // in the timed run, and before any other handle maps it: mapped pages cannot be dropped)
        const auto cold_run = [&](const std::function<void()>& fn) {
            double best = 1e30;
            for (int rep = 0; rep < 3; ++rep) {
                drop_from_page_cache(read_path);
                const auto t0 = Clock::now();
                fn();
                best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
            }
            return best;
        };
        const double cold_full = cold_run([&] {
            const b2nd::AnyArray fresh = b2nd::AnyArray::open(read_path, oo);
            fresh.read(Box::whole(s.shape), out.data(), out.size());
        });
        double cold_full_c = 0;
#if defined(B2ND_HAVE_BLOSC2)
        cold_full_c = cold_run([&] {
            const Blosc2Array fresh(read_path, threads);
            b2nd_to_cbuffer(fresh.arr, out.data(), static_cast<std::int64_t>(out.size()));
        });
#endif
        row(s.name, "full, cold page cache", threads, cold_full, nbytes, cold_full_c);
        b2nd::AnyArray a = b2nd::AnyArray::open(read_path, oo);
#if defined(B2ND_HAVE_BLOSC2)
        const Blosc2Array c(read_path, threads);
#endif
        CodecLimit limit(read_path, a.grid());
        // full
        g_limit = limit.seconds({Box::whole(s.shape)});
        const double full =
            best_seconds([&] { a.read(Box::whole(s.shape), out.data(), out.size()); });
        if (std::memcmp(out.data(), want.data(), want.size()) != 0) {
            std::fprintf(stderr, "%s: full read differs from the data\n", s.name.c_str());
            std::exit(1);
        }
        double full_c = 0;
#if defined(B2ND_HAVE_BLOSC2)
        full_c = best_seconds(
            [&] { b2nd_to_cbuffer(c.arr, out.data(), static_cast<std::int64_t>(out.size())); });
#endif
        const double codec_full = g_limit;
        row(s.name, "full", threads, full, nbytes, full_c);
        if (threads == 1) {
            // What a full read cannot go below on one core: decoding every block, then storing
            // the whole output once at the memory's streaming-store rate.
            const double store = store_seconds(out);
            std::printf(
                "%-16s full-read floor, 1 thread: codec %.1f ms + storing the output %.1f "
                "ms = %.1f ms (ours: %.0f%% of it)\n",
                s.name.c_str(), codec_full * 1e3, store * 1e3, (codec_full + store) * 1e3,
                100.0 * (codec_full + store) / full);
        }

        // slices, per axis
        for (std::size_t ax = 0; ax < s.shape.size(); ++ax) {
            const auto& planes = req.planes[ax];
            const double pbytes = static_cast<double>(planes[0].size() * dt.itemsize());
            const double t =
                best_seconds([&] {
                    for (const Box& b : planes) {
                        a.read(b, out.data(), static_cast<std::size_t>(b.size() * dt.itemsize()));
                    }
                }) /
                static_cast<double>(planes.size());
            double tc = 0;
#if defined(B2ND_HAVE_BLOSC2)
            tc = best_seconds([&] {
                     for (const Box& b : planes) {
                         c.slice(b, out.data(), b.size() * dt.itemsize());
                     }
                 }) /
                 static_cast<double>(planes.size());
#endif
            g_limit = limit.seconds(planes) / static_cast<double>(planes.size());
            row(s.name, "slice axis " + std::to_string(ax), threads, t, pbytes, tc);
        }

        // points: no block cache (each decodes its block), a cold cache (cleared: the pass fills
        // it), then warm (the same points again)
        const double isz = static_cast<double>(dt.itemsize());
        const auto np = static_cast<double>(req.points.size());
        const double nocache = best_seconds([&] {
            for (const Shape& p : req.points) {
                a.read_element(p.data(), out.data());
            }
        });
        a.set_cache_bytes(std::size_t{2} << 30);
        double cold = 1e30;
        for (int rep = 0; rep < 3; ++rep) {
            a.clear_cache();
            const auto t0 = Clock::now();
            for (const Shape& p : req.points) {
                a.read_element(p.data(), out.data());
            }
            cold = std::min(cold, std::chrono::duration<double>(Clock::now() - t0).count());
        }
        const double warm = best_seconds([&] {
            for (const Shape& p : req.points) {
                a.read_element(p.data(), out.data());
            }
        });
        double pc = 0;
#if defined(B2ND_HAVE_BLOSC2)
        pc = best_seconds([&] {
                 for (const Shape& p : req.points) {
                     c.slice(Box::region(p, Shape(p.size(), 1)), out.data(), dt.itemsize());
                 }
             }) /
             np;
#endif
        std::vector<std::int64_t> flat;
        for (const Shape& p : req.points) {
            flat.insert(flat.end(), p.begin(), p.end());
        }
        a.set_cache_bytes(0);
        const double batch =
            best_seconds([&] { a.read_points(flat.data(), req.points.size(), out.data()); });
        a.set_cache_bytes(std::size_t{2} << 30);
        row(s.name, "points batch (no cache)", threads, batch / np, isz, pc);
        row(s.name, "point (no cache)", threads, nocache / np, isz, pc);
        row(s.name, "point (cold cache)", threads, cold / np, isz, pc);
        row(s.name, "point (warm cache)", threads, warm / np, isz, pc);
        a.set_cache_bytes(0);

        // boxes
        double box_bytes = 0;
        for (const Box& b : req.boxes) {
            box_bytes += static_cast<double>(b.size()) * isz;
        }
        const auto nb = static_cast<double>(req.boxes.size());
        const double tb =
            best_seconds([&] {
                for (const Box& b : req.boxes) {
                    a.read(b, out.data(), static_cast<std::size_t>(b.size() * dt.itemsize()));
                }
            }) /
            nb;
        double tbc = 0;
#if defined(B2ND_HAVE_BLOSC2)
        tbc = best_seconds([&] {
                  for (const Box& b : req.boxes) {
                      c.slice(b, out.data(), b.size() * dt.itemsize());
                  }
              }) /
              nb;
#endif
        g_limit = limit.seconds(req.boxes) / nb;
        row(s.name, "box 16-edge", threads, tb, box_bytes / nb, tbc);

        // selections, no block cache (each call decodes what it touches)
        for (const auto* lists : {&req.oindex_long, &req.oindex_cube}) {
            std::uint64_t n = 1;
            for (const auto& l : *lists) {
                n *= l.size();
            }
            const std::size_t bytes = n * static_cast<std::size_t>(dt.itemsize());
            b2nd::Resolved sel;
            sel.lists = *lists;
            const double to = best_seconds([&] { a.read(sel, out.data(), bytes); });
            double toc = 0;
#if defined(B2ND_HAVE_BLOSC2)
            std::vector<std::uint8_t> check(out.begin(),
                                            out.begin() + static_cast<std::ptrdiff_t>(bytes));
            toc = best_seconds(
                [&] { c.oindex(*lists, out.data(), static_cast<std::int64_t>(bytes)); });
            if (std::memcmp(check.data(), out.data(), bytes) != 0) {
                std::printf("%-16s c-blosc2's orthogonal selection differs from ours\n",
                            s.name.c_str());
            }
#endif
            const std::string what =
                lists == &req.oindex_long ? "oindex 1000 x 4.." : "oindex 32 per axis";
            row(s.name, what, threads, to, static_cast<double>(bytes), toc);
        }
        const std::size_t npts = req.many_points.size() / s.shape.size();
        const double tp =
            best_seconds([&] { a.read_points(req.many_points.data(), npts, out.data()); });
        row(s.name, "points 10^5 batch", threads, tp, static_cast<double>(npts) * isz, 0);
        const b2nd::Mask m = b2nd::Mask::of(req.mask.data(), s.shape);
        std::vector<std::uint8_t> picked;
        const double tm = best_seconds([&] { picked = a.read_masked(m); });
        row(s.name, "mask 1% (a[mask])", threads, tm, static_cast<double>(picked.size()), 0);
    }
    if (g_copies) {
        bench_copy(s, read_path, dir, nbytes);
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string dir = (std::filesystem::temp_directory_path() / "b2nd-bench").string();
    std::string only;
    bool quick = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick") {
            quick = true;
        } else if (a == "--dir" && i + 1 < argc) {
            dir = argv[++i];
        } else if (a == "--no-copy") {
            g_copies = false;
        } else if (a == "--copy-only") {
            g_copy_only = true;
        } else if (a == "--zfp") {
            g_zfp = true;
        } else if (a == "--array" && i + 1 < argc) {
            only = argv[++i];
        } else {
            std::fprintf(stderr,
                         "usage: bench_array [--quick] [--dir DIR] [--array NAME | --zfp] "
                         "[--no-copy | --copy-only]\n");
            return 2;
        }
    }
    std::filesystem::create_directories(dir);
#if defined(B2ND_HAVE_BLOSC2)
    blosc2_init();
    std::printf("c-blosc2 %s in the same run (last columns: c-blosc2; ratio = its time / ours)\n",
                BLOSC2_VERSION_STRING);
#endif
    if (quick) {
        g_min_seconds = 0.1;
    }
    const std::int64_t edge = quick ? 256 : 512;
    std::printf("%-16s %-24s %2s  %-24s  | %-24s %s\n", "array", "workload", "th", "b2nd-cpp",
                "c-blosc2", "c-blosc2 time / ours");
    const std::vector<Spec> cube = {
        {"f32cube_zstd1",
         "<f4",
         {edge, edge, edge},
         {128, 128, 128},
         {32, 32, 32},
         b2nd::Codec::zstd,
         1,
         b2nd::Filter::shuffle},
        {"f32cube_lz4",
         "<f4",
         {edge, edge, edge},
         {128, 128, 128},
         {32, 32, 32},
         b2nd::Codec::lz4,
         5,
         b2nd::Filter::shuffle},
        {"f32cube_blosclz",
         "<f4",
         {edge, edge, edge},
         {128, 128, 128},
         {32, 32, 32},
         b2nd::Codec::blosclz,
         5,
         b2nd::Filter::shuffle},
        // Lossy, through libzfp (issue 14; ZFP_RATE is left out: c-blosc2's partial reads of
        // it are broken, FORMAT-NOTES.md). Only with --array NAME or --zfp.
        {"f32cube_zfp_acc",
         "<f4",
         {edge, edge, edge},
         {128, 128, 128},
         {32, 32, 32},
         b2nd::Codec::zfp_accuracy,
         1,
         b2nd::Filter::none,
         -2},
        {"f32cube_zfp_prec",
         "<f4",
         {edge, edge, edge},
         {128, 128, 128},
         {32, 32, 32},
         b2nd::Codec::zfp_precision,
         1,
         b2nd::Filter::none,
         14},
    };
    const int npoints = 10000;
    bool cube_made = false;
    std::vector<std::uint8_t> data;
    for (const Spec& s : cube) {
        const bool zfp = s.name.find("zfp") != std::string::npos;
        if ((!only.empty() && only != s.name) || (only.empty() && zfp != g_zfp)) {
            continue;
        }
        if (!cube_made) {
            data = f32cube(edge);
            cube_made = true;
        }
        bench_array(s, data, dir, npoints);
    }
    if ((only.empty() && !g_zfp) || only == "i64grid") {
        const std::int64_t rows = quick ? 5000 : 20000;
        data = i64grid(rows, 5000);
        bench_array({"i64grid",
                     "<i8",
                     {rows, 5000},
                     {1000, 1000},
                     {100, 250},
                     b2nd::Codec::zstd,
                     5,
                     b2nd::Filter::bitshuffle},
                    data, dir, npoints);
    }
    std::filesystem::remove_all(dir);
#if defined(B2ND_HAVE_BLOSC2)
    blosc2_destroy();
#endif
    return 0;
}
