// b2nd::mpi: many MPI ranks creating, writing, evaluating and reading one array (target
// b2nd::mpi, built when MPI is found; docs/mpi.md, docs/scaling.md).
//
//   MPI_Init(&argc, &argv);
//   auto t = b2nd::mpi::create<float>(MPI_COMM_WORLD, "t.b2nd", {n, ny, nx});      // collective
//   b2nd::mpi::write_chunks(MPI_COMM_WORLD, t.any(), b2nd::mpi::my_chunks(MPI_COMM_WORLD, t.any()),
//                           [&](std::int64_t, const b2nd::Box& region, std::uint8_t* out) {...});
//   auto anomaly = b2nd::mpi::create<float>(MPI_COMM_WORLD, "a.b2nd", t.shape());
//   b2nd::mpi::evaluate(MPI_COMM_WORLD, anomaly, [](auto& x, auto& m) { return x - m; }, t, clim);
//   double total = b2nd::mpi::sum(MPI_COMM_WORLD, anomaly);                          // every rank
//
// The model. Rank 0 holds the array open for writing (the one writer of the lock protocol);
// every other rank holds a read-only handle on the same file, which must be on a file system all
// ranks share. In a collective write each rank makes the chunks it owns (in parallel on its own
// threads) and writes them itself, where rank 0 reserved room for them:
//  - contiguous frame: in rounds. A rank holds up to WriteOptions::round_bytes of encoded chunks;
//    an exclusive prefix sum of the sizes (MPI_Exscan) gives each rank its offset in the range
//    rank 0 reserves after the frame's end, and each rank writes its bytes there in one pwrite;
//  - sparse frame: rank 0 reserves one chunk file number per chunk (MPI_Exscan of the counts),
//    and each chunk goes to its own file as soon as it is made.
// When every chunk is on disk, rank 0 gathers where they are and makes them part of the array
// in one commit; the other ranks then refresh. Until that commit, readers (and a crash at any
// moment, of any rank) see the array as it was: what was written is after the frame's end or in
// files no index names.
//
// The chunks written are byte for byte those one process writes (the encoder depends on neither
// ranks nor threads). With the region partition, one thread per rank and one round, a contiguous
// file is byte for byte the one a process with one thread writes.
//
// Errors are collective: a rank that fails (a producer that throws, a full disk) makes every rank
// throw, nothing is committed, and the array stays as it was. Every function here is collective
// over `comm` unless it says otherwise: all ranks call it, in the same order.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include <b2nd/mpi/appender.hpp>
#include <b2nd/mpi/collective.hpp>
#include <b2nd/xtensor.hpp>

#include <mpi.h>

namespace b2nd::mpi {

namespace detail {

/// refresh() of an evaluate() input that is an array (views are left as they are).
template <class In>
void refresh_input(MPI_Comm, const In&) {}
template <class U>
void refresh_input(MPI_Comm comm, const NDArray<U>& in) {
    refresh(comm, in.any());
}

}  // namespace detail

// ---- collective evaluate ------------------------------------------------------------------

/// b2nd::evaluate across ranks: each rank evaluates f over its chunks of `out` (the partition of
/// WriteOptions), reading the inputs from the shared file system; one collective commit.
template <class T, class F, class... In>
void evaluate(
    MPI_Comm comm, NDArray<T>& out, const WriteOptions& options, F&& f, const In&... inputs) {
    refresh(comm, out.any());  // the partition below is computed from the latest shape
    (detail::refresh_input(comm, inputs), ...);
    const std::vector<std::int64_t> mine = my_chunks(comm, out.any(), options.partition);
    write_chunks(comm, out.any(), mine, evaluator(out, f, inputs...), options);
}
template <class T,
          class F,
          class... In,
          std::enable_if_t<!std::is_same_v<std::decay_t<F>, WriteOptions>, int> = 0>
void evaluate(MPI_Comm comm, NDArray<T>& out, F&& f, const In&... inputs) {
    evaluate(comm, out, WriteOptions{}, std::forward<F>(f), inputs...);
}

// ---- internals of the templates below -------------------------------------------------------

namespace detail {

/// inout[i] = in[i] merged with inout[i] (in comes from lower ranks), for MPI_Op_create.
template <class State>
void merge_states(void* in, void* inout, int* len, MPI_Datatype*) {
    auto* a = static_cast<std::uint8_t*>(in);
    auto* b = static_cast<std::uint8_t*>(inout);
    for (int i = 0; i < *len; ++i) {
        State x, y;
        std::memcpy(&x, a + static_cast<std::size_t>(i) * sizeof(State), sizeof(State));
        std::memcpy(&y, b + static_cast<std::size_t>(i) * sizeof(State), sizeof(State));
        x.merge(y);
        std::memcpy(b + static_cast<std::size_t>(i) * sizeof(State), &x, sizeof(State));
    }
}

/// The states of every result cell, as reduction::reduce_states gives them in one process,
/// from the chunks of every rank, on every rank.
template <class T, class State>
std::vector<State> reduce_states(MPI_Comm comm,
                                 const NDArray<T>& a,
                                 const ReduceOptions& o,
                                 const reduction::ReducePlan& plan,
                                 Combine combine) {
    static_assert(std::is_trivially_copyable_v<State>, "states travel as bytes");
    std::vector<State> out(static_cast<std::size_t>(plan.nout));
    std::map<std::int64_t, std::vector<State>> parts;  // this rank's chunks, in chunk order
    std::exception_ptr err;
    try {
        std::mutex m;
        const std::vector<std::int64_t> ids =
            a.size() == 0 ? std::vector<std::int64_t>{} : my_chunks(comm, a.any());
        reduction::chunk_parts<T, State>(
            a, o, plan, ids, [&](std::int64_t ci, const Box&, std::vector<State>&& part) {
                std::lock_guard<std::mutex> lock(m);
                parts.emplace(ci, std::move(part));
            });
    } catch (...) {
        err = std::current_exception();
    }
    check_all(comm, err);
    const Grid& g = a.any().grid();
    if (combine == Combine::reduce) {
        for (const auto& [ci, part] : parts) {
            reduction::merge_part(out, plan, g.chunk_box(ci), part);
        }
        MPI_Datatype type;
        MPI_Type_contiguous(static_cast<int>(sizeof(State)), MPI_BYTE, &type);
        MPI_Type_commit(&type);
        MPI_Op op;
        MPI_Op_create(&merge_states<State>, 0, &op);  // not commutative: merged in rank order
        int rc = MPI_SUCCESS;
        if (!out.empty()) {
            rc = MPI_Allreduce(MPI_IN_PLACE, out.data(), static_cast<int>(out.size()), type, op,
                               comm);
        }
        MPI_Op_free(&op);
        MPI_Type_free(&type);
        if (rc != MPI_SUCCESS) {
            throw Error("b2nd::mpi: MPI_Allreduce failed (" + std::to_string(rc) + ")");
        }
        return out;
    }
    // Ordered: (chunk, cells, states...) records to rank 0, merged there in chunk order.
    std::vector<std::uint8_t> mine;
    for (const auto& [ci, part] : parts) {
        const std::int64_t head[2] = {ci, static_cast<std::int64_t>(part.size())};
        const auto* h = reinterpret_cast<const std::uint8_t*>(head);
        mine.insert(mine.end(), h, h + sizeof head);
        const auto* p = reinterpret_cast<const std::uint8_t*>(part.data());
        mine.insert(mine.end(), p, p + part.size() * sizeof(State));
    }
    const std::vector<std::uint8_t> all = gather_bytes(comm, mine);
    std::vector<std::uint8_t> result;
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        std::map<std::int64_t, std::pair<std::size_t, std::size_t>> at;  // chunk -> (offset, n)
        for (std::size_t off = 0; off < all.size();) {
            std::int64_t head[2];
            std::memcpy(head, all.data() + off, sizeof head);
            off += sizeof head;
            at[head[0]] = {off, static_cast<std::size_t>(head[1])};
            off += static_cast<std::size_t>(head[1]) * sizeof(State);
        }
        std::vector<State> part;
        for (const auto& [ci, where] : at) {
            part.resize(where.second);
            std::memcpy(static_cast<void*>(part.data()), all.data() + where.first,
                        where.second * sizeof(State));
            reduction::merge_part(out, plan, g.chunk_box(ci), part);
        }
        const auto* p = reinterpret_cast<const std::uint8_t*>(out.data());
        result.assign(p, p + out.size() * sizeof(State));
    }
    broadcast_bytes(comm, result);
    std::memcpy(static_cast<void*>(out.data()), result.data(), out.size() * sizeof(State));
    return out;
}

/// Reduces `a` across the ranks of comm as entry `red` of the reduction catalogue
/// (b2nd/xtensor/reduce_catalogue.hpp) says.
template <class Red, class T>
xt::xarray<typename Red::result> reduce(MPI_Comm comm,
                                        const NDArray<T>& a,
                                        const ReduceOptions& o,
                                        Combine combine,
                                        const Red& red = {}) {
    refresh(comm, a.any());  // the plan below is made from the latest shape
    const reduction::ReducePlan plan(a.shape(), o, "\"" + a.name() + "\"");
    if (Red::no_identity != nullptr && plan.nred == 0 && plan.nout > 0) {
        throw UsageError("\"" + a.path() + "\": the " + Red::no_identity +
                         " along axes of length 0");
    }
    using State = typename Red::state;
    const std::vector<State> states = reduce_states<T, State>(comm, a, o, plan, combine);
    std::vector<std::size_t> shape(plan.out_shape.begin(), plan.out_shape.end());
    xt::xarray<typename Red::result> out = xt::xarray<typename Red::result>::from_shape(shape);
    for (std::size_t i = 0; i < states.size(); ++i) {
        out.flat(i) = red(states[i]);
    }
    return out;
}

/// The reduction of every element, as one value (on every rank). \throws UsageError for an
/// empty array when the entry has no value for one
template <class Red, class T>
typename Red::result reduce_all(MPI_Comm comm, const NDArray<T>& a, const Red& red = {}) {
    if (Red::empty_scalar != nullptr) {
        reduction::require_elements(a, Red::empty_scalar);
    }
    return reduction::scalar_of(reduce(comm, a, ReduceOptions{}, Combine::ordered, red));
}

}  // namespace detail

// ---- reductions (b2nd/xtensor/reduce.hpp's, across ranks; every rank gets the result) ---------
//
// Each rank reduces its chunks (the region partition), then the partial results are combined as
// `combine` says; the default gives the single-process result bit for bit. Each is an entry of
// the reduction catalogue (b2nd/xtensor/reduce_catalogue.hpp), as the local ones are.

// Each reduction in its two forms (over ReduceOptions; along one axis, which drops it), made
// from its catalogue entry.
// clang-format off
#define B2ND_MPI_REDUCTION(NAME, RESULT, ENTRY)                                                    \
    template <class T, reduction::if_element<T> = 0>                                               \
    RESULT NAME(MPI_Comm comm, const NDArray<T>& a, const ReduceOptions& o,                        \
                Combine combine = Combine::ordered) {                                              \
        return detail::reduce(comm, a, o, combine, reduction::ENTRY<T>{});                         \
    }                                                                                              \
    template <class T, reduction::if_element<T> = 0>                                               \
    RESULT NAME(MPI_Comm comm, const NDArray<T>& a, int axis, Combine combine = Combine::ordered) { \
        return NAME(comm, a, reduction::one_axis<T>(axis), combine);                               \
    }
// clang-format on

/// Sums (see b2nd::sum); 0 for empty cells.
B2ND_MPI_REDUCTION(sum, xt::xarray<sum_type_t<T>>, Sum)
/// Products; 1 for empty cells.
B2ND_MPI_REDUCTION(prod, xt::xarray<sum_type_t<T>>, Prod)
/// Means; NaN for cells with no element.
B2ND_MPI_REDUCTION(mean, xt::xarray<double>, Mean)
/// Whether any element is nonzero.
B2ND_MPI_REDUCTION(any, xt::xarray<bool>, Any)
/// Whether all elements are nonzero.
B2ND_MPI_REDUCTION(all, xt::xarray<bool>, All)
/// Nonzero elements.
B2ND_MPI_REDUCTION(count_nonzero, xt::xarray<std::int64_t>, CountNonzero)
/// Minima (NaN if any is NaN).
B2ND_MPI_REDUCTION(amin, xt::xarray<T>, Amin)
/// Maxima (NaN if any is NaN).
B2ND_MPI_REDUCTION(amax, xt::xarray<T>, Amax)
/// Positions of the minima (see b2nd::argmin).
B2ND_MPI_REDUCTION(argmin, xt::xarray<std::int64_t>, Argmin)
/// Positions of the maxima.
B2ND_MPI_REDUCTION(argmax, xt::xarray<std::int64_t>, Argmax)

#undef B2ND_MPI_REDUCTION

/// Variances with `ddof` delta degrees of freedom; NaN where n - ddof <= 0.
template <class T, reduction::if_element<T> = 0>
xt::xarray<double> var(MPI_Comm comm,
                       const NDArray<T>& a,
                       const ReduceOptions& o,
                       int ddof = 0,
                       Combine combine = Combine::ordered) {
    return detail::reduce(comm, a, o, combine, reduction::Var<T>{ddof, false});
}
template <class T, reduction::if_element<T> = 0>
xt::xarray<double> var(MPI_Comm comm, const NDArray<T>& a, int axis, int ddof = 0) {
    return var(comm, a, reduction::one_axis<T>(axis), ddof);
}

/// Standard deviations (square roots of var()).
template <class T, reduction::if_element<T> = 0>
xt::xarray<double> std(MPI_Comm comm,
                       const NDArray<T>& a,
                       const ReduceOptions& o,
                       int ddof = 0,
                       Combine combine = Combine::ordered) {
    return detail::reduce(comm, a, o, combine, reduction::Var<T>{ddof, true});
}
template <class T, reduction::if_element<T> = 0>
xt::xarray<double> std(MPI_Comm comm, const NDArray<T>& a, int axis, int ddof = 0) {
    return std(comm, a, reduction::one_axis<T>(axis), ddof);
}

// Over everything, as a scalar (b2nd::sum(a) and friends).
template <class T, reduction::if_element<T> = 0>
sum_type_t<T> sum(MPI_Comm comm, const NDArray<T>& a) {
    return detail::reduce_all(comm, a, reduction::Sum<T>{});
}
template <class T, reduction::if_element<T> = 0>
double mean(MPI_Comm comm, const NDArray<T>& a) {
    return detail::reduce_all(comm, a, reduction::Mean<T>{});
}
template <class T, reduction::if_element<T> = 0>
double var(MPI_Comm comm, const NDArray<T>& a) {
    return detail::reduce_all(comm, a, reduction::Var<T>{0, false});
}
template <class T, reduction::if_element<T> = 0>
double std(MPI_Comm comm, const NDArray<T>& a) {
    return detail::reduce_all(comm, a, reduction::Var<T>{0, true});
}
template <class T, reduction::if_element<T> = 0>
T amin(MPI_Comm comm, const NDArray<T>& a) {
    return detail::reduce_all(comm, a, reduction::Amin<T>{});
}
template <class T, reduction::if_element<T> = 0>
T amax(MPI_Comm comm, const NDArray<T>& a) {
    return detail::reduce_all(comm, a, reduction::Amax<T>{});
}
template <class T, reduction::if_element<T> = 0>
std::int64_t count_nonzero(MPI_Comm comm, const NDArray<T>& a) {
    return detail::reduce_all(comm, a, reduction::CountNonzero<T>{});
}

}  // namespace b2nd::mpi
