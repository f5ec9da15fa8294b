// The chunk encoder, part two: filters forward, streams, block starts, and c-blosc2's fallbacks
// (its parameters are checked and completed in encode_params.cpp).
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

namespace {

constexpr std::size_t kNoRoom = static_cast<std::size_t>(-1);
constexpr std::uint8_t kVersionLz = 1;  // BLOSC_*_VERSION_FORMAT of every built-in codec

struct EncodeBuffers {
    b2nd::detail::Scratch ping, pong, bits, input;
};

EncodeBuffers& scratch() {
    thread_local EncodeBuffers s;
    return s;
}

/// The plugin of a lossy filter slot (INT_TRUNC, NDMEAN, a user's), or null.
const FilterPlugin* lossy_plugin(const FilterSlot& f) {
    const FilterPlugin* plugin = find_filter_plugin(static_cast<std::uint8_t>(f.id));
    return plugin != nullptr && plugin->lossy ? plugin : nullptr;
}

bool has_lossy(const EncodeParams& p) {
    return std::any_of(p.filters.begin(), p.filters.end(), [](const FilterSlot& f) {
        return f.id == Filter::trunc_prec || lossy_plugin(f) != nullptr;
    });
}

/// Applies the lossy filters that work on values (TRUNC_PREC, and plugins such as INT_TRUNC and
/// NDMEAN: forward then backward) to n bytes in place: the block as it will read back.
void apply_lossy(const EncodeParams& p, int ts, std::uint8_t* data, std::size_t n) {
    for (const FilterSlot& f : p.filters) {
        if (f.id == Filter::trunc_prec) {
            trunc_prec(static_cast<std::int8_t>(f.meta), ts, n, data, data);
            continue;
        }
        const FilterPlugin* plugin = lossy_plugin(f);
        if (plugin == nullptr) {
            continue;
        }
        std::uint8_t* tmp = b2nd::detail::scratch_bytes(scratch().pong, n);
        const BlockContext c = context_of(p, f.meta);
        plugin->forward(c, {data, n}, {tmp, n});
        if (plugin->backward) {
            plugin->backward(c, {tmp, n}, {data, n});
        } else {
            b2nd::detail::copy_bytes(data, tmp, n);
        }
    }
}

format::ChunkHeader base_header(const EncodeParams& p,
                                std::int32_t nbytes,
                                std::int32_t blocksize) {
    format::ChunkHeader h;
    h.version = format::kStableChunkVersion;
    h.versionlz = kVersionLz;
    h.typesize = static_cast<std::uint8_t>(coded_typesize(p.typesize));
    h.nbytes = nbytes;
    h.blocksize = blocksize;
    h.extended = true;
    for (std::size_t i = 0; i < p.filters.size(); ++i) {
        h.filters[i] = static_cast<std::uint8_t>(p.filters[i].id);
        h.filters_meta[i] = p.filters[i].meta;
        if (p.filters[i].id == Filter::bytedelta && p.filters[i].meta == 0) {
            // c-blosc2 reads meta 0 as "the super-chunk's typesize" and fails outside one:
            // store the unit explicitly so that a bare chunk decodes anywhere.
            h.filters_meta[i] = static_cast<std::uint8_t>(coded_typesize(p.typesize));
        }
    }
    h.udcodec = static_cast<std::uint8_t>(p.codec);
    h.compcode_meta = is_builtin(p.codec) ? 0 : p.codec_meta;
    return h;
}

bool is_run(const std::uint8_t* p, std::size_t n) {
    const std::uint8_t b = p[0];
    std::uint64_t pattern;
    b2nd::detail::fill_bytes(&pattern, b, 8);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t x;
        b2nd::detail::copy_bytes(&x, p + i, 8);
        if (x != pattern) {
            return false;
        }
    }
    for (; i < n; ++i) {
        if (p[i] != b) {
            return false;
        }
    }
    return true;
}

/// The calling thread's staging area for blocks encoded in parallel: reused across chunks and
/// never zero-filled (a fresh multi-MiB buffer per chunk costs as much as encoding it).
std::uint8_t* staging(std::size_t n) {
    thread_local std::unique_ptr<std::uint8_t[]> buf;
    thread_local std::size_t cap = 0;
    if (cap < n) {
        buf.reset(new std::uint8_t[n]);
        cap = n;
    }
    return buf.get();
}

/// Everything a block encoder needs, fixed for one chunk.
struct ChunkPlan {
    const EncodeParams* p;
    int ts;
    std::int32_t nbytes;
    std::int32_t blocksize;
    std::int32_t nblocks;
    bool split;
    bool filtered;
    const std::uint8_t* src;  // the chunk, or null when `fill` gives its blocks
    const BlockFill* fill;
    const BlockSeen* seen;          // or null
    const std::uint8_t* delta_ref;  // block 0 as it will read back
    const CodecPlugin* plugin;      // a plugin codec, or null

    bool leftover(std::int32_t i) const { return i == nblocks - 1 && nbytes % blocksize != 0; }
    std::size_t block_nbytes(std::int32_t i) const {
        return static_cast<std::size_t>(
            std::min<std::int64_t>(blocksize, std::int64_t{nbytes} - std::int64_t{i} * blocksize));
    }
    /// Worst-case encoded size of block i (all streams raw, with sizes and tokens).
    std::size_t block_bound(std::int32_t i) const {
        const std::size_t streams = split && !leftover(i) ? static_cast<std::size_t>(ts) : 1;
        return block_nbytes(i) + 5 * streams;
    }
    /// Block i's bytes: in the chunk, or filled into the calling thread's input buffer.
    const std::uint8_t* block_data(std::int32_t i) const {
        if (src != nullptr) {
            return src + std::size_t(i) * std::size_t(blocksize);
        }
        const std::size_t n = block_nbytes(i);
        std::uint8_t* buf = b2nd::detail::scratch_bytes(scratch().input, n);
        (*fill)(i, buf, n);
        return buf;
    }
};

/// Runs the filter pipeline forward over one block; returns the filtered bytes.
const std::uint8_t* filter_block(const ChunkPlan& c,
                                 std::int32_t i,
                                 const std::uint8_t* data,
                                 std::size_t n) {
    EncodeBuffers& s = scratch();
    const std::uint8_t* cur = data;
    for (const FilterSlot& f : c.p->filters) {
        if (f.id == Filter::none) {
            continue;
        }
        std::uint8_t* out = b2nd::detail::scratch_bytes(cur == s.ping.data() ? s.pong : s.ping, n);
        switch (f.id) {
            case Filter::shuffle:
                shuffle(f.meta != 0 ? f.meta : c.ts, n, cur, out);
                break;
            case Filter::bitshuffle:
                bitshuffle(c.ts, n, cur, out, b2nd::detail::scratch_bytes(s.bits, n));
                break;
            case Filter::delta:
                delta_encode(c.delta_ref, i == 0, c.ts, n, cur, out);
                break;
            case Filter::trunc_prec:
                trunc_prec(static_cast<std::int8_t>(f.meta), c.ts, n, cur, out);
                break;
            case Filter::bytedelta:
                bytedelta_encode(f.meta != 0 ? f.meta : c.ts, n, cur, out);
                break;
            default:  // a plugin (validate() checked it is registered and can write)
                find_filter_plugin(static_cast<std::uint8_t>(f.id))
                    ->forward(context_of(*c.p, f.meta), {cur, n}, {out, n});
                break;
        }
        cur = out;
    }
    return cur;
}

/// Encodes block i into out[0, cap). Returns its size, or kNoRoom. `all_zero_runs` is cleared
/// unless every stream is a run of zeros.
std::size_t encode_block(
    const ChunkPlan& c, std::int32_t i, std::uint8_t* out, std::size_t cap, bool& all_zero_runs) {
    const std::size_t n = c.block_nbytes(i);
    const std::uint8_t* data = c.block_data(i);
    if (c.seen != nullptr) {
        (*c.seen)(i, data, n);
    }
    if (c.filtered) {
        data = filter_block(c, i, data, n);
    }
    const std::size_t nstreams = c.split && !c.leftover(i) ? static_cast<std::size_t>(c.ts) : 1;
    const std::size_t neblock = n / nstreams;
    std::size_t used = 0;
    for (std::size_t j = 0; j < nstreams; ++j) {
        const std::uint8_t* stream = data + j * neblock;
        if (cap - used < 4) {
            return kNoRoom;
        }
        std::uint8_t* size_at = out + used;
        used += 4;
        if (is_run(stream, neblock)) {
            if (stream[0] == 0) {
                format::store_le<std::int32_t>(size_at, 0);
                continue;
            }
            if (cap - used < 1) {
                return kNoRoom;
            }
            format::store_le<std::int32_t>(size_at, -static_cast<std::int32_t>(stream[0]));
            out[used++] = 0x01;  // token: run of one byte
            all_zero_runs = false;
            continue;
        }
        all_zero_runs = false;
        const std::size_t room = cap - used;
        std::size_t csize = 0;
        try {
            csize = c.plugin != nullptr
                        ? c.plugin->encode(context_of(*c.p, c.p->codec_meta), {stream, neblock},
                                           {out + used, std::min(neblock, room)})
                        : detail::compress_stream(c.p->codec, c.p->clevel, stream, neblock,
                                                  out + used, std::min(neblock, room));
        } catch (const ItemError& e) {
            throw ItemError(e.what(), e.item(), i);  // which block: the caller knows the chunk
        }
        if (csize == 0 || csize >= neblock) {
            if (room < neblock) {
                return kNoRoom;
            }
            b2nd::detail::copy_bytes(out + used, stream, neblock);
            csize = neblock;
        }
        format::store_le<std::int32_t>(size_at, static_cast<std::int32_t>(csize));
        used += csize;
    }
    return used;
}

std::vector<std::uint8_t> special_chunk(
    std::int32_t nbytes, int typesize, std::int32_t blocksize, Special kind, ByteSpan value) {
    if (nbytes < 0 || blocksize < 0 || typesize < 1) {
        throw UsageError("special chunk: negative size or non-positive typesize");
    }
    const auto unit =
        static_cast<std::int64_t>(kind == Special::value ? value.size() : std::size_t(typesize));
    if (kind != Special::zeros && nbytes % unit != 0) {
        throw UsageError("special chunk: nbytes " + num(nbytes) + " is not a multiple of " +
                         num(unit));
    }
    EncodeParams p;
    p.typesize = typesize;
    p.filters = FilterPipeline{};
    format::ChunkHeader h = base_header(
        p, nbytes, blocksize > 0 ? std::min(blocksize, std::max(nbytes, 1)) : std::max(nbytes, 1));
    h.filters = {};
    h.udcodec = 0;
    h.flags = format::chunk_flags::kExtended;
    h.blosc2_flags = static_cast<std::uint8_t>(static_cast<unsigned>(kind)
                                               << format::blosc2_flags::kSpecialShift);
    h.cbytes = static_cast<std::int32_t>(format::kChunkExtendedHeaderSize + value.size());
    std::vector<std::uint8_t> out(static_cast<std::size_t>(h.cbytes));
    format::write_chunk_header(h, out.data());
    b2nd::detail::copy_bytes(out.data() + format::kChunkExtendedHeaderSize, value.data(),
                             value.size());
    return out;
}

}  // namespace

namespace {

/// encode_chunk for a chunk given whole (`src`) or block by block (`fill`).
std::size_t encode_impl(std::int64_t total,
                        const std::uint8_t* src,
                        const BlockFill* fill,
                        const EncodeParams& p,
                        MutableByteSpan dest,
                        const BlockSeen* seen) {
    if (total < 0) {
        throw UsageError("encode: negative chunk size " + num(total));
    }
    validate(p, static_cast<std::size_t>(total));
    const auto nbytes = static_cast<std::int32_t>(total);
    const std::size_t limit = max_encoded_size(static_cast<std::size_t>(total));
    if (dest.size() < limit) {
        throw UsageError("encode: destination of " + num(static_cast<std::int64_t>(dest.size())) +
                         " bytes is smaller than max_encoded_size (" +
                         num(static_cast<std::int64_t>(limit)) + ")");
    }
    const std::int32_t blocksize = effective_blocksize(p, nbytes);
    format::ChunkHeader h = base_header(p, nbytes, blocksize);
    constexpr std::size_t hs = format::kChunkExtendedHeaderSize;
    std::uint8_t* out = dest.data();

    if (p.clevel > 0 && nbytes >= kMinBufferSize) {
        ChunkPlan c{};
        c.p = &p;
        c.ts = h.typesize;
        c.nbytes = nbytes;
        c.blocksize = blocksize;
        c.nblocks = h.nblocks();
        c.split = splits_streams(p, blocksize);
        c.filtered = std::any_of(p.filters.begin(), p.filters.end(),
                                 [](const FilterSlot& f) { return f.id != Filter::none; });
        c.src = src;
        c.fill = fill;
        c.seen = seen;
        c.plugin = find_codec_plugin(static_cast<std::uint8_t>(p.codec));
        std::vector<std::uint8_t> block0;
        c.delta_ref = src;
        const bool delta = has_filter(p.filters, Filter::delta);
        if (delta && (src == nullptr || has_lossy(p))) {
            // DELTA's reference is block 0 as it reads back, i.e. after the lossy filters.
            block0.resize(c.block_nbytes(0));
            if (src != nullptr) {
                b2nd::detail::copy_bytes(block0.data(), src, block0.size());
            } else {
                (*fill)(0, block0.data(), block0.size());
            }
            apply_lossy(p, c.ts, block0.data(), block0.size());
            c.delta_ref = block0.data();
        }

        h.flags = static_cast<std::uint8_t>(
            format::chunk_flags::kExtended |
            (has_filter(p.filters, Filter::delta) ? format::chunk_flags::kDelta : 0) |
            (c.split ? 0 : format::chunk_flags::kDontSplit) |
            (static_cast<unsigned>(comp_format_of(p.codec)) << 5));

        const std::size_t table = hs + 4 * static_cast<std::size_t>(c.nblocks);
        bool fits = table <= limit;
        bool zero_runs = true;
        std::size_t pos = table;
        if (fits && (p.nthreads <= 1 || c.nblocks <= 1)) {
            for (std::int32_t i = 0; i < c.nblocks && fits; ++i) {
                const std::size_t n = encode_block(c, i, out + pos, limit - pos, zero_runs);
                fits = n != kNoRoom;
                if (fits) {
                    format::store_le<std::int32_t>(out + hs + 4 * std::size_t(i),
                                                   static_cast<std::int32_t>(pos));
                    pos += n;
                }
            }
        } else if (fits) {
            // Encode blocks in parallel into private slots, then pack them in order: the
            // output is the same for any number of threads.
            std::vector<std::size_t> slot(static_cast<std::size_t>(c.nblocks) + 1, 0);
            for (std::int32_t i = 0; i < c.nblocks; ++i) {
                slot[std::size_t(i) + 1] = slot[std::size_t(i)] + c.block_bound(i);
            }
            std::uint8_t* const tmp = staging(slot.back());
            std::vector<std::size_t> sizes(static_cast<std::size_t>(c.nblocks));
            std::vector<char> zero(static_cast<std::size_t>(c.nblocks), 1);
            b2nd::detail::parallel_for(
                static_cast<std::size_t>(c.nblocks), p.nthreads, [&](std::size_t i) {
                    bool z = true;
                    sizes[i] = encode_block(c, static_cast<std::int32_t>(i), tmp + slot[i],
                                            slot[i + 1] - slot[i], z);
                    zero[i] = z ? 1 : 0;
                });
            for (std::size_t i = 0; i < sizes.size() && fits; ++i) {
                fits = sizes[i] != kNoRoom && sizes[i] <= limit - pos;
                if (fits) {
                    format::store_le<std::int32_t>(out + hs + 4 * i,
                                                   static_cast<std::int32_t>(pos));
                    b2nd::detail::copy_bytes(out + pos, tmp + slot[i], sizes[i]);
                    pos += sizes[i];
                    zero_runs = zero_runs && zero[i] != 0;
                }
            }
        }
        if (fits) {
            // c-blosc2 2.x rejects special chunks whose size is not a multiple of the typesize:
            // keep the (slightly longer) all-zero-runs encoding for those.
            if (zero_runs && nbytes % c.ts == 0) {
                h.blosc2_flags |= static_cast<std::uint8_t>(static_cast<unsigned>(Special::zeros)
                                                            << format::blosc2_flags::kSpecialShift);
                pos = hs;
            }
            h.cbytes = static_cast<std::int32_t>(pos);
            format::write_chunk_header(h, out);
            return pos;
        }
        h.flags |= format::chunk_flags::kMemcpyed;  // compression did not pay: store
    } else {
        h.flags = format::chunk_flags::kExtended | format::chunk_flags::kMemcpyed;
    }
    h.cbytes = static_cast<std::int32_t>(limit);
    format::write_chunk_header(h, out);
    const auto n = static_cast<std::size_t>(nbytes);
    if (src != nullptr) {
        b2nd::detail::copy_bytes(out + hs, src, n);
    } else if (n > 0) {
        const std::size_t bs = static_cast<std::size_t>(blocksize);
        for (std::size_t off = 0; off < n; off += bs) {
            (*fill)(static_cast<std::int32_t>(off / bs), out + hs + off, std::min(bs, n - off));
        }
    }
    // Decoders copy memcpyed chunks without filters; apply the lossy filters anyway, block by
    // block, so that what reads back does not depend on whether the data compressed
    // (CONFORMANCE.md).
    const std::size_t bs = static_cast<std::size_t>(blocksize);
    for (std::size_t off = 0; off < n; off += bs) {
        const std::size_t len = std::min(bs, n - off);
        if (has_lossy(p)) {
            apply_lossy(p, h.typesize, out + hs + off, len);
        }
        if (seen != nullptr) {
            (*seen)(static_cast<std::int32_t>(off / bs), out + hs + off, len);
        }
    }
    return limit;
}

}  // namespace

std::size_t encode_chunk(ByteSpan src,
                         const EncodeParams& p,
                         MutableByteSpan dest,
                         const BlockSeen* seen) {
    static const std::uint8_t kNone = 0;  // an empty span may have no data pointer
    return encode_impl(static_cast<std::int64_t>(src.size()), src.empty() ? &kNone : src.data(),
                       nullptr, p, dest, seen);
}

std::size_t encode_chunk(std::int64_t nbytes,
                         const BlockFill& fill,
                         const EncodeParams& p,
                         MutableByteSpan dest,
                         const BlockSeen* seen) {
    if (!fill) {
        throw UsageError("encode: no block fill function");
    }
    return encode_impl(nbytes, nullptr, &fill, p, dest, seen);
}

std::vector<std::uint8_t> encode_chunk(ByteSpan src, const EncodeParams& params) {
    std::vector<std::uint8_t> out(max_encoded_size(src.size()));
    out.resize(encode_chunk(src, params, out));
    return out;
}

std::vector<std::uint8_t> make_zeros_chunk(std::int32_t nbytes,
                                           int typesize,
                                           std::int32_t blocksize) {
    return special_chunk(nbytes, typesize, blocksize, Special::zeros, {});
}

std::vector<std::uint8_t> make_nans_chunk(std::int32_t nbytes,
                                          int typesize,
                                          std::int32_t blocksize) {
    if (typesize != 4 && typesize != 8) {
        throw UsageError("NaN chunk: typesize must be 4 or 8, got " + num(typesize));
    }
    return special_chunk(nbytes, typesize, blocksize, Special::nan, {});
}

std::vector<std::uint8_t> make_uninit_chunk(std::int32_t nbytes,
                                            int typesize,
                                            std::int32_t blocksize) {
    return special_chunk(nbytes, typesize, blocksize, Special::uninit, {});
}

std::vector<std::uint8_t> make_repeated_chunk(std::int32_t nbytes,
                                              ByteSpan value,
                                              std::int32_t blocksize) {
    if (value.empty() || static_cast<std::int64_t>(value.size()) > nbytes) {
        throw UsageError("repeated-value chunk: the value (" +
                         num(static_cast<std::int64_t>(value.size())) +
                         " bytes) must be non-empty and no larger than nbytes " + num(nbytes));
    }
    return special_chunk(nbytes, static_cast<int>(value.size()), blocksize, Special::value, value);
}

}  // namespace b2nd::codec
