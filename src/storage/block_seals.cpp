// The per-block part of table versions 2 and 3 (block_seals.hpp; the layout is
// docs/CHECKSUMS.md).
#include "block_seals.hpp"

#include <limits>
#include <optional>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/ids.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>
#include <b2nd/format/endian.hpp>

#include "../codec/digest.hpp"
#include "../codec/encoder_detail.hpp"
#include "../detail/text.hpp"

namespace b2nd::storage::detail {

using b2nd::detail::num;

namespace {

constexpr std::size_t kDigestBytes = 8;
/// Version 3: at most this many pieces a block, and none smaller than kPieceMin bytes (a block
/// of fewer than 2 * kPieceMin bytes is checked whole).
constexpr std::size_t kMaxPieces = 32;
constexpr std::size_t kPieceMin = 4096;

/// The header of a chunk whose blocks are sealed one by one, or false.
bool sealable(ByteSpan header, format::ChunkHeader& h) noexcept {
    if (header.size() < static_cast<std::size_t>(format::kChunkExtendedHeaderSize)) {
        return false;
    }
    try {
        h = format::read_chunk_header(header.first(format::kChunkExtendedHeaderSize), false);
    } catch (...) {
        return false;
    }
    if (!h.extended || h.special() != 0 || h.vl_blocks() || h.use_dict() || h.nbytes <= 0 ||
        h.blocksize <= 0) {
        return false;
    }
    const auto n = static_cast<std::int64_t>(h.nblocks());
    const std::int64_t hs = format::kChunkExtendedHeaderSize;
    return h.memcpyed() ? h.cbytes == hs + h.nbytes : hs + 4 * n <= h.cbytes;
}

/// Version 3's pieces a block for a sealable header: for blocks a read may decode in part
/// (memcpyed, or LZ4 or BloscLZ streams with no filter or byte shuffles), and large enough.
std::size_t pieces_of(const format::ChunkHeader& h, int version) noexcept {
    if (version < 3) {
        return 0;
    }
    if (!h.memcpyed()) {
        const auto f = static_cast<codec::CompFormat>(h.comp_format());
        if (f != codec::CompFormat::blosclz && f != codec::CompFormat::lz4) {
            return 0;
        }
        for (const std::uint8_t id : h.filters) {
            if (id != static_cast<std::uint8_t>(codec::Filter::none) &&
                id != static_cast<std::uint8_t>(codec::Filter::shuffle)) {
                return 0;
            }
        }
    }
    const std::size_t k = std::min(kMaxPieces, static_cast<std::size_t>(h.blocksize) / kPieceMin);
    return k >= 2 ? k : 0;
}

/// Digests the pieces of each block of `chunk` into `out` (layout.pieces a block; left 0 for a
/// block that does not decode).
void digest_pieces(ByteSpan chunk, const SealLayout& l, std::uint8_t* out) {
    const bool memcpyed = l.memcpyed;
    std::optional<codec::ChunkDecoder> dec;
    if (!memcpyed) {  // memcpyed: a block's decoded bytes are its stored ones
        try {
            dec.emplace(chunk);
        } catch (const Error&) {
            return;  // a chunk that does not decode: every read of it fails in the decoder
        }
    }
    // A block decodes to at most the chunk's bytes, whatever block size the header declares.
    std::vector<std::uint8_t> scratch(memcpyed ? 0 : std::min(l.blocksize, l.nbytes));
    for (std::size_t i = 0; i < l.blocks.size(); ++i) {
        const std::uint8_t* block = chunk.data() + l.blocks[i].first;
        if (!memcpyed) {
            try {
                dec->decode_block(static_cast<std::int32_t>(i), {scratch.data(), scratch.size()});
            } catch (const Error&) {
                continue;
            }
            block = scratch.data();
        }
        const std::size_t n = l.decoded_bytes(i);
        const std::size_t p = l.piece_bytes(i);
        for (std::size_t j = 0; j < l.pieces; ++j) {
            const std::size_t a = std::min(j * p, n);
            format::store_le<std::uint64_t>(
                out + (i * l.pieces + j) * kDigestBytes,
                codec::detail::digest64(block + a, std::min(a + p, n) - a));
        }
    }
}

}  // namespace

std::size_t sealed_blocks(ByteSpan header) noexcept {
    format::ChunkHeader h;
    return sealable(header, h) ? static_cast<std::size_t>(h.nblocks()) : 0;
}

std::size_t sealed_pieces(ByteSpan header, int version) noexcept {
    format::ChunkHeader h;
    return sealable(header, h) ? pieces_of(h, version) : 0;
}

std::size_t record_size(ByteSpan header, int version) noexcept {
    format::ChunkHeader h;
    if (version < 2 || !sealable(header, h)) {
        return 0;
    }
    return kDigestBytes * static_cast<std::size_t>(h.nblocks()) * (1 + pieces_of(h, version));
}

std::size_t max_record_size(std::size_t nblocks, std::int64_t blocksize, int version) noexcept {
    format::ChunkHeader h;  // memcpyed: pieces wherever the block size allows them
    h.flags = format::chunk_flags::kMemcpyed;
    h.blocksize = static_cast<std::int32_t>(
        std::clamp<std::int64_t>(blocksize, 0, std::numeric_limits<std::int32_t>::max()));
    return version < 2 ? 0 : kDigestBytes * nblocks * (1 + pieces_of(h, version));
}

SealLayout seal_layout(ByteSpan chunk, int version) {
    SealLayout l;
    l.head = chunk.size();
    format::ChunkHeader h;
    if (!sealable(chunk, h) || static_cast<std::size_t>(h.cbytes) > chunk.size()) {
        return l;  // cut short: nothing to locate (seal refuses it)
    }
    l.pieces = pieces_of(h, version);
    l.blocksize = static_cast<std::uint32_t>(h.blocksize);
    l.nbytes = static_cast<std::uint32_t>(h.nbytes);
    l.typesize = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(h.typesize));
    l.memcpyed = h.memcpyed();
    const auto n = static_cast<std::size_t>(h.nblocks());
    const auto cbytes = static_cast<std::uint32_t>(h.cbytes);
    l.head = static_cast<std::size_t>(cbytes);
    if (h.memcpyed()) {
        const auto hs = static_cast<std::uint32_t>(format::kChunkExtendedHeaderSize);
        const auto bs = static_cast<std::uint32_t>(h.blocksize);
        l.head = hs;
        l.blocks.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint32_t b = hs + static_cast<std::uint32_t>(i) * bs;
            l.blocks[i] = {b, std::min(cbytes, b + bs)};
        }
        return l;
    }
    auto ext = codec::block_extents(chunk, h);
    if (!ext) {
        l.blocks.assign(n, {0, 0});  // the head (the whole chunk) covers every byte
        return l;
    }
    for (const auto& e : *ext) {
        l.head = std::min<std::size_t>(l.head, e.first);
    }
    l.blocks = std::move(*ext);
    return l;
}

std::uint64_t sealed_digest(ByteSpan chunk, const SealLayout& layout, ByteSpan record) {
    return codec::detail::digest64(chunk.first(layout.head), record);
}

namespace {

int carried_version(const Frame& frame) {
    const ChecksumReport r = frame.checksums();
    return r.state == ChecksumReport::State::covered ? r.version : 0;
}

}  // namespace

PieceDigests::PieceDigests(const codec::EncodeParams& params,
                           std::int64_t nbytes,
                           const Frame& frame)
    : PieceDigests(params, nbytes, carried_version(frame)) {}

PieceDigests::PieceDigests(const codec::EncodeParams& params, std::int64_t nbytes, int version)
    : watch_([this](std::int32_t i, const std::uint8_t* d, std::size_t n) { give(i, d, n); }) {
    if (version < 3 || nbytes <= 0 || nbytes > std::numeric_limits<std::int32_t>::max() ||
        params.clevel < 0 || params.clevel > 9) {
        return;  // nothing to digest, or parameters encode_chunk refuses
    }
    // The header the encoder writes, as far as the choice of pieces reads it.
    format::ChunkHeader h;
    h.nbytes = static_cast<std::int32_t>(nbytes);
    h.blocksize = codec::effective_blocksize(params, nbytes);
    h.typesize = static_cast<std::uint8_t>(codec::encoder_detail::coded_typesize(params.typesize));
    h.flags =
        static_cast<std::uint8_t>(static_cast<unsigned>(codec::comp_format_of(params.codec)) << 5);
    for (std::size_t i = 0; i < params.filters.size() && i < h.filters.size(); ++i) {
        h.filters[i] = static_cast<std::uint8_t>(params.filters[i].id);
    }
    if (h.blocksize <= 0) {
        return;
    }
    geometry_.pieces = pieces_of(h, version);
    geometry_.blocksize = static_cast<std::uint32_t>(h.blocksize);
    geometry_.nbytes = static_cast<std::uint32_t>(h.nbytes);
    geometry_.typesize = std::max<std::uint32_t>(1, h.typesize);
    if (geometry_.pieces > 0) {
        nblocks_ = static_cast<std::size_t>(h.nblocks());
        digests_.assign(nblocks_ * geometry_.pieces, 0);
        given_.assign(nblocks_, 0);
    }
}

void PieceDigests::give(std::int32_t i, const std::uint8_t* decoded, std::size_t n) noexcept {
    const auto b = static_cast<std::size_t>(i);
    if (i < 0 || b >= nblocks_ || n != geometry_.decoded_bytes(b)) {
        return;
    }
    const std::size_t p = geometry_.piece_bytes(b);
    for (std::size_t j = 0; j < geometry_.pieces; ++j) {
        const std::size_t a = std::min(j * p, n);
        digests_[b * geometry_.pieces + j] =
            codec::detail::digest64(decoded + a, std::min(a + p, n) - a);
    }
    given_[b] = 1;
}

bool PieceDigests::fit(const SealLayout& layout) const noexcept {
    return geometry_.pieces > 0 && layout.pieces == geometry_.pieces &&
           layout.blocksize == geometry_.blocksize && layout.nbytes == geometry_.nbytes &&
           layout.typesize == geometry_.typesize && layout.blocks.size() == nblocks_ &&
           std::all_of(given_.begin(), given_.end(), [](std::uint8_t g) { return g != 0; });
}

Seal seal(ByteSpan chunk, int version, const SealHint& hint) {
    format::ChunkHeader h;
    if (sealable(chunk, h) && static_cast<std::size_t>(h.cbytes) > chunk.size()) {
        // Its record could not have the size its header promises (record_size): refused before
        // it is sealed, as its decoder refuses it. A frame's chunks always hold their cbytes.
        throw FormatError("a chunk of " + num(static_cast<std::int64_t>(chunk.size())) +
                          " bytes whose header says " + num(h.cbytes) +
                          " (cbytes) cannot be sealed");
    }
    const SealLayout l = seal_layout(chunk, version);
    const std::size_t n = l.blocks.size();
    Seal s;
    const std::size_t size = n * (1 + l.pieces) * kDigestBytes;
    if (size > 0 && hint.record.size() == size) {
        s.record.assign(hint.record.begin(), hint.record.end());
    } else {
        s.record.resize(size);
        for (std::size_t i = 0; i < n; ++i) {
            const auto [b, e] = l.blocks[i];
            format::store_le<std::uint64_t>(s.record.data() + i * kDigestBytes,
                                            codec::detail::digest64(chunk.data() + b, e - b));
        }
        std::uint8_t* pieces = s.record.data() + n * kDigestBytes;
        if (l.pieces > 0 && hint.pieces != nullptr && hint.pieces->fit(l)) {
            const std::vector<std::uint64_t>& d = hint.pieces->digests();
            for (std::size_t j = 0; j < d.size(); ++j) {
                format::store_le<std::uint64_t>(pieces + j * kDigestBytes, d[j]);
            }
        } else if (l.pieces > 0) {
            digest_pieces(chunk, l, pieces);
        }
    }
    s.digest = sealed_digest(chunk, l, {s.record.data(), s.record.size()});
    return s;
}

std::unique_ptr<ChunkSeal> ChunkSeal::open(ByteSpan chunk,
                                           ByteSpan record,
                                           int version,
                                           std::uint64_t expected,
                                           bool remember,
                                           std::string& why) {
    auto s = std::make_unique<ChunkSeal>();
    s->layout_ = seal_layout(chunk, version);
    const std::size_t n = s->layout_.blocks.size();
    const std::size_t k = s->layout_.pieces;
    if (record.size() != n * (1 + k) * kDigestBytes) {
        why = "its block digests (" + num(static_cast<std::int64_t>(n * (1 + k) * kDigestBytes)) +
              " bytes after it) are truncated";
        return nullptr;
    }
    if (sealed_digest(chunk, s->layout_, record) != expected) {
        why = "its header, block table or block digests (" +
              num(static_cast<std::int64_t>(s->layout_.head + record.size())) +
              " bytes) do not match their checksum (the file is corrupted, or another program "
              "changed it in place)";
        return nullptr;
    }
    s->digests_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        s->digests_[i] = format::load_le<std::uint64_t>(record.data() + i * kDigestBytes);
    }
    s->pieces_.resize(n * k);
    for (std::size_t j = 0; j < n * k; ++j) {
        s->pieces_[j] = format::load_le<std::uint64_t>(record.data() + (n + j) * kDigestBytes);
    }
    if (remember) {
        s->verified_.reset(new std::atomic<std::uint8_t>[n]());
    }
    return s;
}

bool ChunkSeal::check(std::size_t i, ByteSpan chunk) const {
    if (i >= digests_.size()) {
        return false;
    }
    if (verified_ && verified_[i].load(std::memory_order_acquire) != 0) {
        return true;
    }
    const auto [b, e] = layout_.blocks[i];
    if (e > chunk.size() || codec::detail::digest64(chunk.data() + b, e - b) != digests_[i]) {
        return false;
    }
    if (verified_) {
        verified_[i].store(1, std::memory_order_release);
    }
    return true;
}

std::size_t ChunkSeal::prefix_end(std::size_t i, std::size_t need) const noexcept {
    if (layout_.pieces == 0 || i >= digests_.size() ||
        (verified_ && verified_[i].load(std::memory_order_acquire) != 0)) {
        return 0;
    }
    const std::size_t p = layout_.piece_bytes(i);
    return std::min<std::size_t>(layout_.decoded_bytes(i), (need + p - 1) / p * p);
}

bool ChunkSeal::check_prefix(std::size_t i, const std::uint8_t* decoded, std::size_t end) const {
    if (layout_.pieces == 0 || i >= digests_.size()) {
        return false;
    }
    const std::size_t n = layout_.decoded_bytes(i);
    const std::size_t p = layout_.piece_bytes(i);
    if (end > n || (end % p != 0 && end != n)) {
        return false;  // not a piece boundary: nothing to compare with
    }
    for (std::size_t j = 0; j * p < end; ++j) {
        const std::size_t a = j * p;
        if (codec::detail::digest64(decoded + a, std::min(a + p, end) - a) !=
            pieces_[i * layout_.pieces + j]) {
            return false;
        }
    }
    return true;
}

std::string block_mismatch(std::size_t block, std::size_t nbytes) {
    return "block " + num(static_cast<std::int64_t>(block)) + ": its " +
           num(static_cast<std::int64_t>(nbytes)) +
           " stored bytes do not match their checksum (the file is corrupted, or another "
           "program changed it in place)";
}

std::string prefix_mismatch(std::size_t block, std::size_t end) {
    return "block " + num(static_cast<std::int64_t>(block)) + ": its first " +
           num(static_cast<std::int64_t>(end)) +
           " decoded bytes do not match their checksums (the file is corrupted, or another "
           "program changed it in place)";
}

}  // namespace b2nd::storage::detail
