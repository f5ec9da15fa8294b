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
//
// Each reduction is an entry of the catalogue (reduce_catalogue.hpp), where its accumulator and its
// result rules are written once for these functions and for b2nd::mpi's.
#pragma once

#include <cstdint>

#include <b2nd/xtensor/reduce_catalogue.hpp>

namespace b2nd {

// ---- over several axes (ReduceOptions), as xt::xarray -----------------------------------------

/// Sums (see sum_type_t); 0 for empty cells.
template <class T, reduction::if_element<T> = 0>
xt::xarray<sum_type_t<T>> sum(const NDArray<T>& a, const ReduceOptions& o) {
    return reduction::reduce(a, o, reduction::Sum<T>{});
}
/// Products (double for floats, wrapping 64-bit integers otherwise); 1 for empty cells.
template <class T, reduction::if_element<T> = 0>
xt::xarray<sum_type_t<T>> prod(const NDArray<T>& a, const ReduceOptions& o) {
    return reduction::reduce(a, o, reduction::Prod<T>{});
}
/// Means; NaN for cells with no element (all masked out, or an empty axis).
template <class T, reduction::if_element<T> = 0>
xt::xarray<double> mean(const NDArray<T>& a, const ReduceOptions& o) {
    return reduction::reduce(a, o, reduction::Mean<T>{});
}
/// Variances with `ddof` delta degrees of freedom (NumPy's var); NaN where n - ddof <= 0.
template <class T, reduction::if_element<T> = 0>
xt::xarray<double> var(const NDArray<T>& a, const ReduceOptions& o, int ddof = 0) {
    return reduction::reduce(a, o, reduction::Var<T>{ddof, false});
}
/// Standard deviations (the square roots of var()).
template <class T, reduction::if_element<T> = 0>
xt::xarray<double> std(const NDArray<T>& a, const ReduceOptions& o, int ddof = 0) {
    return reduction::reduce(a, o, reduction::Var<T>{ddof, true});
}
/// Whether any element is nonzero (false for empty cells).
template <class T, reduction::if_element<T> = 0>
xt::xarray<bool> any(const NDArray<T>& a, const ReduceOptions& o) {
    return reduction::reduce(a, o, reduction::Any<T>{});
}
/// Whether all elements are nonzero (true for empty cells).
template <class T, reduction::if_element<T> = 0>
xt::xarray<bool> all(const NDArray<T>& a, const ReduceOptions& o) {
    return reduction::reduce(a, o, reduction::All<T>{});
}
/// Nonzero elements.
template <class T, reduction::if_element<T> = 0>
xt::xarray<std::int64_t> count_nonzero(const NDArray<T>& a, const ReduceOptions& o) {
    return reduction::reduce(a, o, reduction::CountNonzero<T>{});
}
/// Minima (NaN if any is NaN). Cells with no element hold numeric_limits<T>::max().
template <class T, reduction::if_element<T> = 0>
xt::xarray<T> amin(const NDArray<T>& a, const ReduceOptions& o) {
    return reduction::reduce(a, o, reduction::Amin<T>{});
}
/// Maxima (NaN if any is NaN). Cells with no element hold numeric_limits<T>::lowest().
template <class T, reduction::if_element<T> = 0>
xt::xarray<T> amax(const NDArray<T>& a, const ReduceOptions& o) {
    return reduction::reduce(a, o, reduction::Amax<T>{});
}
/// Positions of the minima: C-order indices over the reduced axes (along the axis for one
/// axis, flat for all); the first one on ties, the first NaN if any. -1 for cells with no
/// element (all masked out).
/// \throws UsageError when a reduced axis has length 0
template <class T, reduction::if_element<T> = 0>
xt::xarray<std::int64_t> argmin(const NDArray<T>& a, const ReduceOptions& o) {
    return reduction::reduce(a, o, reduction::Argmin<T>{});
}
/// Positions of the maxima (see argmin).
template <class T, reduction::if_element<T> = 0>
xt::xarray<std::int64_t> argmax(const NDArray<T>& a, const ReduceOptions& o) {
    return reduction::reduce(a, o, reduction::Argmax<T>{});
}

// ---- over everything, as a scalar ----------------------------------------------------------

/// The sum of all elements (see sum_type_t).
template <class T, reduction::if_element<T> = 0>
sum_type_t<T> sum(const NDArray<T>& a) {
    return reduction::reduce_all(a, reduction::Sum<T>{});
}
template <class T, reduction::if_element<T> = 0>
sum_type_t<T> prod(const NDArray<T>& a) {
    return reduction::reduce_all(a, reduction::Prod<T>{});
}
/// The mean of all elements. \throws UsageError for an empty array
template <class T, reduction::if_element<T> = 0>
double mean(const NDArray<T>& a) {
    return reduction::reduce_all(a, reduction::Mean<T>{});
}
/// The variance of all elements (var(a, ReduceOptions{}, ddof) for other ddof).
/// \throws UsageError for an empty array
template <class T, reduction::if_element<T> = 0>
double var(const NDArray<T>& a) {
    return reduction::reduce_all(a, reduction::Var<T>{0, false});
}
template <class T, reduction::if_element<T> = 0>
double std(const NDArray<T>& a) {
    return reduction::reduce_all(a, reduction::Var<T>{0, true});
}
/// The smallest element (NaN if any is NaN). \throws UsageError for an empty array
template <class T, reduction::if_element<T> = 0>
T amin(const NDArray<T>& a) {
    return reduction::reduce_all(a, reduction::Amin<T>{});
}
/// The largest element (NaN if any is NaN). \throws UsageError for an empty array
template <class T, reduction::if_element<T> = 0>
T amax(const NDArray<T>& a) {
    return reduction::reduce_all(a, reduction::Amax<T>{});
}
template <class T, reduction::if_element<T> = 0>
bool any(const NDArray<T>& a) {
    return reduction::reduce_all(a, reduction::Any<T>{});
}
template <class T, reduction::if_element<T> = 0>
bool all(const NDArray<T>& a) {
    return reduction::reduce_all(a, reduction::All<T>{});
}
template <class T, reduction::if_element<T> = 0>
std::int64_t count_nonzero(const NDArray<T>& a) {
    return reduction::reduce_all(a, reduction::CountNonzero<T>{});
}
/// The flat (C order) index of the smallest element. \throws UsageError for an empty array
template <class T, reduction::if_element<T> = 0>
std::int64_t argmin(const NDArray<T>& a) {
    return reduction::reduce_all(a, reduction::Argmin<T>{});
}
template <class T, reduction::if_element<T> = 0>
std::int64_t argmax(const NDArray<T>& a) {
    return reduction::reduce_all(a, reduction::Argmax<T>{});
}

// ---- along one axis (negative counts from the end); the result drops that dimension -----------

template <class T, reduction::if_element<T> = 0>
xt::xarray<sum_type_t<T>> sum(const NDArray<T>& a, int axis) {
    return sum(a, reduction::one_axis<T>(axis));
}
template <class T, reduction::if_element<T> = 0>
xt::xarray<sum_type_t<T>> prod(const NDArray<T>& a, int axis) {
    return prod(a, reduction::one_axis<T>(axis));
}
template <class T, reduction::if_element<T> = 0>
xt::xarray<double> mean(const NDArray<T>& a, int axis) {
    return mean(a, reduction::one_axis<T>(axis));
}
template <class T, reduction::if_element<T> = 0>
xt::xarray<double> var(const NDArray<T>& a, int axis, int ddof = 0) {
    return var(a, reduction::one_axis<T>(axis), ddof);
}
template <class T, reduction::if_element<T> = 0>
xt::xarray<double> std(const NDArray<T>& a, int axis, int ddof = 0) {
    return std(a, reduction::one_axis<T>(axis), ddof);
}
/// Minima along `axis` (numeric_limits<T>::max() where the axis is empty).
template <class T, reduction::if_element<T> = 0>
xt::xarray<T> amin(const NDArray<T>& a, int axis) {
    return amin(a, reduction::one_axis<T>(axis));
}
/// Maxima along `axis` (numeric_limits<T>::lowest() where the axis is empty).
template <class T, reduction::if_element<T> = 0>
xt::xarray<T> amax(const NDArray<T>& a, int axis) {
    return amax(a, reduction::one_axis<T>(axis));
}
template <class T, reduction::if_element<T> = 0>
xt::xarray<std::int64_t> argmin(const NDArray<T>& a, int axis) {
    return argmin(a, reduction::one_axis<T>(axis));
}
template <class T, reduction::if_element<T> = 0>
xt::xarray<std::int64_t> argmax(const NDArray<T>& a, int axis) {
    return argmax(a, reduction::one_axis<T>(axis));
}

}  // namespace b2nd
