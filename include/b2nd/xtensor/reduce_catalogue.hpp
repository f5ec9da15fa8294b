// The reduction catalogue: for each of the twelve reductions, once, its accumulator (`state`),
// its result type, how a result cell's state becomes its value, and what it says about empty
// input. Local reductions (reduce.hpp) and MPI reductions (b2nd/mpi.hpp) are both this table run
// by a driver: reduce() and reduce_all() below, and b2nd::mpi's, which merges the same states
// across ranks. Not for direct use.
//
// An entry:
//   using state = ...;            the accumulator (reduce_accumulators.hpp)
//   using result = ...;           the value of a result cell
//   result operator()(const state&) const;
//   no_identity                   non-null: no value for a cell without elements, so reducing
//                                 along an axis of length 0 is an error (argmin, argmax)
//   empty_scalar                  non-null: the scalar form refuses an empty array ("the mean
//                                 of an empty array")
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include <b2nd/xtensor/reduce_chunks.hpp>

namespace b2nd::reduction {

/// An entry whose value is its state's get(), with a value for empty input.
template <class State, class Result>
struct Gets {
    using state = State;
    using result = Result;
    static constexpr const char* no_identity = nullptr;
    static constexpr const char* empty_scalar = nullptr;
    result operator()(const state& s) const { return s.get(); }
};

template <class T>
struct Sum : Gets<typename SumOp<T>::state, sum_type_t<T>> {};

template <class T>
struct Prod : Gets<typename ProdOp<T>::state, sum_type_t<T>> {};

template <class T>
struct Mean : Gets<typename MeanOp<T>::state, double> {
    static constexpr const char* empty_scalar = "mean";
};

/// Variance with `ddof` delta degrees of freedom (NaN where n - ddof <= 0); with `root`, its
/// square root (std).
template <class T>
struct Var {
    using state = typename MomentsOp<T>::state;
    using result = double;
    static constexpr const char* no_identity = nullptr;
    static constexpr const char* empty_scalar = "variance";
    int ddof = 0;
    bool root = false;
    result operator()(const state& s) const {
        const auto d = static_cast<double>(s.n - ddof);
        const double v = d > 0 ? s.m2 / d : std::numeric_limits<double>::quiet_NaN();
        return root ? std::sqrt(v) : v;
    }
};

template <class T, bool All>
struct Truth : Gets<typename TruthOp<T, All>::state, bool> {};
template <class T>
using Any = Truth<T, false>;
template <class T>
using All = Truth<T, true>;

template <class T>
struct CountNonzero : Gets<typename CountOp<T>::state, std::int64_t> {};

/// amin (Larger = false) and amax: a cell without elements holds numeric_limits<T>::max() (or
/// lowest()).
template <class T, bool Larger>
struct Extreme {
    using state = typename ArgOp<T, Larger>::state;
    using result = T;
    static constexpr const char* no_identity = nullptr;
    static constexpr const char* empty_scalar = Larger ? "maximum" : "minimum";
    result operator()(const state& s) const {
        if (s.pos >= 0) {
            return s.best;
        }
        return Larger ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
};
template <class T>
using Amin = Extreme<T, false>;
template <class T>
using Amax = Extreme<T, true>;

/// argmin (Larger = false) and argmax: -1 for a cell without elements.
template <class T, bool Larger>
struct Position {
    using state = typename ArgOp<T, Larger>::state;
    using result = std::int64_t;
    static constexpr const char* no_identity = Larger ? "argmax" : "argmin";
    static constexpr const char* empty_scalar = Larger ? "argmax" : "argmin";
    result operator()(const state& s) const { return s.pos; }
};
template <class T>
using Argmin = Position<T, false>;
template <class T>
using Argmax = Position<T, true>;

// ---- the local driver --------------------------------------------------------------------

/// Reduces `a` as entry `red` of the catalogue says, over the axes and mask of `o`.
template <class Red, class T>
xt::xarray<typename Red::result> reduce(const NDArray<T>& a,
                                        const ReduceOptions& o,
                                        const Red& red = {}) {
    using State = typename Red::state;
    const ReducePlan plan(a.shape(), o, "\"" + a.path() + "\"");
    if (Red::no_identity != nullptr && plan.nred == 0 && plan.nout > 0) {
        throw UsageError("\"" + a.path() + "\": the " + Red::no_identity +
                         " along axes of length 0");
    }
    const std::vector<State> states = reduce_states<T, State>(a, o, plan);
    std::vector<std::size_t> shape(plan.out_shape.begin(), plan.out_shape.end());
    xt::xarray<typename Red::result> out = xt::xarray<typename Red::result>::from_shape(shape);
    for (std::size_t i = 0; i < states.size(); ++i) {
        out.flat(i) = red(states[i]);
    }
    return out;
}

/// The reduction of every element of `a`, as one value. \throws UsageError for an empty array
/// when the entry has no value for one
template <class Red, class T>
typename Red::result reduce_all(const NDArray<T>& a, const Red& red = {}) {
    if (Red::empty_scalar != nullptr) {
        require_elements(a, Red::empty_scalar);
    }
    return scalar_of(reduce(a, ReduceOptions{}, red));
}

}  // namespace b2nd::reduction
