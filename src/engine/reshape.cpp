// Reshapes: resize, insert and remove along an axis (append is an insert at the end). Each chunk
// of the new grid is planned as an old chunk kept as it is (whole chunks that only move are not
// re-encoded), a zero chunk, or content rebuilt from pieces of the old array and of the caller's
// data; everything, with the new shape in the metalayer, is one commit.
#include <algorithm>

#include <b2nd/error.hpp>

#include "../detail/memory.hpp"
#include "../detail/text.hpp"
#include "../select/box_plan.hpp"
#include "../storage/ordered_staging.hpp"
#include "array_core.hpp"

namespace b2nd::detail {

namespace {

/// A region of the new array whose content comes from the old array or the caller's data.
struct Piece {
    Shape start, count;  // region of the new array
    bool from_user = false;
    std::int64_t delta = 0;  // along the axis: old (or user) coordinate = new coordinate + delta
};

}  // namespace

/// What one chunk of the new grid holds.
struct ArrayCore::ChunkPlan {
    std::int64_t keep = -1;  // an old chunk kept as it is
    bool zeros = false;
    std::vector<Piece> pieces;  // else: built from these over zeros
};

void ArrayCore::require_chunk_count(const Grid& ng) const {
    if (ng.nchunks() > options_.max_chunks) {
        // The file would hold more chunks than an open with these options accepts.
        throw UsageError(where() + ": the shape " + to_string(ng.shape()) + " in chunks of " +
                         to_string(ng.chunk_shape()) + " makes " + num(ng.nchunks()) +
                         " chunks, more than OpenOptions::max_chunks (" + num(options_.max_chunks) +
                         ") lets an open read");
    }
}

void ArrayCore::rebuild(const Grid& ng,
                        const std::function<ChunkPlan(const std::int64_t*)>& plan_of,
                        const std::uint8_t* user,
                        int axis,
                        std::int64_t user_extent) {
    require_chunk_count(ng);
    ChunkSource& source = *source_;
    const int nd = ng.ndim();
    const std::int64_t isz = ng.itemsize();
    std::vector<ChunkPlan> plans(static_cast<std::size_t>(ng.nchunks()));
    std::vector<std::size_t> computed;  // chunks built from pieces, in chunk order
    std::int64_t c[kMaxNdim];
    for (std::size_t k = 0; k < plans.size(); ++k) {
        ng.chunk_coords(static_cast<std::int64_t>(k), c);
        plans[k] = plan_of(c);
        if (plans[k].keep < 0 && !plans[k].zeros) {
            computed.push_back(k);
        }
    }
    // The caller's data has the new shape with its own extent along `axis`: C-order strides.
    Shape user_shape = ng.shape();
    if (user != nullptr) {
        user_shape[static_cast<std::size_t>(axis)] = user_extent;
    }
    std::int64_t user_stride[kMaxNdim];
    c_strides(user_shape.data(), user_shape.size(), isz, user_stride);

    storage::detail::OrderedStaging order(source.frame(), computed.size());
    order.run(nthreads_, [&](std::size_t i) {
        thread_local Scratch buf;
        buf.assign(static_cast<std::size_t>(ng.chunk_nbytes()), 0);
        Scratch old;
        for (const Piece& p : plans[computed[i]].pieces) {
            const std::uint8_t* src = user;
            std::int64_t stride[kMaxNdim];
            if (p.from_user) {
                for (int d = 0; d < nd; ++d) {
                    const auto u = static_cast<std::size_t>(d);
                    src += (p.start[u] + (d == axis ? p.delta : 0)) * user_stride[d];
                    stride[d] = user_stride[d];
                }
            } else {
                Box ob = Box::region(p.start, p.count);
                if (p.delta != 0) {
                    ob.start[static_cast<std::size_t>(axis)] += p.delta;
                }
                old.resize(static_cast<std::size_t>(ob.size() * isz));
                read_box(ob, {}, old.data(), nullptr, CacheUse::never);  // replaced next
                src = old.data();
                c_strides(p.count.data(), p.count.size(), isz, stride);
            }
            // The piece lies in this chunk of the new grid: patch it in, block by block.
            const BoxPlan plan(ng, Box::region(p.start, p.count));
            std::int64_t walk[kMaxNdim];
            const std::uint8_t* src0 = src + plan.walk_strides(stride, walk);
            pack_chunk(plan, plan.chunks().front(), src0, walk, buf.data(), ng);
        }
        // The same chunk and block shapes as now.
        source.make_chunk(buf.data(), 1, -1,
                          [&](ByteSpan made, const storage::detail::SealHint& hint) {
                              return order.stage(i, made, hint);
                          });
        release_if_large(buf);
    });

    const std::vector<storage::StagedChunk> staged = order.take();
    const std::vector<std::uint8_t> zeros = source.zeros_chunk(ng);
    storage::FrameEdit e;
    std::size_t next_staged = 0;
    for (const ChunkPlan& p : plans) {
        if (p.keep >= 0) {
            e.keep(p.keep);
        } else if (p.zeros) {
            e.add_new(zeros);
        } else {
            e.add_staged(staged[next_staged++]);
        }
    }
    format::B2ndMeta meta = meta_;
    meta.shape = ng.shape();
    e.set_metalayer(meta_.has_dtype ? "b2nd" : "caterva", format::write_b2nd_meta(meta));
    std::unique_lock<FairSharedMutex> lock(mutex_);
    apply_data_edit(e);
    source.set_grid(ng);
    meta_ = std::move(meta);
}

void ArrayCore::resize(const Shape& shape) {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    require_writable("resize");
    const Grid& og = grid();
    if (shape.size() != og.shape().size()) {
        throw UsageError(where() + ": resize to " + to_string(shape) +
                         " changes the number of dimensions of " + to_string(og.shape()));
    }
    if (shape == og.shape()) {
        return;
    }
    const std::string why = Grid::check(shape, og.chunk_shape(), og.block_shape(), og.itemsize());
    if (!why.empty()) {
        throw UsageError(where() + ": cannot resize to " + to_string(shape) + ": " + why);
    }
    const Grid ng(shape, og.chunk_shape(), og.block_shape(), og.itemsize());
    const int nd = og.ndim();
    rebuild(
        ng,
        [&](const std::int64_t* c) {
            ChunkPlan cp;
            bool exposes = false;
            for (int d = 0; d < nd; ++d) {
                const auto u = static_cast<std::size_t>(d);
                if (c[d] >= og.chunks_in(d)) {
                    cp.zeros = true;
                    return cp;
                }
                exposes = exposes || (shape[u] > og.shape()[u] && c[d] == og.chunks_in(d) - 1 &&
                                      og.shape()[u] % og.chunk_shape()[u] != 0);
            }
            if (!exposes) {
                cp.keep = og.chunk_index(c);
                return cp;
            }
            // An old edge chunk whose padding becomes visible: keep its data, zero the rest.
            Piece p;
            for (int d = 0; d < nd; ++d) {
                const auto u = static_cast<std::size_t>(d);
                const std::int64_t a = c[d] * og.chunk_shape()[u];
                p.start.push_back(a);
                p.count.push_back(std::min({og.chunk_shape()[u], og.shape()[u] - a, shape[u] - a}));
            }
            cp.pieces.push_back(std::move(p));
            return cp;
        },
        nullptr, 0, 0);
}

void ArrayCore::insert(int axis, std::int64_t pos, std::int64_t n, const std::uint8_t* data) {
    splice(axis, pos, 0, n, data);
}

void ArrayCore::remove(int axis, std::int64_t pos, std::int64_t n) {
    splice(axis, pos, n, 0, nullptr);
}

void ArrayCore::splice(int axis,
                       std::int64_t pos,
                       std::int64_t removed,
                       std::int64_t inserted,
                       const std::uint8_t* data) {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    const char* op = inserted > 0 ? "insert" : "remove";
    require_writable(op);
    const Grid& og = grid();
    const int nd = og.ndim();
    if (axis < 0 || axis >= nd) {
        throw UsageError(where() + ": " + op + ": axis " + num(axis) + " out of range for " +
                         num(nd) + " dimensions");
    }
    const auto ax = static_cast<std::size_t>(axis);
    const std::int64_t len = og.shape()[ax];
    if (pos < 0 || pos > len || removed < 0 || removed > len - pos || inserted < 0 ||
        inserted > INT64_MAX - len) {
        throw UsageError(where() + ": cannot " + op + " " + num(removed + inserted) +
                         " slices at " + num(pos) + " along axis " + num(axis) + " of length " +
                         num(len));
    }
    if (removed == 0 && inserted == 0) {
        return;
    }
    Shape shape = og.shape();
    shape[ax] += inserted - removed;
    const std::string why = Grid::check(shape, og.chunk_shape(), og.block_shape(), og.itemsize());
    if (!why.empty()) {
        throw UsageError(where() + ": cannot change the shape to " + to_string(shape) + ": " + why);
    }
    const Grid ng(shape, og.chunk_shape(), og.block_shape(), og.itemsize());
    const std::int64_t cs = og.chunk_shape()[ax];
    // Whole chunks moving by whole chunks are kept as they are.
    const bool aligned = pos % cs == 0 && removed % cs == 0 && inserted % cs == 0;
    const std::int64_t delta = removed - inserted;  // old coordinate = new + delta after the gap
    rebuild(
        ng,
        [&](const std::int64_t* c) {
            ChunkPlan cp;
            const std::int64_t a = c[axis] * cs;
            const std::int64_t b = std::min(a + cs, shape[ax]);
            std::int64_t oc[kMaxNdim];
            std::copy(c, c + nd, oc);
            if (b <= pos) {
                cp.keep = og.chunk_index(oc);
                return cp;
            }
            if (aligned && a >= pos + inserted) {
                oc[axis] += delta / cs;
                cp.keep = og.chunk_index(oc);
                return cp;
            }
            const Box w = ng.chunk_box(ng.chunk_index(c));
            auto add = [&](std::int64_t lo, std::int64_t hi, bool user, std::int64_t shift) {
                if (lo < hi) {
                    Piece p{w.start, w.count, user, shift};
                    p.start[ax] = lo;
                    p.count[ax] = hi - lo;
                    cp.pieces.push_back(std::move(p));
                }
            };
            add(a, std::min(b, pos), false, 0);
            add(std::max(a, pos), std::min(b, pos + inserted), true, -pos);
            add(std::max(a, pos + inserted), b, false, delta);
            return cp;
        },
        data, axis, inserted);
}

}  // namespace b2nd::detail
