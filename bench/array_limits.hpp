// bench_array's limits: what the codec, a plain store and the file system can do on this machine,
// measured in the same run as the workloads, as the ceilings the results are compared with.
#pragma once

#include <atomic>

#include "array_workloads.hpp"

namespace b2nd::bench::array {

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
inline double store_seconds(std::vector<std::uint8_t>& out) {
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

/// The codec limit of writing the array: seconds to encode, on `threads` threads (one chunk each
/// at a time), every chunk as it is stored (padded block layout, taken back from the file we
/// wrote) with the array's parameters, into buffers already touched — no packing, no file.
/// With `write_to`, each chunk encoded is also written (pwrite, no fsync) into a new file that
/// then replaces `write_to`, as a write of an array replaces the old file: a plain writer on these
/// threads, with nothing of ours between the codec and the kernel.
inline double encode_limit(const std::string& path,
                           const b2nd::Grid& g,
                           const Spec& s,
                           int threads = 1,
                           const std::string& write_to = {}) {
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
    const std::size_t cap =
        b2nd::codec::max_encoded_size(static_cast<std::size_t>(g.chunk_nbytes()));
    std::vector<std::vector<std::uint8_t>> dest(static_cast<std::size_t>(threads),
                                                std::vector<std::uint8_t>(cap, 1));
    const std::string tmp = write_to + ".tmp";
    const double secs = best_seconds([&] {
        const int fd =
            write_to.empty() ? -1 : ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (!write_to.empty() && fd < 0) {
            throw std::runtime_error("cannot create " + tmp);
        }
        std::atomic<std::size_t> next{0};
        std::atomic<std::uint64_t> end{0};
        std::atomic<bool> failed{false};
        const auto work = [&](std::size_t t) {
            for (std::size_t i; (i = next++) < chunks.size();) {
                const std::size_t n = b2nd::codec::encode_chunk(
                    {chunks[i].data(), chunks[i].size()}, p, {dest[t].data(), dest[t].size()});
                if (fd >= 0) {
                    const std::uint64_t at = end.fetch_add(n);
                    if (::pwrite(fd, dest[t].data(), n, static_cast<off_t>(at)) !=
                        static_cast<ssize_t>(n)) {
                        failed = true;
                    }
                }
            }
        };
        std::vector<std::thread> helpers;
        for (std::size_t t = 1; t < dest.size(); ++t) {
            helpers.emplace_back(work, t);
        }
        work(0);
        for (auto& h : helpers) {
            h.join();
        }
        if (fd >= 0) {
            ::close(fd);
            if (failed || ::rename(tmp.c_str(), write_to.c_str()) != 0) {
                throw std::runtime_error("cannot write " + tmp);
            }
        }
    });
    if (!write_to.empty()) {
        ::unlink(write_to.c_str());
    }
    return secs;
}

/// Seconds to write `bytes` as a new file in `dir` (as a write of an array does: the old file is
/// gone, the kernel takes fresh pages for the new one), with one write() call.
inline double file_write_seconds(const std::string& dir, const std::vector<std::uint8_t>& bytes) {
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
inline double g_limit = 0;

/// One measured row: seconds per operation and bytes per operation, for us and c-blosc2; with a
/// codec limit (g_limit, seconds per operation) the share of it we reach.
inline void row(const std::string& array,
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

}  // namespace b2nd::bench::array
