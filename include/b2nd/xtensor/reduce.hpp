// Reductions of arrays of any size, chunk by chunk in parallel: sum, mean, amin, amax, over the
// whole array or along one axis. Uniform chunks (zeros, a repeated value) are not decoded.
//
//   double total = b2nd::sum(t);                  // of a float array: accumulated in double
//   xt::xarray<double> daily = b2nd::mean(t, 0);  // along axis 0
#pragma once

#include <complex>
#include <cstring>
#include <limits>
#include <mutex>
#include <type_traits>
#include <vector>

#include <b2nd/ndarray.hpp>
#include <b2nd/xtensor/xtensor_includes.hpp>

namespace b2nd {

/// The accumulator of sum(): double for floats, int64 / uint64 for integers (bool counts).
template <class T>
using sum_type_t =
    std::conditional_t<std::is_floating_point_v<T>,
                       double,
                       std::conditional_t<std::is_same_v<T, bool> || std::is_unsigned_v<T>,
                                          std::uint64_t,
                                          std::int64_t>>;

namespace xtensor_detail {

/// Keeps the reductions out of overload sets where a caller names T = void explicitly (xtensor's
/// own unqualified sum<T>(...) calls find them by argument-dependent lookup on b2nd types).
template <class T>
using if_element = std::enable_if_t<!std::is_void_v<T>, int>;

template <class T>
struct SumOp {
    using acc = sum_type_t<T>;
    static acc identity() { return acc(0); }
    static acc one(T v) { return static_cast<acc>(v); }
    static acc repeated(T v, std::int64_t n) { return static_cast<acc>(v) * static_cast<acc>(n); }
    static void merge(acc& a, acc b) { a += b; }
    /// The sum of n values, with independent partial sums (no loop-carried dependency).
    static acc many(const T* v, std::int64_t n) {
        acc p[8] = {};
        std::int64_t i = 0;
        for (; i + 8 <= n; i += 8) {
            for (int l = 0; l < 8; ++l) {
                p[l] += static_cast<acc>(v[i + l]);
            }
        }
        for (; i < n; ++i) {
            p[0] += static_cast<acc>(v[i]);
        }
        return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
    }
};
/// Minimum (Larger = false) or maximum (Larger = true).
template <class T, bool Larger>
struct ExtremeOp {
    using acc = T;
    static acc identity() {
        return Larger ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
    static acc one(T v) { return v; }
    static acc repeated(T v, std::int64_t) { return v; }
    static void merge(acc& a, acc b) {
        if (Larger ? a < b : b < a) {
            a = b;
        }
    }
    static acc many(const T* v, std::int64_t n) {
        acc r = identity();
        for (std::int64_t i = 0; i < n; ++i) {
            merge(r, v[i]);
        }
        return r;
    }
};
template <class T>
using MinOp = ExtremeOp<T, false>;
template <class T>
using MaxOp = ExtremeOp<T, true>;

/// Visits every chunk of `a`, handing fn(region, values) native values (nullptr + `uniform`
/// for uniform chunks).
template <class T, class Fn>
void visit_values(const NDArray<T>& a, Fn&& fn) {
    const AnyArray& any = a.any();
    const bool swap = any.dtype().needs_byteswap();
    any.for_each_chunk(any.all_chunks(),
                       [&](std::int64_t, const Box& region, const std::uint8_t* data,
                           const std::uint8_t* uniform) {
                           if (data == nullptr) {
                               T v;
                               std::memcpy(&v, uniform, sizeof(T));
                               if (swap) {
                                   any.dtype().byteswap(reinterpret_cast<std::uint8_t*>(&v), 1);
                               }
                               fn(region, static_cast<const T*>(nullptr), v);
                               return;
                           }
                           const auto n = static_cast<std::size_t>(region.size());
                           if (!swap && !std::is_same_v<T, bool>) {
                               fn(region, reinterpret_cast<const T*>(data), T{});
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
                           fn(region, reinterpret_cast<const T*>(copy.data()), T{});
                       });
}

template <class T, class Op>
typename Op::acc reduce_all(const NDArray<T>& a) {
    typename Op::acc total = Op::identity();
    std::mutex m;
    visit_values(a, [&](const Box& region, const T* values, T uniform) {
        typename Op::acc part = Op::identity();
        if (values == nullptr) {
            part = Op::repeated(uniform, region.size());
        } else {
            part = Op::many(values, region.size());
        }
        std::lock_guard<std::mutex> g(m);
        Op::merge(total, part);
    });
    return total;
}

template <class T, class Op>
xt::xarray<typename Op::acc> reduce_axis(const NDArray<T>& a, int axis) {
    const Shape& shape = a.shape();
    const int nd = static_cast<int>(shape.size());
    if (axis < 0) {
        axis += nd;
    }
    if (axis < 0 || axis >= nd) {
        throw UsageError("\"" + a.path() + "\": axis out of range for shape " + to_string(shape));
    }
    const auto ax = static_cast<std::size_t>(axis);
    std::vector<std::size_t> out_shape;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        if (d != ax) {
            out_shape.push_back(static_cast<std::size_t>(shape[d]));
        }
    }
    xt::xarray<typename Op::acc> out(out_shape, Op::identity());
    std::vector<std::int64_t> out_strides(out_shape.size());
    c_strides(out_shape.data(), out_shape.size(), 1, out_strides.data());
    std::mutex m;
    visit_values(a, [&](const Box& region, const T* values, T uniform) {
        // The region's partial result, C order over its dimensions other than the axis.
        std::vector<std::int64_t> pshape;
        for (std::size_t d = 0; d < region.count.size(); ++d) {
            if (d != ax) {
                pshape.push_back(region.count[d]);
            }
        }
        std::int64_t pn = 1;
        for (std::int64_t v : pshape) {
            pn *= v;
        }
        std::vector<typename Op::acc> part(static_cast<std::size_t>(pn));
        if (values == nullptr) {
            std::fill(part.begin(), part.end(), Op::repeated(uniform, region.count[ax]));
        } else {
            std::vector<std::int64_t> k(region.count.size(), 0);
            for (std::int64_t i = 0; i < region.size(); ++i) {
                std::int64_t p = 0;
                for (std::size_t d = 0; d < k.size(); ++d) {
                    if (d != ax) {
                        p = p * region.count[d] + k[d];
                    }
                }
                auto& slot = part[static_cast<std::size_t>(p)];
                if (k[ax] == 0) {
                    slot = Op::one(values[i]);  // C order visits axis index 0 first
                } else {
                    Op::merge(slot, Op::one(values[i]));
                }
                next_index(k.data(), region.count.data(), k.size());
            }
        }
        // Merge into the output at the region's place.
        std::vector<std::int64_t> k(pshape.size(), 0);
        std::vector<std::int64_t> origin;
        for (std::size_t d = 0; d < region.start.size(); ++d) {
            if (d != ax) {
                origin.push_back(region.start[d]);
            }
        }
        std::lock_guard<std::mutex> g(m);
        for (std::int64_t i = 0; i < pn; ++i) {
            std::int64_t o = 0;
            for (std::size_t d = 0; d < k.size(); ++d) {
                o += (origin[d] + k[d]) * out_strides[d];
            }
            Op::merge(out.data()[o], part[static_cast<std::size_t>(i)]);
            next_index(k.data(), pshape.data(), k.size());
        }
    });
    return out;
}

}  // namespace xtensor_detail

/// The sum of all elements (see sum_type_t).
template <class T, xtensor_detail::if_element<T> = 0>
sum_type_t<T> sum(const NDArray<T>& a) {
    return xtensor_detail::reduce_all<T, xtensor_detail::SumOp<T>>(a);
}
/// The mean of all elements. \throws UsageError for an empty array
template <class T, xtensor_detail::if_element<T> = 0>
double mean(const NDArray<T>& a) {
    if (a.size() == 0) {
        throw UsageError("\"" + a.path() + "\": the mean of an empty array");
    }
    return static_cast<double>(sum(a)) / static_cast<double>(a.size());
}
/// The smallest element. \throws UsageError for an empty array
template <class T, xtensor_detail::if_element<T> = 0>
T amin(const NDArray<T>& a) {
    if (a.size() == 0) {
        throw UsageError("\"" + a.path() + "\": the minimum of an empty array");
    }
    return xtensor_detail::reduce_all<T, xtensor_detail::MinOp<T>>(a);
}
/// The largest element. \throws UsageError for an empty array
template <class T, xtensor_detail::if_element<T> = 0>
T amax(const NDArray<T>& a) {
    if (a.size() == 0) {
        throw UsageError("\"" + a.path() + "\": the maximum of an empty array");
    }
    return xtensor_detail::reduce_all<T, xtensor_detail::MaxOp<T>>(a);
}

/// Sums along `axis` (negative counts from the end); the result drops that dimension.
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<sum_type_t<T>> sum(const NDArray<T>& a, int axis) {
    return xtensor_detail::reduce_axis<T, xtensor_detail::SumOp<T>>(a, axis);
}
/// Means along `axis`.
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<double> mean(const NDArray<T>& a, int axis) {
    const int nd = static_cast<int>(a.dimension());
    const auto s = sum(a, axis);
    const double n =
        static_cast<double>(a.shape()[static_cast<std::size_t>(axis < 0 ? axis + nd : axis)]);
    return xt::xarray<double>(xt::cast<double>(s) / n);
}
/// Minima along `axis` (numeric_limits<T>::max() where the axis is empty).
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<T> amin(const NDArray<T>& a, int axis) {
    return xtensor_detail::reduce_axis<T, xtensor_detail::MinOp<T>>(a, axis);
}
/// Maxima along `axis` (numeric_limits<T>::lowest() where the axis is empty).
template <class T, xtensor_detail::if_element<T> = 0>
xt::xarray<T> amax(const NDArray<T>& a, int axis) {
    return xtensor_detail::reduce_axis<T, xtensor_detail::MaxOp<T>>(a, axis);
}

}  // namespace b2nd
