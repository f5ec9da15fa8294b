// What each export format takes of ExportCoding, checked in one place (export_coding.hpp).
#include "export_coding.hpp"

#include <algorithm>
#include <cstring>

#include <b2nd/error.hpp>

#include "../codec/blosc1.hpp"
#include "../codec/compressors.hpp"
#include "../detail/text.hpp"

namespace b2nd::bridges {

namespace {

using C = ExportCompressor;

/// What each format takes, its default first.
std::vector<C> taken(ExportFormat f) {
    switch (f) {
        case ExportFormat::hdf5:
            return {C::gzip, C::blosc, C::none};
        case ExportFormat::zarr2:
            return {C::blosc, C::zstd, C::zlib, C::gzip, C::lz4, C::none};
        case ExportFormat::zarr3:
            return {C::blosc, C::zstd, C::gzip, C::none};
    }
    return {};
}

bool blosc1_has(codec::Codec c) {
    using codec::Codec;
    return c == Codec::blosclz || c == Codec::lz4 || c == Codec::lz4hc || c == Codec::zlib ||
           c == Codec::zstd;
}

}  // namespace

const char* compressor_name(ExportCompressor c) noexcept {
    switch (c) {
        case C::standard:
            return "the format's default";
        case C::blosc:
            return "blosc";
        case C::gzip:
            return "gzip";
        case C::zlib:
            return "zlib";
        case C::zstd:
            return "zstd";
        case C::lz4:
            return "lz4";
        case C::none:
            return "none";
    }
    return "?";
}

const char* format_name(ExportFormat f) noexcept {
    return f == ExportFormat::hdf5 ? "HDF5" : f == ExportFormat::zarr2 ? "Zarr v2" : "Zarr v3";
}

ChunkCoding resolve_coding(const AnyArray& a,
                           const ExportCoding& o,
                           ExportFormat f,
                           const std::string& where) {
    const std::vector<C> ok = taken(f);
    const std::string format = format_name(f);
    const auto list = [&] {
        std::string s;
        for (std::size_t i = 0; i < ok.size(); ++i) {
            s += std::string(i == 0               ? ""
                             : i + 1 == ok.size() ? " or "
                                                  : ", ") +
                 compressor_name(ok[i]);
        }
        return s;
    };
    const CompressionParams p = a.compression();
    ChunkCoding c;
    c.compressor = o.compressor == C::standard ? ok.front() : o.compressor;
    if (std::find(ok.begin(), ok.end(), c.compressor) == ok.end()) {
        throw UsageError(where + ": " + format + " takes the compressors " + list() + ", not " +
                         compressor_name(c.compressor));
    }
    if (o.codec && c.compressor != C::blosc) {
        throw UsageError(where + ": a codec (" + std::string(codec::codec_name(*o.codec)) +
                         ") is blosc's; the compressor is " + compressor_name(c.compressor));
    }
    if (o.codec && !blosc1_has(*o.codec)) {
        throw UsageError(where + ": Blosc 1.x (what " + format +
                         " readers decode) has the codecs "
                         "blosclz, lz4, lz4hc, zlib and zstd, not " +
                         std::string(codec::codec_name(*o.codec)));
    }
    if (o.clevel > 9) {
        throw UsageError(where + ": levels are 0-9, not " + detail::num(o.clevel));
    }
    // The array's shuffle, for blosc's default.
    int own = 0;
    for (const auto& filter : p.filters) {
        own = filter.id == codec::Filter::shuffle      ? 1
              : filter.id == codec::Filter::bitshuffle ? 2
                                                       : own;
    }
    const bool hdf5_gzip = f == ExportFormat::hdf5 && c.compressor == C::gzip;
    switch (o.shuffle) {
        case ExportShuffle::standard:
            c.shuffle = c.compressor == C::blosc ? own : hdf5_gzip ? 1 : 0;
            break;
        case ExportShuffle::none:
            c.shuffle = 0;
            break;
        case ExportShuffle::byte:
        case ExportShuffle::bit:
            c.shuffle = o.shuffle == ExportShuffle::byte ? 1 : 2;
            if (c.compressor != C::blosc && !(hdf5_gzip && c.shuffle == 1)) {
                throw UsageError(where + ": " + format + " " +
                                 (f == ExportFormat::hdf5
                                      ? "has a byte shuffle filter before gzip, and "
                                        "shuffles bits only inside blosc"
                                      : "shuffles inside blosc only") +
                                 "; the compressor is " + compressor_name(c.compressor));
            }
            break;
    }
    switch (c.compressor) {
        case C::blosc:
            c.stream = ChunkCoding::Stream::blosc1;
            c.codec = o.codec.value_or(blosc1_has(p.codec) ? p.codec : codec::Codec::zstd);
            break;
        case C::gzip:
            c.stream = hdf5_gzip ? ChunkCoding::Stream::zlib : ChunkCoding::Stream::gzip;
            break;
        case C::zlib:
            c.stream = ChunkCoding::Stream::zlib;
            break;
        case C::zstd:
            c.stream = ChunkCoding::Stream::zstd;
            break;
        case C::lz4:
            c.stream = ChunkCoding::Stream::lz4;
            break;
        default:
            c.stream = ChunkCoding::Stream::raw;
            break;
    }
    c.clevel = o.clevel >= 0 ? o.clevel : hdf5_gzip ? 4 : std::clamp(p.clevel, 0, 9);
    return c;
}

AnyArray coded_grid(const AnyArray& a,
                    const ExportCoding& o,
                    ExportFormat f,
                    const std::string& where) {
    if (!o.blocks.empty() && f != ExportFormat::zarr3) {
        throw UsageError(where + ": " + format_name(f) +
                         " has no blocks (they are Zarr v3's inner chunks); give chunks only");
    }
    if (o.chunks.empty() && o.blocks.empty()) {
        return a;
    }
    try {
        return a.rechunked(o.chunks, o.blocks);
    } catch (const UsageError& e) {
        throw UsageError(where + ": " + e.what());
    }
}

void encode_chunk(const ChunkCoding& c,
                  const std::uint8_t* raw,
                  std::size_t n,
                  int typesize,
                  std::vector<std::uint8_t>& out) {
    using codec::detail::WholeStream;
    switch (c.stream) {
        case ChunkCoding::Stream::blosc1:
            codec::detail::encode_blosc1_chunk(raw, n, c.codec, c.clevel, c.shuffle,
                                               std::min(typesize, 255), out);
            return;
        case ChunkCoding::Stream::zstd:
            out = codec::detail::compress_whole(WholeStream::zstd, c.clevel, raw, n);
            return;
        case ChunkCoding::Stream::zlib:
            out = codec::detail::compress_whole(WholeStream::zlib, c.clevel, raw, n);
            return;
        case ChunkCoding::Stream::gzip:
            out = codec::detail::compress_whole(WholeStream::gzip, c.clevel, raw, n);
            return;
        case ChunkCoding::Stream::lz4: {
            // numcodecs' LZ4: the decoded size (4 bytes, little-endian), then one LZ4 block.
            if (n > 0x7fffffffU) {
                throw UsageError("a chunk of 2 GiB or more has no LZ4 block");
            }
            out.resize(4 + n + n / 255 + 16);
            for (int k = 0; k < 4; ++k) {
                out[static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(n >> (8 * k));
            }
            const std::size_t z = codec::detail::compress_stream(codec::Codec::lz4, c.clevel, raw,
                                                                 n, out.data() + 4, out.size() - 4);
            if (z == 0 && n > 0) {
                throw CodecError("lz4 could not compress a chunk");
            }
            out.resize(4 + z);
            return;
        }
        case ChunkCoding::Stream::raw:
            out.assign(raw, raw + n);
            return;
    }
}

}  // namespace b2nd::bridges
