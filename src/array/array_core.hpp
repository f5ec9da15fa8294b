// Internal: the untyped array engine behind AnyArray and NDArray<T> (DESIGN.md sections 4, 5).
//
// Reading: a box is planned per dimension into segments (runs of selected elements that share
// one block), grouped by chunk. Touched chunks are resolved first (special, memcpyed or encoded;
// validated against the grid), then every touched block of the whole request is a task on the
// thread pool: special chunks fill, memcpyed chunks copy from the map, encoded blocks decode from
// the map into the cache, a scratch buffer, or straight into the destination, and strided copies
// move innermost runs with memcpy.
//
// Writing: touched chunks are rebuilt in parallel (fresh when fully covered, else decoded and
// patched), encoded and staged in the frame by the thread that built them (memory: a chunk or two
// per thread), then committed in one storage::Frame::apply. resize/insert/remove map each chunk
// of the new grid to an old chunk kept as is, a zero chunk, or content rebuilt from the old array
// and the caller's data, and commit everything, with the new shape, in one apply.
//
// Locking: reads hold the array's mutex shared. Writers take a writer mutex for their whole
// duration (one at a time) and the array's mutex exclusively only to commit, so readers run on
// while chunks are being encoded and see the old content until the commit.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/dtype.hpp>
#include <b2nd/format/b2nd_meta.hpp>
#include <b2nd/grid.hpp>
#include <b2nd/params.hpp>
#include <b2nd/selection.hpp>
#include <b2nd/storage/frame.hpp>

#include "block_cache.hpp"

namespace b2nd::detail {

struct ChunkState;

/// A shared mutex that does not starve writers: a waiting writer holds the gate, so new readers
/// queue behind it (glibc's rwlock prefers readers, and a stream of readers would block writes
/// forever).
class FairSharedMutex {
public:
    void lock() {
        std::lock_guard<std::mutex> g(gate_);
        m_.lock();
    }
    void unlock() { m_.unlock(); }
    void lock_shared() {
        std::lock_guard<std::mutex> g(gate_);
        m_.lock_shared();
    }
    void unlock_shared() { m_.unlock_shared(); }

private:
    std::mutex gate_;
    std::shared_mutex m_;
};

class ArrayCore {
public:
    ArrayCore(storage::Frame frame,
              const std::optional<DType>& dtype_override,
              int nthreads,
              std::size_t cache_bytes);

    static std::shared_ptr<ArrayCore> open(const std::string& path, const OpenOptions& o);
    static std::shared_ptr<ArrayCore> create(const std::string& path,
                                             const DType& dtype,
                                             const Shape& shape,
                                             const CreateOptions& o);

    const Grid& grid() const noexcept { return grid_; }
    const DType& dtype() const noexcept { return dtype_; }
    const std::string& dtype_note() const noexcept { return dtype_note_; }
    const storage::Frame& frame() const noexcept { return frame_; }
    /// `"path"` for messages.
    std::string where() const;
    bool plain() const noexcept { return plain_; }
    bool legacy_caterva() const noexcept { return !plain_ && !meta_.has_dtype; }
    int nthreads() const noexcept { return nthreads_; }
    void set_nthreads(int n) noexcept;
    BlockCache& cache() const noexcept { return cache_; }
    CompressionParams compression() const;

    /// \throws UsageError naming the file when `box` is not a box of this array.
    void require_box(const Box& box, const char* op) const;
    /// Reads `box` into out, whose element (k_0, ..) is at byte offset sum k_d * out_strides[d]
    /// (C order of box.count when out_strides is null). Stored byte order.
    void read(const Box& box, std::uint8_t* out, const std::int64_t* out_strides = nullptr) const;
    /// One element (in-range coordinates are checked).
    void read_element(const std::int64_t* idx, std::uint8_t* out) const;
    /// `n` elements at coordinates coords[i * ndim ...] into out[i] (each block decoded once,
    /// blocks in parallel).
    void read_points(const std::int64_t* coords, std::size_t n, std::uint8_t* out) const;
    /// Writes `box` from src (C order of box.count when src_strides is null).
    void write(const Box& box, const std::uint8_t* src, const std::int64_t* src_strides = nullptr);
    void resize(const Shape& shape);
    /// Computes and writes whole chunks: produce(chunk, region, out) fills the region's elements
    /// (C order) and is called from up to in_flight threads (0: nthreads()). The array is not
    /// locked while producing (produce may read this array: it sees the old content); one commit
    /// at the end.
    using ChunkProducer = std::function<void(std::int64_t, const Box&, std::uint8_t*)>;
    using Progress = std::function<void(std::int64_t done, std::int64_t total)>;
    void write_chunks(const std::vector<std::int64_t>& ids,
                      const ChunkProducer& produce,
                      int in_flight,
                      const Progress& progress);
    /// visit(chunk, region, data, uniform) for each chunk, from up to in_flight threads: data is
    /// the region's elements in C order, or null when the chunk is uniform and `uniform` points
    /// at its one element (special chunks are never decoded).
    using ChunkVisitor =
        std::function<void(std::int64_t, const Box&, const std::uint8_t*, const std::uint8_t*)>;
    void for_each_chunk(const std::vector<std::int64_t>& ids,
                        const ChunkVisitor& visit,
                        int in_flight) const;
    /// Inserts `n` slices along `axis` before `pos` (data: C order, the array's shape with n
    /// along axis).
    void insert(int axis, std::int64_t pos, std::int64_t n, const std::uint8_t* data);
    void remove(int axis, std::int64_t pos, std::int64_t n);
    /// Replaces `removed` slices at `pos` along `axis` by `inserted` slices of data.
    void splice(int axis,
                std::int64_t pos,
                std::int64_t removed,
                std::int64_t inserted,
                const std::uint8_t* data);

    void update_metalayer(const std::string& name, ByteSpan content);
    void set_vlmeta(const std::string& name, ByteSpan content);
    bool delete_vlmeta(const std::string& name);
    void sync();
    void compact();

private:
    struct Piece;
    struct NewChunk;

    /// Whether a read puts the blocks it decodes into the cache: when the request is small
    /// against the budget (auto), always (single elements), or never (one-pass scans whose
    /// blocks are about to be replaced or never read again).
    enum class CacheUse { automatic, always, never };
    void read_unlocked(const Box& box,
                       std::uint8_t* out,
                       const std::int64_t* out_strides,
                       CacheUse use) const;
    ChunkState load_chunk(std::int64_t ci, bool need_block0, bool cache_inserts) const;
    void decode_block_into(const ChunkState& cs,
                           std::int64_t ci,
                           std::int64_t block,
                           std::uint8_t* into) const;
    /// The decoded bytes of a block of an encoded chunk: `hold` (a cache hit, if set), a new
    /// cache entry (inserts), or this thread's scratch buffer.
    const std::uint8_t* block_data(const ChunkState& cs,
                                   std::int64_t ci,
                                   std::int64_t block,
                                   bool inserts,
                                   BlockCache::Buffer& hold) const;
    void decode_chunk_into(std::int64_t ci, std::uint8_t* buf, int threads) const;
    /// Commits staged chunks at positions ids (under the exclusive lock) and drops their blocks
    /// from the cache.
    void commit_staged(const std::vector<std::int64_t>& ids,
                       std::vector<storage::StagedChunk> staged);
    /// Encodes one chunk (uniform chunks as special chunks) and stages it in the frame.
    storage::StagedChunk encode_and_stage(const std::uint8_t* buf, int threads);
    void require_writable(const char* op) const;
    void require_chunks(const std::vector<std::int64_t>& ids) const;
    [[noreturn]] void corrupt(std::int64_t ci, const std::string& what) const;
    void rebuild(const Grid& ng,
                 const std::function<NewChunk(const std::int64_t*)>& plan_of,
                 const std::uint8_t* user,
                 int axis,
                 std::int64_t user_extent);
    std::vector<std::uint8_t> meta_bytes(const Shape& shape) const;

    storage::Frame frame_;
    format::B2ndMeta meta_;
    bool plain_ = false;
    Grid grid_;
    DType dtype_;
    std::string dtype_note_;
    codec::EncodeParams encode_params_;
    int nthreads_ = 1;
    mutable BlockCache cache_;
    mutable FairSharedMutex mutex_;  // readers shared; commits exclusive
    std::mutex writer_mutex_;        // one writer at a time (taken before mutex_)
};

}  // namespace b2nd::detail
