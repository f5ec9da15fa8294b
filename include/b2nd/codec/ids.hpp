// Identifiers of the Blosc2 chunk format (README_CHUNK_FORMAT.rst), with their spec values.
//
// Two compressor enumerations exist and must not be confused:
//  - Codec: c-blosc2's public compressor code (BLOSC_BLOSCLZ 0 ... BLOSC_ZSTD 5). It is what
//    users choose, what frame headers store, and what the extended chunk header's `udcodec`
//    byte holds.
//  - CompFormat: the 3-bit code stored in bits 5-7 of a chunk's `flags` byte
//    (blosclz 0, lz4 and lz4hc 1, zlib 3, zstd 4, user-defined 6).
//
// Advanced (b2nd::codec, the chunk codec): for tools that encode or decode single chunks.
// Programs that read and write arrays need only <b2nd/b2nd.hpp>.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace b2nd::codec {

/// c-blosc2's public compressor codes (0-5), the globally registered plugin codecs (32-35,
/// with their parameter in CompressionParams::codec_meta), and user codecs (160-255,
/// registry.hpp) as static_cast<Codec>(id).
enum class Codec : std::uint8_t {
    blosclz = 0,
    lz4 = 1,
    lz4hc = 2,
    zlib = 4,
    zstd = 5,
    ndlz = 32,           ///< 2-d images; meta: cell side 4 or 8
    zfp_accuracy = 33,   ///< ZFP fixed accuracy; meta: signed exponent e, tolerance 10^e
    zfp_precision = 34,  ///< ZFP fixed precision; meta: bit planes (plus an ndim offset)
    zfp_rate = 35,       ///< ZFP fixed rate; meta: percent of the uncompressed size
};

/// The 3-bit compressor format stored in a chunk header's flags (bits 5-7).
enum class CompFormat : std::uint8_t {
    blosclz = 0,
    lz4 = 1,  // lz4 and lz4hc share one stream format
    zlib = 3,
    zstd = 4,
    user_defined = 6,  // look in the extended header's udcodec byte
    schunk = 7         // "defined in the super-chunk": never written by c-blosc2
};

/// Filter ids of the six-slot pipeline. Ids 0-31 are Blosc's own, 32-159 globally registered
/// plugins, 160-255 user-defined.
enum class Filter : std::uint8_t {
    none = 0,
    shuffle = 1,
    bitshuffle = 2,
    delta = 3,
    trunc_prec = 4,
    ndcell = 32,            // items regrouped in cells of side meta (registry plugin)
    ndmean = 33,            // each cell replaced by its mean (lossy; registry plugin)
    bytedelta_legacy = 34,  // the buggy BYTEDELTA of c-blosc2 2.8/2.9 (read only)
    bytedelta = 35,
    int_trunc = 36,  // low bits of integers cleared (lossy; registry plugin)
};

/// One filter of a pipeline with its meta byte.
struct FilterSlot {
    Filter id = Filter::none;  ///< the filter
    std::uint8_t meta = 0;     ///< shuffle: bytes per unit (0 = typesize); trunc_prec: signed bits
};

/// How a block's bytes are split into streams before compression.
enum class SplitMode : std::uint8_t {
    always = 1,          // BLOSC_ALWAYS_SPLIT
    never = 2,           // BLOSC_NEVER_SPLIT
    automatic = 3,       // BLOSC_AUTO_SPLIT
    forward_compat = 4,  // BLOSC_FORWARD_COMPAT_SPLIT (c-blosc2's default; same rule as automatic)
};

/// Whole-chunk special values (bits 4-6 of the extended header's blosc2_flags byte).
enum class Special : std::uint8_t {
    none = 0,
    zeros = 1,
    nan = 2,
    value = 3,  // a repeated value stored right after the header
    uninit = 4,
};

/// Below this many bytes c-blosc2 stores a chunk memcpyed (BLOSC_MIN_BUFFERSIZE).
inline constexpr std::int32_t kMinBufferSize = 32;
/// Largest typesize that drives stream splitting; c-blosc2 splits at most 16 streams.
inline constexpr int kMaxSplitStreams = 16;

/// The CompFormat a compressor writes.
constexpr CompFormat comp_format_of(Codec c) noexcept {
    switch (c) {
        case Codec::blosclz:
            return CompFormat::blosclz;
        case Codec::lz4:
        case Codec::lz4hc:
            return CompFormat::lz4;
        case Codec::zlib:
            return CompFormat::zlib;
        case Codec::zstd:
            return CompFormat::zstd;
        default:
            return CompFormat::user_defined;
    }
}

/// Whether c is one of Blosc's own codecs (0-5), which every c-blosc2 build has.
constexpr bool is_builtin(Codec c) noexcept {
    return comp_format_of(c) != CompFormat::user_defined;
}

/// Whether f is one of the chunk codec's own filters (0-4, BYTEDELTA 34-35) rather than a
/// plugin of the registry.
constexpr bool is_builtin(Filter f) noexcept {
    switch (f) {
        case Filter::none:
        case Filter::shuffle:
        case Filter::bitshuffle:
        case Filter::delta:
        case Filter::trunc_prec:
        case Filter::bytedelta_legacy:
        case Filter::bytedelta:
            return true;
        default:
            return false;
    }
}

/// "blosclz", "lz4", "lz4hc", "zlib", "zstd", a registered plugin's name ("ndlz",
/// "zfp_accuracy", ...), or "unknown".
std::string_view codec_name(Codec c) noexcept;
/// Parses a compressor name (as above); nullopt when unknown.
std::optional<Codec> parse_codec(std::string_view name) noexcept;
/// Codec from its code: Blosc's own and registered plugins; nullopt for codes nothing here
/// can encode or decode.
std::optional<Codec> codec_from_code(std::uint8_t code) noexcept;
/// "none", "shuffle", "bitshuffle", "delta", "trunc_prec", "bytedelta", a registered plugin's
/// name ("ndcell", "ndmean", "int_trunc", ...), or "filter<N>".
std::string filter_name(std::uint8_t id);
/// Parses a filter name (as above); nullopt when unknown.
std::optional<Filter> parse_filter(std::string_view name) noexcept;
/// Name of a CompFormat ("blosclz", "lz4", "zlib", "zstd", "user-defined", "format<N>").
std::string comp_format_name(std::uint8_t format);
/// "always", "never", "auto", "forward_compat".
std::string_view split_mode_name(SplitMode m) noexcept;

}  // namespace b2nd::codec
