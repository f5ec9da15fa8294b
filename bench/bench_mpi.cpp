// b2nd::mpi on the f32cube of BENCHMARKS.md (512^3 float32, chunks 128^3, blocks 32^3, zstd 1 +
// shuffle): write and evaluate throughput with N ranks of one thread each, against one process in
// the same run (rank 0 alone, 1 and 2 threads, while the other ranks wait).
//
//   mpiexec -n N build-bench/bench/bench_mpi [--dir DIR] [--edge 512] [--reps 3] [--sparse]
//                                            [--round-mib M]   (WriteOptions::round_bytes)
//   mpiexec -n N build-bench/bench/bench_mpi --chunks 1000000 [--sparse]   (metadata costs)
//
// write:    each rank copies its chunks' values from an in-memory cube (allocated and touched
//           before timing) and encodes and writes them; one commit.
// evaluate: out = 2 a + 1 over the cube written above, read from the file (warm page cache).
// GB/s of uncompressed output, as the range over the repetitions (after one warm-up run); ratios
// are to one process with one thread (the best of its repetitions). On a machine with fewer
// cores than ranks, MPI's polling waits take cores from the working ranks.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include <b2nd/mpi.hpp>
#include <b2nd/storage/frame.hpp>

#include "bench_common.hpp"

namespace mpi = b2nd::mpi;

namespace {

int g_rank = 0, g_size = 1;

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

/// A barrier that sleeps while it waits: ranks idle while rank 0 measures one process must not
/// spin (MPI's barriers poll) on the cores it uses.
void quiet_barrier(MPI_Comm comm) {
    MPI_Request req;
    MPI_Ibarrier(comm, &req);
    int done = 0;
    while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done == 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
}

void report(const char* what, const std::vector<double>& secs, double bytes, double baseline) {
    if (g_rank != 0) {
        return;
    }
    double lo = 1e30, hi = 0;
    for (double s : secs) {
        lo = std::min(lo, bytes / s / 1e9);
        hi = std::max(hi, bytes / s / 1e9);
    }
    const double best = *std::min_element(secs.begin(), secs.end());
    const double worst = *std::max_element(secs.begin(), secs.end());
    std::printf("%-34s %5.2f-%5.2f GB/s   %4.2f-%4.2fx one process, one thread\n", what, lo, hi,
                baseline / worst, baseline / best);
}

/// The metadata side of a write: `nchunks` chunks of 64 floats (256 bytes) each, written by every
/// rank (round robin) and committed once; what a chunk costs beyond its bytes (size exchange,
/// reservation, gather, index, commit) and the size of the offsets index.
void many_chunks(
    MPI_Comm comm, const std::string& dir, std::int64_t nchunks, bool sparse, int reps) {
    b2nd::CreateOptions o;
    o.chunk_shape = {64};
    o.block_shape = {64};
    o.overwrite = true;
    o.sparse = sparse;
    o.nthreads = 1;
    const std::string path = dir + "/many.b2nd";
    const auto fill = [](std::int64_t c, const b2nd::Box& r, std::uint8_t* out) {
        auto* v = reinterpret_cast<float*>(out);
        for (std::int64_t i = 0; i < r.count[0]; ++i) {
            v[i] =
                static_cast<float>(b2nd::bench::mix(static_cast<std::uint64_t>(c * 64 + i)) >> 40);
        }
    };
    mpi::WriteOptions wo;
    wo.nthreads = 1;
    wo.partition = mpi::Partition::block_cyclic(1);
    std::vector<double> secs;
    std::uint64_t file_bytes = 0, index_bytes = 0;
    for (int r = 0; r < reps; ++r) {
        auto a = mpi::create(comm, path, b2nd::dtype_of<float>(), {nchunks * 64}, o);
        MPI_Barrier(comm);
        const double t0 = now();
        mpi::write_chunks(comm, a, mpi::my_chunks(comm, a, wo.partition), fill, wo);
        MPI_Barrier(comm);
        secs.push_back(now() - t0);
        if (g_rank == 0) {
            const auto& h = a.frame().header();
            file_bytes = h.frame_len;
            index_bytes = h.frame_len - static_cast<std::uint64_t>(h.header_len) -
                          (sparse ? 0 : static_cast<std::uint64_t>(h.cbytes));
        }
    }
    // Chunks of zeros: index-only, nothing encoded or written; what is left is the per-chunk
    // bookkeeping (classification, the gather of 32-byte records, adoption, the commit).
    std::vector<double> zsecs;
    for (int r = 0; r < reps; ++r) {
        auto a = mpi::create(comm, path, b2nd::dtype_of<float>(), {nchunks * 64}, o);
        MPI_Barrier(comm);
        const double t0 = now();
        mpi::write_chunks(
            comm, a, mpi::my_chunks(comm, a, wo.partition),
            [](std::int64_t, const b2nd::Box& region, std::uint8_t* out) {
                std::memset(out, 0, static_cast<std::size_t>(region.size()) * 4);
            },
            wo);
        MPI_Barrier(comm);
        zsecs.push_back(now() - t0);
    }
    if (g_rank == 0) {
        std::printf("  the same count of index-only (zero) chunks: %.2f-%.2f s\n",
                    *std::min_element(zsecs.begin(), zsecs.end()),
                    *std::max_element(zsecs.begin(), zsecs.end()));
    }
    // The same chunks written by one process with one thread (rank 0; the others wait).
    double single_lo = 1e30, single_hi = 0;
    if (g_rank == 0) {
        for (int r = 0; r < reps; ++r) {
            auto a = b2nd::AnyArray::create(path + ".single", b2nd::dtype_of<float>(),
                                            {nchunks * 64}, o);
            const double t0 = now();
            a.write_chunks(a.all_chunks(), fill, 1);
            single_lo = std::min(single_lo, now() - t0);
            single_hi = std::max(single_hi, now() - t0);
        }
        std::printf("  one process, one thread: %.2f-%.2f s\n", single_lo, single_hi);
    }
    quiet_barrier(comm);
    // The commit alone, on rank 0: the frame given a new offsets index (every chunk kept), the
    // part of a collective write's commit that grows with the chunks.
    if (g_rank == 0) {
        b2nd::storage::OpenOptions fo;
        fo.writable = true;
        fo.auto_compact = false;
        auto f = b2nd::storage::Frame::open(path, fo);
        double lo = 1e30, hi = 0;
        for (int r = 0; r < reps; ++r) {
            const b2nd::storage::FrameEdit e = f.keep_all();
            const double t0 = now();
            f.apply(e);
            lo = std::min(lo, now() - t0);
            hi = std::max(hi, now() - t0);
        }
        std::printf("  a commit naming all %lld chunks, alone: %.3f-%.3f s\n",
                    static_cast<long long>(nchunks), lo, hi);
    }
    if (g_rank == 0) {
        const double best = *std::min_element(secs.begin(), secs.end());
        const double worst = *std::max_element(secs.begin(), secs.end());
        std::printf(
            "%lld chunks of 256 bytes, %s, %d ranks: %.2f-%.2f s (%.1f-%.1f us per chunk); "
            "offsets index and trailer %.2f MiB (%.2f bytes per chunk), frame %.1f MiB\n",
            static_cast<long long>(nchunks), sparse ? "sframe" : "cframe", g_size, best, worst,
            best / static_cast<double>(nchunks) * 1e6, worst / static_cast<double>(nchunks) * 1e6,
            static_cast<double>(index_bytes) / 1048576,
            static_cast<double>(index_bytes) / static_cast<double>(nchunks),
            static_cast<double>(file_bytes) / 1048576);
    }
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const MPI_Comm comm = MPI_COMM_WORLD;
    std::string parent;  // --dir: where the benchmark's own directory goes
    std::int64_t edge = 512;
    int reps = 3;
    bool sparse = false;
    std::int64_t many = 0;
    std::int64_t round_mib = 0;  // 0: WriteOptions' default
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--dir" && i + 1 < argc) {
            parent = argv[++i];
        } else if (a == "--edge" && i + 1 < argc) {
            edge = std::stoll(argv[++i]);
        } else if (a == "--reps" && i + 1 < argc) {
            reps = std::stoi(argv[++i]);
        } else if (a == "--round-mib" && i + 1 < argc) {
            round_mib = std::stoll(argv[++i]);
        } else if (a == "--sparse") {
            sparse = true;
        } else if (a == "--chunks" && i + 1 < argc) {
            many = std::stoll(argv[++i]);
        }
    }
    // Rank 0 makes a directory of the benchmark's own (removed at the end, with nothing else)
    // and tells the others its name.
    std::optional<b2nd::bench::WorkDir> work;
    std::array<char, 4096> name{};
    if (g_rank == 0) {
        work.emplace("mpi", parent);
        std::snprintf(name.data(), name.size(), "%s", work->path().c_str());
    }
    MPI_Bcast(name.data(), static_cast<int>(name.size()), MPI_CHAR, 0, comm);
    const std::string dir = name.data();
    if (many > 0) {
        many_chunks(comm, dir, many, sparse, reps);
        MPI_Barrier(comm);
        work.reset();
        MPI_Finalize();
        return 0;
    }
    const b2nd::Shape shape{edge, edge, edge};
    b2nd::CreateOptions o;
    o.chunk_shape = {128, 128, 128};
    o.block_shape = {32, 32, 32};
    o.overwrite = true;
    o.sparse = sparse;
    o.nthreads = 1;
    o.cache_bytes = 0;

    // The cube in memory, on every rank (touched once, before any timing).
    const auto n = static_cast<std::size_t>(edge * edge * edge);
    std::vector<float> cube(n);
    for (std::size_t f = 0; f < n; ++f) {
        cube[f] = b2nd::bench::f32cube_value(f, edge);
    }
    const auto copy_region = [&](std::int64_t, const b2nd::Box& r, std::uint8_t* out) {
        auto* v = reinterpret_cast<float*>(out);
        for (std::int64_t i = 0; i < r.count[0]; ++i) {
            for (std::int64_t j = 0; j < r.count[1]; ++j) {
                const auto from = static_cast<std::size_t>(
                    ((r.start[0] + i) * edge + r.start[1] + j) * edge + r.start[2]);
                std::memcpy(v, cube.data() + from, static_cast<std::size_t>(r.count[2]) * 4);
                v += r.count[2];
            }
        }
    };
    const double bytes = static_cast<double>(n) * 4;
    if (g_rank == 0) {
        std::printf(
            "f32cube %lld^3 (%.0f MiB), chunks 128^3, blocks 32^3, zstd 1 + shuffle, %s; "
            "%d ranks of 1 thread; %d runs each\n",
            static_cast<long long>(edge), bytes / 1048576, sparse ? "sframe" : "cframe", g_size,
            reps);
    }

    // Interleaved, run by run (one warm-up run first): one process with 1 and 2 threads (rank 0;
    // the other ranks wait without spinning), then the N ranks, so that all three see the same
    // machine state (page cache, write-back of earlier runs).
    const std::string single = dir + "/single.b2nd";
    const std::string path = dir + "/mpi.b2nd";
    mpi::WriteOptions wo;
    wo.nthreads = 1;
    if (round_mib > 0) {
        wo.round_bytes = static_cast<std::size_t>(round_mib) << 20;
    }
    const auto twice_plus_one = [](const auto& x) { return 2.0f * x + 1.0f; };
    std::vector<double> w1, w2, wn, e1, e2, en;
    for (int r = 0; r <= reps; ++r) {
        const bool keep = r > 0;
        if (g_rank == 0) {
            for (int threads : {1, 2}) {
                b2nd::CreateOptions so = o;
                so.nthreads = threads;
                auto a = b2nd::AnyArray::create(single, b2nd::dtype_of<float>(), shape, so);
                const double t0 = now();
                a.write_chunks(a.all_chunks(), copy_region, threads);
                if (keep) {
                    (threads == 1 ? w1 : w2).push_back(now() - t0);
                }
            }
        }
        quiet_barrier(comm);
        {
            auto a = mpi::create(comm, path, b2nd::dtype_of<float>(), shape, o);
            MPI_Barrier(comm);
            const double t0 = now();
            mpi::write_chunks(comm, a, mpi::my_chunks(comm, a), copy_region, wo);
            MPI_Barrier(comm);
            if (keep) {
                wn.push_back(now() - t0);
            }
        }
        if (g_rank == 0) {
            auto in = b2nd::NDArray<float>::open(single);
            for (int threads : {1, 2}) {
                b2nd::CreateOptions so = o;
                so.nthreads = threads;
                auto out = b2nd::NDArray<float>::create(dir + "/single-out.b2nd", shape, so);
                b2nd::EvaluateOptions eo;
                eo.nthreads = threads;
                const double t0 = now();
                b2nd::evaluate(out, eo, twice_plus_one, in);
                if (keep) {
                    (threads == 1 ? e1 : e2).push_back(now() - t0);
                }
            }
        }
        quiet_barrier(comm);
        {
            auto in = mpi::open<float>(comm, path);
            auto out = mpi::create<float>(comm, dir + "/mpi-out.b2nd", shape, o);
            MPI_Barrier(comm);
            const double t0 = now();
            mpi::evaluate(comm, out, wo, twice_plus_one, in);
            MPI_Barrier(comm);
            if (keep) {
                en.push_back(now() - t0);
            }
        }
    }
    double base_write = 0, base_eval = 0;
    if (g_rank == 0) {
        base_write = *std::min_element(w1.begin(), w1.end());
        base_eval = *std::min_element(e1.begin(), e1.end());
    }
    const std::string ranks = std::to_string(g_size);
    report("write, one process, 1 thread", w1, bytes, base_write);
    report("write, one process, 2 threads", w2, bytes, base_write);
    report(("write, " + ranks + " rank(s)").c_str(), wn, bytes, base_write);
    report("evaluate, one process, 1 thread", e1, bytes, base_eval);
    report("evaluate, one process, 2 threads", e2, bytes, base_eval);
    report(("evaluate, " + ranks + " rank(s)").c_str(), en, bytes, base_eval);
    // The MPI result equals one process's (rank 0 checks a sample of chunks).
    if (g_rank == 0) {
        const auto x = b2nd::AnyArray::open(path), y = b2nd::AnyArray::open(single);
        for (std::int64_t c = 0; c < x.grid().nchunks(); c += 7) {
            const auto p = x.frame().chunk(c), q = y.frame().chunk(c);
            if (!std::equal(p.bytes.begin(), p.bytes.end(), q.bytes.begin(), q.bytes.end())) {
                std::fprintf(stderr, "chunk %lld differs from one process's\n",
                             static_cast<long long>(c));
                MPI_Abort(comm, 1);
            }
        }
    }
    MPI_Barrier(comm);
    work.reset();
    MPI_Finalize();
    return 0;
}
