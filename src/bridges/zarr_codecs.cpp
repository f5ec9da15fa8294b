// Zarr chunks decoded: bytes-to-bytes codecs undone last first, then the bytes codec's byte
// order and the transposition; shard indexes read and checked (zarr_meta.hpp).
#include <algorithm>
#include <cstring>
#include <iterator>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/error.hpp>

#include "../codec/compressors.hpp"
#include "../detail/text.hpp"
#include "crc32c.hpp"
#include "zarr_meta.hpp"

namespace b2nd::bridges {

namespace {

using detail::num;

[[noreturn]] void corrupt(const std::string& where, const std::string& what) {
    throw FormatError(where + ": " + what);
}

std::uint32_t load_le32(const std::uint8_t* p) {
    return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
           std::uint32_t{p[3]} << 24;
}

const char* codec_name(ZarrBytesCodec::Kind k) {
    switch (k) {
        case ZarrBytesCodec::Kind::blosc:
            return "blosc";
        case ZarrBytesCodec::Kind::zstd:
            return "zstd";
        case ZarrBytesCodec::Kind::zlib:
            return "zlib";
        case ZarrBytesCodec::Kind::gzip:
            return "gzip";
        case ZarrBytesCodec::Kind::lz4:
            return "lz4";
        case ZarrBytesCodec::Kind::crc32c:
            return "crc32c";
    }
    return "?";
}

/// Undoes the bytes-to-bytes codecs of `c` on stored[0, n); returns the bytes left (in one of
/// the two scratch buffers, or `stored` itself when there is nothing to undo). With `direct`
/// (room for `want` bytes), the last codec undone writes there when it decodes to `want` bytes
/// and says so first (Blosc, LZ4, zstd frames with their size): no copy after.
ByteSpan undo_bytes_codecs(const std::vector<ZarrBytesCodec>& codecs,
                           const std::uint8_t* stored,
                           std::size_t n,
                           std::size_t want,
                           std::vector<std::uint8_t> (&scratch)[2],
                           const std::string& where,
                           std::uint8_t* direct = nullptr) {
    const std::uint8_t* p = stored;
    std::size_t len = n;
    int next = 0;
    // A compressed stream inside another one is at most a little larger than the data.
    const std::size_t limit = want + want / 16 + (std::size_t{1} << 20);
    for (auto it = codecs.rbegin(); it != codecs.rend(); ++it) {
        std::vector<std::uint8_t>& out = scratch[next];
        const std::string who = where + ": " + codec_name(it->kind) + " codec";
        const bool last = direct != nullptr && std::next(it) == codecs.rend();
        switch (it->kind) {
            case ZarrBytesCodec::Kind::crc32c: {
                if (len < 4) {
                    corrupt(who, "the chunk is shorter than its checksum");
                }
                const std::uint32_t stored_crc = load_le32(p + len - 4);
                const std::uint32_t crc = crc32c(p, len - 4);
                if (crc != stored_crc) {
                    corrupt(who, "the stored crc32c does not match the bytes (stored " +
                                     num(stored_crc) + ", computed " + num(crc) + ")");
                }
                len -= 4;
                continue;  // the bytes stay where they are
            }
            case ZarrBytesCodec::Kind::blosc:
                try {
                    const codec::ChunkDecoder dec(ByteSpan(p, len));
                    const auto size = static_cast<std::size_t>(dec.nbytes());
                    if (size > limit) {
                        corrupt(who, "the chunk claims " + num(dec.nbytes()) +
                                         " decoded bytes, more than it can hold");
                    }
                    if (last && size == want) {
                        dec.decode({direct, size});
                        return ByteSpan(direct, size);
                    }
                    out.resize(size);
                    dec.decode({out.data(), size});
                } catch (const FormatError& e) {
                    rethrow_with_context(e, who);
                }
                break;
            case ZarrBytesCodec::Kind::lz4: {
                // numcodecs' LZ4: the decoded size (4 bytes, little-endian), then an LZ4 block.
                if (len < 4) {
                    corrupt(who, "the chunk is shorter than its 4-byte size");
                }
                const std::size_t size = load_le32(p);
                if (size > limit) {
                    corrupt(who, "the chunk claims " + num(static_cast<std::int64_t>(size)) +
                                     " decoded bytes, more than it can hold");
                }
                std::uint8_t* to = direct;
                if (!last || size != want) {
                    out.resize(size);
                    to = out.data();
                }
                if (const char* e = codec::detail::decompress_stream(codec::CompFormat::lz4, p + 4,
                                                                     len - 4, to, size, nullptr)) {
                    corrupt(who, e);
                }
                if (to == direct) {
                    return ByteSpan(direct, size);
                }
                break;
            }
            case ZarrBytesCodec::Kind::zstd:
            case ZarrBytesCodec::Kind::zlib:
            case ZarrBytesCodec::Kind::gzip: {
                using W = codec::detail::WholeStream;
                const W f = it->kind == ZarrBytesCodec::Kind::zstd   ? W::zstd
                            : it->kind == ZarrBytesCodec::Kind::zlib ? W::zlib
                                                                     : W::gzip;
                if (last && f == W::zstd && codec::detail::zstd_frame_size(p, len) == want) {
                    if (const char* e = codec::detail::decompress_stream(
                            codec::CompFormat::zstd, p, len, direct, want, nullptr)) {
                        corrupt(who, e);
                    }
                    return ByteSpan(direct, want);
                }
                if (const char* e = codec::detail::decompress_whole(f, p, len, out, limit)) {
                    corrupt(who, e);
                }
                break;
            }
        }
        p = out.data();
        len = out.size();
        next ^= 1;
    }
    return ByteSpan(p, len);
}

/// out = the chunk whose transposition (axis i of `enc` is axis order[i] of the chunk) is
/// `enc`, item by item.
void untranspose(const std::vector<int>& order,
                 const Shape& chunk,
                 std::size_t itemsize,
                 const std::uint8_t* enc,
                 std::uint8_t* out) {
    const std::size_t nd = chunk.size();
    std::int64_t estride[kMaxNdim] = {};  // strides of the encoded chunk, in items
    std::int64_t s = 1;
    for (std::size_t i = nd; i-- > 0;) {
        estride[i] = s;
        s *= chunk[static_cast<std::size_t>(order[i])];
    }
    std::int64_t step[kMaxNdim] = {};  // the encoded stride of each axis of the chunk
    for (std::size_t i = 0; i < nd; ++i) {
        step[order[i]] = estride[i];
    }
    const std::int64_t items = s;
    if (items == 0) {
        return;
    }
    std::int64_t idx[kMaxNdim] = {};
    std::int64_t from = 0;
    const std::int64_t inner = chunk[nd - 1];
    const std::int64_t inner_step = step[nd - 1];
    for (std::int64_t k = 0; k < items; k += inner) {
        if (itemsize == 1) {
            for (std::int64_t j = 0; j < inner; ++j) {
                out[k + j] = enc[from + j * inner_step];
            }
        } else {
            for (std::int64_t j = 0; j < inner; ++j) {
                std::memcpy(out + static_cast<std::size_t>(k + j) * itemsize,
                            enc + static_cast<std::size_t>(from + j * inner_step) * itemsize,
                            itemsize);
            }
        }
        for (std::size_t d = nd - 1; d-- > 0;) {
            from += step[d];
            if (++idx[d] < chunk[d]) {
                break;
            }
            from -= step[d] * chunk[d];
            idx[d] = 0;
        }
    }
}

}  // namespace

void decode_zarr_chunk(const ZarrCodecs& c,
                       const DType& dtype,
                       const Shape& chunk,
                       const std::uint8_t* stored,
                       std::size_t n,
                       std::uint8_t* out,
                       const std::string& where) {
    std::int64_t items = 1;
    for (const std::int64_t e : chunk) {
        items *= e;
    }
    const auto itemsize = static_cast<std::size_t>(dtype.itemsize());
    const std::size_t want = static_cast<std::size_t>(items) * itemsize;
    thread_local std::vector<std::uint8_t> scratch[2];
    const ByteSpan raw = undo_bytes_codecs(c.bytes_codecs, stored, n, want, scratch, where,
                                           c.order.empty() ? out : nullptr);
    if (raw.size() != want) {
        corrupt(where, "the chunk decodes to " + num(static_cast<std::int64_t>(raw.size())) +
                           " bytes; " + to_string(chunk) + " items of " + dtype.str() + " take " +
                           num(static_cast<std::int64_t>(want)));
    }
    if (c.order.empty()) {
        if (raw.data() != out) {
            std::memcpy(out, raw.data(), want);
        }
    } else {
        untranspose(c.order, chunk, itemsize, raw.data(), out);
    }
    if (c.big_endian && itemsize > 1 && dtype.kind() != DType::Kind::void_) {
        DType::make(dtype.kind(), dtype.itemsize(), '>').byteswap(out, items);
    }
}

std::optional<Shape> blosc_block_shape(const ZarrCodecs& c,
                                       const DType& dtype,
                                       const Shape& unit,
                                       ByteSpan head) {
    const auto itemsize = static_cast<std::uint64_t>(dtype.itemsize());
    if (c.sharding || !c.order.empty() || (c.big_endian && itemsize > 1) ||
        c.bytes_codecs.size() != 1 || c.bytes_codecs[0].kind != ZarrBytesCodec::Kind::blosc ||
        head.size() < 16 || itemsize == 0) {
        return std::nullopt;
    }
    std::uint64_t items = 1;
    for (const std::int64_t e : unit) {
        items *= static_cast<std::uint64_t>(std::max<std::int64_t>(e, 1));
    }
    const std::uint64_t nbytes = load_le32(head.data() + 4), blocksize = load_le32(head.data() + 8);
    if (nbytes != items * itemsize || blocksize == 0 || blocksize >= nbytes ||
        nbytes % blocksize != 0 || blocksize % itemsize != 0) {
        return std::nullopt;
    }
    // The block's items, as whole trailing axes and a part of one axis that divides it.
    std::uint64_t left = blocksize / itemsize;
    Shape block(unit.size(), 1);
    for (std::size_t d = unit.size(); d-- > 0;) {
        const auto e = static_cast<std::uint64_t>(unit[d]);
        if (left % e == 0) {
            block[d] = unit[d];
            left /= e;
            continue;
        }
        if (e % left != 0) {
            return std::nullopt;
        }
        block[d] = static_cast<std::int64_t>(left);
        left = 1;
        break;
    }
    if (left != 1) {
        return std::nullopt;
    }
    return block;
}

bool decode_blosc_block(ByteSpan stored,
                        std::int64_t block,
                        std::size_t block_bytes,
                        std::size_t unit_bytes,
                        std::uint8_t* into,
                        const std::string& where) {
    try {
        const codec::ChunkDecoder dec(stored);
        if (static_cast<std::size_t>(dec.nbytes()) != unit_bytes ||
            static_cast<std::size_t>(dec.blocksize()) != block_bytes || block >= dec.nblocks()) {
            return false;
        }
        dec.decode_block(static_cast<std::int32_t>(block), {into, block_bytes});
    } catch (const FormatError& e) {
        rethrow_with_context(e, where + ": blosc codec");
    }
    return true;
}

std::uint64_t shard_index_nbytes(const ZarrSharding& s, std::int64_t inner_chunks) {
    return static_cast<std::uint64_t>(inner_chunks) * 16U + 4U * s.index_codecs.bytes_codecs.size();
}

std::vector<std::uint64_t> decode_shard_index(const ZarrSharding& s,
                                              std::int64_t inner_chunks,
                                              const std::uint8_t* stored,
                                              std::size_t n,
                                              const std::string& where) {
    const std::size_t want = static_cast<std::size_t>(inner_chunks) * 16U;
    std::vector<std::uint8_t> scratch[2];
    const ByteSpan raw =
        undo_bytes_codecs(s.index_codecs.bytes_codecs, stored, n, want, scratch, where + " index");
    if (raw.size() != want) {
        corrupt(where, "the shard index has " + num(static_cast<std::int64_t>(raw.size())) +
                           " bytes, not " + num(static_cast<std::int64_t>(want)));
    }
    std::vector<std::uint64_t> entries(static_cast<std::size_t>(inner_chunks) * 2);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        std::uint64_t v = 0;
        for (int b = 0; b < 8; ++b) {
            const std::uint8_t byte = raw.data()[i * 8 + static_cast<std::size_t>(b)];
            v |= std::uint64_t{byte} << (s.index_codecs.big_endian ? 8 * (7 - b) : 8 * b);
        }
        entries[i] = v;
    }
    return entries;
}

}  // namespace b2nd::bridges
