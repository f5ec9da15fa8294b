#include "box_plan.hpp"

#include <algorithm>
#include <utility>

#include <b2nd/error.hpp>
#include <b2nd/format/checked_math.hpp>

#include "../detail/text.hpp"

namespace b2nd::detail {

namespace {

DimPlan plan_dim(const Grid& g, int d, std::int64_t start, std::int64_t count, std::int64_t step) {
    DimPlan p;
    p.count = count;
    p.flip = step < 0;
    p.step = p.flip ? -step : step;
    p.first = p.flip ? start + (count - 1) * step : start;
    const std::int64_t c = g.chunk_shape()[static_cast<std::size_t>(d)];
    const std::int64_t b = g.block_shape()[static_cast<std::size_t>(d)];
    for (std::int64_t j = 0; j < count;) {
        const std::int64_t i = p.first + j * p.step;
        const std::int64_t ch = i / c;
        const std::int64_t in_chunk = i - ch * c;
        const std::int64_t bl = in_chunk / b;
        const std::int64_t end = ch * c + std::min((bl + 1) * b, c);
        const std::int64_t n = std::min((end - 1 - i) / p.step + 1, count - j);
        if (p.segs.empty() || p.segs.back().chunk != ch) {
            p.runs.push_back(p.segs.size());
        }
        p.segs.push_back({ch, bl, j, n, in_chunk - bl * b});
        j += n;
    }
    p.runs.push_back(p.segs.size());
    return p;
}

}  // namespace

BoxPlan::BoxPlan(const Grid& g, const Box& box) : grid_(g) {
    const int nd = g.ndim();
    c_strides(g.block_shape().data(), g.block_shape().size(), 1, block_stride_);
    dims_.reserve(static_cast<std::size_t>(nd));
    for (int d = 0; d < nd; ++d) {
        const auto u = static_cast<std::size_t>(d);
        dims_.push_back(plan_dim(g, d, box.start[u], box.count[u], box.step[u]));
    }
    std::int64_t ntouched = 1;
    for (const DimPlan& p : dims_) {
        ntouched *= static_cast<std::int64_t>(p.nruns());
    }
    chunks_.resize(static_cast<std::size_t>(ntouched));
    for (std::int64_t t = 0; t < ntouched; ++t) {
        ChunkTask& ct = chunks_[static_cast<std::size_t>(t)];
        std::int64_t rest = t;
        for (int d = nd - 1; d >= 0; --d) {
            const DimPlan& p = dims_[static_cast<std::size_t>(d)];
            const auto r = static_cast<std::size_t>(rest % static_cast<std::int64_t>(p.nruns()));
            rest /= static_cast<std::int64_t>(p.nruns());
            ct.run[d] = r;
            ct.coords[d] = p.segs[p.runs[r]].chunk;
            ct.nblocks *= static_cast<std::int64_t>(p.runs[r + 1] - p.runs[r]);
        }
        ct.ci = g.chunk_index(ct.coords);
        ct.first_block_task = nblock_tasks_;
        nblock_tasks_ += ct.nblocks;
    }
}

std::size_t BoxPlan::chunk_of_block_task(std::int64_t task) const {
    const auto it =
        std::upper_bound(chunks_.begin(), chunks_.end(), task,
                         [](std::int64_t v, const ChunkTask& c) { return v < c.first_block_task; });
    return static_cast<std::size_t>(it - chunks_.begin()) - 1;
}

bool BoxPlan::only_block0(const ChunkTask& ct) const {
    if (ct.nblocks != 1) {
        return false;
    }
    for (std::size_t d = 0; d < dims_.size(); ++d) {
        const DimPlan& p = dims_[d];
        if (p.segs[p.runs[ct.run[d]]].block != 0) {
            return false;
        }
    }
    return true;
}

bool BoxPlan::covers(const ChunkTask& ct) const {
    for (std::size_t d = 0; d < dims_.size(); ++d) {
        const DimPlan& p = dims_[d];
        std::int64_t covered = 0;
        for (std::size_t s = p.runs[ct.run[d]]; s < p.runs[ct.run[d] + 1]; ++s) {
            covered += p.segs[s].n;
        }
        if (p.step != 1 || covered != grid_.chunk_extent(static_cast<int>(d), ct.coords[d])) {
            return false;
        }
    }
    return true;
}

std::int64_t BoxPlan::walk_strides(const std::int64_t* strides, std::int64_t* out) const {
    std::int64_t base = 0;
    std::int64_t c_stride = grid_.itemsize();
    for (std::size_t d = dims_.size(); d-- > 0;) {
        const std::int64_t s = strides != nullptr ? strides[d] : c_stride;
        c_stride *= dims_[d].count;
        if (dims_[d].flip) {
            base += (dims_[d].count - 1) * s;
            out[d] = -s;
        } else {
            out[d] = s;
        }
    }
    return base;
}

std::int64_t BoxPlan::first_in_walk(const ChunkTask& ct, const std::int64_t* walk) const {
    std::int64_t off = 0;
    for (std::size_t d = 0; d < dims_.size(); ++d) {
        const DimPlan& p = dims_[d];
        off += p.segs[p.runs[ct.run[d]]].j0 * walk[d];
    }
    return off;
}

BlockPart BoxPlan::part(const ChunkTask& ct, std::int64_t local, const std::int64_t* walk) const {
    const int nd = grid_.ndim();
    const std::int64_t isz = grid_.itemsize();
    // The segment of each dimension: block `local` of the chunk task, C order over its runs.
    const Segment* seg[kMaxNdim];
    for (std::size_t d = dims_.size(); d-- > 0;) {
        const DimPlan& p = dims_[d];
        const auto len = static_cast<std::int64_t>(p.runs[ct.run[d] + 1] - p.runs[ct.run[d]]);
        seg[d] = &p.segs[p.runs[ct.run[d]] + static_cast<std::size_t>(local % len)];
        local /= len;
    }
    BlockPart bp;
    bp.box.ndim = nd;
    bp.whole = true;
    for (int d = 0; d < nd; ++d) {
        const auto u = static_cast<std::size_t>(d);
        const DimPlan& p = dims_[u];
        bp.block = bp.block * grid_.blocks_in(d) + seg[d]->block;
        bp.in_block += seg[d]->pos * block_stride_[d];
        bp.in_walk += seg[d]->j0 * walk[d];
        bp.box.extent[d] = seg[d]->n;
        bp.box.src_stride[d] = p.step * block_stride_[d] * isz;
        bp.box.dst_stride[d] = walk[d];
        const std::int64_t bs = grid_.block_shape()[u];
        bp.whole = bp.whole && seg[d]->n == bs &&
                   (bs == 1 || (p.step == 1 && walk[d] == block_stride_[d] * isz));
    }
    return bp;
}

std::int64_t BoxPlan::blocks_along_last(const ChunkTask& ct) const {
    if (dims_.empty()) {
        return 1;
    }
    const DimPlan& p = dims_.back();
    const std::size_t r = ct.run[dims_.size() - 1];
    return static_cast<std::int64_t>(p.runs[r + 1] - p.runs[r]);
}

void pack_chunk(const BoxPlan& plan,
                const ChunkTask& ct,
                const std::uint8_t* src0,
                const std::int64_t* walk,
                std::uint8_t* chunk,
                const Grid& g,
                const ElementPart& part) {
    const std::int64_t isz = g.itemsize();
    const std::int64_t eb = part.whole() ? isz : part.width;
    for (std::int64_t l = 0; l < ct.nblocks; ++l) {
        BlockPart bp = plan.part(ct, l, walk);
        // part() describes a read (block -> caller); a write goes the other way.
        std::swap(bp.box.src_stride, bp.box.dst_stride);
        copy_strided(bp.box, src0 + bp.in_walk,
                     chunk + bp.block * g.block_nbytes() + bp.in_block * isz + part.offset, eb);
    }
}

std::uint64_t OrthoPlan::count(const std::vector<std::vector<std::int64_t>>& lists,
                               const Grid& g,
                               const std::string& where) {
    const int nd = g.ndim();
    if (static_cast<int>(lists.size()) != nd) {
        throw UsageError(where + ": an orthogonal selection needs one index list per dimension (" +
                         num(nd) + "), not " + num(static_cast<std::int64_t>(lists.size())));
    }
    for (const auto& list : lists) {
        if (list.empty()) {
            return 0;
        }
    }
    std::uint64_t n = 1, bytes = 0;
    for (const auto& list : lists) {
        if (format::mul_overflows(n, static_cast<std::uint64_t>(list.size()), &n)) {
            n = 0;
            break;
        }
    }
    if (n == 0 || format::mul_overflows(n, static_cast<std::uint64_t>(g.itemsize()), &bytes) ||
        bytes > static_cast<std::uint64_t>(INT64_MAX)) {
        throw UsageError(where + ": an orthogonal selection of lists of lengths " + [&] {
            std::string s;
            for (const auto& list : lists) {
                s += (s.empty() ? "" : " x ") + num(static_cast<std::int64_t>(list.size()));
            }
            return s;
        }() + " is too large");
    }
    return n;
}

OrthoPlan::OrthoPlan(const std::vector<std::vector<std::int64_t>>& lists,
                     const Grid& g,
                     const std::string& where,
                     bool by_block)
    : grid_(g), size_(count(lists, g, where)) {
    const int nd = g.ndim();
    axes_.resize(lists.size());
    runs_.resize(lists.size());
    std::int64_t out = 1, block = 1;
    for (int d = nd - 1; d >= 0; --d) {
        const auto u = static_cast<std::size_t>(d);
        blocks_in_[d] = g.blocks_in(d);
        out_stride_[d] = out;
        block_stride_[d] = block;
        out *= static_cast<std::int64_t>(lists[u].size());
        block *= g.block_shape()[u];
    }
    units_ = size_ == 0 ? 0 : 1;
    for (std::size_t d = 0; d < lists.size(); ++d) {
        const std::int64_t extent = g.shape()[d], cs = g.chunk_shape()[d], bs = g.block_shape()[d];
        std::vector<std::pair<std::int64_t, std::int64_t>> at;  // (index, place in the list)
        at.reserve(lists[d].size());
        for (std::size_t k = 0; k < lists[d].size(); ++k) {
            const std::int64_t i = lists[d][k];
            if (i < -extent || i >= extent) {
                throw UsageError(where + ": index " + num(i) + " on axis " +
                                 num(static_cast<std::int64_t>(d)) +
                                 " is out of range for extent " + num(extent));
            }
            at.emplace_back(i < 0 ? i + extent : i, static_cast<std::int64_t>(k));
        }
        std::sort(at.begin(), at.end());
        auto& entries = axes_[d];
        auto& runs = runs_[d];
        entries.reserve(at.size());
        for (const auto& [i, k] : at) {
            const Entry e{i / cs, i % cs / bs, i % cs % bs, k};
            if (entries.empty() || entries.back().chunk != e.chunk ||
                (by_block && entries.back().block != e.block)) {
                runs.emplace_back(entries.size(), entries.size());
            }
            entries.push_back(e);
            runs.back().second = entries.size();
        }
        units_ *= static_cast<std::int64_t>(runs.size());
    }
}

void OrthoPlan::runs_of(std::int64_t u, const Run** rs) const {
    for (std::size_t d = runs_.size(); d-- > 0;) {
        const auto n = static_cast<std::int64_t>(runs_[d].size());
        rs[d] = &runs_[d][static_cast<std::size_t>(u % n)];
        u /= n;
    }
}

std::int64_t OrthoPlan::chunk_of(std::int64_t u) const {
    const Run* rs[kMaxNdim];
    runs_of(u, rs);
    std::int64_t coords[kMaxNdim];
    for (std::size_t d = 0; d < axes_.size(); ++d) {
        coords[d] = axes_[d][rs[d]->first].chunk;
    }
    return grid_.chunk_index(coords);
}

std::int64_t OrthoPlan::block_of(std::int64_t u) const {
    const Run* rs[kMaxNdim];
    runs_of(u, rs);
    std::int64_t block = 0;
    for (std::size_t d = 0; d < axes_.size(); ++d) {
        block = block * blocks_in_[d] + axes_[d][rs[d]->first].block;
    }
    return block;
}

}  // namespace b2nd::detail
