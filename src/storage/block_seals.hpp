// Internal: the per-block part of checksum table version 2 (docs/CHECKSUMS.md).
//
// A chunk's stored bytes split into a head (its header, block-starts table and dictionary) and
// its blocks. Right after the chunk (in the frame file, or at the end of its NNNNNNNN.chunk
// file) lies its *record*: an XXH3-64 digest of each block's stored bytes. The table holds, per
// chunk, the digest of the head followed by the record. A read then checks the head and the
// record once (a chunk's first use), and each block right before it is decoded: what a read
// checks is what it decodes.
//
// Chunks without a block layout to check (special chunks, Blosc1 headers, VL blocks, a
// dictionary) carry no record: their head is the whole chunk, as in version 1.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <b2nd/byte_span.hpp>

namespace b2nd::storage::detail {

/// The number of block digests the record of a chunk with this header holds (0: the chunk is
/// checked whole). `header`: the chunk's first bytes (fewer than 32: 0). Never throws.
std::size_t sealed_blocks(ByteSpan header) noexcept;
/// The record's size in bytes (8 per block digest).
inline std::size_t record_size(ByteSpan header) noexcept {
    return 8 * sealed_blocks(header);
}

/// How a chunk's stored bytes split: the head [0, head) and each block's [begin, end). Defined
/// for any bytes (a block table that does not describe the chunk makes the head the whole
/// chunk and every block empty), so that writer and reader always agree on what is hashed.
struct SealLayout {
    std::size_t head = 0;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> blocks;
};
SealLayout seal_layout(ByteSpan chunk);

/// A chunk sealed for table version 2: the record stored after it, and its table entry.
struct Seal {
    std::vector<std::uint8_t> record;
    std::uint64_t digest = 0;
};
Seal seal(ByteSpan chunk);
/// The table entry of a chunk followed by `record`: the digest of its head and the record.
std::uint64_t sealed_digest(ByteSpan chunk, const SealLayout& layout, ByteSpan record);

/// One chunk's block digests, taken from its record once head and record matched the table.
class ChunkSeal {
public:
    /// Null, and `why` set, when the chunk's head or its record do not match `expected`.
    static std::unique_ptr<ChunkSeal> open(
        ByteSpan chunk, ByteSpan record, std::uint64_t expected, bool remember, std::string& why);
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

private:
    SealLayout layout_;
    std::vector<std::uint64_t> digests_;
    std::unique_ptr<std::atomic<std::uint8_t>[]> verified_;  // null: hash every time
};

/// What a block that does not match its digest is told (for messages).
std::string block_mismatch(std::size_t block, std::size_t nbytes);

}  // namespace b2nd::storage::detail
