// Internal: the state behind storage::Frame.
//
// Frame::Impl holds what every frame has (header, offsets index, vlmetalayers, the lock, the
// staging generation) and does what is the same for both kinds: parsing (frame.cpp), and turning
// a FrameEdit into a new index (frame_writer.cpp), and the commit protocol (commit.cpp). Where the
// bytes live differs, so it is split:
//  - ContiguousFrame (contiguous_frame.cpp): one file (or a caller's buffer); chunks are byte
//    offsets; a commit appends chunks, index and trailer and patches the header last;
//  - SparseFrame (sparse_frame.cpp): a directory; chunks are NNNNNNNN.chunk files; a commit
//    writes new chunk files, replaces chunks.b2frame by a rename, then removes unused files.
#pragma once

#include <algorithm>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include <b2nd/storage/byte_source.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/storage/mapped_file.hpp>

#include "checksums.hpp"
#include "remote_chunks.hpp"
#include "sidecar.hpp"

namespace b2nd::storage {

/// Special values of offsets-index entries (bit 63 set, kind in the top byte).
inline constexpr std::uint64_t kSpecialZeros = 0x8100000000000000ULL;
inline constexpr std::uint64_t kSpecialNan = 0x8200000000000000ULL;
inline constexpr std::uint64_t kSpecialUninit = 0x8400000000000000ULL;

/// A commit's outcome, built by Frame::Impl::apply and written by the frame kind.
struct FrameCommit {
    std::vector<std::int64_t> index;  ///< the new offsets index (slots of `writes` still open)
    std::int64_t nbytes = 0;          ///< uncompressed bytes of all chunks
    std::vector<ByteSpan> writes;     ///< chunks to store now ...
    std::vector<std::size_t> slots;   ///< ... at these index positions
    std::int64_t staged_bytes = 0;    ///< bytes of staged chunks the index names
    std::vector<format::Metalayer> metalayers;
    std::vector<format::Metalayer> vlmeta;
    bool checksums = false;              ///< write a checksum table (checksums.hpp)
    std::vector<std::uint64_t> digests;  ///< with it: per index position (writes' filled in later)
};

/// A commit's new frame as bytes (commit.cpp): its header (lengths set by the kind), its encoded
/// offsets index (empty when it holds no chunk) and its trailer.
struct CommitImage {
    format::FrameHeader header;
    std::vector<std::uint8_t> index;
    std::vector<std::uint8_t> trailer;
};

struct Frame::Impl {
    virtual ~Impl() = default;

    // Where the frame lives.
    std::string path;   // contiguous file, or sparse directory; empty for a buffer
    std::string label;  // how messages name a frame opened from a byte source (no path)
    bool is_writable = false;
    std::uint64_t base = 0;  // frame offset in the file
    OpenOptions options;

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
    // A remote frame (remote_frame.cpp): the images of its chunks; null for files and buffers.
    std::shared_ptr<const detail::RemoteChunks> remote;
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
    /// this snapshot (Frame::chunk, compaction's copy). \throws FormatError on a mismatch
    StoredChunk checked_chunk(std::int64_t i,
                              const std::vector<std::int32_t>* blocks = nullptr) const;
    std::int32_t special_nbytes(std::int64_t i) const;

    // ---- writing (frame_writer.cpp) ----
    /// A chunk given to a writer, classified: stored bytes, or an index-only special.
    struct ClassifiedChunk {
        ByteSpan bytes;      // encoded chunk to store (empty: index-only special)
        std::int64_t entry;  // the index entry for index-only specials
        std::int32_t nbytes;
    };
    ClassifiedChunk classify(ByteSpan chunk) const;
    /// Frame::apply, with the lock held.
    void apply(const FrameEdit& edit);
    /// Sets vlmetalayer `name` in v to `content` (encoded as c-blosc2 stores it), or removes it
    /// when content is null. \throws UsageError for a name of more than 31 bytes
    void set_vlmeta_entry(std::vector<format::Metalayer>& v,
                          const std::string& name,
                          const std::vector<std::uint8_t>* content) const;
    /// Writes a commit by the protocol of commit.cpp and adopts it.
    void commit(FrameCommit c);
    /// Frame::stage, with the lock held.
    StagedChunk stage(ByteSpan chunk);
    void require_writable(const char* op) const;
    /// Re-reads the frame if another handle changed it (caller holds the lock exclusively).
    bool refresh_unlocked();
    /// Ends a staging generation: staged chunks that `live` does not name become dead.
    void end_staging(const std::vector<std::int64_t>& live);

    // ---- what differs between contiguous and sparse frames ----
    virtual bool sparse() const noexcept = 0;
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
    /// The bytes a regular index entry points at (to the end of its file or section), with the
    /// owner and file fields of `c` set; offset_out: where they start in their file.
    virtual ByteSpan chunk_region(std::int64_t i,
                                  std::int64_t entry,
                                  StoredChunk& c,
                                  std::uint64_t& offset_out) const = 0;
    /// Writes a chunk's bytes ahead of a commit; returns its index entry.
    virtual std::int64_t stage_bytes(ByteSpan bytes) = 0;
    /// Frame::reserve_staging: room after everything staged so far; its start.
    virtual std::uint64_t reserve_bytes(std::uint64_t amount) = 0;
    /// Frame::write_reserved (any handle).
    virtual void write_reserved(std::uint64_t position, ByteSpan bytes) const = 0;
    /// The index entry of a chunk written at a reserved position of `cbytes` bytes.
    /// \throws UsageError outside the reserved room
    virtual std::int64_t reserved_entry(std::uint64_t position, std::int64_t cbytes) const = 0;
    // The steps of a commit that differ between the kinds, in the order commit.cpp runs them
    // (its header comment says what each kind does in each).
    /// Writes c.writes where the kind keeps chunks and names them in c.index (the slots).
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
    /// Drops staged chunks that `live` does not name, and forgets staging positions.
    virtual void drop_staged(const std::vector<std::int64_t>& live) = 0;
    /// Whether another handle committed since this one loaded.
    virtual bool changed_on_disk() const = 0;
    /// Called after map_and_load(): drop what was mapped for the frame as it was.
    virtual void reloaded() {}
    /// A remote frame: fetches its header and index afresh; true when the file changed (then
    /// this handle reads the new version).
    virtual bool reload_remote() { return false; }
    /// Called by load() once the header and index are parsed (a remote frame sets `remote`).
    virtual void loaded() {}
    /// Called after each commit, the lock released: reclaim what no reader needs any more.
    virtual void after_commit() {}
    virtual void sync() = 0;
    virtual void compact(const CompactProgress& progress) = 0;
    virtual std::int64_t dead_bytes() const = 0;
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
