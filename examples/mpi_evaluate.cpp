// Many ranks, one array (docs/mpi.md):
//
//   mpiexec -n 4 build/examples/mpi_evaluate [DIR]
//
// Each rank generates its part of a temperature field (days x y x x) straight into one compressed
// array, then the ranks compute the anomaly against the mean day out of core (each rank its own
// chunks, one commit), then reduce it. The last line holds the reductions' values only: they are
// the same, bit for bit, for any number of ranks. DIR must be on a file system every rank sees
// (default: a temporary directory, fine on one node); the arrays are removed unless DIR is given.
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <b2nd/mpi.hpp>

namespace mpi = b2nd::mpi;

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const MPI_Comm comm = MPI_COMM_WORLD;
    int status = 0;
    {
        // Rank 0 picks the directory and tells the others.
        std::vector<std::uint8_t> dir_bytes;
        if (rank == 0) {
            std::string d = argc > 1 ? argv[1] : "";
            if (d.empty()) {
                std::string templ =
                    (std::filesystem::temp_directory_path() / "b2nd-mpi-XXXXXX").string();
                d = ::mkdtemp(templ.data()) != nullptr ? templ : ".";
            }
            std::filesystem::create_directories(d);
            dir_bytes.assign(d.begin(), d.end());
        }
        mpi::detail::broadcast_bytes(comm, dir_bytes);
        const std::string dir(dir_bytes.begin(), dir_bytes.end());
        try {
            // 1. Generate: 120 days of a 256 x 384 field; each rank computes its own chunks.
            b2nd::CreateOptions o;
            o.chunk_shape = {10, 128, 128};
            o.block_shape = {5, 32, 128};
            o.overwrite = true;
            auto t = mpi::create<float>(comm, dir + "/t.b2nd", {120, 256, 384}, o);
            mpi::WriteOptions wo;
            wo.progress = [&](std::int64_t done, std::int64_t total) {
                if (rank == 0 && done == total) {
                    std::printf("rank 0 of %d generated its %lld chunks\n", size,
                                static_cast<long long>(total));
                }
            };
            mpi::write_chunks(
                comm, t.any(), mpi::my_chunks(comm, t.any()),
                [](std::int64_t, const b2nd::Box& r, std::uint8_t* out) {
                    auto* v = reinterpret_cast<float*>(out);
                    for (std::int64_t d = 0; d < r.count[0]; ++d) {
                        const double day = static_cast<double>(r.start[0] + d);
                        for (std::int64_t y = 0; y < r.count[1]; ++y) {
                            const double lat = static_cast<double>(r.start[1] + y);
                            for (std::int64_t x = 0; x < r.count[2]; ++x) {
                                const double lon = static_cast<double>(r.start[2] + x);
                                *v++ = static_cast<float>(
                                    15.0 - 0.1 * lat + 8.0 * std::sin(day * 0.0524 + lon * 0.01) +
                                    std::cos(lat * 0.3) * std::sin(lon * 0.2));
                            }
                        }
                    }
                },
                wo);

            // 2. The mean day (a reduction across ranks), stored as a 2-D array by rank 0.
            const xt::xarray<double> mean_day = mpi::mean(comm, t, 0);
            auto clim = mpi::create<float>(comm, dir + "/clim.b2nd", {256, 384}, [] {
                b2nd::CreateOptions c;
                c.overwrite = true;
                return c;
            }());
            b2nd::Box all = b2nd::Box::whole(clim.shape());
            std::vector<float> values;
            if (rank == 0) {
                for (double v : mean_day) {
                    values.push_back(static_cast<float>(v));
                }
            } else {
                all.count[0] = 0;  // the other ranks write nothing
            }
            mpi::write(comm, clim, all, values);

            // 3. The anomaly, out of core: each rank evaluates its chunks, one commit.
            auto anomaly = mpi::create<float>(comm, dir + "/anomaly.b2nd", t.shape(), o);
            mpi::evaluate(
                comm, anomaly, [](const auto& x, const auto& c) { return x - c; }, t, clim);

            // 4. Reductions: every rank gets them; rank 0 prints.
            const double mean = mpi::mean(comm, anomaly);
            const double sd = mpi::std(comm, anomaly);
            const float lo = mpi::amin(comm, anomaly), hi = mpi::amax(comm, anomaly);
            if (rank == 0) {
                std::printf("anomaly: mean, std, min, max over %lld values (%d ranks)\n",
                            static_cast<long long>(anomaly.size()), size);
                std::printf("%.9g %.9g %.9g %.9g\n", mean, sd, static_cast<double>(lo),
                            static_cast<double>(hi));
            }
        } catch (const std::exception& e) {
            std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
            status = 1;
        }
        MPI_Barrier(comm);
        if (rank == 0 && argc <= 1) {
            std::error_code ignored;
            std::filesystem::remove_all(dir, ignored);
        }
    }
    MPI_Finalize();
    return status;
}
