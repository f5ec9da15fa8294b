// The Blosc2 frame header and trailer (README_CFRAME_FORMAT.rst, as c-blosc2 writes them; see
// FORMAT-NOTES.md and src/format/CONFORMANCE.md where they differ).
//
//   frame   = header | chunks | offsets index chunk | trailer
//   header  = msgpack fixarray(14):
//     0x00 9e                      fixarray of 14
//     0x01 a8 "b2frame\0"          magic
//     0x0a d2 header_len           int32 BE
//     0x0f cf frame_len            uint64 BE
//     0x18 a4 general_flags frame_type codec_flags other_flags
//     0x1d d3 nbytes               int64 BE: uncompressed bytes of all chunks
//     0x26 d3 cbytes               int64 BE: bytes of the chunks section (the index follows it)
//     0x2f d2 typesize  0x34 d2 blocksize  0x39 d2 chunksize (0: variable-size chunks)
//     0x3e d1 tcomp     0x41 d1 tdecomp                    (int16 BE, informational)
//     0x44 c2/c3 has_vlmetalayers
//     0x45 d8 nfilters filters[6] udcodec compcode_meta filters_meta[6] other_flags2 reserved
//     0x57 93 cd idx_size de nmeta {fixstr name, d2 offset}*  dc nmeta {c6 len content}*
//   trailer = msgpack fixarray(4): version, vlmetalayers (same layout as the header's
//             metalayers, each content a Blosc2 chunk), ce trailer_len, d8 fp_type fp[16]
//
// Advanced (b2nd::format, the byte layer): for tools that parse or write the format itself.
// Programs that read and write arrays need only <b2nd/b2nd.hpp>.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <b2nd/byte_span.hpp>
#include <b2nd/format/chunk_header.hpp>

namespace b2nd::format {

/// Smallest header (no metalayers section) and the fixed-part size c-blosc2 requires.
inline constexpr std::int32_t kFrameHeaderMinLen = 87;
/// Smallest trailer c-blosc2 accepts.
inline constexpr std::int32_t kFrameTrailerMinLen = 25;
/// Highest frame format version we read (3: variable chunks / VL blocks).
inline constexpr std::uint8_t kMaxFrameVersion = 3;
/// Version c-blosc2 writes for fixed-size chunks (BLOSC2_VERSION_FRAME_FORMAT_RC1).
inline constexpr std::uint8_t kFrameVersionFixed = 2;
/// Longest metalayer name (msgpack fixstr).
inline constexpr std::size_t kMaxMetalayerName = 31;
/// c-blosc2's limits on the number of metalayers and vlmetalayers.
inline constexpr std::size_t kMaxMetalayers = 16;
inline constexpr std::size_t kMaxVlMetalayers = 8 * 1024;

/// Byte offsets of header fields that writers patch in place.
namespace frame_offsets {
inline constexpr std::size_t kHeaderLen = 11;     ///< header_len (int32 BE)
inline constexpr std::size_t kFrameLen = 16;      ///< frame_len (uint64 BE)
inline constexpr std::size_t kGeneralFlags = 25;  ///< general_flags
inline constexpr std::size_t kFrameType = 26;     ///< frame_type
inline constexpr std::size_t kNbytes = 30;        ///< nbytes (int64 BE)
inline constexpr std::size_t kCbytes = 39;        ///< cbytes (int64 BE)
inline constexpr std::size_t kTcomp = 63;         ///< tcomp: the writer's threads (int16 BE)
inline constexpr std::size_t kTdecomp = 66;       ///< tdecomp (int16 BE)
inline constexpr std::size_t kHasVlMeta = 68;     ///< has_vlmetalayers
inline constexpr std::size_t kFilters = 71;       ///< the filters' 6 slots
inline constexpr std::size_t kMetalayers = 87;    ///< the metalayers' section
}  // namespace frame_offsets

/// A metalayer or vlmetalayer: a name and its content. `offset` is where the content starts in
/// the header (or trailer) it was read from, which lets a writer update it in place.
struct Metalayer {
    std::string name;                   ///< its name (at most 31 bytes)
    std::vector<std::uint8_t> content;  ///< its content (vlmetalayers: a compressed chunk)
    std::size_t offset = 0;             ///< where the content starts in the header or trailer
};

/// Kinds of frame (frame_type, low nibble).
enum class FrameKind : std::uint8_t { contiguous = 0, sparse = 1 };

/// A parsed frame header.
struct FrameHeader {
    std::int32_t header_len = 0;  ///< bytes of the header, metalayers included
    std::uint64_t frame_len = 0;  ///< bytes of the whole frame
    std::uint8_t general_flags =
        0;  ///< version (low nibble), variable chunks (0x40), VL-blocks (0x80)
    std::uint8_t frame_type = 0;  ///< contiguous or sparse (low nibble)
    std::uint8_t codec_flags =
        0;  ///< compressor code (low nibble; 6: see udcodec) and clevel (high nibble)
    std::uint8_t other_flags = 0;                          ///< split mode (low two bits) and more
    std::int64_t nbytes = 0;                               ///< uncompressed bytes of all chunks
    std::int64_t cbytes = 0;                               ///< compressed bytes of all chunks
    std::int32_t typesize = 0;                             ///< bytes per item
    std::int32_t blocksize = 0;                            ///< bytes per block
    std::int32_t chunksize = 0;                            ///< bytes per chunk (0: variable)
    std::int16_t tcomp = 0;                                ///< threads c-blosc2 compressed with
    std::int16_t tdecomp = 0;                              ///< threads c-blosc2 decompresses with
    bool has_vlmetalayers = false;                         ///< whether a trailer holds vlmetalayers
    std::uint8_t nfilters = kChunkMaxFilters;              ///< filter slots used
    std::array<std::uint8_t, kChunkMaxFilters> filters{};  ///< filter ids
    std::array<std::uint8_t, kChunkMaxFilters> filters_meta{};  ///< filters' meta bytes
    std::uint8_t udcodec = 0;                                   ///< a user codec's id
    std::uint8_t compcode_meta = 0;                             ///< the codec's meta byte
    std::uint8_t other_flags2 = 0;                              ///< dictionary use (0x01)
    std::vector<Metalayer> metalayers;                          ///< the fixed-size metalayers

    /// The frame format version.
    std::uint8_t version() const noexcept { return general_flags & 0x0f; }
    /// Chunks of variable size.
    bool variable_chunks() const noexcept { return (general_flags & 0x40) != 0; }
    /// Chunks of variable-length blocks.
    bool vl_blocks() const noexcept { return (general_flags & 0x80) != 0; }
    /// Contiguous or sparse.
    FrameKind kind() const noexcept { return static_cast<FrameKind>(frame_type & 0x0f); }
    /// c-blosc2's compressor code (codec_flags low nibble is the compcode; 6 = see udcodec).
    std::uint8_t compcode() const noexcept {
        return (codec_flags & 0x0f) == 6 ? udcodec : static_cast<std::uint8_t>(codec_flags & 0x0f);
    }
    /// The compression level.
    int clevel() const noexcept { return codec_flags >> 4; }
    /// c-blosc2 split mode (1 always .. 4 forward_compat).
    int splitmode() const noexcept { return (other_flags & 0x03) + 1; }
    /// Compressed with dictionaries.
    bool use_dict() const noexcept { return (other_flags2 & 0x01) != 0; }
    /// The metalayer `name`, or null.
    const Metalayer* metalayer(const std::string& name) const noexcept;
};

/// Parses the header at the start of `frame` (which must hold at least header_len bytes).
/// Checks every marker, the magic, the version, and that lengths are consistent.
/// \throws FormatError / UnsupportedError
FrameHeader read_frame_header(ByteSpan frame);

/// The header_len and frame_len fields alone (from the first 25 bytes), checked for sanity.
struct FrameLengths {
    std::int32_t header_len;  ///< bytes of the header
    std::uint64_t frame_len;  ///< bytes of the frame
};
FrameLengths read_frame_lengths(ByteSpan frame_start);

/// What a file that is not a Blosc2 frame is, from its first bytes: "a NumPy .npy file", "a zip
/// archive", "an HDF5 file ...", "a netCDF classic file", gzip, Zstandard, Parquet, FITS, JSON,
/// or empty when it is none of these (or is a frame).
std::string foreign_format(ByteSpan start);

/// Serializes a header (header_len is computed; frame_len, nbytes, cbytes are taken from `h`).
std::vector<std::uint8_t> write_frame_header(const FrameHeader& h);

/// A parsed trailer: vlmetalayers with their (still compressed) content chunks.
struct FrameTrailer {
    std::uint8_t version = 1;             ///< the trailer's version
    std::vector<Metalayer> vlmetalayers;  ///< vlmetalayers, content still compressed
    std::uint32_t trailer_len = 0;        ///< bytes of the trailer
    /// The 16-byte fingerprint at the trailer's end, and its type byte. c-blosc2 writes type 0
    /// and zeros (its types 1 to 3 are reserved for XXH3 fingerprints it does not compute yet)
    /// and reads neither; b2nd-cpp's checksum stamp uses them (src/storage/checksums.hpp).
    std::uint8_t fingerprint_type = 0;
    std::array<std::uint8_t, 16> fingerprint{};  ///< see fingerprint_type
};

/// Reads trailer_len from the last bytes of a frame (the 0xce marker sits 23 bytes before the
/// end); `at` is where frame_tail starts in the frame (for error offsets). \throws FormatError
std::uint32_t read_trailer_len(ByteSpan frame_tail, std::uint64_t at = 0);

/// Parses the trailer (exactly trailer_len bytes, starting at `at` in the frame).
FrameTrailer read_frame_trailer(ByteSpan trailer, std::uint64_t at = 0);

/// Serializes a trailer with the given vlmetalayers (contents already encoded) and fingerprint
/// (c-blosc2's: type 0, zeros).
std::vector<std::uint8_t> write_frame_trailer(const std::vector<Metalayer>& vlmetalayers,
                                              std::uint8_t fingerprint_type = 0,
                                              const std::array<std::uint8_t, 16>& fingerprint = {});

}  // namespace b2nd::format
