// Internal: the rows an appender adds (appender.cpp). A row is the array's chunks with one
// coordinate along the growing axis; it is held as chunk images (the padded block layout a chunk
// decodes to), encoded in memory by one thread while another stages the row before it in the
// frame and commits the rows staged (ArrayCore::encode_row, stage_row and commit_rows, in
// chunk_rows.cpp), so that neither waits for the other.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <b2nd/grid.hpp>

#include "../detail/big_buffer.hpp"
#include "../storage/frame_internal.hpp"

namespace b2nd::detail {

/// A chunk encoded in memory, sealed for the checksum table, not yet staged.
struct EncodedChunk {
    BigBuffer bytes;       ///< room for the largest encoding of a chunk, reused
    std::size_t size = 0;  ///< the chunk's bytes at the front of `bytes`
    std::shared_ptr<const storage::FrameInternal::Ahead> ahead;
};

/// A row's chunks encoded in memory, in the order of the row's grid.
struct EncodedRow {
    std::vector<EncodedChunk> chunks;
};

/// The grid of one row of an array of grid g growing along `axis`: g's extents, `extent`
/// (1 to the chunk's extent) along the axis, one chunk along it.
Grid row_grid(const Grid& g, int axis, std::int64_t extent);

/// Copies slabs pushed along an axis into the chunk images of a row (row_grid()), reading them
/// in order, once: each run of the last dimension is cut where it crosses a block.
class RowScatter {
public:
    /// For rows of grid `full` (a full row: one chunk along `axis`).
    RowScatter(const Grid& full, int axis);
    /// Copies slabs [from, from + take) of `data` (the row's extents, n along the axis, C
    /// order) to slabs [at, at + take) of the row whose chunk images are at `images`; with
    /// `stream`, past the caches (then stream_fence() before another thread reads them).
    void operator()(const std::uint8_t* data,
                    std::int64_t n,
                    std::int64_t from,
                    std::int64_t take,
                    std::int64_t at,
                    std::uint8_t* images,
                    bool stream) const;

private:
    /// Where coordinate i of dimension d puts an element in the images, in bytes (offsets of
    /// the dimensions add up).
    std::int64_t offset(int d, std::int64_t i) const noexcept;
    /// A run of the last dimension that lies in one block: its first coordinate, length and
    /// offset.
    struct Run {
        std::int64_t start, len, off;
    };
    int nd_ = 0, axis_ = 0;
    Shape shape_;
    std::int64_t isz_ = 0, cbytes_ = 0, bbytes_ = 0;
    std::int64_t cshape_[kMaxNdim] = {}, bshape_[kMaxNdim] = {};
    std::int64_t cstride_[kMaxNdim] = {}, bstride_[kMaxNdim] = {}, estride_[kMaxNdim] = {};
    std::vector<Run> runs_;
};

/// Sets the padding of the chunk images `images` (row.nchunks() of row.chunk_nbytes() bytes,
/// the padded block layout, in row order) to each chunk's first element, as writes pad chunks:
/// what lies beyond row's extents (the array's edges, and along the axis the part of a row not
/// yet filled) then repeats it, and a chunk of one value is recognized as one.
void pad_row(const Grid& row, std::uint8_t* images);

}  // namespace b2nd::detail
