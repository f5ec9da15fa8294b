// The b2nd::mpi write scenarios: collective writes of whole arrays and of parts, and the errors
// every rank must agree on (mpi_check.hpp).
#include "mpi_check.hpp"

namespace mpi_check {

void scenario_write(const std::string& dir) {
    for (bool sparse : {false, true}) {
        const std::string ref_path = dir + "/ref-" + kind_name(sparse);
        AnyArray ref;
        if (g_rank == 0) {
            ref = reference(ref_path, sparse, 1);
        }
        struct Case {
            const char* name;
            mpi::Partition p;
            std::size_t round;
            bool caller;
        };
        const Case cases[] = {
            {"region", mpi::Partition::region(), std::size_t{1} << 30, false},
            {"region-rounds", mpi::Partition::region(), 3000, false},
            {"cyclic1", mpi::Partition::block_cyclic(1), std::size_t{1} << 30, false},
            {"cyclic3-rounds", mpi::Partition::block_cyclic(3), 5000, false},
            {"caller", mpi::Partition::region(), 8000, true},
        };
        const std::vector<float> want = field_values(1);
        for (const Case& c : cases) {
            const std::string path = dir + "/" + c.name + "-" + kind_name(sparse);
            AnyArray a =
                mpi::create(MPI_COMM_WORLD, path, dtype_of<float>(), kShape, options_for(sparse));
            CHECK(a.writable() == (g_rank == 0));
            std::vector<std::int64_t> mine;
            if (c.caller) {  // chunks counted from the end, dealt to ranks from the last
                for (std::int64_t i = a.grid().nchunks() - 1; i >= 0; --i) {
                    if (i % g_size == g_size - 1 - g_rank) {
                        mine.push_back(i);
                    }
                }
            } else {
                mine = mpi::my_chunks(MPI_COMM_WORLD, a, c.p);
            }
            mpi::WriteOptions wo;
            wo.round_bytes = c.round;
            // One thread per rank for "region": its chunks then go to the file in chunk order,
            // as one process with one thread writes them.
            wo.nthreads = std::string(c.name) == "region" ? 1 : 2;
            std::int64_t progressed = 0;
            wo.progress = [&](std::int64_t done, std::int64_t) { progressed = done; };
            mpi::write_chunks(MPI_COMM_WORLD, a, mine, field(1), wo);
            CHECK(progressed == static_cast<std::int64_t>(mine.size()));
            CHECK(read_all(a) == want);  // every rank reads the committed array
            if (g_rank == 0) {
                CHECK(same_chunks(a, ref));
                if (std::string(c.name) == "region" && !sparse) {
                    // Byte for byte. (A sparse frame's chunk files hold the same bytes, but
                    // take numbers in another order: same_chunks above compares them.)
                    CHECK(files_of(path) == files_of(ref_path));
                }
                // A fresh handle (another process would open it so) reads the same.
                CHECK(read_all(AnyArray::open(path)) == want);
            }
            // Rewrite everything (version 2) through the same handles: the old chunks are replaced.
            mpi::write_chunks(MPI_COMM_WORLD, a, mine, field(2), wo);
            CHECK(read_all(a) == field_values(2));
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
}

/// my_part covers the shape exactly once; chunk-aligned parts share no chunk; mpi::write of
/// parts, partial chunks keeping their other elements, and boxes sharing a chunk refused.
void scenario_write_parts(const std::string& dir) {
    // Coverage: every rank's box, gathered.
    for (int axis : {0, 1, -1}) {
        const Box b = mpi::my_part(MPI_COMM_WORLD, kShape, axis);
        std::int64_t n = b.size(), total = 0;
        MPI_Allreduce(&n, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        CHECK(total == kShape[0] * kShape[1] * kShape[2]);
        std::int64_t end = b.start[static_cast<std::size_t>(axis < 0 ? 2 : axis)] +
                           b.count[static_cast<std::size_t>(axis < 0 ? 2 : axis)];
        std::int64_t prev_end = 0;
        // Consecutive: rank r starts where rank r-1 ended.
        MPI_Sendrecv(&end, 1, MPI_INT64_T, (g_rank + 1) % g_size, 1, &prev_end, 1, MPI_INT64_T,
                     (g_rank + g_size - 1) % g_size, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(b.start[static_cast<std::size_t>(axis < 0 ? 2 : axis)] ==
              (g_rank == 0 ? 0 : prev_end));
    }
    CHECK_THROWS_WITH(UsageError, mpi::my_part(MPI_COMM_WORLD, kShape, 3), "axis 3");

    for (bool sparse : {false, true}) {
        const std::string path = dir + "/parts-" + kind_name(sparse);
        AnyArray a =
            mpi::create(MPI_COMM_WORLD, path, dtype_of<float>(), kShape, options_for(sparse));
        const Box part = mpi::my_part(MPI_COMM_WORLD, a, 0);
        CHECK(part.start[0] % 8 == 0);
        std::vector<float> data(static_cast<std::size_t>(part.size()));
        field(3)(0, part, reinterpret_cast<std::uint8_t*>(data.data()));
        NDArray<float> t = a.as<float>();
        mpi::write(MPI_COMM_WORLD, t, part, data);
        CHECK(read_all(a) == field_values(3));

        // Inner boxes: one element less on each side along axis 0 (chunks covered in part keep
        // the rest of their content).
        Box inner = part;
        if (inner.count[0] >= 2) {
            inner.start[0] += 1;
            inner.count[0] -= 2;
        } else {
            inner.count[0] = 0;
        }
        std::vector<float> four(static_cast<std::size_t>(inner.size()));
        field(4)(0, inner, reinterpret_cast<std::uint8_t*>(four.data()));
        mpi::write(MPI_COMM_WORLD, a, inner, as_bytes(four.data(), four.size()));
        std::vector<float> want = field_values(3);
        {
            // The model: every rank's inner box of version 4 over version 3.
            for (int r = 0; r < g_size; ++r) {
                std::int64_t se[2] = {inner.start[0], inner.count[0]};
                MPI_Bcast(se, 2, MPI_INT64_T, r, MPI_COMM_WORLD);
                for (std::int64_t i = se[0]; i < se[0] + se[1]; ++i) {
                    for (std::int64_t j = 0; j < kShape[1]; ++j) {
                        for (std::int64_t k = 0; k < kShape[2]; ++k) {
                            want[static_cast<std::size_t>((i * kShape[1] + j) * kShape[2] + k)] =
                                value_at(i, j, k, 4);
                        }
                    }
                }
            }
        }
        CHECK(read_all(a) == want);

        // Boxes that share a chunk: refused on every rank, nothing written.
        if (g_size > 1) {
            const Box loose = mpi::my_part(MPI_COMM_WORLD, kShape, 0);  // 37 rows: splits chunks
            std::vector<float> five(static_cast<std::size_t>(loose.size()), 5.0f);
            CHECK_THROWS_WITH(
                Error, mpi::write(MPI_COMM_WORLD, a, loose, as_bytes(five.data(), five.size())),
                "share a chunk");
            CHECK(read_all(a) == want);
        }
        // A box out of range on one rank: every rank throws.
        Box bad = Box::whole(kShape);
        if (g_rank == g_size - 1) {
            bad.count[0] += 1;
        } else {
            bad.count[0] = 0;
        }
        std::vector<float> none(static_cast<std::size_t>(bad.size()));
        CHECK_THROWS_WITH(Error,
                          mpi::write(MPI_COMM_WORLD, a, bad, as_bytes(none.data(), none.size())),
                          "out of range");
        CHECK(read_all(a) == want);

        // Rank 0 writes on its own; the next collective operation starts from that state on
        // every rank.
        const float big = 1000.0f;
        if (g_rank == 0) {
            a.write(Box::region({0, 0, 0}, {1, 1, 1}), as_bytes(&big, 1));
        }
        CHECK(mpi::amax(MPI_COMM_WORLD, a.as<float>()) == big);
        want[0] = big;
        CHECK(read_all(a) == want);
    }
}

/// A rank that fails makes every rank throw and leaves the array as it was; collective opens.
void scenario_errors(const std::string& dir) {
    for (bool sparse : {false, true}) {
        const std::string path = dir + "/errors-" + kind_name(sparse);
        AnyArray a =
            mpi::create(MPI_COMM_WORLD, path, dtype_of<float>(), kShape, options_for(sparse));
        mpi::write_chunks(MPI_COMM_WORLD, a, mpi::my_chunks(MPI_COMM_WORLD, a), field(1));
        const int culprit = g_size - 1;
        mpi::WriteOptions wo;
        wo.round_bytes = 2000;  // the failure comes after rounds were written
        const mpi::ChunkProducer failing = [&](std::int64_t ci, const Box& r, std::uint8_t* out) {
            field(2)(ci, r, out);
            if (g_rank == culprit && ci == mpi::my_chunks(MPI_COMM_WORLD, a).back()) {
                throw std::runtime_error("sensor offline");
            }
        };
        CHECK_THROWS_WITH(
            std::exception,
            mpi::write_chunks(MPI_COMM_WORLD, a, mpi::my_chunks(MPI_COMM_WORLD, a), failing, wo),
            "sensor offline");
        CHECK(read_all(a) == field_values(1));
        if (g_rank == 0) {
            CHECK(read_all(AnyArray::open(path)) == field_values(1));
        }
        // The array still takes writes.
        mpi::write_chunks(MPI_COMM_WORLD, a, mpi::my_chunks(MPI_COMM_WORLD, a), field(2), wo);
        CHECK(read_all(a) == field_values(2));
        MPI_Barrier(MPI_COMM_WORLD);  // every rank has refreshed: no snapshot needs old files
        if (sparse && g_rank == 0) {
            // Files of the failed write and of the replaced chunks go at the next commit, or once
            // no reader needs them (compact).
            a.compact();
            std::int64_t files = 0, stored = 0;
            for (const auto& e : fs::directory_iterator(path)) {
                files += e.path().extension() == ".chunk" ? 1 : 0;
            }
            for (std::int64_t i = 0; i < a.grid().nchunks(); ++i) {
                stored += a.frame().chunk(i).index_only() ? 0 : 1;
            }
            CHECK(files == stored);
        }

        // Two ranks given the same chunk.
        if (g_size > 1) {
            CHECK_THROWS_WITH(Error, mpi::write_chunks(MPI_COMM_WORLD, a, {0}, field(3)),
                              "more than one rank");
        }
        // Rank 0's handle not writable.
        AnyArray ro = mpi::open(MPI_COMM_WORLD, path);
        CHECK(!ro.writable());
        CHECK(read_all(ro) == field_values(2));
        CHECK_THROWS_WITH(
            Error,
            mpi::write_chunks(MPI_COMM_WORLD, ro, mpi::my_chunks(MPI_COMM_WORLD, ro), field(3)),
            "open for writing");
        CHECK(read_all(a) == field_values(2));
    }
    // A chunk out of range on one rank, a wrong element type, an absurd shape: every rank throws.
    {
        AnyArray a = mpi::open(MPI_COMM_WORLD, dir + "/errors-cframe", [] {
            OpenOptions o;
            o.writable = true;
            return o;
        }());
        std::vector<std::int64_t> mine = mpi::my_chunks(MPI_COMM_WORLD, a);
        if (g_rank == g_size - 1) {
            mine.push_back(a.grid().nchunks());
        }
        CHECK_THROWS_WITH(Error, mpi::write_chunks(MPI_COMM_WORLD, a, mine, field(5)),
                          "out of range");
        CHECK(read_all(a) == field_values(2));
        CHECK_THROWS_WITH(UsageError, mpi::open<double>(MPI_COMM_WORLD, dir + "/errors-cframe"),
                          "dtype");
        const std::int64_t huge = std::int64_t{1} << 40;
        CHECK_THROWS_WITH(
            Error,
            mpi::create(MPI_COMM_WORLD, dir + "/huge.b2nd", dtype_of<float>(), {huge, huge, huge}),
            "huge.b2nd");
        CHECK(!fs::exists(dir + "/huge.b2nd"));
    }
    // A corrupt chunk: the rank that reads it reports it, every rank throws, in a reduction and
    // in an evaluation that reads it.
    {
        const std::string path = dir + "/corrupt.b2nd";
        NDArray<float> c = mpi::create<float>(MPI_COMM_WORLD, path, kShape, options_for(false));
        mpi::write_chunks(MPI_COMM_WORLD, c.any(), mpi::my_chunks(MPI_COMM_WORLD, c.any()),
                          field(1));
        const std::int64_t bad = c.any().grid().nchunks() - 1;  // the last rank's chunk
        if (g_rank == 0) {
            const storage::StoredChunk sc = c.any().frame().chunk(bad);
            std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
            f.seekp(static_cast<std::streamoff>(sc.offset + 4));  // nbytes, blocksize, cbytes
            const std::string junk(12, '\xff');
            f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_THROWS_WITH(Error, mpi::sum(MPI_COMM_WORLD, c), "corrupt.b2nd");
        NDArray<float> out = mpi::create<float>(MPI_COMM_WORLD, dir + "/from-corrupt.b2nd", kShape,
                                                options_for(false));
        CHECK_THROWS_WITH(Error,
                          mpi::evaluate(
                              MPI_COMM_WORLD, out, [](const auto& x) { return x + 1.0f; }, c),
                          "corrupt.b2nd");
        CHECK(mpi::count_nonzero(MPI_COMM_WORLD, out) == 0);  // nothing committed
    }
    // Opening what is not there, or what is not an array: every rank throws.
    CHECK_THROWS_WITH(Error, mpi::open(MPI_COMM_WORLD, dir + "/missing.b2nd"), "missing.b2nd");
    if (g_rank == 0) {
        std::ofstream(dir + "/junk.b2nd") << "not a frame at all, just some text";
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_THROWS_WITH(Error, mpi::open(MPI_COMM_WORLD, dir + "/junk.b2nd"), "junk.b2nd");
    // Creating where something is: every rank throws.
    CHECK_THROWS_WITH(Error,
                      mpi::create(MPI_COMM_WORLD, dir + "/junk.b2nd", dtype_of<float>(), kShape),
                      "already exists");
}

/// evaluate, copy and reductions across ranks against one process, bit for bit.

}  // namespace mpi_check
