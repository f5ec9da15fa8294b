// Internal: the per-block part of checksum tables version 2 and 3 (docs/CHECKSUMS.md).
//
// A chunk's stored bytes split into a head (its header, block-starts table and dictionary) and
// its blocks. Right after the chunk (in the frame file, or at the end of its NNNNNNNN.chunk
// file) lies its *record*: an XXH3-64 digest of each block's stored bytes. The table holds, per
// chunk, the digest of the head followed by the record. A read then checks the head and the
// record once (a chunk's first use), and each block right before it is decoded: what a read
// checks is what it decodes.
//
// Version 3 adds, for chunks whose blocks a read may decode only in part (LZ4, BloscLZ or
// memcpyed blocks, with no filter or a byte shuffle), the digests of each block's *decoded*
// bytes in K equal pieces: a read that decodes a block's first rows decodes them up to a piece
// boundary and checks those pieces, where a block digest would have it hash the whole block.
//
// Chunks without a block layout to check (special chunks, Blosc1 headers, VL blocks, a
// dictionary) carry no record: their head is the whole chunk, as in version 1.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <b2nd/byte_span.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/storage/frame.hpp>

namespace b2nd::storage::detail {

/// The number of block digests the record of a chunk with this header holds (0: the chunk is
/// checked whole). `header`: the chunk's first bytes (fewer than 32: 0). Never throws.
std::size_t sealed_blocks(ByteSpan header) noexcept;
/// The pieces each block's decoded bytes are digested in, in a table of `version` (0: none;
/// version 3 only). Never throws.
std::size_t sealed_pieces(ByteSpan header, int version) noexcept;
/// The record's size in bytes: 8 per block digest, and with version 3, 8 per piece.
std::size_t record_size(ByteSpan header, int version) noexcept;
/// The largest record a chunk of `nblocks` blocks of `blocksize` bytes can have in a table of
/// `version`.
std::size_t max_record_size(std::size_t nblocks, std::int64_t blocksize, int version) noexcept;

/// How a chunk's stored bytes split: the head [0, head) and each block's [begin, end). Defined
/// for any bytes (a block table that does not describe the chunk makes the head the whole
/// chunk and every block empty), so that writer and reader always agree on what is hashed.
struct SealLayout {
    std::size_t head = 0;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> blocks;
    std::size_t pieces = 0;       ///< per block (version 3)
    std::uint32_t blocksize = 0;  ///< the header's (pieces only)
    std::uint32_t nbytes = 0;     ///< the chunk's decoded size (pieces only)
    std::uint32_t typesize = 1;   ///< the header's (pieces only)
    bool memcpyed = false;        ///< blocks stored as they decode

    /// Block i's decoded size.
    std::uint32_t decoded_bytes(std::size_t i) const noexcept {
        const auto start = static_cast<std::uint64_t>(i) * blocksize;
        return start >= nbytes
                   ? 0
                   : static_cast<std::uint32_t>(std::min<std::uint64_t>(blocksize, nbytes - start));
    }
    /// The size of block i's pieces: its decoded bytes over `pieces`, rounded up to whole items
    /// (the last piece, or the last few, may be shorter or empty).
    std::size_t piece_bytes(std::size_t i) const noexcept {
        const std::size_t items = (decoded_bytes(i) + typesize - 1) / typesize;
        return std::max<std::size_t>(1, (items + pieces - 1) / pieces) * typesize;
    }
};
SealLayout seal_layout(ByteSpan chunk, int version);

/// Digests of the pieces of each block's decoded bytes, taken by a writer where it holds those
/// bytes (codec::encode_chunk's BlockSeen: each block of the encoder's input, while it is in
/// the cache), so that seal() need not decode the chunk. seal() uses them only for a chunk of
/// the geometry they were made for (block size, size, typesize, pieces), and only when every
/// block was given: anything else, and it decodes as without them.
class PieceDigests {
public:
    /// For a chunk of `nbytes` that `params` encode (the block size and typesize its header will
    /// hold), in a table of `version`. pieces() is 0 where such chunks carry none (other codecs
    /// or filters, small blocks, version 2): then nothing needs to be given.
    PieceDigests(const codec::EncodeParams& params, std::int64_t nbytes, int version);
    /// For the table `frame` carries now (none: nothing to digest).
    PieceDigests(const codec::EncodeParams& params, std::int64_t nbytes, const Frame& frame);
    PieceDigests(const PieceDigests&) = delete;
    PieceDigests& operator=(const PieceDigests&) = delete;
    std::size_t pieces() const noexcept { return geometry_.pieces; }
    /// What encode_chunk is shown blocks through: give() (null when pieces() is 0).
    const codec::BlockSeen* watch() noexcept { return pieces() > 0 ? &watch_ : nullptr; }
    /// Digests block i's decoded bytes (`n`). From any thread, distinct blocks concurrently; a
    /// block given again replaces its digests. Blocks outside the geometry are ignored.
    void give(std::int32_t i, const std::uint8_t* decoded, std::size_t n) noexcept;
    /// Whether these are the pieces of every block of a chunk of `layout`.
    bool fit(const SealLayout& layout) const noexcept;
    /// Block-major piece digests (fit() only).
    const std::vector<std::uint64_t>& digests() const noexcept { return digests_; }

private:
    codec::BlockSeen watch_;
    SealLayout geometry_;  // pieces, blocksize, nbytes, typesize (no blocks)
    std::size_t nblocks_ = 0;
    std::vector<std::uint64_t> digests_;
    std::vector<std::uint8_t> given_;  // per block
};

/// What a writer staging a chunk knows that spares seal() work (both optional):
/// - `pieces`: its pieces' digests, taken while it was encoded;
/// - `record`: the record it carries from the table of the frame it is copied from as stored,
///   which the chunk and the record matched whole. It is used as it is when it has the size
///   this table's record of the chunk has: the records of versions 2 and 3 are the same bytes
///   for chunks without pieces, and differ in size for chunks with them.
struct SealHint {
    const PieceDigests* pieces = nullptr;
    ByteSpan record;
};

/// A chunk sealed for table version 2 or 3: the record stored after it, and its table entry.
struct Seal {
    std::vector<std::uint8_t> record;
    std::uint64_t digest = 0;
};
/// Without a hint that fits, version 3 decodes the chunk to digest the pieces of its blocks (a
/// block that does not decode gets digests of 0: a read of it fails in the decoder before any
/// piece is compared).
Seal seal(ByteSpan chunk, int version, const SealHint& hint = {});
/// The table entry of a chunk followed by `record`: the digest of its head and the record.
std::uint64_t sealed_digest(ByteSpan chunk, const SealLayout& layout, ByteSpan record);

/// One chunk's block digests, taken from its record once head and record matched the table.
class ChunkSeal {
public:
    /// Null, and `why` set, when the chunk's head or its record do not match `expected`.
    static std::unique_ptr<ChunkSeal> open(ByteSpan chunk,
                                           ByteSpan record,
                                           int version,
                                           std::uint64_t expected,
                                           bool remember,
                                           std::string& why);
    std::size_t nblocks() const noexcept { return digests_.size(); }
    /// Where block i's stored bytes start in the chunk.
    std::uint64_t begin(std::size_t i) const noexcept { return layout_.blocks[i].first; }
    /// How many stored bytes block i has.
    std::size_t block_bytes(std::size_t i) const noexcept {
        return layout_.blocks[i].second - layout_.blocks[i].first;
    }
    /// Whether block i of `chunk` matches its digest (once true, not hashed again when the seal
    /// remembers: the bytes are a mapping of an immutable chunk).
    bool check(std::size_t i, ByteSpan chunk) const;
    /// Where a decode of block i's first `need` bytes must stop to be checked by its pieces: the
    /// end of the piece holding byte need - 1; 0 when the block has no pieces or was checked
    /// whole already (then check() costs nothing).
    std::size_t prefix_end(std::size_t i, std::size_t need) const noexcept;
    /// Whether `decoded`, block i's decoded bytes [0, end) (end from prefix_end), match the
    /// digests of the pieces they hold.
    bool check_prefix(std::size_t i, const std::uint8_t* decoded, std::size_t end) const;

private:
    SealLayout layout_;
    std::vector<std::uint64_t> digests_;
    std::vector<std::uint64_t> pieces_;                      // block-major, layout_.pieces a block
    std::unique_ptr<std::atomic<std::uint8_t>[]> verified_;  // null: hash every time
};

/// What a block that does not match its digest is told (for messages).
std::string block_mismatch(std::size_t block, std::size_t nbytes);
/// What a block whose decoded bytes [0, end) do not match their digests is told.
std::string prefix_mismatch(std::size_t block, std::size_t end);

}  // namespace b2nd::storage::detail
