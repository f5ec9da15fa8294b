// How a reduction runs over an array's chunks: its geometry (ReducePlan), each chunk reduced on
// its own in parallel into states of the result cells it covers (chunk_parts), and the parts
// merged in a fixed order (merge_part, reduce_states). Part of the reduction machinery that local
// (reduce.hpp) and MPI (b2nd/mpi.hpp) reductions share; not for direct use.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <b2nd/ndarray.hpp>
#include <b2nd/parallel.hpp>
#include <b2nd/xtensor/reduce_accumulators.hpp>
#include <b2nd/xtensor/xtensor_includes.hpp>

namespace b2nd::reduction {

/// One reduction's geometry: which axes are reduced, the result's shape, and strides.
struct ReducePlan {
    std::vector<bool> reduced;             // per array dimension
    Shape kept;                            // the result's shape without keepdims
    Shape out_shape;                       // the result's shape as asked (keepdims or not)
    std::vector<std::int64_t> out_stride;  // per array dimension (0 where reduced)
    std::vector<std::int64_t> red_stride;  // per array dimension (0 where kept)
    std::int64_t nout = 1;                 // result cells
    std::int64_t nred = 1;                 // elements per cell

    ReducePlan(const Shape& shape, const ReduceOptions& o, const std::string& where) {
        const int nd = static_cast<int>(shape.size());
        reduced.assign(shape.size(), o.axes.empty());
        for (int ax : o.axes) {
            const int a = ax < 0 ? ax + nd : ax;
            if (a < 0 || a >= nd) {
                throw UsageError(where + ": axis " + std::to_string(ax) +
                                 " out of range for shape " + to_string(shape));
            }
            if (reduced[static_cast<std::size_t>(a)]) {
                throw UsageError(where + ": axis " + std::to_string(ax) + " given twice");
            }
            reduced[static_cast<std::size_t>(a)] = true;
        }
        out_stride.assign(shape.size(), 0);
        red_stride.assign(shape.size(), 0);
        for (std::size_t d = shape.size(); d-- > 0;) {
            if (reduced[d]) {
                red_stride[d] = nred;
                nred *= shape[d];
            } else {
                out_stride[d] = nout;
                nout *= shape[d];
            }
        }
        for (std::size_t d = 0; d < shape.size(); ++d) {
            if (!reduced[d]) {
                kept.push_back(shape[d]);
                out_shape.push_back(shape[d]);
            } else if (o.keepdims) {
                out_shape.push_back(1);
            }
        }
    }
};

/// Visits every chunk of `a` in parallel, handing fn(chunk, region, values, uniform) native
/// values (values null and `uniform` set for uniform chunks, which are not decoded).
template <class T, class Fn>
void visit_values(const NDArray<T>& a,
                  const std::vector<std::int64_t>& ids,
                  int nthreads,
                  Fn&& fn) {
    const AnyArray& any = a.any();
    const bool swap = any.dtype().needs_byteswap();
    any.for_each_chunk(
        ids,
        [&](std::int64_t ci, const Box& region, const std::uint8_t* data,
            const std::uint8_t* uniform) {
            if (data == nullptr) {
                T v;
                std::memcpy(&v, uniform, sizeof(T));
                if (swap) {
                    any.dtype().byteswap(reinterpret_cast<std::uint8_t*>(&v), 1);
                }
                if constexpr (std::is_same_v<T, bool>) {
                    unsigned char b;
                    std::memcpy(&b, &v, 1);
                    v = b != 0;
                }
                fn(ci, region, static_cast<const T*>(nullptr), v);
                return;
            }
            const auto n = static_cast<std::size_t>(region.size());
            if (!swap && !std::is_same_v<T, bool>) {
                fn(ci, region, reinterpret_cast<const T*>(data), T{});
                return;
            }
            std::vector<std::uint8_t> copy(data, data + n * sizeof(T));
            if (swap) {
                any.dtype().byteswap(copy.data(), static_cast<std::int64_t>(n));
            }
            if constexpr (std::is_same_v<T, bool>) {
                for (auto& b : copy) {
                    b = b != 0 ? 1 : 0;
                }
            }
            fn(ci, region, reinterpret_cast<const T*>(copy.data()), T{});
        },
        nthreads);
}

/// Merges the part of one chunk (its region's cells, C order over the region's kept axes) into
/// the result cells `out` (C order over the kept axes).
template <class State>
void merge_part(std::vector<State>& out,
                const ReducePlan& plan,
                const Box& region,
                const std::vector<State>& part) {
    const std::size_t nd = plan.reduced.size();
    std::vector<std::int64_t> k(nd, 0);
    std::int64_t base = 0;
    for (std::size_t d = 0; d < nd; ++d) {
        base += region.start[d] * plan.out_stride[d];
    }
    // Walk the kept axes of the region (reduced ones stay at 0).
    for (const State& s : part) {
        std::int64_t at = base;
        for (std::size_t d = 0; d < nd; ++d) {
            at += k[d] * plan.out_stride[d];
        }
        out[static_cast<std::size_t>(at)].merge(s);
        std::size_t d = nd;
        while (d-- > 0) {
            if (plan.reduced[d]) {
                continue;
            }
            if (++k[d] < region.count[d]) {
                break;
            }
            k[d] = 0;
        }
    }
}

/// Reduces each chunk of `ids` on its own, in parallel: sink(chunk, region, part) receives the
/// states of the result cells the chunk's region covers (C order over the region's kept axes),
/// from the worker threads. merge_part() adds a part to the result.
template <class T, class State, class Sink>
void chunk_parts(const NDArray<T>& a,
                 const ReduceOptions& o,
                 const ReducePlan& plan,
                 const std::vector<std::int64_t>& all_ids,
                 Sink&& sink) {
    const Shape& shape = a.shape();
    const std::size_t nd = shape.size();
    if (o.where && o.where->shape != shape) {
        throw UsageError("\"" + a.path() + "\": a where= mask of shape " +
                         to_string(o.where->shape) + " for an array of shape " + to_string(shape));
    }
    if (a.size() == 0 || all_ids.empty()) {
        return;
    }
    const Grid& g = a.any().grid();
    // With a where= mask, chunks go in batches whose mask regions are read first, outside the
    // chunk visit: the visit holds the array's read lock, and the mask may read the same array
    // (view(a) > 0), which must not take that lock again inside it (a writer waiting in between
    // would deadlock both).
    const int threads = o.nthreads > 0 ? o.nthreads : a.any().nthreads();
    const std::size_t batch =
        o.where ? static_cast<std::size_t>(2 * std::max(1, threads)) : all_ids.size();
    std::vector<std::vector<std::uint8_t>> masks;
    std::map<std::int64_t, std::size_t> mask_of;  // chunk -> its mask in `masks`
    auto visit = [&](std::int64_t ci, const Box& region, const T* values, T u) {
        // The region's cells (C order over its kept axes), its position along the reduced axes.
        std::vector<std::int64_t> pstride(nd, 0);
        std::int64_t np = 1, nred = 1;
        for (std::size_t d = nd; d-- > 0;) {
            if (!plan.reduced[d]) {
                pstride[d] = np;
                np *= region.count[d];
            } else {
                nred *= region.count[d];
            }
        }
        std::int64_t red0 = 0;
        for (std::size_t d = 0; d < nd; ++d) {
            red0 += region.start[d] * plan.red_stride[d];
        }
        std::vector<State> part(static_cast<std::size_t>(np));
        static const std::vector<std::uint8_t> no_mask;
        const std::vector<std::uint8_t>& mask = o.where ? masks[mask_of.at(ci)] : no_mask;
        if (values == nullptr && !o.where) {
            for (State& s : part) {
                s.add_repeated(u, nred, red0);
            }
        } else {
            // Row by row along the last axis.
            const std::size_t last = nd == 0 ? 0 : nd - 1;
            const std::int64_t row = nd == 0 ? 1 : region.count[last];
            const std::int64_t rows = region.size() / std::max<std::int64_t>(row, 1);
            const bool last_reduced = nd == 0 || plan.reduced[last];
            std::vector<std::int64_t> k(nd, 0);
            for (std::int64_t r = 0; r < rows; ++r) {
                std::int64_t cell = 0, pos = red0;
                for (std::size_t d = 0; d + 1 < nd; ++d) {
                    cell += k[d] * pstride[d];
                    pos += k[d] * plan.red_stride[d];
                }
                const std::int64_t off = r * row;
                const T* v = values != nullptr ? values + off : nullptr;
                const std::int64_t rstep = nd == 0 ? 0 : plan.red_stride[last];
                if (last_reduced && v != nullptr && !o.where) {
                    part[static_cast<std::size_t>(cell)].add_row(v, row, pos, rstep);
                } else {
                    const std::int64_t cstep = last_reduced ? 0 : pstride[last];
                    for (std::int64_t j = 0; j < row; ++j) {
                        if (o.where && mask[static_cast<std::size_t>(off + j)] == 0) {
                            continue;
                        }
                        part[static_cast<std::size_t>(cell + j * cstep)].add(
                            v != nullptr ? v[j] : u, pos + j * rstep);
                    }
                }
                for (std::size_t d = nd >= 1 ? nd - 1 : 0; d-- > 0;) {
                    if (++k[d] < region.count[d]) {
                        break;
                    }
                    k[d] = 0;
                }
            }
        }
        sink(ci, region, std::move(part));
    };
    for (std::size_t b = 0; b < all_ids.size(); b += batch) {
        const std::size_t n = std::min(batch, all_ids.size() - b);
        const std::vector<std::int64_t> ids(all_ids.begin() + static_cast<std::ptrdiff_t>(b),
                                            all_ids.begin() + static_cast<std::ptrdiff_t>(b + n));
        if (o.where) {
            masks.assign(n, {});
            mask_of.clear();
            for (std::size_t k = 0; k < n; ++k) {
                mask_of[ids[k]] = k;
            }
            parallel_for(n, threads, [&](std::size_t k) {
                const Box region = g.chunk_box(ids[k]);
                masks[k].resize(static_cast<std::size_t>(region.size()));
                o.where->region(region, masks[k].data());
            });
        }
        visit_values(a, ids, o.nthreads, visit);
    }
}

/// The states of every result cell (C order over the kept axes), reduced chunk by chunk in
/// parallel and merged in a fixed order.
template <class T, class State>
std::vector<State> reduce_states(const NDArray<T>& a,
                                 const ReduceOptions& o,
                                 const ReducePlan& plan) {
    const std::size_t nd = a.shape().size();
    std::vector<State> out(static_cast<std::size_t>(plan.nout));
    // Chunks merge into their result region in chunk order: group = the chunk's coordinates
    // along kept axes, rank = its place among the group's chunks.
    const Grid& g = a.any().grid();
    const std::int64_t nchunks = a.size() == 0 ? 0 : g.nchunks();
    std::vector<std::int64_t> group(static_cast<std::size_t>(nchunks)),
        rank(static_cast<std::size_t>(nchunks));
    {
        std::map<std::int64_t, std::int64_t> seen;
        std::vector<std::int64_t> c(nd);
        for (std::int64_t ci = 0; ci < nchunks; ++ci) {
            g.chunk_coords(ci, c.data());
            std::int64_t key = 0;
            for (std::size_t d = 0; d < nd; ++d) {
                if (!plan.reduced[d]) {
                    key = key * g.chunks_in(static_cast<int>(d)) + c[d];
                }
            }
            group[static_cast<std::size_t>(ci)] = key;
            rank[static_cast<std::size_t>(ci)] = seen[key]++;
        }
    }
    std::mutex m;
    std::map<std::int64_t, std::int64_t> next;  // per group: the rank to merge next
    std::map<std::pair<std::int64_t, std::int64_t>, std::pair<Box, std::vector<State>>> pending;
    const std::vector<std::int64_t> ids =
        a.size() == 0 ? std::vector<std::int64_t>{} : a.any().all_chunks();
    chunk_parts<T, State>(
        a, o, plan, ids, [&](std::int64_t ci, const Box& region, std::vector<State>&& part) {
            std::lock_guard<std::mutex> lock(m);
            const std::int64_t grp = group[static_cast<std::size_t>(ci)];
            std::int64_t& want = next[grp];
            if (rank[static_cast<std::size_t>(ci)] != want) {
                pending.emplace(std::make_pair(grp, rank[static_cast<std::size_t>(ci)]),
                                std::make_pair(region, std::move(part)));
                return;
            }
            merge_part(out, plan, region, part);
            ++want;
            for (auto it = pending.find({grp, want}); it != pending.end();
                 it = pending.find({grp, want})) {
                merge_part(out, plan, it->second.first, it->second.second);
                pending.erase(it);
                ++want;
            }
        });
    return out;
}

template <class T>
ReduceOptions one_axis(int axis) {
    ReduceOptions o;
    o.axes = {axis};
    return o;
}

/// The one value of a reduction over everything.
template <class R>
R scalar_of(const xt::xarray<R>& x) {
    return x.flat(0);
}

/// \throws UsageError for an empty array (a reduction with no identity).
template <class T>
void require_elements(const NDArray<T>& a, const char* what) {
    if (a.size() == 0) {
        throw UsageError("\"" + a.path() + "\": the " + what + " of an empty array");
    }
}

}  // namespace b2nd::reduction
