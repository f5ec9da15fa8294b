// ChunkSource's writing half (chunk_source.hpp): chunks encoded and staged in the frame,
// uniform chunks as special ones, lossy plugins' edge padding.
#include <algorithm>
#include <cstring>

#include <b2nd/codec/registry.hpp>
#include <b2nd/error.hpp>

#include "../detail/memory.hpp"
#include "../detail/text.hpp"
#include "../detail/thread_pool.hpp"
#include "../values/params_detail.hpp"
#include "chunk_source.hpp"

namespace b2nd::detail {

namespace {

thread_local Scratch tl_encode;  // an encoded chunk on its way to the frame

}  // namespace

void ChunkSource::replicate_edges(std::int64_t ci, std::int32_t i, std::uint8_t* dest) const {
    const Grid& g = grid_;
    const int nd = g.ndim();
    std::int64_t cc[kMaxNdim], valid[kMaxNdim], bshape[kMaxNdim];
    g.chunk_coords(ci, cc);
    // Block i's coordinates in the chunk's block grid (C order), and its valid extents.
    std::int64_t rest = i;
    for (int d = nd - 1; d >= 0; --d) {
        const auto u = static_cast<std::size_t>(d);
        bshape[d] = g.block_shape()[u];
        const std::int64_t per = (g.chunk_shape()[u] + bshape[d] - 1) / bshape[d];
        const std::int64_t bc = rest % per;
        rest /= per;
        valid[d] =
            std::clamp<std::int64_t>(g.chunk_extent(d, cc[d]) - bc * bshape[d], 0, bshape[d]);
        if (valid[d] == 0) {
            return;  // wholly padding: never read back
        }
    }
    bool full = true;
    for (int d = 0; d < nd; ++d) {
        full = full && valid[d] == bshape[d];
    }
    if (full || nd == 0) {
        return;
    }
    const auto isz = static_cast<std::size_t>(g.itemsize());
    std::int64_t idx[kMaxNdim] = {};
    const std::int64_t items = g.block_items();
    for (std::int64_t k = 0; k < items; ++k) {
        bool pad = false;
        std::int64_t src = 0;
        for (int d = 0; d < nd; ++d) {
            pad = pad || idx[d] >= valid[d];
            src = src * bshape[d] + std::min(idx[d], valid[d] - 1);
        }
        if (pad) {
            std::memcpy(dest + static_cast<std::size_t>(k) * isz,
                        dest + static_cast<std::size_t>(src) * isz, isz);
        }
        for (int d = nd - 1; d >= 0; --d) {
            if (++idx[d] < bshape[d]) {
                break;
            }
            idx[d] = 0;
        }
    }
}

namespace {

/// Whether the n bytes at p repeat the element `e` of `isz` bytes.
bool repeats(const std::uint8_t* p, std::size_t n, const std::uint8_t* e, std::size_t isz) {
    for (std::size_t off = 0; off + isz <= n; off += isz) {
        if (std::memcmp(p + off, e, isz) != 0) {
            return false;
        }
    }
    return true;
}

}  // namespace

BlockCache::Buffer ChunkSource::cached_block(const Grid::Location& loc) const {
    return cache_.budget() > 0 ? cache_.find(grid_.block_key(loc.chunk, loc.block)) : nullptr;
}

std::optional<storage::StagedChunk> ChunkSource::stage_uniform(const Grid& g,
                                                               const std::uint8_t* e,
                                                               const ChunkSink& sink) const {
    const std::int64_t isz = g.itemsize();
    bool zero = true;
    for (std::int64_t i = 0; i < isz && zero; ++i) {
        zero = e[i] == 0;
    }
    if (zero) {
        const std::vector<std::uint8_t> z = zeros_chunk(g);
        return sink({z.data(), z.size()}, {});
    }
    if (isz <= 255) {  // c-blosc2's limit on a repeated value
        const std::vector<std::uint8_t> r = codec::make_repeated_chunk(
            static_cast<std::int32_t>(g.chunk_nbytes()), {e, static_cast<std::size_t>(isz)},
            static_cast<std::int32_t>(g.block_nbytes()));
        return sink({r.data(), r.size()}, {});
    }
    return std::nullopt;
}

storage::StagedChunk ChunkSource::stage_encoded(const Grid& g,
                                                const std::uint8_t* buf,
                                                const codec::BlockFill* fill,
                                                const std::atomic<bool>* uniform,
                                                const std::uint8_t* first,
                                                int threads,
                                                std::int64_t ci,
                                                const ChunkSink& sink,
                                                MutableByteSpan into) const {
    const std::int64_t n = g.chunk_nbytes();
    codec::BlockFill edged;
    if (replicate_edges_ && ci >= 0 && g.chunk_padded(ci)) {  // (ci >= 0: g is the source's)
        const std::size_t bs = static_cast<std::size_t>(g.block_nbytes());
        edged = [this, buf, fill, ci, bs](std::int32_t i, std::uint8_t* dest, std::size_t len) {
            if (fill != nullptr) {
                (*fill)(i, dest, len);
            } else {
                std::memcpy(dest, buf + static_cast<std::size_t>(i) * bs, len);
            }
            replicate_edges(ci, i, dest);
        };
        fill = &edged;
    }
    codec::EncodeParams p = encode_params_;
    p.nthreads = threads;
    // The digests of the blocks' pieces a version-3 table keeps, taken from the blocks as the
    // encoder reads them (in the cache), instead of decoding the chunk to seal it.
    storage::detail::PieceDigests pieces(p, n, frame_);
    // Encoded into `into`, or reused scratch: fresh chunk-sized buffers would cost page faults
    // per chunk.
    const auto cap = codec::max_encoded_size(static_cast<std::size_t>(n));
    const bool own = into.size() >= cap;
    const MutableByteSpan dest = own ? into : MutableByteSpan{scratch_bytes(tl_encode, cap), cap};
    std::size_t used = 0;
    try {
        used = fill != nullptr ? codec::encode_chunk(n, *fill, p, dest, pieces.watch())
                               : codec::encode_chunk({buf, static_cast<std::size_t>(n)}, p, dest,
                                                     pieces.watch());
    } catch (const codec::ItemError& e) {
        throw_item_error(e, g, ci, frame_.name());
    }
    if (uniform != nullptr && uniform->load()) {
        if (auto s = stage_uniform(g, first, sink)) {
            return *s;
        }
    }
    storage::detail::SealHint hint;
    hint.pieces = &pieces;
    const storage::StagedChunk staged = sink({dest.data(), used}, hint);
    if (!own) {
        release_if_large(tl_encode);
    }
    return staged;
}

void throw_item_error(const codec::ItemError& e,
                      const Grid& g,
                      std::int64_t chunk,
                      const std::string& name) {
    if (chunk < 0 || e.block() < 0) {
        throw UsageError(quoted_path(name) + ": " + e.what());
    }
    const Shape at = g.position({chunk, e.block(), e.item()});
    throw UsageError(quoted_path(name) + ": the element at " + to_string(at) + ": " + e.what());
}

storage::StagedChunk ChunkSource::make_chunk(const std::uint8_t* buf,
                                             int threads,
                                             std::int64_t ci,
                                             const ChunkSink& sink) const {
    return make_chunk_in(grid_, buf, threads, ci, sink);
}

storage::StagedChunk ChunkSource::make_chunk_of(const Grid& g,
                                                const std::uint8_t* buf,
                                                int threads,
                                                const ChunkSink& sink,
                                                MutableByteSpan into) const {
    return make_chunk_in(g, buf, threads, -1, sink, into);
}

storage::StagedChunk ChunkSource::make_chunk_in(const Grid& g,
                                                const std::uint8_t* buf,
                                                int threads,
                                                std::int64_t ci,
                                                const ChunkSink& sink,
                                                MutableByteSpan into) const {
    const std::int64_t n = g.chunk_nbytes();
    const auto isz = static_cast<std::size_t>(g.itemsize());
    if (n >= g.itemsize() && repeats(buf, static_cast<std::size_t>(n), buf, isz)) {
        if (auto s = stage_uniform(g, buf, sink)) {
            return *s;
        }
    }
    return stage_encoded(g, buf, nullptr, nullptr, nullptr, threads, ci, sink, into);
}

storage::StagedChunk ChunkSource::make_chunk_by_blocks(const codec::BlockFill& fill,
                                                       const std::uint8_t* first,
                                                       int threads,
                                                       std::int64_t ci,
                                                       const ChunkSink& sink) const {
    const auto isz = static_cast<std::size_t>(grid_.itemsize());
    // Whether every block seen so far repeats the first element: checked as the encoder asks
    // for blocks (a check that stops at the first differing element once one is found).
    std::atomic<bool> uniform{true};
    const codec::BlockFill checked = [&](std::int32_t i, std::uint8_t* dest, std::size_t n) {
        fill(i, dest, n);
        if (uniform.load(std::memory_order_relaxed) && !repeats(dest, n, first, isz)) {
            uniform.store(false, std::memory_order_relaxed);
        }
    };
    return stage_encoded(grid_, nullptr, &checked, &uniform, first, threads, ci, sink);
}

std::vector<std::uint8_t> ChunkSource::zeros_chunk(const Grid& g) const {
    return codec::make_zeros_chunk(static_cast<std::int32_t>(g.chunk_nbytes()),
                                   chunk_typesize(g.itemsize()),
                                   static_cast<std::int32_t>(g.block_nbytes()));
}

}  // namespace b2nd::detail
