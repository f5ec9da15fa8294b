// bench_array's c-blosc2 side (when built against it): its b2nd arrays opened, read and written
// the way the workloads read and write ours.
#pragma once

#include "array_workloads.hpp"

namespace b2nd::bench::array {

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

inline double blosc2_write(const Spec& s,
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

}  // namespace b2nd::bench::array
