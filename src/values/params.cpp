#include <algorithm>
#include <string>
#include <thread>

#include <b2nd/codec/registry.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/checked_math.hpp>
#include <b2nd/params.hpp>

#include "params_detail.hpp"
#include <unistd.h>

namespace b2nd {

namespace {

/// Halves the largest dimension (the first of equals) until at most `target` items remain.
Shape shrink(Shape s, std::int64_t target) {
    target = std::max<std::int64_t>(target, 1);
    for (;;) {
        std::int64_t items = 1;
        bool over = false;
        for (std::int64_t v : s) {
            over = over || format::mul_overflows(items, v, &items);
        }
        if (!over && items <= target) {
            return s;
        }
        const auto it = std::max_element(s.begin(), s.end());
        *it = (*it + 1) / 2;
    }
}

}  // namespace

namespace {

CompressionParams plugin(Codec codec, int meta, int lo, int hi, const char* what) {
    if (meta < lo || meta > hi) {
        throw UsageError(std::string("CompressionParams::") + what + ": " + std::to_string(meta) +
                         " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
    }
    CompressionParams c;
    c.codec = codec;
    c.codec_meta = static_cast<std::uint8_t>(meta);
    c.filters = {};
    return c;
}

}  // namespace

CompressionParams CompressionParams::zfp_accuracy(int exponent) {
    return plugin(Codec::zfp_accuracy, exponent, -128, 127, "zfp_accuracy");
}

CompressionParams CompressionParams::zfp_precision(int bits) {
    return plugin(Codec::zfp_precision, bits, 1, 255, "zfp_precision");
}

CompressionParams CompressionParams::zfp_rate(int percent) {
    return plugin(Codec::zfp_rate, percent, 1, 100, "zfp_rate");
}

CompressionParams CompressionParams::ndlz(int cell) {
    if (cell != 4 && cell != 8) {
        throw UsageError("CompressionParams::ndlz: the cell side must be 4 or 8, not " +
                         std::to_string(cell));
    }
    CompressionParams c = plugin(Codec::ndlz, cell, 4, 8, "ndlz");
    c.filters = {{Filter::shuffle, 0}};
    return c;
}

std::pair<Shape, Shape> auto_chunk_block_shapes(const Shape& shape, std::int64_t itemsize) {
    long l2 = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l2 <= 0) {
        l2 = 1 << 20;
    }
    const std::int64_t block_bytes = std::clamp<std::int64_t>(l2 / 4, 16 << 10, 1 << 20);
    const std::int64_t chunk_bytes = std::max<std::int64_t>(4 << 20, 4 * block_bytes);
    const std::int64_t isz = std::max<std::int64_t>(itemsize, 1);
    Shape start = shape;
    for (std::int64_t& v : start) {
        v = std::max<std::int64_t>(v, 1);
    }
    Shape chunks = shrink(start, chunk_bytes / isz);
    Shape blocks = shrink(chunks, block_bytes / isz);
    return {chunks, blocks};
}

}  // namespace b2nd

namespace b2nd::detail {

namespace {

/// NDLZ compresses planes of bytes: for items of more than one byte, c-blosc2 needs the
/// frame and its chunks to split every block into one stream per byte (splitmode always).
SplitMode splitmode_for(const CompressionParams& c, const Grid& g) {
    const codec::CodecPlugin* p = codec::find_codec_plugin(static_cast<std::uint8_t>(c.codec));
    return p != nullptr && p->needs_split && chunk_typesize(g.itemsize()) > 1 ? SplitMode::always
                                                                              : c.splitmode;
}

}  // namespace

std::string check_compression(const CompressionParams& c, const Grid& g) {
    if (c.clevel < 0 || c.clevel > 9) {
        return "clevel " + std::to_string(c.clevel) + " is not in 0..9";
    }
    if (c.filters.size() > static_cast<std::size_t>(format::kChunkMaxFilters)) {
        return std::to_string(c.filters.size()) + " filters; a pipeline has " +
               std::to_string(format::kChunkMaxFilters) + " slots";
    }
    return codec::check_encode_params(encode_params(c, g));
}

namespace {

codec::SplitMode split_mode_of(const format::FrameHeader& h) {
    const int sm = h.splitmode();
    return static_cast<codec::SplitMode>(sm >= 1 && sm <= 4 ? sm : 4);
}

codec::FilterPipeline pipeline_of(const format::FrameHeader& h) {
    codec::FilterPipeline p{};
    for (std::size_t i = 0; i < p.size(); ++i) {
        p[i] = {static_cast<codec::Filter>(h.filters[i]), h.filters_meta[i]};
    }
    return p;
}

}  // namespace

namespace {

/// The codec choice a frame header records (filter slots as they stand).
codec::CodecChoice choice_of(const format::FrameHeader& h) {
    codec::CodecChoice k;
    k.codec = static_cast<Codec>(h.compcode());
    k.codec_meta = codec::is_builtin(k.codec) ? 0 : h.compcode_meta;
    k.clevel = h.clevel();
    k.filters = pipeline_of(h);
    k.splitmode = split_mode_of(h);
    return k;
}

/// The codec choice `c` describes for chunks of `g`: the one place where the description becomes
/// what the encoder and a frame header take.
codec::CodecChoice choice_of(const CompressionParams& c, const Grid& g) {
    codec::CodecChoice k;
    k.codec = c.codec;
    k.codec_meta = c.codec_meta;
    k.clevel = c.clevel;
    k.filters = codec::make_pipeline(c.filters);
    k.splitmode = splitmode_for(c, g);
    return k;
}

/// An encoder's parameters for chunks of `g`, with `choice`.
codec::EncodeParams encode_params_for(codec::CodecChoice choice, const Grid& g) {
    codec::EncodeParams p;
    static_cast<codec::CodecChoice&>(p) = std::move(choice);
    p.blockshape = g.block_shape();
    p.typesize = static_cast<int>(std::min<std::int64_t>(g.itemsize(), 0x7fffffff));
    p.blocksize = static_cast<std::int32_t>(g.block_nbytes());
    return p;
}

}  // namespace

CompressionParams compression_of(const format::FrameHeader& h) {
    const codec::CodecChoice k = choice_of(h);
    CompressionParams c;
    c.codec = k.codec;
    c.codec_meta = k.codec_meta;
    c.clevel = k.clevel;
    c.filters = codec::filters_of(k.filters);
    c.splitmode = k.splitmode;
    return c;
}

std::string check_values(const CompressionParams& c, const DType& dtype) {
    if (dtype.kind() == DType::Kind::float_ && dtype.byteorder() != '>') {
        return {};
    }
    // Plugins that read every item as a little-endian float (ZFP, NDMEAN).
    std::string who;
    if (const codec::CodecPlugin* p = codec::find_codec_plugin(static_cast<std::uint8_t>(c.codec));
        p != nullptr && p->float_items) {
        who = p->name;
    }
    for (const FilterSlot& f : c.filters) {
        const codec::FilterPlugin* p = codec::find_filter_plugin(static_cast<std::uint8_t>(f.id));
        if (who.empty() && p != nullptr && p->float_items) {
            who = p->name;
        }
    }
    if (who.empty()) {
        return {};
    }
    return who + " works on little-endian float32 or float64 values; items of dtype '" +
           dtype.str() + "' would be read as floats and come back as noise";
}

codec::EncodeParams encode_params_of(const format::FrameHeader& h, const Grid& g) {
    codec::CodecChoice k = choice_of(h);
    k.clevel = std::clamp(k.clevel, 0, 9);
    return encode_params_for(std::move(k), g);
}

codec::EncodeParams encode_params(const CompressionParams& c, const Grid& g) {
    return encode_params_for(choice_of(c, g), g);
}

storage::FrameParams frame_params(const CompressionParams& c, const Grid& g, int nthreads) {
    storage::FrameParams fp;
    static_cast<codec::CodecChoice&>(fp) = choice_of(c, g);
    fp.typesize = static_cast<std::int32_t>(std::min<std::int64_t>(g.itemsize(), 0x7fffffff));
    fp.chunksize = static_cast<std::int32_t>(g.chunk_nbytes());
    fp.blocksize = static_cast<std::int32_t>(g.block_nbytes());
    fp.nthreads = static_cast<std::int16_t>(std::clamp(resolve_nthreads(nthreads), 1, 32767));
    return fp;
}

storage::OpenOptions frame_options(const OpenOptions& o) {
    return o;  // the frame's part of the array's options
}

OpenOptions opened_options(const CreateOptions& o) {
    OpenOptions oo;
    oo.writable = true;
    oo.nthreads = o.nthreads;
    oo.cache_bytes = o.cache_bytes;
    oo.durable = o.durable;
    oo.locking = o.locking;
    oo.auto_compact = o.auto_compact;
    oo.s3 = o.s3;
    return oo;
}

storage::OpenOptions frame_options(const CreateOptions& o) {
    return frame_options(opened_options(o));
}

int chunk_typesize(std::int64_t itemsize) noexcept {
    return itemsize <= 255 ? static_cast<int>(itemsize) : 1;
}

int resolve_nthreads(int n) noexcept {
    if (n > 0) {
        return n;
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : static_cast<int>(hw);
}

}  // namespace b2nd::detail
