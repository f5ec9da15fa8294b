// Internal: the members of a Frame that only the engine and the storage layer use (remote
// fetches, snapshot identity, the lock file's reader hold and generation), kept out of the
// public storage/frame.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <b2nd/storage/frame.hpp>

namespace b2nd::storage {

namespace detail {
struct SealHint;
}

struct FrameInternal {
    /// Frame::fetch: a remote frame fetches what reading these blocks needs (two batches of
    /// requests at most); other frames: nothing.
    static void fetch(const Frame& f, const std::vector<ChunkBlocks>& wants) { f.fetch(wants); }
    /// Chunk i, of which `blocks` at least may be decoded (a remote frame fetches only those),
    /// with StoredChunk::check set for a version-2 checksum table (Frame::Impl::checked_chunk).
    static StoredChunk chunk_blocks(const Frame& f,
                                    std::int64_t i,
                                    const std::vector<std::int32_t>& blocks) {
        return f.chunk_blocks(i, blocks);
    }
    /// Chunk i for decoding: checked whole with a version-1 checksum table, else its head and
    /// block digests, with StoredChunk::check for the decoder.
    static StoredChunk chunk_to_decode(const Frame& f, std::int64_t i) {
        return f.chunk_to_decode(i);
    }
    /// Bumps the lock file's generation after the frame's file was replaced under its path.
    static void announce_replaced(Frame& f) { f.announce_replaced(); }
    /// Whether live handles elsewhere are registered readers of the frame.
    static bool read_by_others(const Frame& f) { return f.read_by_others(); }
    /// A shared hold on the lock file (empty without one).
    static Frame::ReadLock read_lock(const Frame& f) { return f.read_lock(); }
    /// The offsets-index entries of the snapshot.
    static std::vector<std::int64_t> index_entries(const Frame& f) { return f.index_entries(); }
    /// The inode of the file the snapshot was read from.
    static std::uint64_t file_id(const Frame& f) noexcept { return f.file_id(); }
    /// What Frame::stage needs to stage `chunk` but the frame's exclusive lock: its seal for the
    /// checksum table, made under the shared lock on the calling thread.
    struct Ahead;
    static std::shared_ptr<const Ahead> seal_ahead(const Frame& f,
                                                   ByteSpan chunk,
                                                   const detail::SealHint& hint);
    /// From now on, what is staged in a durable frame is flushed to the disk in the background
    /// (as with OpenOptions::flush_behind), so that a commit finds little left to flush: for a
    /// writer that stages long before it commits (an appender). Nothing for other frames.
    static void flush_behind(Frame& f);
    /// Frame::stage, with the seal made ahead if the table is still the one it was made for.
    static StagedChunk stage(Frame& f, ByteSpan chunk, const Ahead* ahead);
};

}  // namespace b2nd::storage
