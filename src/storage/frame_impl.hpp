// Internal: the state behind storage::Frame, shared by the reader (frame.cpp) and the writer
// (frame_writer.cpp).
#pragma once

#include <list>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <b2nd/storage/frame.hpp>
#include <b2nd/storage/mapped_file.hpp>

namespace b2nd::storage {

/// Special values of offsets-index entries (bit 63 set, kind in the top byte).
inline constexpr std::uint64_t kSpecialZeros = 0x8100000000000000ULL;
inline constexpr std::uint64_t kSpecialNan = 0x8200000000000000ULL;
inline constexpr std::uint64_t kSpecialUninit = 0x8400000000000000ULL;

struct Frame::Impl {
    // Where the frame lives.
    std::string path;  // contiguous file, or sparse directory; empty for a buffer
    bool is_sparse = false;
    bool is_writable = false;
    std::uint64_t base = 0;  // frame offset in the file
    OpenOptions options;

    // What is mapped and parsed. Guarded by `mutex`: readers share it, writers take it alone.
    mutable std::shared_mutex mutex;
    std::shared_ptr<const MappedFile> map;  // the contiguous file or chunks.b2frame
    ByteSpan frame;                         // [0, frame_len) of the frame
    format::FrameHeader header;
    std::vector<std::int64_t> index;        // offsets (or sparse file numbers, or specials)
    std::vector<format::Metalayer> vlmeta;  // trailer contents, still compressed
    std::uint32_t trailer_len = 0;
    std::int64_t index_pos = 0;  // offset of the index chunk in the frame

    // Sparse frames: chunk files mapped on demand, least recently used evicted.
    mutable std::mutex cache_mutex;
    mutable std::list<std::uint32_t> lru;
    mutable std::unordered_map<
        std::uint32_t,
        std::pair<std::shared_ptr<const MappedFile>, std::list<std::uint32_t>::iterator>>
        cache;

    /// `"path"` (or `<memory>`), for error messages.
    std::string where() const;
    /// Maps the file (or index file) and parses it.
    void map_and_load();
    /// Parses header, trailer and index from `bytes` (from the frame start to the end of the
    /// file or buffer).
    void load(ByteSpan bytes, std::shared_ptr<const MappedFile> mapping);
    StoredChunk chunk_unlocked(std::int64_t i) const;
    std::int32_t special_nbytes(std::int64_t i) const;
    std::shared_ptr<const MappedFile> chunk_file(std::uint32_t id) const;
    /// `"path": chunk i`, with the chunk's file for a sparse frame (file >= 0).
    std::string chunk_context(std::int64_t i, std::int64_t file) const;
    std::string chunk_file_path(std::uint32_t id) const;
    std::string index_file_path() const { return path + "/chunks.b2frame"; }

    // ---- writing (frame_writer.cpp) ----
    /// A chunk given to a writer, classified: stored bytes, or an index-only special.
    struct NewChunk {
        ByteSpan bytes;      // encoded chunk to store (empty: index-only special)
        std::int64_t entry;  // the index entry for index-only specials
        std::int32_t nbytes;
    };
    NewChunk classify(ByteSpan chunk) const;
    /// Uncompressed and stored size of the chunk an index entry points at.
    std::pair<std::int32_t, std::int64_t> entry_sizes(std::int64_t i) const;
    /// Frame::apply, with the lock held.
    void apply(const FrameEdit& edit);
    /// Writes the stored chunks (`writes`, into index slots `slots`), then the index, trailer
    /// and header, and adopts the result.
    void commit(std::vector<std::int64_t> new_index,
                std::int64_t new_nbytes,
                const std::vector<ByteSpan>& writes,
                const std::vector<std::size_t>& slots,
                std::vector<format::Metalayer> new_vlmeta,
                std::int64_t stored_delta,
                const std::vector<format::Metalayer>& new_metalayers);
    void commit_contiguous(std::vector<std::int64_t>& new_index,
                           std::int64_t new_nbytes,
                           const std::vector<ByteSpan>& writes,
                           const std::vector<std::size_t>& slots,
                           const std::vector<format::Metalayer>& new_vlmeta,
                           const std::vector<format::Metalayer>& new_metalayers);
    void commit_sparse(std::vector<std::int64_t>& new_index,
                       std::int64_t new_nbytes,
                       const std::vector<ByteSpan>& writes,
                       const std::vector<std::size_t>& slots,
                       const std::vector<format::Metalayer>& new_vlmeta,
                       std::int64_t stored_delta,
                       const std::vector<format::Metalayer>& new_metalayers);
    /// A whole new frame image (header, chunks in order, index, trailer) written to `out`.
    void write_compacted(const std::string& out) const;
    void require_writable(const char* op) const;
    /// Re-reads the frame if another handle changed it (caller holds the lock exclusively).
    bool refresh_unlocked();

    /// The mapped file's inode when it was mapped (a replacement by rename changes it).
    std::uint64_t mapped_ino = 0;

    // Staging (Frame::stage): chunks written ahead of a commit.
    std::uint64_t generation = 1;          // bumped by every commit and reload
    std::uint64_t staging_end = 0;         // contiguous: next staged byte position (0: none yet)
    std::int64_t next_staged_id = -1;      // sparse: next chunk file number (-1: none yet)
    std::vector<std::int64_t> staged_ids;  // sparse: files written by stage()
    /// Ends a staging generation: removes staged files that `live` does not name.
    void end_staging(const std::vector<std::int64_t>& live);
};

/// The special kind of an index entry, or Special::none for a regular offset.
/// \throws FormatError for an unknown special encoding
codec::Special special_of(std::int64_t entry, std::int64_t i);

/// Encodes an offsets index as c-blosc2 does (blosclz 5, shuffle, typesize 8, no split).
std::vector<std::uint8_t> encode_index(const std::vector<std::int64_t>& index);

}  // namespace b2nd::storage
