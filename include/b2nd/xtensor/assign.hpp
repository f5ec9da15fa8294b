// Assigning expressions over lazy views to containers: slab by slab, in parallel.
//
// A LazyView carries its own xtensor expression tag, b2nd::lazy_expression_tag, and so does every
// expression built on one (xtensor gives an expression the tag of its leaves). When such an
// expression is assigned to a container,
//
//   xt::xarray<float> c = b2nd::view(a) + b2nd::view(b) * 2.0f;
//   xt::xarray<double> m = xt::mean(b2nd::view(a) * 2.0, {0});
//
// xtensor hands it to the assigner below instead of stepping through the views element by
// element. The result is cut into slabs of rows along its first dimension, aligned on the blocks
// of the first lazy leaf, and slabs are evaluated in parallel: each lazy leaf reads the slab's
// rows into a reused scratch buffer (one engine read), and the expression, rebuilt over those
// in-memory windows, is evaluated by xtensor's own linear assignment. A reducer (xt::sum,
// xt::mean, xt::amax, xt::prod, ... with or without axes) over such an expression is evaluated
// the same way, each slab reduced on its own and, when the first axis is reduced, the partial
// results merged with the reducer's merge function.
//
// What takes this path: element-wise functions (operators, math functions, casts) of lazy views,
// row-major containers, scalars and such reducers, assigned to a row-major xt::xarray / xt::xtensor
// (`=`, `noalias(c) =`, `+=`, xt::eval). Anything else (views, broadcasts, transposes, generators
// of lazy expressions; reducers evaluated in place with `xt::sum(e)()` or
// evaluation_strategy::immediate) is evaluated by xtensor as before, stepping element by element
// through the views' slabs. docs/xtensor.md lists both.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <b2nd/memory.hpp>
#include <b2nd/parallel.hpp>
#include <b2nd/xtensor/lazy.hpp>
#include <b2nd/xtensor/xtensor_includes.hpp>

namespace b2nd {

/// The xtensor expression tag of LazyView and of expressions built on lazy views.
struct lazy_expression_tag {};

namespace xtensor_detail {

/// The base xtensor gives expressions carrying lazy_expression_tag.
struct lazy_empty_base {
    using expression_tag = lazy_expression_tag;
};

template <class E>
struct is_lazy_view : std::false_type {};
template <class T>
struct is_lazy_view<LazyView<T>> : std::true_type {};

template <class E>
struct is_xfunction : std::false_type {};
template <class F, class... CT>
struct is_xfunction<xt::xfunction<F, CT...>> : std::true_type {};

template <class E>
struct is_xscalar : std::false_type {};
template <class CT>
struct is_xscalar<xt::xscalar<CT>> : std::true_type {};

template <class E>
struct is_xreducer : std::false_type {};
template <class F, class CT, class X, class O>
struct is_xreducer<xt::xreducer<F, CT, X, O>> : std::true_type {};

/// Row-major containers whose data() the slabs can address directly.
template <class E>
struct is_row_major_container : std::bool_constant<is_resizable_container<E>::value &&
                                                   E::static_layout == xt::layout_type::row_major> {
};

/// Whether an expression can be evaluated slab by slab: element-wise functions of lazy views,
/// row-major containers and scalars.
template <class E>
struct slab_evaluable : std::bool_constant<is_lazy_view<E>::value || is_xscalar<E>::value ||
                                           is_row_major_container<E>::value> {};
template <class F, class... CT>
struct slab_evaluable<xt::xfunction<F, CT...>>
    : std::conjunction<slab_evaluable<std::decay_t<CT>>...> {};

/// Calls fn(view) for every lazy view among the leaves of a slab-evaluable expression.
template <class E, class Fn>
void for_each_lazy_leaf(const E& e, Fn&& fn) {
    if constexpr (is_lazy_view<E>::value) {
        fn(e);
    } else if constexpr (is_xfunction<E>::value) {
        std::apply([&](const auto&... args) { (for_each_lazy_leaf(args, fn), ...); },
                   e.arguments());
    }
}

/// Scratch buffers shared by the slabs of one assignment, so that only the first slabs of each
/// thread touch fresh memory. Counted in memory_stats().
class ScratchPool {
public:
    struct Buffer {
        std::unique_ptr<std::uint8_t[]> data;
        std::size_t size = 0;
    };
    ScratchPool() = default;
    ScratchPool(const ScratchPool&) = delete;
    ScratchPool& operator=(const ScratchPool&) = delete;
    ~ScratchPool() {
        for (const auto& b : free_) {
            detail::track_free(b.size);
        }
    }
    Buffer take(std::size_t bytes) {
        bytes = std::max<std::size_t>(bytes, 1);
        {
            std::lock_guard<std::mutex> g(mutex_);
            for (auto it = free_.begin(); it != free_.end(); ++it) {
                if (it->size >= bytes) {
                    Buffer b = std::move(*it);
                    free_.erase(it);
                    return b;
                }
            }
        }
        Buffer b;
        b.data.reset(new std::uint8_t[bytes]);  // not zeroed: every byte is read into
        b.size = bytes;
        detail::track_alloc(bytes);
        return b;
    }
    /// Every buffer taken must be given back before the pool goes.
    void give(Buffer b) {
        std::lock_guard<std::mutex> g(mutex_);
        free_.push_back(std::move(b));
    }

private:
    std::mutex mutex_;
    std::vector<Buffer> free_;
};

/// The buffers one slab holds; they go back to the pool when it is done.
class SlabScratch {
public:
    explicit SlabScratch(ScratchPool& pool) : pool_(pool) {}
    SlabScratch(const SlabScratch&) = delete;
    SlabScratch& operator=(const SlabScratch&) = delete;
    ~SlabScratch() {
        for (auto& b : held_) {
            pool_.give(std::move(b));
        }
    }
    template <class T>
    T* get(std::size_t n) {
        held_.push_back(pool_.take(n * sizeof(T)));
        return reinterpret_cast<T*>(held_.back().data.get());
    }

private:
    ScratchPool& pool_;
    std::vector<ScratchPool::Buffer> held_;
};

/// Whether a leaf of `leaf_ndim` dimensions with first extent `extent0` walks the rows of a
/// result of `result_ndim` dimensions (trailing dimensions align, NumPy-style), rather than being
/// broadcast along them.
inline bool walks_rows(std::size_t leaf_ndim, std::size_t extent0, std::size_t result_ndim) {
    return leaf_ndim == result_ndim && extent0 != 1;
}

/// Rows [r0, r1) of a slab-evaluable expression whose result has `nd` dimensions, over memory:
/// lazy views are read into scratch, containers are addressed in place, scalars stay.
template <class E>
decltype(auto) rows_of(
    const E& e, std::size_t nd, std::size_t r0, std::size_t r1, SlabScratch& scratch) {
    if constexpr (is_xscalar<E>::value) {
        return e;
    } else if constexpr (is_lazy_view<E>::value) {
        using T = typename E::value_type;
        std::vector<std::size_t> shape = e.shape();
        Resolved sel = e.selection();
        if (walks_rows(shape.size(), shape.empty() ? 1 : shape[0], nd)) {
            sel =
                narrow_rows(sel, static_cast<std::int64_t>(r0), static_cast<std::int64_t>(r1 - r0));
            shape[0] = r1 - r0;
        }
        const auto n = static_cast<std::size_t>(sel.size());
        T* p = scratch.get<T>(n);
        e.array().read(sel, p);
        return xt::adapt(p, n, xt::no_ownership(), std::move(shape));
    } else if constexpr (is_xfunction<E>::value) {
        return std::apply(
            [&](const auto&... args) {
                using F = typename E::functor_type;
                using R = xt::xfunction<
                    F, xt::const_xclosure_t<decltype(rows_of(args, nd, r0, r1, scratch))>...>;
                return R(F(e.functor()), rows_of(args, nd, r0, r1, scratch)...);
            },
            e.arguments());
    } else {  // a row-major container
        using T = typename E::value_type;
        std::vector<std::size_t> shape(e.shape().begin(), e.shape().end());
        std::size_t offset = 0;
        if (walks_rows(shape.size(), shape.empty() ? 1 : shape[0], nd)) {
            offset = r0 * (e.size() / shape[0]);
            shape[0] = r1 - r0;
        }
        std::size_t n = 1;
        for (auto s : shape) {
            n *= s;
        }
        // A read-only window: the buffer adaptor wants a mutable pointer, nothing writes to it.
        T* p = const_cast<T*>(e.data()) + offset;
        return xt::adapt(p, n, xt::no_ownership(), std::move(shape));
    }
}

/// Where the slabs of a result of `rows` rows end: aligned on the blocks of the first lazy leaf
/// that walks the rows with step 1, about `target_bytes` of results each.
template <class E>
std::vector<std::size_t> slab_bounds(
    const E& e, std::size_t nd, std::size_t rows, std::size_t row_bytes, std::size_t target_bytes) {
    std::size_t align = 1, offset = 0;
    bool found = false;
    for_each_lazy_leaf(e, [&](const auto& v) {
        const Resolved& sel = v.selection();
        if (found || v.dimension() == 0 || !walks_rows(v.dimension(), v.shape()[0], nd) ||
            sel.dims[0] < 0 || sel.orthogonal()) {
            return;
        }
        const auto d = static_cast<std::size_t>(sel.dims[0]);
        if (sel.box.step[d] == 1) {
            align = static_cast<std::size_t>(v.array().any().block_shape()[d]);
            offset = static_cast<std::size_t>(sel.box.start[d]) % align;
            found = true;
        }
    });
    std::size_t per = std::max<std::size_t>(1, target_bytes / std::max<std::size_t>(1, row_bytes));
    per = std::max(align, per / align * align);
    std::vector<std::size_t> bounds{0};
    std::size_t next = offset == 0 ? per : align - offset;
    while (next < rows) {
        bounds.push_back(next);
        next += per;
    }
    bounds.push_back(rows);
    return bounds;
}

/// Threads for the slabs: the most any lazy leaf's array is set to use.
template <class E>
int slab_threads(const E& e) {
    int threads = 1;
    for_each_lazy_leaf(
        e, [&](const auto& v) { threads = std::max(threads, v.array().any().nthreads()); });
    return threads;
}

template <class E>
bool has_lazy_leaf(const E& e) {
    bool any = false;
    for_each_lazy_leaf(e, [&](const auto&) { any = true; });
    return any;
}

/// About how many bytes of results one slab holds (tests make it small to get many slabs).
inline std::atomic<std::size_t> assign_slab_bytes{std::size_t{8} << 20};

inline std::size_t items_after_first(const std::vector<std::size_t>& shape) {
    std::size_t n = 1;
    for (std::size_t d = 1; d < shape.size(); ++d) {
        n *= shape[d];
    }
    return n;
}

/// A window on rows [r0, r1) of the row-major container c.
template <class C>
auto rows_window(C& c, std::size_t r0, std::size_t r1) {
    std::vector<std::size_t> shape(c.shape().begin(), c.shape().end());
    const std::size_t per_row = items_after_first(shape);
    shape[0] = r1 - r0;
    return xt::adapt(c.data() + r0 * per_row, (r1 - r0) * per_row, xt::no_ownership(),
                     std::move(shape));
}

/// Assigns the slab-evaluable `e` to `c` (row-major, resized to e's shape, at least one
/// dimension), slab by slab in parallel. False (and nothing done) when `e` reads no lazy view.
template <class C, class E>
bool assign_by_slabs(C& c, const E& e) {
    if (!has_lazy_leaf(e)) {
        return false;
    }
    const std::vector<std::size_t> shape(c.shape().begin(), c.shape().end());
    const std::size_t nd = shape.size();
    const auto bounds =
        slab_bounds(e, nd, shape[0], items_after_first(shape) * sizeof(typename C::value_type),
                    assign_slab_bytes.load());
    ScratchPool pool;
    parallel_for(bounds.size() - 1, slab_threads(e), [&](std::size_t k) {
        SlabScratch scratch(pool);
        auto out = rows_window(c, bounds[k], bounds[k + 1]);
        xt::noalias(out) = rows_of(e, nd, bounds[k], bounds[k + 1], scratch);
    });
    return true;
}

template <class E>
decltype(auto) prepare(const E& e);

/// Evaluates the reducer `r` (over an expression with lazy views) into the row-major container
/// `out` of its shape, slab by slab in parallel. False (and nothing done) when it cannot.
template <class C, class R>
bool reduce_by_slabs(C& out, const R& r) {
    decltype(auto) inner = prepare(r.expression());
    using I = std::decay_t<decltype(inner)>;
    if constexpr (!slab_evaluable<I>::value) {
        return false;
    } else {
        using V = typename R::value_type;
        const std::size_t nd = inner.dimension();
        if (nd == 0 || inner.size() == 0 || !has_lazy_leaf(inner)) {
            return false;
        }
        const std::vector<std::size_t> ishape(inner.shape().begin(), inner.shape().end());
        const std::size_t rows = ishape[0];
        // Whether the first axis is reduced: a reducer over one row has the result's shape.
        const auto probe_shape = [&] {
            auto s = ishape;
            s[0] = 1;
            return s;
        }();
        const auto probe = r.build_reducer(xt::broadcast(typename I::value_type{}, probe_shape));
        const bool first_reduced =
            rows == 1 || std::equal(probe.shape().begin(), probe.shape().end(), out.shape().begin(),
                                    out.shape().end());
        if (first_reduced && std::decay_t<decltype(r.options())>::has_initial_value) {
            return false;  // the initial value would count once per slab
        }
        const auto bounds =
            slab_bounds(inner, nd, rows, items_after_first(ishape) * sizeof(typename I::value_type),
                        assign_slab_bytes.load());
        const std::size_t nslabs = bounds.size() - 1;
        const int threads = slab_threads(inner);
        ScratchPool pool;
        if (!first_reduced) {  // the result's rows are the slabs' rows
            parallel_for(nslabs, threads, [&](std::size_t k) {
                SlabScratch scratch(pool);
                auto part = rows_window(out, bounds[k], bounds[k + 1]);
                xt::noalias(part) =
                    r.build_reducer(rows_of(inner, nd, bounds[k], bounds[k + 1], scratch));
            });
            return true;
        }
        // Contiguous runs of slabs per thread, each merged into its own partial result; the
        // partials are merged in order.
        const std::size_t groups =
            std::min<std::size_t>(nslabs, static_cast<std::size_t>(std::max(threads, 1)));
        const std::vector<std::size_t> rshape(out.shape().begin(), out.shape().end());
        std::vector<xt::xarray<V>> partial(groups);
        const auto merge = r.functors().get_merge();
        auto merge_into = [&merge](xt::xarray<V>& acc, const xt::xarray<V>& more) {
            V* a = acc.data();
            const V* b = more.data();
            for (std::size_t i = 0, n = acc.size(); i < n; ++i) {
                a[i] = static_cast<V>(merge(a[i], b[i]));
            }
        };
        parallel_for(groups, threads, [&](std::size_t g) {
            const std::size_t first = g * nslabs / groups, last = (g + 1) * nslabs / groups;
            xt::xarray<V> part(rshape);
            for (std::size_t k = first; k < last; ++k) {
                SlabScratch scratch(pool);
                auto& target = k == first ? partial[g] : part;
                if (k == first) {
                    target.resize(rshape);
                }
                xt::noalias(target) =
                    r.build_reducer(rows_of(inner, nd, bounds[k], bounds[k + 1], scratch));
                if (k != first) {
                    merge_into(partial[g], part);
                }
            }
        });
        for (std::size_t g = 1; g < groups; ++g) {
            merge_into(partial[0], partial[g]);
        }
        std::copy(partial[0].data(), partial[0].data() + partial[0].size(), out.data());
        return true;
    }
}

/// `e` with every reducer over lazy views evaluated (in parallel) into a container; functions
/// rebuilt over the results; anything else as it is.
template <class E>
decltype(auto) prepare(const E& e) {
    if constexpr (is_xreducer<E>::value) {
        xt::xarray<typename E::value_type> out;
        out.resize(std::vector<std::size_t>(e.shape().begin(), e.shape().end()));
        if (!reduce_by_slabs(out, e)) {
            xt::xexpression_assigner_base<xt::xtensor_expression_tag>::assign_data(out, e, false);
        }
        return out;
    } else if constexpr (is_xfunction<E>::value) {
        return std::apply(
            [&](const auto&... args) {
                using F = typename E::functor_type;
                using R = xt::xfunction<F, xt::const_xclosure_t<decltype(prepare(args))>...>;
                return R(F(e.functor()), prepare(args)...);
            },
            e.arguments());
    } else {
        return (e);
    }
}

}  // namespace xtensor_detail
}  // namespace b2nd

namespace xt {

namespace detail {
template <class F, class... E>
struct select_xfunction_expression<b2nd::lazy_expression_tag, F, E...> {
    using type = xfunction<F, E...>;
};
}  // namespace detail

template <class T>
struct temporary_type_from_tag<b2nd::lazy_expression_tag, T>
    : temporary_type_from_tag<xtensor_expression_tag, T> {};

namespace extension {

template <class F, class... CT>
struct xfunction_base_impl<b2nd::lazy_expression_tag, F, CT...> {
    using type = b2nd::xtensor_detail::lazy_empty_base;
};
template <class CT, class... S>
struct xview_base_impl<b2nd::lazy_expression_tag, CT, S...> {
    using type = b2nd::xtensor_detail::lazy_empty_base;
};
template <class CT, class S, layout_type L, class FST>
struct xstrided_view_base_impl<b2nd::lazy_expression_tag, CT, S, L, FST> {
    using type = b2nd::xtensor_detail::lazy_empty_base;
};
template <class CT, class S, layout_type L, class FST>
struct xdynamic_view_base_impl<b2nd::lazy_expression_tag, CT, S, L, FST> {
    using type = b2nd::xtensor_detail::lazy_empty_base;
};
template <class F, class CT>
struct xfunctor_view_base_impl<b2nd::lazy_expression_tag, F, CT> {
    using type = b2nd::xtensor_detail::lazy_empty_base;
};
template <class F, class CT, class X, class O>
struct xreducer_base_impl<b2nd::lazy_expression_tag, F, CT, X, O> {
    using type = b2nd::xtensor_detail::lazy_empty_base;
};
template <class CT, class X>
struct xbroadcast_base_impl<b2nd::lazy_expression_tag, CT, X> {
    using type = b2nd::xtensor_detail::lazy_empty_base;
};
template <class F, class R, class S>
struct xgenerator_base_impl<b2nd::lazy_expression_tag, F, R, S> {
    using type = b2nd::xtensor_detail::lazy_empty_base;
};
template <class CT>
struct xscalar_base_impl<b2nd::lazy_expression_tag, CT> {
    using type = b2nd::xtensor_detail::lazy_empty_base;
};
template <class CT, class X>
struct xrepeat_base_impl<b2nd::lazy_expression_tag, CT, X> {
    using type = b2nd::xtensor_detail::lazy_empty_base;
};
template <class CT, class I>
struct xindex_view_base_impl<b2nd::lazy_expression_tag, CT, I> {
    using type = b2nd::xtensor_detail::lazy_empty_base;
};

}  // namespace extension

/// Expressions over lazy views: slab by slab in parallel into row-major containers where
/// assign.hpp's header comment says; xtensor's own assignment otherwise.
template <>
class xexpression_assigner_base<b2nd::lazy_expression_tag> {
public:
    template <class E1, class E2>
    static void assign_data(xexpression<E1>& e1, const xexpression<E2>& e2, bool trivial) {
        namespace d = b2nd::xtensor_detail;
        using base = xexpression_assigner_base<xtensor_expression_tag>;
        E1& c = e1.derived_cast();
        const E2& e = e2.derived_cast();
        if constexpr (d::is_resizable_container<E1>::value) {
            if (c.layout() == layout_type::row_major && c.size() > 0) {
                if constexpr (d::is_xreducer<E2>::value) {
                    if (d::reduce_by_slabs(c, e)) {
                        return;
                    }
                } else {
                    decltype(auto) p = d::prepare(e);
                    using P = std::decay_t<decltype(p)>;
                    if constexpr (d::slab_evaluable<P>::value) {
                        if (c.dimension() > 0 && d::assign_by_slabs(c, p)) {
                            return;
                        }
                    }
                    if constexpr (!std::is_same_v<P, E2>) {  // reducers were evaluated
                        base::assign_data(c, p, false);
                        return;
                    }
                }
            }
        }
        base::assign_data(e1, e2, trivial);
    }
};

}  // namespace xt
