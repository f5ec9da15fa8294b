// The engine's interface for b2nd::mpi (collective.hpp).
#include "collective.hpp"

#include <b2nd/error.hpp>

#include "../detail/text.hpp"
#include "../storage/reserved_staging.hpp"
#include "chunk_rows.hpp"
#include "engine_access.hpp"

namespace b2nd::detail::collective {

using storage::ReservedStaging;

void make_chunks(const AnyArray& a,
                 const std::vector<std::int64_t>& chunks,
                 std::size_t first,
                 std::size_t last,
                 int threads,
                 const std::function<void(std::int64_t, const Box&, std::uint8_t*)>& produce,
                 const std::function<void(std::size_t, const MadeChunk&)>& place) {
    const ArrayCore& core = EngineAccess::core(a);
    const storage::Frame& frame = core.frame();
    const auto placer = [&](std::size_t k, ByteSpan c, const storage::detail::SealHint& hint) {
        const ReservedStaging::Classified cl = ReservedStaging::classify(frame, c, hint);
        place(k,
              MadeChunk{
                  cl.bytes, cl.entry, cl.nbytes, cl.digest, {cl.record.data(), cl.record.size()}});
        return storage::StagedChunk{};
    };
    core.make_chunks(chunks, first, last, threads, produce, placer);
}

bool sparse(const AnyArray& a) {
    return EngineAccess::core(a).frame().sparse();
}

std::uint64_t reserve(AnyArray& a, std::uint64_t amount) {
    return ReservedStaging::reserve(EngineAccess::writable_core(a).frame_for_writing(), amount);
}

void write_reserved(const AnyArray& a, std::uint64_t position, ByteSpan bytes, ByteSpan tail) {
    ReservedStaging::write(EngineAccess::core(a).frame(), position, bytes, tail);
}

void commit_reserved(AnyArray& a, const std::vector<Reserved>& chunks) {
    ArrayCore& core = EngineAccess::writable_core(a);
    std::vector<std::int64_t> ids(chunks.size());
    std::vector<storage::StagedChunk> staged(chunks.size());
    storage::Frame& f = core.frame_for_writing();
    for (std::size_t k = 0; k < chunks.size(); ++k) {
        const Reserved& q = chunks[k];
        ids[k] = q.chunk;
        staged[k] = ReservedStaging::adopt(f, static_cast<std::uint64_t>(q.position), q.nbytes,
                                           q.cbytes, q.digest);
    }
    if (!ids.empty()) {
        core.commit_chunks(ids, staged);
    }
}

void scatter_slabs(const Grid& row,
                   int axis,
                   const std::uint8_t* data,
                   std::int64_t n,
                   std::int64_t from,
                   std::int64_t take,
                   std::int64_t at,
                   std::uint8_t* images) {
    RowScatter(row, axis)(data, n, from, take, at, images, false);
}

void encode_images(const AnyArray& a,
                   const Grid& row,
                   std::uint8_t* images,
                   int threads,
                   const std::function<void(std::size_t, const MadeChunk&)>& place) {
    const ArrayCore& core = EngineAccess::core(a);
    const storage::Frame& frame = core.frame();
    pad_row(row, images);
    core.encode_images(row, images, threads,
                       [&](std::size_t k, ByteSpan c, const storage::detail::SealHint& hint) {
                           const ReservedStaging::Classified cl =
                               ReservedStaging::classify(frame, c, hint);
                           place(k, MadeChunk{cl.bytes,
                                              cl.entry,
                                              cl.nbytes,
                                              cl.digest,
                                              {cl.record.data(), cl.record.size()}});
                       });
}

void commit_reserved_rows(AnyArray& a,
                          int axis,
                          std::int64_t first,
                          std::int64_t length,
                          const std::vector<Reserved>& chunks) {
    ArrayCore& core = EngineAccess::writable_core(a);
    const Grid& g = core.grid();
    const std::int64_t cs = g.chunk_shape()[static_cast<std::size_t>(axis)];
    const std::int64_t per_row = row_grid(g, axis, 1).nchunks();
    const std::int64_t rows = length > first ? (length - first + cs - 1) / cs : 0;
    std::vector<storage::StagedChunk> staged(static_cast<std::size_t>(rows * per_row));
    std::vector<char> seen(staged.size(), 0);
    storage::Frame& f = core.frame_for_writing();
    for (const Reserved& q : chunks) {
        const std::int64_t k = q.chunk - first / cs * per_row;
        if (k < 0 || k >= rows * per_row || seen[static_cast<std::size_t>(k)] != 0) {
            throw UsageError(quoted_path(a.path()) + ": append: chunk " + num(q.chunk) +
                             " of the rows is not one of rows " + num(first / cs) + " to " +
                             num(first / cs + rows - 1) + ", or came twice");
        }
        seen[static_cast<std::size_t>(k)] = 1;
        staged[static_cast<std::size_t>(k)] = ReservedStaging::adopt(
            f, static_cast<std::uint64_t>(q.position), q.nbytes, q.cbytes, q.digest);
    }
    for (std::size_t k = 0; k < seen.size(); ++k) {
        if (seen[k] == 0) {
            throw UsageError(quoted_path(a.path()) + ": append: chunk " +
                             num(first / cs * per_row + static_cast<std::int64_t>(k)) +
                             " of the rows was not written");
        }
    }
    core.commit_rows(axis, first, length, staged);
}

}  // namespace b2nd::detail::collective
