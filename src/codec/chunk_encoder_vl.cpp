// VL-block chunks (chunk format version 6): blocks of any sizes, each compressed on its own, as
// c-blosc2 3.x's blosc2_vlcompress_ctx writes them and python-blosc2's BatchArray stores them.
//
// Layout: the extended header (version 6, blosc2_flags2 VL_BLOCKS, the blocksize field holding
// the number of blocks, streams never split), the block starts (int32 each), then per block an
// int32 holding the block's *uncompressed* size and its one stream, which runs to the next
// block's start (stored raw when compression does not pay).
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/endian.hpp>

#include "../detail/memory.hpp"
#include "../detail/text.hpp"
#include "compressors.hpp"
#include "encoder_detail.hpp"

namespace b2nd::codec {

using b2nd::detail::num;

std::vector<std::uint8_t> encode_vlblocks_chunk(const std::vector<ByteSpan>& blocks,
                                                const CodecChoice& choice) {
    if (blocks.empty()) {
        throw UsageError("VL-block chunk: at least one block is needed");
    }
    if (!is_builtin(choice.codec)) {
        throw UsageError("VL-block chunk: only Blosc's own codecs are supported, not " +
                         std::string(codec_name(choice.codec)));
    }
    for (const FilterSlot& f : choice.filters) {
        if (f.id != Filter::none && f.id != Filter::shuffle) {
            throw UsageError("VL-block chunk: the filter " +
                             filter_name(static_cast<std::uint8_t>(f.id)) +
                             " is not supported (bytes of VL blocks take no filter or SHUFFLE)");
        }
    }
    std::int64_t total = 0;
    std::size_t cap = format::kChunkExtendedHeaderSize + 4 * blocks.size();
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        if (blocks[i].empty()) {
            throw UsageError("VL-block chunk: block " + num(static_cast<std::int64_t>(i)) +
                             " is empty");
        }
        total += static_cast<std::int64_t>(blocks[i].size());
        cap += 4 + blocks[i].size();
    }
    if (total > format::kMaxChunkNbytes || cap > static_cast<std::size_t>(INT32_MAX)) {
        throw UsageError("VL-block chunk: " + num(total) + " bytes exceed a chunk's limit");
    }
    format::ChunkHeader h;
    h.version = format::kVlBlocksChunkVersion;
    h.versionlz = 1;
    h.typesize = 1;
    h.nbytes = static_cast<std::int32_t>(total);
    h.blocksize = static_cast<std::int32_t>(blocks.size());
    h.extended = true;
    h.flags =
        static_cast<std::uint8_t>(format::chunk_flags::kExtended | format::chunk_flags::kDontSplit |
                                  (static_cast<unsigned>(comp_format_of(choice.codec)) << 5));
    for (std::size_t i = 0; i < choice.filters.size(); ++i) {
        h.filters[i] = static_cast<std::uint8_t>(choice.filters[i].id);
        h.filters_meta[i] = choice.filters[i].meta;
    }
    h.udcodec = static_cast<std::uint8_t>(choice.codec);
    h.blosc2_flags2 = format::blosc2_flags2::kVlBlocks;
    std::vector<std::uint8_t> out(cap);
    std::size_t pos = format::kChunkExtendedHeaderSize + 4 * blocks.size();
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        const ByteSpan b = blocks[i];
        format::store_le<std::int32_t>(out.data() + format::kChunkExtendedHeaderSize + 4 * i,
                                       static_cast<std::int32_t>(pos));
        format::store_le<std::int32_t>(out.data() + pos, static_cast<std::int32_t>(b.size()));
        pos += 4;
        std::size_t csize = choice.clevel == 0
                                ? 0
                                : detail::compress_stream(choice.codec, choice.clevel, b.data(),
                                                          b.size(), out.data() + pos, b.size());
        if (csize == 0 || csize >= b.size()) {
            b2nd::detail::copy_bytes(out.data() + pos, b.data(), b.size());
            csize = b.size();
        }
        pos += csize;
    }
    h.cbytes = static_cast<std::int32_t>(pos);
    format::write_chunk_header(h, out.data());
    out.resize(pos);
    return out;
}

}  // namespace b2nd::codec
