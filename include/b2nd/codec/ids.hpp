// Identifiers of the Blosc2 chunk format (README_CHUNK_FORMAT.rst), with their spec values.
//
// Two compressor enumerations exist and must not be confused (see STYLE.md):
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

/// c-blosc2's public compressor codes.
enum class Codec : std::uint8_t { blosclz = 0, lz4 = 1, lz4hc = 2, zlib = 4, zstd = 5 };

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
    bytedelta_legacy = 34,  // the buggy BYTEDELTA of c-blosc2 2.8/2.9 (read only)
    bytedelta = 35,
};

/// One filter of a pipeline with its meta byte.
struct FilterSlot {
    Filter id = Filter::none;
    std::uint8_t meta = 0;  ///< shuffle: bytes per unit (0 = typesize); trunc_prec: signed bits
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
    }
    return CompFormat::user_defined;
}

/// "blosclz", "lz4", "lz4hc", "zlib", "zstd".
std::string_view codec_name(Codec c) noexcept;
/// Parses a compressor name (as above); nullopt when unknown.
std::optional<Codec> parse_codec(std::string_view name) noexcept;
/// Codec from its public code, nullopt for plugin codes.
std::optional<Codec> codec_from_code(std::uint8_t code) noexcept;
/// "none", "shuffle", "bitshuffle", "delta", "trunc_prec", "bytedelta", or "filter<N>".
std::string filter_name(std::uint8_t id);
/// Parses a filter name (as above); nullopt when unknown.
std::optional<Filter> parse_filter(std::string_view name) noexcept;
/// Name of a CompFormat ("blosclz", "lz4", "zlib", "zstd", "user-defined", "format<N>").
std::string comp_format_name(std::uint8_t format);
/// "always", "never", "auto", "forward_compat".
std::string_view split_mode_name(SplitMode m) noexcept;

}  // namespace b2nd::codec
