// Internal: what the engine offers b2nd::mpi, and all of it that b2nd::mpi sees (the one gate,
// as codec/compressors.hpp is for the codec libraries). src/mpi/ includes this header and no
// other private one; no engine or frame type appears here.
//
// A collective write: every rank makes its chunks (make_chunks) and stores their bytes at room
// that rank 0 reserved for all (reserve, write_reserved); rank 0 then adopts them all and
// commits once (commit_reserved), through the commit protocol every other write uses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include <b2nd/any_array.hpp>
#include <b2nd/byte_span.hpp>

namespace b2nd::detail::collective {

/// A chunk made on this process, as it will be stored.
struct MadeChunk {
    ByteSpan bytes;          ///< to store; empty for an index-only special chunk
    std::int64_t entry = 0;  ///< the index entry of an index-only special chunk
    std::int32_t nbytes = 0;
    std::uint64_t digest = 0;  ///< checksum of `bytes`, for the commit's table
    ByteSpan record;           ///< with a version-2 table: to store right after `bytes`
};

/// Makes chunks[first, last) of `a` on up to `threads` threads, as AnyArray::write_chunks makes
/// them: produce(chunk, region, out) fills the region (C order), the chunk is encoded, and
/// place(k, made) receives chunk k (its bytes valid during the call only). Any handle; nothing
/// is written.
void make_chunks(const AnyArray& a,
                 const std::vector<std::int64_t>& chunks,
                 std::size_t first,
                 std::size_t last,
                 int threads,
                 const std::function<void(std::int64_t, const Box&, std::uint8_t*)>& produce,
                 const std::function<void(std::size_t, const MadeChunk&)>& place);

/// Whether `a` is a sparse frame (reserved room is chunk file numbers, not bytes).
bool sparse(const AnyArray& a);

/// The writer (rank 0): room for `amount` bytes (contiguous) or chunk files (sparse) that other
/// handles write before the next commit; where it starts.
std::uint64_t reserve(AnyArray& a, std::uint64_t amount);

/// Any handle: stored chunk bytes written at a reserved position (several chunks may go in one
/// call to a contiguous frame).
void write_reserved(const AnyArray& a, std::uint64_t position, ByteSpan bytes, ByteSpan tail = {});

/// A chunk written at a reserved position, or an index-only special chunk (cbytes 0, position
/// its index entry).
struct Reserved {
    std::int64_t chunk = 0;
    std::int64_t position = 0;
    std::int32_t nbytes = 0;
    std::int64_t cbytes = 0;
    std::uint64_t digest = 0;  ///< MadeChunk::digest
};

/// The writer: adopts chunks written at reserved positions and commits them in one commit.
/// \throws UsageError for a position outside the reserved room
void commit_reserved(AnyArray& a, const std::vector<Reserved>& chunks);

}  // namespace b2nd::detail::collective
