// Stream codecs: BloscLZ (ours) and the Debian libraries lz4, zstd and zlib.
#include "compressors.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include <b2nd/error.hpp>

#include <lz4.h>
#include <lz4hc.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

namespace b2nd::codec::detail {

std::uint32_t crc32(std::uint32_t crc, const std::uint8_t* p, std::size_t n) noexcept {
    while (n > 0) {
        const auto piece = static_cast<uInt>(std::min<std::size_t>(n, 1U << 30));
        crc = static_cast<std::uint32_t>(::crc32(crc, p, piece));
        p += piece;
        n -= piece;
    }
    return crc;
}

namespace {

/// Per-thread zstd contexts, created on first use and freed with the thread.
struct ZstdContexts {
    ZSTD_CCtx* cctx = nullptr;
    ZSTD_DCtx* dctx = nullptr;
    ZstdContexts() = default;
    ZstdContexts(const ZstdContexts&) = delete;
    ZstdContexts& operator=(const ZstdContexts&) = delete;
    ~ZstdContexts() {
        ZSTD_freeCCtx(cctx);
        ZSTD_freeDCtx(dctx);
    }
    ZSTD_CCtx* compressor() {
        if (cctx == nullptr) {
            cctx = ZSTD_createCCtx();
            if (cctx == nullptr) {
                throw CodecError("zstd: cannot allocate a compression context");
            }
        }
        return cctx;
    }
    ZSTD_DCtx* decompressor() {
        if (dctx == nullptr) {
            dctx = ZSTD_createDCtx();
            if (dctx == nullptr) {
                throw CodecError("zstd: cannot allocate a decompression context");
            }
        }
        return dctx;
    }
};

ZstdContexts& zstd_contexts() {
    thread_local ZstdContexts contexts;
    return contexts;
}

/// c-blosc2's mapping of clevel 1-9 to zstd levels.
int zstd_level(int clevel) {
    if (clevel >= 9) {
        return ZSTD_maxCLevel();
    }
    if (clevel == 8) {
        return ZSTD_maxCLevel() - 2;
    }
    return clevel * 2 - 1;
}

constexpr std::size_t kIntMax = static_cast<std::size_t>(std::numeric_limits<int>::max());

}  // namespace

StreamDict::StreamDict(const std::uint8_t* data, std::size_t size, CompFormat format)
    : data_(data), size_(size) {
    if (format == CompFormat::zstd) {
        ddict_ = ZSTD_createDDict(data, size);
        if (ddict_ == nullptr) {
            throw CodecError("zstd: cannot load the chunk's dictionary");
        }
    }
}

StreamDict::~StreamDict() {
    ZSTD_freeDDict(static_cast<ZSTD_DDict*>(ddict_));
}

std::size_t compress_stream(Codec c,
                            int clevel,
                            const std::uint8_t* src,
                            std::size_t n,
                            std::uint8_t* out,
                            std::size_t cap) {
    if (n > kIntMax) {
        return 0;
    }
    const std::size_t capped = cap > kIntMax ? kIntMax : cap;
    switch (c) {
        case Codec::blosclz:
            return blosclz_compress(clevel, src, n, out, capped);
        case Codec::lz4: {
            const int r =
                LZ4_compress_fast(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(out),
                                  static_cast<int>(n), static_cast<int>(capped), 10 - clevel);
            return r > 0 ? static_cast<std::size_t>(r) : 0;
        }
        case Codec::lz4hc: {
            const int r =
                LZ4_compress_HC(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(out),
                                static_cast<int>(n), static_cast<int>(capped), clevel);
            return r > 0 ? static_cast<std::size_t>(r) : 0;
        }
        case Codec::zlib: {
            uLongf len = static_cast<uLongf>(capped);
            const int r = compress2(out, &len, src, static_cast<uLong>(n), clevel);
            if (r == Z_BUF_ERROR) {
                return 0;
            }
            if (r != Z_OK) {
                throw CodecError("zlib: compress2 failed with code " + std::to_string(r));
            }
            return static_cast<std::size_t>(len);
        }
        case Codec::zstd: {
            const std::size_t r = ZSTD_compressCCtx(zstd_contexts().compressor(), out, capped, src,
                                                    n, zstd_level(clevel));
            if (ZSTD_isError(r) != 0U) {
                if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall) {
                    return 0;
                }
                throw CodecError(std::string("zstd: ") + ZSTD_getErrorName(r));
            }
            return r;
        }
        default:
            break;  // plugin codecs go through the registry (chunk_encoder.cpp)
    }
    throw UsageError("unknown compressor code " + std::to_string(static_cast<int>(c)));
}

bool stops_early(CompFormat f, const StreamDict* dict) noexcept {
    return f == CompFormat::blosclz || (f == CompFormat::lz4 && dict == nullptr);
}

const char* decompress_stream_prefix(CompFormat f,
                                     const std::uint8_t* src,
                                     std::size_t n,
                                     std::uint8_t* out,
                                     std::size_t want,
                                     std::size_t out_size,
                                     const StreamDict* dict) {
    if (want >= out_size || !stops_early(f, dict)) {
        return decompress_stream(f, src, n, out, out_size, dict);
    }
    if (n > kIntMax || out_size > kIntMax) {
        return "stream larger than 2 GiB";
    }
    if (f == CompFormat::blosclz) {
        return blosclz_decompress(src, n, out, out_size, want) ? nullptr : "corrupt blosclz stream";
    }
    const int r = LZ4_decompress_safe_partial(reinterpret_cast<const char*>(src),
                                              reinterpret_cast<char*>(out), static_cast<int>(n),
                                              static_cast<int>(want), static_cast<int>(out_size));
    if (r < 0) {
        return "corrupt lz4 stream";
    }
    return static_cast<std::size_t>(r) >= want ? nullptr : "lz4 stream decodes to a wrong size";
}

const char* decompress_stream(CompFormat f,
                              const std::uint8_t* src,
                              std::size_t n,
                              std::uint8_t* out,
                              std::size_t out_size,
                              const StreamDict* dict) {
    if (n > kIntMax || out_size > kIntMax) {
        return "stream larger than 2 GiB";
    }
    switch (f) {
        case CompFormat::blosclz:
            return blosclz_decompress(src, n, out, out_size) ? nullptr : "corrupt blosclz stream";
        case CompFormat::lz4: {
            const char* s = reinterpret_cast<const char*>(src);
            char* d = reinterpret_cast<char*>(out);
            const int r =
                dict != nullptr
                    ? LZ4_decompress_safe_usingDict(s, d, static_cast<int>(n),
                                                    static_cast<int>(out_size),
                                                    reinterpret_cast<const char*>(dict->data()),
                                                    static_cast<int>(dict->size()))
                    : LZ4_decompress_safe(s, d, static_cast<int>(n), static_cast<int>(out_size));
            if (r < 0) {
                return "corrupt lz4 stream";
            }
            return static_cast<std::size_t>(r) == out_size ? nullptr
                                                           : "lz4 stream decodes to a wrong size";
        }
        case CompFormat::zlib: {
            uLongf len = static_cast<uLongf>(out_size);
            const int r = uncompress(out, &len, src, static_cast<uLong>(n));
            if (r != Z_OK) {
                return r == Z_BUF_ERROR ? "zlib stream does not fit its block"
                                        : "corrupt zlib stream";
            }
            return len == out_size ? nullptr : "zlib stream decodes to a wrong size";
        }
        case CompFormat::zstd: {
            ZSTD_DCtx* dctx = zstd_contexts().decompressor();
            std::size_t r;
            if (dict != nullptr && dict->zstd_ddict() != nullptr) {
                r = ZSTD_decompress_usingDDict(dctx, out, out_size, src, n,
                                               static_cast<const ZSTD_DDict*>(dict->zstd_ddict()));
            } else if (dict != nullptr) {
                r = ZSTD_decompress_usingDict(dctx, out, out_size, src, n, dict->data(),
                                              dict->size());
            } else {
                r = ZSTD_decompressDCtx(dctx, out, out_size, src, n);
            }
            if (ZSTD_isError(r) != 0U) {
                return ZSTD_getErrorName(r);
            }
            return r == out_size ? nullptr : "zstd stream decodes to a wrong size";
        }
        case CompFormat::user_defined:
        case CompFormat::schunk:
            break;
    }
    return "unsupported compressor format";
}

namespace {

const char* inflate_whole(int window_bits,
                          const std::uint8_t* src,
                          std::size_t n,
                          std::vector<std::uint8_t>& out,
                          std::size_t limit) {
    z_stream z{};
    if (inflateInit2(&z, window_bits) != Z_OK) {
        return "zlib: cannot allocate an inflate state";
    }
    out.clear();
    std::size_t have = 0;
    int r = Z_OK;
    const std::uint8_t* in = src;
    std::size_t left = n;
    while (r != Z_STREAM_END) {
        if (have == out.size()) {
            if (have >= limit) {
                inflateEnd(&z);
                return "stream decodes to more bytes than the chunk holds";
            }
            out.resize(
                std::min(limit, std::max<std::size_t>(2 * have, std::max<std::size_t>(n, 4096))));
        }
        const auto in_piece = static_cast<uInt>(std::min<std::size_t>(left, 1U << 30));
        const auto out_piece =
            static_cast<uInt>(std::min<std::size_t>(out.size() - have, 1U << 30));
        z.next_in = const_cast<Bytef*>(in);  // zlib's API is not const-correct
        z.avail_in = in_piece;
        z.next_out = out.data() + have;
        z.avail_out = out_piece;
        r = inflate(&z, Z_NO_FLUSH);
        in += in_piece - z.avail_in;
        left -= in_piece - z.avail_in;
        have += out_piece - z.avail_out;
        if (r == Z_BUF_ERROR && left == 0 && z.avail_out != 0) {
            inflateEnd(&z);
            return "stream cut short";
        }
        if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR) {
            inflateEnd(&z);
            return r == Z_MEM_ERROR ? "zlib: out of memory" : "corrupt deflate stream";
        }
    }
    inflateEnd(&z);
    if (left != 0) {
        return "bytes after the end of the stream";
    }
    out.resize(have);
    return nullptr;
}

const char* zstd_whole(const std::uint8_t* src,
                       std::size_t n,
                       std::vector<std::uint8_t>& out,
                       std::size_t limit) {
    const unsigned long long declared = ZSTD_getFrameContentSize(src, n);
    if (declared == ZSTD_CONTENTSIZE_ERROR) {
        return "not a zstd frame";
    }
    ZSTD_DCtx* dctx = zstd_contexts().decompressor();
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN) {
        if (declared > limit) {
            return "zstd frame declares more bytes than the chunk holds";
        }
        out.resize(static_cast<std::size_t>(declared));
        const std::size_t r = ZSTD_decompressDCtx(dctx, out.data(), out.size(), src, n);
        if (ZSTD_isError(r) != 0U) {
            return ZSTD_getErrorName(r);
        }
        return r == out.size() ? nullptr : "zstd frame decodes to a wrong size";
    }
    // No size in the frame header: stream it, bounded.
    ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
    out.clear();
    ZSTD_inBuffer in{src, n, 0};
    std::size_t have = 0;
    std::size_t r = 1;
    while (r != 0) {
        if (have == out.size()) {
            if (have >= limit) {
                return "stream decodes to more bytes than the chunk holds";
            }
            out.resize(
                std::min(limit, std::max<std::size_t>(2 * have, std::max<std::size_t>(n, 4096))));
        }
        ZSTD_outBuffer o{out.data() + have, out.size() - have, 0};
        r = ZSTD_decompressStream(dctx, &o, &in);
        if (ZSTD_isError(r) != 0U) {
            return ZSTD_getErrorName(r);
        }
        have += o.pos;
        if (r != 0 && in.pos == in.size && o.pos < o.size) {
            return "stream cut short";
        }
    }
    if (in.pos != in.size) {
        return "bytes after the end of the stream";
    }
    out.resize(have);
    return nullptr;
}

}  // namespace

std::size_t zstd_frame_size(const std::uint8_t* src, std::size_t n) noexcept {
    const unsigned long long d = ZSTD_getFrameContentSize(src, n);
    return d == ZSTD_CONTENTSIZE_ERROR || d == ZSTD_CONTENTSIZE_UNKNOWN || d > SIZE_MAX
               ? SIZE_MAX
               : static_cast<std::size_t>(d);
}

const char* decompress_whole(WholeStream f,
                             const std::uint8_t* src,
                             std::size_t n,
                             std::vector<std::uint8_t>& out,
                             std::size_t limit) {
    switch (f) {
        case WholeStream::zstd:
            return zstd_whole(src, n, out, limit);
        case WholeStream::zlib:
            return inflate_whole(15, src, n, out, limit);
        case WholeStream::gzip:
            return inflate_whole(15 + 16, src, n, out, limit);
    }
    return "unknown stream format";
}

std::vector<std::uint8_t> compress_whole(WholeStream f,
                                         int level,
                                         const std::uint8_t* src,
                                         std::size_t n) {
    std::vector<std::uint8_t> out;
    if (f == WholeStream::zstd) {
        out.resize(ZSTD_compressBound(n));
        const std::size_t r =
            ZSTD_compressCCtx(zstd_contexts().compressor(), out.data(), out.size(), src, n, level);
        if (ZSTD_isError(r) != 0U) {
            throw CodecError(std::string("zstd: ") + ZSTD_getErrorName(r));
        }
        out.resize(r);
        return out;
    }
    z_stream z{};
    if (deflateInit2(&z, std::clamp(level, 0, 9), Z_DEFLATED, f == WholeStream::gzip ? 15 + 16 : 15,
                     8, Z_DEFAULT_STRATEGY) != Z_OK) {
        throw CodecError("zlib: cannot allocate a deflate state");
    }
    if (n > 0xffffffffU) {
        deflateEnd(&z);
        throw CodecError("zlib: a stream of more than 4 GiB");
    }
    out.resize(deflateBound(&z, static_cast<uLong>(n)));
    z.next_in = const_cast<Bytef*>(src);  // zlib's API is not const-correct
    z.avail_in = static_cast<uInt>(n);
    z.next_out = out.data();
    z.avail_out = static_cast<uInt>(out.size());
    const int r = deflate(&z, Z_FINISH);
    const std::size_t written = out.size() - z.avail_out;
    deflateEnd(&z);
    if (r != Z_STREAM_END) {
        throw CodecError("zlib: deflate failed with code " + std::to_string(r));
    }
    out.resize(written);
    return out;
}

}  // namespace b2nd::codec::detail
