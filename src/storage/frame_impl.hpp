// Internal: the state behind storage::Frame.
//
// Frame::Impl holds what every frame has (header, offsets index, vlmetalayers, the lock, the
// staging generation) and does what is the same for every kind: parsing (frame.cpp), turning a
// FrameEdit into a new index (frame_writer.cpp), and the commit protocol (commit.cpp). A frame
// kind has two faces:
//  - the reading face (the virtuals below), which every kind implements: where the bytes live,
//    the index, chunk regions, reloading;
//  - the commit steps (commit_steps.hpp), which only the kinds that can be written implement.
// The kinds:
//  - ContiguousFrame (contiguous_frame.cpp): one file (or a caller's buffer); chunks are byte
//    offsets; a commit appends chunks, index and trailer and patches the header last;
//  - SparseFrame (sparse_frame.cpp): a directory; chunks are NNNNNNNN.chunk files; a commit
//    writes new chunk files, replaces chunks.b2frame by a rename, then removes unused files;
//  - RemoteFrame (remote_frame.cpp): bytes fetched from a source (HTTP), read only: it has the
//    reading face alone.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include <b2nd/storage/byte_source.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/storage/mapped_file.hpp>

#include "block_seals.hpp"
#include "checksums.hpp"
#include "commit_steps.hpp"
#include "flush_behind.hpp"
#include "sidecar.hpp"

namespace b2nd::storage {

/// Special values of offsets-index entries (bit 63 set, kind in the top byte).
inline constexpr std::uint64_t kSpecialZeros = 0x8100000000000000ULL;
inline constexpr std::uint64_t kSpecialNan = 0x8200000000000000ULL;
inline constexpr std::uint64_t kSpecialUninit = 0x8400000000000000ULL;

struct Frame::Impl {
    virtual ~Impl() = default;

    // Where the frame lives.
    std::string path;   // contiguous file, or sparse directory; empty for a buffer
    std::string label;  // how messages name a frame opened from a byte source (no path)
    bool is_writable = false;
    std::uint64_t base = 0;  // frame offset in the file
    OpenOptions options;
    // Staged bytes flushed in the background (OpenOptions::flush_behind; null without).
    std::unique_ptr<detail::FlushBehind> flush_behind;
    /// `bytes` were staged in the file at `file`: flushed in the background with flush_behind.
    void staged_to(const std::string& file, std::uint64_t bytes) {
        if (flush_behind) {
            flush_behind->wrote(file, bytes);
        }
    }

    // What is mapped and parsed. Guarded by `mutex`: readers share it, writers take it alone.
    mutable std::shared_mutex mutex;
    // The frame's bytes: offset 0 is its start, size() its frame_len. Everything is read
    // through it; `frame` is its view when it has one (mapped files and buffers: chunks are then
    // spans of it, owned by `frame_owner`).
    std::shared_ptr<const ByteSource> source;
    ByteSpan frame;
    std::shared_ptr<const void> frame_owner;
    SourceBytes trailer_bytes;              // what the vlmetalayers' contents point into
    std::shared_ptr<const MappedFile> map;  // a file on disk: the mapping holding the frame
    format::FrameHeader header;
    std::vector<std::int64_t> index;        // offsets (or sparse file numbers, or specials)
    std::vector<format::Metalayer> vlmeta;  // trailer contents, still compressed (no table)
    detail::Checks checks;                  // the snapshot's checksums (checksums.hpp)
    std::uint32_t trailer_len = 0;
    std::int64_t index_pos = 0;       // offset of the index chunk in the frame
    std::uint64_t mapped_ino = 0;     // the mapped file's inode (a rename changes it)
    std::uint64_t staging_epoch = 1;  // bumped by every commit and reload (staged chunks expire)

    // Sharing with other handles and processes (sidecar.hpp); null when locking is off, for
    // buffers, and for readers of a frame no locking writer has touched.
    std::unique_ptr<detail::Sidecar> sidecar;
    // A remote frame: digests of its header and of its index and trailer, as fetched (hex), which
    // Frame::stamp() adds to the server's validators: what identifies this version's content.
    std::string content_id;
    std::uint64_t snapshot_generation = 0;  // the sidecar's generation when this snapshot was taken
    mutable std::int64_t next_stat_ns = 0;  // without a sidecar: when stale() may stat() again

    /// `"path"` (or `<memory>`), for error messages.
    std::string where() const;
    /// `"path": chunk i`, with the chunk's file for a sparse frame (file >= 0).
    std::string chunk_context(std::int64_t i, std::int64_t file) const;
    /// Opens the sidecar (writers create it and take the writer byte). \throws LockError
    void attach_sidecar();
    /// Takes a snapshot: maps and parses frame_file() while no commit is in progress (the shared
    /// lock), records its generation and registers it in the reader table.
    void load_snapshot();
    /// Maps frame_file() and parses it (the caller holds whatever lock it needs).
    void map_and_load();
    /// Whether another handle may have committed since this snapshot: cheap (no system call
    /// with a sidecar; without one, the mapped header, and a stat() at most every 10 ms).
    bool stale() const;
    /// The exclusive lock for a commit (empty without a sidecar).
    detail::Sidecar::Lock commit_lock() const;
    /// After a commit is on disk (commit_lock held): bumps the generation and re-registers.
    void committed();
    /// Parses header, trailer and index from `bytes` (from the frame start to the end of the
    /// file or buffer) and reads the frame through it from now on. `mapping`: the file on disk
    /// `bytes` lie in, if any. On failure nothing changes.
    void load(const std::shared_ptr<const ByteSource>& bytes,
              std::shared_ptr<const MappedFile> mapping = nullptr);
    /// After writing a commit: reads the frame, frame_len bytes from `base`, in `file`.
    void adopt_mapping(std::shared_ptr<const MappedFile> file, std::uint64_t frame_len);
    /// Bytes [offset, offset + n) of the frame (a span of the view when there is one).
    SourceBytes frame_bytes(std::uint64_t offset, std::uint64_t n) const;
    /// Chunk i, its structure checked (the index entry, the header's sizes) but not its
    /// checksum: for sizes and kinds (dead_bytes, cbytes, apply), never for decoding.
    /// `blocks`: a remote frame fetches only these blocks (then the chunk may be partial).
    StoredChunk chunk_unlocked(std::int64_t i,
                               const std::vector<std::int32_t>* blocks = nullptr) const;
    /// chunk_unlocked, and its bytes checked against the checksum table on their first use in
    /// this snapshot: `whole`, all of them (Frame::chunk, compaction's copy); else, with a
    /// version-2 table, its head and block digests, and StoredChunk::check set for the decoder
    /// to check each block it decodes (a partial remote chunk is always so).
    /// \throws FormatError on a mismatch
    StoredChunk checked_chunk(std::int64_t i,
                              const std::vector<std::int32_t>* blocks = nullptr,
                              bool whole = true) const;
    std::int32_t special_nbytes(std::int64_t i) const;

    // ---- writing (frame_writer.cpp) ----
    /// A chunk given to a writer, classified: stored bytes, or an index-only special.
    struct ClassifiedChunk {
        ByteSpan bytes;      // encoded chunk to store (empty: index-only special)
        std::int64_t entry;  // the index entry for index-only specials
        std::int32_t nbytes;
    };
    ClassifiedChunk classify(ByteSpan chunk) const;
    /// What the current table records for a new chunk: nothing without a table; version 1, the
    /// digest of its bytes; versions 2 and 3, its record and digest (block_seals.hpp), with what
    /// `hint` gives of them.
    detail::Seal seal_for_table(ByteSpan chunk, const detail::SealHint& hint = {}) const;
    /// The bytes a chunk takes where it is stored: its own, and its record after them.
    static std::int64_t stored_size(const StoredChunk& c) noexcept {
        return static_cast<std::int64_t>(c.bytes.size() + c.record.size());
    }
    /// The record of c.writes[k] (empty without one).
    static ByteSpan record_of(const FrameCommit& c, std::size_t k) noexcept {
        return k < c.records.size() ? ByteSpan(c.records[k].data(), c.records[k].size())
                                    : ByteSpan();
    }
    /// Frame::apply, with the lock held.
    void apply(const FrameEdit& edit);
    /// Sets vlmetalayer `name` in v to `content` (encoded as c-blosc2 stores it), or removes it
    /// when content is null. \throws UsageError for a name of more than 31 bytes
    void set_vlmeta_entry(std::vector<format::Metalayer>& v,
                          const std::string& name,
                          const std::vector<std::uint8_t>* content) const;
    /// Writes a commit by the protocol of commit.cpp and adopts it.
    void commit(FrameCommit c);
    /// A chunk's seal made ahead of its staging, on the thread that made the chunk and under the
    /// shared lock (FrameInternal::seal_ahead), so that stage() does not seal it under the
    /// exclusive one: sealing a version-3 chunk decodes it.
    struct SealAhead {
        detail::Seal seal;
        int version = 0;       ///< the table's version then (0: none carried)
        std::size_t size = 0;  ///< the bytes sealed: the chunk's first `size` (0: none)
    };
    SealAhead seal_ahead(ByteSpan chunk, const detail::SealHint& hint) const;
    /// Frame::stage, with the lock held; `ahead`: the chunk's seal made before, used if the
    /// table it was made for is still the frame's.
    StagedChunk stage(ByteSpan chunk, const SealAhead* ahead = nullptr);
    /// The commit steps of a frame open for writing. \throws UsageError naming `op` otherwise
    CommitSteps& require_writable(const char* op);
    /// Ends a staging generation: staged chunks that `live` does not name become dead.
    void end_staging(const std::vector<std::int64_t>& live);

    // ---- the reading face: what differs in where a frame's bytes live ----
    // Every kind implements it: a file (contiguous_frame.cpp), a directory (sparse_frame.cpp),
    // fetched bytes (remote_frame.cpp).
    virtual bool sparse() const noexcept = 0;
    /// Whether chunks are fetched (Frame::fetch asks ahead) rather than at hand.
    virtual bool fetched() const noexcept { return false; }
    /// The file holding header, index and trailer.
    virtual std::string frame_file() const = 0;
    /// How map_and_load() reaches frame_file() (a sparse frame: through a handle on its
    /// directory, so that the snapshot's chunk files are that directory's even if another one is
    /// renamed into its place).
    virtual std::string snapshot_reach() { return frame_file(); }
    /// Whether `lock_file` is the lock file of what the last map_and_load() read (a sparse
    /// frame's directory holds its own).
    virtual bool snapshot_has(const detail::Sidecar& /*lock_file*/) const { return true; }
    /// Where the offsets index starts in the frame.
    virtual std::int64_t index_at(const format::FrameHeader& h) const = 0;
    /// The bytes a regular index entry points at (to the end of its file or section; fetched:
    /// those of `blocks` at least, with the chunk's header, or all of them when null), with the
    /// owner, file and partial fields of `c` set; offset_out: where they start in their file.
    virtual ByteSpan chunk_region(std::int64_t i,
                                  std::int64_t entry,
                                  const std::vector<std::int32_t>* blocks,
                                  StoredChunk& c,
                                  std::uint64_t& offset_out) const = 0;
    /// Frame::fetch: gets what reading these blocks needs at hand (fetched kinds; else nothing).
    virtual void fetch(const std::vector<ChunkBlocks>& /*wants*/) const {}
    /// Frame::chunk_unchecked is about to read chunk i's header: fetched kinds get it, and
    /// those of the chunks after it, in one batch.
    virtual void fetch_heads_from(std::int64_t /*i*/) const {}
    /// A size over the whole frame is about to read every live chunk's header: fetched kinds
    /// get them all, in batches.
    virtual void fetch_all_heads() const {}
    /// Re-reads the frame if it changed since this snapshot (the caller holds the lock
    /// exclusively); true when it did. Files: another handle's commit (frame_writer.cpp).
    virtual bool refresh_unlocked();
    /// Whether another handle committed since this one loaded (files; cheap).
    virtual bool changed_on_disk() const { return false; }
    /// Called after map_and_load(): drop what was mapped for the frame as it was.
    virtual void reloaded() {}
    /// Called by load() once the header and index are parsed.
    virtual void loaded() {}
    /// Frame::dead_bytes.
    std::int64_t dead_bytes() const;
    /// Frame::record_bytes.
    std::int64_t record_bytes() const;
    /// Frame::chunk_bytes.
    std::int64_t chunk_bytes() const;
    /// The sum of `size` over the live chunks (those the index points at), read head only.
    std::int64_t sum_over_live(const std::function<std::int64_t(const StoredChunk&)>& size) const;
    /// The commit steps, for the kinds that can be written (null for the others).
    virtual CommitSteps* steps() noexcept { return nullptr; }
};

/// Where a contiguous frame's stored chunks end: each at most where the next one in file order
/// starts, the last where the chunks section ends (read-ahead and remote fetches ask that much).
class ChunkEnds {
public:
    ChunkEnds(const std::vector<std::int64_t>& index, std::int64_t section) : section_(section) {
        for (std::int64_t e : index) {
            if (e >= 0 && e < section) {
                starts_.push_back(e);
            }
        }
        std::sort(starts_.begin(), starts_.end());
    }
    /// The end of the chunk stored at `entry` (an offset in the chunks section).
    std::int64_t end_of(std::int64_t entry) const {
        const auto next = std::upper_bound(starts_.begin(), starts_.end(), entry);
        return next == starts_.end() ? section_ : *next;
    }

private:
    std::vector<std::int64_t> starts_;  // sorted
    std::int64_t section_;
};

/// A frame in one file, or in a caller's buffer (contiguous_frame.cpp).
std::unique_ptr<Frame::Impl> make_contiguous_frame();
/// A frame in a directory (sparse_frame.cpp).
std::unique_ptr<Frame::Impl> make_sparse_frame();
/// A read-only frame whose bytes are fetched (remote_frame.cpp): a contiguous frame in `file`,
/// or a sparse frame whose chunks.b2frame is `file` (its chunk files beside it).
std::unique_ptr<Frame::Impl> make_remote_frame(bool sparse);

/// The special kind of an index entry, or Special::none for a regular offset.
/// \throws FormatError for an unknown special encoding
codec::Special special_of(std::int64_t entry, std::int64_t i);

/// Encodes an offsets index as c-blosc2 does (blosclz 5, shuffle, typesize 8, no split).
std::vector<std::uint8_t> encode_index(const std::vector<std::int64_t>& index);

/// The frame header's general_flags for a new frame: 64-bit offsets, version 2 for fixed-size
/// chunks, 3 (+ bit 6) for variable-size chunks.
std::uint8_t general_flags_for(std::int32_t chunksize, bool vl_blocks);

}  // namespace b2nd::storage
