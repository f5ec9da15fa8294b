// The chunk encoder, part one: its parameters. Whether a set of EncodeParams can encode a chunk
// (every rule of the codecs, the filters and the plugins), the filter pipeline by slot, and the
// block size and stream split c-blosc2 would choose. Encoding is chunk_encoder.cpp.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/codec/filters.hpp>
#include <b2nd/codec/registry.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/checked_math.hpp>
#include <b2nd/format/chunk_header.hpp>
#include <b2nd/format/endian.hpp>

#include "../detail/memory.hpp"
#include "../detail/text.hpp"
#include "../detail/thread_pool.hpp"
#include "compressors.hpp"
#include "encoder_detail.hpp"

namespace b2nd::codec {

using b2nd::detail::num;
using namespace encoder_detail;

/// Why p cannot encode a chunk of nbytes ("" when it can).
std::string encoder_detail::why_not(const EncodeParams& p, std::size_t nbytes) {
    if (p.clevel < 0 || p.clevel > 9) {
        return "clevel must be 0..9, got " + num(p.clevel);
    }
    if (p.typesize < 1) {
        return "typesize must be positive, got " + num(p.typesize);
    }
    if (p.blocksize < 0 || p.blocksize > format::kMaxBlockSize) {
        return "blocksize must be 0 (automatic) or 1.." + num(format::kMaxBlockSize) + ", got " +
               num(p.blocksize);
    }
    if (nbytes > static_cast<std::size_t>(format::kMaxChunkNbytes)) {
        return "a chunk holds at most " + num(format::kMaxChunkNbytes) + " bytes, got " +
               num(static_cast<std::int64_t>(nbytes));
    }
    const auto mode = static_cast<int>(p.splitmode);
    if (mode < 1 || mode > 4) {
        return "unknown split mode " + num(mode);
    }
    if (!p.blockshape.empty()) {
        std::int64_t items = 1;
        for (std::int64_t d : p.blockshape) {
            if (d <= 0 || format::mul_overflows(items, d, &items)) {
                return "invalid block shape";
            }
        }
        std::int64_t bytes = 0;
        if (p.blocksize > 0 && (format::mul_overflows(items, std::int64_t{p.typesize}, &bytes) ||
                                bytes != p.blocksize)) {
            return "the block shape (" + num(items) + " items of " + num(p.typesize) +
                   " bytes) does not make blocks of " + num(p.blocksize) + " bytes";
        }
    }
    const auto code = static_cast<std::uint8_t>(p.codec);
    if (!is_builtin(p.codec)) {
        const CodecPlugin* plugin = find_codec_plugin(code);
        if (plugin == nullptr) {
            return "unknown compressor code " + num(static_cast<int>(code));
        }
        if (plugin->check) {
            std::string why = plugin->check(context_of(p, p.codec_meta));
            if (!why.empty()) {
                return why;
            }
        }
        if (!plugin->encode) {
            return "codec " + plugin->name + " (" + num(static_cast<int>(code)) +
                   ") can only be read";
        }
        if (plugin->needs_geometry && p.blockshape.empty()) {
            return "codec " + plugin->name + " needs the block shape (EncodeParams::blockshape)";
        }
    }
    bool reordered = false;  // a filter that moves bytes came before this slot
    for (std::size_t slot = 0; slot < p.filters.size(); ++slot) {
        const FilterSlot& f = p.filters[slot];
        const std::string where = " in slot " + num(static_cast<int>(slot));
        switch (f.id) {
            case Filter::none:
                break;
            case Filter::trunc_prec: {
                const int bits = static_cast<std::int8_t>(f.meta);
                if (!trunc_prec_valid(bits, coded_typesize(p.typesize))) {
                    return "trunc_prec precision " + num(bits) + " is invalid for typesize " +
                           num(p.typesize) +
                           " (float32 or float64; |bits| below the mantissa width)";
                }
                if (reordered) {
                    return "trunc_prec" + where +
                           " must come before the other filters (it works on values)";
                }
                break;
            }
            case Filter::shuffle:
            case Filter::bitshuffle:
            case Filter::delta:
            case Filter::bytedelta:
                reordered = true;
                break;
            default: {
                const FilterPlugin* plugin = find_filter_plugin(static_cast<std::uint8_t>(f.id));
                if (plugin == nullptr || !plugin->forward) {
                    return "filter " + filter_name(static_cast<std::uint8_t>(f.id)) +
                           " cannot be used for writing";
                }
                if (plugin->check) {
                    std::string why = plugin->check(context_of(p, f.meta));
                    if (!why.empty()) {
                        return why;
                    }
                }
                if (plugin->needs_geometry && p.blockshape.empty()) {
                    return "filter " + plugin->name +
                           " needs the block shape (EncodeParams::blockshape)";
                }
                if (plugin->on_values && reordered) {
                    return plugin->name + where +
                           " must come before the filters that move bytes (it works on values)";
                }
                reordered = reordered || !plugin->on_values;
                break;
            }
        }
    }
    return {};
}

void encoder_detail::validate(const EncodeParams& p, std::size_t nbytes) {
    const std::string why = why_not(p, nbytes);
    if (!why.empty()) {
        throw UsageError("encode: " + why);
    }
}

FilterPipeline make_pipeline(const std::vector<FilterSlot>& filters) {
    FilterPipeline p{};
    if (filters.size() > p.size()) {
        throw UsageError("a filter pipeline has at most " + num(format::kChunkMaxFilters) +
                         " slots; " + num(static_cast<std::int64_t>(filters.size())) +
                         " filters were given");
    }
    std::copy(filters.begin(), filters.end(),
              p.end() - static_cast<std::ptrdiff_t>(filters.size()));
    return p;
}

std::vector<FilterSlot> filters_of(const FilterPipeline& pipeline) {
    std::vector<FilterSlot> out;
    for (const FilterSlot& f : pipeline) {
        if (f.id != Filter::none) {
            out.push_back(f);
        }
    }
    return out;
}

std::int32_t effective_blocksize(const EncodeParams& p, std::int64_t nbytes) {
    const int ts = coded_typesize(p.typesize);
    if (nbytes < ts) {
        return 1;
    }
    std::int64_t blocksize = nbytes;
    if (p.blocksize > 0) {
        blocksize = p.blocksize;
    } else {
        const bool split = split_rule(p, ts, nbytes);
        if (nbytes >= kL1) {
            blocksize = kL1;
            if (is_hcr(p.codec)) {
                blocksize *= 2;
            }
            static constexpr int kFactor4[10] = {1, 2, 4, 8, 16, 16, 32, 32, 32, 32};  // x/4
            blocksize = blocksize * kFactor4[p.clevel] / 4;
            if (p.clevel == 9 && is_hcr(p.codec)) {
                blocksize *= 2;
            }
        }
        if (p.clevel > 0 && split) {
            static constexpr std::int64_t kSplitKiB[10] = {0,  32, 32,  32,  64,
                                                           64, 64, 128, 256, 512};
            blocksize = std::clamp<std::int64_t>(kSplitKiB[p.clevel] * 1024 * ts, 32 * 1024,
                                                 4 * 1024 * 1024);
        }
    }
    blocksize = std::min(blocksize, nbytes);
    if (blocksize > ts) {
        blocksize = blocksize / ts * ts;
    }
    return static_cast<std::int32_t>(blocksize);
}

bool splits_streams(const EncodeParams& p, std::int32_t blocksize) {
    const int ts = coded_typesize(p.typesize);
    return blocksize % ts == 0 && split_rule(p, ts, blocksize);
}

std::string check_encode_params(const EncodeParams& params) {
    return why_not(params, 0);
}

}  // namespace b2nd::codec
