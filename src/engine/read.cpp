// Reads (DESIGN.md section 4): a box is planned into the blocks it touches; the touched chunks
// are loaded (and checked) first, then every touched block of the whole request is one task on
// the thread pool, which ChunkSource serves: filled (uniform chunks), copied from the map
// (memcpyed chunks), or decoded into the cache, a scratch buffer, or straight into the caller's
// buffer. Single elements come from the cache when their block is there; point lists decode each
// touched block once.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include <b2nd/error.hpp>

#include "../detail/memory.hpp"
#include "../detail/text.hpp"
#include "../detail/thread_pool.hpp"
#include "../select/box_plan.hpp"
#include "array_core.hpp"
#include "remote_reads.hpp"

namespace b2nd::detail {

std::pair<storage::StoredChunk, bool> ArrayCore::stored_chunk(std::int64_t ci) const {
    std::shared_lock<FairSharedMutex> lock(mutex_);
    require_chunks({ci});
    return source_->stored_checked(ci);
}

void ArrayCore::decode_chunk(std::int64_t ci, std::uint8_t* buf) const {
    std::shared_lock<FairSharedMutex> lock(mutex_);
    require_chunks({ci});
    source_->decode_chunk(ci, buf, 1);
}

/// The chunks a read touches, each loaded (header parsed, checked) once. Small reads load them
/// all up front, in parallel; large reads load each on first use, so that a chunk's bytes are
/// touched only when its blocks' turn comes, after the prefetcher has read them from the file.
class ChunkLoads {
public:
    ChunkLoads(const ChunkSource& src, const BoxPlan& plan, const CachePolicy& policy)
        : src_(src),
          plan_(plan),
          policy_(policy),
          chunks_(plan.chunks().size()),
          state_(std::make_unique<std::atomic<std::uint8_t>[]>(plan.chunks().size())) {
        if (src.frame().remote()) {
            wants_ = touched_blocks(src.grid(), plan);  // fetch those blocks only
        }
    }
    const LoadedChunk& operator[](std::size_t t) const {
        // A thread that finds chunk t being loaded by another (a first use checks the chunk's
        // checksum: a pass over all its bytes) loads the next chunk meanwhile, instead of
        // waiting idle.
        if (state_[t].load(std::memory_order_acquire) == kLoading) {
            const std::size_t n = chunks_.size();
            for (std::size_t k = t + 1; k < n && k <= t + 2; ++k) {
                if (state_[k].load(std::memory_order_relaxed) == kIdle) {
                    load(k);
                    break;
                }
            }
        }
        load(t);
        return chunks_[t];
    }
    /// Reads the chunks' bytes ahead of their first use, in order.
    void read_ahead() {
        std::vector<std::int64_t> ids(plan_.chunks().size());
        for (std::size_t t = 0; t < ids.size(); ++t) {
            ids[t] = plan_.chunks()[t].ci;
        }
        if (!wants_.empty()) {
            remote_ahead_ = std::make_unique<RemoteAhead>(src_, wants_, kRemoteAhead);
            return;
        }
        read_ahead_ = src_.frame().prefetch(ids);
    }
    void load_all(int nthreads) const {
        if (!wants_.empty()) {
            src_.fetch(wants_);  // two batches of requests for the whole read
        }
        parallel_for(chunks_.size(), nthreads, [&](std::size_t t) { (void)(*this)[t]; });
    }

private:
    /// Loads chunk t once: the first thread loads it, others wait for it. A load that throws
    /// (a corrupt chunk) leaves it idle, so that the next thread that needs it throws too; no
    /// std::call_once, whose exceptional exit hangs later callers under ThreadSanitizer.
    void load(std::size_t t) const {
        for (;;) {
            std::uint8_t s = state_[t].load(std::memory_order_acquire);
            if (s == kLoaded) {
                return;
            }
            if (s == kIdle && state_[t].compare_exchange_strong(s, kLoading)) {
                try {
                    read_ahead_.reached(t);
                    if (remote_ahead_) {
                        remote_ahead_->reached(t);
                    }
                    const ChunkTask& ct = plan_.chunks()[t];
                    const std::vector<std::int32_t>* blocks =
                        wants_.empty() || wants_[t].blocks.empty() ? nullptr : &wants_[t].blocks;
                    chunks_[t] = src_.load(ct.ci, !plan_.only_block0(ct), policy_, blocks);
                } catch (...) {
                    settle(t, kIdle);
                    throw;
                }
                settle(t, kLoaded);
                return;
            }
            std::unique_lock<std::mutex> lock(mutex_);
            loaded_.wait(lock, [&] { return state_[t].load() != kLoading; });
        }
    }
    void settle(std::size_t t, std::uint8_t to) const {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            state_[t].store(to, std::memory_order_release);
        }
        loaded_.notify_all();
    }

    const ChunkSource& src_;
    const BoxPlan& plan_;
    const CachePolicy& policy_;
    mutable std::vector<LoadedChunk> chunks_;
    static constexpr std::uint8_t kIdle = 0, kLoading = 1, kLoaded = 2;
    std::unique_ptr<std::atomic<std::uint8_t>[]> state_;  // per chunk: kIdle, kLoading, kLoaded
    mutable std::mutex mutex_;  // with loaded_: waiting for a chunk another loads
    mutable std::condition_variable loaded_;
    mutable storage::ReadAhead read_ahead_;
    std::vector<storage::ChunkBlocks> wants_;  // a remote frame: the blocks of each chunk
    std::unique_ptr<RemoteAhead> remote_ahead_;
    static constexpr std::size_t kRemoteAhead = 8;  // chunks fetched ahead of the readers
};

template <class F>
void ArrayCore::restarting(F&& read) const {
    try {
        read();
    } catch (const RemoteError& e) {
        if (!e.remote_changed()) {
            throw;
        }
        // Not a torn read: nothing of the old version is kept. The handle is const only to the
        // caller; the core itself is never const.
        const_cast<ArrayCore*>(this)->refresh();
        read();
    }
}

void ArrayCore::read(const SelectionPlan& plan,
                     std::uint8_t* out,
                     const std::int64_t* out_strides) const {
    restarting([&] {
        std::shared_lock<FairSharedMutex> lock(mutex_);
        read_unlocked(plan, out, out_strides, CacheUse::automatic);
    });
}

void ArrayCore::read_selection(const Selection& sel,
                               const std::function<void*(const Resolved&)>& destination) const {
    restarting([&] {
        std::shared_lock<FairSharedMutex> lock(mutex_);
        Resolved r = resolve(grid().shape(), sel);
        auto* out = static_cast<std::uint8_t*>(destination(r));
        read_unlocked(SelectionPlan::of(std::move(r)), out, nullptr, CacheUse::automatic);
    });
}

void ArrayCore::read_unlocked(const SelectionPlan& plan,
                              std::uint8_t* out,
                              const std::int64_t* out_strides,
                              CacheUse use) const {
    if (plan.kind() == SelectionPlan::Kind::box) {
        require_box(plan.box(), "read");
        read_box(plan.box(), plan.part(), out, out_strides, use);
        return;
    }
    // Index lists and points are read in C order; another layout is copied into from there.
    const std::int64_t eb = plan.element_bytes(grid().itemsize());
    const Shape shape = plan.shape();
    const std::vector<std::int64_t> c_order = c_order_strides(shape, eb);
    Scratch tmp;
    std::uint8_t* dst = out;
    const bool c_layout = layout_of(shape, out_strides, eb) == Layout::c_order;
    if (!c_layout) {
        dst = scratch_bytes(tmp,
                            static_cast<std::size_t>(plan.size() * static_cast<std::uint64_t>(eb)));
    }
    if (plan.kind() == SelectionPlan::Kind::lists) {
        read_lists(plan.lists(), plan.part(), dst);
    } else {
        read_points(plan.coords(), plan.npoints(), plan.part(), dst);
    }
    if (!c_layout && plan.size() > 0) {
        StridedBox b;
        b.ndim = static_cast<int>(shape.size());
        for (int d = 0; d < b.ndim; ++d) {
            const auto u = static_cast<std::size_t>(d);
            b.extent[d] = shape[u];
            b.src_stride[d] = c_order[u];
            b.dst_stride[d] = out_strides[d];
        }
        copy_strided(b, dst, out, eb);
    }
}

void ArrayCore::read_box(const Box& box,
                         const ElementPart& part,
                         std::uint8_t* out,
                         const std::int64_t* out_strides,
                         CacheUse use) const {
    if (box.size() == 0) {
        return;
    }
    const ChunkSource& src = *source_;
    const BoxPlan plan(src.grid(), box);
    const std::int64_t eb = part.whole() ? src.grid().itemsize() : part.width;
    std::vector<std::int64_t> c_order;
    if (out_strides == nullptr && !part.whole()) {
        c_order = c_order_strides(box.count, eb);
        out_strides = c_order.data();
    }
    std::int64_t walk[kMaxNdim];
    std::uint8_t* const out0 = out + plan.walk_strides(out_strides, walk);
    const CachePolicy policy = src.cache_policy(plan.nblock_tasks(), use);
    const bool stream =
        static_cast<std::uint64_t>(box.size()) * static_cast<std::uint64_t>(eb) >= kStreamingBytes;

    const std::vector<ChunkTask>& tasks = plan.chunks();
    ChunkLoads chunks(src, plan, policy);
    if (stream) {
        // A large read: the chunks' bytes are read from the file in the background, in the
        // order the blocks are decoded, while the first ones decode (rather than one fault, and
        // the kernel's read-around, at a time, with nothing else going on).
        chunks.read_ahead();
    } else {
        chunks.load_all(nthreads_);
    }
    const int nd = src.grid().ndim();
    if (stream && part.whole() && nd >= 2 && walk[nd - 1] == src.grid().itemsize()) {
        read_row_groups(plan, chunks, out0, walk, policy);
        return;
    }
    parallel_for(static_cast<std::size_t>(plan.nblock_tasks()), nthreads_, [&](std::size_t task) {
        const auto t = plan.chunk_of_block_task(static_cast<std::int64_t>(task));
        const ChunkTask& ct = tasks[t];
        const BlockPart bp =
            plan.part(ct, static_cast<std::int64_t>(task) - ct.first_block_task, walk);
        src.copy_block(chunks[t], bp.block, bp.box, bp.in_block, out0 + bp.in_walk, bp.whole,
                       policy, stream, part);
        if (stream) {
            stream_fence();
        }
    });
}

void ArrayCore::read_row_groups(const BoxPlan& plan,
                                const ChunkLoads& chunks,
                                std::uint8_t* out0,
                                const std::int64_t* walk,
                                const CachePolicy& policy) const {
    // A large read whose rows are contiguous in the destination: the blocks side by side along
    // the last dimension (a row group) are gathered in a staging buffer that stays in the cache,
    // then its long rows go to the destination with non-temporal stores. Copying each block's
    // short rows there directly costs a read of every destination line and, for a buffer not
    // aligned to cache lines, partial lines at both ends of every row.
    const ChunkSource& src = *source_;
    const std::vector<ChunkTask>& tasks = plan.chunks();
    const int nd = src.grid().ndim();
    const std::int64_t isz = src.grid().itemsize();
    std::vector<std::int64_t> first_group(tasks.size() + 1, 0);  // row groups, numbered in order
    for (std::size_t t = 0; t < tasks.size(); ++t) {
        first_group[t + 1] = first_group[t] + tasks[t].nblocks / plan.blocks_along_last(tasks[t]);
    }
    parallel_for(static_cast<std::size_t>(first_group.back()), nthreads_, [&](std::size_t g) {
        const auto it =
            std::upper_bound(first_group.begin(), first_group.end(), static_cast<std::int64_t>(g));
        const auto t = static_cast<std::size_t>(it - first_group.begin()) - 1;
        const ChunkTask& ct = tasks[t];
        const std::int64_t n = plan.blocks_along_last(ct);
        const std::int64_t first = (static_cast<std::int64_t>(g) - first_group[t]) * n;
        // The group's rows: the outer extents of its blocks (the same for all of them) and the
        // sum of their widths.
        std::vector<BlockPart> parts;
        parts.reserve(static_cast<std::size_t>(n));
        std::int64_t width = 0;
        for (std::int64_t l = 0; l < n; ++l) {
            parts.push_back(plan.part(ct, first + l, walk));
            width += parts.back().box.extent[nd - 1];
        }
        StridedBox rows = parts.front().box;  // outer extents; strides set below
        std::int64_t stage_stride[kMaxNdim];
        rows.extent[nd - 1] = width;
        c_strides(rows.extent, static_cast<std::size_t>(nd), isz, stage_stride);
        std::int64_t nrows_bytes = stage_stride[0] * rows.extent[0];
        // Leased: a block made by an origin may read other arrays on this thread meanwhile.
        thread_local LeasePool<Scratch> stages;
        const std::shared_ptr<Scratch> stage =
            lease_bytes(stages, static_cast<std::size_t>(nrows_bytes));
        std::uint8_t* st = stage->data();
        std::int64_t column = 0;
        for (BlockPart& bp : parts) {
            for (int d = 0; d < nd; ++d) {
                bp.box.dst_stride[d] = stage_stride[d];
            }
            src.copy_block(chunks[t], bp.block, bp.box, bp.in_block, st + column * isz, false,
                           policy);
            column += bp.box.extent[nd - 1];
        }
        for (int d = 0; d < nd; ++d) {
            rows.src_stride[d] = stage_stride[d];
            rows.dst_stride[d] = walk[d];
        }
        copy_strided(rows, st, out0 + parts.front().in_walk, isz, true);
        stream_fence();
        release_if_large(*stage);
    });
}

namespace {

/// The cached block the calling thread last read an element from. Loops over elements read
/// mostly from the block of the element before: while the block is still the cache's content for
/// its key (the cache's epoch has not moved), the next element comes straight from it, without a
/// lock, a lookup or a division.
struct ElementMemo {
    std::uint64_t cache = 0;  // BlockCache::id(); 0: empty
    std::uint64_t epoch = 0;
    int ndim = 0;
    std::int64_t itemsize = 0;
    std::int64_t lo[kMaxNdim] = {};      // the block's elements in the array: [lo, hi)
    std::int64_t hi[kMaxNdim] = {};      // (clipped to the array's shape)
    std::int64_t stride[kMaxNdim] = {};  // byte strides in the block
    BlockCache::Buffer block;
};

/// A few memos per thread, one per array (by cache identity), so that loops over the elements
/// of several arrays (a(i, j) + b(i, j)) keep one block of each.
constexpr std::size_t kElementMemos = 4;
thread_local ElementMemo tl_element[kElementMemos];

}  // namespace

void ArrayCore::read_element(const std::int64_t* idx, std::uint8_t* out) const {
    const ChunkSource& src = *source_;
    ElementMemo& m = tl_element[src.cache_id() % kElementMemos];
    if (m.cache == src.cache_id() && m.epoch == src.cache_epoch()) {
        std::int64_t off = 0;
        bool inside = true;
        for (int d = 0; d < m.ndim; ++d) {
            inside = inside && idx[d] >= m.lo[d] && idx[d] < m.hi[d];
            off += (idx[d] - m.lo[d]) * m.stride[d];
        }
        if (inside) {
            std::memcpy(out, m.block->data() + off, static_cast<std::size_t>(m.itemsize));
            return;
        }
    }
    std::shared_lock<FairSharedMutex> lock(mutex_);
    const Grid& g = grid();
    const int nd = g.ndim();
    for (int d = 0; d < nd; ++d) {
        if (idx[d] < 0 || idx[d] >= g.shape()[static_cast<std::size_t>(d)]) {
            throw UsageError(where() + ": index " + to_string(Shape(idx, idx + nd)) +
                             " is out of range for shape " + to_string(g.shape()));
        }
    }
    const Grid::Location loc = g.locate(idx);
    const std::uint64_t epoch = src.cache_epoch();  // before the lookup: see BlockCache::epoch
    BlockCache::Buffer block = src.cached_block(loc);
    const std::int64_t isz = g.itemsize();
    if (block && static_cast<std::size_t>((loc.offset + 1) * isz) <= block->size()) {
        std::memcpy(out, block->data() + loc.offset * isz, static_cast<std::size_t>(isz));
        // Remember the block for the next element, if all its elements in the array lie in
        // the buffer (a short last chunk of a plain frame may not hold a whole block).
        std::int64_t stride = isz, last = isz;
        for (int d = nd - 1; d >= 0; --d) {
            const auto u = static_cast<std::size_t>(d);
            const std::int64_t bs = g.block_shape()[u], cs = g.chunk_shape()[u];
            const std::int64_t chunk_end = idx[d] - idx[d] % cs + cs;  // blocks pad chunks
            m.lo[d] = idx[d] - idx[d] % cs % bs;
            m.hi[d] = std::min({m.lo[d] + bs, chunk_end, g.shape()[u]});
            m.stride[d] = stride;
            last += (m.hi[d] - 1 - m.lo[d]) * stride;
            stride *= bs;
        }
        m.cache = 0;
        m.block.reset();
        if (static_cast<std::size_t>(last) <= block->size()) {
            m.block = std::move(block);
            m.cache = src.cache_id();
            m.epoch = epoch;
            m.ndim = nd;
            m.itemsize = isz;
        }
        return;
    }
    const Box b = Box::region(Shape(idx, idx + nd), Shape(static_cast<std::size_t>(nd), 1));
    read_box(b, {}, out, nullptr, CacheUse::always);
}

Grid::Location ArrayCore::locate_point(const std::int64_t* coords, std::size_t i) const {
    const Grid& g = grid();
    const int nd = g.ndim();
    const std::int64_t* idx = coords + i * static_cast<std::size_t>(nd);
    for (int d = 0; d < nd; ++d) {
        if (idx[d] < 0 || idx[d] >= g.shape()[static_cast<std::size_t>(d)]) {
            throw UsageError(where() + ": point " + num(static_cast<std::int64_t>(i)) + " " +
                             to_string(Shape(idx, idx + nd)) + ": index " + num(idx[d]) +
                             " on axis " + num(d) + " is out of range for its size " +
                             num(g.shape()[static_cast<std::size_t>(d)]) + " (shape " +
                             to_string(g.shape()) + ")");
        }
    }
    return g.locate(idx);
}

namespace {

/// Loads chunks `ids` in parallel, each for reading `blocks` of it only: a remote frame fetches
/// those blocks of all of them first, in two batches of requests.
std::vector<LoadedChunk> load_chunks(const ChunkSource& src,
                                     const std::vector<std::int64_t>& ids,
                                     const std::vector<std::vector<std::int32_t>>& blocks,
                                     const CachePolicy& policy,
                                     int nthreads) {
    const bool remote = src.frame().remote();
    if (remote) {
        std::vector<storage::ChunkBlocks> wants(ids.size());
        for (std::size_t k = 0; k < ids.size(); ++k) {
            wants[k] = {ids[k], blocks[k]};
        }
        src.fetch(std::move(wants));
    }
    std::vector<LoadedChunk> chunks(ids.size());
    parallel_for(ids.size(), nthreads, [&](std::size_t k) {
        chunks[k] = src.load(ids[k], true, policy, remote ? &blocks[k] : nullptr);
    });
    return chunks;
}

}  // namespace

void ArrayCore::read_points(const std::int64_t* coords,
                            std::size_t n,
                            const ElementPart& part,
                            std::uint8_t* out) const {
    const ChunkSource& src = *source_;
    const Grid& g = src.grid();
    const std::int64_t isz = g.itemsize();
    const std::int64_t eb = part.whole() ? isz : part.width;
    struct Point {
        std::int64_t chunk, block, offset;
        std::size_t index;
    };
    std::vector<Point> pts(n);
    for (std::size_t i = 0; i < n; ++i) {
        const Grid::Location l = locate_point(coords, i);
        pts[i] = {l.chunk, l.block, l.offset, i};
    }
    // Points grouped by block: each block is decoded once, blocks in parallel.
    std::sort(pts.begin(), pts.end(), [](const Point& a, const Point& b) {
        return a.chunk != b.chunk ? a.chunk < b.chunk : a.block < b.block;
    });
    std::vector<std::size_t> groups;  // first point of each block
    std::vector<std::size_t> chunk_of_group;
    std::vector<std::int64_t> ids;
    for (std::size_t i = 0; i < n; ++i) {
        if (i == 0 || pts[i].chunk != pts[i - 1].chunk || pts[i].block != pts[i - 1].block) {
            if (ids.empty() || ids.back() != pts[i].chunk) {
                ids.push_back(pts[i].chunk);
            }
            groups.push_back(i);
            chunk_of_group.push_back(ids.size() - 1);
        }
    }
    groups.push_back(n);
    const CachePolicy policy =
        src.cache_policy(static_cast<std::int64_t>(groups.size() - 1), CacheUse::automatic);
    std::vector<std::vector<std::int32_t>> blocks(ids.size());
    for (std::size_t k = 0; k + 1 < groups.size(); ++k) {
        blocks[chunk_of_group[k]].push_back(static_cast<std::int32_t>(pts[groups[k]].block));
    }
    const std::vector<LoadedChunk> chunks = load_chunks(src, ids, blocks, policy, nthreads_);
    parallel_for(groups.size() - 1, nthreads_, [&](std::size_t k) {
        std::int64_t last = 0;  // the block's bytes up to its last point are enough
        for (std::size_t i = groups[k]; i < groups[k + 1]; ++i) {
            last = std::max(last, pts[i].offset);
        }
        const BlockView v = src.view_block(chunks[chunk_of_group[k]], pts[groups[k]].block, policy,
                                           static_cast<std::size_t>((last + 1) * isz));
        for (std::size_t i = groups[k]; i < groups[k + 1]; ++i) {
            std::memcpy(out + static_cast<std::int64_t>(pts[i].index) * eb,
                        v.at(pts[i].offset) + part.offset, static_cast<std::size_t>(eb));
        }
    });
}

void ArrayCore::read_lists(const std::vector<std::vector<std::int64_t>>& lists,
                           const ElementPart& part,
                           std::uint8_t* out) const {
    const ChunkSource& src = *source_;
    const Grid& g = src.grid();
    const std::int64_t isz = g.itemsize();
    const std::int64_t eb = part.whole() ? isz : part.width;
    const OrthoPlan plan(lists, g, where(), true);  // a unit per block
    const std::int64_t units = plan.units();
    // The touched chunks, each loaded once (in order of first use).
    std::vector<std::int64_t> ids;
    std::vector<std::size_t> chunk_of(static_cast<std::size_t>(units));
    {
        std::unordered_map<std::int64_t, std::size_t> seen;
        for (std::int64_t u = 0; u < units; ++u) {
            const auto it = seen.emplace(plan.chunk_of(u), ids.size()).first;
            if (it->second == ids.size()) {
                ids.push_back(it->first);
            }
            chunk_of[static_cast<std::size_t>(u)] = it->second;
        }
    }
    const CachePolicy policy = src.cache_policy(units, CacheUse::automatic);
    std::vector<std::vector<std::int32_t>> blocks(ids.size());
    for (std::int64_t u = 0; u < units; ++u) {
        blocks[chunk_of[static_cast<std::size_t>(u)]].push_back(
            static_cast<std::int32_t>(plan.block_of(u)));
    }
    const std::vector<LoadedChunk> chunks = load_chunks(src, ids, blocks, policy, nthreads_);
    parallel_for(static_cast<std::size_t>(units), nthreads_, [&](std::size_t u) {
        const auto unit = static_cast<std::int64_t>(u);
        const auto need = static_cast<std::size_t>((plan.last_pos(unit) + 1) * isz);
        const BlockView v = src.view_block(chunks[chunk_of[u]], plan.block_of(unit), policy, need);
        plan.for_each(unit, [&](std::int64_t, std::int64_t pos, std::int64_t at) {
            std::memcpy(out + at * eb, v.at(pos) + part.offset, static_cast<std::size_t>(eb));
        });
    });
}

}  // namespace b2nd::detail
