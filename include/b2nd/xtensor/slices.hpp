// xtensor slice arguments (integers, xt::range with or without steps and placeholders, xt::all,
// xt::keep, xt::drop, xt::newaxis, xt::ellipsis) as a b2nd::Selection, normalized exactly as
// xtensor normalizes them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <b2nd/selection.hpp>
#include <b2nd/xtensor/xtensor_includes.hpp>

namespace b2nd::xtensor_detail {

template <class S>
struct is_range_adaptor : std::false_type {};
template <class S>
struct is_index_slice : std::false_type {};  // xt::keep and xt::drop
template <class I>
struct is_index_slice<xt::xkeep_slice<I>> : std::true_type {};
template <class I>
struct is_index_slice<xt::xdrop_slice<I>> : std::true_type {};
template <class A, class B, class C>
struct is_range_adaptor<xt::xrange_adaptor<A, B, C>> : std::true_type {};

template <class S>
constexpr bool is_newaxis_v = std::is_same_v<std::decay_t<S>, xt::xnewaxis_tag>;
template <class S>
constexpr bool is_ellipsis_v = std::is_same_v<std::decay_t<S>, xt::xellipsis_tag>;
/// True for the arguments that walk a dimension of the array.
template <class S>
constexpr bool walks_dim_v = !is_newaxis_v<S> && !is_ellipsis_v<S>;

template <class>
constexpr bool always_false_v = false;

/// A normalized xtensor slice (xrange, xstepped_range, xall) as an explicit strided range.
template <class R>
DimIndex from_xslice(const R& r) {
    // xtensor leaves the size of a range walking away from its stop negative: it is empty.
    const auto count = std::max<std::int64_t>(0, static_cast<std::int64_t>(r.size()));
    const auto start = count > 0 ? static_cast<std::int64_t>(r(0)) : 0;
    const auto step = static_cast<std::int64_t>(r.step_size());
    return DimIndex::strided(start, count, step == 0 ? 1 : step);
}

/// One slice argument for a dimension of `size` elements.
template <class S>
DimIndex to_dim_index(const S& s, std::int64_t size) {
    using D = std::decay_t<S>;
    if constexpr (std::is_integral_v<D>) {
        return DimIndex(static_cast<std::int64_t>(s));
    } else if constexpr (std::is_same_v<D, xt::xall_tag>) {
        return Slice::all();
    } else if constexpr (is_newaxis_v<D>) {
        return DimIndex::newaxis();
    } else if constexpr (is_ellipsis_v<D>) {
        return DimIndex::ellipsis();
    } else if constexpr (is_index_slice<D>::value) {
        // The indices kept, in order (negative ones wrapped as xtensor wraps them; resolve()
        // checks the range). A selection with one becomes orthogonal.
        D copy = s;
        copy.normalize(static_cast<std::size_t>(size < 0 ? 0 : size));
        std::vector<std::int64_t> list(static_cast<std::size_t>(copy.size()));
        for (std::size_t i = 0; i < list.size(); ++i) {
            list[i] = static_cast<std::int64_t>(copy(static_cast<decltype(copy.size())>(i)));
        }
        return DimIndex::list(std::move(list));
    } else if constexpr (is_range_adaptor<D>::value) {
        return from_xslice(s.get(static_cast<std::size_t>(size < 0 ? 0 : size)));
    } else if constexpr (std::is_base_of_v<xt::xslice<D>, D>) {
        return from_xslice(s);
    } else {
        static_assert(always_false_v<D>,
                      "b2nd: slices are integers, xt::range, xt::all, xt::keep, xt::drop, "
                      "xt::newaxis or xt::ellipsis");
        return DimIndex(0);
    }
}

/// The selection of `slices` on an array of `shape`.
template <class... S>
Selection to_selection(const Shape& shape, const S&... slices) {
    constexpr std::int64_t walking = (std::int64_t{0} + ... + (walks_dim_v<S> ? 1 : 0));
    const auto ndim = static_cast<std::int64_t>(shape.size());
    Selection sel;
    std::int64_t dim = 0;
    auto one = [&](const auto& s) {
        using D = std::decay_t<decltype(s)>;
        if constexpr (is_ellipsis_v<D>) {
            sel.push_back(DimIndex::ellipsis());
            dim += ndim - walking;
        } else if constexpr (is_newaxis_v<D>) {
            sel.push_back(DimIndex::newaxis());
        } else {
            sel.push_back(to_dim_index(s, dim < ndim ? shape[static_cast<std::size_t>(dim)] : 0));
            ++dim;
        }
    };
    (one(slices), ...);
    (void)one;  // no slices: a selection of everything
    return sel;
}

}  // namespace b2nd::xtensor_detail
