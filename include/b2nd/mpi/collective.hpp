// b2nd::mpi without xtensor: partitions, collective create and open, collective writes and
// copies (target b2nd::mpi). <b2nd/mpi.hpp> adds evaluate and the reductions, which need
// xtensor; the compiled library includes only this header. The model is described in
// <b2nd/mpi.hpp> and docs/mpi.md.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include <b2nd/b2nd.hpp>

#include <mpi.h>

namespace b2nd::mpi {

/// Which rank owns which chunks.
struct Partition {
    /// How chunks are dealt out.
    enum class Kind {
        region,        ///< rank r: the r-th of `size` runs of consecutive chunk indices (C order)
        block_cyclic,  ///< runs of `block` chunk indices dealt out to the ranks in turn
    };
    Kind kind = Kind::region;  ///< how chunks are dealt out
    std::int64_t block = 1;    ///< run length for block_cyclic

    /// Consecutive runs of chunks, one per rank.
    static Partition region() { return {}; }
    /// Runs of `block` chunks dealt out to the ranks in turn.
    static Partition block_cyclic(std::int64_t block = 1) { return {Kind::block_cyclic, block}; }
};

/// Options of collective writes.
struct WriteOptions {
    /// Who computes which chunks (evaluate, copy; write_chunks takes them from its caller).
    Partition partition;
    /// Contiguous frames: encoded bytes a rank holds before writing them. A round of writes (one
    /// MPI_Exscan, one reservation, one write per rank) starts whenever a rank reaches it, and
    /// at the end. The buffer stays with the calling thread for the next call (fresh memory is
    /// slow to touch; more than 512 MiB is given back). Sparse frames hold nothing: each chunk
    /// goes to its own file as soon as it is made.
    std::size_t round_bytes = std::size_t{128} << 20;
    /// Chunks made at once on each rank (0: the array's nthreads()).
    int nthreads = 0;
    /// Called on each rank after each of its chunks with (done, total) of its own chunks.
    std::function<void(std::int64_t, std::int64_t)> progress;
};

/// How reductions combine what the ranks computed.
enum class Combine {
    /// Every chunk's partial result goes to rank 0, which merges them in chunk order as one
    /// process does: the result is bit for bit the single-process one, for any number of ranks.
    ordered,
    /// Each rank merges its own chunks, then MPI_Allreduce merges the ranks' results in rank
    /// order: less traffic for large results, but float sums may differ in the last bits.
    reduce,
};

// ---- partitions (local: no communication) ----------------------------------------------------

/// This rank's part of `shape` split along `axis` into comm's size nearly equal slabs (the
/// first shape[axis] % size ranks get one more index). May be empty.
Box my_part(MPI_Comm comm, const Shape& shape, int axis);
/// The same, in whole chunks of `a`: slabs along `axis` of whole chunks, so that no two ranks
/// share a chunk (a write of each rank's part then never needs another rank's data).
Box my_part(MPI_Comm comm, const AnyArray& a, int axis);
/// The chunks this rank owns, in increasing order.
std::vector<std::int64_t> my_chunks(MPI_Comm comm, const AnyArray& a, Partition p = {});
// my_part and my_chunks read this rank's snapshot of `a`: after rank 0 changed the array on its
// own handle (a resize, say), call mpi::refresh first. The collective operations below do it
// themselves.

/// Collective: the ranks other than 0 adopt what was committed since their snapshot, so that
/// every rank sees rank 0's latest state. Every collective operation here starts with it.
void refresh(MPI_Comm comm, const AnyArray& a);

// ---- collective create and open -------------------------------------------------------------

/// Creates an array: rank 0 creates it (and decides the chunk and block shapes when the
/// options leave them out), the other ranks then open it read-only and check that they see the
/// same geometry. Rank 0's handle is writable. \throws on every rank what any rank hit
AnyArray create(MPI_Comm comm,
                const std::string& path,
                const DType& dtype,
                const Shape& shape,
                const CreateOptions& options = {});
/// Opens an array: rank 0 first (for writing when options.writable), then the others
/// (read-only), which check that they see rank 0's geometry.
AnyArray open(MPI_Comm comm, const std::string& path, const OpenOptions& options = {});

template <class T>
NDArray<T> create(MPI_Comm comm,
                  const std::string& path,
                  const Shape& shape,
                  const CreateOptions& options = {}) {
    return create(comm, path, dtype_of<T>(), shape, options).template as<T>();
}
template <class T>
NDArray<T> open(MPI_Comm comm, const std::string& path, const OpenOptions& options = {}) {
    return open(comm, path, options).template as<T>();
}

// ---- collective writes ----------------------------------------------------------------------

/// produce(chunk, region, out): writes the chunk's valid region (C order, stored byte order).
using ChunkProducer = std::function<void(std::int64_t, const Box&, std::uint8_t*)>;

/// Each rank computes and writes `chunks` (its own; no chunk on two ranks; any may be empty),
/// then one commit. produce runs on up to WriteOptions::nthreads threads of each rank; it may
/// read any array (this one shows its old content).
void write_chunks(MPI_Comm comm,
                  AnyArray& a,
                  const std::vector<std::int64_t>& chunks,
                  const ChunkProducer& produce,
                  const WriteOptions& options = {});
/// Each rank writes `data` (C order of box.count, stored byte order) into its `box` (step 1;
/// any may be empty). Chunks a box covers only in part keep their other elements. Boxes that
/// share a chunk are refused (each chunk has one writer): split with my_part(comm, a, axis).
void write(
    MPI_Comm comm, AnyArray& a, const Box& box, ByteSpan data, const WriteOptions& options = {});
template <class T>
void write(MPI_Comm comm,
           NDArray<T>& a,
           const Box& box,
           const std::vector<T>& data,
           const WriteOptions& options = {}) {
    if (a.any().dtype().needs_byteswap()) {
        std::vector<T> swapped(data);
        a.any().dtype().byteswap(reinterpret_cast<std::uint8_t*>(swapped.data()),
                                 static_cast<std::int64_t>(swapped.size()));
        write(comm, a.any(), box, as_bytes(swapped.data(), swapped.size()), options);
        return;
    }
    write(comm, a.any(), box, as_bytes(data.data(), data.size()), options);
}
/// A copy of `src` at `path` with other chunk shapes, compression or frame kind (the options):
/// created collectively, each rank copying its chunks of the destination (read from `src`, which
/// every rank must have open).
AnyArray copy(MPI_Comm comm,
              const AnyArray& src,
              const std::string& path,
              const CreateOptions& options = {},
              const WriteOptions& write_options = {});

// ---- internals ------------------------------------------------------------------------------

namespace detail {

/// Collective: every rank learns whether any rank failed. With `mine` set, rethrows it; else,
/// when another rank failed, throws an Error naming the lowest failing rank and its message.
void check_all(MPI_Comm comm, const std::exception_ptr& mine);
/// Collective: rank 0 receives every rank's bytes, concatenated in rank order (others: empty).
std::vector<std::uint8_t> gather_bytes(MPI_Comm comm, const std::vector<std::uint8_t>& mine);
/// Collective: every rank receives rank 0's bytes.
void broadcast_bytes(MPI_Comm comm, std::vector<std::uint8_t>& bytes);

}  // namespace detail

}  // namespace b2nd::mpi
