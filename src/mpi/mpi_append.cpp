// b2nd::mpi appends (include/b2nd/mpi/appender.hpp): each rank its part of the rows being
// filled, as chunk images; full rows encoded by every rank and written where rank 0 reserved
// room; rows committed by rank 0 with the array's new length.
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <mutex>

#include <b2nd/mpi/appender.hpp>

#include "../detail/memory.hpp"
#include "../detail/text.hpp"
#include "../engine/collective.hpp"
#include "mpi_internal.hpp"

namespace b2nd::mpi {

namespace collective = b2nd::detail::collective;
using namespace internal;

struct AnyAppender::State {
    using Clock = std::chrono::steady_clock;
    MPI_Comm comm = MPI_COMM_NULL;
    AnyArray a;
    int axis = 0, part_axis = 0;
    AppendOptions o;
    Box part;                       // this rank's part (along the axis: the array's length then)
    bool empty = false;             // a part with no elements
    std::int64_t cs = 0;            // the chunk's extent along the axis
    std::int64_t slab = 0;          // bytes of this rank's part of a slab
    std::int64_t per_row = 0;       // chunks in a row of the whole array
    std::int64_t chunk_offset = 0;  // the part's first chunk along part_axis
    std::int64_t row_start = 0, in_row = 0, committed = 0, pending_first = 0;
    b2nd::detail::Scratch row;                  // this rank's part of the row: chunk images
    std::vector<collective::Reserved> pending;  // chunks written since the last commit
    Clock::time_point last_commit = Clock::now();
    bool closed = false;
    bool broken = false;  // a collective step failed: nothing more is committed

    std::string where() const { return b2nd::detail::quoted_path(a.path()); }

    /// The grid of this rank's part of a row holding `extent` slabs.
    Grid part_row(std::int64_t extent) const {
        Shape shape = part.count;
        shape[static_cast<std::size_t>(axis)] = extent;
        const Grid& g = a.grid();
        return Grid(shape, g.chunk_shape(), g.block_shape(), g.itemsize());
    }

    /// The whole array's row grid (one chunk along the axis).
    Grid whole_row() const {
        Shape shape = a.shape();
        shape[static_cast<std::size_t>(axis)] = 1;
        const Grid& g = a.grid();
        return Grid(shape, g.chunk_shape(), g.block_shape(), g.itemsize());
    }

    void require_usable() const {
        if (broken) {
            throw UsageError(where() + ": mpi::Appender: an earlier collective step failed");
        }
        if (closed) {
            throw UsageError(where() + ": mpi::Appender: push after close()");
        }
    }

    /// Runs a collective step: every rank throws what any rank threw, and the appender is
    /// broken from then on.
    template <class Fn>
    void step(Fn&& fn) {
        const std::exception_ptr err = attempt(std::forward<Fn>(fn));
        try {
            detail::check_all(comm, err);
        } catch (...) {
            broken = true;
            throw;
        }
    }

    /// Collective: every rank encodes its chunks of the row at row_start holding `extent` slabs
    /// and writes them where rank 0 reserved room; they join `pending`.
    void write_row(std::int64_t extent) {
        const bool sparse = collective::sparse(a);
        std::vector<collective::Reserved> made;
        b2nd::detail::Scratch bytes;  // chunks (and records), one after another
        std::vector<std::pair<std::size_t, std::size_t>> at;  // per made chunk: offset, chunk bytes
        std::vector<std::size_t> tails;                       // per made chunk: record bytes
        step([&] {
            if (empty) {
                return;
            }
            const Grid prow = part_row(extent);
            const Grid whole = whole_row();
            const std::int64_t row_index = row_start / cs;
            std::mutex m;
            made.resize(static_cast<std::size_t>(prow.nchunks()));
            at.resize(made.size());
            tails.resize(made.size());
            collective::encode_images(
                a, prow, row.data(), a.nthreads(),
                [&](std::size_t k, const collective::MadeChunk& c) {
                    std::int64_t coords[kMaxNdim];
                    prow.chunk_coords(static_cast<std::int64_t>(k), coords);
                    coords[part_axis] += chunk_offset;
                    coords[axis] = 0;
                    collective::Reserved& q = made[k];
                    q.chunk = row_index * per_row + whole.chunk_index(coords);
                    q.position = c.entry;  // an index-only special chunk: its entry
                    q.nbytes = c.nbytes;
                    q.cbytes = static_cast<std::int64_t>(c.bytes.size());
                    q.digest = c.digest;
                    std::lock_guard<std::mutex> lock(m);
                    const std::size_t held = bytes.size();
                    bytes.resize(held + c.bytes.size() + c.record.size());
                    b2nd::detail::copy_bytes(bytes.data() + held, c.bytes.data(), c.bytes.size());
                    b2nd::detail::copy_bytes(bytes.data() + held + c.bytes.size(), c.record.data(),
                                             c.record.size());
                    at[k] = {held, c.bytes.size()};
                    tails[k] = c.record.size();
                });
        });
        // Room: bytes of a contiguous frame, a chunk file number per stored chunk of a sparse
        // one.
        std::uint64_t stored = 0;
        for (const collective::Reserved& q : made) {
            stored += q.cbytes > 0 ? 1 : 0;
        }
        const std::uint64_t mine = reserve_room(comm, a, sparse ? stored : bytes.size());
        step([&] {
            if (sparse) {
                std::uint64_t next = mine;
                for (std::size_t k = 0; k < made.size(); ++k) {
                    if (made[k].cbytes > 0) {
                        const std::uint8_t* p = bytes.data() + at[k].first;
                        made[k].position = static_cast<std::int64_t>(next);
                        collective::write_reserved(a, next++, {p, at[k].second},
                                                   {p + at[k].second, tails[k]});
                    }
                }
            } else {
                for (std::size_t k = 0; k < made.size(); ++k) {
                    if (made[k].cbytes > 0) {
                        made[k].position = static_cast<std::int64_t>(mine + at[k].first);
                    }
                }
                if (!bytes.empty()) {
                    collective::write_reserved(a, mine, {bytes.data(), bytes.size()});
                }
            }
        });
        pending.insert(pending.end(), made.begin(), made.end());
    }

    /// Collective: rank 0 commits the rows written since the last commit with the array's
    /// length `length`; the other ranks adopt it.
    void commit(std::int64_t length) {
        const auto* p = reinterpret_cast<const std::uint8_t*>(pending.data());
        const std::vector<std::uint8_t> all = detail::gather_bytes(
            comm, std::vector<std::uint8_t>(p, p + pending.size() * sizeof(collective::Reserved)));
        step([&] {
            if (rank_of(comm) != 0) {
                return;
            }
            std::vector<collective::Reserved> chunks(all.size() / sizeof(collective::Reserved));
            if (!chunks.empty()) {
                std::memcpy(chunks.data(), all.data(),
                            chunks.size() * sizeof(collective::Reserved));
            }
            collective::commit_reserved_rows(a, axis, pending_first, length, chunks);
        });
        step([&] {
            if (rank_of(comm) != 0) {
                a.refresh();
            }
        });
        pending.clear();
        pending_first = length / cs * cs;
        committed = length;
        last_commit = Clock::now();
    }

    /// Collective: whether rank 0 says the interval since the last commit has passed.
    bool commit_due() {
        int due = o.commit_interval.count() <= 0 || Clock::now() >= last_commit + o.commit_interval
                      ? 1
                      : 0;
        MPI_Bcast(&due, 1, MPI_INT, 0, comm);
        return due != 0;
    }
};

AnyAppender::AnyAppender(MPI_Comm comm, AnyArray array, int axis, int part_axis, AppendOptions o)
    : s_(std::make_unique<State>()) {
    State& s = *s_;
    s.comm = comm;
    s.a = std::move(array);
    s.axis = axis;
    s.part_axis = part_axis;
    s.o = o;
    refresh(comm, s.a);
    s.step([&] {
        const int nd = s.a.ndim();
        if (axis < 0 || axis >= nd || part_axis < 0 || part_axis >= nd || axis == part_axis) {
            throw UsageError(s.where() + ": mpi::Appender: axis " + std::to_string(axis) +
                             " and part axis " + std::to_string(part_axis) +
                             ": two different axes of " + std::to_string(nd) + " are needed");
        }
        if (o.queue < 1) {
            throw UsageError(s.where() + ": AppendOptions::queue is " + std::to_string(o.queue) +
                             "; at least 1 row must be able to wait");
        }
    });
    const Grid& g = s.a.grid();
    const auto ax = static_cast<std::size_t>(axis);
    const auto pax = static_cast<std::size_t>(part_axis);
    s.part = my_part(comm, s.a, part_axis);
    s.empty = s.part.count[pax] == 0;
    s.cs = g.chunk_shape()[ax];
    s.slab = s.a.itemsize();
    for (std::size_t d = 0; d < s.part.count.size(); ++d) {
        s.slab *= d == ax ? 1 : s.part.count[d];
    }
    s.per_row = s.whole_row().nchunks();
    s.chunk_offset = s.part.start[pax] / g.chunk_shape()[pax];
    const std::int64_t length = s.a.shape()[ax];
    s.row_start = length / s.cs * s.cs;
    s.committed = length;
    s.pending_first = s.row_start;
    if (!s.empty) {
        s.row.resize(static_cast<std::size_t>(s.part_row(s.cs).nchunks() * g.chunk_nbytes()));
    }
    const std::int64_t had = length - s.row_start;
    s.step([&] {
        if (had > 0 && !s.empty) {
            // This rank's part of the array's partial last row, read once.
            Box box = s.part;
            box.start[ax] = s.row_start;
            box.count[ax] = had;
            std::vector<std::uint8_t> data(static_cast<std::size_t>(box.size() * s.a.itemsize()));
            s.a.read(box, data.data(), data.size());
            collective::scatter_slabs(s.part_row(s.cs), axis, data.data(), had, 0, had, 0,
                                      s.row.data());
        }
    });
    s.in_row = had;
}

AnyAppender::~AnyAppender() {
    try {
        close();
    } catch (...) {
        // close() is where errors are seen; a destructor does not throw
    }
}

Box AnyAppender::part() const {
    return s_->part;
}

void AnyAppender::push(ByteSpan data) {
    State& s = *s_;
    // Every rank's number of slabs (a rank whose part is empty cannot tell: it follows).
    long long n = -1;
    s.step([&] {
        s.require_usable();
        if (s.slab == 0) {
            if (!data.empty()) {
                throw UsageError(s.where() + ": mpi::Appender: this rank's part is empty; it " +
                                 "pushes no bytes (got " + std::to_string(data.size()) + ")");
            }
            return;
        }
        if (data.size() % static_cast<std::size_t>(s.slab) != 0) {
            throw UsageError(s.where() + ": push of " + std::to_string(data.size()) +
                             " bytes: not a whole number of this rank's parts of a slab (" +
                             std::to_string(s.slab) + " bytes)");
        }
        n = static_cast<long long>(data.size() / static_cast<std::size_t>(s.slab));
    });
    long long mine[2] = {n >= 0 ? n : LLONG_MIN, n >= 0 ? -n : LLONG_MIN}, all[2] = {0, 0};
    MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_MAX, s.comm);
    s.step([&] {
        if (all[0] != -all[1]) {
            throw UsageError(s.where() + ": mpi::Appender: the ranks push different numbers of " +
                             "slabs (" + std::to_string(-all[1]) + " to " + std::to_string(all[0]) +
                             ")");
        }
    });
    const std::int64_t total = all[0] == LLONG_MIN ? 0 : all[0];
    std::int64_t done = 0;
    while (done < total) {
        const std::int64_t take = std::min(total - done, s.cs - s.in_row);
        if (!s.empty) {
            collective::scatter_slabs(s.part_row(s.cs), s.axis, data.data(), total, done, take,
                                      s.in_row, s.row.data());
        }
        s.in_row += take;
        done += take;
        if (s.in_row == s.cs) {
            s.write_row(s.cs);
            s.row_start += s.cs;
            s.in_row = 0;
            if (s.commit_due()) {
                s.commit(s.row_start);
            }
        }
    }
}

void AnyAppender::flush() {
    State& s = *s_;
    s.step([&] {
        if (s.broken) {
            throw UsageError(s.where() + ": mpi::Appender: an earlier collective step failed");
        }
    });
    const std::int64_t length = s.row_start + s.in_row;
    if (s.in_row > 0 && length != s.committed) {
        s.write_row(s.in_row);  // written again once the row is full
    }
    if (!s.pending.empty() || length != s.committed) {
        s.commit(length);
    }
}

void AnyAppender::close() {
    State& s = *s_;
    if (s.closed) {
        return;
    }
    flush();
    s.closed = true;
}

std::int64_t AnyAppender::length() const noexcept {
    return s_->row_start + s_->in_row;
}

std::int64_t AnyAppender::part_bytes() const noexcept {
    return s_->slab;
}

}  // namespace b2nd::mpi
