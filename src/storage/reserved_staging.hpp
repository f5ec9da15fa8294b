// Internal (b2nd::mpi, through engine/collective.hpp): chunks that other processes write into a
// frame ahead of one handle's commit.
//
//   writer:  std::uint64_t at = ReservedStaging::reserve(frame, n);  // n bytes, or chunk files
//   others:  ReservedStaging::classify(other, chunk) / ReservedStaging::write(other, at + k, bytes)
//   writer:  e.replace(i, ReservedStaging::adopt(frame, at + k, nbytes, cbytes)); frame.apply(e);
//
// What a crash leaves before the apply() is what a crash after Frame::stage() leaves: bytes after
// the frame's end (contiguous) or chunk files no index names (sparse; compact() removes them).
#pragma once

#include <cstdint>
#include <vector>

#include <b2nd/byte_span.hpp>
#include <b2nd/storage/frame.hpp>

#include "block_seals.hpp"

namespace b2nd::storage {

struct ReservedStaging {
    /// How Frame::stage() would store `chunk`: its bytes (to write), or as an index-only special
    /// chunk (bytes empty, `entry` its index entry). Works on any handle. \throws UsageError
    struct Classified {
        ByteSpan bytes;
        std::int64_t entry = 0;
        std::int32_t nbytes = 0;
        std::uint64_t digest = 0;  ///< its table entry (0 for specials; checksums.hpp)
        /// With a version-2 table: its block digests, to write right after `bytes`.
        std::vector<std::uint8_t> record;
    };
    /// `hint`: what spares sealing the chunk work (block_seals.hpp).
    static Classified classify(const Frame& f, ByteSpan chunk, const detail::SealHint& hint = {});
    /// Writer: reserves room for chunks other processes write ahead of the next commit, and
    /// returns where it starts: `amount` bytes from a file position (contiguous frames), or
    /// `amount` chunk file numbers (sparse frames). Reserved room that no apply() names becomes
    /// dead space (removed files) at the next commit, as staged chunks do.
    static std::uint64_t reserve(Frame& f, std::uint64_t amount);
    /// Any handle on the same frame: writes chunk bytes at a reserved position (a file position
    /// of a contiguous frame, or a chunk file number of a sparse frame), and `tail` right after
    /// them (a chunk's record). Several chunks may go in one call to a contiguous frame.
    /// \throws IoError
    static void write(const Frame& f, std::uint64_t position, ByteSpan bytes, ByteSpan tail = {});
    /// Writer: a chunk another process wrote at `position` (reserved since the last commit), of
    /// `nbytes` uncompressed and `cbytes` stored bytes, as a staged chunk for apply(); with
    /// cbytes == 0, `position` is the index entry of an index-only special chunk. `digest`: the
    /// checksum of its bytes (Classified::digest).
    /// \throws UsageError for a position outside the reserved room
    static StagedChunk adopt(Frame& f,
                             std::uint64_t position,
                             std::int32_t nbytes,
                             std::int64_t cbytes,
                             std::uint64_t digest);
};

}  // namespace b2nd::storage
