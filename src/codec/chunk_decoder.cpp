// The chunk decoder. Layout (README_CHUNK_FORMAT.rst):
//   header (16 or 32 bytes) | bstarts (int32 x nblocks) | [dsize int32 | dict] | streams
// Each block is 1 stream, or `typesize` streams when split; each stream is an int32 csize then
// csize bytes; csize 0 = all zeros, csize < 0 = a run of the byte -csize (a token byte follows),
// csize == stream length = stored raw. Filters are undone from slot 5 down to slot 0.
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
#include "../detail/strings.hpp"
#include "../detail/thread_pool.hpp"
#include "compressors.hpp"
#include "simd.hpp"

namespace b2nd::codec {

using b2nd::detail::num;

namespace {

using format::load_le;

constexpr std::uint8_t kLastBlosc1Version = 2;

/// Per-thread scratch buffers; they grow to the largest block seen and are reused.
struct DecodeBuffers {
    b2nd::detail::Scratch streams, ping, pong, bits, block0, range, range0, rows;
};

DecodeBuffers& scratch() {
    thread_local DecodeBuffers s;
    return s;
}

/// Whether decoding has something to undo for the filter in this slot (TRUNC_PREC and plugin
/// filters without a backward function have nothing).
bool undoes(std::uint8_t f, const FilterPlugin* plugin) {
    if (plugin != nullptr) {
        return static_cast<bool>(plugin->backward);
    }
    return f != 0 && f != static_cast<std::uint8_t>(Filter::trunc_prec);
}

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
    const auto& h = header_;
    const bool leftover = !h.vl_blocks() && i == nblocks_ - 1 && h.nbytes % blocksize_ != 0;
    return (!h.vl_blocks() && h.split() && !leftover) ? h.typesize : 1;
}

void ChunkDecoder::decode_streams(std::int32_t i,
                                  const BlockGeometry& g,
                                  std::uint8_t* out,
                                  std::size_t want) const {
    const auto& h = header_;
    const std::uint8_t* base = chunk_.data();
    const std::int64_t cbytes = h.cbytes;
    const std::uint64_t table_at =
        static_cast<std::uint64_t>(h.header_size()) + 4U * static_cast<std::uint64_t>(i);
    const std::int64_t bstart = load_le<std::int32_t>(base + table_at);
    if (bstart < data_start_ || bstart >= cbytes) {
        fail(i,
             "block start " + num(bstart) + " outside the chunk's data [" + num(data_start_) +
                 ", " + num(cbytes) + ")",
             table_at);
    }
    const auto format = static_cast<CompFormat>(h.comp_format());
    const bool vl = h.vl_blocks();
    const int nstreams = stream_count(i);
    if (g.nbytes % nstreams != 0) {
        fail(i,
             "split block of " + num(g.nbytes) + " bytes is not a multiple of typesize " +
                 num(nstreams),
             table_at);
    }
    const auto neblock = static_cast<std::size_t>(g.nbytes / nstreams);
    const std::size_t wanted = std::min(want, neblock);  // of each stream
    std::int64_t pos = bstart;
    for (int j = 0; j < nstreams; ++j, out += neblock) {
        if (cbytes - pos < 4) {
            fail(i, "stream " + num(j) + ": truncated stream size",
                 static_cast<std::uint64_t>(pos));
        }
        const std::int64_t at = pos;
        const std::int64_t csize = load_le<std::int32_t>(base + pos);
        pos += 4;
        std::int64_t clen = csize;
        if (vl) {
            // A VL block's size field holds the uncompressed size; the stream runs to the next
            // block start (validated in the constructor).
            const std::int64_t next =
                i + 1 < nblocks_ ? load_le<std::int32_t>(base + table_at + 4) : cbytes;
            clen = next - pos;
        } else if (csize == 0) {
            b2nd::detail::fill_bytes(out, 0, wanted);
            continue;
        } else if (csize < 0) {
            if (pos >= cbytes) {
                fail(i, "stream " + num(j) + ": truncated run token",
                     static_cast<std::uint64_t>(pos));
            }
            const std::uint8_t token = base[pos++];
            if ((token & 1U) == 0) {
                throw UnsupportedError("chunk: block " + num(i) + ": stream " + num(j) +
                                           ": unknown stream token " + num(token),
                                       static_cast<std::uint64_t>(pos - 1));
            }
            if (csize < -255) {
                fail(i,
                     "stream " + num(j) + ": run length code " + num(csize) +
                         " does not encode a byte",
                     static_cast<std::uint64_t>(at));
            }
            b2nd::detail::fill_bytes(out, static_cast<int>(-csize), wanted);
            continue;
        }
        if (clen > cbytes - pos) {
            fail(i,
                 "stream " + num(j) + ": compressed size " + num(clen) + " exceeds the chunk (" +
                     num(cbytes - pos) + " bytes left)",
                 static_cast<std::uint64_t>(at));
        }
        if (clen == static_cast<std::int64_t>(neblock)) {
            b2nd::detail::copy_bytes(out, base + pos, wanted);
        } else if (codec_plugin_ != nullptr) {
            decode_plugin_stream(i, j, base + pos, static_cast<std::size_t>(clen), out, neblock,
                                 static_cast<std::uint64_t>(at));
        } else if (const char* err = detail::decompress_stream_prefix(
                       format, base + pos, static_cast<std::size_t>(clen), out, wanted, neblock,
                       dict_.get())) {
            fail(i,
                 "stream " + num(j) + ": " + comp_format_name(h.comp_format()) + " stream of " +
                     num(clen) + " bytes does not decode to " +
                     num(static_cast<std::int64_t>(neblock)) + " bytes (" + err + ")",
                 static_cast<std::uint64_t>(at));
        }
        pos += clen;
    }
}

BlockContext ChunkDecoder::context(std::uint8_t meta) const noexcept {
    BlockContext c;
    c.typesize = header_.typesize;
    c.meta = meta;
    c.blockshape = blockshape_.empty() ? nullptr : blockshape_.data();
    c.ndim = static_cast<int>(blockshape_.size());
    return c;
}

template <class F>
void ChunkDecoder::run_plugin(std::int32_t i,
                              const std::string& who,
                              std::uint64_t at,
                              F&& call) const {
    try {
        call();
    } catch (const UnsupportedError&) {
        throw;  // a plugin this build cannot run (built without ZFP), or no block shape
    } catch (const FormatError& e) {
        fail(i, who + ": " + e.detail(), at);
    } catch (const UsageError& e) {
        fail(i, who + ": " + e.what(), at);
    }
}

void ChunkDecoder::decode_plugin_stream(std::int32_t i,
                                        int j,
                                        const std::uint8_t* src,
                                        std::size_t n,
                                        std::uint8_t* out,
                                        std::size_t out_size,
                                        std::uint64_t at) const {
    const CodecPlugin& p = *codec_plugin_;
    run_plugin(i, "stream " + num(j) + ": " + p.name, at, [&] {
        p.decode(context(header_.compcode_meta), {src, n}, {out, out_size});
    });
}

void ChunkDecoder::apply_filters(std::int32_t i,
                                 std::uint8_t* data,
                                 std::size_t n,
                                 std::uint8_t* dest,
                                 const std::uint8_t* block0) const {
    const auto& h = header_;
    DecodeBuffers& s = scratch();
    // Count the filters to undo so the last one writes straight into dest.
    int remaining = 0;
    for (std::size_t slot = 0; slot < h.filters.size(); ++slot) {
        remaining += undoes(h.filters[slot], filter_plugins_[slot]) ? 1 : 0;
    }
    std::uint8_t* cur = data;
    for (int slot = format::kChunkMaxFilters - 1; slot >= 0; --slot) {
        const auto f = static_cast<Filter>(h.filters[static_cast<std::size_t>(slot)]);
        const std::uint8_t meta = h.filters_meta[static_cast<std::size_t>(slot)];
        const FilterPlugin* plugin = filter_plugins_[static_cast<std::size_t>(slot)];
        if (!undoes(static_cast<std::uint8_t>(f), plugin)) {
            continue;  // trunc_prec and int_trunc are lossy and have nothing to undo
        }
        std::uint8_t* out = --remaining == 0 ? dest
                                             : b2nd::detail::scratch_bytes(
                                                   cur == s.ping.data() ? s.pong : s.ping, n);
        switch (f) {
            case Filter::shuffle:
                unshuffle(meta != 0 ? meta : h.typesize, n, cur, out);
                break;
            case Filter::bitshuffle:
                bitunshuffle(h.typesize, n, cur, out, b2nd::detail::scratch_bytes(s.bits, n),
                             h.version <= kLastBlosc1Version);
                break;
            case Filter::delta:
                delta_decode(block0, i == 0, h.typesize, n, cur, out);
                break;
            case Filter::bytedelta:
            case Filter::bytedelta_legacy:
                bytedelta_decode(meta != 0 ? meta : h.typesize, n, cur, out,
                                 f == Filter::bytedelta_legacy);
                break;
            default:
                run_plugin(i, plugin->name + " filter", 16U + static_cast<unsigned>(slot), [&] {
                    plugin->backward(context(meta), {cur, n}, {out, n});
                });
                break;
        }
        cur = out;
    }
}

void ChunkDecoder::decode_block_impl(std::int32_t i,
                                     std::uint8_t* dest,
                                     const std::uint8_t* block0) const {
    const BlockGeometry g = geometry(i);
    const auto n = static_cast<std::size_t>(g.nbytes);
    if (special() != Special::none) {
        fill_special(g.offset, dest, n);
        return;
    }
    if (memcpyed()) {
        b2nd::detail::copy_bytes(dest, chunk_.data() + header_.header_size() + g.offset, n);
        return;
    }
    if (!has_filters_) {
        decode_streams(i, g, dest);
        return;
    }
    if (needs_block0_ && i > 0 && block0 == nullptr) {
        DecodeBuffers& s = scratch();
        std::uint8_t* b0 =
            b2nd::detail::scratch_bytes(s.block0, static_cast<std::size_t>(geometry(0).nbytes));
        decode_block_impl(0, b0, nullptr);
        block0 = b0;
    }
    std::uint8_t* streams = b2nd::detail::scratch_bytes(scratch().streams, n);
    decode_streams(i, g, streams);
    apply_filters(i, streams, n, dest, block0);
}

bool ChunkDecoder::decodes_prefix() const noexcept {
    const auto& h = header_;
    if (special() != Special::none || memcpyed()) {
        return true;
    }
    if (h.vl_blocks() || codec_plugin_ != nullptr ||
        !detail::stops_early(static_cast<CompFormat>(h.comp_format()), dict_.get())) {
        return false;
    }
    if (!has_filters_) {
        return !h.split() || h.typesize == 1;  // one stream per block
    }
    // A single byte shuffle of whole items, over one stream per byte of the item.
    return sole_filter() == Filter::shuffle && (h.split() || h.typesize == 1);
}

Filter ChunkDecoder::sole_filter() const noexcept {
    const auto& h = header_;
    Filter sole = Filter::none;
    int undone = 0;
    for (std::size_t slot = 0; slot < h.filters.size(); ++slot) {
        const auto f = static_cast<Filter>(h.filters[slot]);
        const std::uint8_t meta = h.filters_meta[slot];
        if (!undoes(h.filters[slot], filter_plugins_[slot])) {
            continue;  // trunc_prec and int_trunc are lossy and have nothing to undo
        }
        ++undone;
        sole = f == Filter::shuffle && meta != 0 && meta != h.typesize ? Filter::none : f;
    }
    return undone == 1 ? sole : Filter::none;
}

void ChunkDecoder::decode_block_prefix(std::int32_t i,
                                       MutableByteSpan dest,
                                       std::size_t need,
                                       const std::uint8_t* block0) const {
    const std::int32_t nbytes = block_nbytes(i);
    if (dest.size() < static_cast<std::size_t>(nbytes)) {
        throw UsageError("decode_block_prefix: destination of " +
                         num(static_cast<std::int64_t>(dest.size())) +
                         " bytes is smaller than block " + num(i) + " (" + num(nbytes) + " bytes)");
    }
    const BlockGeometry g = geometry(i);
    const auto n = static_cast<std::size_t>(g.nbytes);
    if (need >= n || !decodes_prefix()) {
        decode_block_impl(i, dest.data(), block0);
        return;
    }
    if (special() != Special::none) {
        fill_special(g.offset, dest.data(), need);
        return;
    }
    if (memcpyed()) {
        b2nd::detail::copy_bytes(dest.data(), chunk_.data() + header_.header_size() + g.offset,
                                 need);
        return;
    }
    const int nstreams = stream_count(i);
    if (!has_filters_ && nstreams == 1) {
        decode_streams(i, g, dest.data(), need);
        return;
    }
    const auto ts = static_cast<std::size_t>(header_.typesize);
    if (!has_filters_ || nstreams != header_.typesize) {
        decode_block_impl(i, dest.data(), block0);  // an unsplit leftover block
        return;
    }
    // Stream k holds byte k of every item: the first m bytes of each give the first m items.
    const std::size_t m = (need + ts - 1) / ts;
    const std::size_t per_stream = n / ts;
    std::uint8_t* streams = b2nd::detail::scratch_bytes(scratch().streams, n);
    decode_streams(i, g, streams, m);
    for (std::size_t k = 1; k < ts; ++k) {
        std::memmove(streams + k * m, streams + k * per_stream, m);
    }
    unshuffle(header_.typesize, m * ts, streams, dest.data());
}

void ChunkDecoder::decode_block_rows(std::int32_t i,
                                     std::uint8_t* dest,
                                     const Rows& rows,
                                     const std::uint8_t* block0) const {
    const std::int32_t nbytes = block_nbytes(i);
    if (rows.row_bytes * rows.nrows != static_cast<std::size_t>(nbytes) ||
        (rows.nrows > 0 && rows.offsets == nullptr)) {
        throw UsageError("decode_block_rows: " + num(static_cast<std::int64_t>(rows.nrows)) +
                         " rows of " + num(static_cast<std::int64_t>(rows.row_bytes)) +
                         " bytes do not hold block " + num(i) + " (" + num(nbytes) + " bytes)");
    }
    const BlockGeometry g = geometry(i);
    const auto n = static_cast<std::size_t>(g.nbytes);
    const auto ts = static_cast<std::size_t>(header_.typesize);
    // The one filter to undo is a byte shuffle of whole items (or a bit shuffle of whole groups
    // of 8 items) over items split into rows: the unshuffle writes each row where it goes.
    const Filter last = sole_filter();
    const bool whole_rows =
        special() == Special::none && !memcpyed() && n % ts == 0 && rows.row_bytes % ts == 0;
    if (whole_rows && last == Filter::shuffle && ts > 1) {
        std::uint8_t* streams = b2nd::detail::scratch_bytes(scratch().streams, n);
        decode_streams(i, g, streams);
        detail::unshuffle_rows(static_cast<int>(ts), n / ts, streams, rows.row_bytes / ts,
                               rows.nrows, dest, rows.offsets);
        return;
    }
    if (whole_rows && last == Filter::bitshuffle && (n / ts) % 8 == 0) {
        DecodeBuffers& s = scratch();
        std::uint8_t* streams = b2nd::detail::scratch_bytes(s.streams, n);
        decode_streams(i, g, streams);
        detail::bitunshuffle_rows(static_cast<int>(ts), n / ts, streams,
                                  b2nd::detail::scratch_bytes(s.bits, n), rows.row_bytes / ts,
                                  rows.nrows, dest, rows.offsets);
        return;
    }
    const std::uint8_t* block;
    if (memcpyed()) {
        block = chunk_.data() + header_.header_size() + g.offset;
    } else {
        std::uint8_t* buf = b2nd::detail::scratch_bytes(scratch().rows, n);
        decode_block_impl(i, buf, block0);
        block = buf;
    }
    for (std::size_t r = 0; r < rows.nrows; ++r) {
        b2nd::detail::copy_bytes(dest + rows.offsets[r], block + r * rows.row_bytes,
                                 rows.row_bytes);
    }
}

void ChunkDecoder::decode_block(std::int32_t i,
                                MutableByteSpan dest,
                                const std::uint8_t* block0) const {
    const std::int32_t n = block_nbytes(i);
    if (dest.size() < static_cast<std::size_t>(n)) {
        throw UsageError("decode_block: destination of " +
                         num(static_cast<std::int64_t>(dest.size())) +
                         " bytes is smaller than block " + num(i) + " (" + num(n) + " bytes)");
    }
    decode_block_impl(i, dest.data(), block0);
}

void ChunkDecoder::decode(MutableByteSpan dest, int nthreads) const {
    const auto n = static_cast<std::size_t>(header_.nbytes);
    if (dest.size() < n) {
        throw UsageError("decode: destination of " + num(static_cast<std::int64_t>(dest.size())) +
                         " bytes is smaller than the chunk's " + num(header_.nbytes) + " bytes");
    }
    if (special() != Special::none) {
        fill_special(0, dest.data(), n);
        return;
    }
    if (memcpyed()) {
        b2nd::detail::copy_bytes(dest.data(), chunk_.data() + header_.header_size(), n);
        return;
    }
    if (nblocks_ == 0) {
        return;
    }
    std::uint8_t* out = dest.data();
    std::int32_t first = 0;
    if (needs_block0_) {
        decode_block_impl(0, out, nullptr);  // the DELTA reference for every other block
        first = 1;
    }
    const auto count = static_cast<std::size_t>(nblocks_ - first);
    b2nd::detail::parallel_for(count, nthreads, [&](std::size_t k) {
        const auto i = static_cast<std::int32_t>(k) + first;
        decode_block_impl(i, out + geometry(i).offset, out);
    });
}

void ChunkDecoder::decode_range(std::int64_t offset, MutableByteSpan dest) const {
    const auto len = static_cast<std::int64_t>(dest.size());
    if (offset < 0 || offset > header_.nbytes || len > header_.nbytes - offset) {
        throw UsageError("decode_range: bytes [" + num(offset) + ", " + num(offset + len) +
                         ") outside the chunk's " + num(header_.nbytes) + " bytes");
    }
    if (len == 0) {
        return;
    }
    if (special() != Special::none) {
        fill_special(offset, dest.data(), dest.size());
        return;
    }
    if (memcpyed()) {
        b2nd::detail::copy_bytes(dest.data(), chunk_.data() + header_.header_size() + offset,
                                 dest.size());
        return;
    }
    auto block_of = [this](std::int64_t pos) -> std::int32_t {
        if (vl_offsets_.empty()) {
            return static_cast<std::int32_t>(pos / blocksize_);
        }
        const auto it = std::upper_bound(vl_offsets_.begin(), vl_offsets_.end(), pos);
        return static_cast<std::int32_t>(it - vl_offsets_.begin()) - 1;
    };
    const std::int32_t first = block_of(offset);
    const std::int32_t last = block_of(offset + len - 1);
    DecodeBuffers& s = scratch();
    const std::uint8_t* block0 = nullptr;
    for (std::int32_t b = first; b <= last; ++b) {
        const BlockGeometry g = geometry(b);
        const std::int64_t lo = std::max(offset, g.offset);
        const std::int64_t hi = std::min(offset + len, g.offset + g.nbytes);
        std::uint8_t* target = dest.data() + (lo - offset);
        const bool whole = lo == g.offset && hi == g.offset + g.nbytes;
        std::uint8_t* out =
            whole ? target
                  : b2nd::detail::scratch_bytes(s.range, static_cast<std::size_t>(g.nbytes));
        decode_block_impl(b, out, block0);
        if (!whole) {
            b2nd::detail::copy_bytes(target, out + (lo - g.offset),
                                     static_cast<std::size_t>(hi - lo));
        }
        if (b == 0 && needs_block0_) {
            if (whole) {
                block0 = out;
            } else {
                std::uint8_t* keep =
                    b2nd::detail::scratch_bytes(s.range0, static_cast<std::size_t>(g.nbytes));
                b2nd::detail::copy_bytes(keep, out, static_cast<std::size_t>(g.nbytes));
                block0 = keep;
            }
        }
    }
}

std::vector<std::uint8_t> decode_chunk(ByteSpan chunk, int nthreads, std::int64_t max_nbytes) {
    ChunkDecoder dec(chunk);
    if (dec.nbytes() > max_nbytes) {
        throw UsageError("decode_chunk: chunk claims " + num(dec.nbytes()) +
                         " uncompressed bytes, above the limit of " + num(max_nbytes));
    }
    std::vector<std::uint8_t> out(static_cast<std::size_t>(dec.nbytes()));
    dec.decode(out, nthreads);
    return out;
}

}  // namespace b2nd::codec
