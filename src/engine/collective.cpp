// The engine's interface for b2nd::mpi (collective.hpp).
#include "collective.hpp"

#include "../storage/reserved_staging.hpp"
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

}  // namespace b2nd::detail::collective
