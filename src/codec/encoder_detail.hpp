// Internal: what the chunk encoder's two files share (encode_params.cpp, chunk_encoder.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/codec/filters.hpp>
#include <b2nd/codec/registry.hpp>

namespace b2nd::codec::encoder_detail {

/// The typesize stored in the header and used by the filters (c-blosc2 codes > 255 as 1).
inline int coded_typesize(int typesize) {
    return typesize > 255 ? 1 : typesize;
}

inline bool has_filter(const FilterPipeline& p, Filter f) {
    return std::any_of(p.begin(), p.end(), [f](const FilterSlot& s) { return s.id == f; });
}

inline bool is_hcr(Codec c) {
    return c == Codec::lz4hc || c == Codec::zlib || c == Codec::zstd;
}

/// c-blosc2's split rule (stune.c split_block), for a coded typesize.
inline bool split_rule(const EncodeParams& p, int ts, std::int64_t blocksize) {
    if (const CodecPlugin* plugin = find_codec_plugin(static_cast<std::uint8_t>(p.codec))) {
        if (plugin->needs_split) {
            return ts > 1;  // NDLZ compresses planes of single bytes
        }
    }
    switch (p.splitmode) {
        case SplitMode::always:
            return true;
        case SplitMode::never:
            return false;
        case SplitMode::automatic:
        case SplitMode::forward_compat:
            break;
    }
    const bool fast_codec = p.codec == Codec::blosclz || p.codec == Codec::lz4 ||
                            (p.codec == Codec::zstd && p.clevel <= 5);
    return fast_codec && has_filter(p.filters, Filter::shuffle) && ts <= kMaxSplitStreams &&
           blocksize / ts >= kMinBufferSize;
}

constexpr std::int32_t kL1 = 32 * 1024;

/// The context a plugin gets for this chunk's parameters (meta: the codec's or a filter's).
inline BlockContext context_of(const EncodeParams& p, std::uint8_t meta) {
    BlockContext c;
    c.typesize = coded_typesize(p.typesize);
    c.meta = meta;
    c.blockshape = p.blockshape.empty() ? nullptr : p.blockshape.data();
    c.ndim = static_cast<int>(p.blockshape.size());
    c.filters = p.filters.data();
    c.nfilters = static_cast<int>(p.filters.size());
    return c;
}

/// Why `p` cannot encode a chunk of `nbytes` ("" when it can).
std::string why_not(const EncodeParams& p, std::size_t nbytes);
/// \throws UsageError with why_not()'s reason
void validate(const EncodeParams& p, std::size_t nbytes);

}  // namespace b2nd::codec::encoder_detail
