// Writes (DESIGN.md section 5): each chunk a box touches is rebuilt in parallel (fresh when the
// box covers it, else decoded and patched), made into a chunk and staged in the frame by the
// thread that built it, so memory stays at a chunk or two per thread; one commit at the end.
// Readers go on meanwhile: they see the array as it was until the commit.
#include <b2nd/error.hpp>

#include "../detail/memory.hpp"
#include "../detail/thread_pool.hpp"
#include "array_core.hpp"
#include "box_plan.hpp"

namespace b2nd::detail {

void ArrayCore::write(const Box& box, const std::uint8_t* src, const std::int64_t* src_strides) {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    require_writable("write");
    require_box(box, "write");
    if (box.size() == 0) {
        return;
    }
    ChunkSource& source = *source_;
    const Grid& g = source.grid();
    const BoxPlan plan(g, box);
    std::int64_t walk[kMaxNdim];
    const std::uint8_t* const src0 = src + plan.walk_strides(src_strides, walk);
    const std::vector<ChunkTask>& tasks = plan.chunks();
    const int inner = tasks.size() == 1 ? nthreads_ : 1;
    std::vector<storage::StagedChunk> staged(tasks.size());
    std::vector<std::int64_t> ids(tasks.size());
    parallel_for(tasks.size(), nthreads_, [&](std::size_t k) {
        const ChunkTask& ct = tasks[k];
        thread_local Scratch buf;
        buf.resize(static_cast<std::size_t>(g.chunk_nbytes()));
        if (plan.covers(ct)) {
            // The padding of edge chunks repeats the first element, so that a chunk whose valid
            // elements are all equal is recognized as uniform. Without padding, packing below
            // writes every byte.
            if (g.chunk_padded(ct.ci)) {
                fill_elements(buf.data(), buf.size(), src0 + plan.first_in_walk(ct, walk),
                              g.itemsize());
            }
        } else {
            source.decode_chunk(ct.ci, buf.data(), inner);
        }
        pack_chunk(plan, ct, src0, walk, buf.data(), g);
        staged[k] = source.stage_chunk(buf.data(), inner);
        ids[k] = ct.ci;
        release_if_large(buf);
    });
    commit_staged(ids, staged);
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
    source_->frame().apply(e);
    for (std::int64_t ci : ids) {
        source_->forget(ci);
    }
}

}  // namespace b2nd::detail
