// The chunk decoder, part two: decoding blocks (the chunk is checked, and its special values
// filled, in chunk_check.cpp). Layout (README_CHUNK_FORMAT.rst):
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
#include "../detail/text.hpp"
#include "../detail/thread_pool.hpp"
#include "compressors.hpp"
#include "decoder_detail.hpp"
#include "simd.hpp"

namespace b2nd::codec {

using b2nd::detail::num;
using decoder_detail::undoes;

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

}  // namespace

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
    check(i, i);
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
    // A check of decoded pieces: decode up to a piece boundary, check after; else the block's
    // stored bytes are checked whole, before.
    const std::size_t upto = check_ != nullptr ? check_->prefix_end(i, need) : 0;
    if (upto >= n) {
        decode_block_impl(i, dest.data(), block0);
        return;
    }
    if (upto == 0) {
        check(i, i);
    } else {
        need = std::max(need, upto);
    }
    if (memcpyed()) {
        b2nd::detail::copy_bytes(dest.data(), chunk_.data() + header_.header_size() + g.offset,
                                 need);
    } else if (!has_filters_ && stream_count(i) == 1) {
        decode_streams(i, g, dest.data(), need);
    } else if (!has_filters_ || stream_count(i) != header_.typesize) {
        decode_block_impl(i, dest.data(), block0);  // an unsplit leftover block, checked whole
        return;
    } else {
        // Stream k holds byte k of every item: the first m bytes of each give the first m items.
        const auto ts = static_cast<std::size_t>(header_.typesize);
        const std::size_t m = (need + ts - 1) / ts;
        const std::size_t per_stream = n / ts;
        std::uint8_t* streams = b2nd::detail::scratch_bytes(scratch().streams, n);
        decode_streams(i, g, streams, m);
        for (std::size_t k = 1; k < ts; ++k) {
            std::memmove(streams + k * m, streams + k * per_stream, m);
        }
        unshuffle(header_.typesize, m * ts, streams, dest.data());
    }
    if (upto != 0) {
        check_->check_prefix(i, dest.data(), need);
    }
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
    if (special() == Special::none) {
        check(i, i);
    }
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
        check(0, nblocks_ - 1);
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
    auto block_of = [this](std::int64_t pos) -> std::int32_t {
        if (vl_offsets_.empty()) {
            return static_cast<std::int32_t>(pos / blocksize_);
        }
        const auto it = std::upper_bound(vl_offsets_.begin(), vl_offsets_.end(), pos);
        return static_cast<std::int32_t>(it - vl_offsets_.begin()) - 1;
    };
    const std::int32_t first = block_of(offset);
    const std::int32_t last = block_of(offset + len - 1);
    if (memcpyed()) {
        check(first, last);
        b2nd::detail::copy_bytes(dest.data(), chunk_.data() + header_.header_size() + offset,
                                 dest.size());
        return;
    }
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
