// Encoding Blosc2 chunks (format version 5, extended header), decodable by c-blosc2 2.x and 3.x.
//
// Behaviour follows c-blosc2 where it is observable in the bytes:
//  - clevel 0, or fewer than 32 bytes, stores the chunk memcpyed;
//  - a stream that is one repeated byte is stored as a run (csize 0 for zeros, -byte otherwise),
//    a stream that does not compress is stored raw, and a chunk whose encoding would exceed
//    nbytes + 32 bytes falls back to memcpyed;
//  - a chunk made only of zero runs becomes a special "zeros" chunk (header only);
//  - streams are split per byte of the type with c-blosc2's rule for SplitMode::automatic and
//    SplitMode::forward_compat;
//  - with blocksize 0, the block size is chosen by c-blosc2's rules (compressor, clevel, typesize).
// Differences (see src/format/CONFORMANCE.md): output is byte-reproducible for any nthreads, and
// the DELTA reference of a chunk that also uses TRUNC_PREC is the truncated block, so it reads
// back exactly.
//
// Advanced (b2nd::codec, the chunk codec): for tools that encode or decode single chunks.
// Programs that read and write arrays need only <b2nd/b2nd.hpp>.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <b2nd/byte_span.hpp>
#include <b2nd/codec/ids.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>

namespace b2nd::codec {

/// The six slots of a chunk's filter pipeline, applied from slot 0 to slot 5.
using FilterPipeline = std::array<FilterSlot, format::kChunkMaxFilters>;

/// A pipeline with the given filters in the last slots, in order (c-blosc2's convention).
/// \throws UsageError for more than format::kChunkMaxFilters filters
FilterPipeline make_pipeline(const std::vector<FilterSlot>& filters);
inline FilterPipeline make_pipeline(std::initializer_list<FilterSlot> filters) {
    return make_pipeline(std::vector<FilterSlot>(filters));
}
/// The filters of a pipeline, in order, without its empty slots.
std::vector<FilterSlot> filters_of(const FilterPipeline& pipeline);

/// Parameters of encode_chunk().
/// How chunks are compressed, as a chunk's header and a frame's header record it: the codec, its
/// level and parameter, the filters by slot, and the split mode. The one description that the
/// encoder (EncodeParams) and a new frame's header (storage::FrameParams) share; an array's
/// CompressionParams (params.hpp: filters as an ordered list) is turned into it by one function
/// (src/values/params.cpp). The filters differ in form on purpose: chunk and frame headers have
/// six filter slots, and re-encoding a chunk of an existing array keeps its slots as they stand.
/// An item the codec cannot encode (NaN or infinity under ZFP), found while encoding a chunk:
/// `item` counts items from the start of block `block` (-1 until encode_chunk fills it in). The
/// array layer names the element's position and the file instead (ArrayCore's encoders).
class ItemError : public UsageError {
public:
    /// `msg` about `item` of block `block`.
    ItemError(const std::string& msg, std::int64_t item, std::int32_t block = -1)
        : UsageError(msg), item_(item), block_(block) {}
    /// The item, counted from the start of its block.
    std::int64_t item() const noexcept { return item_; }
    /// The block (-1 until encode_chunk fills it in).
    std::int32_t block() const noexcept { return block_; }

private:
    std::int64_t item_;
    std::int32_t block_;
};

/// A compressor and filter pipeline as chosen for a new chunk.
struct CodecChoice {
    Codec codec = Codec::zstd;  ///< the compressor
    int clevel = 1;             ///< 0 (store) .. 9
    FilterPipeline filters =
        make_pipeline({{Filter::shuffle, 0}});        ///< the six-slot filter pipeline
    SplitMode splitmode = SplitMode::forward_compat;  ///< split streams per byte, or not
    std::uint8_t codec_meta = 0;  ///< a plugin codec's parameter (compcode_meta)
};

/// Encoding parameters: the codec choice and what the chunk's geometry adds.
struct EncodeParams : CodecChoice {
    int typesize = 1;            ///< element size in bytes (>= 1; > 255 is coded as 1)
    std::int32_t blocksize = 0;  ///< 0: automatic
    int nthreads = 1;            ///< threads used to encode blocks
    /// The array's block shape, for plugins that need it (ZFP, NDLZ, NDCELL, NDMEAN); the
    /// block size must then be its product times the typesize.
    std::vector<std::int64_t> blockshape;
};

/// Why `params` cannot encode chunks ("" when they can): the checks encode_chunk makes, and
/// every plugin's own rules (registry.hpp). Arrays call it before anything is written.
std::string check_encode_params(const EncodeParams& params);

/// Upper bound of encode_chunk's output for nbytes of input.
constexpr std::size_t max_encoded_size(std::size_t nbytes) noexcept {
    return nbytes + 32;
}

/// Shown block i's input bytes (`n`, before any filter) as the encoder takes them, from any of
/// its threads, once per block or more (a chunk that ends up stored as it is shows them again,
/// as stored). A writer digests a block there while it is in the cache.
using BlockSeen = std::function<void(std::int32_t i, const std::uint8_t* data, std::size_t n)>;

/// Encodes `src` as one chunk into `dest` (dest.size() >= max_encoded_size(src.size()));
/// returns the chunk size. `seen` (optional) is shown each block.
/// \throws UsageError for invalid parameters, CodecError if a library fails.
std::size_t encode_chunk(ByteSpan src,
                         const EncodeParams& params,
                         MutableByteSpan dest,
                         const BlockSeen* seen = nullptr);
/// Encodes `src` into a new buffer.
std::vector<std::uint8_t> encode_chunk(ByteSpan src, const EncodeParams& params);

/// Writes block i of a chunk (its `n` bytes, in the chunk's layout) into `dest`. Called once per
/// block, maybe more, from any of the encoder's threads, each with its own `dest`.
using BlockFill = std::function<void(std::int32_t i, std::uint8_t* dest, std::size_t n)>;
/// Encodes a chunk of `nbytes` whose blocks `fill` produces one at a time, into a small buffer
/// that stays in the cache: a chunk gathered from strided data never exists whole in memory.
/// The bytes are those encode_chunk gives for the same content.
std::size_t encode_chunk(std::int64_t nbytes,
                         const BlockFill& fill,
                         const EncodeParams& params,
                         MutableByteSpan dest,
                         const BlockSeen* seen = nullptr);

/// A VL-block chunk (format version 6, c-blosc2 3.x's blosc2_vlcompress_ctx): each of `blocks`
/// (non-empty) compressed on its own as one stream, stored raw where compression does not pay.
/// python-blosc2's BatchArray keeps a batch in one. Filters: none or SHUFFLE (a no-op on the
/// bytes, typesize 1); codecs: Blosc's own. \throws UsageError otherwise
std::vector<std::uint8_t> encode_vlblocks_chunk(const std::vector<ByteSpan>& blocks,
                                                const CodecChoice& choice);

/// The block size encode_chunk uses for `nbytes` of input (resolves blocksize 0).
std::int32_t effective_blocksize(const EncodeParams& params, std::int64_t nbytes);
/// Whether encode_chunk splits blocks of `blocksize` bytes into typesize streams.
bool splits_streams(const EncodeParams& params, std::int32_t blocksize);

// Special chunks: a header (plus the value for make_repeated_chunk) and no blocks. `blocksize`
// is recorded in the header (0: nbytes); readers that work block by block use it.
// \throws UsageError when nbytes is not a multiple of the typesize (or value size).

/// A header-only chunk of nbytes zeros.
std::vector<std::uint8_t> make_zeros_chunk(std::int32_t nbytes,
                                           int typesize,
                                           std::int32_t blocksize = 0);
/// A header-only chunk of NaNs (typesize 4: float32, 8: float64).
std::vector<std::uint8_t> make_nans_chunk(std::int32_t nbytes,
                                          int typesize,
                                          std::int32_t blocksize = 0);
/// A header-only chunk whose content is unspecified (reads as zeros here).
std::vector<std::uint8_t> make_uninit_chunk(std::int32_t nbytes,
                                            int typesize,
                                            std::int32_t blocksize = 0);
/// A chunk repeating `value` (whose size is the typesize) nbytes / value.size() times.
std::vector<std::uint8_t> make_repeated_chunk(std::int32_t nbytes,
                                              ByteSpan value,
                                              std::int32_t blocksize = 0);

}  // namespace b2nd::codec
