// Decoding Blosc/Blosc2 chunks: the whole chunk, one block, or a byte range.
//
// A ChunkDecoder validates the header, the block-starts table and the dictionary once, then
// decodes straight from the caller's bytes (typically a memory map) into the caller's buffer.
// Every offset, length and size read from the chunk is checked before use; a malformed chunk
// raises FormatError naming what was wrong and where (offsets count from the chunk's first byte).
//
// Thread safety: all decode functions are const and may run concurrently on one ChunkDecoder.
// Scratch memory and codec contexts are per thread.
//
// Example:
//   b2nd::codec::ChunkDecoder dec(chunk_bytes);
//   std::vector<std::uint8_t> out(dec.nbytes());
//   dec.decode(out, /*nthreads=*/2);
//
// Advanced (b2nd::codec, the chunk codec): for tools that encode or decode single chunks.
// Programs that read and write arrays need only <b2nd/b2nd.hpp>.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <b2nd/byte_span.hpp>
#include <b2nd/codec/ids.hpp>
#include <b2nd/format/chunk_header.hpp>

namespace b2nd::codec {

namespace detail {
class StreamDict;
}
struct CodecPlugin;
struct FilterPlugin;
struct BlockContext;

/// Checks a block's stored bytes right before they are decoded, on the thread that decodes them
/// (a checksum table's per-block digests, docs/CHECKSUMS.md).
class BlockCheck {
public:
    virtual ~BlockCheck() = default;
    /// \throws FormatError (its offset counted from the chunk's first byte) when block i's
    /// stored bytes are not those that were written
    virtual void check_block(std::int32_t i) const = 0;
    /// Where a decode of block i's first `need` bytes must stop for check_prefix to check what
    /// it decoded; 0 (the default): check_block checks the block, before it is decoded.
    virtual std::size_t prefix_end(std::int32_t /*i*/, std::size_t /*need*/) const { return 0; }
    /// Checks block i's decoded bytes [0, end) (end from prefix_end), before any use of them.
    /// \throws FormatError (its offset counted from the chunk's first byte) when they are not
    /// those that were written
    virtual void check_prefix(std::int32_t /*i*/,
                              const std::uint8_t* /*decoded*/,
                              std::size_t /*end*/) const {}

protected:
    BlockCheck() = default;
    /// Copies a check (for derived classes).
    BlockCheck(const BlockCheck&) = default;
    /// Copies a check (for derived classes).
    BlockCheck& operator=(const BlockCheck&) = default;
};

/// A Blosc (1.x or 2.x) chunk, validated once, decoded whole or block by block on any thread
/// (each call is independent; the decoder is read-only after construction).
class ChunkDecoder {
public:
    /// Parses and validates `chunk` (which must hold at least the header's cbytes).
    /// `blockshape` is the array's block shape (the b2nd metalayer's), which ZFP, NDCELL and
    /// NDMEAN need; without it, decoding blocks that use them throws UnsupportedError.
    /// \throws FormatError, UnsupportedError (unregistered plugin codecs or filters, future
    /// versions), FormatError when blockshape does not match the chunk's block size
    explicit ChunkDecoder(ByteSpan chunk, const std::vector<std::int64_t>& blockshape = {});
    ~ChunkDecoder();
    /// Moves the decoder.
    ChunkDecoder(ChunkDecoder&&) noexcept;
    /// Moves the decoder.
    ChunkDecoder& operator=(ChunkDecoder&&) noexcept;
    ChunkDecoder(const ChunkDecoder&) = delete;
    ChunkDecoder& operator=(const ChunkDecoder&) = delete;

    /// Has every block checked by `check` right before it is decoded or copied (null: none).
    /// `check` must outlive the decoder's use.
    void set_block_check(const BlockCheck* check) noexcept { check_ = check; }

    /// The parsed header.
    const format::ChunkHeader& header() const noexcept { return header_; }
    /// The chunk's bytes (exactly cbytes of them).
    ByteSpan bytes() const noexcept { return chunk_; }
    /// Uncompressed size.
    std::int64_t nbytes() const noexcept { return header_.nbytes; }
    /// Bytes per item.
    std::int32_t typesize() const noexcept { return header_.typesize; }
    /// The number of blocks.
    std::int32_t nblocks() const noexcept { return nblocks_; }
    /// Uncompressed size of block i.
    std::int32_t block_nbytes(std::int32_t i) const;
    /// Offset of block i in the decoded chunk.
    std::int64_t block_offset(std::int32_t i) const;
    /// The nominal block size (for VL-block chunks, the largest block).
    std::int32_t blocksize() const noexcept { return blocksize_; }

    /// The special-value kind (Special::none for a regular chunk).
    Special special() const noexcept { return static_cast<Special>(header_.special()); }
    /// Stored uncompressed.
    bool memcpyed() const noexcept { return header_.memcpyed(); }
    /// The value of a Special::value chunk (special_value_size bytes), empty otherwise.
    ByteSpan special_value() const noexcept;
    /// A memcpyed chunk's data (nbytes() bytes, zero copy); empty for other chunks.
    ByteSpan memcpyed_data() const noexcept {
        return memcpyed() ? chunk_.subspan(static_cast<std::size_t>(header_.header_size()),
                                           static_cast<std::size_t>(header_.nbytes))
                          : ByteSpan{};
    }
    /// True when decoding a block other than 0 needs decoded block 0 (DELTA in the pipeline).
    bool needs_block0() const noexcept { return needs_block0_; }

    /// Decodes the whole chunk into dest (dest.size() >= nbytes()), on up to nthreads threads.
    /// Uninitialized special chunks read as zeros.
    void decode(MutableByteSpan dest, int nthreads = 1) const;

    /// Decodes block i into dest (dest.size() >= block_nbytes(i)). When needs_block0() and i > 0,
    /// `block0` may point at the decoded block 0 (block_nbytes(0) bytes) to avoid decoding it
    /// again; if null it is decoded into scratch.
    void decode_block(std::int32_t i,
                      MutableByteSpan dest,
                      const std::uint8_t* block0 = nullptr) const;

    /// Decodes at least the first `need` bytes of block i into dest (dest.size() >=
    /// block_nbytes(i); bytes past `need` are unspecified). Where the block's streams can stop
    /// early (decodes_prefix()), only what the first `need` bytes depend on is decoded: a slice
    /// near a block's start costs a fraction of the block. Otherwise the whole block.
    void decode_block_prefix(std::int32_t i,
                             MutableByteSpan dest,
                             std::size_t need,
                             const std::uint8_t* block0 = nullptr) const;
    /// Whether decode_block_prefix decodes less than whole blocks for this chunk: special and
    /// memcpyed chunks, and LZ4 or BloscLZ streams with no filter or one byte shuffle over
    /// split streams (c-blosc2's default for those codecs).
    bool decodes_prefix() const noexcept;

    /// Where decode_block_rows puts a block: the block is `nrows` rows of `row_bytes` (row r is
    /// its bytes [r * row_bytes, (r + 1) * row_bytes)); row r goes to dest + offsets[r].
    struct Rows {
        std::size_t row_bytes = 0;                ///< bytes per row
        std::size_t nrows = 0;                    ///< rows in the block
        const std::ptrdiff_t* offsets = nullptr;  ///< where each row goes, from dest
    };
    /// Decodes block i (whole) into rows scattered from dest (a block's place in an array, say).
    /// Where a byte shuffle is the last step, it writes the rows in place: no copy of the decoded
    /// block is made. \throws UsageError when the rows do not hold exactly the block
    void decode_block_rows(std::int32_t i,
                           std::uint8_t* dest,
                           const Rows& rows,
                           const std::uint8_t* block0 = nullptr) const;

    /// Decodes bytes [offset, offset + dest.size()) of the chunk, touching only the blocks that
    /// overlap the range. \throws UsageError when the range exceeds nbytes().
    void decode_range(std::int64_t offset, MutableByteSpan dest) const;

private:
    struct BlockGeometry {
        std::int64_t offset;
        std::int32_t nbytes;
    };
    BlockGeometry geometry(std::int32_t i) const;
    void fill_special(std::int64_t chunk_offset, std::uint8_t* dest, std::size_t n) const;
    void decode_block_impl(std::int32_t i, std::uint8_t* dest, const std::uint8_t* block0) const;
    /// The one filter decoding undoes (TRUNC_PREC needs no undoing) when there is exactly one,
    /// a SHUFFLE only when its unit is the item; otherwise Filter::none.
    Filter sole_filter() const noexcept;
    /// Streams the block is stored as (typesize when split, else 1).
    int stream_count(std::int32_t i) const noexcept;
    /// Decodes block i's streams into out, stream after stream; of each only the first `want`
    /// bytes where its format can stop early (the rest of its room may be written too).
    void decode_streams(std::int32_t i,
                        const BlockGeometry& g,
                        std::uint8_t* out,
                        std::size_t want = SIZE_MAX) const;
    void apply_filters(std::int32_t i,
                       std::uint8_t* data,
                       std::size_t n,
                       std::uint8_t* dest,
                       const std::uint8_t* block0) const;
    /// What a plugin is told (the chunk's typesize, `meta`, the block shape when known).
    struct BlockContext context(std::uint8_t meta) const noexcept;
    /// Runs a plugin's call; its FormatError or UsageError becomes this chunk's FormatError
    /// naming block i, `who` and offset `at`.
    template <class F>
    void run_plugin(std::int32_t i, const std::string& who, std::uint64_t at, F&& call) const;
    void decode_plugin_stream(std::int32_t i,
                              int j,
                              const std::uint8_t* src,
                              std::size_t n,
                              std::uint8_t* out,
                              std::size_t out_size,
                              std::uint64_t at) const;
    [[noreturn]] void fail(std::int32_t block, const std::string& what, std::uint64_t at) const;
    /// The block check of blocks [first, last].
    void check(std::int32_t first, std::int32_t last) const {
        for (std::int32_t b = first; check_ != nullptr && b <= last; ++b) {
            check_->check_block(b);
        }
    }

    ByteSpan chunk_;
    format::ChunkHeader header_;
    std::int32_t nblocks_ = 0;
    std::int32_t blocksize_ = 0;
    std::int32_t data_start_ = 0;  // first byte after header, bstarts and dictionary
    bool needs_block0_ = false;
    bool has_filters_ = false;  // any filter to undo (trunc_prec needs no undoing)
    std::unique_ptr<detail::StreamDict> dict_;
    const CodecPlugin* codec_plugin_ = nullptr;            // a plugin codec (compformat 6)
    std::array<const FilterPlugin*, 6> filter_plugins_{};  // plugin filters, by slot
    std::vector<std::int64_t> blockshape_;                 // kept when a plugin needs it
    std::vector<std::int64_t> vl_offsets_;  // VL-block chunks: nblocks + 1 decoded offsets
    const BlockCheck* check_ = nullptr;
};

/// Where each block's stored bytes lie in a chunk with header `h`: [start, end) from its entry
/// in the block starts table to the next block's start in the chunk (or its end, cbytes).
/// `head` must hold the header and the table (the chunk's first bytes). Nothing for chunks that
/// have no such table (special, memcpyed, VL-block, with a dictionary, empty) or whose table
/// does not describe the chunk (a start inside the table or past cbytes).
std::optional<std::vector<std::pair<std::uint32_t, std::uint32_t>>> block_extents(
    ByteSpan head, const format::ChunkHeader& h);
/// How many streams block i of a chunk with header `h` is stored as (typesize when split).
int block_streams(const format::ChunkHeader& h, std::int32_t i) noexcept;

/// The element a header-only special chunk of `typesize`-byte items repeats: zeros for
/// Special::zeros and Special::uninit (which reads as zeros here), the quiet NaN of float32 or
/// float64 for Special::nan. \throws UnsupportedError for NaN with a typesize other than 4 or 8,
/// UsageError for Special::none and Special::value (whose value is in the chunk)
std::vector<std::uint8_t> special_element(Special kind, std::int64_t typesize);

/// Decodes a whole chunk into a new buffer.
/// \param max_nbytes refuse chunks claiming more uncompressed bytes than this (UsageError), so
///        that a hostile header cannot make us allocate gigabytes.
std::vector<std::uint8_t> decode_chunk(ByteSpan chunk,
                                       int nthreads = 1,
                                       std::int64_t max_nbytes = std::int64_t{1} << 31);

}  // namespace b2nd::codec
