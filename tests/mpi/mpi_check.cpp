// The b2nd::mpi checks, run under mpiexec with 1, 2 and 4 ranks (tests/CMakeLists.txt, label
// "mpi"): mpi_check SCENARIO DIR [KIND]. Every rank runs the same scenario; rank 0 also computes
// the single-process reference with the ordinary API and compares bit for bit. A failed check is
// reported with its rank and line and does not stop the scenario (the ranks must stay in step
// through the collective calls); the exit status says whether any rank saw a failure.
#include "mpi_check.hpp"

#include <cstdio>
#include <exception>

using namespace mpi_check;

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (argc < 3) {
        std::fprintf(stderr, "usage: mpi_check SCENARIO DIR [cframe|sframe]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const std::string scenario = argv[1];
    const std::string dir = argv[2];
    const bool sparse = argc > 3 && std::string(argv[3]) == "sframe";
    if (g_rank == 0 && scenario != "verify-kill") {
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    try {
        if (scenario == "write") {
            scenario_write(dir);
        } else if (scenario == "write-parts") {
            scenario_write_parts(dir);
        } else if (scenario == "errors") {
            scenario_errors(dir);
        } else if (scenario == "evaluate") {
            scenario_evaluate(dir);
        } else if (scenario == "append") {
            scenario_append(dir);
        } else if (scenario == "kill") {
            scenario_kill(dir, sparse);
        } else if (scenario == "verify-kill") {
            scenario_verify_kill(dir, sparse);
        } else {
            std::fprintf(stderr, "unknown scenario %s\n", scenario.c_str());
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    } catch (const std::exception& e) {
        // Out of step with the other ranks from here: stop them all.
        std::fprintf(stderr, "rank %d: unexpected exception: %s\n", g_rank, e.what());
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    long totals[2] = {0, 0};
    const long mine[2] = {g_checks, g_failures};
    MPI_Reduce(mine, totals, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (g_rank == 0) {
        std::printf("%s with %d ranks: %ld checks, %ld failed\n", scenario.c_str(), g_size,
                    totals[0], totals[1]);
    }
    int failed = g_failures > 0 ? 1 : 0, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    MPI_Finalize();
    return any;
}
