// Internal: where an array's blocks come from when its frame's chunks are not (only) the data:
// python-blosc2's object kinds (objects.hpp). A persisted expression's blocks are computed from
// its operands; a proxy cache's blocks are read only where its bitmaps say they were fetched.
//
// ChunkSource asks its origin before it serves any block (require) and, when the origin
// computes, has it make each block instead of decoding one (make_block). Everything above
// ChunkSource (plans, the block cache, parallel reads, chunkwise visits) is unchanged.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <b2nd/any_array.hpp>
#include <b2nd/grid.hpp>
#include <b2nd/params.hpp>
#include <b2nd/shape.hpp>
#include <b2nd/value.hpp>

namespace b2nd::detail {

class BlockOrigin {
public:
    virtual ~BlockOrigin() = default;
    /// "lazyexpr", "proxy": the object kind, for messages.
    virtual const char* kind() const noexcept = 0;
    /// True: every block is made by make_block; the frame's chunks are never read.
    virtual bool computes() const noexcept { return false; }
    /// True: a block costs about what decoding a stored block costs (a bridged file's block,
    /// decoded), so that a read that touches it once need not keep it: it enters the block
    /// cache on its second touch, as stored blocks do (ChunkSource::admits). False: blocks are
    /// kept from their first make (lazy expressions, whose blocks read other arrays).
    virtual bool decodes() const noexcept { return false; }
    /// \throws Error naming the file, the kind and the region when block `block` of chunk `ci`
    ///         may not be read; block kWholeChunk: every block of the chunk, kAnyBlock: at least
    ///         one block of it
    virtual void require(std::int64_t ci, std::int64_t block) const = 0;
    /// Writes block `block` of chunk `ci` into `into` (the grid's block_nbytes(), the block's
    /// padding zero), stored byte order. Called from many threads at once.
    virtual void make_block(std::int64_t ci, std::int64_t block, std::uint8_t* into) const = 0;

    static constexpr std::int64_t kWholeChunk = -1;
    static constexpr std::int64_t kAnyBlock = -2;
};

/// The part inside the array of block `block` of chunk `ci` (count 0 where it lies in the
/// padding).
Box block_region(const Grid& g, std::int64_t ci, std::int64_t block);

/// Copies `rows` (a region of extents `count`, C order, items of `item` bytes) into the block
/// `into` of extents `block_shape` (count <= block_shape), at its start: the padding untouched.
void rows_into_block(const std::uint8_t* rows,
                     const Shape& count,
                     const Shape& block_shape,
                     std::int64_t item,
                     std::uint8_t* into);

/// A read-only array whose blocks all come from an origin (a field view, a bridged HDF5 dataset
/// or Zarr array): an empty frame of the grid `grid` says (chunk and block shapes), with `attrs`
/// as its attributes (held in memory: ArrayCore::HeldAttributes), opened with `o` under the name
/// `name`, whose origin `make` builds for the array's grid. \throws what creating the frame
/// throws, naming `name` (never the temporary file it is made in)
AnyArray computed_array(const DType& dtype,
                        const Shape& shape,
                        const CreateOptions& grid,
                        const Value::Map& attrs,
                        const std::string& name,
                        const OpenOptions& o,
                        const std::function<std::shared_ptr<const BlockOrigin>(const Grid&)>& make);

}  // namespace b2nd::detail
