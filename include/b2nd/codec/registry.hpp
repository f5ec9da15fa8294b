// The table of plugin codecs and filters, keyed by id (c-blosc2's numbering):
//  - ids 32-159 are the globally registered plugins. b2nd-cpp brings NDLZ (codec 32), ZFP
//    (codecs 33-35, when built with libzfp), NDCELL (filter 32), NDMEAN (33) and INT_TRUNC (36);
//    BYTEDELTA (34, 35) is a built-in filter of the chunk codec;
//  - ids 160-255 are for users: register_codec()/register_filter() add one, and from then on
//    arrays and chunks that use it read and write like any other, in every thread.
// Blosc's own codecs (0-5) and filters (0-4) are the chunk codec's fast paths and are not in the
// table; codec_name()/parse_codec()/filter_name()/parse_filter() (ids.hpp) know both.
//
// Example: a codec that stores every stream reversed (see examples/05_plugin.cpp):
//   b2nd::codec::CodecPlugin p;
//   p.id = 200;
//   p.name = "reverse";
//   p.encode = [](const BlockContext&, ByteSpan src, MutableByteSpan dst) -> std::size_t {...};
//   p.decode = [](const BlockContext&, ByteSpan src, MutableByteSpan dst) {...};
//   b2nd::codec::register_codec(std::move(p));
//
// Advanced (b2nd::codec, the chunk codec). Programs that only read and write arrays need only
// <b2nd/b2nd.hpp>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <b2nd/byte_span.hpp>
#include <b2nd/codec/ids.hpp>

namespace b2nd::codec {

/// What a codec or filter is told about the stream or block it works on.
struct BlockContext {
    int typesize = 1;       ///< the chunk's typesize
    std::uint8_t meta = 0;  ///< the codec's compcode_meta, or the filter slot's meta byte
    /// The array's block shape (C order, from the b2nd metalayer), or null with ndim 0 where
    /// it is not known (a bare chunk decoded without geometry).
    const std::int64_t* blockshape = nullptr;
    int ndim = 0;  ///< dimensions of blockshape (0: not known)
    /// The filters of the chunk's pipeline, in order (for codecs that must refuse some).
    const FilterSlot* filters = nullptr;
    int nfilters = 0;  ///< entries of filters

    /// Whether the block shape is known.
    bool has_geometry() const noexcept { return ndim > 0 && blockshape != nullptr; }
    /// Items in one block (the product of blockshape), or 0 without geometry.
    std::int64_t block_items() const noexcept;
};

/// A codec: one stream in, one stream out.
struct CodecPlugin {
    std::uint8_t id = 0;  ///< the codec's id in chunk headers (users' codecs: 160-255)
    std::string name;     ///< its name, for messages
    /// Needs BlockContext::blockshape to decode (and so to encode).
    bool needs_geometry = false;
    /// The decoded values may differ from the encoded ones.
    bool lossy = false;
    /// Reads every item as a little-endian float32/float64 (ZFP): arrays of other dtypes are
    /// refused, since their values would come back as noise.
    bool float_items = false;
    /// Blocks must be split into one stream per byte of the item (NDLZ for typesize > 1).
    bool needs_split = false;
    /// Why these parameters cannot be written ("" when they can). Called once before anything is
    /// written, with the whole block as the stream. Optional.
    std::function<std::string(const BlockContext&)> check;
    /// Why these items cannot be encoded ("" when they can), or an ItemError naming the first
    /// item that cannot (chunk_encoder.hpp): ZFP refuses NaN and infinities.
    /// Writers that hold all the data at once (create_from, import) call it before creating
    /// anything; encode must refuse such data too. Optional.
    std::function<std::string(const BlockContext&, ByteSpan items)> check_data;
    /// Encodes src into dst (dst.size() bytes of room); returns the encoded size, or 0 when it
    /// would not be smaller than src (the stream is then stored as it is). Optional: a codec
    /// without it is read-only.
    std::function<std::size_t(const BlockContext&, ByteSpan src, MutableByteSpan dst)> encode;
    /// Decodes src into exactly dst.size() bytes. Throws FormatError when src is not a valid
    /// stream of that size. Required.
    std::function<void(const BlockContext&, ByteSpan src, MutableByteSpan dst)> decode;
};

/// A filter: a transform of one block to a block of the same size.
struct FilterPlugin {
    std::uint8_t id = 0;          ///< the filter's id in chunk headers
    std::string name;             ///< its name, for messages
    bool needs_geometry = false;  ///< needs BlockContext::blockshape
    /// Values change (INT_TRUNC, NDMEAN): the writer applies forward then backward to blocks it
    /// stores uncompressed, so that what reads back does not depend on whether data compressed.
    bool lossy = false;
    /// Works on the items as values: must come before the filters that move bytes.
    bool on_values = false;
    bool float_items = false;  ///< as CodecPlugin::float_items (NDMEAN)
    std::function<std::string(const BlockContext&)> check;  ///< as CodecPlugin::check
    /// src and dst have the same size and do not overlap. Required for writing.
    std::function<void(const BlockContext&, ByteSpan src, MutableByteSpan dst)> forward;
    /// Undoes forward. Empty: nothing to undo (the block reads back as stored).
    std::function<void(const BlockContext&, ByteSpan src, MutableByteSpan dst)> backward;
};

/// First id users may register (c-blosc2's BLOSC2_USER_REGISTERED_CODECS_START).
inline constexpr int kFirstUserId = 160;

/// Adds a codec or filter to the table. Registration is thread-safe; entries are never removed.
/// \throws UsageError for an id outside 160-255, an id already registered, a missing name or
/// decode/forward function, or a name already in use
void register_codec(CodecPlugin plugin);
void register_filter(FilterPlugin plugin);

/// The registered codec or filter with this id, or null (also for Blosc's own ids, which are
/// not in the table). Lock-free.
const CodecPlugin* find_codec_plugin(std::uint8_t id) noexcept;
const FilterPlugin* find_filter_plugin(std::uint8_t id) noexcept;

/// Every registered plugin, by id.
std::vector<const CodecPlugin*> codec_plugins();
std::vector<const FilterPlugin*> filter_plugins();

/// Whether this build has ZFP (codecs 33-35 through libzfp).
bool has_zfp() noexcept;

}  // namespace b2nd::codec
