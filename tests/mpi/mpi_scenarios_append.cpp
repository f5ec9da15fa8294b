// The b2nd::mpi append scenario (mpi_check.hpp): ranks that own parts of every time step (whole
// chunks along another axis, padding at the array's edge, a rank with no part with 4 ranks)
// append them together in pushes of several sizes, across rows, with a flush inside a row; every
// rank reads each flushed state; the chunks are those one process writes with an Appender.
#include "mpi_check.hpp"

namespace mpi_check {

namespace {

constexpr std::int64_t kRows = 13, kCols = 6;  // a step: 13 x 6 int32

/// Element (t, i, j) of the appended array.
std::int32_t value(std::int64_t t, std::int64_t i, std::int64_t j) {
    return static_cast<std::int32_t>(t * 1000 + i * 10 + j);
}

/// Steps [t0, t0 + n) of rows [r0, r0 + nr): (n, nr, kCols), C order.
std::vector<std::int32_t> steps(std::int64_t t0, std::int64_t n, std::int64_t r0, std::int64_t nr) {
    std::vector<std::int32_t> out;
    for (std::int64_t t = t0; t < t0 + n; ++t) {
        for (std::int64_t i = r0; i < r0 + nr; ++i) {
            for (std::int64_t j = 0; j < kCols; ++j) {
                out.push_back(value(t, i, j));
            }
        }
    }
    return out;
}

std::vector<std::int32_t> read_all_of(const AnyArray& a) {
    std::vector<std::int32_t> v(static_cast<std::size_t>(a.size()));
    a.read(Box::whole(a.shape()), v.data(), v.size() * sizeof(std::int32_t));
    return v;
}

CreateOptions append_options(bool sparse) {
    CreateOptions o;
    o.chunk_shape = {4, 5, kCols};  // 3 chunks along the rows, the last one padded
    o.block_shape = {2, 3, 3};
    o.sparse = sparse;
    o.nthreads = 2;
    return o;
}

}  // namespace

void scenario_append(const std::string& dir) {
    for (bool sparse : {false, true}) {
        const std::string path = dir + "/append-" + kind_name(sparse);
        auto a = mpi::create<std::int32_t>(MPI_COMM_WORLD, path, {0, kRows, kCols},
                                           append_options(sparse));
        mpi::Appender<std::int32_t> app(MPI_COMM_WORLD, a, 0, 1);
        const Box mine = app.part();
        const std::int64_t r0 = mine.start[1], nr = mine.count[1];
        CHECK((nr == 0 || r0 % 5 == 0));  // whole chunks (with 4 ranks, one has none)
        std::int64_t t = 0;
        for (const std::int64_t n : {1, 2, 6, 1, 3}) {
            const std::vector<std::int32_t> data = steps(t, n, r0, nr);
            app.push(data.data(), n);
            t += n;
            if (t == 3) {
                app.flush();  // inside the first row
                CHECK(read_all_of(a.any()) == steps(0, 3, 0, kRows));
            }
        }
        CHECK(app.length() == 13);
        app.close();
        CHECK(a.shape() == (Shape{13, kRows, kCols}));
        CHECK(read_all_of(a.any()) == steps(0, 13, 0, kRows));
        // A rank pushing a different number of slabs: every rank throws.
        if (g_size > 1) {
            mpi::Appender<std::int32_t> more(MPI_COMM_WORLD, a, 0, 1);
            const std::int64_t n = g_rank == 0 ? 2 : 1;
            const std::vector<std::int32_t> data = steps(13, n, r0, nr);
            CHECK_THROWS_WITH(UsageError, more.push(data.data(), n), "different numbers");
        }
        // Refusals on every rank: one axis twice; a push of bytes that are not whole parts.
        CHECK_THROWS_WITH(UsageError, (mpi::Appender<std::int32_t>(MPI_COMM_WORLD, a, 1, 1)),
                          "two different axes");
        {
            mpi::AnyAppender odd(MPI_COMM_WORLD, a.any(), 0, 1);
            const std::vector<std::uint8_t> bytes(g_rank == 0 ? 7 : 0);
            // (rank 0's UsageError; the others an Error naming rank 0 and its message)
            CHECK_THROWS_WITH(std::exception, odd.push({bytes.data(), bytes.size()}),
                              "not a whole number");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (g_rank == 0) {
            // One process appending the same steps writes the same chunks.
            const std::string ref_path = dir + "/append-ref-" + kind_name(sparse);
            CreateOptions o = append_options(sparse);
            o.overwrite = true;
            auto ref = NDArray<std::int32_t>::create(ref_path, {0, kRows, kCols}, o);
            Appender<std::int32_t> one(ref, 0);
            const std::vector<std::int32_t> all = steps(0, 13, 0, kRows);
            one.push(all.data(), 13);
            one.close();
            CHECK(same_chunks(AnyArray::open(path), ref.any()));
            CHECK(read_all_of(AnyArray::open(path)) == all);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        // The array ends inside a row (13 steps, rows of 4): another appender reads its part of
        // that row once and goes on.
        {
            mpi::Appender<std::int32_t> on(MPI_COMM_WORLD, a, 0, 1);
            const std::vector<std::int32_t> data = steps(13, 5, r0, nr);
            on.push(data.data(), 5);
            on.close();
        }
        CHECK(read_all_of(a.any()) == steps(0, 18, 0, kRows));
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

}  // namespace mpi_check
