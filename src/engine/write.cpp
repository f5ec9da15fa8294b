// Writes (DESIGN.md section 5): each chunk a box touches is rebuilt in parallel, made into a chunk
// and staged in the frame by the thread that built it; one commit at the end. A chunk the box
// covers is gathered block by block as the encoder asks for each block (never whole: a block
// stays in the cache between gathering and encoding); others are decoded and patched whole, so
// memory stays at a chunk or two per thread.
// Readers go on meanwhile: they see the array as it was until the commit.
#include <algorithm>
#include <cstring>
#include <functional>

#include <b2nd/error.hpp>

#include "../detail/memory.hpp"
#include "../detail/text.hpp"
#include "../select/box_plan.hpp"
#include "../storage/ordered_staging.hpp"
#include "array_core.hpp"
#include "commit_hooks.hpp"

namespace b2nd::detail {

namespace {

/// Stages chunk task ct, which the box of `plan` covers, gathering each block from the caller's
/// elements (`src0`, walked with `walk`) as the encoder asks for it, on up to `threads` threads:
/// the chunk is never gathered whole. The padding of edge chunks repeats the chunk's first
/// element, so that a chunk whose valid elements are all equal is recognized as uniform. `ci`:
/// the chunk's index in the source's grid.
storage::StagedChunk stage_covered(const ChunkSource& source,
                                   const BoxPlan& plan,
                                   const ChunkTask& ct,
                                   const std::uint8_t* src0,
                                   const std::int64_t* walk,
                                   int threads,
                                   const ChunkSource::ChunkSink& sink,
                                   std::int64_t ci) {
    const Grid& g = source.grid();
    const std::int64_t isz = g.itemsize();
    // The box's part of each block of the chunk (blocks wholly in the padding have none).
    std::vector<BlockPart> parts(static_cast<std::size_t>(ct.nblocks));
    std::vector<std::int32_t> part_of(static_cast<std::size_t>(g.nblocks()), -1);
    std::vector<char> whole(static_cast<std::size_t>(ct.nblocks));
    for (std::int64_t l = 0; l < ct.nblocks; ++l) {
        BlockPart& bp = parts[static_cast<std::size_t>(l)];
        bp = plan.part(ct, l, walk);
        std::int64_t items = 1;
        for (int d = 0; d < bp.box.ndim; ++d) {
            items *= bp.box.extent[d];
        }
        whole[static_cast<std::size_t>(l)] = items == g.block_items() ? 1 : 0;
        // part() describes a read (block -> caller); a write goes the other way.
        std::swap(bp.box.src_stride, bp.box.dst_stride);
        part_of[static_cast<std::size_t>(bp.block)] = static_cast<std::int32_t>(l);
    }
    const std::uint8_t* first = src0 + plan.first_in_walk(ct, walk);
    const codec::BlockFill fill = [&](std::int32_t i, std::uint8_t* dest, std::size_t n) {
        const std::int32_t l = part_of[static_cast<std::size_t>(i)];
        const BlockPart* bp = l >= 0 ? &parts[static_cast<std::size_t>(l)] : nullptr;
        if (bp == nullptr || whole[static_cast<std::size_t>(l)] == 0) {
            fill_elements(dest, n, first, isz);
        }
        if (bp != nullptr) {
            gather_strided(bp->box, src0 + bp->in_walk, dest + bp->in_block * isz, isz);
        }
    };
    return source.make_chunk_by_blocks(fill, first, threads, ci, sink);
}

}  // namespace

void ArrayCore::write(const SelectionPlan& plan,
                      const std::uint8_t* src,
                      const std::int64_t* src_strides) {
    if (field_target_) {
        write_to_parent(plan, src, src_strides);
        return;
    }
    std::lock_guard<std::mutex> writer(writer_mutex_);
    require_writable("write");
    if (plan.kind() == SelectionPlan::Kind::box) {
        require_box(plan.box(), "write");
        write_box(plan.box(), plan.part(), src, src_strides);
        return;
    }
    // Index lists and points take their data in C order, or one element for all; other layouts
    // (broadcasting along some dimensions) are gathered into C order first.
    const std::int64_t eb = plan.element_bytes(grid().itemsize());
    const Shape shape = plan.shape();
    const std::vector<std::int64_t> c_order = c_order_strides(shape, eb);
    const Layout layout = layout_of(shape, src_strides, eb);
    const bool scalar = layout == Layout::one_element && plan.size() != 1;
    Scratch tmp;
    if (layout == Layout::strided && plan.size() > 0) {
        StridedBox b;
        b.ndim = static_cast<int>(shape.size());
        for (int d = 0; d < b.ndim; ++d) {
            const auto u = static_cast<std::size_t>(d);
            b.extent[d] = shape[u];
            b.src_stride[d] = src_strides[d];
            b.dst_stride[d] = c_order[u];
        }
        std::uint8_t* dense = scratch_bytes(
            tmp, static_cast<std::size_t>(plan.size() * static_cast<std::uint64_t>(eb)));
        copy_strided(b, src, dense, eb);
        src = dense;
    }
    if (plan.kind() == SelectionPlan::Kind::lists) {
        write_lists(plan.lists(), plan.part(), src, scalar);
    } else {
        write_points(plan.coords(), plan.npoints(), plan.part(), src, scalar);
    }
}

void ArrayCore::write_box(const Box& box,
                          const ElementPart& part,
                          const std::uint8_t* src,
                          const std::int64_t* src_strides) {
    if (box.size() == 0) {
        return;
    }
    ChunkSource& source = *source_;
    const Grid& g = source.grid();
    const BoxPlan plan(g, box);
    std::vector<std::int64_t> c_order;
    if (src_strides == nullptr && !part.whole()) {
        c_order = c_order_strides(box.count, part.width);
        src_strides = c_order.data();
    }
    std::int64_t walk[kMaxNdim];
    const std::uint8_t* const src0 = src + plan.walk_strides(src_strides, walk);
    const std::vector<ChunkTask>& tasks = plan.chunks();
    const int inner = tasks.size() == 1 ? nthreads_ : 1;
    std::vector<std::int64_t> ids(tasks.size());
    storage::detail::OrderedStaging order(source.frame(), tasks.size());
    order.run(nthreads_, [&](std::size_t k) {
        const ChunkTask& ct = tasks[k];
        ids[k] = ct.ci;
        const ChunkSource::ChunkSink sink = [&](ByteSpan c, const storage::detail::SealHint& h) {
            return order.stage(k, c, h);
        };
        if (part.whole() && plan.covers(ct)) {
            // Each block is gathered right before it is encoded, into a buffer that stays in the
            // cache: the chunk is never gathered whole (which costs a pass through memory).
            stage_covered(source, plan, ct, src0, walk, inner, sink, ct.ci);
            return;
        }
        thread_local Scratch buf;
        buf.resize(static_cast<std::size_t>(g.chunk_nbytes()));
        source.decode_chunk(ct.ci, buf.data(), inner);
        pack_chunk(plan, ct, src0, walk, buf.data(), g, part);
        source.make_chunk(buf.data(), inner, ct.ci, sink);
        release_if_large(buf);
    });
    commit_staged(ids, order.take());
}

void ArrayCore::patch_chunks(const std::vector<std::int64_t>& ids,
                             const std::function<void(std::size_t, std::uint8_t*)>& patch) {
    ChunkSource& source = *source_;
    storage::detail::OrderedStaging order(source.frame(), ids.size());
    const int inner = ids.size() == 1 ? nthreads_ : 1;
    order.run(nthreads_, [&](std::size_t k) {
        thread_local Scratch buf;
        buf.resize(static_cast<std::size_t>(source.grid().chunk_nbytes()));
        source.decode_chunk(ids[k], buf.data(), inner);
        patch(k, buf.data());
        source.make_chunk(
            buf.data(), inner, ids[k],
            [&](ByteSpan c, const storage::detail::SealHint& h) { return order.stage(k, c, h); });
        release_if_large(buf);
    });
    commit_staged(ids, order.take());
}

void ArrayCore::write_points(const std::int64_t* coords,
                             std::size_t n,
                             const ElementPart& part,
                             const std::uint8_t* src,
                             bool scalar) {
    const Grid& g = grid();
    const std::int64_t isz = g.itemsize();
    const std::int64_t eb = part.whole() ? isz : part.width;
    struct Point {
        std::int64_t chunk, at;  // element offset in the chunk's padded block layout
        std::size_t index;
    };
    std::vector<Point> pts(n);
    for (std::size_t i = 0; i < n; ++i) {
        const Grid::Location l = locate_point(coords, i);
        pts[i] = {l.chunk, l.block * g.block_items() + l.offset, i};
    }
    // Grouped by chunk, in the caller's order within each (the last of repeated points wins).
    std::stable_sort(pts.begin(), pts.end(),
                     [](const Point& a, const Point& b) { return a.chunk < b.chunk; });
    std::vector<std::size_t> first;  // first point of each chunk
    std::vector<std::int64_t> ids;
    for (std::size_t i = 0; i < n; ++i) {
        if (i == 0 || pts[i].chunk != pts[i - 1].chunk) {
            first.push_back(i);
            ids.push_back(pts[i].chunk);
        }
    }
    first.push_back(n);
    patch_chunks(ids, [&](std::size_t k, std::uint8_t* buf) {
        for (std::size_t i = first[k]; i < first[k + 1]; ++i) {
            const auto from = static_cast<std::int64_t>(scalar ? 0 : pts[i].index);
            std::memcpy(buf + pts[i].at * isz + part.offset, src + from * eb,
                        static_cast<std::size_t>(eb));
        }
    });
}

void ArrayCore::write_lists(const std::vector<std::vector<std::int64_t>>& lists,
                            const ElementPart& part,
                            const std::uint8_t* src,
                            bool scalar) {
    const Grid& g = grid();
    const std::int64_t isz = g.itemsize();
    const std::int64_t eb = part.whole() ? isz : part.width;
    const OrthoPlan plan(lists, g, where(), false);  // a unit per chunk
    std::vector<std::int64_t> ids(static_cast<std::size_t>(plan.units()));
    for (std::size_t u = 0; u < ids.size(); ++u) {
        ids[u] = plan.chunk_of(static_cast<std::int64_t>(u));
    }
    patch_chunks(ids, [&](std::size_t u, std::uint8_t* buf) {
        plan.for_each(static_cast<std::int64_t>(u),
                      [&](std::int64_t block, std::int64_t pos, std::int64_t at) {
                          std::memcpy(buf + (block * g.block_items() + pos) * isz + part.offset,
                                      src + (scalar ? 0 : at * eb), static_cast<std::size_t>(eb));
                      });
    });
}

void ArrayCore::apply_data_edit(storage::FrameEdit& e) {
    storage::Frame& f = source_->frame();
    const std::function<void()> after = derived_data_changes(f, e, where());
    f.apply(e);
    if (after) {
        after();
    }
}

void ArrayCore::commit_staged(const std::vector<std::int64_t>& ids,
                              const std::vector<storage::StagedChunk>& staged) {
    if (ids.empty()) {
        return;  // nothing changed: no new index to write
    }
    std::unique_lock<FairSharedMutex> lock(mutex_);
    storage::FrameEdit e = source_->frame().keep_all();
    for (std::size_t k = 0; k < ids.size(); ++k) {
        e.replace(ids[k], staged[k]);
    }
    apply_data_edit(e);
    for (std::int64_t ci : ids) {
        source_->forget(ci);
    }
}

}  // namespace b2nd::detail
