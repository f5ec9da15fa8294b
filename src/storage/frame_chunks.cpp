// A frame's chunks as stored (frame_impl.hpp): an index entry resolved to the chunk's bytes by
// the frame kind (in the mapping, in a chunk file, or fetched), its structure checked, and its
// checksum on first use.
#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>
#include <b2nd/format/endian.hpp>

#include "../detail/text.hpp"
#include "block_seals.hpp"
#include "frame_impl.hpp"

namespace b2nd::storage {

using b2nd::detail::num;

std::int32_t Frame::Impl::special_nbytes(std::int64_t i) const {
    const std::int32_t cs = header.chunksize;
    if (cs <= 0) {
        throw FormatError(where() + ": chunk " + num(i) +
                          " is an index-only special chunk in a frame without a fixed chunk size");
    }
    const auto n = static_cast<std::int64_t>(index.size());
    if (i == n - 1 && header.nbytes % cs != 0) {
        return static_cast<std::int32_t>(header.nbytes % cs);
    }
    return cs;
}

StoredChunk Frame::Impl::chunk_unlocked(std::int64_t i,
                                        const std::vector<std::int32_t>* blocks) const {
    const auto n = static_cast<std::int64_t>(index.size());
    if (i < 0 || i >= n) {
        throw UsageError(where() + ": chunk " + num(i) + " out of range (" + num(n) + " chunks)");
    }
    const std::int64_t entry = index[static_cast<std::size_t>(i)];
    StoredChunk c;
    try {
        c.special = special_of(entry, i);
    } catch (const FormatError& e) {
        rethrow_with_context(e, where(), base + static_cast<std::uint64_t>(index_pos));
    }
    if (c.special != codec::Special::none) {
        c.nbytes = special_nbytes(i);
        return c;
    }
    std::uint64_t region_base = 0;  // where the chunk must lie, and where that is in its file
    const ByteSpan region = chunk_region(i, entry, blocks, c, region_base);
    if (region.size() < static_cast<std::size_t>(format::kChunkMinHeaderSize)) {
        throw FormatError(chunk_context(i, c.file) + " is truncated (" +
                              num(static_cast<std::int64_t>(region.size())) + " bytes)",
                          region_base);
    }
    const std::int32_t cbytes = format::load_le<std::int32_t>(region.data() + 12);
    const std::int32_t nbytes = format::load_le<std::int32_t>(region.data() + 4);
    if (cbytes < format::kChunkMinHeaderSize || static_cast<std::size_t>(cbytes) > region.size() ||
        nbytes < 0) {
        throw FormatError(chunk_context(i, c.file) + " claims " + num(cbytes) +
                              " bytes, but only " + num(static_cast<std::int64_t>(region.size())) +
                              " remain",
                          region_base + 12);
    }
    c.bytes = region.first(static_cast<std::size_t>(cbytes));
    if (checks.has_records()) {
        // The block digests after the chunk (what the region holds of them: a short record is
        // a mismatch when the chunk is checked).
        const std::size_t rest = region.size() - c.bytes.size();
        c.record = region.subspan(c.bytes.size(),
                                  std::min(rest, detail::record_size(c.bytes, checks.version())));
    }
    c.nbytes = nbytes;
    c.offset = region_base;
    return c;
}

StoredChunk Frame::Impl::checked_chunk(std::int64_t i,
                                       const std::vector<std::int32_t>* blocks,
                                       bool whole) const {
    StoredChunk c = chunk_unlocked(i, blocks);
    if (c.index_only() || (c.partial && checks.version() < 2)) {
        return c;  // a version-1 table covers whole chunks: checked once one is fetched whole
    }
    const auto context = [&] { return chunk_context(i, c.file); };
    const auto at = static_cast<std::size_t>(i);
    if (whole && !c.partial) {
        checks.verify(at, c.bytes, c.record, c.offset, context);
    } else {
        c.check = checks.bind(at, c.bytes, c.record, c.offset, context);
    }
    return c;
}

std::int64_t Frame::Impl::sum_over_live(
    const std::function<std::int64_t(const StoredChunk&)>& size) const {
    fetch_all_heads();
    static const std::vector<std::int32_t> kHeadOnly;
    std::int64_t n = 0;
    for (std::size_t i = 0; i < index.size(); ++i) {
        if (index[i] >= 0) {
            n += size(chunk_unlocked(static_cast<std::int64_t>(i), &kHeadOnly));
        }
    }
    return n;
}

std::int64_t Frame::Impl::dead_bytes() const {
    // A sparse frame's cbytes counts its chunks alone, each in its own file.
    return sparse() ? 0 : header.cbytes - sum_over_live(&stored_size);
}

std::int64_t Frame::Impl::record_bytes() const {
    if (sparse() || !checks.has_records()) {
        return 0;
    }
    const int version = checks.version();
    return sum_over_live([version](const StoredChunk& c) {
        return static_cast<std::int64_t>(detail::record_size(c.bytes, version));
    });
}

std::int64_t Frame::Impl::chunk_bytes() const {
    return sparse() ? header.cbytes : sum_over_live([](const StoredChunk& c) {
        return static_cast<std::int64_t>(c.bytes.size());
    });
}

}  // namespace b2nd::storage
