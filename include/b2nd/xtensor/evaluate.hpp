// b2nd::evaluate: run a function of xtensor expressions over the chunks of an output array.
//
//   b2nd::evaluate(out, [](const auto& a, const auto& b) { return a - b; }, t, climatology);
//
// For each chunk of `out`, every input's window is read (inputs of the output's shape, or
// broadcastable to it, with any chunk shapes), `f` is called on the in-memory windows and its
// result is encoded and written; chunks are processed in parallel and committed once. Memory
// stays at a few chunks per thread whatever the arrays' sizes, and within
// EvaluateOptions::memory_budget when one is given.
#pragma once

#include <functional>
#include <string>
#include <tuple>
#include <type_traits>

#include <b2nd/memory.hpp>
#include <b2nd/xtensor/lazy.hpp>

namespace b2nd {

/// How evaluate() runs: its memory bound, threads and progress.
struct EvaluateOptions {
    /// Most bytes the evaluation may hold at once (windows, chunk buffers, scratch); 0: no limit
    /// (one chunk in flight per thread). Fewer chunks run at once to stay within it.
    std::size_t memory_budget = 0;
    /// Called after each chunk with (done, total), from the worker threads (serialized).
    std::function<void(std::int64_t, std::int64_t)> progress;
    /// Chunks in flight at most (0: the output's nthreads()).
    int nthreads = 0;
};

namespace xtensor_detail {

/// What evaluate() takes as inputs: arrays and lazy views of them (valid); anything else is
/// refused at compile time by a static_assert that says so.
template <class A>
struct input_traits {
    static constexpr bool valid = false;
    using value_type = char;
    static LazyView<char> whole(const A&);
};
template <class U>
struct input_traits<NDArray<U>> {
    static constexpr bool valid = true;
    using value_type = U;
    static LazyView<U> whole(const NDArray<U>& a) { return view(a); }
};
template <class U>
struct input_traits<LazyView<U>> {
    static constexpr bool valid = true;
    using value_type = U;
    static LazyView<U> whole(const LazyView<U>& v) { return v; }
};

template <class U>
using window_t = xt::xarray<U, xt::layout_type::row_major, tracked_allocator<U>>;

/// The part of `in` (a view whose shape broadcasts to `out_shape`) under `region` of the output.
template <class U>
window_t<U> window(const LazyView<U>& in, const Box& region, const Shape& out_shape) {
    const auto& s = in.shape();
    const std::size_t nd = out_shape.size();
    if (s.size() > nd) {
        throw UsageError("b2nd::evaluate: an input has more dimensions than the output");
    }
    const std::size_t off = nd - s.size();
    Selection sel;
    for (std::size_t k = 0; k < s.size(); ++k) {
        const auto extent = static_cast<std::int64_t>(s[k]);
        if (extent == out_shape[off + k]) {
            sel.push_back(DimIndex::strided(region.start[off + k], region.count[off + k], 1));
        } else if (extent == 1) {
            sel.push_back(DimIndex::strided(0, 1, 1));  // broadcast along this dimension
        } else {
            throw UsageError("b2nd::evaluate: an input of shape " +
                             to_string(Shape(s.begin(), s.end())) +
                             " does not broadcast to the output's " + to_string(out_shape));
        }
    }
    const Resolved r = compose(in.selection(), resolve(Shape(s.begin(), s.end()), sel));
    window_t<U> w = LazyView<U>(in.array(), r);
    return w;
}

}  // namespace xtensor_detail

/// Bytes one chunk of evaluation holds, for inputs of the given item sizes.
inline std::int64_t evaluate_chunk_bytes(const AnyArray& out,
                                         const std::vector<std::int64_t>& input_itemsizes) {
    const Grid& g = out.grid();
    std::int64_t items = 1;
    for (std::int64_t c : g.chunk_shape()) {
        items *= c;
    }
    // Output values and padded chunk, encoder output, decode scratch, the inputs' windows.
    std::int64_t bytes = items * g.itemsize() + 2 * g.chunk_nbytes() + 2 * g.block_nbytes() + 4096;
    for (std::int64_t isz : input_itemsizes) {
        bytes += items * isz;
    }
    return bytes;
}

/// The chunk producer evaluate() writes `out` with (AnyArray::write_chunks): for a chunk's
/// region of `out`, it reads the inputs' windows, calls f and writes its result (broadcast to the
/// region) into dst, stored byte order. Holds references to f and the inputs. b2nd::mpi::evaluate
/// runs it over each rank's chunks.
template <class T, class F, class... In>
auto evaluator(NDArray<T>& out, F& f, const In&... inputs) {
    const Shape out_shape = out.shape();
    auto views = std::make_tuple(xtensor_detail::input_traits<In>::whole(inputs)...);
    const DType dtype = out.any().dtype();
    return [&f, out_shape, views, dtype](std::int64_t, const Box& region, std::uint8_t* dst) {
        std::vector<std::size_t> shape(region.count.begin(), region.count.end());
        auto windows = std::apply(
            [&](const auto&... v) {
                return std::make_tuple(xtensor_detail::window(v, region, out_shape)...);
            },
            views);
        auto&& result = std::apply(f, windows);
        auto target = xt::adapt(reinterpret_cast<T*>(dst), static_cast<std::size_t>(region.size()),
                                xt::no_ownership(), shape);
        const Shape rshape(result.shape().begin(), result.shape().end());
        bool fits = rshape.size() <= shape.size();
        for (std::size_t k = 0; fits && k < rshape.size(); ++k) {
            const auto want = static_cast<std::int64_t>(shape[shape.size() - rshape.size() + k]);
            fits = rshape[k] == want || rshape[k] == 1;
        }
        if (!fits) {
            throw UsageError("b2nd::evaluate: f's result of shape " + to_string(rshape) +
                             " does not broadcast to a chunk region of " + to_string(region.count));
        }
        xt::noalias(target) = xt::broadcast(result, shape);
        if (dtype.needs_byteswap()) {
            dtype.byteswap(dst, region.size());
        }
    };
}

namespace xtensor_detail {

/// Chunks evaluate() runs at once: options.nthreads (0: the output's), fewer when
/// options.memory_budget cannot hold that many chunks' work.
template <class... In>
int evaluate_in_flight(const AnyArray& a, const EvaluateOptions& options) {
    int in_flight = options.nthreads > 0 ? options.nthreads : a.nthreads();
    if (options.memory_budget > 0) {
        const std::int64_t per_chunk = evaluate_chunk_bytes(
            a, {static_cast<std::int64_t>(sizeof(typename input_traits<In>::value_type))...});
        const auto fit = static_cast<std::int64_t>(options.memory_budget) / per_chunk;
        if (fit < 1) {
            throw UsageError("b2nd::evaluate: a memory budget of " +
                             std::to_string(options.memory_budget) +
                             " bytes cannot hold one chunk's work (" + std::to_string(per_chunk) +
                             " bytes); use smaller chunks or a larger budget");
        }
        in_flight = static_cast<int>(std::min<std::int64_t>(in_flight, fit));
    }
    return in_flight;
}

}  // namespace xtensor_detail

template <class T, class F, class... In>
void evaluate(NDArray<T>& out, const EvaluateOptions& options, F&& f, const In&... inputs) {
    static_assert((xtensor_detail::input_traits<In>::valid && ...),
                  "b2nd::evaluate: its inputs are b2nd arrays (b2nd::NDArray<T>) or lazy views "
                  "of them (b2nd::view(a, ...)), read chunk by chunk; an in-memory container "
                  "(xt::xarray, xt::xtensor) is not an input: capture it in f, or write it to an "
                  "array first (NDArray<T>::create_from)");
    AnyArray& a = out.any();
    const int in_flight = xtensor_detail::evaluate_in_flight<In...>(a, options);
    a.write_chunks(a.all_chunks(), evaluator(out, f, inputs...), in_flight, options.progress);
}

/// evaluate() with default options.
template <class T,
          class F,
          class... In,
          std::enable_if_t<!std::is_same_v<std::decay_t<F>, EvaluateOptions>, int> = 0>
void evaluate(NDArray<T>& out, F&& f, const In&... inputs) {
    evaluate(out, EvaluateOptions{}, std::forward<F>(f), inputs...);
}

}  // namespace b2nd
