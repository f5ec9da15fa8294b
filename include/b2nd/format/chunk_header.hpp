// The Blosc/Blosc2 chunk header (c-blosc2 README_CHUNK_FORMAT.rst). All integers little-endian.
//
//   |-0-|-1-|-2-|-3-|-4-|-5-|-6-|-7-|-8-|-9-|-A-|-B-|-C-|-D-|-E-|-F-|
//     ^   ^   ^   ^ |     nbytes    |   blocksize   |     cbytes    |
//     |   |   |   +-- typesize
//     |   |   +------ flags
//     |   +---------- versionlz
//     +-------------- version
//
// Extended header (present when flags bits 0 and 2 are both set), bytes 16-31:
//
//   |-0-|-1-|-2-|-3-|-4-|-5-|-6-|-7-|-8-|-9-|-A-|-B-|-C-|-D-|-E-|-F-|
//   |     filters[6]        | ^ | ^ |     filters_meta[6]   | ^ | ^ |
//                             |   +- compcode_meta            |   +- blosc2_flags
//                             +- udcodec                      +- blosc2_flags2
//
// `read_chunk_header` validates every field before anything uses it; see
// src/format/CONFORMANCE.md for where it is stricter or more lenient than c-blosc2.
//
// Advanced (b2nd::format, the byte layer): for tools that parse or write the format itself.
// Programs that read and write arrays need only <b2nd/b2nd.hpp>.
#pragma once

#include <array>
#include <cstdint>

#include <b2nd/byte_span.hpp>

namespace b2nd::format {

inline constexpr int kChunkMinHeaderSize = 16;
inline constexpr int kChunkExtendedHeaderSize = 32;
inline constexpr int kChunkMaxFilters = 6;
/// Highest chunk format version we read (6: VL blocks).
inline constexpr std::uint8_t kMaxChunkVersion = 6;
/// The version c-blosc2 writes for regular chunks (BLOSC2_VERSION_FORMAT_STABLE).
inline constexpr std::uint8_t kStableChunkVersion = 5;
/// The version of chunks with variable-length blocks.
inline constexpr std::uint8_t kVlBlocksChunkVersion = 6;
/// Largest block c-blosc2 accepts (BLOSC2_MAXBLOCKSIZE).
inline constexpr std::int32_t kMaxBlockSize = 536866816;
/// Largest uncompressed chunk (BLOSC2_MAX_BUFFERSIZE): INT32_MAX minus the maximum overhead.
inline constexpr std::int32_t kMaxChunkNbytes = 2147483647 - kChunkExtendedHeaderSize;
/// Largest dictionary c-blosc2 writes or accepts (BLOSC2_MAXDICTSIZE).
inline constexpr std::int32_t kMaxDictSize = 32 * 1024;

/// Bits of the `flags` byte (offset 2).
namespace chunk_flags {
inline constexpr std::uint8_t kShuffle =
    0x01;  ///< shuffled (1.x: the filter; both shuffle bits: extended header)
inline constexpr std::uint8_t kMemcpyed = 0x02;    ///< stored uncompressed
inline constexpr std::uint8_t kBitshuffle = 0x04;  ///< bitshuffled
inline constexpr std::uint8_t kDelta = 0x08;       ///< delta-coded (1.x)
inline constexpr std::uint8_t kDontSplit = 0x10;   ///< streams not split per byte
/// Both shuffle bits set means "extended header follows".
inline constexpr std::uint8_t kExtended = kShuffle | kBitshuffle;
}  // namespace chunk_flags

/// Bits of the `blosc2_flags` byte (offset 31).
namespace blosc2_flags {
inline constexpr std::uint8_t kUseDict = 0x01;    ///< compressed with a dictionary
inline constexpr std::uint8_t kBigEndian = 0x02;  ///< stored big-endian
inline constexpr std::uint8_t kLazy = 0x08;  ///< a lazy chunk (offsets only; c-blosc2 in memory)
inline constexpr std::uint8_t kSpecialShift = 4;  ///< shift of the special-value kind
inline constexpr std::uint8_t kSpecialMask =
    0x07;  ///< mask of the special-value kind (after the shift)
inline constexpr std::uint8_t kInstrumented = 0x80;  ///< instrumented (c-blosc2's debugging output)
}  // namespace blosc2_flags

/// Bits of the `blosc2_flags2` byte (offset 30).
namespace blosc2_flags2 {
inline constexpr std::uint8_t kVlBlocks = 0x01;  ///< the blocks are variable-length (VL-blocks)
}

/// A parsed, validated chunk header. Filters of a 16-byte (Blosc1-style) header are expanded
/// into the six-slot pipeline the way c-blosc2 does (shuffle/bitshuffle in slot 5, delta in 4).
struct ChunkHeader {
    std::uint8_t version = 0;    ///< offset 0
    std::uint8_t versionlz = 0;  ///< offset 1
    std::uint8_t flags = 0;      ///< offset 2, see chunk_flags
    std::uint8_t typesize = 0;   ///< offset 3
    std::int32_t nbytes = 0;     ///< offset 4: uncompressed bytes
    /// offset 8: block size (clamped to nbytes as c-blosc2 does); number of blocks for VL-blocks.
    std::int32_t blocksize = 0;
    std::int32_t cbytes = 0;  ///< offset 12: compressed bytes including the header
    bool extended = false;    ///< a 32-byte Blosc2 header (else 16 bytes, Blosc1)
    std::array<std::uint8_t, kChunkMaxFilters> filters{};       ///< offset 16
    std::uint8_t udcodec = 0;                                   ///< offset 22
    std::uint8_t compcode_meta = 0;                             ///< offset 23
    std::array<std::uint8_t, kChunkMaxFilters> filters_meta{};  ///< offset 24
    std::uint8_t blosc2_flags2 = 0;                             ///< offset 30
    std::uint8_t blosc2_flags = 0;                              ///< offset 31

    /// 16 or 32.
    int header_size() const noexcept {
        return extended ? kChunkExtendedHeaderSize : kChunkMinHeaderSize;
    }
    /// Stored uncompressed.
    bool memcpyed() const noexcept { return (flags & chunk_flags::kMemcpyed) != 0; }
    /// Streams split per byte of the type.
    bool split() const noexcept { return (flags & chunk_flags::kDontSplit) == 0; }
    /// The 3-bit compressor format (codec::CompFormat).
    std::uint8_t comp_format() const noexcept { return static_cast<std::uint8_t>(flags >> 5); }
    /// The special-value kind (codec::Special), 0 for a regular chunk.
    std::uint8_t special() const noexcept {
        return extended ? static_cast<std::uint8_t>((blosc2_flags >> blosc2_flags::kSpecialShift) &
                                                    blosc2_flags::kSpecialMask)
                        : 0;
    }
    /// Compressed with a dictionary.
    bool use_dict() const noexcept {
        return extended && (blosc2_flags & blosc2_flags::kUseDict) != 0;
    }
    /// Variable-length blocks.
    bool vl_blocks() const noexcept {
        return extended && (blosc2_flags2 & blosc2_flags2::kVlBlocks) != 0;
    }
    /// Number of blocks: ceil(nbytes / blocksize), or the stored count for VL-block chunks.
    std::int32_t nblocks() const noexcept {
        if (vl_blocks()) {
            return blocksize;
        }
        return nbytes / blocksize + (nbytes % blocksize != 0 ? 1 : 0);
    }
    /// Size of the repeated value of a Special::value chunk (cbytes - 32).
    std::int32_t special_value_size() const noexcept { return cbytes - kChunkExtendedHeaderSize; }
};

/// Parses and validates the header at the start of `chunk`. `chunk` must hold the whole chunk
/// (at least cbytes bytes; extra bytes after cbytes are ignored).
/// \throws FormatError naming the field and offset; UnsupportedError for valid features we do not
///         read (versions above 6, instrumented chunks, unknown flag bits).
/// `whole` false: `chunk` may hold the header alone (a chunk fetched piece by piece), and cbytes
/// is not checked against its size.
ChunkHeader read_chunk_header(ByteSpan chunk, bool whole = true);

/// Serializes `h` into `out` (16 or 32 bytes, per h.extended). Fields are written as given.
void write_chunk_header(const ChunkHeader& h, std::uint8_t* out) noexcept;

}  // namespace b2nd::format
