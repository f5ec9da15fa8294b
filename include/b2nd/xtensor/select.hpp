// Boolean selections with xtensor expressions, out of core:
//
//   auto t = b2nd::open<float>("t.b2nd");
//   xt::xarray<float> hot = b2nd::filter(t, b2nd::view(t) > 30.0f);      // xt::filter's result
//   b2nd::write_masked(t, b2nd::view(t) < 0.0f, 0.0f);                   // a[a < 0] = 0
//   b2nd::compress_where(t, b2nd::view(t) > 30.0f, "hot.b2nd");          // a[mask] to a new array
//   b2nd::where(out, b2nd::view(t) > 0.0f, t, 0.0f);                     // xt::where, chunk by
//   chunk
//
// A condition is an NDArray<bool>, a lazy view, an expression over lazy views (`view(a) > 0`),
// arrays and scalars, or an in-memory xtensor container or expression of the array's shape. It is
// evaluated region by region (each lazy leaf reads only that region), never whole; expressions
// and the containers they refer to must outlive the call.
#pragma once

#include <initializer_list>
#include <type_traits>

#include <b2nd/mask.hpp>
#include <b2nd/xtensor/assign.hpp>
#include <b2nd/xtensor/evaluate.hpp>

namespace b2nd {

namespace xtensor_detail {

template <class E>
struct is_ndarray : std::false_type {};
template <class T>
struct is_ndarray<NDArray<T>> : std::true_type {};

/// An operand as an expression: arrays as lazy views of the whole array, anything else as is.
template <class E>
decltype(auto) as_expression(const E& e) {
    if constexpr (is_ndarray<E>::value) {
        return view(e);
    } else {
        return (e);
    }
}

/// The part of `e` that lies under `region` (a step-1 box) of a result of shape `out_shape`
/// (e broadcasts to it NumPy-style), in memory: lazy views read their window, containers are
/// viewed, scalars stay, and element-wise functions are rebuilt over their arguments' parts.
template <class E>
auto region_of(const E& e, const Box& region, const Shape& out_shape) {
    if constexpr (std::is_arithmetic_v<E> || is_xscalar<E>::value) {
        return e;
    } else if constexpr (is_lazy_view<E>::value) {
        return window(e, region, out_shape);
    } else if constexpr (is_xfunction<E>::value) {
        return std::apply(
            [&](const auto&... args) {
                using F = typename E::functor_type;
                using R = xt::xfunction<
                    F, xt::const_xclosure_t<decltype(region_of(args, region, out_shape))>...>;
                return R(F(e.functor()), region_of(args, region, out_shape)...);
            },
            e.arguments());
    } else {
        // An in-memory expression: its part, with dimensions of extent 1 broadcast.
        const auto& s = e.shape();
        const std::size_t nd = out_shape.size();
        if (s.size() > nd) {
            throw UsageError("b2nd: an operand of " + std::to_string(s.size()) +
                             " dimensions for a result of shape " + to_string(out_shape));
        }
        xt::xstrided_slice_vector sv;
        for (std::size_t k = 0; k < s.size(); ++k) {
            const std::size_t d = nd - s.size() + k;
            const auto extent = static_cast<std::int64_t>(s[k]);
            if (extent == out_shape[d]) {
                sv.push_back(xt::range(region.start[d], region.start[d] + region.count[d]));
            } else if (extent == 1) {
                sv.push_back(xt::range(0, 1));
            } else {
                throw UsageError("b2nd: an operand of shape " +
                                 to_string(Shape(s.begin(), s.end())) + " does not broadcast to " +
                                 to_string(out_shape));
            }
        }
        using V = typename std::decay_t<E>::value_type;
        xt::xarray<V> part = xt::strided_view(e, sv);
        return part;
    }
}

/// The shape of an operand (arrays, views, expressions, containers).
template <class E>
Shape shape_of(const E& e) {
    if constexpr (is_ndarray<E>::value) {
        return e.shape();
    } else {
        const auto& s = e.shape();
        return Shape(s.begin(), s.end());
    }
}

}  // namespace xtensor_detail

/// A Mask (b2nd/mask.hpp) of `shape` from a condition: an NDArray<bool> (read as stored), or any
/// expression (see the top of this file), evaluated region by region when the mask is read.
/// \throws UsageError when the condition's shape is not `shape`
template <class E>
Mask mask_of(const E& cond, const Shape& shape) {
    const Shape s = xtensor_detail::shape_of(cond);
    if (s != shape) {
        throw UsageError("b2nd: a condition of shape " + to_string(s) + " for an array of shape " +
                         to_string(shape));
    }
    if constexpr (std::is_same_v<E, NDArray<bool>>) {
        return Mask::of(cond.any());
    } else {
        Mask m;
        m.shape = shape;
        auto expr = xtensor_detail::as_expression(cond);
        m.region = [expr, shape](const Box& box, std::uint8_t* out) {
            std::vector<std::size_t> count(box.count.begin(), box.count.end());
            auto target =
                xt::adapt(out, static_cast<std::size_t>(box.size()), xt::no_ownership(), count);
            auto part = xtensor_detail::region_of(expr, box, shape);
            xt::noalias(target) = xt::cast<std::uint8_t>(xt::broadcast(part, count));
        };
        return m;
    }
}

/// a[cond]: the elements of `a` where `cond` (of a's shape) is true, in C order, as xt::filter
/// gives them, read block by block.
template <class T, class E>
xt::xarray<T> filter(const NDArray<T>& a, const E& cond) {
    const std::vector<T> v = a.read_masked(mask_of(cond, a.shape()));
    xt::xarray<T> out = xt::xarray<T>::from_shape({v.size()});
    std::copy(v.begin(), v.end(), out.begin());
    return out;
}

/// The elements at `indices` (each a container of ndim indices, as xt::index_view takes them),
/// in order, as a 1-d xt::xarray; each touched block is decoded once, blocks in parallel.
/// \throws UsageError naming the point, axis and index out of range
template <class T, class I>
xt::xarray<T> index_view(const NDArray<T>& a, const I& indices) {
    std::vector<Shape> points;
    points.reserve(indices.size());
    for (const auto& idx : indices) {
        points.emplace_back(idx.begin(), idx.end());
    }
    const std::vector<T> v = a.read_points(points);
    xt::xarray<T> out = xt::xarray<T>::from_shape({v.size()});
    std::copy(v.begin(), v.end(), out.begin());
    return out;
}
template <class T>
xt::xarray<T> index_view(const NDArray<T>& a, std::initializer_list<Shape> indices) {
    return index_view(a, std::vector<Shape>(indices));
}

/// a[cond] = value: only chunks holding a true element are rebuilt; one commit.
template <class T, class E>
void write_masked(NDArray<T>& a, const E& cond, const T& value) {
    a.write_masked(mask_of(cond, a.shape()), value);
}

/// a[cond] = data (one element per true element, C order).
template <class T, class E>
void write_masked(NDArray<T>& a, const E& cond, const std::vector<T>& data) {
    a.write_masked(mask_of(cond, a.shape()), data);
}

/// a[cond] into a new 1-d array at `path`, chunk by chunk (memory stays at a few chunks).
template <class T, class E>
NDArray<T> compress_where(const NDArray<T>& a,
                          const E& cond,
                          const std::string& path,
                          const CreateOptions& options = {}) {
    return NDArray<T>(compress_where(a.any(), mask_of(cond, a.shape()), path, options));
}

/// out = xt::where(cond, x, y), chunk by chunk in parallel with one commit: each operand (an
/// array, a lazy view, an expression over them, an in-memory container or a scalar) broadcasts
/// to out's shape and is read only under the chunk being computed. Operands may read `out`
/// itself; they see its content from before the call.
template <class T, class C, class X, class Y>
void where(
    NDArray<T>& out, const C& cond, const X& x, const Y& y, const EvaluateOptions& options = {}) {
    AnyArray& a = out.any();
    const Shape shape = out.shape();
    const auto c_expr = xtensor_detail::as_expression(cond);
    const auto x_expr = xtensor_detail::as_expression(x);
    const auto y_expr = xtensor_detail::as_expression(y);
    const bool swap = a.dtype().needs_byteswap();
    a.write_chunks(
        a.all_chunks(),
        [&](std::int64_t, const Box& region, std::uint8_t* dst) {
            std::vector<std::size_t> count(region.count.begin(), region.count.end());
            auto target =
                xt::adapt(reinterpret_cast<T*>(dst), static_cast<std::size_t>(region.size()),
                          xt::no_ownership(), count);
            auto c = xtensor_detail::region_of(c_expr, region, shape);
            auto vx = xtensor_detail::region_of(x_expr, region, shape);
            auto vy = xtensor_detail::region_of(y_expr, region, shape);
            xt::noalias(target) = xt::cast<T>(xt::broadcast(xt::where(c, vx, vy), count));
            if (swap) {
                a.dtype().byteswap(dst, region.size());
            }
        },
        options.nthreads, options.progress);
}

}  // namespace b2nd
