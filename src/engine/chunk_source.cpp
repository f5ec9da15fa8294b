#include "chunk_source.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include <b2nd/codec/registry.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/mapped_file.hpp>

#include "../detail/memory.hpp"
#include "../detail/text.hpp"
#include "../detail/thread_pool.hpp"
#include "../storage/frame_internal.hpp"
#include "../values/params_detail.hpp"

namespace b2nd::detail {

namespace {

thread_local LeasePool<Scratch> tl_blocks;  // decoded blocks nobody caches

/// Offsets of chunk header fields that the grid checks (README_CHUNK_FORMAT).
constexpr std::uint64_t kNbytesField = 4;
constexpr std::uint64_t kBlocksizeField = 8;

}  // namespace

ChunkSource::ChunkSource(storage::Frame frame, Grid grid, bool plain, std::size_t cache_bytes)
    : frame_(std::move(frame)), grid_(std::move(grid)), plain_(plain), cache_(cache_bytes) {
    encode_params_ = encode_params_of(frame_.header(), grid_);
    write_refusal_ = codec::check_encode_params(encode_params_);
    // Lossy plugins that see whole blocks get edge-replicated padding (make_chunk).
    const auto lossy_geometry = [](const auto* plugin) {
        return plugin != nullptr && plugin->lossy && plugin->needs_geometry;
    };
    replicate_edges_ =
        lossy_geometry(codec::find_codec_plugin(static_cast<std::uint8_t>(encode_params_.codec)));
    for (const codec::FilterSlot& f : encode_params_.filters) {
        replicate_edges_ =
            replicate_edges_ ||
            lossy_geometry(codec::find_filter_plugin(static_cast<std::uint8_t>(f.id)));
    }
    replicate_edges_ = replicate_edges_ && !plain_;
}

std::string ChunkSource::where() const {
    return quoted_path(frame_.name());
}

CachePolicy ChunkSource::cache_policy(std::int64_t nblocks, CacheUse use) const noexcept {
    CachePolicy p;
    p.lookups = cache_.budget() > 0;
    p.inserts =
        p.lookups && use != CacheUse::never &&
        (use == CacheUse::always ||
         static_cast<std::uint64_t>(nblocks) * static_cast<std::uint64_t>(grid_.block_nbytes()) <=
             cache_.budget() / 4);
    p.second_touch = use == CacheUse::automatic;
    return p;
}

std::int64_t ChunkSource::chunk_nbytes(std::int64_t ci) const {
    return plain_ ? grid_.chunk_extent(0, ci) * grid_.itemsize() : grid_.chunk_nbytes();
}

void ChunkSource::rethrow(const LoadedChunk& c, const FormatError& e) const {
    rethrow_with_context(e, frame_.chunk_context(c.index_, c.stored_),
                         c.stored_.index_only() ? 0 : c.stored_.offset);
}

void ChunkSource::mismatch(const LoadedChunk& c,
                           const std::string& what,
                           std::optional<std::uint64_t> field) const {
    const std::string msg = frame_.chunk_context(c.index_, c.stored_) + ": " + what;
    if (field) {
        throw FormatError(msg, c.stored_.offset + *field);
    }
    throw FormatError(msg);
}

LoadedChunk ChunkSource::load(std::int64_t ci,
                              bool need_block0,
                              const CachePolicy& policy,
                              const std::vector<std::int32_t>* blocks) const {
    if (!salvage_) {
        return load_chunk(ci, need_block0, policy, blocks);
    }
    try {
        LoadedChunk c = load_chunk(ci, need_block0, policy, blocks);
        if (c.kind_ == LoadedChunk::Kind::encoded) {
            // Every block must decode, or the chunk is salvaged whole: reads of it never fail.
            thread_local std::vector<std::uint8_t> all;
            all.resize(static_cast<std::size_t>(c.decoder_->nbytes()));
            try {
                c.decoder_->decode({all.data(), all.size()}, 1);
            } catch (const FormatError& e) {
                rethrow(c, e);
            }
        }
        return c;
    } catch (const Error& e) {
        {
            std::lock_guard<std::mutex> lock(salvaged_mutex_);
            salvaged_.emplace(ci, e.what());
        }
        LoadedChunk z;
        z.index_ = ci;
        z.kind_ = LoadedChunk::Kind::uniform;
        z.element_.assign(static_cast<std::size_t>(grid_.itemsize()), 0);
        return z;
    }
}

void ChunkSource::make_block(std::int64_t ci, std::int64_t block, std::uint8_t* into) const {
    if (!salvage_) {
        origin_->make_block(ci, block, into);
        return;
    }
    try {
        origin_->make_block(ci, block, into);
    } catch (const Error& e) {
        // A block its origin cannot make (a Zarr chunk or HDF5 chunk that does not decode):
        // zeros, and the chunk named, as for a stored chunk.
        {
            std::lock_guard<std::mutex> lock(salvaged_mutex_);
            salvaged_.emplace(ci, e.what());
        }
        std::memset(into, 0, static_cast<std::size_t>(grid_.block_nbytes()));
    }
}

std::vector<std::string> ChunkSource::salvaged() const {
    std::lock_guard<std::mutex> lock(salvaged_mutex_);
    std::vector<std::string> out;
    for (const auto& [ci, why] : salvaged_) {
        out.push_back(why);
    }
    return out;
}

LoadedChunk ChunkSource::load_chunk(std::int64_t ci,
                                    bool need_block0,
                                    const CachePolicy& policy,
                                    const std::vector<std::int32_t>* blocks) const {
    LoadedChunk c;
    c.index_ = ci;
    if (origin_) {
        if (origin_->computes()) {
            c.kind_ = LoadedChunk::Kind::computed;
            return c;
        }
        origin_->require(ci, BlockOrigin::kAnyBlock);
    }
    std::optional<storage::StoredChunk> held;
    if (remote_cache_) {
        held = remote_cache_->cached(ci, blocks);
    }
    if (held) {
        c.stored_ = std::move(*held);  // no request
    } else {
        c.stored_ = blocks != nullptr ? storage::FrameInternal::chunk_blocks(frame_, ci, *blocks)
                                      : storage::FrameInternal::chunk_to_decode(frame_, ci);
        if (remote_cache_) {
            check_blocks(c, blocks);  // what is kept was checked
            remote_cache_->store(ci, c.stored_, blocks);
        }
    }
    const std::int64_t isz = grid_.itemsize();
    const std::int64_t expected = chunk_nbytes(ci);
    if (c.stored_.index_only()) {
        if (c.stored_.nbytes != expected) {
            mismatch(c,
                     "special chunk of " + num(c.stored_.nbytes) +
                         " bytes; this array's chunks hold " + num(expected),
                     std::nullopt);
        }
        try {
            c.element_ = codec::special_element(c.stored_.special, isz);
        } catch (const FormatError& e) {
            rethrow(c, e);
        }
        return c;
    }
    try {
        // ZFP, NDCELL and NDMEAN take their geometry from the array (FORMAT-NOTES.md).
        static const Shape kNone;
        c.decoder_.emplace(c.stored_.bytes, plain_ ? kNone : grid_.block_shape());
        c.decoder_->set_block_check(c.stored_.check.get());
    } catch (const FormatError& e) {
        rethrow(c, e);
    }
    const codec::ChunkDecoder& dec = *c.decoder_;
    if (dec.nbytes() != expected) {
        mismatch(c,
                 "holds " + num(dec.nbytes()) + " bytes; this array's chunks hold " + num(expected),
                 kNbytesField);
    }
    // Memcpyed data is laid out in blocks too: its block size must be the grid's.
    if (dec.special() == codec::Special::none && !plain_ &&
        (dec.header().vl_blocks() || dec.blocksize() != grid_.block_nbytes())) {
        mismatch(c,
                 "has blocks of " + num(dec.blocksize()) + " bytes; blocks of shape " +
                     to_string(grid_.block_shape()) + " hold " + num(grid_.block_nbytes()),
                 kBlocksizeField);
    }
    try {
        if (dec.special() != codec::Special::none) {
            c.kind_ = LoadedChunk::Kind::uniform;
            c.element_.resize(static_cast<std::size_t>(isz));
            dec.decode_range(0, {c.element_.data(), c.element_.size()});
        } else if (dec.memcpyed()) {
            c.kind_ = LoadedChunk::Kind::raw;
            c.raw_ = dec.memcpyed_data().data();
        } else {
            c.kind_ = LoadedChunk::Kind::encoded;
            if (need_block0 && !plain_ && dec.needs_block0() && dec.nblocks() > 1) {
                const std::uint64_t key = grid_.block_key(ci, 0);
                c.block0_ = policy.lookups ? cache_.find(key) : nullptr;
                if (!c.block0_) {
                    auto buf = std::make_shared<std::vector<std::uint8_t>>(
                        static_cast<std::size_t>(grid_.block_nbytes()));
                    dec.decode_block(0, {buf->data(), buf->size()});
                    if (policy.inserts) {
                        cache_.insert(key, buf);
                    }
                    c.block0_ = std::move(buf);
                }
            }
        }
    } catch (const FormatError& e) {
        rethrow(c, e);
    }
    return c;
}

void ChunkSource::decode_block_into(const LoadedChunk& c,
                                    std::int64_t block,
                                    std::uint8_t* into,
                                    std::size_t need) const {
    if (c.kind_ == LoadedChunk::Kind::computed) {
        make_block(c.index_, block, into);
        return;
    }
    const codec::ChunkDecoder& dec = *c.decoder_;
    try {
        if (plain_) {
            dec.decode({into, static_cast<std::size_t>(dec.nbytes())}, 1);
        } else {
            dec.decode_block_prefix(static_cast<std::int32_t>(block),
                                    {into, static_cast<std::size_t>(grid_.block_nbytes())}, need,
                                    c.block0_ ? c.block0_->data() : nullptr);
        }
    } catch (const FormatError& e) {
        rethrow(c, e);
    }
}

bool ChunkSource::decode_rows(const LoadedChunk& c,
                              std::int64_t block,
                              const StridedBox& box,
                              std::uint8_t* dst) const {
    // The box must be the whole block, step 1, its rows contiguous in the destination.
    const int nd = grid_.ndim();
    const std::int64_t isz = grid_.itemsize();
    if (c.kind_ == LoadedChunk::Kind::computed || box.ndim != nd || nd == 0 ||
        box.dst_stride[nd - 1] != isz) {
        return false;
    }
    std::int64_t stride = isz;
    for (int d = nd - 1; d >= 0; --d) {
        const std::int64_t bs = grid_.block_shape()[static_cast<std::size_t>(d)];
        if (box.extent[d] != bs || (bs > 1 && box.src_stride[d] != stride)) {
            return false;
        }
        stride *= bs;
    }
    // Offsets of the rows in the destination, in block order: the same for every block of a
    // read, so kept per thread for the last extents and strides.
    thread_local std::vector<std::ptrdiff_t> offsets;
    thread_local StridedBox offsets_of;  // the box `offsets` was made for (src strides unused)
    const auto nrows = static_cast<std::size_t>(grid_.block_items() / box.extent[nd - 1]);
    bool same = offsets.size() == nrows && offsets_of.ndim == nd;
    for (int d = 0; d < nd && same; ++d) {
        same =
            offsets_of.extent[d] == box.extent[d] && offsets_of.dst_stride[d] == box.dst_stride[d];
    }
    if (!same) {
        offsets.resize(nrows);
        std::int64_t idx[kMaxNdim] = {};
        std::int64_t off = 0;
        for (std::size_t r = 0; r < nrows; ++r) {
            offsets[r] = static_cast<std::ptrdiff_t>(off);
            for (int d = nd - 2; d >= 0; --d) {
                off += box.dst_stride[d];
                if (++idx[d] < box.extent[d]) {
                    break;
                }
                off -= box.dst_stride[d] * box.extent[d];
                idx[d] = 0;
            }
        }
        offsets_of = box;
    }
    codec::ChunkDecoder::Rows rows;
    rows.row_bytes = static_cast<std::size_t>(box.extent[nd - 1] * isz);
    rows.nrows = nrows;
    rows.offsets = offsets.data();
    try {
        c.decoder_->decode_block_rows(static_cast<std::int32_t>(block), dst, rows,
                                      c.block0_ ? c.block0_->data() : nullptr);
    } catch (const FormatError& e) {
        rethrow(c, e);
    }
    return true;
}

BlockView ChunkSource::view_block(const LoadedChunk& c,
                                  std::int64_t block,
                                  const CachePolicy& policy,
                                  std::size_t need) const {
    const std::int64_t isz = grid_.itemsize();
    if (origin_) {
        origin_->require(c.index_, block);
    }
    BlockView v;
    switch (c.kind_) {
        case LoadedChunk::Kind::uniform:
            v.data = c.element_.data();
            return v;
        case LoadedChunk::Kind::raw:
            check_raw_block(c, block);
            v.data = c.raw_ + block * grid_.block_nbytes();
            v.stride = isz;
            return v;
        case LoadedChunk::Kind::encoded:
        case LoadedChunk::Kind::computed:
            break;
    }
    BlockCache::Buffer hold = cached(c, block, policy);
    const bool insert = !hold && admits(c, block, policy, need);
    return decoded_view(c, block, insert, std::move(hold), need);
}

bool ChunkSource::admits(const LoadedChunk& c,
                         std::int64_t block,
                         const CachePolicy& policy,
                         std::size_t need) const {
    if (!policy.inserts) {
        return false;
    }
    const auto bytes = static_cast<std::size_t>(grid_.block_nbytes());
    // (Computed blocks of an origin that decodes are made whole either way: a first touch
    // makes one into this thread's scratch instead of new cache memory.)
    const bool partial =
        policy.second_touch &&
        ((c.kind_ == LoadedChunk::Kind::encoded && !plain_ && c.decoder_->decodes_prefix() &&
          need <= bytes / 2) ||
         (c.kind_ == LoadedChunk::Kind::computed && origin_ && origin_->decodes()));
    return !partial || cache_.admit(grid_.block_key(c.index_, block), bytes);
}

BlockCache::Buffer ChunkSource::cached(const LoadedChunk& c,
                                       std::int64_t block,
                                       const CachePolicy& policy) const {
    if (block == 0 && c.block0_) {
        return c.block0_;
    }
    return policy.lookups ? cache_.find(grid_.block_key(c.index_, block)) : nullptr;
}

BlockView ChunkSource::decoded_view(const LoadedChunk& c,
                                    std::int64_t block,
                                    bool insert,
                                    BlockCache::Buffer hold,
                                    std::size_t need) const {
    BlockView v;
    v.stride = grid_.itemsize();
    if (hold) {
        v.data = hold->data();
        v.hold = std::move(hold);
        return v;
    }
    const auto size = static_cast<std::size_t>(plain_ && c.decoder_ ? c.decoder_->nbytes()
                                                                    : grid_.block_nbytes());
    if (insert) {
        auto buf = std::make_shared<std::vector<std::uint8_t>>(size);
        decode_block_into(c, block, buf->data());
        cache_.insert(grid_.block_key(c.index_, block), buf);
        v.data = buf->data();
        v.hold = std::move(buf);
        return v;
    }
    // Leased before decoding: a nested read on this thread (make_block) takes another buffer.
    std::shared_ptr<Scratch> buf = lease_bytes(tl_blocks, size);
    decode_block_into(c, block, buf->data(), need);
    v.data = buf->data();
    v.hold = std::move(buf);
    return v;
}

void ChunkSource::copy_block(const LoadedChunk& c,
                             std::int64_t block,
                             const StridedBox& box,
                             std::int64_t first,
                             std::uint8_t* dst,
                             bool lands_whole,
                             const CachePolicy& policy,
                             bool stream,
                             const ElementPart& part) const {
    const std::int64_t isz = grid_.itemsize();
    const std::int64_t eb = part.whole() ? isz : part.width;  // bytes copied per element
    if (origin_) {
        origin_->require(c.index_, block);
    }
    switch (c.kind_) {
        case LoadedChunk::Kind::uniform:
            fill_strided(box, dst, c.element_.data() + part.offset, eb, stream);
            return;
        case LoadedChunk::Kind::raw:
            check_raw_block(c, block);
            copy_strided(box, c.raw_ + block * grid_.block_nbytes() + first * isz + part.offset,
                         dst, eb, stream);
            return;
        case LoadedChunk::Kind::encoded:
        case LoadedChunk::Kind::computed:
            break;
    }
    // Only the bytes up to the box's last element are needed (streams that can stop early stop
    // there: a plane near the block's start costs a fraction of the block).
    std::int64_t last = first * isz;
    bool forward = true;
    for (int d = 0; d < box.ndim; ++d) {
        forward = forward && box.src_stride[d] >= 0;
        last += (box.extent[d] - 1) * box.src_stride[d];
    }
    const std::size_t need = forward ? static_cast<std::size_t>(last + isz) : SIZE_MAX;
    BlockCache::Buffer hold = cached(c, block, policy);
    const bool insert = !hold && admits(c, block, policy, need);
    if (part.whole() && !hold && lands_whole && !insert && !plain_) {
        decode_block_into(c, block, dst);  // straight into the destination
        return;
    }
    if (part.whole() && !hold && !insert && !plain_ && first == 0 &&
        decode_rows(c, block, box, dst)) {
        return;
    }
    const BlockView v = decoded_view(c, block, insert, std::move(hold), need);
    copy_strided(box, v.at(first) + part.offset, dst, eb, stream);
}

void ChunkSource::fetch(std::vector<storage::ChunkBlocks> wants) const {
    if (remote_cache_) {
        remote_cache_->drop_cached(wants);
    }
    storage::FrameInternal::fetch(frame_, wants);
}

std::pair<storage::StoredChunk, bool> ChunkSource::stored_checked(std::int64_t ci) const {
    if (origin_ && !origin_->computes()) {
        origin_->require(ci, BlockOrigin::kWholeChunk);
    }
    const LoadedChunk c = load(ci, false, {});
    if (c.decoder_) {
        check_blocks_of(c, 0, c.decoder_->nblocks() - 1);  // copied as stored: checked whole
    }
    return {c.stored_, c.kind_ == LoadedChunk::Kind::uniform};
}

void ChunkSource::check_blocks_of(const LoadedChunk& c,
                                  std::int64_t first,
                                  std::int64_t last) const {
    if (!c.stored_.check) {
        return;
    }
    try {
        for (std::int64_t b = first; b <= last; ++b) {
            c.stored_.check->check_block(static_cast<std::int32_t>(b));
        }
    } catch (const FormatError& e) {
        rethrow(c, e);
    }
}

void ChunkSource::check_raw_block(const LoadedChunk& c, std::int64_t block) const {
    // A plain frame's chunk is one block of the grid, however many blocks it is stored as.
    if (plain_) {
        check_blocks_of(c, 0, c.decoder_->nblocks() - 1);
    } else {
        check_blocks_of(c, block, block);
    }
}

void ChunkSource::check_blocks(const LoadedChunk& c,
                               const std::vector<std::int32_t>* blocks) const {
    if (!c.stored_.check) {
        return;
    }
    const format::ChunkHeader h = format::read_chunk_header(c.stored_.bytes, false);
    if (blocks == nullptr || !c.stored_.partial) {
        check_blocks_of(c, 0, h.nblocks() - 1);
        return;
    }
    for (const std::int32_t b : *blocks) {
        check_blocks_of(c, b, b);
    }
    // With DELTA, block 0 came too (the others' reference), and is kept with them.
    if (std::find(h.filters.begin(), h.filters.end(),
                  static_cast<std::uint8_t>(codec::Filter::delta)) != h.filters.end()) {
        check_blocks_of(c, 0, 0);
    }
}

void ChunkSource::decode_chunk(std::int64_t ci, std::uint8_t* buf, int threads) const {
    if (origin_ && !origin_->computes()) {
        origin_->require(ci, BlockOrigin::kWholeChunk);
    }
    const LoadedChunk c = load(ci, false, {});
    const std::int64_t n = grid_.chunk_nbytes();
    switch (c.kind_) {
        case LoadedChunk::Kind::computed: {
            const std::int64_t bn = grid_.block_nbytes();
            parallel_for(static_cast<std::size_t>(n / bn), threads, [&](std::size_t b) {
                make_block(ci, static_cast<std::int64_t>(b),
                           buf + static_cast<std::int64_t>(b) * bn);
            });
            return;
        }
        case LoadedChunk::Kind::uniform:
            fill_elements(buf, static_cast<std::size_t>(n), c.element_.data(), grid_.itemsize());
            return;
        case LoadedChunk::Kind::raw:
            check_blocks_of(c, 0, c.decoder_->nblocks() - 1);
            copy_bytes(buf, c.raw_, static_cast<std::size_t>(n));
            return;
        case LoadedChunk::Kind::encoded:
            try {
                c.decoder_->decode({buf, static_cast<std::size_t>(n)}, threads);
            } catch (const FormatError& e) {
                rethrow(c, e);
            }
            return;
    }
}

void ChunkSource::forget(std::int64_t ci) {
    cache_.erase_range(grid_.block_key(ci, 0), static_cast<std::uint64_t>(grid_.nblocks()));
}

void ChunkSource::set_grid(Grid g) {
    grid_ = std::move(g);
    cache_.clear();
}

}  // namespace b2nd::detail
