// Internal: the commit-steps face of a frame, which only the kinds that can be written implement
// (contiguous_frame.cpp, sparse_frame.cpp). Frame::Impl::commit (commit.cpp) runs the steps in
// order; its header comment says what each kind does in each. A frame whose bytes are fetched
// has no such face (Frame::Impl::steps() is null), so it refuses nothing step by step: writes
// are refused once, by require_writable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <b2nd/format/frame_header.hpp>
#include <b2nd/storage/frame.hpp>

namespace b2nd::storage {

/// A commit's outcome, built by Frame::Impl::apply and written by the frame kind.
struct FrameCommit {
    std::vector<std::int64_t> index;  ///< the new offsets index (slots of `writes` still open)
    std::int64_t nbytes = 0;          ///< uncompressed bytes of all chunks
    std::vector<ByteSpan> writes;     ///< chunks to store now ...
    std::vector<std::size_t> slots;   ///< ... at these index positions
    /// ... each followed by its block digests (a version-2 table; set by commit.cpp)
    std::vector<std::vector<std::uint8_t>> records;
    std::int64_t staged_bytes = 0;  ///< bytes of staged chunks the index names
    std::vector<format::Metalayer> metalayers;
    std::vector<format::Metalayer> vlmeta;
    bool checksums = false;              ///< write a checksum table (checksums.hpp) ...
    int checksum_version = 0;            ///< ... of this version
    std::vector<std::uint64_t> digests;  ///< with it: per index position (writes' filled in later)
};

/// A commit's new frame as bytes (commit.cpp): its header (lengths set by the kind), its encoded
/// offsets index (empty when it holds no chunk) and its trailer.
struct CommitImage {
    format::FrameHeader header;
    std::vector<std::uint8_t> index;
    std::vector<std::uint8_t> trailer;
};

/// The steps of writing that differ between the kinds kept on disk.
struct CommitSteps {
    virtual ~CommitSteps() = default;

    // ---- staging: chunks written ahead of the commit that names them ----
    /// Writes a chunk's bytes, then `record` (its block digests; may be empty), ahead of a
    /// commit; returns its index entry.
    virtual std::int64_t stage_bytes(ByteSpan bytes, ByteSpan record) = 0;
    /// Frame::reserve_staging: room after everything staged so far; its start.
    virtual std::uint64_t reserve_bytes(std::uint64_t amount) = 0;
    /// Frame::write_reserved (any handle): `bytes`, then `tail` right after them.
    virtual void write_reserved(std::uint64_t position, ByteSpan bytes, ByteSpan tail) const = 0;
    /// The index entry of a chunk written at a reserved position of `cbytes` bytes.
    /// \throws UsageError outside the reserved room
    virtual std::int64_t reserved_entry(std::uint64_t position, std::int64_t cbytes) const = 0;
    /// Drops staged chunks that `live` does not name, and forgets staging positions.
    virtual void drop_staged(const std::vector<std::int64_t>& live) = 0;

    // ---- the commit, in the order commit.cpp runs it ----
    /// Writes c.writes (each followed by its record, if any) where the kind keeps chunks and
    /// names them in c.index (the slots).
    virtual void place_chunks(FrameCommit& c) = 0;
    /// Writes the new frame but for its commit point; sets the header's lengths in `img`.
    virtual void write_image(CommitImage& img, const FrameCommit& c) = 0;
    /// Durable commits: makes everything written so far durable, before the commit point.
    virtual void flush_written() = 0;
    /// The commit point: from here on, the frame on disk is the new one.
    virtual void publish_image(const CommitImage& img) = 0;
    /// Durable commits: makes the commit point durable.
    virtual void flush_published() = 0;
    /// This handle reads the new frame (header, trailer_len, index_pos, the mapping); what the
    /// commit replaced is retired.
    virtual void adopt_image(const CommitImage& img) = 0;
    /// Called after each commit, the lock released: reclaim what no reader needs any more.
    virtual void after_commit() {}

    // ---- maintenance ----
    /// Frame::sync: makes what was committed durable.
    virtual void sync() = 0;
    /// Frame::compact: removes the bytes no chunk uses.
    virtual void compact(const CompactProgress& progress) = 0;

protected:
    CommitSteps() = default;
    CommitSteps(const CommitSteps&) = default;
    CommitSteps& operator=(const CommitSteps&) = default;
};

}  // namespace b2nd::storage
