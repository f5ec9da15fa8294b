// Internal: an array's chunks as the engine reads and writes them (DESIGN.md sections 4, 5).
//
// ChunkSource is the one place of the array layer that knows what a stored chunk can be:
//  - uniform: every element the same (index-only zeros, NaN and uninitialized chunks, special
//    chunks with a header, repeated-value chunks): served without decoding anything;
//  - raw: a memcpyed chunk: its blocks are copied from the map;
//  - encoded: its blocks are decoded from the map by codec::ChunkDecoder, through the block
//    cache, a per-thread scratch buffer, or straight into the caller's buffer.
// It owns the frame, the grid, the block cache and its keys, the checks of a chunk against the
// grid, the context of chunk errors (file, chunk, offset in the file), and the making of new
// chunks: uniform chunks become special chunks, others are encoded with the array's parameters.
//
// Thread safety: const members may run concurrently; the caller (ArrayCore) serializes writes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/error.hpp>
#include <b2nd/grid.hpp>
#include <b2nd/storage/frame.hpp>

#include "../select/plan.hpp"
#include "../select/strided_copy.hpp"
#include "../storage/block_seals.hpp"
#include "block_cache.hpp"
#include "block_origin.hpp"
#include "remote_cache.hpp"

namespace b2nd::detail {

/// Rethrows an item a codec refused (codec::ItemError, in block e.block() of chunk `chunk` of
/// grid `g`) as a UsageError naming the array `name` and the element's position.
[[noreturn]] void throw_item_error(const codec::ItemError& e,
                                   const Grid& g,
                                   std::int64_t chunk,
                                   const std::string& name);

/// Whether a request puts the blocks it decodes into the cache: when it is small against the
/// budget (automatic), always (single elements), or never (one-pass scans whose blocks are
/// about to be replaced or never read again).
enum class CacheUse { automatic, always, never };

/// How one request uses the block cache (ChunkSource::cache_policy).
struct CachePolicy {
    bool lookups = false;  ///< look blocks up
    bool inserts = false;  ///< insert the blocks it decodes
    /// Blocks it needs a little of enter on their second touch (ChunkSource::admits); single
    /// elements (CacheUse::always: loops come back to the block) keep them from the first.
    bool second_touch = false;
};

/// A chunk resolved for one request (ChunkSource::load): its kind and what serving its blocks
/// needs. Keeps the chunk's bytes mapped while it lives.
class LoadedChunk {
public:
    /// computed: its blocks are made by the array's BlockOrigin (block_origin.hpp).
    enum class Kind { uniform, raw, encoded, computed };

    std::int64_t index() const noexcept { return index_; }
    Kind kind() const noexcept { return kind_; }
    /// The one element of a uniform chunk (itemsize bytes); null otherwise.
    const std::uint8_t* element() const noexcept {
        return kind_ == Kind::uniform ? element_.data() : nullptr;
    }

private:
    friend class ChunkSource;
    std::int64_t index_ = 0;
    Kind kind_ = Kind::uniform;
    std::vector<std::uint8_t> element_;  // uniform
    const std::uint8_t* raw_ = nullptr;  // raw: the chunk's data in the map
    std::optional<codec::ChunkDecoder> decoder_;
    storage::StoredChunk stored_;
    BlockCache::Buffer block0_;  // encoded with DELTA: decoded block 0, the other blocks' reference
};

/// The elements of one block: element k is at data + k * stride (stride 0 for a uniform chunk).
/// `hold` keeps the buffer `data` points into alive and unmoved (a cached block, or this thread's
/// leased scratch), whatever is read on this thread meanwhile.
struct BlockView {
    const std::uint8_t* data = nullptr;
    std::int64_t stride = 0;
    std::shared_ptr<const void> hold;
    const std::uint8_t* at(std::int64_t k) const noexcept { return data + k * stride; }
};

class ChunkSource {
public:
    /// `plain`: a frame without a b2nd metalayer, read as a 1-D array whose chunks are one block.
    ChunkSource(storage::Frame frame, Grid grid, bool plain, std::size_t cache_bytes);

    /// OpenOptions::salvage: chunks that cannot be read are read as zeros and listed.
    void set_salvage(bool on) noexcept { salvage_ = on; }
    /// Block `block` of chunk `ci` from the origin; with salvage, zeros where it fails (the
    /// chunk then listed by salvaged()).
    void make_block(std::int64_t ci, std::int64_t block, std::uint8_t* into) const;
    std::vector<std::string> salvaged() const;

    const storage::Frame& frame() const noexcept { return frame_; }
    storage::Frame& frame() noexcept { return frame_; }
    const Grid& grid() const noexcept { return grid_; }
    bool plain() const noexcept { return plain_; }
    BlockCache& cache() const noexcept { return cache_; }
    /// `"path"`, for messages.
    std::string where() const;

    // ---- reading ----
    /// How a request of `nblocks` blocks uses the cache.
    CachePolicy cache_policy(std::int64_t nblocks, CacheUse use) const noexcept;
    /// Resolves chunk ci and checks it against the grid. `need_block0`: blocks other than 0
    /// will be read (a DELTA chunk decodes block 0 first, once per request or from the cache).
    /// \throws FormatError naming the file, the chunk and its offset in the file
    /// `blocks`: the blocks the request will read (a remote frame then fetches only those;
    /// null: any block may be read).
    LoadedChunk load(std::int64_t ci,
                     bool need_block0,
                     const CachePolicy& policy,
                     const std::vector<std::int32_t>* blocks = nullptr) const;
    /// Copies part of block `block` of `c` into dst: `box` walks the block's elements (strides
    /// in bytes, src from the block's element `first`) and dst. With `lands_whole` the block's
    /// bytes land contiguously at dst, which lets an uncached block be decoded straight there.
    /// `stream`: write with non-temporal stores (a destination larger than the caches; see
    /// copy_strided); the caller fences. `part`: the bytes of each element copied (dst strides
    /// count in them).
    void copy_block(const LoadedChunk& c,
                    std::int64_t block,
                    const StridedBox& box,
                    std::int64_t first,
                    std::uint8_t* dst,
                    bool lands_whole,
                    const CachePolicy& policy,
                    bool stream = false,
                    const ElementPart& part = {}) const;
    /// The elements of block `block` of `c` (decoded into the cache or this thread's scratch;
    /// into scratch, only the first `need` bytes are sure to be decoded).
    BlockView view_block(const LoadedChunk& c,
                         std::int64_t block,
                         const CachePolicy& policy,
                         std::size_t need = SIZE_MAX) const;
    /// Chunk ci whole, in the padded block layout (grid().chunk_nbytes() bytes).
    void decode_chunk(std::int64_t ci, std::uint8_t* buf, int threads) const;
    /// Chunk ci as stored, checked against the grid as load() checks it (no block decoded), and
    /// whether it is uniform (a special chunk: no codec in it).
    std::pair<storage::StoredChunk, bool> stored_checked(std::int64_t ci) const;
    /// The cached block holding `loc`, or null.
    BlockCache::Buffer cached_block(const Grid::Location& loc) const;
    /// The block cache's identity and epoch (see BlockCache::epoch).
    std::uint64_t cache_id() const noexcept { return cache_.id(); }
    std::uint64_t cache_epoch() const noexcept { return cache_.epoch(); }

    // ---- remote frames (remote_reads.hpp) ----
    /// Keeps what is fetched in a persistent local cache (remote_cache.hpp), which reads then
    /// consult first.
    void set_remote_cache(std::shared_ptr<RemoteCache> cache) { remote_cache_ = std::move(cache); }
    const RemoteCache* remote_cache() const noexcept { return remote_cache_.get(); }
    /// Fetches what reading `wants` needs (Frame::fetch), but what the persistent cache holds.
    void fetch(std::vector<storage::ChunkBlocks> wants) const;

    /// Sets where blocks come from besides the frame (an object kind; null: the frame alone).
    void set_origin(std::shared_ptr<const BlockOrigin> origin) { origin_ = std::move(origin); }
    const BlockOrigin* origin() const noexcept { return origin_.get(); }

    // ---- writing ----
    /// Where a new chunk's bytes go: Frame::stage, in order (storage/ordered_staging.hpp), or
    /// elsewhere (b2nd::mpi keeps them to write them itself); called once per chunk, with what
    /// spares sealing it work (its pieces' digests, taken as it was encoded).
    using ChunkSink =
        std::function<storage::StagedChunk(ByteSpan, const storage::detail::SealHint&)>;
    /// Makes a chunk of the grid from `buf` (padded block layout) and hands its bytes to `sink`
    /// (on any handle: nothing is written here): uniform chunks become special chunks (zeros:
    /// index-only; other values: a repeated-value chunk), others are encoded with the array's
    /// parameters on up to `threads` threads.
    /// `ci` is the chunk's index in the grid (-1: unknown), for lossy geometry plugins (ZFP,
    /// NDMEAN): where they encode, the padding of blocks that straddle the chunk's edge repeats
    /// the nearest valid element (edge replication), so that it does not bend the values near
    /// the edge.
    storage::StagedChunk make_chunk(const std::uint8_t* buf,
                                    int threads,
                                    std::int64_t ci,
                                    const ChunkSink& sink) const;
    /// make_chunk for a chunk of `g`, a grid of this array's chunk and block shapes other than
    /// the source's (the row an appender adds next): it reads nothing set_grid changes, so it
    /// may run while another thread commits and adopts a new grid. Encoded into `into` when it
    /// holds codec::max_encoded_size of a chunk (the sink then gets bytes of it, but for
    /// special chunks), else into scratch of the calling thread.
    storage::StagedChunk make_chunk_of(const Grid& g,
                                       const std::uint8_t* buf,
                                       int threads,
                                       const ChunkSink& sink,
                                       MutableByteSpan into = {}) const;
    /// make_chunk for a chunk whose blocks `fill` writes one at a time (each into a buffer that
    /// stays in the cache); `first` is the chunk's first element. Same bytes as make_chunk.
    storage::StagedChunk make_chunk_by_blocks(const codec::BlockFill& fill,
                                              const std::uint8_t* first,
                                              int threads,
                                              std::int64_t ci,
                                              const ChunkSink& sink) const;
    /// Why chunks of this array cannot be encoded ("" when they can): its codec or a filter
    /// cannot write (an unregistered plugin, ZFP in a build without it, ZFP after SHUFFLE...).
    const std::string& write_refusal() const noexcept { return write_refusal_; }
    /// The special chunk of zeros of a grid of this array's chunk and block shapes.
    std::vector<std::uint8_t> zeros_chunk(const Grid& g) const;
    /// Drops the cached blocks of chunk ci.
    void forget(std::int64_t ci);
    /// Adopts a new grid (after a reshape commit); the cache is cleared.
    void set_grid(Grid g);

private:
    /// Stages the special chunk repeating element `e` (nothing for values longer than 255
    /// bytes, which c-blosc2 cannot repeat).
    std::optional<storage::StagedChunk> stage_uniform(const Grid& g,
                                                      const std::uint8_t* e,
                                                      const ChunkSink& sink) const;
    /// make_chunk of a chunk of `g` (chunk ci of it when ci >= 0, then g is grid_), encoded
    /// into `into` as make_chunk_of says.
    storage::StagedChunk make_chunk_in(const Grid& g,
                                       const std::uint8_t* buf,
                                       int threads,
                                       std::int64_t ci,
                                       const ChunkSink& sink,
                                       MutableByteSpan into = {}) const;
    /// Encodes a chunk of `g` (`buf`, or block by block from `fill`) and stages it, or its
    /// uniform special chunk when `uniform` ends up true; into `into` as make_chunk_of says.
    storage::StagedChunk stage_encoded(const Grid& g,
                                       const std::uint8_t* buf,
                                       const codec::BlockFill* fill,
                                       const std::atomic<bool>* uniform,
                                       const std::uint8_t* first,
                                       int threads,
                                       std::int64_t ci,
                                       const ChunkSink& sink,
                                       MutableByteSpan into = {}) const;
    /// Block i of chunk ci (n bytes at dest): its padding set to the nearest valid element.
    void replicate_edges(std::int64_t ci, std::int32_t i, std::uint8_t* dest) const;
    /// The bytes chunk ci holds uncompressed.
    std::int64_t chunk_nbytes(std::int64_t ci) const;
    /// Decodes block `block` of `c` into `into`: at least its first `need` bytes.
    void decode_block_into(const LoadedChunk& c,
                           std::int64_t block,
                           std::uint8_t* into,
                           std::size_t need = SIZE_MAX) const;
    /// Decodes block `block` of an encoded chunk into dst when `box` is the whole block with its
    /// rows contiguous at dst (a byte shuffle then writes the rows in place); false otherwise.
    bool decode_rows(const LoadedChunk& c,
                     std::int64_t block,
                     const StridedBox& box,
                     std::uint8_t* dst) const;
    /// Block `block` of an encoded chunk if it is at hand (block 0 of a DELTA chunk, or cached).
    BlockCache::Buffer cached(const LoadedChunk& c,
                              std::int64_t block,
                              const CachePolicy& policy) const;
    /// Whether block `block` of `c`, not cached, is decoded whole into the cache by a read that
    /// needs its first `need` bytes: when the policy inserts, and either the policy keeps blocks
    /// from their first touch, a partial decode would save little (its codec cannot stop early,
    /// or the read needs more than half of it) or the cache admits it (BlockCache::admit: its
    /// second touch).
    bool admits(const LoadedChunk& c,
                std::int64_t block,
                const CachePolicy& policy,
                std::size_t need) const;
    /// The decoded elements of a block of an encoded or computed chunk: `hold` when set (from
    /// cached()), else decoded into a new cache entry (`insert`, whole) or a scratch buffer
    /// leased from this thread's pool (at least the first `need` bytes), which the view holds: a
    /// block origin that reads other arrays while it makes the block cannot move it.
    BlockView decoded_view(const LoadedChunk& c,
                           std::int64_t block,
                           bool insert,
                           BlockCache::Buffer hold,
                           std::size_t need = SIZE_MAX) const;
    /// Runs the block check of blocks [first, last] of `c` (StoredChunk::check; nothing without
    /// one): for bytes used without a decoder (memcpyed chunks, chunks copied as stored).
    void check_blocks_of(const LoadedChunk& c, std::int64_t first, std::int64_t last) const;
    /// check_blocks_of for the grid's block `block` of a memcpyed chunk (all of its stored blocks
    /// for a plain frame, whose chunks are one block of the grid).
    void check_raw_block(const LoadedChunk& c, std::int64_t block) const;
    /// The block check of the blocks a remote chunk brought (`blocks`; null: all of them),
    /// before the persistent cache keeps them.
    void check_blocks(const LoadedChunk& c, const std::vector<std::int32_t>* blocks) const;
    /// A chunk's decode error, with the file, the chunk and the offset in the file.
    [[noreturn]] void rethrow(const LoadedChunk& c, const FormatError& e) const;
    /// A chunk that contradicts the grid; `field` is the chunk header offset of the culprit.
    [[noreturn]] void mismatch(const LoadedChunk& c,
                               const std::string& what,
                               std::optional<std::uint64_t> field) const;

    storage::Frame frame_;
    Grid grid_;
    bool plain_ = false;
    codec::EncodeParams encode_params_;
    std::string write_refusal_;     // check_encode_params(encode_params_), once
    bool replicate_edges_ = false;  // a lossy plugin that works on whole blocks encodes
    mutable BlockCache cache_;
    std::shared_ptr<const BlockOrigin> origin_;
    std::shared_ptr<RemoteCache> remote_cache_;
    LoadedChunk load_chunk(std::int64_t ci,
                           bool need_block0,
                           const CachePolicy& policy,
                           const std::vector<std::int32_t>* blocks) const;
    bool salvage_ = false;
    mutable std::mutex salvaged_mutex_;
    mutable std::map<std::int64_t, std::string> salvaged_;  // chunk -> why
};

}  // namespace b2nd::detail
