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
#include <b2nd/grid.hpp>

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

// ---- appends (mpi::Appender): each rank holds its part of the rows being filled ----------

/// Copies slabs [from, from + take) of `data` (the extents of `row`, n along `axis`, C order)
/// to slabs [at, at + take) of the chunk images `images` of `row` (a row's grid: one chunk along
/// the axis; the padded block layout a chunk decodes to, chunk after chunk).
void scatter_slabs(const Grid& row,
                   int axis,
                   const std::uint8_t* data,
                   std::int64_t n,
                   std::int64_t from,
                   std::int64_t take,
                   std::int64_t at,
                   std::uint8_t* images);

/// Pads the chunk images of `row` (a grid of a's chunk and block shapes whose chunks are chunks
/// of the array, edges included) as writes pad chunks, and encodes them with a's parameters on
/// up to `threads` threads: place(k, made) receives the row's chunk k (bytes valid during the
/// call). Any handle; nothing is written.
void encode_images(const AnyArray& a,
                   const Grid& row,
                   std::uint8_t* images,
                   int threads,
                   const std::function<void(std::size_t, const MadeChunk&)>& place);

/// The writer: adopts chunks written at reserved positions as the chunk rows along `axis` from
/// `first` (a multiple of the chunk's extent: the array's last row or the one after it) to the
/// new length `length`, and commits them with that length in one commit; every other chunk is
/// kept. Here Reserved::chunk is row * (chunks in a row) + the chunk's index in its row's grid
/// (the array's extents, one chunk along the axis); every chunk of those rows must be there once.
/// 	hrows UsageError for a position outside the reserved room, or rows not whole
void commit_reserved_rows(AnyArray& a,
                          int axis,
                          std::int64_t first,
                          std::int64_t length,
                          const std::vector<Reserved>& chunks);

}  // namespace b2nd::detail::collective
