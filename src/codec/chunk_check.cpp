// The chunk decoder, part one: a chunk checked when a decoder is made (README_CHUNK_FORMAT.rst:
// header, version, sizes, bstarts, the plugins it names), its block geometry, and its special
// values (zeros, NaN, a repeated value, uninitialized), which are filled without decoding.
// Decoding blocks is chunk_decoder.cpp.
#include <algorithm>
#include <cstring>
#include <string>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/filters.hpp>
#include <b2nd/codec/registry.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/byte_reader.hpp>
#include <b2nd/format/checked_math.hpp>
#include <b2nd/format/endian.hpp>

#include "../detail/memory.hpp"
#include "../detail/text.hpp"
#include "compressors.hpp"
#include "decoder_detail.hpp"

namespace b2nd::codec {

using b2nd::detail::num;
using decoder_detail::undoes;

namespace {

using format::load_le;

bool needs_geometry(const CodecPlugin* c, const std::array<const FilterPlugin*, 6>& f) {
    bool any = c != nullptr && c->needs_geometry;
    for (const FilterPlugin* p : f) {
        any = any || (p != nullptr && p->needs_geometry);
    }
    return any;
}

/// The quiet NaN c-blosc2 fills NaN chunks with, little-endian (typesize 4 or 8).
void quiet_nan(std::int64_t typesize, std::uint8_t* out) {
    if (typesize == 4) {
        format::store_le<std::uint32_t>(out, 0x7FC00000U);
    } else {
        format::store_le<std::uint64_t>(out, 0x7FF8000000000000ULL);
    }
}

/// Fills n bytes with a periodic pattern of period p whose phase is `phase` (0 <= phase < p).
void fill_pattern(std::uint8_t* dest,
                  std::size_t n,
                  const std::uint8_t* pattern,
                  std::size_t p,
                  std::size_t phase) {
    std::size_t done = 0;
    while (done < n && done < p) {
        dest[done] = pattern[(phase + done) % p];
        ++done;
    }
    // dest[0, done) holds a whole period starting at the right phase; double it.
    while (done < n) {
        const std::size_t k = std::min(done, n - done);
        b2nd::detail::copy_bytes(dest + done, dest, k);
        done += k;
    }
}

}  // namespace

ChunkDecoder::ChunkDecoder(ByteSpan chunk, const std::vector<std::int64_t>& blockshape)
    : header_(format::read_chunk_header(chunk)) {
    const auto& h = header_;
    chunk_ = chunk.first(static_cast<std::size_t>(h.cbytes));
    const std::int32_t hs = h.header_size();
    data_start_ = hs;

    if (h.vl_blocks()) {
        nblocks_ = h.blocksize;
        blocksize_ = 0;
    } else {
        blocksize_ = h.blocksize;
        nblocks_ = h.nbytes == 0 ? 0 : h.nblocks();
    }

    const auto special = static_cast<Special>(h.special());
    if (special == Special::nan && h.typesize != 4 && h.typesize != 8) {
        throw UnsupportedError("chunk header: NaN special chunk with typesize " + num(h.typesize) +
                                   " (only 4 and 8 are defined)",
                               3);
    }
    if (special != Special::none || h.memcpyed()) {
        return;
    }
    if (h.nbytes == 0 && h.cbytes == hs) {
        nblocks_ = 0;  // an empty chunk (whatever count a VL-block header claims)
        return;
    }

    const auto format = static_cast<CompFormat>(h.comp_format());
    switch (format) {
        case CompFormat::blosclz:
        case CompFormat::lz4:
        case CompFormat::zlib:
        case CompFormat::zstd:
            break;
        case CompFormat::user_defined:
            codec_plugin_ = find_codec_plugin(h.udcodec);
            if (codec_plugin_ == nullptr) {
                throw UnsupportedError("chunk header: plugin codec " + num(h.udcodec) +
                                           " is not registered (b2nd::codec::register_codec)",
                                       22);
            }
            break;
        default:
            throw UnsupportedError("chunk header: compressor format " +
                                       comp_format_name(h.comp_format()) + " is not supported",
                                   2);
    }
    for (int slot = 0; slot < format::kChunkMaxFilters; ++slot) {
        const std::uint8_t f = h.filters[static_cast<std::size_t>(slot)];
        const FilterPlugin* plugin = nullptr;
        if (!is_builtin(static_cast<Filter>(f))) {
            plugin = find_filter_plugin(f);
            if (plugin == nullptr) {
                throw UnsupportedError("chunk header: filter " + filter_name(f) + " in slot " +
                                           num(slot) +
                                           " is not registered (b2nd::codec::register_filter)",
                                       static_cast<std::uint64_t>(16 + slot));
            }
            filter_plugins_[static_cast<std::size_t>(slot)] = plugin;
        }
        if (f == static_cast<std::uint8_t>(Filter::delta)) {
            needs_block0_ = true;
            if (h.vl_blocks()) {
                // DELTA's reference is block 0, which in a VL-block chunk may be shorter than
                // the block it serves; c-blosc2 then reads past it. No writer makes these.
                throw UnsupportedError("chunk: a VL-block chunk with the DELTA filter",
                                       static_cast<std::uint64_t>(16 + slot));
            }
        }
        has_filters_ = has_filters_ || undoes(f, plugin);
    }
    if (!blockshape.empty() && needs_geometry(codec_plugin_, filter_plugins_)) {
        std::int64_t items = 1;
        std::int64_t bytes = -1;
        for (std::int64_t d : blockshape) {
            if (d <= 0 || format::mul_overflows(items, d, &items)) {
                items = -1;
                break;
            }
        }
        if (items < 0 || format::mul_overflows(items, std::int64_t{h.typesize}, &bytes)) {
            bytes = -1;
        }
        if (h.vl_blocks() || bytes != h.blocksize) {
            throw FormatError("chunk: blocks of " + num(h.blocksize) +
                                  " bytes do not hold the block shape given (" +
                                  num(static_cast<std::int64_t>(blockshape.size())) + " dims, " +
                                  num(items) + " items of " + num(h.typesize) + " bytes)",
                              8);
        }
        blockshape_ = blockshape;
    }

    const std::int64_t bstarts_end = std::int64_t{hs} + std::int64_t{4} * nblocks_;
    if (bstarts_end > h.cbytes) {
        throw FormatError("chunk: block starts table (" + num(nblocks_) +
                              " blocks) exceeds cbytes " + num(h.cbytes),
                          static_cast<std::uint64_t>(hs));
    }
    data_start_ = static_cast<std::int32_t>(bstarts_end);

    if (h.use_dict()) {
        format::ByteReader r(chunk_);
        r.seek(static_cast<std::size_t>(bstarts_end), "chunk dictionary");
        const auto dsize = r.read_le<std::int32_t>("chunk dictionary size");
        if (dsize <= 0 || dsize > format::kMaxDictSize) {
            throw FormatError(
                "chunk: dictionary size " + num(dsize) + " outside 1.." + num(format::kMaxDictSize),
                static_cast<std::uint64_t>(bstarts_end));
        }
        const ByteSpan dict = r.take(static_cast<std::size_t>(dsize), "chunk dictionary");
        data_start_ = static_cast<std::int32_t>(r.position());
        if (format == CompFormat::lz4 || format == CompFormat::zstd) {
            dict_ = std::make_unique<detail::StreamDict>(dict.data(), dict.size(), format);
        }
    }

    if (h.vl_blocks()) {
        // Block sizes live in each block's stream header; validate them all now.
        vl_offsets_.resize(static_cast<std::size_t>(nblocks_) + 1);
        std::int64_t total = 0;
        std::int32_t prev = 0;
        for (std::int32_t i = 0; i < nblocks_; ++i) {
            const std::uint64_t at =
                static_cast<std::uint64_t>(hs) + 4U * static_cast<std::uint64_t>(i);
            const auto bstart = load_le<std::int32_t>(chunk_.data() + at);
            const std::int32_t next =
                i + 1 < nblocks_ ? load_le<std::int32_t>(chunk_.data() + at + 4) : h.cbytes;
            if (bstart < data_start_ || bstart <= prev || next <= bstart || next > h.cbytes ||
                bstart > h.cbytes - 4) {
                throw FormatError("chunk: VL block " + num(i) + " starts at " + num(bstart) +
                                      " (next " + num(next) + "), outside the chunk's data",
                                  at);
            }
            const auto bn = load_le<std::int32_t>(chunk_.data() + bstart);
            if (bn <= 0 || total + bn > h.nbytes) {
                throw FormatError("chunk: VL block " + num(i) + " size " + num(bn) +
                                      " is invalid or exceeds nbytes " + num(h.nbytes),
                                  static_cast<std::uint64_t>(bstart));
            }
            vl_offsets_[static_cast<std::size_t>(i)] = total;
            total += bn;
            blocksize_ = std::max(blocksize_, bn);
            prev = bstart;
        }
        if (total != h.nbytes) {
            throw FormatError(
                "chunk: VL block sizes add up to " + num(total) + ", not nbytes " + num(h.nbytes),
                static_cast<std::uint64_t>(hs));
        }
        vl_offsets_.back() = total;
    }
}

ChunkDecoder::~ChunkDecoder() = default;
ChunkDecoder::ChunkDecoder(ChunkDecoder&&) noexcept = default;
ChunkDecoder& ChunkDecoder::operator=(ChunkDecoder&&) noexcept = default;

void ChunkDecoder::fail(std::int32_t block, const std::string& what, std::uint64_t at) const {
    throw FormatError("chunk: block " + num(block) + ": " + what, at);
}

ChunkDecoder::BlockGeometry ChunkDecoder::geometry(std::int32_t i) const {
    if (!vl_offsets_.empty()) {
        const auto k = static_cast<std::size_t>(i);
        return {vl_offsets_[k], static_cast<std::int32_t>(vl_offsets_[k + 1] - vl_offsets_[k])};
    }
    const std::int64_t off = std::int64_t{i} * blocksize_;
    return {off,
            static_cast<std::int32_t>(std::min<std::int64_t>(blocksize_, header_.nbytes - off))};
}

std::int32_t ChunkDecoder::block_nbytes(std::int32_t i) const {
    if (i < 0 || i >= nblocks_) {
        throw UsageError("block index " + num(i) + " out of range (chunk has " + num(nblocks_) +
                         " blocks)");
    }
    return geometry(i).nbytes;
}

std::int64_t ChunkDecoder::block_offset(std::int32_t i) const {
    if (i < 0 || i >= nblocks_) {
        throw UsageError("block index " + num(i) + " out of range (chunk has " + num(nblocks_) +
                         " blocks)");
    }
    return geometry(i).offset;
}

std::vector<std::uint8_t> special_element(Special kind, std::int64_t typesize) {
    std::vector<std::uint8_t> e(static_cast<std::size_t>(std::max<std::int64_t>(typesize, 0)), 0);
    switch (kind) {
        case Special::zeros:
        case Special::uninit:
            return e;
        case Special::nan:
            if (typesize != 4 && typesize != 8) {
                throw UnsupportedError("NaN special chunk with typesize " + num(typesize) +
                                       " (only 4 and 8 are defined)");
            }
            quiet_nan(typesize, e.data());
            return e;
        case Special::none:
        case Special::value:
            break;
    }
    throw UsageError("special_element: not a header-only special kind");
}

ByteSpan ChunkDecoder::special_value() const noexcept {
    if (special() != Special::value) {
        return {};
    }
    return chunk_.subspan(format::kChunkExtendedHeaderSize,
                          static_cast<std::size_t>(header_.special_value_size()));
}

void ChunkDecoder::fill_special(std::int64_t chunk_offset,
                                std::uint8_t* dest,
                                std::size_t n) const {
    switch (special()) {
        case Special::nan: {
            std::uint8_t pattern[8];
            quiet_nan(header_.typesize, pattern);  // typesize 4 or 8: checked on construction
            const auto p = static_cast<std::size_t>(header_.typesize);
            fill_pattern(dest, n, pattern, p, static_cast<std::size_t>(chunk_offset) % p);
            return;
        }
        case Special::value: {
            const ByteSpan v = special_value();
            fill_pattern(dest, n, v.data(), v.size(),
                         static_cast<std::size_t>(chunk_offset) % v.size());
            return;
        }
        default:  // zeros; uninitialized chunks read as zeros too (a defined choice)
            b2nd::detail::fill_bytes(dest, 0, n);
            return;
    }
}

int ChunkDecoder::stream_count(std::int32_t i) const noexcept {
    return block_streams(header_, i);
}

int block_streams(const format::ChunkHeader& h, std::int32_t i) noexcept {
    if (h.vl_blocks() || h.blocksize <= 0) {
        return 1;
    }
    const bool leftover = i == h.nblocks() - 1 && h.nbytes % h.blocksize != 0;
    return h.split() && !leftover ? h.typesize : 1;
}

std::optional<std::vector<std::pair<std::uint32_t, std::uint32_t>>> block_extents(
    ByteSpan head, const format::ChunkHeader& h) {
    if (h.special() != 0 || h.memcpyed() || h.vl_blocks() || h.use_dict() || h.nbytes <= 0 ||
        h.blocksize <= 0) {
        return std::nullopt;
    }
    const std::int32_t nb = h.nblocks();
    const auto hs = static_cast<std::uint64_t>(h.header_size());
    const std::uint64_t table_end = hs + 4 * static_cast<std::uint64_t>(nb);
    const auto n = static_cast<std::uint64_t>(h.cbytes);
    if (head.size() < table_end) {
        return std::nullopt;
    }
    std::vector<std::pair<std::uint64_t, std::int32_t>> starts(static_cast<std::size_t>(nb));
    for (std::int32_t b = 0; b < nb; ++b) {
        const auto s = load_le<std::int32_t>(head.data() + hs + 4 * static_cast<std::uint64_t>(b));
        if (s < 0 || static_cast<std::uint64_t>(s) < table_end ||
            static_cast<std::uint64_t>(s) >= n) {
            return std::nullopt;
        }
        starts[static_cast<std::size_t>(b)] = {static_cast<std::uint64_t>(s), b};
    }
    std::sort(starts.begin(), starts.end());
    std::vector<std::pair<std::uint32_t, std::uint32_t>> out(static_cast<std::size_t>(nb));
    // From the back: each block ends at the next larger start (blocks sharing a start share an
    // end), in one pass whatever the table holds.
    std::uint64_t end = n;
    for (std::size_t k = starts.size(); k-- > 0;) {
        if (k + 1 < starts.size() && starts[k + 1].first > starts[k].first) {
            end = starts[k + 1].first;
        }
        out[static_cast<std::size_t>(starts[k].second)] = {
            static_cast<std::uint32_t>(starts[k].first), static_cast<std::uint32_t>(end)};
    }
    return out;
}

}  // namespace b2nd::codec
