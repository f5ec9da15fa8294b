// The geometry of a b2nd array: shape, chunk shape and block shape, and the arithmetic that maps
// an element to its chunk, its block inside the chunk and its place in that block.
//
// Layout (c-blosc2's b2nd): chunks tile the array in C order; a chunk is padded up to whole
// blocks ("extended chunk shape", extchunkshape[d] = ceil(chunkshape[d] / blockshape[d]) *
// blockshape[d]); a chunk's bytes are its blocks in C order, each block's elements in C order.
// Edge chunks and edge blocks are stored at full size; the padding holds no data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <b2nd/shape.hpp>

namespace b2nd {

/// The geometry of an array: its shape, its chunks and their blocks, and the item size, with
/// the arithmetic that maps elements to chunks and blocks (c-blosc2's padded layout: edge chunks
/// are stored whole, and blocks are cut from chunks padded to whole blocks).
class Grid {
public:
    /// An empty grid (ndim 0, no elements).
    Grid() = default;
    /// \throws UsageError naming what is inconsistent (see check()).
    Grid(Shape shape, Shape chunk_shape, Shape block_shape, std::int64_t itemsize);

    /// Why these parameters do not form a valid grid, or "" when they do: ndim above 16 or
    /// unequal, negative sizes, a block larger than its chunk, zero chunk or block sizes in a
    /// non-empty dimension, a chunk of more than 2^31 - 64 bytes, or overflow anywhere.
    static std::string check(const Shape& shape,
                             const Shape& chunk_shape,
                             const Shape& block_shape,
                             std::int64_t itemsize);

    /// The number of dimensions.
    int ndim() const noexcept { return static_cast<int>(shape_.size()); }
    /// The array's shape.
    const Shape& shape() const noexcept { return shape_; }
    /// The shape of its chunks.
    const Shape& chunk_shape() const noexcept { return chunk_shape_; }
    /// The shape of the blocks inside a chunk.
    const Shape& block_shape() const noexcept { return block_shape_; }
    /// The chunk shape padded to whole blocks.
    const Shape& ext_chunk_shape() const noexcept { return ext_chunk_shape_; }
    /// Bytes per element.
    std::int64_t itemsize() const noexcept { return itemsize_; }

    /// Elements in the array (1 for ndim 0; 0 when a dimension is 0).
    std::int64_t size() const noexcept { return size_; }
    /// Bytes of the array's elements (size() times itemsize()).
    std::int64_t nbytes() const noexcept { return size_ * itemsize_; }

    /// Chunks along dimension d, and in all.
    std::int64_t chunks_in(int d) const noexcept { return chunks_in_[static_cast<std::size_t>(d)]; }
    /// Chunks in all.
    std::int64_t nchunks() const noexcept { return nchunks_; }
    /// Blocks along dimension d of a chunk, and per chunk.
    std::int64_t blocks_in(int d) const noexcept { return blocks_in_[static_cast<std::size_t>(d)]; }
    /// Blocks per chunk.
    std::int64_t nblocks() const noexcept { return nblocks_; }

    /// Elements and bytes of one stored chunk (extended shape) and of one block.
    std::int64_t chunk_items() const noexcept { return chunk_items_; }
    /// Bytes of one stored chunk (extended shape).
    std::int64_t chunk_nbytes() const noexcept { return chunk_items_ * itemsize_; }
    /// Elements of one block.
    std::int64_t block_items() const noexcept { return block_items_; }
    /// Bytes of one block.
    std::int64_t block_nbytes() const noexcept { return block_items_ * itemsize_; }

    /// Linear (C order) index of the chunk with grid coordinates `coords` (ndim values).
    std::int64_t chunk_index(const std::int64_t* coords) const noexcept;
    /// Grid coordinates of chunk `index` into `coords` (ndim values).
    void chunk_coords(std::int64_t index, std::int64_t* coords) const noexcept;
    /// The valid (unpadded) extent of chunk `coords` along dimension d.
    std::int64_t chunk_extent(int d, std::int64_t coord) const noexcept;
    /// The region of the array chunk `index` holds (its valid elements, step 1).
    Box chunk_box(std::int64_t index) const;
    /// Whether chunk `index` stores padding: an edge chunk, or blocks that do not divide it.
    bool chunk_padded(std::int64_t index) const noexcept;
    /// A key naming block `block` of chunk `chunk` uniquely in this grid (chunk-major), as the
    /// block cache stores it.
    std::uint64_t block_key(std::int64_t chunk, std::int64_t block) const noexcept {
        return static_cast<std::uint64_t>(chunk) * static_cast<std::uint64_t>(nblocks_) +
               static_cast<std::uint64_t>(block);
    }

    /// Where element `idx` (ndim in-range coordinates) lives.
    struct Location {
        std::int64_t chunk;   ///< linear chunk index
        std::int64_t block;   ///< linear block index inside the chunk
        std::int64_t offset;  ///< element offset inside the block
    };
    /// The chunk, block and offset of element `idx` (ndim in-range coordinates).
    Location locate(const std::int64_t* idx) const noexcept;
    /// The element's coordinates: the inverse of locate() (a padding element of an edge chunk
    /// gets coordinates past the shape).
    Shape position(const Location& at) const;

    /// Same shape, chunk shape, block shape and item size.
    bool operator==(const Grid& o) const noexcept {
        return shape_ == o.shape_ && chunk_shape_ == o.chunk_shape_ &&
               block_shape_ == o.block_shape_ && itemsize_ == o.itemsize_;
    }

private:
    Shape shape_, chunk_shape_, block_shape_, ext_chunk_shape_;
    Shape chunks_in_, blocks_in_;
    std::int64_t itemsize_ = 1;
    std::int64_t size_ = 1;
    std::int64_t nchunks_ = 1;
    std::int64_t nblocks_ = 1;
    std::int64_t chunk_items_ = 1;
    std::int64_t block_items_ = 1;
};

}  // namespace b2nd
