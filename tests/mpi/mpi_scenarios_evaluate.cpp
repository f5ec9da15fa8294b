// The b2nd::mpi evaluation and crash scenarios: evaluate and reductions across ranks, and ranks
// killed in the middle of a collective write (mpi_check.hpp).
#include "mpi_check.hpp"

namespace mpi_check {

void scenario_evaluate(const std::string& dir) {
    const std::string tpath = dir + "/t.b2nd";
    NDArray<float> t = mpi::create<float>(MPI_COMM_WORLD, tpath, kShape, options_for(false));
    mpi::write_chunks(MPI_COMM_WORLD, t.any(), mpi::my_chunks(MPI_COMM_WORLD, t.any()), field(1));

    // A climatology (mean over axis 0), written by rank 0's box alone.
    const xt::xarray<double> clim_values = mpi::mean(MPI_COMM_WORLD, t, 0);
    CreateOptions co;
    co.chunk_shape = {16, 10};
    NDArray<float> clim =
        mpi::create<float>(MPI_COMM_WORLD, dir + "/clim.b2nd", {kShape[1], kShape[2]}, co);
    {
        std::vector<float> v;
        Box box = Box::whole(clim.shape());
        if (g_rank == 0) {
            for (double x : clim_values) {
                v.push_back(static_cast<float>(x));
            }
        } else {
            box.count[0] = 0;
        }
        mpi::write(MPI_COMM_WORLD, clim, box, v);
    }
    const auto anomaly_of = [](const auto& x, const auto& m) { return x - m; };
    for (const mpi::Partition p : {mpi::Partition::region(), mpi::Partition::block_cyclic(2)}) {
        const bool sparse = p.kind == mpi::Partition::Kind::block_cyclic;
        const std::string out_path = dir + "/anomaly-" + kind_name(sparse);
        NDArray<float> out =
            mpi::create<float>(MPI_COMM_WORLD, out_path, kShape, options_for(sparse));
        mpi::WriteOptions wo;
        wo.partition = p;
        wo.round_bytes = 6000;
        mpi::evaluate(MPI_COMM_WORLD, out, wo, anomaly_of, t, clim);
        if (g_rank == 0) {
            CreateOptions o = options_for(sparse);
            o.overwrite = true;
            auto ref = NDArray<float>::create(dir + "/anomaly-ref", kShape, o);
            EvaluateOptions eo;
            eo.nthreads = 1;
            evaluate(ref, eo, anomaly_of, t, clim);
            CHECK(same_chunks(out.any(), ref.any()));
            CHECK(read_all(out.any()) == read_all(ref.any()));
        }
    }

    // Rank 0 grows an array on its own; evaluate over it (on every rank) covers the new shape.
    {
        CreateOptions o = options_for(false);
        NDArray<float> grown = mpi::create<float>(MPI_COMM_WORLD, dir + "/grown.b2nd",
                                                  {kShape[0] - 9, kShape[1], kShape[2]}, o);
        if (g_rank == 0) {
            grown.any().resize(kShape);
        }
        mpi::evaluate(MPI_COMM_WORLD, grown, anomaly_of, t, clim);
        CHECK(grown.shape() == kShape);
        if (g_rank == 0) {
            const AnyArray ref = AnyArray::open(dir + "/anomaly-ref");
            CHECK(read_all(grown.any()) == read_all(ref));
        }
    }

    // Reductions: ordered equals one process bit for bit; reduce is close (exact for min, max,
    // counts and integer sums).
    const auto same = [](const auto& x, const auto& y) {
        return x.shape() == y.shape() &&
               std::memcmp(x.data(), y.data(), x.size() * sizeof(*x.data())) == 0;
    };
    for (const std::vector<int>& axes : std::vector<std::vector<int>>{{}, {0}, {1}, {0, 2}}) {
        ReduceOptions o;
        o.axes = axes;
        CHECK(same(mpi::sum(MPI_COMM_WORLD, t, o), b2nd::sum(t, o)));
        CHECK(same(mpi::mean(MPI_COMM_WORLD, t, o), b2nd::mean(t, o)));
        CHECK(same(mpi::var(MPI_COMM_WORLD, t, o), b2nd::var(t, o)));
        CHECK(same(mpi::amin(MPI_COMM_WORLD, t, o), b2nd::amin(t, o)));
        CHECK(same(mpi::amax(MPI_COMM_WORLD, t, o), b2nd::amax(t, o)));
        CHECK(same(mpi::argmax(MPI_COMM_WORLD, t, o), b2nd::argmax(t, o)));
        CHECK(same(mpi::count_nonzero(MPI_COMM_WORLD, t, o), b2nd::count_nonzero(t, o)));
        CHECK(same(mpi::any(MPI_COMM_WORLD, t, o), b2nd::any(t, o)));
        const auto r = mpi::Combine::reduce;
        CHECK(same(mpi::amin(MPI_COMM_WORLD, t, o, r), b2nd::amin(t, o)));
        CHECK(same(mpi::argmin(MPI_COMM_WORLD, t, o, r), b2nd::argmin(t, o)));
        CHECK(same(mpi::count_nonzero(MPI_COMM_WORLD, t, o, r), b2nd::count_nonzero(t, o)));
        CHECK(same(mpi::all(MPI_COMM_WORLD, t, o, r), b2nd::all(t, o)));
        const xt::xarray<double> s = mpi::sum(MPI_COMM_WORLD, t, o, r), s1 = b2nd::sum(t, o);
        const xt::xarray<double> v = mpi::var(MPI_COMM_WORLD, t, o, 0, r), v1 = b2nd::var(t, o);
        CHECK(s.shape() == s1.shape() && xt::allclose(s, s1, 1e-12, 1e-9));
        CHECK(v.shape() == v1.shape() && xt::allclose(v, v1, 1e-12, 1e-9));
    }
    CHECK(mpi::sum(MPI_COMM_WORLD, t) == b2nd::sum(t));
    CHECK(mpi::std(MPI_COMM_WORLD, t) == b2nd::std(t));
    CHECK(mpi::amax(MPI_COMM_WORLD, t) == b2nd::amax(t));
    // Integer sums are exact however they are combined.
    {
        auto ints = mpi::create<std::int32_t>(MPI_COMM_WORLD, dir + "/ints.b2nd", {1000, 37}, [] {
            CreateOptions o;
            o.chunk_shape = {64, 16};
            return o;
        }());
        mpi::write_chunks(
            MPI_COMM_WORLD, ints.any(), mpi::my_chunks(MPI_COMM_WORLD, ints.any()),
            [](std::int64_t, const Box& r, std::uint8_t* out) {
                auto* v = reinterpret_cast<std::int32_t*>(out);
                for (std::int64_t i = 0; i < r.size(); ++i) {
                    const std::int64_t row = r.start[0] + i / r.count[1];
                    const std::int64_t col = r.start[1] + i % r.count[1];
                    v[i] =
                        static_cast<std::int32_t>((row * 7919 + col * 104729) % 2000003) - 1000000;
                }
            });
        CHECK(same(mpi::sum(MPI_COMM_WORLD, ints, 0, mpi::Combine::reduce), b2nd::sum(ints, 0)));
        CHECK(mpi::sum(MPI_COMM_WORLD, ints) == b2nd::sum(ints));
    }
    // An empty array: no identity for the mean, on every rank.
    auto empty = mpi::create<float>(MPI_COMM_WORLD, dir + "/empty.b2nd", {0, 4});
    CHECK_THROWS_WITH(UsageError, mpi::mean(MPI_COMM_WORLD, empty), "empty");
    CHECK(mpi::sum(MPI_COMM_WORLD, empty) == 0.0);

    // copy: re-chunked and re-compressed into a sparse frame, as b2nd::copy does it.
    CreateOptions o;
    o.chunk_shape = {5, 7, 9};
    o.compression.clevel = 5;
    o.compression.filters = {{Filter::bitshuffle, 0}};
    o.sparse = true;
    if (g_rank == 0) {
        t.any().set_vlmeta("units", as_bytes("K", 1));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t.any().refresh();
    mpi::WriteOptions wo;
    wo.partition = mpi::Partition::block_cyclic(4);
    AnyArray c = mpi::copy(MPI_COMM_WORLD, t.any(), dir + "/copy", o, wo);
    CHECK(read_all(c) == field_values(1));
    CHECK(c.chunk_shape() == o.chunk_shape);
    CHECK(c.sparse());
    CHECK(c.vlmeta("units") == std::vector<std::uint8_t>{'K'});
    if (g_rank == 0) {
        CopyOptions co2;
        co2.chunk_shape = o.chunk_shape;
        co2.compression = o.compression;
        co2.sparse = true;
        co2.nthreads = 1;
        const AnyArray ref = b2nd::copy(t.any(), dir + "/copy-ref", co2);
        CHECK(same_chunks(c, ref));
    }
}

/// Phase 1 of the kill test: a committed version 1, then a rewrite in small rounds during which
/// the last rank kills itself (SIGKILL) after some rounds are on disk.
void scenario_kill(const std::string& dir, bool sparse) {
    const std::string path = dir + "/killed-" + kind_name(sparse);
    AnyArray a = mpi::create(MPI_COMM_WORLD, path, dtype_of<float>(), kShape, options_for(sparse));
    mpi::write_chunks(MPI_COMM_WORLD, a, mpi::my_chunks(MPI_COMM_WORLD, a), field(1));
    MPI_Barrier(MPI_COMM_WORLD);
    const std::vector<std::int64_t> mine = mpi::my_chunks(MPI_COMM_WORLD, a);
    mpi::WriteOptions wo;
    wo.round_bytes = 1500;
    wo.nthreads = 1;
    mpi::write_chunks(
        MPI_COMM_WORLD, a, mine,
        [&](std::int64_t ci, const Box& r, std::uint8_t* out) {
            field(2)(ci, r, out);
            if (g_rank == g_size - 1 && ci == mine[mine.size() - 2]) {
                std::raise(SIGKILL);  // in the middle of the write, after rounds hit the disk
            }
        },
        wo);
    std::fprintf(stderr, "rank %d: the write was not interrupted\n", g_rank);
}

/// Phase 2: the killed write left the array at version 1, with the write's leftovers beside it
/// (proof that it was interrupted mid-way); compact removes them; the array takes writes again.
void scenario_verify_kill(const std::string& dir, bool sparse) {
    const std::string path = dir + "/killed-" + kind_name(sparse);
    AnyArray a = mpi::open(MPI_COMM_WORLD, path, [] {
        OpenOptions o;
        o.writable = true;
        o.auto_compact = false;
        return o;
    }());
    CHECK(read_all(a) == field_values(1));
    if (g_rank == 0) {
        if (sparse) {
            std::int64_t files = 0, stored = 0;
            for (const auto& e : fs::directory_iterator(path)) {
                files += e.path().extension() == ".chunk" ? 1 : 0;
            }
            for (std::int64_t i = 0; i < a.grid().nchunks(); ++i) {
                stored += a.frame().chunk(i).index_only() ? 0 : 1;
            }
            CHECK(files > stored);  // chunk files of the interrupted write
            a.compact();
            files = 0;
            for (const auto& e : fs::directory_iterator(path)) {
                files += e.path().extension() == ".chunk" ? 1 : 0;
            }
            CHECK(files == stored);
        } else {
            CHECK(fs::file_size(path) > a.frame().header().frame_len);  // bytes after the frame
            a.compact();
            CHECK(fs::file_size(path) == a.frame().header().frame_len);
        }
        CHECK(read_all(a) == field_values(1));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    a.refresh();
    mpi::write_chunks(MPI_COMM_WORLD, a, mpi::my_chunks(MPI_COMM_WORLD, a), field(2));
    CHECK(read_all(a) == field_values(2));
}

}  // namespace mpi_check
