// Internal: what the two files of b2nd::mpi share (mpi.cpp, mpi_write.cpp).
#pragma once

#include <exception>
#include <string>

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

}  // namespace b2nd::mpi::internal
