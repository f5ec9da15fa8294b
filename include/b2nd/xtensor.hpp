// b2nd-cpp's xtensor integration (opt-in; the only headers that include xtensor):
//   b2nd::read(arr, slices...)            -> xt::xarray<T>
//   b2nd::view(arr, slices...)            lazy xtensor expression, decoded slab by slab
//   b2nd::write(arr, slices..., expr)     assign any expression (broadcast) to a region
//   b2nd::evaluate(out, f, inputs...)     out-of-core pipelines, chunk by chunk in parallel
//   b2nd::sum / mean / amin / amax        reductions of any size, optionally along an axis
//   b2nd::push(appender, expr)            append an expression: one slab, or n along the axis
#pragma once

#include <b2nd/b2nd.hpp>
#include <b2nd/xtensor/append.hpp>
#include <b2nd/xtensor/assign.hpp>
#include <b2nd/xtensor/evaluate.hpp>
#include <b2nd/xtensor/lazy.hpp>
#include <b2nd/xtensor/reduce.hpp>
#include <b2nd/xtensor/select.hpp>
#include <b2nd/xtensor/slices.hpp>
