// Internal: the untyped array engine behind AnyArray and NDArray<T> (DESIGN.md sections 4, 5).
//
// ArrayCore is an array's state (its chunks, dtype, metalayer, locks); its operations are spread
// over files by what they do, around ChunkSource (chunk_source.hpp), which alone knows chunk
// kinds, decoding, the block cache and how new chunks are made:
//   array_core.cpp  opening: the metalayer, the grid and the dtype; metadata, sync, compact
//   read.cpp        reads: a box is planned (box_plan.hpp) into the blocks it touches, which are
//                   decoded in parallel across the whole request and copied out; elements; points
//   write.cpp       writes: each touched chunk is rebuilt (fresh when covered, else decoded and
//                   patched), staged in the frame by the thread that built it, one commit at the
//                   end
//   chunkwise.cpp   write_chunks and for_each_chunk, the primitives of out-of-core evaluation
//   reshape.cpp     resize, insert, remove: each chunk of the new grid is kept, zero, or rebuilt
//                   from the old array and the caller's data; one commit with the new shape
//   create.cpp      a new array: built under a temporary name, published (storage/publish.hpp)
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
#include <unordered_map>
#include <vector>

#include <b2nd/dtype.hpp>
#include <b2nd/format/b2nd_meta.hpp>
#include <b2nd/grid.hpp>
#include <b2nd/params.hpp>
#include <b2nd/selection.hpp>
#include <b2nd/storage/frame.hpp>

#include "../select/plan.hpp"
#include "chunk_source.hpp"

namespace b2nd::storage::detail {
class OrderedStaging;
}

namespace b2nd::detail {

class BoxPlan;
struct EncodedRow;
class ChunkLoads;

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
    /// Reads the array in `frame` (array_core.cpp). \throws FormatError, UsageError
    ArrayCore(storage::Frame frame,
              const std::optional<DType>& dtype_override,
              int nthreads,
              std::size_t cache_bytes);

    /// The array a path or URL names.
    static std::shared_ptr<ArrayCore> open(const std::string& path, const OpenOptions& o);
    /// The one way an array is built over a frame, whatever opened it (a path, a URL, a byte
    /// source, a store's leaf, a new array): every option of `o` applies (the persistent cache
    /// of a remote frame, salvage, the dtype override, threads, cache).
    static std::shared_ptr<ArrayCore> over(storage::Frame frame, const OpenOptions& o);
    /// What fills a new array before it is published: called with the temporary path it is
    /// built under and how to open it there (writable, private).
    using Build = std::function<void(const std::string& path, const OpenOptions& o)>;
    /// A new array at `path`, with `build`'s data when given, published in one step (create.cpp;
    /// publish.hpp). \throws UsageError (bad geometry or options; exists without overwrite),
    /// LockError (the array it would replace has a writer), IoError
    static std::shared_ptr<ArrayCore> create(const std::string& path,
                                             const DType& dtype,
                                             const Shape& shape,
                                             const CreateOptions& o,
                                             const Build& build = {});

    const Grid& grid() const noexcept { return source_->grid(); }
    const DType& dtype() const noexcept { return dtype_; }
    const std::string& dtype_note() const noexcept { return dtype_note_; }
    const storage::Frame& frame() const noexcept { return source_->frame(); }
    /// `"path"` for messages.
    std::string where() const { return source_->where(); }
    /// OpenOptions::salvage: the chunks read as zeros, each with why.
    std::vector<std::string> salvaged() const { return source_->salvaged(); }
    bool plain() const noexcept { return source_->plain(); }
    bool legacy_caterva() const noexcept { return !plain() && !meta_.has_dtype; }
    int nthreads() const noexcept { return nthreads_; }
    void set_nthreads(int n) noexcept;
    BlockCache& cache() const noexcept { return source_->cache(); }
    CompressionParams compression() const;
    /// An in-memory array (AnyArray::create_in_memory): its frame lives in a private directory
    /// that `scratch` removes when the core goes.
    void own_scratch(std::shared_ptr<void> scratch) noexcept { scratch_ = std::move(scratch); }
    bool in_memory() const noexcept { return scratch_ != nullptr; }
    /// The options it was opened with (path-based arrays; follow as set since).
    const OpenOptions& options() const noexcept { return options_; }

    /// Adopts what other handles committed since this snapshot: shape, grid, mappings; cached
    /// blocks of replaced chunks are dropped. True when something changed (array_core.cpp).
    bool refresh();
    bool follows() const noexcept { return options_.follow; }
    /// Whether another handle may have committed since this snapshot (cheap).
    bool stale() const { return frame().stale(); }

    /// Where blocks come from besides the frame (python-blosc2's object kinds; null: none).
    void set_origin(std::shared_ptr<const BlockOrigin> origin) {
        source_->set_origin(std::move(origin));
    }
    const BlockOrigin* origin() const noexcept { return source_->origin(); }

    /// A field view's writes go to the part `part` of each element of `parent` (field_view.cpp);
    /// its blocks come from the parent through its origin.
    struct FieldTarget {
        std::shared_ptr<ArrayCore> parent;
        ElementPart part;
        int sub_ndim = 0;  ///< trailing dimensions of a sub-array field
    };
    void set_field_target(FieldTarget t) { field_target_ = std::move(t); }

    /// Attributes held in memory instead of the frame's vlmeta (an array whose blocks come from
    /// an origin: a bridged dataset's own attributes, any number of them, found by name at once),
    /// read-only. AnyArray's vlmeta_names() and vlmeta() read them in the frame's place.
    struct HeldAttributes {
        std::vector<std::string> names;  ///< in the source's order
        std::unordered_map<std::string, std::vector<std::uint8_t>> values;  ///< msgpack
    };
    void hold_attributes(std::shared_ptr<const HeldAttributes> a) { held_ = std::move(a); }
    const HeldAttributes* held_attributes() const noexcept { return held_.get(); }

    /// \throws UsageError naming the file when `box` is not a box of this array.
    void require_box(const Box& box, const char* op) const;

    // ---- read.cpp ----
    /// Reads the selection `plan` (select/plan.hpp: every kind of selection arrives as one) into
    /// out: result element k (C order over plan.shape()) at byte sum k_d * out_strides[d], C
    /// order of plan.element_bytes() when out_strides is null. Stored byte order. Each touched
    /// block is decoded once, blocks in parallel across the whole request.
    /// \throws UsageError naming the file when the plan does not fit the array
    void read(const SelectionPlan& plan,
              std::uint8_t* out,
              const std::int64_t* out_strides = nullptr) const;
    /// Resolves `sel` against the current shape and reads it into destination(resolved), all under
    /// one lock (a concurrent refresh cannot change the shape in between).
    void read_selection(const Selection& sel,
                        const std::function<void*(const Resolved&)>& destination) const;
    /// Runs `read` (which takes the shared lock); when a remote file changed during it
    /// (RemoteError::remote_changed), re-reads its header and index (every cached block goes) and
    /// runs it once more: a second change is the caller's HttpError.
    template <class F>
    void restarting(F&& read) const;
    /// read() under the shared lock the caller holds.
    void read_unlocked(const SelectionPlan& plan,
                       std::uint8_t* out,
                       const std::int64_t* out_strides,
                       CacheUse use) const;
    /// One element (in-range coordinates are checked): the fast path of element-wise access
    /// (xtensor), which keeps the last block each thread read from; otherwise a one-element box.
    void read_element(const std::int64_t* idx, std::uint8_t* out) const;

    /// Chunk ci as stored, checked against the grid as reads check it, and whether it is uniform
    /// (copy.cpp copies such chunks as they are). \throws FormatError naming file and chunk
    std::pair<storage::StoredChunk, bool> stored_chunk(std::int64_t ci) const;
    /// Chunk ci decoded whole into buf (the padded block layout, grid().chunk_nbytes() bytes),
    /// checked as reads check it.
    void decode_chunk(std::int64_t ci, std::uint8_t* buf) const;

    // ---- write.cpp ----
    /// Writes the selection `plan` from src: result element k at byte sum k_d * src_strides[d]
    /// (C order of plan.element_bytes() when null; zero strides repeat an element, as NumPy's
    /// broadcasting does). With a partial ElementPart only those bytes of each element change.
    /// Where an element is selected twice, the last write in result order wins. Only touched
    /// chunks are re-encoded; one commit.
    void write(const SelectionPlan& plan,
               const std::uint8_t* src,
               const std::int64_t* src_strides = nullptr);

    // ---- chunkwise.cpp ----
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
    /// AnyArray::write_chunk_raw: `chunk` checked, then committed as chunk `ci`.
    void write_chunk_raw(std::int64_t ci, ByteSpan chunk);
    /// Makes chunks ids[first, last) on up to `threads` threads, the one way whole chunks are
    /// made (write_chunks, and b2nd::mpi through collective.hpp): produce fills each chunk's
    /// region, the chunk is packed and encoded (uniform ones become special), and its bytes go
    /// to place(k, bytes, hint), which stores them (or not) and says how; `hint` spares sealing
    /// them work (block_seals.hpp). Any handle; the array is not locked (produce may read it).
    using ChunkPlacer = std::function<storage::StagedChunk(
        std::size_t, ByteSpan, const storage::detail::SealHint&)>;
    /// With `order` (whose tasks are ids[first, last), first 0), the chunks are made by its run().
    void make_chunks(const std::vector<std::int64_t>& ids,
                     std::size_t first,
                     std::size_t last,
                     int threads,
                     const ChunkProducer& produce,
                     const ChunkPlacer& place,
                     storage::detail::OrderedStaging* order = nullptr) const;
    /// Commits chunks staged or adopted in the frame at positions ids, in one commit, as
    /// write_chunks does.
    void commit_chunks(const std::vector<std::int64_t>& ids,
                       const std::vector<storage::StagedChunk>& staged);
    /// The frame, for reserving and adopting chunks other processes write (collective.cpp).
    storage::Frame& frame_for_writing() noexcept { return source_->frame(); }
    /// visit(chunk, region, data, uniform) for each chunk, from up to in_flight threads: data is
    /// the region's elements in C order, or null when the chunk is uniform and `uniform` points
    /// at its one element (special chunks are never decoded).
    using ChunkVisitor =
        std::function<void(std::int64_t, const Box&, const std::uint8_t*, const std::uint8_t*)>;
    void for_each_chunk(const std::vector<std::int64_t>& ids,
                        const ChunkVisitor& visit,
                        int in_flight) const;

    // ---- reshape.cpp ----
    void resize(const Shape& shape);
    /// Inserts `n` slices along `axis` before `pos` (data: C order, the array's shape with n
    /// along axis).
    void insert(int axis, std::int64_t pos, std::int64_t n, const std::uint8_t* data);
    void remove(int axis, std::int64_t pos, std::int64_t n);

    // ---- chunk_rows.cpp (an appender's rows, chunk_rows.hpp) ----
    /// Receives chunk k of a row encoded by encode_images (its bytes valid during the call).
    using ImageSink = std::function<void(std::size_t, ByteSpan, const storage::detail::SealHint&)>;
    /// Encodes the chunk images of `row` (a grid of the array's chunk and block shapes; images
    /// padded by pad_row) as make_chunk does, on up to `threads` threads (within the chunk when
    /// the row has one), into into(k) when given (see ChunkSource::make_chunk_of). Reads
    /// nothing a commit changes.
    void encode_images(const Grid& row,
                       const std::uint8_t* images,
                       int threads,
                       const ImageSink& sink,
                       const std::function<MutableByteSpan(std::size_t)>& into = {}) const;
    /// Encodes the row `images` holds (chunk images of `row`, row_grid(), padded by pad_row)
    /// into `out`, whose buffers are reused: each chunk encoded once, nothing decoded, nothing
    /// staged; on `threads` threads (0: the array's; within the chunk when the row has one).
    /// Reads nothing a commit changes: may run while another thread stages and commits the
    /// rows before it.
    void encode_row(const Grid& row,
                    const std::uint8_t* images,
                    EncodedRow& out,
                    int threads = 0) const;
    /// Stages the chunks of `row` (encode_row) in the frame, appending what Frame::stage says
    /// to `staged`, for the next commit_rows to name.
    void stage_row(const EncodedRow& row, std::vector<storage::StagedChunk>& staged);
    /// Gives axis `axis` the length `length` (> first), and the chunk rows from `first` (a
    /// multiple of the chunk's extent: the array's last row or the one after it) to the end the
    /// chunks `staged` holds (row after row, as stage_row staged them); every other chunk kept;
    /// one commit.
    void commit_rows(int axis,
                     std::int64_t first,
                     std::int64_t length,
                     const std::vector<storage::StagedChunk>& staged);

    // ---- array_core.cpp ----
    void update_metalayer(const std::string& name, ByteSpan content);
    void set_vlmeta(const std::string& name, ByteSpan content);
    /// Sets every (name, content) in one commit.
    void set_vlmeta(const std::vector<std::pair<std::string, std::vector<std::uint8_t>>>& all);
    bool delete_vlmeta(const std::string& name);
    void sync();
    void compact(const storage::CompactProgress& progress = {});

private:
    struct ChunkPlan;

    // What read() and write() do for each kind of plan (read.cpp, write.cpp); boxes are checked
    // by the caller, index lists and points here.
    void read_box(const Box& box,
                  const ElementPart& part,
                  std::uint8_t* out,
                  const std::int64_t* out_strides,
                  CacheUse use) const;
    /// Into out in C order.
    void read_lists(const std::vector<std::vector<std::int64_t>>& lists,
                    const ElementPart& part,
                    std::uint8_t* out) const;
    void read_points(const std::int64_t* coords,
                     std::size_t n,
                     const ElementPart& part,
                     std::uint8_t* out) const;
    void write_box(const Box& box,
                   const ElementPart& part,
                   const std::uint8_t* src,
                   const std::int64_t* src_strides);
    /// From src in C order, or one element for all (`scalar`).
    void write_lists(const std::vector<std::vector<std::int64_t>>& lists,
                     const ElementPart& part,
                     const std::uint8_t* src,
                     bool scalar);
    void write_points(const std::int64_t* coords,
                      std::size_t n,
                      const ElementPart& part,
                      const std::uint8_t* src,
                      bool scalar);
    /// read_box for large reads with rows contiguous in the destination (read.cpp).
    void read_row_groups(const BoxPlan& plan,
                         const ChunkLoads& chunks,
                         std::uint8_t* out0,
                         const std::int64_t* walk,
                         const CachePolicy& policy) const;
    /// Rebuilds chunks ids[k] in parallel: each decoded whole, patched by patch(k, buffer) (the
    /// padded block layout), staged; then one commit.
    void patch_chunks(const std::vector<std::int64_t>& ids,
                      const std::function<void(std::size_t, std::uint8_t*)>& patch);
    /// Commits staged chunks at positions ids (under the exclusive lock) and drops their blocks
    /// from the cache.
    /// Applies an edit that changes the array's data, with what that does to data derived from
    /// it in the same commit (commit_hooks.hpp: python-blosc2's query indexes marked stale).
    void apply_data_edit(storage::FrameEdit& e);
    void commit_staged(const std::vector<std::int64_t>& ids,
                       const std::vector<storage::StagedChunk>& staged);
    /// \throws UsageError naming `op` when the array is open read-only.
    void require_open_for_writing(const std::string& op) const;
    void require_writable(const char* op) const;
    /// Where point i of a point list (coords[i * ndim ...]) lies.
    /// \throws UsageError naming the point when it is out of range
    Grid::Location locate_point(const std::int64_t* coords, std::size_t i) const;
    void require_chunks(const std::vector<std::int64_t>& ids) const;
    /// Replaces `removed` slices at `pos` along `axis` by `inserted` slices of data.
    void splice(int axis,
                std::int64_t pos,
                std::int64_t removed,
                std::int64_t inserted,
                const std::uint8_t* data);
    /// \throws UsageError when `ng` has more chunks than OpenOptions::max_chunks lets an open
    /// read (reshape.cpp).
    void require_chunk_count(const Grid& ng) const;
    /// Gives the array the grid `ng`, each of its chunks planned by plan_of(chunk coordinates),
    /// in one commit with the new shape (reshape.cpp).
    void rebuild(const Grid& ng,
                 const std::function<ChunkPlan(const std::int64_t*)>& plan_of,
                 const std::uint8_t* user,
                 int axis,
                 std::int64_t user_extent);

    // Declared first, so destroyed last: the directory goes after the frame's mappings.
    std::shared_ptr<void> scratch_;
    // The chunks (and frame, grid, cache). A pointer so that ArrayCore's members can be laid out
    // before it is built: the grid comes from the metalayer, which comes from the frame.
    std::unique_ptr<ChunkSource> source_;
    OpenOptions options_;
    std::optional<FieldTarget> field_target_;
    std::shared_ptr<const HeldAttributes> held_;
    /// write() of a field view: the plan in the parent's terms, written there.
    void write_to_parent(const SelectionPlan& plan,
                         const std::uint8_t* src,
                         const std::int64_t* src_strides);
    format::B2ndMeta meta_;
    DType dtype_;
    std::string dtype_note_;
    int nthreads_ = 1;
    mutable FairSharedMutex mutex_;  // readers shared; commits exclusive
    std::mutex writer_mutex_;        // one writer at a time (taken before mutex_)
};

}  // namespace b2nd::detail
