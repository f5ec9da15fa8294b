// Internal: the checksums of the frames b2nd-cpp writes (docs/CHECKSUMS.md has the layout).
//
// A frame carries one table, in a vlmetalayer c-blosc2 and python-blosc2 ignore
// (`_b2nd_checksums`, a msgpack bin, so python reads it as bytes): XXH3-64 digests of the frame
// header's fields and metalayers, of the offsets index, of every other vlmetalayer's stored
// bytes and of every chunk's stored bytes. The trailer's fingerprint (16 bytes c-blosc2 writes
// as zeros and never reads) holds a stamp of the table: a writer that does not keep the table
// (c-blosc2, python-blosc2) rewrites the trailer with zeros, so its changes make the table stale
// rather than wrong, while a corrupted table, stamp or covered byte is an error.
//
// Frame::Impl keeps a Checks per snapshot: the state, the chunk digests and what was already
// verified. Version 1 tables check a chunk whole the first time its bytes are used; versions 2
// and 3 (what b2nd-cpp writes) check a chunk's head and record on its first use and each block
// right before it is decoded, or with version 3 the decoded pieces of a block's first rows
// right after (block_seals.hpp).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <b2nd/byte_span.hpp>
#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/format/frame_header.hpp>
#include <b2nd/storage/frame.hpp>

namespace b2nd::storage::detail {

/// The vlmetalayer holding the table.
inline constexpr const char* kChecksumsName = "_b2nd_checksums";
/// The trailer's fingerprint type for a stamp: 5 bits or more from c-blosc2's 0 to 3, so that
/// no flip of up to 4 bits turns a stamp into what c-blosc2 writes.
inline constexpr std::uint8_t kStampType = 0xF8;

/// The table version b2nd-cpp writes to new frames (block_seals.hpp); versions 1 and 2 stay
/// readable, and a frame keeps its table's version through commits.
inline constexpr int kTableVersion = 3;

/// The table, decoded.
struct ChecksumTable {
    /// 1: chunk digests of whole chunks; 2: of head and record; 3: records with decoded pieces
    int version = kTableVersion;
    std::uint64_t header = 0;  ///< header_digest()
    std::uint64_t index = 0;   ///< bytes_digest() of the offsets-index chunk as stored
    std::vector<std::pair<std::string, std::uint64_t>> vlmeta;  ///< other vlmetalayers
    /// per chunk (0 for index-only special chunks): version 1, of its stored bytes; versions 2
    /// and 3, of its head and its record (block_seals.hpp)
    std::vector<std::uint64_t> chunks;
    std::uint64_t self = 0;  ///< digest of the encoded table (set by encode/decode)
    std::size_t stored = 0;  ///< its vlmetalayer's size in the trailer (trailer_with_checksums)
};

/// The vlmetalayer content (a msgpack bin of the binary table); sets t.self.
std::vector<std::uint8_t> encode_table(ChecksumTable& t);
/// \throws FormatError naming what is wrong (no path: the caller adds it)
ChecksumTable decode_table(ByteSpan content);
/// The trailer fingerprint that binds a trailer to its table: the digest of the table's
/// vlmetalayer as stored, and a marker.
std::array<std::uint8_t, 16> stamp(ByteSpan stored_table);

/// The header digest: of the header's bytes as stored (metalayers included) but for frame_len,
/// cbytes and has_vlmetalayers, which a commit writes after its table.
std::uint64_t header_digest(ByteSpan header);
/// XXH3-64: what the table holds for chunks, the offsets index (its stored chunk) and the
/// vlmetalayers (their stored content).
std::uint64_t bytes_digest(ByteSpan bytes);

class SealSet;
class ChunkSeal;

/// A snapshot's checksums.
class Checks {
public:
    Checks() = default;
    Checks(Checks&&) noexcept = default;
    Checks& operator=(Checks&&) noexcept = default;

    /// Reads them from a parsed frame: its header and offsets index as stored (the index chunk's
    /// bytes; empty without chunks), its chunk count, its trailer (the table entry is taken out
    /// of trailer.vlmetalayers). Never throws for a bad table: the state says it, with the
    /// problems. `remember`: a chunk or block that matched once is not hashed again in this
    /// snapshot (its bytes are an immutable mapping; false for fetched bytes).
    static Checks read(ByteSpan header,
                       ByteSpan index,
                       std::size_t nchunks,
                       format::FrameTrailer& trailer,
                       bool enforce,
                       bool remember = true);
    /// After a commit: the table written (null for none).
    static Checks written(const ChecksumTable* t, bool enforce);

    ChecksumReport::State state() const noexcept { return state_; }
    const std::vector<std::string>& problems() const noexcept { return problems_; }
    /// Whether reads check chunks (a bound table, OpenOptions::verify_checksums).
    bool enforced() const noexcept { return enforce_ && state_ == ChecksumReport::State::covered; }
    /// Whether the next commit writes a table (a bound table is carried, whatever `enforce`).
    bool carried() const noexcept { return state_ == ChecksumReport::State::covered; }
    /// The table's version (carried() only): 1, chunks checked whole; 2, block by block, with a
    /// record of block digests after each chunk; 3, also the pieces of decoded blocks
    /// (block_seals.hpp).
    int version() const noexcept { return version_; }
    /// Whether each chunk is followed by a record (carried(), version 2 or later).
    bool has_records() const noexcept { return carried() && version_ >= 2; }
    /// The table's vlmetalayer size as stored (0 without a table).
    std::size_t table_bytes() const noexcept { return table_bytes_; }
    /// Chunk i's digest in the table (carried() only).
    std::uint64_t chunk_digest(std::size_t i) const { return chunks_.at(i); }
    std::size_t size() const noexcept { return chunks_.size(); }

    /// Checks chunk i's stored bytes whole (enforced() only): version 1, the chunk's digest;
    /// versions 2 and 3, its head, its record (the bytes after it) and every block. context() names
    /// the chunk as messages do (built only for a mismatch). \throws FormatError at `offset`
    template <typename Context>
    void verify(std::size_t i,
                ByteSpan bytes,
                ByteSpan record,
                std::uint64_t offset,
                Context&& context) const {
        if (!enforced() || i >= chunks_.size()) {
            return;
        }
        std::string why;
        if (!verify_whole(i, bytes, record, why)) {
            fail(context(), why, offset);
        }
    }
    /// Versions 2 and 3: checks chunk i's head and record (once per snapshot) and returns the check
    /// of its blocks, for the decoder to run on each block it decodes (null: a version-1 table,
    /// which verify() checked whole, or nothing enforced). \throws FormatError at `offset`
    template <typename Context>
    std::shared_ptr<const codec::BlockCheck> bind(std::size_t i,
                                                  ByteSpan bytes,
                                                  ByteSpan record,
                                                  std::uint64_t offset,
                                                  Context&& context) const {
        if (!enforced() || i >= chunks_.size()) {
            return nullptr;
        }
        std::string why;
        if (version_ == 1) {
            if (!verify_whole(i, bytes, record, why)) {
                fail(context(), why, offset);
            }
            return nullptr;
        }
        std::shared_ptr<const codec::BlockCheck> b = bind_blocks(i, bytes, record, why);
        if (!why.empty()) {
            fail(context(), why, offset);
        }
        return b;
    }
    /// What disagrees about chunk i's stored bytes, every block of it hashed (empty when they
    /// match or no table covers them).
    std::string mismatch(std::size_t i, ByteSpan bytes, ByteSpan record) const;

private:
    [[noreturn]] static void fail(const std::string& context,
                                  const std::string& why,
                                  std::uint64_t offset);
    bool verify_whole(std::size_t i, ByteSpan bytes, ByteSpan record, std::string& why) const;
    std::shared_ptr<const codec::BlockCheck> bind_blocks(std::size_t i,
                                                         ByteSpan bytes,
                                                         ByteSpan record,
                                                         std::string& why) const;
    void start(std::vector<std::uint64_t> chunks, int version, bool remember);
    /// Chunk i's seal (versions 2 and 3): the one this snapshot kept, or one opened now (kept, or
    /// handed to `own` when the snapshot does not remember); null, with `why`, on a mismatch.
    const ChunkSeal* seal_of(std::size_t i,
                             ByteSpan bytes,
                             ByteSpan record,
                             std::unique_ptr<ChunkSeal>& own,
                             std::string& why) const;

    ChecksumReport::State state_ = ChecksumReport::State::none;
    bool enforce_ = false;
    int version_ = 0;
    std::size_t table_bytes_ = 0;
    std::vector<std::string> problems_;
    std::vector<std::uint64_t> chunks_;
    std::shared_ptr<SealSet> seals_;  // what was verified, per chunk
};

/// The trailer of a frame with this header and offsets index (as stored) and vlmetalayers: with
/// a table when `digests` (per chunk) is given, else without (the fingerprint c-blosc2 writes).
/// `table_out` receives the table written.
std::vector<std::uint8_t> trailer_with_checksums(ByteSpan header,
                                                 ByteSpan index,
                                                 const std::vector<format::Metalayer>& vlmeta,
                                                 const std::vector<std::uint64_t>* digests,
                                                 int version,
                                                 ChecksumTable* table_out = nullptr);

}  // namespace b2nd::storage::detail
