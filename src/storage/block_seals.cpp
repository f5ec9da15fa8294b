// Table version 2's per-block part (block_seals.hpp; the layout is docs/CHECKSUMS.md).
#include "block_seals.hpp"

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>
#include <b2nd/format/endian.hpp>

#include "../codec/digest.hpp"
#include "../detail/text.hpp"

namespace b2nd::storage::detail {

using b2nd::detail::num;

namespace {

constexpr std::size_t kDigestBytes = 8;

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

}  // namespace

std::size_t sealed_blocks(ByteSpan header) noexcept {
    format::ChunkHeader h;
    return sealable(header, h) ? static_cast<std::size_t>(h.nblocks()) : 0;
}

SealLayout seal_layout(ByteSpan chunk) {
    SealLayout l;
    l.head = chunk.size();
    format::ChunkHeader h;
    if (!sealable(chunk, h) || static_cast<std::size_t>(h.cbytes) > chunk.size()) {
        return l;
    }
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

Seal seal(ByteSpan chunk) {
    const SealLayout l = seal_layout(chunk);
    Seal s;
    s.record.resize(l.blocks.size() * kDigestBytes);
    for (std::size_t i = 0; i < l.blocks.size(); ++i) {
        const auto [b, e] = l.blocks[i];
        format::store_le<std::uint64_t>(s.record.data() + i * kDigestBytes,
                                        codec::detail::digest64(chunk.data() + b, e - b));
    }
    s.digest = sealed_digest(chunk, l, {s.record.data(), s.record.size()});
    return s;
}

std::unique_ptr<ChunkSeal> ChunkSeal::open(
    ByteSpan chunk, ByteSpan record, std::uint64_t expected, bool remember, std::string& why) {
    auto s = std::make_unique<ChunkSeal>();
    s->layout_ = seal_layout(chunk);
    const std::size_t n = s->layout_.blocks.size();
    if (record.size() != n * kDigestBytes) {
        why = "its block digests (" + num(static_cast<std::int64_t>(n * kDigestBytes)) +
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

std::string block_mismatch(std::size_t block, std::size_t nbytes) {
    return "block " + num(static_cast<std::int64_t>(block)) + ": its " +
           num(static_cast<std::int64_t>(nbytes)) +
           " stored bytes do not match their checksum (the file is corrupted, or another "
           "program changed it in place)";
}

}  // namespace b2nd::storage::detail
