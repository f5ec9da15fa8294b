// Reductions of arrays of any size, chunk by chunk in parallel: sum, prod, mean, var, std, amin,
// amax, any, all, count_nonzero, argmin, argmax; over the whole array, one axis, or several axes
// (ReduceOptions: axes, keepdims, a `where` mask). Uniform chunks (zeros, a repeated value) are not
// decoded.
//
//   double total = b2nd::sum(t);                  // of a float array: accumulated in double
//   xt::xarray<double> daily = b2nd::mean(t, 0);  // along axis 0
//   b2nd::ReduceOptions o;
//   o.axes = {1, 2};
//   o.keepdims = true;
//   o.where = b2nd::mask_of(b2nd::view(t) > -999.0f, t.shape());  // b2nd/xtensor/select.hpp
//   xt::xarray<double> s = b2nd::std(t, o);       // shape (n0, 1, 1), ignoring the fill value
//
// Numerics. Float sums (and means) accumulate in double: each row of up to 4096 elements is summed
// in 8 independent lanes, and rows, chunks and partial results are added with Neumaier's
// compensated (Kahan-Babuska) summation. Variances use Welford's update per element, two passes
// per row, and Chan's formula to merge partial results. Partial results are merged in a fixed
// order (chunk order within each output region), so a result does not depend on the number of
// threads or on timing. Integer sums and products are exact in 64 bits and wrap as NumPy's do.
// amin, amax, argmin and argmax propagate NaN as NumPy does (the first NaN wins); ties go to the
// first element in C order.
#pragma once

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <type_traits>
#include <vector>

#include <b2nd/mask.hpp>
#include <b2nd/ndarray.hpp>
#include <b2nd/parallel.hpp>
#include <b2nd/xtensor/xtensor_includes.hpp>

namespace b2nd {

/// The accumulator of sum() and prod(): double for floats, int64 / uint64 for integers (bool
/// counts).
template <class T>
using sum_type_t =
    std::conditional_t<std::is_floating_point_v<T>,
                       double,
                       std::conditional_t<std::is_same_v<T, bool> || std::is_unsigned_v<T>,
                                          std::uint64_t,
                                          std::int64_t>>;

/// What to reduce over and how.
struct ReduceOptions {
    /// The axes reduced (negative count from the end); empty: all of them.
    std::vector<int> axes;
    /// Keep the reduced axes as dimensions of length 1.
    bool keepdims = false;
    /// Only elements where the mask is true take part (NumPy's where=).
    std::optional<Mask> where;
    /// Chunks in flight (0: the array's nthreads()).
    int nthreads = 0;
};

namespace xtensor_detail {

/// Keeps the reductions out of overload sets where a caller names T = void explicitly (xtensor's
/// own unqualified sum<T>(...) calls find them by argument-dependent lookup on b2nd types).
template <class T>
using if_element = std::enable_if_t<!std::is_void_v<T>, int>;

/// Neumaier's compensated sum in double.
struct CompensatedSum {
    double s = 0, c = 0;
    void add(double x) {
        const double t = s + x;
        c += std::abs(s) >= std::abs(x) ? (s - t) + x : (x - t) + s;
        s = t;
    }
    void merge(const CompensatedSum& o) {
        add(o.s);
        add(o.c);
    }
    double value() const { return s + c; }
};

/// The sum of n values in double, 8 independent lanes per run of 4096, runs compensated.
template <class T>
void add_row_compensated(CompensatedSum& st, const T* v, std::int64_t n) {
    for (std::int64_t first = 0; first < n; first += 4096) {
        const std::int64_t end = std::min(n, first + 4096);
        double p[8] = {};
        std::int64_t i = first;
        for (; i + 8 <= end; i += 8) {
            for (int l = 0; l < 8; ++l) {
                p[l] += static_cast<double>(v[i + l]);
            }
        }
        for (; i < end; ++i) {
            p[0] += static_cast<double>(v[i]);
        }
        st.add(((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7])));
    }
}

/// Integer arithmetic that wraps (through unsigned), as NumPy's does.
template <class A>
A wrap_add(A a, A b) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
}
template <class A>
A wrap_mul(A a, A b) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
}

// Each operation: a `state` with add(v, pos), add_row(v, n, pos0, pos_step) for n consecutive
// values, add_repeated(v, n, pos0), merge(later) and a result. `pos` is an element's C-order
// index over the reduced axes (what argmin/argmax return).

template <class T>
struct SumOp {
    using acc = sum_type_t<T>;
    using result = acc;
    struct state {
        std::conditional_t<std::is_floating_point_v<T>, CompensatedSum, acc> s{};
        void add(T v, std::int64_t) {
            if constexpr (std::is_floating_point_v<T>) {
                s.add(static_cast<double>(v));
            } else {
                s = wrap_add(s, static_cast<acc>(v));
            }
        }
        void add_row(const T* v, std::int64_t n, std::int64_t, std::int64_t) {
            if constexpr (std::is_floating_point_v<T>) {
                add_row_compensated(s, v, n);
            } else {
                acc p[8] = {};
                std::int64_t i = 0;
                for (; i + 8 <= n; i += 8) {
                    for (int l = 0; l < 8; ++l) {
                        p[l] = wrap_add(p[l], static_cast<acc>(v[i + l]));
                    }
                }
                for (; i < n; ++i) {
                    p[0] = wrap_add(p[0], static_cast<acc>(v[i]));
                }
                for (acc x : p) {
                    s = wrap_add(s, x);
                }
            }
        }
        void add_repeated(T v, std::int64_t n, std::int64_t) {
            if constexpr (std::is_floating_point_v<T>) {
                s.add(static_cast<double>(v) * static_cast<double>(n));
            } else {
                s = wrap_add(s, wrap_mul(static_cast<acc>(v), static_cast<acc>(n)));
            }
        }
        void merge(const state& o) {
            if constexpr (std::is_floating_point_v<T>) {
                s.merge(o.s);
            } else {
                s = wrap_add(s, o.s);
            }
        }
        result get() const {
            if constexpr (std::is_floating_point_v<T>) {
                return s.value();
            } else {
                return s;
            }
        }
    };
};

template <class T>
struct ProdOp {
    using acc = sum_type_t<T>;
    using result = acc;
    struct state {
        acc p = acc(1);
        void add(T v, std::int64_t) {
            if constexpr (std::is_floating_point_v<T>) {
                p *= static_cast<double>(v);
            } else {
                p = wrap_mul(p, static_cast<acc>(v));
            }
        }
        void add_row(const T* v, std::int64_t n, std::int64_t pos, std::int64_t) {
            for (std::int64_t i = 0; i < n; ++i) {
                add(v[i], pos);
            }
        }
        void add_repeated(T v, std::int64_t n, std::int64_t) {
            if constexpr (std::is_floating_point_v<T>) {
                p *= std::pow(static_cast<double>(v), static_cast<double>(n));
            } else {
                acc base = static_cast<acc>(v), r = acc(1);
                for (auto e = static_cast<std::uint64_t>(n); e > 0; e >>= 1) {
                    if ((e & 1) != 0) {
                        r = wrap_mul(r, base);
                    }
                    base = wrap_mul(base, base);
                }
                p = wrap_mul(p, r);
            }
        }
        void merge(const state& o) {
            if constexpr (std::is_floating_point_v<T>) {
                p *= o.p;
            } else {
                p = wrap_mul(p, o.p);
            }
        }
        result get() const { return p; }
    };
};

/// Count, mean and sum of squared deviations (Welford within rows, Chan across).
template <class T>
struct MomentsOp {
    struct state {
        std::int64_t n = 0;
        double mean = 0, m2 = 0;
        void add(T v, std::int64_t) {
            ++n;
            const double x = static_cast<double>(v);
            const double d = x - mean;
            mean += d / static_cast<double>(n);
            m2 += d * (x - mean);
        }
        void add_row(const T* v, std::int64_t n_, std::int64_t, std::int64_t) {
            if (n_ == 0) {
                return;
            }
            CompensatedSum s;
            add_row_compensated(s, v, n_);
            state row;
            row.n = n_;
            row.mean = s.value() / static_cast<double>(n_);
            for (std::int64_t i = 0; i < n_; ++i) {
                const double d = static_cast<double>(v[i]) - row.mean;
                row.m2 += d * d;
            }
            merge(row);
        }
        void add_repeated(T v, std::int64_t n_, std::int64_t) {
            state r;
            r.n = n_;
            r.mean = static_cast<double>(v);
            merge(r);
        }
        void merge(const state& o) {
            if (o.n == 0) {
                return;
            }
            if (n == 0) {
                *this = o;
                return;
            }
            const double na = static_cast<double>(n), nb = static_cast<double>(o.n);
            const double d = o.mean - mean;
            n += o.n;
            mean += d * nb / (na + nb);
            m2 += o.m2 + d * d * na * nb / (na + nb);
        }
    };
};

template <class T>
struct MeanOp {
    using result = double;
    struct state {
        CompensatedSum s;
        std::int64_t n = 0;
        void add(T v, std::int64_t) {
            s.add(static_cast<double>(v));
            ++n;
        }
        void add_row(const T* v, std::int64_t n_, std::int64_t, std::int64_t) {
            add_row_compensated(s, v, n_);
            n += n_;
        }
        void add_repeated(T v, std::int64_t n_, std::int64_t) {
            s.add(static_cast<double>(v) * static_cast<double>(n_));
            n += n_;
        }
        void merge(const state& o) {
            s.merge(o.s);
            n += o.n;
        }
        result get() const {
            return n == 0 ? std::numeric_limits<double>::quiet_NaN()
                          : s.value() / static_cast<double>(n);
        }
    };
};

/// any (All = false) or all (All = true).
template <class T, bool All>
struct TruthOp {
    using result = bool;
    struct state {
        bool b = All;
        void add(T v, std::int64_t) { b = All ? (b && v != T(0)) : (b || v != T(0)); }
        void add_row(const T* v, std::int64_t n, std::int64_t pos, std::int64_t) {
            for (std::int64_t i = 0; i < n && b == All; ++i) {
                add(v[i], pos);
            }
        }
        void add_repeated(T v, std::int64_t n, std::int64_t pos) {
            if (n > 0) {
                add(v, pos);
            }
        }
        void merge(const state& o) { b = All ? (b && o.b) : (b || o.b); }
        result get() const { return b; }
    };
};

template <class T>
struct CountOp {
    using result = std::int64_t;
    struct state {
        std::int64_t c = 0;
        void add(T v, std::int64_t) { c += v != T(0) ? 1 : 0; }
        void add_row(const T* v, std::int64_t n, std::int64_t, std::int64_t) {
            std::int64_t k = 0;
            for (std::int64_t i = 0; i < n; ++i) {
                k += v[i] != T(0) ? 1 : 0;
            }
            c += k;
        }
        void add_repeated(T v, std::int64_t n, std::int64_t) { c += v != T(0) ? n : 0; }
        void merge(const state& o) { c += o.c; }
        result get() const { return c; }
    };
};

/// The smallest (Larger = false) or largest element and its position; NaN wins, then the
/// earliest position.
template <class T, bool Larger>
struct ArgOp {
    struct state {
        T best{};
        std::int64_t pos = -1;
        static bool nan(T v) {
            if constexpr (std::is_floating_point_v<T>) {
                return std::isnan(v);
            } else {
                return false;
            }
        }
        /// Whether (v, p) goes before the current best.
        bool better(T v, std::int64_t p) const {
            if (pos < 0) {
                return true;
            }
            if (nan(best) || nan(v)) {
                return nan(v) && (!nan(best) || p < pos);
            }
            if (v == best) {
                return p < pos;
            }
            return Larger ? best < v : v < best;
        }
        void add(T v, std::int64_t p) {
            if (better(v, p)) {
                best = v;
                pos = p;
            }
        }
        void add_row(const T* v, std::int64_t n, std::int64_t p0, std::int64_t step) {
            for (std::int64_t i = 0; i < n; ++i) {
                add(v[i], p0 + i * step);
            }
        }
        void add_repeated(T v, std::int64_t n, std::int64_t p0) {
            if (n > 0) {
                add(v, p0);
            }
        }
        void merge(const state& o) {
            if (o.pos >= 0) {
                add(o.best, o.pos);
            }
        }
    };
};

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

/// Reduces with State and turns each cell's state into a result with fn(state). `no_identity`
/// names a reduction that has no value for a cell without elements (argmin, argmax): reducing
/// along an axis of length 0 is then a UsageError.
template <class R, class T, class State, class Fn>
xt::xarray<R> reduce_to(const NDArray<T>& a,
                        const ReduceOptions& o,
                        Fn&& fn,
                        const char* no_identity = nullptr) {
    const ReducePlan plan(a.shape(), o, "\"" + a.path() + "\"");
    if (no_identity != nullptr && plan.nred == 0 && plan.nout > 0) {
        throw UsageError("\"" + a.path() + "\": the " + no_identity + " along axes of length 0");
    }
    const std::vector<State> states = reduce_states<T, State>(a, o, plan);
    std::vector<std::size_t> shape(plan.out_shape.begin(), plan.out_shape.end());
    xt::xarray<R> out = xt::xarray<R>::from_shape(shape);
    for (std::size_t i = 0; i < states.size(); ++i) {
        out.flat(i) = fn(states[i]);
    }
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

}  // namespace xtensor_detail

// ---- over several axes (ReduceOptions), as xt::xarray -----------------------------------------

/// Sums (see sum_type_t); 0 for empty cells.
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<sum_type_t<T>> sum(const NDArray<T>& a, const ReduceOptions& o) {
    using S = typename xtensor_detail::SumOp<T>::state;
    return xtensor_detail::reduce_to<sum_type_t<T>, T, S>(a, o, [](const S& s) { return s.get(); });
}
/// Products (double for floats, wrapping 64-bit integers otherwise); 1 for empty cells.
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<sum_type_t<T>> prod(const NDArray<T>& a, const ReduceOptions& o) {
    using S = typename xtensor_detail::ProdOp<T>::state;
    return xtensor_detail::reduce_to<sum_type_t<T>, T, S>(a, o, [](const S& s) { return s.get(); });
}
/// Means; NaN for cells with no element (all masked out, or an empty axis).
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<double> mean(const NDArray<T>& a, const ReduceOptions& o) {
    using S = typename xtensor_detail::MeanOp<T>::state;
    return xtensor_detail::reduce_to<double, T, S>(a, o, [](const S& s) { return s.get(); });
}
/// Variances with `ddof` delta degrees of freedom (NumPy's var); NaN where n - ddof <= 0.
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<double> var(const NDArray<T>& a, const ReduceOptions& o, int ddof = 0) {
    using S = typename xtensor_detail::MomentsOp<T>::state;
    return xtensor_detail::reduce_to<double, T, S>(a, o, [ddof](const S& s) {
        const auto d = static_cast<double>(s.n - ddof);
        return d > 0 ? s.m2 / d : std::numeric_limits<double>::quiet_NaN();
    });
}
/// Standard deviations (the square roots of var()).
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<double> std(const NDArray<T>& a, const ReduceOptions& o, int ddof = 0) {
    xt::xarray<double> v = var(a, o, ddof);
    for (double& x : v) {
        x = std::sqrt(x);
    }
    return v;
}
/// Whether any element is nonzero (false for empty cells).
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<bool> any(const NDArray<T>& a, const ReduceOptions& o) {
    using S = typename xtensor_detail::TruthOp<T, false>::state;
    return xtensor_detail::reduce_to<bool, T, S>(a, o, [](const S& s) { return s.get(); });
}
/// Whether all elements are nonzero (true for empty cells).
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<bool> all(const NDArray<T>& a, const ReduceOptions& o) {
    using S = typename xtensor_detail::TruthOp<T, true>::state;
    return xtensor_detail::reduce_to<bool, T, S>(a, o, [](const S& s) { return s.get(); });
}
/// Nonzero elements.
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<std::int64_t> count_nonzero(const NDArray<T>& a, const ReduceOptions& o) {
    using S = typename xtensor_detail::CountOp<T>::state;
    return xtensor_detail::reduce_to<std::int64_t, T, S>(a, o, [](const S& s) { return s.get(); });
}
/// Minima (NaN if any is NaN). Cells with no element hold numeric_limits<T>::max().
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<T> amin(const NDArray<T>& a, const ReduceOptions& o) {
    using S = typename xtensor_detail::ArgOp<T, false>::state;
    return xtensor_detail::reduce_to<T, T, S>(
        a, o, [](const S& s) { return s.pos < 0 ? std::numeric_limits<T>::max() : s.best; });
}
/// Maxima (NaN if any is NaN). Cells with no element hold numeric_limits<T>::lowest().
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<T> amax(const NDArray<T>& a, const ReduceOptions& o) {
    using S = typename xtensor_detail::ArgOp<T, true>::state;
    return xtensor_detail::reduce_to<T, T, S>(
        a, o, [](const S& s) { return s.pos < 0 ? std::numeric_limits<T>::lowest() : s.best; });
}
/// Positions of the minima: C-order indices over the reduced axes (along the axis for one
/// axis, flat for all); the first one on ties, the first NaN if any. -1 for cells with no
/// element (all masked out).
/// \throws UsageError when a reduced axis has length 0
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<std::int64_t> argmin(const NDArray<T>& a, const ReduceOptions& o) {
    using S = typename xtensor_detail::ArgOp<T, false>::state;
    return xtensor_detail::reduce_to<std::int64_t, T, S>(
        a, o, [](const S& s) { return s.pos; }, "argmin");
}
/// Positions of the maxima (see argmin).
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<std::int64_t> argmax(const NDArray<T>& a, const ReduceOptions& o) {
    using S = typename xtensor_detail::ArgOp<T, true>::state;
    return xtensor_detail::reduce_to<std::int64_t, T, S>(
        a, o, [](const S& s) { return s.pos; }, "argmax");
}

// ---- over everything, as a scalar ----------------------------------------------------------

/// The sum of all elements (see sum_type_t).
template <class T, xtensor_detail::if_element<T> = 0>
sum_type_t<T> sum(const NDArray<T>& a) {
    return xtensor_detail::scalar_of(sum(a, ReduceOptions{}));
}
template <class T, xtensor_detail::if_element<T> = 0>
sum_type_t<T> prod(const NDArray<T>& a) {
    return xtensor_detail::scalar_of(prod(a, ReduceOptions{}));
}
/// The mean of all elements. \throws UsageError for an empty array
template <class T, xtensor_detail::if_element<T> = 0>
double mean(const NDArray<T>& a) {
    xtensor_detail::require_elements(a, "mean");
    return xtensor_detail::scalar_of(mean(a, ReduceOptions{}));
}
/// The variance of all elements (var(a, ReduceOptions{}, ddof) for other ddof).
/// \throws UsageError for an empty array
template <class T, xtensor_detail::if_element<T> = 0>
double var(const NDArray<T>& a) {
    xtensor_detail::require_elements(a, "variance");
    return xtensor_detail::scalar_of(var(a, ReduceOptions{}));
}
template <class T, xtensor_detail::if_element<T> = 0>
double std(const NDArray<T>& a) {
    return std::sqrt(var(a));
}
/// The smallest element (NaN if any is NaN). \throws UsageError for an empty array
template <class T, xtensor_detail::if_element<T> = 0>
T amin(const NDArray<T>& a) {
    xtensor_detail::require_elements(a, "minimum");
    return xtensor_detail::scalar_of(amin(a, ReduceOptions{}));
}
/// The largest element (NaN if any is NaN). \throws UsageError for an empty array
template <class T, xtensor_detail::if_element<T> = 0>
T amax(const NDArray<T>& a) {
    xtensor_detail::require_elements(a, "maximum");
    return xtensor_detail::scalar_of(amax(a, ReduceOptions{}));
}
template <class T, xtensor_detail::if_element<T> = 0>
bool any(const NDArray<T>& a) {
    return xtensor_detail::scalar_of(any(a, ReduceOptions{}));
}
template <class T, xtensor_detail::if_element<T> = 0>
bool all(const NDArray<T>& a) {
    return xtensor_detail::scalar_of(all(a, ReduceOptions{}));
}
template <class T, xtensor_detail::if_element<T> = 0>
std::int64_t count_nonzero(const NDArray<T>& a) {
    return xtensor_detail::scalar_of(count_nonzero(a, ReduceOptions{}));
}
/// The flat (C order) index of the smallest element. \throws UsageError for an empty array
template <class T, xtensor_detail::if_element<T> = 0>
std::int64_t argmin(const NDArray<T>& a) {
    xtensor_detail::require_elements(a, "argmin");
    return xtensor_detail::scalar_of(argmin(a, ReduceOptions{}));
}
template <class T, xtensor_detail::if_element<T> = 0>
std::int64_t argmax(const NDArray<T>& a) {
    xtensor_detail::require_elements(a, "argmax");
    return xtensor_detail::scalar_of(argmax(a, ReduceOptions{}));
}

// ---- along one axis (negative counts from the end); the result drops that dimension -----------

template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<sum_type_t<T>> sum(const NDArray<T>& a, int axis) {
    return sum(a, xtensor_detail::one_axis<T>(axis));
}
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<sum_type_t<T>> prod(const NDArray<T>& a, int axis) {
    return prod(a, xtensor_detail::one_axis<T>(axis));
}
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<double> mean(const NDArray<T>& a, int axis) {
    return mean(a, xtensor_detail::one_axis<T>(axis));
}
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<double> var(const NDArray<T>& a, int axis, int ddof = 0) {
    return var(a, xtensor_detail::one_axis<T>(axis), ddof);
}
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<double> std(const NDArray<T>& a, int axis, int ddof = 0) {
    return std(a, xtensor_detail::one_axis<T>(axis), ddof);
}
/// Minima along `axis` (numeric_limits<T>::max() where the axis is empty).
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<T> amin(const NDArray<T>& a, int axis) {
    return amin(a, xtensor_detail::one_axis<T>(axis));
}
/// Maxima along `axis` (numeric_limits<T>::lowest() where the axis is empty).
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<T> amax(const NDArray<T>& a, int axis) {
    return amax(a, xtensor_detail::one_axis<T>(axis));
}
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<std::int64_t> argmin(const NDArray<T>& a, int axis) {
    return argmin(a, xtensor_detail::one_axis<T>(axis));
}
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<std::int64_t> argmax(const NDArray<T>& a, int axis) {
    return argmax(a, xtensor_detail::one_axis<T>(axis));
}

}  // namespace b2nd
