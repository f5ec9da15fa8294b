// b2nd::view: a lazy window on an array that is an xtensor expression. Nothing is decoded when
// it is made; evaluating it (assigning it to a container, using it in an expression or a reducer)
// reads slabs of whole rows (along its first dimension) through the array engine, which decodes
// the touched blocks in parallel. Assigning a view to an xarray/xtensor reads straight into the
// container.
//
//   auto lazy = b2nd::view(t, xt::range(0, 100), xt::all(), 7);   // nothing decoded yet
//   double m = xt::mean(lazy)();                                     // decoded slab by slab
//   xt::xarray<float> a = lazy;                                      // one read into `a`
#pragma once

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include <b2nd/memory.hpp>
#include <b2nd/ndarray.hpp>
#include <b2nd/xtensor/lazy_stepper.hpp>
#include <b2nd/xtensor/slices.hpp>
#include <b2nd/xtensor/xtensor_includes.hpp>

namespace b2nd {

struct lazy_expression_tag;

namespace xtensor_detail {

/// Containers (xarray, xtensor) that can be resized and expose their data.
template <class E, class = void>
struct is_resizable_container : std::false_type {};
template <class E>
struct is_resizable_container<E,
                              std::void_t<decltype(std::declval<E&>().resize(
                                              std::declval<const std::vector<std::size_t>&>())),
                                          decltype(std::declval<E&>().data())>> : std::true_type {};

/// `box` with the array dimension `dim` (-1: none, a new axis) narrowed to rows [first, +rows)
/// of the selection along it.
inline Box narrow(Box box, int dim, std::int64_t first, std::int64_t rows) {
    if (dim >= 0) {
        const auto d = static_cast<std::size_t>(dim);
        box.start[d] += first * box.step[d];
        box.count[d] = rows;
    }
    return box;
}

/// The selection `r` narrowed to rows [first, first + rows) of its first result dimension (a
/// box narrowed, or the first dimension's index list cut).
inline Resolved narrow_rows(const Resolved& r, std::int64_t first, std::int64_t rows) {
    Resolved out = r;
    if (r.shape.empty()) {
        return out;
    }
    out.shape[0] = rows;
    const int d = r.dims[0];
    if (d < 0) {
        return out;  // a new axis: one row
    }
    if (!r.orthogonal()) {
        out.box = narrow(r.box, d, first, rows);
    } else if (out.size() > 0) {
        const auto& l = r.lists[static_cast<std::size_t>(d)];
        out.lists[static_cast<std::size_t>(d)].assign(l.begin() + first, l.begin() + first + rows);
    }
    return out;
}

}  // namespace xtensor_detail

/// Default bytes of one slab a lazy view decodes at a time.
inline constexpr std::size_t kDefaultSlabBytes = std::size_t{32} << 20;

}  // namespace b2nd

namespace xt {

template <class T>
struct xiterable_inner_types<b2nd::LazyView<T>> {
    using inner_shape_type = std::vector<std::size_t>;
    using const_stepper = b2nd::LazyViewStepper<T>;
    using stepper = const_stepper;
};

template <class T>
struct xcontainer_inner_types<b2nd::LazyView<T>> {
    using reference = T;
    using const_reference = T;
    using size_type = std::size_t;
};

}  // namespace xt

namespace b2nd {

/// A lazy view of an NDArray<T> (b2nd::view): an xtensor expression over a selection of the
/// array that decodes nothing until it is read, then a slab of blocks at a time. Usable wherever
/// xtensor takes an expression: assignments, arithmetic, reducers, xt::view.
template <class T>
class LazyView : public xt::xsharable_expression<LazyView<T>>,
                 public xt::xconst_iterable<LazyView<T>>,
                 public xt::xconst_accessible<LazyView<T>> {
public:
    /// \cond XTENSOR_PROTOCOL (the types and members xtensor's expression machinery asks for)
    using self_type = LazyView<T>;
    using accessible_base = xt::xconst_accessible<self_type>;
    using iterable_base = xt::xconst_iterable<self_type>;
    using expression_tag = lazy_expression_tag;  // assign.hpp
    using value_type = T;
    using reference = T;
    using const_reference = T;
    using pointer = const T*;
    using const_pointer = const T*;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using inner_shape_type = std::vector<std::size_t>;
    using shape_type = inner_shape_type;
    using stepper = LazyViewStepper<T>;
    using const_stepper = stepper;
    using bool_load_type = xt::bool_load_type<T>;
    static constexpr xt::layout_type static_layout = xt::layout_type::dynamic;
    static constexpr bool contiguous_layout = false;
    /// \endcond

    /// The selection `r` of `array`; decodes up to slab_bytes at a time. A view reads one
    /// committed state: an array that follows other writers is pinned (AnyArray::pinned()).
    LazyView(const NDArray<T>& array, Resolved r, std::size_t slab_bytes = kDefaultSlabBytes)
        : state_(std::make_shared<State>(array.pinned(), std::move(r), slab_bytes)) {}

    /// The view's shape.
    const inner_shape_type& shape() const noexcept { return state_->shape; }
    using accessible_base::shape;
    /// Dynamic: elements are computed, not laid out in memory.
    xt::layout_type layout() const noexcept { return static_layout; }
    /// False: elements are computed, not laid out in memory.
    bool is_contiguous() const noexcept { return false; }

    /// The array and the part of it this view shows.
    const NDArray<T>& array() const noexcept { return state_->array; }
    /// The part of the array it shows.
    const Resolved& selection() const noexcept { return state_->sel; }

    /// The element at these coordinates (decodes its block, through the array's cache).
    template <class... Args>
    T operator()(Args... args) const {
        const std::array<std::int64_t, sizeof...(Args)> a{static_cast<std::int64_t>(args)...};
        return at_index(a.begin(), a.end());
    }
    /// operator(), as xtensor names it.
    template <class... Args>
    T unchecked(Args... args) const {
        return (*this)(args...);
    }
    /// The element at the coordinates [first, last).
    template <class It>
    T element(It first, It last) const {
        return at_index(first, last);
    }

    /// \cond XTENSOR_PROTOCOL
    template <class O>
    bool broadcast_shape(O& shape, bool = false) const {
        return xt::broadcast_shape(state_->shape, shape);
    }
    template <class O>
    bool has_linear_assign(const O&) const noexcept {
        return false;
    }
    template <class O>
    const_stepper stepper_begin(const O& shape) const {
        return const_stepper(this, shape.size() - this->dimension(), false);
    }
    template <class O>
    const_stepper stepper_end(const O& shape, xt::layout_type) const {
        return const_stepper(this, shape.size() - this->dimension(), true);
    }
    /// \endcond

    /// Assignment to a container reads straight into it (xtensor calls this for `c = view`).
    template <class E>
    void assign_to(xt::xexpression<E>& e) const {
        E& d = e.derived_cast();
        if constexpr (std::is_same_v<typename E::value_type, T> &&
                      xtensor_detail::is_resizable_container<E>::value) {
            d.resize(state_->shape);
            if (d.layout() == xt::layout_type::row_major) {
                state_->array.read(state_->sel, d.data());
                return;
            }
        }
        const auto n = state_->sel.size();
        tracked_vector<std::uint8_t> tmp(static_cast<std::size_t>(n) * sizeof(T));
        state_->read_into(state_->sel, tmp.data());
        d = xt::adapt(reinterpret_cast<const T*>(tmp.data()), static_cast<std::size_t>(n),
                      xt::no_ownership(), state_->shape);
    }

    // ---- internals used by the stepper ----
    /// Elements between consecutive indices of dimension d (C order of the view's shape).
    std::int64_t stride(std::size_t d) const noexcept { return state_->strides[d]; }
    /// The slab holding row `row` of the view (decoded on first use, kept in a small LRU).
    std::shared_ptr<const xtensor_detail::Slab> slab(std::int64_t row) const {
        return state_->slab(row);
    }

private:
    struct State {
        NDArray<T> array;
        Resolved sel;
        inner_shape_type shape;
        std::vector<std::int64_t> strides;
        int row_dim = -1;  // array dimension of the view's first dimension (-1: a new axis)
        std::int64_t nrows = 1;
        std::int64_t slab_rows = 1;
        std::size_t max_slabs = 2;
        std::mutex mutex;
        std::list<std::shared_ptr<const xtensor_detail::Slab>> slabs;  // most recent first

        State(NDArray<T> a, Resolved r, std::size_t slab_bytes)
            : array(std::move(a)), sel(std::move(r)) {
            const std::size_t nd = sel.shape.size();
            shape.assign(sel.shape.begin(), sel.shape.end());
            strides = c_strides(sel.shape);
            if (nd > 0) {
                row_dim = sel.dims[0];
                nrows = sel.shape[0];
            }
            const std::int64_t row_bytes = std::max<std::int64_t>(
                1, (nd > 0 ? strides[0] : 1) * static_cast<std::int64_t>(sizeof(T)));
            slab_rows =
                std::max<std::int64_t>(1, static_cast<std::int64_t>(slab_bytes) / row_bytes);
        }

        std::shared_ptr<const xtensor_detail::Slab> slab(std::int64_t row) {
            {
                std::lock_guard<std::mutex> g(mutex);
                for (auto it = slabs.begin(); it != slabs.end(); ++it) {
                    if (row >= (*it)->first && row < (*it)->first + (*it)->rows) {
                        slabs.splice(slabs.begin(), slabs, it);
                        return slabs.front();
                    }
                }
            }
            auto s = std::make_shared<xtensor_detail::Slab>();
            s->first = row - row % slab_rows;
            s->rows = std::min(slab_rows, nrows - s->first);
            const Resolved b = xtensor_detail::narrow_rows(sel, s->first, s->rows);
            s->bytes.resize(static_cast<std::size_t>(b.size()) * sizeof(T));
            read_into(b, s->bytes.data());
            std::lock_guard<std::mutex> g(mutex);
            slabs.push_front(std::move(s));
            if (slabs.size() > max_slabs) {
                slabs.pop_back();
            }
            return slabs.front();
        }

        /// Reads `b` as native T values into `out` (b.size() * sizeof(T) bytes).
        void read_into(const Resolved& b, std::uint8_t* out) const {
            array.read(b, reinterpret_cast<T*>(out));  // byte order converted, bools normalized
        }
    };

    /// The element at the indices [first, last): xtensor's rule, surplus leading indices are
    /// ignored and missing leading ones are 0.
    template <class It>
    T at_index(It first, It last) const {
        const std::size_t nd = state_->shape.size();
        const auto given = static_cast<std::size_t>(std::distance(first, last));
        auto index = [&](std::size_t d) -> std::int64_t {
            return d + given >= nd ? static_cast<std::int64_t>(*std::next(
                                         first, static_cast<std::ptrdiff_t>(d + given - nd)))
                                   : 0;
        };
        std::int64_t pos = 0;
        for (std::size_t d = 0; d < nd; ++d) {
            const std::int64_t i = index(d);
            if (i < 0 || i >= static_cast<std::int64_t>(state_->shape[d])) {
                throw UsageError("b2nd::view: index " + std::to_string(i) +
                                 " out of range for dimension " + std::to_string(d) + " of size " +
                                 std::to_string(state_->shape[d]));
            }
            pos += i * state_->strides[d];
        }
        const std::int64_t row = nd > 0 ? index(0) : 0;
        const auto s = state_->slab(row);
        pos -= s->first * (nd > 0 ? state_->strides[0] : 0);
        T v;
        std::memcpy(&v, s->bytes.data() + pos * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
        return v;
    }

    std::shared_ptr<State> state_;
};

// ---- making views, reading, writing -------------------------------------------------------------

/// A lazy view of `array` (xtensor slices: integers, xt::range, xt::all, xt::keep, xt::drop,
/// xt::newaxis, xt::ellipsis; index lists select orthogonally, as xt::view does). Nothing is
/// decoded until it is evaluated.
template <class T, class... S>
LazyView<T> view(const NDArray<T>& array, const S&... slices) {
    return LazyView<T>(
        array, resolve(array.shape(), xtensor_detail::to_selection(array.shape(), slices...)));
}

namespace xtensor_detail {

/// A selection `child` of the result of `parent`, as a selection of the array.
inline Resolved compose(const Resolved& parent, const Resolved& child) {
    Resolved r;
    r.shape = child.shape;
    for (int c : child.dims) {
        r.dims.push_back(c < 0 ? -1 : parent.dims[static_cast<std::size_t>(c)]);
    }
    if (!parent.orthogonal() && !child.orthogonal()) {
        r.box = parent.box;  // dimensions the parent dropped stay as they are
        for (std::size_t k = 0; k < parent.dims.size(); ++k) {
            const int b = parent.dims[k];
            if (b < 0) {
                continue;  // a new axis of the parent: length 1, nothing in the array to narrow
            }
            const auto u = static_cast<std::size_t>(b);
            r.box.start[u] = parent.box.start[u] + child.box.start[k] * parent.box.step[u];
            r.box.count[u] = child.box.count[k];
            r.box.step[u] = parent.box.step[u] * child.box.step[k];
        }
        return r;
    }
    // Index lists: each array dimension the parent walks takes the parent's indices at the
    // child's positions; the others keep the parent's one index.
    const std::size_t nd = parent.box.start.size();
    r.lists.resize(nd);
    r.box = parent.box;
    if (r.size() == 0 || parent.size() == 0) {
        return r;
    }
    for (std::size_t u = 0; u < nd; ++u) {
        r.lists[u] = parent.indices(u);
    }
    for (std::size_t k = 0; k < parent.dims.size(); ++k) {
        if (parent.dims[k] < 0) {
            continue;
        }
        const auto u = static_cast<std::size_t>(parent.dims[k]);
        const std::vector<std::int64_t> from = parent.indices(u);
        const std::vector<std::int64_t> pick = child.indices(k);
        std::vector<std::int64_t>& to = r.lists[u];
        to.resize(pick.size());
        for (std::size_t j = 0; j < pick.size(); ++j) {
            to[j] = from[static_cast<std::size_t>(pick[j])];
        }
    }
    for (std::size_t u = 0; u < nd; ++u) {
        const auto& l = r.lists[u];
        const auto [lo, hi] = std::minmax_element(l.begin(), l.end());
        r.box.start[u] = l.empty() ? 0 : *lo;
        r.box.count[u] = l.empty() ? 0 : *hi - *lo + 1;
        r.box.step[u] = 1;
    }
    return r;
}

}  // namespace xtensor_detail

/// A view of a view: the slices apply to the view's own dimensions; still nothing is decoded.
template <class T, class... S>
LazyView<T> view(const LazyView<T>& v, const S&... slices) {
    const Resolved& parent = v.selection();
    return LazyView<T>(
        v.array(),
        xtensor_detail::compose(
            parent, resolve(parent.shape, xtensor_detail::to_selection(parent.shape, slices...))));
}

/// numpy.squeeze: the view without its axes of length 1 (all of them, or those in `axes`,
/// negative counting from the end). Metadata only: nothing is read.
/// \throws UsageError for an axis out of range or not of length 1
template <class T>
LazyView<T> squeeze(const LazyView<T>& v, const std::vector<int>& axes = {}) {
    const Resolved& parent = v.selection();
    const auto nd = static_cast<int>(parent.shape.size());
    Selection sel(parent.shape.size(), DimIndex(Slice::all()));
    for (int d = 0; d < nd; ++d) {
        if (axes.empty() && parent.shape[static_cast<std::size_t>(d)] == 1) {
            sel[static_cast<std::size_t>(d)] = DimIndex(0);
        }
    }
    for (int a : axes) {
        const int d = a < 0 ? a + nd : a;
        if (d < 0 || d >= nd || parent.shape[static_cast<std::size_t>(d)] != 1) {
            throw UsageError("\"" + v.array().path() + "\": cannot squeeze axis " +
                             std::to_string(a) + " of shape " + to_string(parent.shape) +
                             ": only axes of length 1");
        }
        sel[static_cast<std::size_t>(d)] = DimIndex(0);
    }
    return LazyView<T>(v.array(), xtensor_detail::compose(parent, resolve(parent.shape, sel)));
}

template <class T>
LazyView<T> squeeze(const NDArray<T>& array, const std::vector<int>& axes = {}) {
    return b2nd::squeeze(LazyView<T>(array, resolve(array.shape(), {})), axes);
}

/// numpy.expand_dims: the view with a new axis of length 1 at `axis` of the result (negative
/// counting from its end). Metadata only: nothing is read. \throws UsageError for an axis out
/// of range
template <class T>
LazyView<T> expand_dims(const LazyView<T>& v, int axis) {
    const Resolved& parent = v.selection();
    const auto nd = static_cast<int>(parent.shape.size()) + 1;
    const int d = axis < 0 ? axis + nd : axis;
    if (d < 0 || d >= nd) {
        throw UsageError("\"" + v.array().path() + "\": cannot insert axis " +
                         std::to_string(axis) + " into shape " + to_string(parent.shape));
    }
    Selection sel(parent.shape.size(), DimIndex(Slice::all()));
    sel.insert(sel.begin() + d, DimIndex::newaxis());
    return LazyView<T>(v.array(), xtensor_detail::compose(parent, resolve(parent.shape, sel)));
}

template <class T>
LazyView<T> expand_dims(const NDArray<T>& array, int axis) {
    return b2nd::expand_dims(LazyView<T>(array, resolve(array.shape(), {})), axis);
}

/// Reads a selection into an xt::xarray (the touched blocks only, decoded in parallel).
template <class T, class... S>
xt::xarray<T> read(const NDArray<T>& array, const S&... slices) {
    xt::xarray<T> out = view(array, slices...);
    return out;
}

namespace xtensor_detail {

template <class T, class E, std::size_t... I, class Tuple>
void write_impl(NDArray<T>& array, const E& expr, const Tuple& slices, std::index_sequence<I...>) {
    const Resolved r = resolve(array.shape(), to_selection(array.shape(), std::get<I>(slices)...));
    const std::size_t nd = r.shape.size();
    std::vector<std::size_t> shape(r.shape.begin(), r.shape.end());
    if constexpr (xt::is_xexpression<E>::value) {  // before xtensor's "Incompatible dimension"
        const Shape es(expr.shape().begin(), expr.shape().end());
        if (!broadcasts_to(es, r.shape)) {
            throw UsageError("\"" + array.path() + "\": write: an expression of shape " +
                             to_string(es) + " does not broadcast to the selection's shape " +
                             to_string(r.shape));
        }
    }
    auto&& all = [&]() -> decltype(auto) {
        if constexpr (std::is_arithmetic_v<E> || std::is_same_v<E, std::complex<float>> ||
                      std::is_same_v<E, std::complex<double>>) {
            return xt::broadcast(static_cast<T>(expr), shape);
        } else {
            return xt::broadcast(expr, shape);
        }
    }();
    // Slabs of whole rows along the first dimension, each evaluated and written in one call.
    const std::int64_t rows = nd > 0 ? r.shape[0] : 1;
    std::int64_t row_items = 1;
    for (std::size_t d = 1; d < nd; ++d) {
        row_items *= r.shape[d];
    }
    const std::int64_t per = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(kDefaultSlabBytes) /
               std::max<std::int64_t>(1, row_items * static_cast<std::int64_t>(sizeof(T))));
    using buffer = xt::xarray<T, xt::layout_type::row_major, tracked_allocator<T>>;
    for (std::int64_t first = 0; first < rows; first += per) {
        const std::int64_t n = std::min(per, rows - first);
        buffer values;
        if (nd == 0) {
            values = all;
        } else {
            values = xt::view(all, xt::range(first, first + n));
        }
        array.write(narrow_rows(r, first, n), values.data(), values.size());
    }
}

}  // namespace xtensor_detail

/// Writes an xtensor expression (or a scalar), broadcast to the selection's shape, into a
/// selection of `array`: write(a, xt::range(0, 10), xt::all(), expr). Evaluated and written in
/// slabs, so the expression may be larger than memory.
template <class T, class... Args>
void write(NDArray<T>& array, const Args&... args) {
    static_assert(sizeof...(Args) >= 1, "b2nd::write(array, slices..., expression)");
    const auto all = std::forward_as_tuple(args...);
    const auto& expr = std::get<sizeof...(Args) - 1>(all);
    xtensor_detail::write_impl(array, expr, all, std::make_index_sequence<sizeof...(Args) - 1>{});
}

}  // namespace b2nd
