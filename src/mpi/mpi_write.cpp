// b2nd::mpi's collective writes (include/b2nd/mpi.hpp has the model): chunks made on every rank
// in rounds (make, size exchange, reservation on rank 0, writes by each rank), one commit on rank
// 0, through the engine's interface for it (engine/collective.hpp).
#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>

#include <b2nd/mpi/collective.hpp>

#include "../detail/memory.hpp"
#include "../detail/text.hpp"
#include "../engine/collective.hpp"
#include "mpi_internal.hpp"

namespace b2nd::mpi {

namespace collective = b2nd::detail::collective;
using namespace internal;

namespace {

/// One chunk made by this rank: where its bytes went (or its special entry), its sizes.
struct Placed {
    std::int64_t chunk = 0;
    std::int64_t position = 0;  // reserved position, or the special entry when cbytes == 0
    std::int64_t nbytes = 0;
    std::int64_t cbytes = 0;
    std::uint64_t digest = 0;  // checksum of the stored bytes
};

/// Copies the part of `src` (C order of `src_box`) that lies in `dst_box` into dst (C order of
/// dst_box), row by row.
void copy_overlap(const Box& src_box,
                  const std::uint8_t* src,
                  const Box& dst_box,
                  std::uint8_t* dst,
                  std::int64_t isz) {
    const std::size_t nd = dst_box.start.size();
    Shape lo(nd), cnt(nd);
    for (std::size_t d = 0; d < nd; ++d) {
        lo[d] = std::max(src_box.start[d], dst_box.start[d]);
        const std::int64_t hi =
            std::min(src_box.start[d] + src_box.count[d], dst_box.start[d] + dst_box.count[d]);
        if (hi <= lo[d]) {
            return;
        }
        cnt[d] = hi - lo[d];
    }
    if (nd == 0) {
        std::memcpy(dst, src, static_cast<std::size_t>(isz));
        return;
    }
    std::vector<std::int64_t> sstride(nd), dstride(nd);
    std::int64_t ss = isz, ds = isz;
    for (std::size_t d = nd; d-- > 0;) {
        sstride[d] = ss;
        dstride[d] = ds;
        ss *= src_box.count[d];
        ds *= dst_box.count[d];
    }
    const std::int64_t row = cnt[nd - 1] * isz;
    std::vector<std::int64_t> k(nd, 0);
    const std::int64_t rows = Box::region(lo, cnt).size() / cnt[nd - 1];
    for (std::int64_t r = 0; r < rows; ++r) {
        std::int64_t so = 0, dof = 0;
        for (std::size_t d = 0; d < nd; ++d) {
            so += (lo[d] + k[d] - src_box.start[d]) * sstride[d];
            dof += (lo[d] + k[d] - dst_box.start[d]) * dstride[d];
        }
        std::memcpy(dst + dof, src + so, static_cast<std::size_t>(row));
        for (std::size_t d = nd - 1; d-- > 0;) {
            if (++k[d] < cnt[d]) {
                break;
            }
            k[d] = 0;
        }
    }
}

/// The chunks a box (step 1) touches, in increasing order.
std::vector<std::int64_t> chunks_of(const Grid& g, const Box& box) {
    std::vector<std::int64_t> ids;
    if (box.size() == 0) {
        return ids;
    }
    const std::size_t nd = box.start.size();
    Shape first(nd), last(nd), at(nd);
    for (std::size_t d = 0; d < nd; ++d) {
        const std::int64_t c = g.chunk_shape()[d];
        first[d] = box.start[d] / c;
        last[d] = (box.start[d] + box.count[d] - 1) / c;
    }
    at = first;
    while (true) {
        std::int64_t id = 0;
        for (std::size_t d = 0; d < nd; ++d) {
            id = id * g.chunks_in(static_cast<int>(d)) + at[d];
        }
        ids.push_back(id);
        std::size_t d = nd;
        while (d-- > 0) {
            if (++at[d] <= last[d]) {
                break;
            }
            at[d] = first[d];
        }
        if (d == static_cast<std::size_t>(-1)) {
            break;
        }
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

}  // namespace

// ---- writes ---------------------------------------------------------------------------------

namespace internal {

/// An exclusive prefix sum and a total over comm.
std::pair<std::uint64_t, std::uint64_t> exscan_total(MPI_Comm comm, std::uint64_t mine) {
    unsigned long long before = 0, total = 0;
    const unsigned long long m = mine;
    MPI_Exscan(&m, &before, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
    if (rank_of(comm) == 0) {
        before = 0;  // MPI leaves rank 0's result undefined
    }
    MPI_Allreduce(&m, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
    return {before, total};
}

/// Collective: room for `mine` (bytes of a contiguous frame, chunk file numbers of a sparse one)
/// on every rank, reserved by rank 0 for all ranks at once; where this rank's part starts.
std::uint64_t reserve_room(MPI_Comm comm, AnyArray& a, std::uint64_t mine) {
    const std::pair<std::uint64_t, std::uint64_t> sizes = exscan_total(comm, mine);
    unsigned long long at = 0;
    detail::check_all(comm, attempt([&] {
                          if (rank_of(comm) == 0 && sizes.second > 0) {
                              at = collective::reserve(a, sizes.second);
                          }
                      }));
    MPI_Bcast(&at, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
    return at + sizes.first;
}

}  // namespace internal

namespace {

/// write_chunks, with `shared_hint` added to the message refusing a chunk on two ranks.
void write_chunks_with(MPI_Comm comm,
                       AnyArray& a,
                       const std::vector<std::int64_t>& chunks,
                       const ChunkProducer& produce,
                       const WriteOptions& options,
                       const std::string& shared_hint) {
    const int me = rank_of(comm);
    // Rank 0 writes; every rank's chunks are in range and no chunk is on two ranks.
    std::exception_ptr err = attempt([&] {
        if (!a.valid()) {
            throw UsageError(ranks_message("write_chunks on an array handle that is not open"));
        }
        if (me == 0 && !a.writable()) {
            throw UsageError("\"" + a.path() +
                             "\": b2nd::mpi writes need rank 0's handle open for writing "
                             "(mpi::create, or mpi::open with writable)");
        }
        const std::int64_t n = a.grid().nchunks();
        for (std::int64_t c : chunks) {
            if (c < 0 || c >= n) {
                throw UsageError(b2nd::detail::quoted_path(a.path()) + ": chunk " +
                                 std::to_string(c) + " out of range (" + std::to_string(n) +
                                 " chunks)");
            }
        }
    });
    detail::check_all(comm, err);
    {
        const auto* p = reinterpret_cast<const std::uint8_t*>(chunks.data());
        const std::vector<std::uint8_t> all =
            detail::gather_bytes(comm, std::vector<std::uint8_t>(p, p + chunks.size() * 8));
        err = attempt([&] {
            if (me != 0) {
                return;
            }
            std::vector<bool> seen(static_cast<std::size_t>(a.grid().nchunks()));
            for (std::size_t off = 0; off + 8 <= all.size(); off += 8) {
                std::int64_t c;
                std::memcpy(&c, all.data() + off, 8);
                if (c < 0 || static_cast<std::size_t>(c) >= seen.size()) {  // a stale handle
                    throw UsageError(b2nd::detail::quoted_path(a.path()) + ": chunk " +
                                     std::to_string(c) + " out of range (" +
                                     std::to_string(seen.size()) + " chunks)");
                }
                if (seen[static_cast<std::size_t>(c)]) {
                    throw UsageError(b2nd::detail::quoted_path(a.path()) + ": chunk " +
                                     std::to_string(c) +
                                     " is given to more than one rank (or twice)" + shared_hint);
                }
                seen[static_cast<std::size_t>(c)] = true;
            }
        });
        detail::check_all(comm, err);
    }

    const bool sparse = collective::sparse(a);
    const int threads = options.nthreads > 0 ? options.nthreads : a.nthreads();
    std::vector<Placed> placed(chunks.size());
    std::int64_t done = 0;
    std::mutex mutex;  // the round buffer, progress
    // Makes chunks[first, last) on `threads` threads; place(k, info, bytes) receives each one's
    // bytes (empty for an index-only special chunk) from the encoder's scratch.
    const auto make =
        [&](std::size_t first, std::size_t last,
            const std::function<void(std::size_t, Placed&, const collective::MadeChunk&)>& place) {
            collective::make_chunks(
                a, chunks, first, last, threads, produce,
                [&](std::size_t k, const collective::MadeChunk& m) {
                    placed[k] = {chunks[k], m.entry, m.nbytes,
                                 static_cast<std::int64_t>(m.bytes.size()), m.digest};
                    place(k, placed[k], m);
                    if (options.progress) {
                        std::lock_guard<std::mutex> lock(mutex);
                        options.progress(++done, static_cast<std::int64_t>(chunks.size()));
                    }
                });
        };

    if (sparse) {
        // One chunk file number per chunk, reserved up front (index-only special chunks leave
        // theirs unused): each chunk goes to its file as soon as it is made, nothing is held.
        const std::uint64_t mine = reserve_room(comm, a, chunks.size());
        err = attempt([&] {
            make(0, chunks.size(), [&](std::size_t k, Placed& p, const collective::MadeChunk& m) {
                if (!m.bytes.empty()) {
                    p.position = static_cast<std::int64_t>(mine + k);
                    collective::write_reserved(a, static_cast<std::uint64_t>(p.position), m.bytes,
                                               m.record);
                }
            });
        });
        detail::check_all(comm, err);
    } else {
        // Rounds: chunks are made into a buffer until it holds round_bytes; then the ranks
        // exchange sizes, rank 0 reserves the round's bytes, and each rank writes its buffer at
        // its offset in one write. The buffer stays with the calling thread (warm for the next
        // round and call: fresh memory costs more than the copy into it).
        thread_local b2nd::detail::Scratch callers_round;
        b2nd::detail::Scratch& round = callers_round;  // this thread's, also in the workers
        std::size_t next = 0;
        while (true) {
            std::size_t held = 0;
            const std::size_t first = next;
            err = attempt([&] {
                while (next < chunks.size() && held < options.round_bytes) {
                    const std::size_t batch = std::min(
                        chunks.size() - next, static_cast<std::size_t>(std::max(1, threads)));
                    make(next, next + batch,
                         [&](std::size_t, Placed& p, const collective::MadeChunk& m) {
                             if (m.bytes.empty()) {
                                 return;  // index-only: p.position holds its special entry
                             }
                             // The chunk, then its record (a version-2 table's block digests).
                             const std::size_t n = m.bytes.size() + m.record.size();
                             std::lock_guard<std::mutex> lock(mutex);
                             if (round.size() < held + n) {
                                 round.resize(std::max(
                                     held + n, std::min(options.round_bytes, held * 2 + 1)));
                             }
                             b2nd::detail::copy_bytes(round.data() + held, m.bytes.data(),
                                                      m.bytes.size());
                             b2nd::detail::copy_bytes(round.data() + held + m.bytes.size(),
                                                      m.record.data(), m.record.size());
                             p.position = static_cast<std::int64_t>(held);  // in the buffer
                             held += n;
                         });
                    next += batch;
                }
            });
            detail::check_all(comm, err);
            const std::uint64_t mine = reserve_room(comm, a, held);
            err = attempt([&] {
                for (std::size_t k = first; k < next; ++k) {
                    if (placed[k].cbytes > 0) {
                        placed[k].position += static_cast<std::int64_t>(mine);
                    }
                }
                if (held > 0) {
                    collective::write_reserved(a, mine, {round.data(), held});  // one write
                }
            });
            detail::check_all(comm, err);
            int more = next < chunks.size() ? 1 : 0, any_more = 0;
            MPI_Allreduce(&more, &any_more, 1, MPI_INT, MPI_LOR, comm);
            if (any_more == 0) {
                break;
            }
        }
        if (round.capacity() > (std::size_t{512} << 20)) {
            b2nd::detail::Scratch().swap(round);
        }
    }

    // Rank 0 adopts every rank's chunks and commits them in one go.
    const auto* p = reinterpret_cast<const std::uint8_t*>(placed.data());
    const std::vector<std::uint8_t> all = detail::gather_bytes(
        comm, std::vector<std::uint8_t>(p, p + placed.size() * sizeof(Placed)));
    err = attempt([&] {
        if (me != 0) {
            return;
        }
        std::vector<collective::Reserved> reserved(all.size() / sizeof(Placed));
        for (std::size_t k = 0; k < reserved.size(); ++k) {
            Placed q;
            std::memcpy(&q, all.data() + k * sizeof(Placed), sizeof q);
            reserved[k] = {q.chunk, q.position, static_cast<std::int32_t>(q.nbytes), q.cbytes,
                           q.digest};
        }
        collective::commit_reserved(a, reserved);
    });
    detail::check_all(comm, err);
    if (me != 0) {
        detail::check_all(comm, attempt([&] { a.refresh(); }));
    } else {
        detail::check_all(comm, nullptr);
    }
}

}  // namespace

void write_chunks(MPI_Comm comm,
                  AnyArray& a,
                  const std::vector<std::int64_t>& chunks,
                  const ChunkProducer& produce,
                  const WriteOptions& options) {
    refresh(comm, a);
    write_chunks_with(comm, a, chunks, produce, options, "");
}

void write(MPI_Comm comm, AnyArray& a, const Box& box, ByteSpan data, const WriteOptions& options) {
    refresh(comm, a);  // the box is checked against the latest shape
    std::vector<std::int64_t> mine;
    std::exception_ptr err = attempt([&] {
        b2nd::detail::require_box(a, box, "write");
        for (std::int64_t s : box.step) {
            if (s != 1) {
                throw UsageError(b2nd::detail::quoted_path(a.path()) +
                                 ": b2nd::mpi::write takes boxes of step 1");
            }
        }
        const auto want = static_cast<std::uint64_t>(box.size() * a.itemsize());
        if (data.size() != want) {
            throw UsageError(b2nd::detail::quoted_path(a.path()) + ": " +
                             std::to_string(data.size()) + " bytes of data for a box of " +
                             std::to_string(want) + " bytes");
        }
        mine = chunks_of(a.grid(), box);
    });
    detail::check_all(comm, err);
    // Chunks must have one writer: the gather in write_chunks refuses a chunk on two ranks, but a
    // clearer message names the boxes' rule.
    const std::int64_t isz = a.itemsize();
    write_chunks_with(
        comm, a, mine,
        [&](std::int64_t, const Box& region, std::uint8_t* out) {
            bool covered = true;
            for (std::size_t d = 0; d < region.start.size(); ++d) {
                covered = covered && box.start[d] <= region.start[d] &&
                          region.start[d] + region.count[d] <= box.start[d] + box.count[d];
            }
            if (!covered) {  // keep the chunk's other elements (the old content)
                a.read(region, out, static_cast<std::size_t>(region.size() * isz));
            }
            copy_overlap(box, data.data(), region, out, isz);
        },
        options,
        "; the ranks' boxes share a chunk: give each rank whole chunks "
        "(b2nd::mpi::my_part(comm, array, axis))");
}

AnyArray copy(MPI_Comm comm,
              const AnyArray& src,
              const std::string& path,
              const CreateOptions& options,
              const WriteOptions& write_options) {
    detail::check_all(
        comm, attempt([&] {
            if (!src.valid()) {
                throw UsageError(ranks_message("copy from an array handle that is not open"));
            }
        }));
    refresh(comm, src);
    CreateOptions o = options;
    if (o.chunk_shape.empty() && o.block_shape.empty()) {
        o.chunk_shape = src.chunk_shape();
        o.block_shape = src.block_shape();
    }
    // The source's user metalayers, unless the options name some.
    if (o.metalayers.empty()) {
        for (const std::string& name : src.metalayer_names()) {
            if (name != "b2nd" && name != "caterva") {
                o.metalayers.emplace_back(name, *src.metalayer(name));
            }
        }
    }
    AnyArray dst = create(comm, path, src.dtype(), src.shape(), o);
    const std::int64_t isz = src.itemsize();
    write_chunks(
        comm, dst, my_chunks(comm, dst, write_options.partition),
        [&](std::int64_t, const Box& region, std::uint8_t* out) {
            src.read(region, out, static_cast<std::size_t>(region.size() * isz));
        },
        write_options);
    // And its vlmeta (attributes), by the writer.
    std::exception_ptr err = attempt([&] {
        if (rank_of(comm) == 0) {
            for (const std::string& name : src.vlmeta_names()) {
                const std::vector<std::uint8_t> v = *src.vlmeta(name);
                dst.set_vlmeta(name, {v.data(), v.size()});
            }
        }
    });
    detail::check_all(comm, err);
    detail::check_all(comm, attempt([&] {
                          if (rank_of(comm) != 0) {
                              dst.refresh();
                          }
                      }));
    return dst;
}

}  // namespace b2nd::mpi
