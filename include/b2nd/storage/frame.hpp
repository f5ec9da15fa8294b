// Blosc2 frames over memory maps: contiguous frames (one file, ".b2nd"), sparse frames (a
// directory with chunks.b2frame and one NNNNNNNN.chunk file per chunk), frames embedded at an
// offset in a larger file, and frames in a caller's memory buffer.
//
// Reading maps the file once and parses the header, the offsets index and the trailer; chunk
// bytes are never touched until asked for, and a chunk is then a span into the mapping (zero
// copy, no system call for a contiguous frame). All const member functions may run concurrently
// from many threads on one Frame.
//
// Writing never overwrites bytes the committed frame still uses: new chunks, the new offsets index
// and the new trailer go after the live data and the header's length fields are written last, in
// one write, so a crash leaves the old or the new frame. Sparse-frame files are written under a
// temporary name and renamed. sync() makes writes durable; compact() reclaims the dead space
// updates leave behind. See DESIGN.md section 5.
//
// Advanced (b2nd::storage, frames and files): for tools that work on chunks as stored.
// Programs that read and write arrays need only <b2nd/b2nd.hpp>.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <b2nd/byte_span.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/codec/ids.hpp>
#include <b2nd/format/frame_header.hpp>
#include <b2nd/storage/byte_source.hpp>
#include <b2nd/storage/mapped_file.hpp>
#include <b2nd/storage/open_options.hpp>

namespace b2nd::codec {
class BlockCheck;
}

namespace b2nd::storage {

/// One chunk of a frame as stored: a span of the chunk's bytes, or, for chunks recorded only in
/// the offsets index (zeros, NaN, uninitialized), no bytes and the special kind.
struct StoredChunk {
    ByteSpan bytes;  ///< the encoded chunk (empty for index-only special chunks)
    codec::Special special = codec::Special::none;  ///< set for index-only special chunks
    std::int32_t nbytes = 0;                        ///< uncompressed size
    std::shared_ptr<const void> owner;              ///< keeps `bytes` mapped
    /// Where `bytes` start in the file holding them: the frame file, or for a sparse frame the
    /// chunk's own file (`file` >= 0 is its number, NNNNNNNN.chunk).
    std::uint64_t offset = 0;
    std::int64_t file = -1;  ///< sparse frames: the chunk file's number (-1: the frame file)
    /// A remote chunk of which only some blocks were fetched (Frame::chunk_blocks): only those
    /// blocks may be decoded (each checked before, with a version-2 checksum table).
    bool partial = false;
    /// With a version-2 checksum table: the chunk's block digests, stored right after it
    /// (docs/CHECKSUMS.md); empty otherwise.
    ByteSpan record;
    /// The check a decoder runs on each block before decoding it
    /// (codec::ChunkDecoder::set_block_check), when the chunk was handed out for decoding block
    /// by block; null when it was checked whole, or nothing is checked.
    std::shared_ptr<const codec::BlockCheck> check;

    /// Whether the chunk lives in the offsets index alone (a special chunk with no bytes).
    bool index_only() const noexcept { return bytes.empty(); }
};

/// Blocks of a chunk a read will decode (Frame::fetch); no blocks: the whole chunk.
struct ChunkBlocks {
    std::int64_t chunk = 0;            ///< the chunk
    std::vector<std::int32_t> blocks;  ///< its blocks (empty: all of them)
};

/// (chunks done, chunks in all) while compact() copies chunks.
using CompactProgress = std::function<void(std::int64_t, std::int64_t)>;

/// The slack auto-compaction allows above twice the compacted size of a frame.
inline constexpr std::uint64_t kAutoCompactSlack = std::uint64_t{4} << 20;

/// What a new frame holds in its header (c-blosc2's super-chunk parameters).
struct FrameParams : codec::CodecChoice {
    std::int32_t typesize = 1;   ///< bytes per item
    std::int32_t chunksize = 0;  ///< uncompressed bytes per chunk; 0 = chunks of any size
    std::int32_t blocksize = 0;  ///< bytes per block (0: chosen by the encoder)
    std::int16_t nthreads = 1;   ///< recorded as tcomp/tdecomp (informational)
    /// The chunks are VL-block chunks (c-blosc2 3.x marks such frames with bit 7 of the
    /// general flags; informational, readers look at the chunks).
    bool vl_blocks = false;
    /// Carry a checksum table (docs/CHECKSUMS.md): every commit then writes one covering the
    /// header, the index, the vlmetalayers and every chunk, and reads check them.
    bool checksums = true;
};

/// What a frame's checksums say (Frame::checksums(); docs/CHECKSUMS.md).
struct ChecksumReport {
    /// What the checksums cover.
    enum class State {
        none,     ///< no checksums: a frame b2nd-cpp did not write, or wrote without them
        stale,    ///< a table, but another program (c-blosc2, python-blosc2) changed the frame
                  ///< after it was written: nothing is checked (b2nd checksum add renews it)
        covered,  ///< the table covers this frame: header, index and vlmetalayers matched at
                  ///< open; each chunk (version 2: each block) is checked when first used
        broken,   ///< the table, its stamp or something it covers disagrees (`problems`)
    };
    State state = State::none;          ///< what the checksums cover
    std::vector<std::string> problems;  ///< broken: what disagrees, one message each
    /// covered: the table's version (1: chunks checked whole; 2: block by block)
    int version = 0;
    /// covered: the table's size as stored in the trailer (the records after the chunks apart)
    std::size_t table_bytes = 0;
};

/// A chunk written ahead by Frame::stage: its bytes are on disk (or it is an index-only special
/// chunk) but it is not part of the frame until an apply() names it. Valid until the next commit.
struct StagedChunk {
    std::int64_t entry = 0;        ///< the offsets-index entry it will have
    std::int32_t nbytes = 0;       ///< uncompressed bytes
    std::int64_t cbytes = 0;       ///< bytes stored (0 for index-only specials)
    std::uint64_t generation = 0;  ///< the staging epoch it belongs to (ends at a commit)
    std::uint64_t digest = 0;      ///< checksum of the stored bytes (docs/CHECKSUMS.md)
};

/// One atomic change of a frame (Frame::apply): the chunks it holds afterwards, in order, and
/// metalayers to overwrite. A crash leaves the frame as it was before or after, never between.
///
///   storage::FrameEdit e = frame.keep_all();   // every chunk where it is
///   e.replace(3, frame.stage(chunk_bytes));    // chunk 3 replaced by a chunk written ahead
///   e.add_new(more_bytes);                     // one more chunk at the end
///   frame.apply(e);
class FrameEdit {
public:
    /// Where a chunk of the edited frame comes from.
    enum class Source : std::uint8_t {
        kept,    ///< the frame's chunk `index`, as it is
        fresh,   ///< new_chunks()[index], written by apply()
        staged,  ///< staged()[index], written ahead by Frame::stage
    };
    /// One chunk of the edited frame: where it comes from.
    struct Slot {
        Source source = Source::kept;  ///< kept, fresh or staged
        std::int64_t index = 0;        ///< its index in that source
    };

    /// Appends the frame's current chunk k (checked by apply()).
    void keep(std::int64_t k);
    /// Appends a new chunk; `chunk` must stay valid until apply() returns.
    void add_new(ByteSpan chunk);
    /// Appends a chunk written ahead by Frame::stage.
    void add_staged(const StagedChunk& chunk);

    /// Position `pos` takes a new chunk / a staged chunk instead.
    /// \throws UsageError for a position out of range
    void replace(std::int64_t pos, ByteSpan chunk);
    /// Position `pos` takes a staged chunk instead.
    void replace(std::int64_t pos, const StagedChunk& chunk);
    /// Inserts a new chunk before position `pos` (size() appends).
    void insert(std::int64_t pos, ByteSpan chunk);
    /// Removes position `pos`.
    void erase(std::int64_t pos);

    /// Overwrites a metalayer's content; its size must not change.
    void set_metalayer(const std::string& name, std::vector<std::uint8_t> content);
    /// Adds or replaces a vlmetalayer in the same commit (`content` uncompressed).
    void set_vlmeta(const std::string& name, std::vector<std::uint8_t> content);
    /// Removes a vlmetalayer in the same commit (nothing when absent).
    void erase_vlmeta(const std::string& name);
    /// The vlmetalayer changes, in order: content set, or nullopt for a removal.
    const std::vector<std::pair<std::string, std::optional<std::vector<std::uint8_t>>>>&
    vlmeta_changes() const noexcept {
        return vlmeta_;
    }

    /// Chunks of the frame after the edit.
    std::int64_t size() const noexcept { return static_cast<std::int64_t>(slots_.size()); }
    /// Where each chunk of the edited frame comes from.
    const std::vector<Slot>& slots() const noexcept { return slots_; }
    /// The new chunks (add_new, replace, insert).
    const std::vector<ByteSpan>& new_chunks() const noexcept { return new_chunks_; }
    /// The staged chunks (add_staged, replace).
    const std::vector<StagedChunk>& staged() const noexcept { return staged_; }
    /// The fixed metalayers as the edit leaves them.
    const std::vector<format::Metalayer>& metalayers() const noexcept { return metalayers_; }

private:
    Slot fresh_slot(ByteSpan chunk);
    Slot staged_slot(const StagedChunk& chunk);
    void check_position(std::int64_t pos, std::int64_t end) const;

    std::vector<Slot> slots_;
    std::vector<ByteSpan> new_chunks_;
    std::vector<StagedChunk> staged_;
    std::vector<format::Metalayer> metalayers_;
    std::vector<std::pair<std::string, std::optional<std::vector<std::uint8_t>>>> vlmeta_;
};

/// A Blosc2 frame (c-blosc2's super-chunk stored as a frame): a contiguous file, a sparse
/// directory, a buffer, a byte source or a URL; its chunks, metalayers and vlmetalayers, read
/// from many threads at once and written by one handle in crash-safe commits.
class Frame {
public:
    /// Opens a contiguous frame file, or a sparse frame directory.
    /// \throws IoError, FormatError, UnsupportedError (messages name the file)
    static Frame open(const std::string& path, const OpenOptions& options = {});
    /// A read-only frame over a caller's buffer, which must outlive the Frame (no copy).
    static Frame from_buffer(ByteSpan buffer, const OpenOptions& options = {});
    /// A read-only frame over a byte source (byte_source.hpp: a mapping, a window of one, a
    /// buffer), starting at options.offset of it; messages name the source. No copy when the
    /// source has a view. \throws FormatError, UnsupportedError
    static Frame open(std::shared_ptr<const ByteSource> source, const OpenOptions& options = {});
    /// A read-only frame over HTTP (http.hpp): a contiguous frame's URL, or a sparse frame's
    /// directory URL (ending in '/' saves the request that finds out). options.http says how.
    /// \throws RemoteError (HttpError), FormatError, UnsupportedError (a build without libcurl)
    static Frame open_url(const std::string& url, const OpenOptions& options = {});
    /// Creates a new, empty frame on disk (a file, or with `sparse` a directory). Fails if the
    /// path exists. The frame is open for writing (with `locking`, as the one writer).
    static Frame create(const std::string& path,
                        const FrameParams& params,
                        bool sparse = false,
                        const std::vector<format::Metalayer>& metalayers = {},
                        bool durable = true,
                        bool locking = true);

    /// Moves the frame.
    Frame(Frame&&) noexcept;
    /// Moves the frame.
    Frame& operator=(Frame&&) noexcept;
    ~Frame();

    /// The parsed header.
    const format::FrameHeader& header() const noexcept;
    /// The file or directory path; empty for a memory buffer.
    const std::string& path() const noexcept;
    /// What messages call it: the path, or for a frame over a byte source the source's name.
    const std::string& name() const noexcept;
    /// Where the frame starts in its file (OpenOptions::offset; 0 for a sparse frame).
    std::uint64_t base_offset() const noexcept;
    /// How messages name chunk i as stored: `"path": chunk i`, plus its file for a sparse frame.
    std::string chunk_context(std::int64_t i, const StoredChunk& c) const;
    /// Whether it is a sparse frame (a directory).
    bool sparse() const noexcept;
    /// Whether this handle may write.
    bool writable() const noexcept;
    /// The number of chunks.
    std::int64_t nchunks() const noexcept;
    /// Uncompressed size of all chunks.
    std::int64_t nbytes() const noexcept;

    /// Chunk i as stored, O(1). \throws UsageError for an index out of range; FormatError when
    /// the index entry or the chunk's header does not fit the frame; IoError for a missing
    /// sparse chunk file.
    /// With a checksum table (OpenOptions::verify_checksums), all of the chunk's bytes are
    /// checked the first time they are handed out in this snapshot: a mismatch is a
    /// FormatError.
    StoredChunk chunk(std::int64_t i) const;
    /// chunk() without the checksum check: for tools that look at chunk headers only (kinds,
    /// sizes; b2nd info). Never decode from these bytes.
    StoredChunk chunk_unchecked(std::int64_t i) const;
    /// Reads the stored bytes of these chunks ahead, in this order, in the background, without
    /// touching them here: a caller that decodes them one after the other (telling the
    /// ReadAhead which one it is at) overlaps the file's reads with its work, and the read-ahead
    /// stays within `window` bytes of it. Contiguous frames only: each chunk's bytes up to the
    /// next chunk in the file; sparse frames open chunk files on use (nothing read ahead). A bad
    /// index entry is skipped (the chunk's own read reports it).
    ReadAhead prefetch(const std::vector<std::int64_t>& chunks,
                       std::size_t window = std::size_t{128} << 20) const;
    /// Whether the frame's bytes are fetched over a network (open_url, or a remote source).
    bool remote() const noexcept;
    /// Requests and bytes its source fetched so far (zeros for files and buffers).
    TransferStats transfers() const;
    /// What identifies the version of a remote frame: the server's validators (size, ETag,
    /// Last-Modified: ByteSource::stamp) and digests of its header, index and trailer as
    /// fetched, which change with a file rewritten in place even when the validators do not.
    /// Empty for files and buffers.
    std::string stamp() const;
    /// The raw offsets-index entry of chunk i: a byte offset (contiguous), a chunk file number
    /// (sparse), or a special value with bit 63 set.
    std::int64_t index_entry(std::int64_t i) const;
    /// Chunk i encoded (index-only special chunks become 32-byte special chunks, as c-blosc2
    /// returns them), decoded whole into a new buffer.
    std::vector<std::uint8_t> decode_chunk(std::int64_t i, int nthreads = 1) const;

    /// Fixed metalayers (stored in the header).
    const std::vector<format::Metalayer>& metalayers() const noexcept;
    /// The fixed metalayer `name`, or null.
    const format::Metalayer* metalayer(const std::string& name) const noexcept;
    /// Names of the variable-length metalayers (stored compressed in the trailer).
    std::vector<std::string> vlmeta_names() const;
    /// A vlmetalayer's content, decompressed; nullopt when absent.
    std::optional<std::vector<std::uint8_t>> vlmeta(const std::string& name) const;

    // ---- checksums (docs/CHECKSUMS.md) -----------------------------------------------------

    /// What the frame's checksum table says, as found at open (or after the last commit or
    /// refresh). With OpenOptions::verify_checksums, open() refuses a broken one.
    ChecksumReport checksums() const;
    /// Checks chunk i's stored bytes against the table now, whatever OpenOptions say: empty when
    /// they match or nothing covers them, else the message a read would throw (the file, the
    /// chunk, its offset), for b2nd verify, which reports every bad chunk.
    /// \throws as chunk_unchecked()
    std::string check_chunk(std::int64_t i) const;
    /// Writes a new table covering the frame as it is, in one commit (a stale or missing one is
    /// replaced). The caller vouches for the chunks: b2nd checksum add decodes them first.
    void add_checksums();

    // ---- writing (Frame::create, or open with writable) ----------------------------------

    /// Applies an edit in one commit (every other writer below is a special case of it).
    /// \throws UsageError for invalid positions, chunks, sizes; IoError
    void apply(const FrameEdit& edit);
    /// An edit that keeps every chunk where it is, to be modified.
    FrameEdit keep_all() const;
    /// Writes a chunk's bytes now, after everything the frame uses (a new chunk file for a
    /// sparse frame), without changing the frame: a writer can stream any number of chunks to
    /// disk with bounded memory and make them part of the frame in one apply(). Staged chunks
    /// no apply() names become dead space (removed files, for a sparse frame) at the next commit.
    /// Safe to call from several threads. \throws UsageError for an invalid chunk; IoError
    StagedChunk stage(ByteSpan chunk);

    /// Appends encoded chunks in one commit (one new offsets index).
    void append_chunks(const std::vector<ByteSpan>& chunks);
    /// Appends one encoded chunk (one commit).
    void append_chunk(ByteSpan chunk) { append_chunks({chunk}); }
    /// Replaces chunk i.
    void update_chunk(std::int64_t i, ByteSpan chunk);
    /// Inserts a chunk before position i (i == nchunks appends).
    void insert_chunk(std::int64_t i, ByteSpan chunk);
    /// Removes chunk i.
    void delete_chunk(std::int64_t i);
    /// Overwrites a metalayer's content in place; its size must not change.
    void update_metalayer(const std::string& name, ByteSpan content);
    /// Adds or replaces a vlmetalayer (its content is stored compressed, as c-blosc2 does).
    void set_vlmeta(const std::string& name, ByteSpan content);
    /// Removes a vlmetalayer; false if it did not exist.
    bool delete_vlmeta(const std::string& name);

    /// Makes everything written so far durable (fsync of the files and, for a sparse frame, the
    /// directory).
    void sync();
    /// Rewrites the frame without dead space (to a temporary file, then renamed over it).
    /// progress(done, total) in chunks copied (contiguous frames), after each.
    void compact(const CompactProgress& progress = {});
    /// Re-reads the frame if another handle has changed it; true when something changed.
    bool refresh();
    /// Whether another handle may have committed since this handle's snapshot: cheap enough to
    /// ask before every read (with a lock file, one load from shared memory).
    bool stale() const;
    /// A shared hold on the lock file: no commit (of any handle or process that takes part in
    /// the protocol) happens while it lives. For readers of files that other programs rewrite in
    /// place (c-blosc2's writers do); b2nd-cpp's writers never touch bytes a snapshot uses.
    /// Empty without a lock file.
    class ReadLock {
    public:
        ReadLock() = default;
        /// Whether it holds the lock.
        explicit operator bool() const noexcept { return hold_ != nullptr; }

    private:
        friend class Frame;
        explicit ReadLock(std::shared_ptr<void> hold) : hold_(std::move(hold)) {}
        std::shared_ptr<void> hold_;
    };

    /// Bytes of the file (contiguous frames: the frame length) not used by any chunk (nor by
    /// the block digests after it).
    std::int64_t dead_bytes() const;
    /// Bytes of the records stored after the chunks (a checksum table of version 2 or 3) that the
    /// header's cbytes counts (contiguous frames; 0 for sparse ones, whose cbytes counts the
    /// chunks alone).
    std::int64_t record_bytes() const;
    /// What the live chunks take as stored, without dead space or block digests: the array's
    /// compressed size (AnyArray::cbytes). One pass over the chunk headers; equal to
    /// header().cbytes - dead_bytes() - record_bytes() for a well-formed frame.
    std::int64_t chunk_bytes() const;

    /// The implementation (src/storage/frame_impl.hpp); named here so that the two kinds of
    /// frame can derive from it.
    struct Impl;

private:
    // Chunks written by other processes and made part of the frame by this handle (b2nd::mpi):
    // src/storage/reserved_staging.hpp.
    friend struct ReservedStaging;
    // What only the engine and the storage layer use: src/storage/frame_internal.hpp.
    friend struct FrameInternal;
    /// A remote frame: fetches what reading these blocks needs and is not at hand yet, in two
    /// batches of requests at most (chunk heads, then block bytes), every range in flight
    /// together. Other frames: nothing. \throws RemoteError, FormatError
    void fetch(const std::vector<ChunkBlocks>& wants) const;
    /// Chunk i, of which `blocks` at least may be decoded: for a remote frame only those are
    /// fetched (partial unless that is all of it); otherwise chunk(i).
    StoredChunk chunk_blocks(std::int64_t i, const std::vector<std::int32_t>& blocks) const;
    /// Chunk i for decoding (FrameInternal::chunk_to_decode).
    StoredChunk chunk_to_decode(std::int64_t i) const;
    /// For the writer of a frame whose file (or directory) another one has just replaced under
    /// its path, by a rename: bumps the lock file's generation, so that handles that follow it
    /// (OpenOptions::follow, refresh()) take a snapshot of the new one.
    void announce_replaced();
    /// Whether other handles, in this or another process, have registered as readers of this
    /// frame (its lock file's reader table) and are still alive.
    bool read_by_others() const;
    /// A shared hold on the lock file (empty without one).
    ReadLock read_lock() const;
    /// The offsets-index entries of the snapshot (see index_entry()).
    std::vector<std::int64_t> index_entries() const;
    /// Identifies the file the snapshot was read from (its inode): compaction replaces it.
    std::uint64_t file_id() const noexcept;

    explicit Frame(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

/// The 32-byte special chunk c-blosc2 makes for an index-only special chunk.
std::vector<std::uint8_t> materialize_special(codec::Special kind,
                                              std::int32_t nbytes,
                                              std::int32_t typesize,
                                              std::int32_t blocksize);

}  // namespace b2nd::storage
