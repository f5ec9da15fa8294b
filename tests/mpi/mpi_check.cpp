// The b2nd::mpi checks, run under mpiexec with 1, 2 and 4 ranks (tests/CMakeLists.txt, label
// "mpi"): mpi_check SCENARIO DIR [KIND]. Every rank runs the same scenario; rank 0 also computes
// the single-process reference with the ordinary API and compares bit for bit. A failed check is
// reported with its rank and line and does not stop the scenario (the ranks must stay in step
// through the collective calls); the exit status says whether any rank saw a failure.
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <b2nd/mpi.hpp>
#include <b2nd/storage/frame.hpp>

namespace fs = std::filesystem;
using namespace b2nd;

namespace {

int g_rank = 0, g_size = 1;
long g_checks = 0, g_failures = 0;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        ++g_checks;                                                                                \
        if (!(cond)) {                                                                             \
            ++g_failures;                                                                          \
            std::fprintf(stderr, "rank %d: %s:%d: CHECK(%s) failed\n", g_rank, __FILE__, __LINE__, \
                         #cond);                                                                   \
        }                                                                                          \
    } while (0)

/// Runs fn, which must throw an E whose message contains `text` (on this rank).
template <class E, class Fn>
void check_throws(Fn&& fn, const std::string& text, int line) {
    ++g_checks;
    try {
        fn();
    } catch (const std::exception& e) {
        bool right_kind = true;
        if constexpr (!std::is_same_v<E, std::exception>) {
            right_kind = dynamic_cast<const E*>(&e) != nullptr;
        }
        if (!right_kind) {
            ++g_failures;
            std::fprintf(stderr, "rank %d: line %d: wrong exception: %s\n", g_rank, line, e.what());
        } else if (std::string(e.what()).find(text) == std::string::npos) {
            ++g_failures;
            std::fprintf(stderr, "rank %d: line %d: message without '%s': %s\n", g_rank, line,
                         text.c_str(), e.what());
        }
        return;
    }
    ++g_failures;
    std::fprintf(stderr, "rank %d: line %d: no exception\n", g_rank, line);
}
#define CHECK_THROWS_WITH(E, expr, text) check_throws<E>([&] { expr; }, text, __LINE__)

std::vector<std::uint8_t> file_bytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

/// Every file of a contiguous array, or of a sparse directory, by name.
std::map<std::string, std::vector<std::uint8_t>> files_of(const std::string& path) {
    std::map<std::string, std::vector<std::uint8_t>> out;
    if (fs::is_directory(path)) {
        for (const auto& e : fs::directory_iterator(path)) {
            const std::string name = e.path().filename().string();
            if (name.find(".chunk") != std::string::npos || name == "chunks.b2frame") {
                out[name] = file_bytes(e.path().string());
            }
        }
    } else {
        out[""] = file_bytes(path);
    }
    return out;
}

const Shape kShape{37, 45, 29};

/// The test field: zeros and a constant in some chunks (special chunks), else values that vary
/// with a `version` (a rewrite changes every non-special chunk).
float value_at(std::int64_t i, std::int64_t j, std::int64_t k, int version) {
    if (i < 8) {
        return 0.0f;
    }
    if (i < 16 && j < 16) {
        return 2.5f;
    }
    return static_cast<float>(version) * 0.25f +
           static_cast<float>((i * 131 + j * 17 + k * 7) % 97) * 0.5f +
           static_cast<float>(i) * 0.01f;
}

mpi::ChunkProducer field(int version) {
    return [version](std::int64_t, const Box& r, std::uint8_t* out) {
        auto* v = reinterpret_cast<float*>(out);
        for (std::int64_t i = 0; i < r.count[0]; ++i) {
            for (std::int64_t j = 0; j < r.count[1]; ++j) {
                for (std::int64_t k = 0; k < r.count[2]; ++k) {
                    *v++ = value_at(r.start[0] + i, r.start[1] + j, r.start[2] + k, version);
                }
            }
        }
    };
}

std::vector<float> field_values(int version) {
    std::vector<float> v(static_cast<std::size_t>(kShape[0] * kShape[1] * kShape[2]));
    field(version)(0, Box::whole(kShape), reinterpret_cast<std::uint8_t*>(v.data()));
    return v;
}

std::vector<float> read_all(const AnyArray& a) {
    std::vector<float> v(static_cast<std::size_t>(a.size()));
    a.read(Box::whole(a.shape()), v.data(), v.size() * sizeof(float));
    return v;
}

CreateOptions options_for(bool sparse) {
    CreateOptions o;
    o.chunk_shape = {8, 16, 10};
    o.block_shape = {4, 8, 5};
    o.sparse = sparse;
    o.nthreads = 1;
    return o;
}

/// Rank 0: every chunk of `a` stored as in `ref` (the same bytes, or the same special entry).
bool same_chunks(const AnyArray& a, const AnyArray& ref) {
    if (a.grid().nchunks() != ref.grid().nchunks()) {
        return false;
    }
    for (std::int64_t i = 0; i < a.grid().nchunks(); ++i) {
        const storage::StoredChunk x = a.frame().chunk(i), y = ref.frame().chunk(i);
        if (x.special != y.special || x.nbytes != y.nbytes ||
            !std::equal(x.bytes.begin(), x.bytes.end(), y.bytes.begin(), y.bytes.end())) {
            std::fprintf(stderr, "chunk %lld differs\n", static_cast<long long>(i));
            return false;
        }
    }
    return true;
}

/// The single-process reference: one process, one thread, write_chunks over every chunk.
AnyArray reference(const std::string& path, bool sparse, int version) {
    CreateOptions o = options_for(sparse);
    o.overwrite = true;
    AnyArray ref = AnyArray::create(path, dtype_of<float>(), kShape, o);
    ref.write_chunks(ref.all_chunks(), field(version), 1);
    return ref;
}

std::string kind_name(bool sparse) {
    return sparse ? "sframe" : "cframe";
}

// ---- scenarios ------------------------------------------------------------------------------

/// Collective writes under every partition, in one round and in many: content, chunk bytes and
/// (region, one round) whole files equal the single-process write.
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

}  // namespace

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
