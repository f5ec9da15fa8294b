// b2nd::mpi (include/b2nd/mpi.hpp has the model): agreement on errors across ranks, partitions,
// collective create and open. The collective writes are mpi_write.cpp.
#include <algorithm>
#include <climits>
#include <cstring>

#include <b2nd/mpi/collective.hpp>

#include "../detail/text.hpp"
#include "mpi_internal.hpp"

namespace b2nd::mpi {

using namespace internal;

namespace {

/// The geometry rank 0 decided, for the other ranks to compare with what they opened.
std::vector<std::int64_t> geometry_of(const AnyArray& a) {
    std::vector<std::int64_t> g;
    for (const Shape* s : {&a.shape(), &a.chunk_shape(), &a.block_shape()}) {
        g.push_back(static_cast<std::int64_t>(s->size()));
        g.insert(g.end(), s->begin(), s->end());
    }
    g.push_back(a.itemsize());
    g.push_back(a.sparse() ? 1 : 0);
    return g;
}

/// Collective: every rank compares its handle's geometry with rank 0's (shared file system).
void agree_on_geometry(MPI_Comm comm, AnyArray& a, const std::string& path) {
    const std::vector<std::int64_t> mine = geometry_of(a);
    std::vector<std::uint8_t> root(
        reinterpret_cast<const std::uint8_t*>(mine.data()),
        reinterpret_cast<const std::uint8_t*>(mine.data() + mine.size()));
    detail::broadcast_bytes(comm, root);
    std::exception_ptr err = attempt([&] {
        const auto same = [&] {
            const std::vector<std::int64_t> now = geometry_of(a);
            return root.size() == now.size() * sizeof(std::int64_t) &&
                   std::memcmp(root.data(), now.data(), root.size()) == 0;
        };
        if (!same() && !(a.refresh() && same())) {
            throw UsageError(b2nd::detail::quoted_path(path) + ": rank " +
                             std::to_string(rank_of(comm)) +
                             " sees another array than rank 0 (is the path on a file system all "
                             "ranks share?)");
        }
    });
    detail::check_all(comm, err);
}
}  // namespace

// ---- detail ---------------------------------------------------------------------------------

void detail::check_all(MPI_Comm comm, const std::exception_ptr& mine) {
    const int size = size_of(comm);
    const int me = mine ? rank_of(comm) : size;
    int first = size;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == size) {
        return;
    }
    std::vector<std::uint8_t> message;
    if (rank_of(comm) == first) {
        std::string what = "unknown error";
        try {
            std::rethrow_exception(mine);
        } catch (const std::exception& e) {
            what = e.what();
        } catch (...) {  // NOLINT(bugprone-empty-catch): described as unknown
        }
        message.assign(what.begin(), what.end());
    }
    // The failing rank's message, from it to all.
    unsigned long long n = message.size();
    MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, first, comm);
    message.resize(static_cast<std::size_t>(std::min<unsigned long long>(n, 1 << 20)));
    MPI_Bcast(message.data(), static_cast<int>(message.size()), MPI_BYTE, first, comm);
    if (mine) {
        std::rethrow_exception(mine);
    }
    throw Error(ranks_message("rank " + std::to_string(first) +
                              " failed: " + std::string(message.begin(), message.end())));
}

void refresh(MPI_Comm comm, const AnyArray& a) {
    MPI_Barrier(comm);  // rank 0's own commits are done before anyone looks
    std::exception_ptr err;
    if (rank_of(comm) != 0 && a.valid()) {
        err = attempt([&] {
            AnyArray same = a;  // a copy shares the handle: refreshing it refreshes `a`
            same.refresh();
        });
    }
    detail::check_all(comm, err);
}

std::vector<std::uint8_t> detail::gather_bytes(MPI_Comm comm,
                                               const std::vector<std::uint8_t>& mine) {
    const int size = size_of(comm);
    const auto n = static_cast<long long>(mine.size());
    long long total = 0;
    MPI_Allreduce(&n, &total, 1, MPI_LONG_LONG, MPI_SUM, comm);
    if (total > INT_MAX) {  // every rank knows: all throw together
        throw UsageError(ranks_message("a gather of " + std::to_string(total) +
                                       " bytes to rank 0 (more than 2 GiB)"));
    }
    const int count = static_cast<int>(n);
    std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
    MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
    std::vector<std::uint8_t> all;
    if (rank_of(comm) == 0) {
        int at = 0;
        for (int r = 0; r < size; ++r) {
            displs[static_cast<std::size_t>(r)] = at;
            at += counts[static_cast<std::size_t>(r)];
        }
        all.resize(static_cast<std::size_t>(at));
    }
    MPI_Gatherv(mine.data(), count, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, 0,
                comm);
    return all;
}

void detail::broadcast_bytes(MPI_Comm comm, std::vector<std::uint8_t>& bytes) {
    unsigned long long n = bytes.size();
    MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
    bytes.resize(static_cast<std::size_t>(n));
    for (unsigned long long off = 0; off < n;) {
        const int piece = static_cast<int>(std::min<unsigned long long>(n - off, INT_MAX));
        MPI_Bcast(bytes.data() + off, piece, MPI_BYTE, 0, comm);
        off += static_cast<unsigned long long>(piece);
    }
}

// ---- partitions -----------------------------------------------------------------------------

Box my_part(MPI_Comm comm, const Shape& shape, int axis) {
    const int nd = static_cast<int>(shape.size());
    const int ax = axis < 0 ? axis + nd : axis;
    if (ax < 0 || ax >= nd) {
        throw UsageError(ranks_message("my_part: axis " + std::to_string(axis) +
                                       " out of range for shape " + to_string(shape)));
    }
    const std::int64_t n = shape[static_cast<std::size_t>(ax)];
    const std::int64_t size = size_of(comm), r = rank_of(comm);
    const std::int64_t base = n / size, extra = n % size;
    const std::int64_t start = r * base + std::min(r, extra);
    Box b = Box::whole(shape);
    b.start[static_cast<std::size_t>(ax)] = start;
    b.count[static_cast<std::size_t>(ax)] = base + (r < extra ? 1 : 0);
    return b;
}

Box my_part(MPI_Comm comm, const AnyArray& a, int axis) {
    const Grid& g = a.grid();
    const int nd = g.ndim();
    const int ax = axis < 0 ? axis + nd : axis;
    if (ax < 0 || ax >= nd) {
        throw UsageError(b2nd::detail::quoted_path(a.path()) + ": my_part: axis " +
                         std::to_string(axis) + " out of range for shape " + to_string(a.shape()));
    }
    // Split the chunks along the axis, then turn chunk indices into elements.
    Shape chunks(static_cast<std::size_t>(nd), 1);
    chunks[static_cast<std::size_t>(ax)] = g.chunks_in(ax);
    const Box in_chunks = my_part(comm, chunks, ax);
    const auto a_ = static_cast<std::size_t>(ax);
    const std::int64_t c = g.chunk_shape()[a_];
    Box b = Box::whole(a.shape());
    const std::int64_t start = std::min(in_chunks.start[a_] * c, a.shape()[a_]);
    const std::int64_t end =
        std::min((in_chunks.start[a_] + in_chunks.count[a_]) * c, a.shape()[a_]);
    b.start[a_] = start;
    b.count[a_] = end - start;
    return b;
}

std::vector<std::int64_t> my_chunks(MPI_Comm comm, const AnyArray& a, Partition p) {
    const std::int64_t n = a.size() == 0 ? 0 : a.grid().nchunks();
    const std::int64_t size = size_of(comm), r = rank_of(comm);
    std::vector<std::int64_t> ids;
    if (p.kind == Partition::Kind::region) {
        const std::int64_t base = n / size, extra = n % size;
        const std::int64_t start = r * base + std::min(r, extra);
        const std::int64_t count = base + (r < extra ? 1 : 0);
        for (std::int64_t i = 0; i < count; ++i) {
            ids.push_back(start + i);
        }
        return ids;
    }
    if (p.block < 1) {
        throw UsageError(ranks_message("a block-cyclic partition needs a block of at least 1"));
    }
    for (std::int64_t first = r * p.block; first < n; first += size * p.block) {
        for (std::int64_t i = first; i < std::min(n, first + p.block); ++i) {
            ids.push_back(i);
        }
    }
    return ids;
}

// ---- create and open ------------------------------------------------------------------------

AnyArray create(MPI_Comm comm,
                const std::string& path,
                const DType& dtype,
                const Shape& shape,
                const CreateOptions& options) {
    AnyArray a;
    if (rank_of(comm) == 0) {
        detail::check_all(comm,
                          attempt([&] { a = AnyArray::create(path, dtype, shape, options); }));
    } else {
        detail::check_all(comm, nullptr);
        OpenOptions o;
        o.nthreads = options.nthreads;
        o.cache_bytes = options.cache_bytes;
        o.durable = options.durable;
        o.locking = options.locking;
        detail::check_all(comm, attempt([&] { a = AnyArray::open(path, o); }));
    }
    if (rank_of(comm) == 0) {
        detail::check_all(comm, nullptr);
    }
    agree_on_geometry(comm, a, path);
    return a;
}

AnyArray open(MPI_Comm comm, const std::string& path, const OpenOptions& options) {
    AnyArray a;
    if (rank_of(comm) == 0) {
        detail::check_all(comm, attempt([&] { a = AnyArray::open(path, options); }));
        detail::check_all(comm, nullptr);
    } else {
        detail::check_all(comm, nullptr);
        OpenOptions o = options;
        o.writable = false;
        detail::check_all(comm, attempt([&] { a = AnyArray::open(path, o); }));
    }
    agree_on_geometry(comm, a, path);
    return a;
}

}  // namespace b2nd::mpi
