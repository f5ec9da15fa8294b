// Internal: how a strided box of an array falls onto its chunks and blocks (DESIGN.md section 4).
//
// Each dimension is planned on its own into segments: runs of selected elements that lie in one
// block of one chunk. A box then touches the chunks whose segments it combines, and inside each
// such chunk the blocks that combine one segment per dimension. Reads and writes walk this plan:
// a read decodes each touched block once and copies its part out; a write copies the caller's
// elements into the blocks of each chunk it rebuilds.
//
// The walk over the caller's buffer goes in ascending array order: dimensions with a negative
// step are walked backwards through the buffer (walk_strides).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <b2nd/grid.hpp>

#include "plan.hpp"
#include "strided_copy.hpp"

namespace b2nd::detail {

/// Along one dimension: a run of selected elements (ascending positions first + j * step for j
/// in [j0, j0 + n)) that lie in one block of one chunk; `pos` is the first one's place in the
/// block.
struct Segment {
    std::int64_t chunk, block, j0, n, pos;
};

/// One dimension of a box, in ascending order, cut into segments.
struct DimPlan {
    std::int64_t first = 0, step = 1, count = 0;
    bool flip = false;              // the box walks this dimension backwards
    std::vector<Segment> segs;      // ascending
    std::vector<std::size_t> runs;  // segs of chunk r: [runs[r], runs[r + 1])
    std::size_t nruns() const noexcept { return runs.size() - 1; }
};

/// A chunk the box touches: its index, the run of segments it uses in each dimension, and how
/// many of its blocks the box touches.
struct ChunkTask {
    std::int64_t ci = 0;
    std::int64_t coords[kMaxNdim] = {};
    std::size_t run[kMaxNdim] = {};
    std::int64_t nblocks = 1;
    std::int64_t first_block_task = 0;  // block tasks of the whole plan are numbered in order
};

/// The part of one touched block that a box selects.
struct BlockPart {
    std::int64_t block = 0;     ///< linear block index in the chunk
    std::int64_t in_block = 0;  ///< element offset of the first selected element in the block
    std::int64_t in_walk = 0;   ///< byte offset of that element from the caller's walk origin
    /// extent per dimension; src strides walk the block, dst strides the caller's buffer (bytes)
    StridedBox box;
    /// The whole block, landing contiguously in the caller's buffer.
    bool whole = false;
};

class BoxPlan {
public:
    /// `box` must be a valid, non-empty box of g.
    BoxPlan(const Grid& g, const Box& box);

    const std::vector<ChunkTask>& chunks() const noexcept { return chunks_; }
    /// Touched blocks over all touched chunks.
    std::int64_t nblock_tasks() const noexcept { return nblock_tasks_; }
    /// The chunk task block task `task` belongs to.
    std::size_t chunk_of_block_task(std::int64_t task) const;
    /// Whether the box touches no block of chunk task ct but block 0.
    bool only_block0(const ChunkTask& ct) const;
    /// Whether the box covers every element of chunk task ct with step 1.
    bool covers(const ChunkTask& ct) const;

    /// Sets out[d] to the byte strides of the plan's ascending walk over a caller's buffer of the
    /// box's elements (`strides`: the buffer's byte strides, null for C order) and returns the
    /// byte offset of the walk's first element in the buffer.
    std::int64_t walk_strides(const std::int64_t* strides, std::int64_t* out) const;
    /// Byte offset, from the walk origin, of the first element of chunk task ct.
    std::int64_t first_in_walk(const ChunkTask& ct, const std::int64_t* walk) const;
    /// Block `local` (0 .. ct.nblocks - 1) of chunk task ct, for a caller's walk `walk`.
    BlockPart part(const ChunkTask& ct, std::int64_t local, const std::int64_t* walk) const;
    /// How many of chunk task ct's blocks lie side by side along the last dimension: blocks
    /// local = g * n .. g * n + n - 1 form row group g (the last dimension varies fastest).
    std::int64_t blocks_along_last(const ChunkTask& ct) const;

private:
    const Grid& grid_;
    std::vector<DimPlan> dims_;
    std::vector<ChunkTask> chunks_;
    std::int64_t nblock_tasks_ = 0;
    std::int64_t block_stride_[kMaxNdim] = {};  // block strides in elements (C order)
};

/// An orthogonal selection (one index list per dimension, NumPy's `oindex`) planned over a grid.
/// Each dimension's entries are put in array order (ties in list order) and cut into runs that
/// lie in one chunk, or in one block of one chunk (`by_block`); every combination of one run per
/// dimension is a unit of work: one chunk to rebuild, or one block to decode.
class OrthoPlan {
public:
    /// \throws UsageError for a list count other than ndim, an index out of range (naming the
    /// axis and the index), or a selection whose size in bytes does not fit 64 bits
    OrthoPlan(const std::vector<std::vector<std::int64_t>>& lists,
              const Grid& g,
              const std::string& where,
              bool by_block);

    /// Elements selected (the product of the lists' lengths), checked as the constructor does;
    /// without placing the entries.
    static std::uint64_t count(const std::vector<std::vector<std::int64_t>>& lists,
                               const Grid& g,
                               const std::string& where);

    std::uint64_t size() const noexcept { return size_; }
    /// Units of work (0 when the selection is empty).
    std::int64_t units() const noexcept { return units_; }
    /// Unit u's chunk (linear index) and, with by_block, its block in the chunk.
    std::int64_t chunk_of(std::int64_t u) const;
    std::int64_t block_of(std::int64_t u) const;
    /// The largest in-block offset (pos) of unit u's elements: a decoder that can stop early
    /// needs the block's bytes up to it only.
    std::int64_t last_pos(std::int64_t u) const {
        const Run* rs[kMaxNdim];
        runs_of(u, rs);
        std::int64_t pos = 0;
        for (std::size_t d = 0; d < axes_.size(); ++d) {
            pos += axes_[d][rs[d]->second - 1].pos * block_stride_[d];  // runs ascend
        }
        return pos;
    }
    /// Calls f(block, pos, out) for every selected element of unit u, in list order along each
    /// dimension (the last of repeated indices comes last): `block` is the element's block in
    /// its chunk, `pos` its offset in the block, `out` its C-order index in the result.
    template <class F>
    void for_each(std::int64_t u, F&& f) const {
        const int nd = static_cast<int>(axes_.size());
        const Run* rs[kMaxNdim];
        runs_of(u, rs);
        std::size_t k[kMaxNdim];
        for (int d = 0; d < nd; ++d) {
            k[d] = rs[d]->first;
        }
        for (;;) {
            std::int64_t block = 0, pos = 0, out = 0;
            for (int d = 0; d < nd; ++d) {
                const Entry& e = axes_[static_cast<std::size_t>(d)][k[d]];
                block = block * blocks_in_[d] + e.block;
                pos += e.pos * block_stride_[d];
                out += e.out * out_stride_[d];
            }
            f(block, pos, out);
            int d = nd - 1;
            for (; d >= 0 && ++k[d] == rs[d]->second; --d) {
                k[d] = rs[d]->first;
            }
            if (d < 0) {
                return;
            }
        }
    }

private:
    struct Entry {
        std::int64_t chunk = 0, block = 0, pos = 0, out = 0;  // along one dimension
    };
    using Run = std::pair<std::size_t, std::size_t>;  // [first, end) entries
    void runs_of(std::int64_t u, const Run** rs) const;

    const Grid& grid_;
    std::vector<std::vector<Entry>> axes_;
    std::vector<std::vector<Run>> runs_;
    std::int64_t blocks_in_[kMaxNdim] = {};
    std::int64_t block_stride_[kMaxNdim] = {};  // elements, C order within a block
    std::int64_t out_stride_[kMaxNdim] = {};    // elements, C order over the lists
    std::uint64_t size_ = 0;
    std::int64_t units_ = 0;
};

/// Copies the caller's elements of chunk task ct (walked with `walk` from src0) into the padded
/// block layout of the chunk buffer `chunk`; with a partial `part`, the caller's elements are
/// that part of each element (walk counts in them) and only those bytes change.
void pack_chunk(const BoxPlan& plan,
                const ChunkTask& ct,
                const std::uint8_t* src0,
                const std::int64_t* walk,
                std::uint8_t* chunk,
                const Grid& g,
                const ElementPart& part = {});

}  // namespace b2nd::detail
