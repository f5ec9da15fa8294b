// Internal: what the two files of b2nd::mpi share (mpi.cpp, mpi_write.cpp).
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <utility>

#include <b2nd/any_array.hpp>

#include <mpi.h>

namespace b2nd::mpi::internal {

inline int rank_of(MPI_Comm comm) {
    int r = 0;
    MPI_Comm_rank(comm, &r);
    return r;
}

inline int size_of(MPI_Comm comm) {
    int n = 1;
    MPI_Comm_size(comm, &n);
    return n;
}

inline std::string ranks_message(const std::string& what) {
    return "b2nd::mpi: " + what;
}

/// Runs fn, keeping what it throws for check_all.
template <class Fn>
std::exception_ptr attempt(Fn&& fn) {
    try {
        fn();
    } catch (...) {
        return std::current_exception();
    }
    return nullptr;
}

/// An exclusive prefix sum of `mine` over comm (0 on rank 0), and the total (mpi_write.cpp).
std::pair<std::uint64_t, std::uint64_t> exscan_total(MPI_Comm comm, std::uint64_t mine);

/// Collective: room for `mine` (bytes of a contiguous frame, chunk file numbers of a sparse
/// one) on every rank, reserved by rank 0 for all ranks at once; where this rank's part starts
/// (mpi_write.cpp).
std::uint64_t reserve_room(MPI_Comm comm, AnyArray& a, std::uint64_t mine);

}  // namespace b2nd::mpi::internal
