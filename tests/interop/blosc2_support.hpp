// Optional interop tests (built only when a c-blosc2 library is found, see
// cmake/B2ndFindBlosc2.cmake): what the test files share, c-blosc2 set up once and its chunk
// encoder and decoder called as the tests need them.
#pragma once

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/codec/registry.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>

#include "support/data.hpp"
#include "support/files.hpp"
#include "support/json.hpp"
#include "support/temp_dir.hpp"
#include <b2nd.h>
#include <blosc2.h>
#include <sys/wait.h>

namespace b2nd::test::interop {

using namespace b2nd::codec;

struct Blosc2Library {
    Blosc2Library() { blosc2_init(); }
    ~Blosc2Library() { blosc2_destroy(); }
};

inline void ensure_init() {
    static Blosc2Library lib;
}

/// Decodes with c-blosc2; returns false when c-blosc2 reports an error.
inline bool try_blosc2_decode(const std::vector<std::uint8_t>& chunk,
                              std::vector<std::uint8_t>& out,
                              int nthreads = 1) {
    ensure_init();
    std::int32_t nbytes = 0;
    std::int32_t cbytes = 0;
    std::int32_t blocksize = 0;
    REQUIRE(blosc2_cbuffer_sizes(chunk.data(), &nbytes, &cbytes, &blocksize) >= 0);
    out.assign(static_cast<std::size_t>(nbytes), 0);
    blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
    dp.nthreads = static_cast<std::int16_t>(nthreads);
    blosc2_context* ctx = blosc2_create_dctx(dp);
    const int n = blosc2_decompress_ctx(ctx, chunk.data(), static_cast<std::int32_t>(chunk.size()),
                                        out.data(), nbytes);
    blosc2_free_ctx(ctx);
    return n == nbytes;
}

/// Decodes with c-blosc2; REQUIREs success.
inline std::vector<std::uint8_t> blosc2_decode(const std::vector<std::uint8_t>& chunk,
                                               int nthreads = 1) {
    std::vector<std::uint8_t> out;
    REQUIRE(try_blosc2_decode(chunk, out, nthreads));
    return out;
}

/// Whether this c-blosc2 has the bytedelta fix for trailing bytes (3.3.2).
constexpr bool kBlosc2KeepsBytedeltaTail = BLOSC2_VERSION_MAJOR > 3 ||
                                           (BLOSC2_VERSION_MAJOR == 3 && BLOSC2_VERSION_MINOR >= 3);

inline std::vector<std::uint8_t> blosc2_encode(const std::vector<std::uint8_t>& src,
                                               const EncodeParams& p,
                                               bool use_dict = false) {
    ensure_init();
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.compcode = static_cast<std::uint8_t>(p.codec);
    cp.clevel = static_cast<std::uint8_t>(p.clevel);
    cp.typesize = p.typesize;
    cp.blocksize = p.blocksize;
    cp.splitmode = static_cast<std::int32_t>(p.splitmode);
    cp.use_dict = use_dict ? 1 : 0;
    for (std::size_t i = 0; i < 6; ++i) {
        cp.filters[i] = static_cast<std::uint8_t>(p.filters[i].id);
        cp.filters_meta[i] = p.filters[i].meta;
        if (p.filters[i].id == Filter::bytedelta && p.filters[i].meta == 0) {
            cp.filters_meta[i] = static_cast<std::uint8_t>(p.typesize);  // needed outside a schunk
        }
    }
    blosc2_context* ctx = blosc2_create_cctx(cp);
    std::vector<std::uint8_t> out(src.size() + BLOSC2_MAX_OVERHEAD + 64 * 1024);
    const int n = blosc2_compress_ctx(ctx, src.data(), static_cast<std::int32_t>(src.size()),
                                      out.data(), static_cast<std::int32_t>(out.size()));
    blosc2_free_ctx(ctx);
    REQUIRE(n > 0);
    out.resize(static_cast<std::size_t>(n));
    return out;
}

struct Pipeline {
    const char* name;
    FilterPipeline filters;
    bool lossy;
};

const Pipeline kPipelines[] = {
    {"none", make_pipeline({}), false},
    {"shuffle", make_pipeline({{Filter::shuffle, 0}}), false},
    {"bitshuffle", make_pipeline({{Filter::bitshuffle, 0}}), false},
    {"delta+shuffle", make_pipeline({{Filter::delta, 0}, {Filter::shuffle, 0}}), false},
    {"truncprec+bitshuffle", make_pipeline({{Filter::trunc_prec, 13}, {Filter::bitshuffle, 0}}),
     true},
    {"shuffle+bytedelta", make_pipeline({{Filter::shuffle, 0}, {Filter::bytedelta, 0}}), false},
};

const Codec kCompressors[] = {Codec::blosclz, Codec::lz4, Codec::lz4hc, Codec::zlib, Codec::zstd};

/// Opens `path` with c-blosc2's b2nd and returns its content (b2nd_to_cbuffer), checking the
/// geometry and dtype it reports against ours.
inline std::vector<std::uint8_t> read_with_blosc2(const std::string& path,
                                                  const b2nd::AnyArray& ours) {
    ensure_init();
    b2nd_array_t* arr = nullptr;
    REQUIRE(b2nd_open(path.c_str(), &arr) >= 0);
    REQUIRE(arr != nullptr);
    CHECK(arr->ndim == ours.ndim());
    for (int d = 0; d < ours.ndim(); ++d) {
        const auto u = static_cast<std::size_t>(d);
        CHECK(arr->shape[d] == ours.shape()[u]);
        CHECK(arr->chunkshape[d] == ours.chunk_shape()[u]);
        CHECK(arr->blockshape[d] == ours.block_shape()[u]);
    }
    CHECK(std::string(arr->dtype) == ours.dtype().str());
    std::vector<std::uint8_t> out(static_cast<std::size_t>(ours.nbytes()));
    if (!out.empty()) {
        CHECK(b2nd_to_cbuffer(arr, out.data(), static_cast<std::int64_t>(out.size())) >= 0);
    }
    b2nd_free(arr);
    return out;
}

}  // namespace b2nd::test::interop
