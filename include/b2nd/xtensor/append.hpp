// Appending xtensor expressions (b2nd/appender.hpp):
//
//   b2nd::Appender<float> app(a, 0);
//   b2nd::push(app, frame * gain + offset);   // one slab: the array's shape without the axis
//   b2nd::push(app, xt::stack(...));          // or n slabs: the array's shape, n along the axis
//
// The expression is evaluated in slabs of bounded size, so it may be larger than memory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include <b2nd/appender.hpp>
#include <b2nd/error.hpp>
#include <b2nd/memory.hpp>
#include <b2nd/xtensor/lazy.hpp>
#include <b2nd/xtensor/xtensor_includes.hpp>

namespace b2nd {

/// Appends the expression `e` to app's array: of the array's shape without the axis (one slab),
/// or of the array's shape with any extent along the axis (that many slabs), its values
/// converted to T. Evaluated and pushed a bounded number of slabs at a time.
/// \throws UsageError for any other shape; what Appender::push throws
template <class T, class E>
void push(Appender<T>& app, const xt::xexpression<E>& e) {
    const E& expr = e.derived_cast();
    const AnyArray& a = app.any().array();
    const Shape& shape = a.shape();
    const int axis = app.axis();
    const auto ax = static_cast<std::size_t>(axis);
    const Shape es(expr.shape().begin(), expr.shape().end());
    Shape slab = shape;
    slab.erase(slab.begin() + axis);
    using buffer = xt::xarray<T, xt::layout_type::row_major, tracked_allocator<T>>;
    if (es == slab) {
        const buffer one = expr;
        app.push(one.data(), 1);
        return;
    }
    bool slabs = es.size() == shape.size();
    for (std::size_t d = 0; slabs && d < es.size(); ++d) {
        slabs = d == ax || es[d] == shape[d];
    }
    if (!slabs) {
        throw UsageError("\"" + a.name() + "\": push of an expression of shape " + to_string(es) +
                         ": neither a slab " + to_string(slab) + " nor slabs of it along axis " +
                         std::to_string(axis));
    }
    const std::int64_t n = es[ax];
    const std::int64_t slab_bytes = std::max<std::int64_t>(1, app.any().slab_bytes());
    const std::int64_t per =
        std::max<std::int64_t>(1, static_cast<std::int64_t>(kDefaultSlabBytes) / slab_bytes);
    for (std::int64_t first = 0; first < n; first += per) {
        const std::int64_t k = std::min(per, n - first);
        xt::xstrided_slice_vector sv(es.size(), xt::all());
        sv[ax] = xt::range(first, first + k);
        const buffer part = xt::strided_view(expr, sv);
        app.push(part.data(), k);
    }
}

}  // namespace b2nd
