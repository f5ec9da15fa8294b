// b2nd::mpi appends (target b2nd::mpi; docs/mpi.md): ranks that each produce a part of every
// slab (a domain decomposition: each rank its rows of every time step) append them together.
//
//   auto a = b2nd::mpi::create<float>(comm, "run.b2nd", {0, ny, nx}, options);
//   b2nd::mpi::Appender<float> app(comm, a, /*axis=*/0, /*part_axis=*/1);
//   const b2nd::Box mine = app.part();         // this rank's rows of each step (whole chunks)
//   app.push(step_part.data(), 1);             // collective: every rank its part of 1 slab
//   app.flush();                               // collective: durable, seen by readers
//   app.close();
#pragma once

#include <cstdint>
#include <memory>

#include <b2nd/appender.hpp>
#include <b2nd/mpi/collective.hpp>

#include <mpi.h>

namespace b2nd::mpi {

/// Appends along `axis` of an array every rank holds open (mpi::create or mpi::open; rank 0's
/// handle writable), each rank owning a part of every slab: its slab of whole chunks along
/// `part_axis` (my_part(comm, a, part_axis)). Each rank holds its part of the row being filled
/// (a chunk's extent along the axis) in memory; when a row is full, every rank encodes its
/// chunks of it on its threads and writes them where rank 0 reserved room, as mpi::write_chunks
/// does; rows written are committed by rank 0 (the array's length grows, for every rank and
/// reader) at flush(), close() and once AppendOptions::commit_interval has passed on rank 0.
/// The chunks are those one process appending the same slabs writes. push, flush and close are
/// collective: every rank calls them in the same order, with the same number of slabs; errors
/// are collective too (every rank throws, as mpi::write_chunks).
class AnyAppender {
public:
    /// Collective. \throws UsageError for axes out of range or equal, a queue < 1
    AnyAppender(MPI_Comm comm, AnyArray array, int axis, int part_axis, AppendOptions o = {});
    /// Closes, errors swallowed: call close() (collective) to see them.
    ~AnyAppender();
    AnyAppender(const AnyAppender&) = delete;
    AnyAppender& operator=(const AnyAppender&) = delete;

    /// This rank's part of a slab: a box of the array's shape (the axis: its current length).
    Box part() const;
    /// Collective: appends n slabs' parts (this rank's part, extent n along the axis, C order,
    /// stored byte order; empty for a rank whose part is). \throws UsageError for a size that
    /// is not whole slabs of the part, or ranks pushing different numbers of slabs
    void push(ByteSpan data);
    /// Collective: commits everything pushed by every rank.
    void flush();
    /// Collective: flush(), then later pushes are refused. Idempotent.
    void close();
    /// The array's length along the axis once everything pushed is committed.
    std::int64_t length() const noexcept;
    /// The bytes of this rank's part of one slab.
    std::int64_t part_bytes() const noexcept;

private:
    struct State;
    std::unique_ptr<State> s_;
};

/// mpi::AnyAppender for an NDArray<T> in native byte order: push(data, n) takes n slabs of T of
/// this rank's part.
template <typename T>
class Appender {
public:
    /// Collective. \throws UsageError as AnyAppender's, and for an array not in native order
    Appender(MPI_Comm comm, NDArray<T> array, int axis, int part_axis, AppendOptions o = {})
        : impl_(comm, native(std::move(array)).any(), axis, part_axis, o) {}
    /// As AnyAppender::part.
    Box part() const { return impl_.part(); }
    /// Collective: appends n slabs of this rank's part from `data`.
    void push(const T* data, std::int64_t n) {
        impl_.push(ByteSpan(reinterpret_cast<const std::uint8_t*>(data),
                            static_cast<std::size_t>(n * impl_.part_bytes())));
    }
    /// As AnyAppender::flush.
    void flush() { impl_.flush(); }
    /// As AnyAppender::close.
    void close() { impl_.close(); }
    /// As AnyAppender::length.
    std::int64_t length() const noexcept { return impl_.length(); }

private:
    static NDArray<T> native(NDArray<T> a) {
        b2nd::detail::require_native_order(a.any(), "mpi::Appender");
        return a;
    }
    AnyAppender impl_;
};

}  // namespace b2nd::mpi
