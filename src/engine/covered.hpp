// Internal: a chunk a box of the caller's elements covers, staged block by block (write.cpp;
// used by writes and by appenders' rows, reshape.cpp).
#pragma once

#include <cstdint>

#include "../select/box_plan.hpp"
#include "chunk_source.hpp"

namespace b2nd::detail {

/// Stages chunk task ct, which the box of `plan` covers, gathering each block from the caller's
/// elements (`src0`, walked with `walk`) as the encoder asks for it, on up to `threads` threads:
/// the chunk is never gathered whole. The padding of edge chunks repeats the chunk's first
/// element, so that a chunk whose valid elements are all equal is recognized as uniform. `ci`:
/// the chunk's index in the source's grid, for lossy geometry plugins (-1: a chunk of a grid the
/// source does not have yet, as ChunkSource::make_chunk takes it).
storage::StagedChunk stage_covered(const ChunkSource& source,
                                   const BoxPlan& plan,
                                   const ChunkTask& ct,
                                   const std::uint8_t* src0,
                                   const std::int64_t* walk,
                                   int threads,
                                   const ChunkSource::ChunkSink& sink,
                                   std::int64_t ci);

}  // namespace b2nd::detail
