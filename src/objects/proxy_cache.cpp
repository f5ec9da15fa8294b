// The persistent cache of an array read over HTTP (engine/remote_cache.hpp), kept in
// python-blosc2's Proxy layout (proxy_layout.hpp): the remote array's shape, chunks, blocks and
// metalayers plus a `proxy-source` metalayer, one chunk per remote chunk, and in its vlmeta the
// bitmap of the blocks it holds and the `proxy-stamp` of the remote file. A chunk fetched whole
// is stored as it came; a chunk of which some blocks were fetched is stored spliced, as python
// does: its blocks where fetched, streams of length zero (zeros) elsewhere, so that any reader
// decodes it, and only the bitmap says which blocks are real.
//
// Fetched chunks are stored as they arrive, each in one commit with the new bitmap. A cache
// built for another version of the remote file (stamp) or another geometry is emptied at open.
// With a bound, the caches of a directory share it across processes (cache_directory.hpp): a
// store is admitted there first. Chunks a cache gives up for room go least recently used first,
// their bits cleared with them: in the commit of its own store, or in one of their own when
// another cache of the process asks. Another process holding the cache for writing: this one
// reads it and stores nothing.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/codec/ids.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>
#include <b2nd/format/endian.hpp>
#include <b2nd/storage/http.hpp>
#include <b2nd/value.hpp>

#include "../detail/text.hpp"
#include "../engine/chunk_source.hpp"
#include "../engine/remote_cache.hpp"
#include "../values/params_detail.hpp"
#include "cache_directory.hpp"
#include "proxy_layout.hpp"
#include "proxy_room.hpp"

namespace b2nd::detail {

namespace {

using proxy_layout::kBlockBits;
using proxy_layout::kBlocksPerChunk;
using proxy_layout::kChunkBits;
using proxy_layout::kSource;
using proxy_layout::kStamp;
using proxy_layout::packed;
using proxy_layout::vlmeta_value;

bool has_delta(const format::ChunkHeader& h) {
    return std::any_of(h.filters.begin(), h.filters.end(), [](std::uint8_t f) {
        return f == static_cast<std::uint8_t>(codec::Filter::delta);
    });
}

/// The cache at one path, for one remote array.
class ProxyCache final : public RemoteCache, public CacheDirectory::Member {
public:
    ProxyCache(const std::string& path, const ChunkSource& src, std::uint64_t max_bytes);
    ~ProxyCache() override {
        if (dir_) {
            dir_->leave(name_);  // before anything goes: never asked for room after this
        }
    }
    ProxyCache(const ProxyCache&) = delete;
    ProxyCache& operator=(const ProxyCache&) = delete;

    bool has(std::int64_t ci, const std::vector<std::int32_t>* blocks) const override {
        std::lock_guard<std::mutex> lock(mutex_);
        return has_locked(ci, blocks);
    }
    std::optional<storage::StoredChunk> cached(
        std::int64_t ci, const std::vector<std::int32_t>* blocks) const override;
    void store(std::int64_t ci,
               const storage::StoredChunk& c,
               const std::vector<std::int32_t>* blocks) override;
    void drop_cached(std::vector<storage::ChunkBlocks>& wants) const override;
    std::uint64_t shed(std::uint64_t bytes) override;

private:
    bool holds(std::int64_t ci, std::int32_t b) const {
        return fetched_[static_cast<std::size_t>(ci * bpc_ + b)];
    }
    bool has_locked(std::int64_t ci, const std::vector<std::int32_t>* blocks) const;
    void create(const std::string& path, const ChunkSource& src);
    /// With mutex_ held: plans dropping chunks worth at least `bytes`, least recently used
    /// first, into `e` and the bitmap `next`, never `keep` nor one in `dropped` (to which the
    /// chunks planned are added); returns about the bytes they free (no more than that).
    std::uint64_t plan_shed(std::uint64_t bytes,
                            std::int64_t keep,
                            storage::FrameEdit& e,
                            std::vector<bool>& next,
                            std::vector<std::size_t>& dropped) const;
    std::uint64_t held() const {
        std::uint64_t t = 0;
        for (const std::uint64_t n : sizes_) {
            t += n;
        }
        return t;
    }

    std::string path_;
    std::uint64_t max_bytes_;
    std::int64_t bpc_ = 1;
    std::vector<std::uint8_t> zeros_;  // the special chunk of zeros of this geometry
    mutable std::mutex mutex_;
    std::optional<storage::Frame> frame_;
    std::atomic<bool> writable_{false};  // false once it takes no more (read in store unlocked)
    std::vector<bool> fetched_;
    std::vector<std::uint64_t> sizes_;         // stored bytes per chunk
    mutable std::vector<std::uint64_t> used_;  // clock_ at each chunk's last use
    mutable std::uint64_t clock_ = 0;
    std::shared_ptr<CacheDirectory> dir_;  // with a bound: the directory sharing it
    std::string name_;                     // the file's name in it
};

}  // namespace

std::shared_ptr<RemoteCache> RemoteCache::open(const std::string& path,
                                               const ChunkSource& src,
                                               std::uint64_t max_bytes) {
    if (!own_file(path)) {
        return nullptr;  // not used: reads go to the remote, as without a cache
    }
    auto cache = std::make_shared<ProxyCache>(path, src, max_bytes);
    // The file opened is the one checked (not one put in its place meanwhile).
    return own_file(path) ? cache : nullptr;
}

ProxyCache::ProxyCache(const std::string& path, const ChunkSource& src, std::uint64_t max_bytes)
    : path_(path), max_bytes_(max_bytes) {
    const storage::Frame& remote = src.frame();
    const Grid& g = src.grid();
    bpc_ = std::max<std::int64_t>(g.nblocks(), 1);
    zeros_ = src.zeros_chunk(g);
    const std::string stamp = remote.stamp();
    const auto nchunks = static_cast<std::size_t>(remote.nchunks());
    fetched_.assign(nchunks * static_cast<std::size_t>(bpc_), false);
    if (!std::filesystem::exists(path)) {
        try {
            create(path, src);
        } catch (const IoError&) {
            if (!std::filesystem::exists(path)) {
                throw;
            }
            // Another process created it meanwhile: use theirs.
        }
    }
    if (!frame_) {
        storage::OpenOptions o;
        o.writable = true;
        try {
            frame_.emplace(storage::Frame::open(path, o));
            writable_ = true;
        } catch (const LockError&) {
            o.writable = false;  // another process fills it: read what it holds
            frame_.emplace(storage::Frame::open(path, o));
        }
    }
    if (frame_->metalayer(kSource) == nullptr) {
        throw FormatError(quoted_path(path) +
                          ": not a proxy cache (no proxy-source metalayer); b2nd never replaces "
                          "such a file: name another cache");
    }
    const format::Metalayer* ours = frame_->metalayer("b2nd");
    const format::Metalayer* theirs = remote.metalayer("b2nd");
    const bool same_geometry = frame_->nchunks() == remote.nchunks() &&
                               (ours == nullptr) == (theirs == nullptr) &&
                               (ours == nullptr || ours->content == theirs->content);
    const auto stored_stamp = vlmeta_value(*frame_, kStamp);
    bool same_file = stored_stamp && stored_stamp->type() == Value::Type::string &&
                     stored_stamp->as<std::string>() == stamp;
    // A cache is bound to its source: the cache of another URL is never used, whatever its
    // geometry and stamp say.
    std::optional<std::string> source;
    try {
        source = proxy_layout::source_url(
            Value::from_msgpack({frame_->metalayer(kSource)->content.data(),
                                 frame_->metalayer(kSource)->content.size()},
                                kSource));
    } catch (const FormatError&) {  // NOLINT(bugprone-empty-catch): no source: another array's
    }
    if (source != storage::redacted_url(remote.name())) {
        throw FormatError(quoted_path(path) + ": a proxy cache of another array (its source is " +
                          (source ? "\"" + printable(*source) + "\"" : std::string("unreadable")) +
                          "); name another cache");
    }
    // Its chunks are checked on use against its own checksum table: a cache without one (python
    // writes none) is emptied and given one, or when read-only, not used.
    const bool covered = frame_->checksums().state == storage::ChecksumReport::State::covered;
    if (!covered && !writable_) {
        frame_.reset();
        return;
    }
    same_file = same_file && covered;
    if (!same_geometry) {
        // The cache of this URL when the remote array had another shape: built anew.
        if (!writable_) {
            throw FormatError(quoted_path(path) +
                              ": a proxy cache of another array (its shape, chunks or blocks "
                              "differ); name another cache");
        }
        frame_.reset();
        std::filesystem::remove(path);
        std::filesystem::remove(path + ".b2lock");
        create(path, src);
        same_file = true;
    }
    storage::Frame& f = *frame_;  // (anew, when it was built again)
    if (!same_file) {
        if (!writable_) {
            return;  // read-only and stale: nothing in it is used
        }
        // Another version of the remote file: forget everything, bits first (same commit).
        storage::FrameEdit e;
        for (std::size_t i = 0; i < nchunks; ++i) {
            e.add_new({zeros_.data(), zeros_.size()});
        }
        e.set_vlmeta(kBlockBits, packed(Value::binary(proxy_layout::pack(fetched_))));
        e.set_vlmeta(kBlocksPerChunk, packed(Value(bpc_)));
        e.set_vlmeta(kStamp, packed(Value(stamp)));
        e.erase_vlmeta(kChunkBits);
        f.apply(e);
        if (f.checksums().state != storage::ChecksumReport::State::covered) {
            f.add_checksums();  // its chunks are all ours now: zeros
        }
    }
    // What it holds: the block bitmap, or a chunk bitmap a whole-chunk proxy left. One that
    // cannot be read is as if absent: the cache holds nothing yet.
    try {
        if (auto bits = proxy_layout::fetched(f, static_cast<std::int64_t>(nchunks), bpc_,
                                              quoted_path(path))) {
            fetched_ = std::move(*bits);
        }
    } catch (const FormatError&) {  // NOLINT(bugprone-empty-catch): an empty cache
    }
    sizes_.resize(nchunks);
    for (std::size_t i = 0; i < nchunks; ++i) {
        sizes_[i] = f.chunk_unchecked(static_cast<std::int64_t>(i)).bytes.size();
    }
    used_.assign(nchunks, 0);
    if (writable_ && max_bytes_ > 0) {
        // A ledger that cannot be used (another user's, a link, a FIFO, junk) or held too long
        // elsewhere: the cache is read, and takes nothing (stores outside the ledger would break
        // its bound). A read never fails because of the cache.
        try {
            dir_ = CacheDirectory::of(path);
            name_ = std::filesystem::path(path).filename().string();
            const auto session = dir_->lock();
            dir_->join(*session, name_, this, held());
        } catch (const Error&) {
            writable_ = false;
            dir_.reset();
        }
    }
}

void ProxyCache::create(const std::string& path, const ChunkSource& src) {
    const storage::Frame& remote = src.frame();
    const format::FrameHeader& h = remote.header();
    std::vector<format::Metalayer> metas = remote.metalayers();
    // python's proxy-source: where the data comes from (the URL without its credentials).
    const Value source = proxy_layout::source_for(storage::redacted_url(remote.name()));
    format::Metalayer m;
    m.name = kSource;
    m.content = packed(source);
    metas.push_back(std::move(m));
    storage::FrameParams p;
    static_cast<codec::CodecChoice&>(p) = encode_params_of(h, src.grid());
    p.typesize = h.typesize;
    p.chunksize = h.chunksize;
    p.blocksize = h.blocksize;
    storage::Frame f = storage::Frame::create(path, p, false, metas);
    storage::FrameEdit e;
    for (std::int64_t i = 0; i < remote.nchunks(); ++i) {
        e.add_new({zeros_.data(), zeros_.size()});
    }
    e.set_vlmeta(kBlockBits, packed(Value::binary(proxy_layout::pack(fetched_))));
    e.set_vlmeta(kBlocksPerChunk, packed(Value(bpc_)));
    e.set_vlmeta(kStamp, packed(Value(remote.stamp())));
    f.apply(e);
    frame_.emplace(std::move(f));
    writable_ = true;
}

bool ProxyCache::has_locked(std::int64_t ci, const std::vector<std::int32_t>* blocks) const {
    if (ci < 0 || static_cast<std::size_t>(ci) >= sizes_.size()) {
        return false;
    }
    if (blocks == nullptr || blocks->empty()) {
        for (std::int32_t b = 0; b < bpc_; ++b) {
            if (!holds(ci, b)) {
                return false;
            }
        }
        return true;
    }
    return std::all_of(blocks->begin(), blocks->end(),
                       [&](std::int32_t b) { return b >= 0 && b < bpc_ && holds(ci, b); });
}

void ProxyCache::drop_cached(std::vector<storage::ChunkBlocks>& wants) const {
    wants.erase(
        std::remove_if(wants.begin(), wants.end(),
                       [&](const storage::ChunkBlocks& w) { return has(w.chunk, &w.blocks); }),
        wants.end());
}

std::optional<storage::StoredChunk> ProxyCache::cached(
    std::int64_t ci, const std::vector<std::int32_t>* blocks) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!has_locked(ci, blocks)) {
        return std::nullopt;
    }
    used_[static_cast<std::size_t>(ci)] = ++clock_;
    return frame_->chunk(ci);
}

std::uint64_t ProxyCache::shed(std::uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!writable_) {
        return 0;
    }
    try {
        storage::FrameEdit e = frame_->keep_all();
        std::vector<bool> next = fetched_;
        std::vector<std::size_t> dropped;
        (void)plan_shed(bytes, -1, e, next, dropped);
        if (dropped.empty()) {
            return 0;
        }
        e.set_vlmeta(kBlockBits, packed(Value::binary(proxy_layout::pack(next))));
        frame_->apply(e);  // the chunks and the bits that named them, in one commit
        fetched_ = std::move(next);
        return freed_by(*frame_, dropped, sizes_);
    } catch (const Error&) {
        writable_ = false;  // as a failed store: it takes no more
        return 0;
    }
}

std::uint64_t ProxyCache::plan_shed(std::uint64_t bytes,
                                    std::int64_t keep,
                                    storage::FrameEdit& e,
                                    std::vector<bool>& next,
                                    std::vector<std::size_t>& dropped) const {
    std::vector<std::size_t> order;
    for (std::size_t k = 0; k < sizes_.size(); ++k) {
        if (std::find(dropped.begin(), dropped.end(), k) != dropped.end()) {
            continue;
        }
        const bool any = std::any_of(fetched_.begin() + static_cast<std::ptrdiff_t>(k) * bpc_,
                                     fetched_.begin() + static_cast<std::ptrdiff_t>(k + 1) * bpc_,
                                     [](bool v) { return v; });
        if (static_cast<std::int64_t>(k) != keep && (any || sizes_[k] > zeros_.size())) {
            order.push_back(k);
        }
    }
    // The least recently used first (the larger first among equals), taken off a heap only as
    // far as `bytes` needs: usually a chunk or two of many (no sort of every chunk per store).
    const auto later = [&](std::size_t a, std::size_t b) {
        return used_[a] != used_[b] ? used_[a] > used_[b] : sizes_[a] < sizes_[b];
    };
    std::make_heap(order.begin(), order.end(), later);
    std::size_t taken = 0;
    for (std::uint64_t planned = 0; taken < order.size() && planned < bytes; ++taken) {
        std::pop_heap(order.begin(), order.end() - static_cast<std::ptrdiff_t>(taken), later);
        planned += sizes_[order[order.size() - 1 - taken]];
    }
    std::reverse(order.begin(), order.end());  // the popped ones, in the order they came off
    order.resize(taken);
    std::uint64_t freed = 0;  // at least what a chunk of zeros takes stays
    for (const std::size_t k : plan_drops(order, sizes_, bytes, zeros_, bpc_, e, next)) {
        freed += sizes_[k] - std::min<std::uint64_t>(sizes_[k], zeros_.size());
        dropped.push_back(k);
    }
    return freed;
}

void ProxyCache::store(std::int64_t ci,
                       const storage::StoredChunk& c,
                       const std::vector<std::int32_t>* blocks) {
    if (!writable_ || c.index_only() || ci < 0 || static_cast<std::size_t>(ci) >= sizes_.size()) {
        return;  // read-only; or a special chunk in the remote index (nothing to fetch)
    }
    CacheDirectory::SessionPtr session;  // taken before mutex_, as the directory asks
    if (dir_) {
        try {
            session = dir_->lock();
        } catch (const Error&) {
            return;  // the ledger is held too long elsewhere: this chunk goes uncached
        }
    }
    std::unique_lock<std::mutex> lock(mutex_);
    if (!writable_) {
        return;
    }
    try {
        const format::ChunkHeader h = format::read_chunk_header(c.bytes, false);
        std::vector<std::uint8_t> chunk;
        std::vector<std::int32_t> got;  // blocks the new chunk holds
        if (!c.partial) {
            chunk.assign(c.bytes.begin(), c.bytes.end());
            for (std::int32_t b = 0; b < bpc_; ++b) {
                got.push_back(b);
            }
        } else {
            const auto ext = codec::block_extents(c.bytes, h);
            if (!ext || static_cast<std::int64_t>(ext->size()) != bpc_) {
                return;  // nothing to take apart: kept when fetched whole
            }
            // The payload of each block held: fetched now, or already in the cache.
            std::map<std::int32_t, ByteSpan> payload;
            storage::StoredChunk old;
            if (std::any_of(fetched_.begin() + ci * bpc_, fetched_.begin() + (ci + 1) * bpc_,
                            [](bool v) { return v; })) {
                old = frame_->chunk(ci);
                const auto oh = format::read_chunk_header(old.bytes);
                const auto oext = codec::block_extents(old.bytes, oh);
                for (std::int32_t b = 0; oext && b < bpc_; ++b) {
                    if (holds(ci, b)) {
                        const auto [x, y] = (*oext)[static_cast<std::size_t>(b)];
                        payload[b] = old.bytes.subspan(x, y - x);
                    }
                }
            }
            std::vector<std::int32_t> now(blocks->begin(), blocks->end());
            if (has_delta(h)) {
                now.push_back(0);  // the reference of the others, fetched with them
            }
            for (std::int32_t b : now) {
                if (b >= 0 && b < bpc_) {
                    const auto [x, y] = (*ext)[static_cast<std::size_t>(b)];
                    payload[b] = c.bytes.subspan(x, y - x);
                }
            }
            // Spliced: header, block starts, then each block's bytes (streams of length zero
            // for blocks not held: zeros to any reader).
            const auto hs = static_cast<std::size_t>(h.header_size());
            chunk.assign(c.bytes.begin(), c.bytes.begin() + static_cast<std::ptrdiff_t>(hs));
            chunk.resize(hs + 4 * static_cast<std::size_t>(bpc_));
            for (std::int32_t b = 0; b < bpc_; ++b) {
                format::store_le<std::int32_t>(chunk.data() + hs + 4 * static_cast<std::size_t>(b),
                                               static_cast<std::int32_t>(chunk.size()));
                const auto it = payload.find(b);
                if (it != payload.end()) {
                    chunk.insert(chunk.end(), it->second.begin(), it->second.end());
                    got.push_back(b);
                } else {
                    chunk.resize(chunk.size() +
                                 4 * static_cast<std::size_t>(codec::block_streams(h, b)));
                }
            }
            format::store_le<std::int32_t>(chunk.data() + 12,
                                           static_cast<std::int32_t>(chunk.size()));
        }
        const auto at = static_cast<std::size_t>(ci);
        storage::FrameEdit e = frame_->keep_all();
        std::vector<bool> next = fetched_;  // what the cache holds after this commit
        std::vector<std::size_t> dropped;   // chunks given up for room, in the same commit
        if (dir_) {
            if (chunk.size() > max_bytes_) {
                return;
            }
            const std::uint64_t growth = chunk.size() > sizes_[at] ? chunk.size() - sizes_[at] : 0;
            // Other caches of the process may be asked for room, each under its own lock: never
            // two cache locks at once. The session keeps every other writer of this cache out
            // meanwhile; readers only read.
            lock.unlock();
            const bool room =
                dir_->admit(*session, name_, max_bytes_, growth, [&](std::uint64_t bytes) {
                    std::lock_guard<std::mutex> again(mutex_);
                    return plan_shed(bytes, ci, e, next, dropped);
                });
            lock.lock();
            if (!room) {
                // No room now: the read goes on uncached. What was given up (asked by another
                // process, or planned before the room ran out) is given all the same.
                if (!dropped.empty()) {
                    e.set_vlmeta(kBlockBits, packed(Value::binary(proxy_layout::pack(next))));
                    frame_->apply(e);
                    fetched_ = std::move(next);
                    (void)freed_by(*frame_, dropped, sizes_);
                }
                dir_->settle(*session, name_, held());
                return;
            }
        }
        e.replace(ci, {chunk.data(), chunk.size()});
        for (std::int32_t b : got) {
            next[static_cast<std::size_t>(ci * bpc_ + b)] = true;
        }
        e.set_vlmeta(kBlockBits, packed(Value::binary(proxy_layout::pack(next))));
        frame_->apply(e);  // the chunk, the chunks it pushed out, and their bits: one commit
        fetched_ = std::move(next);
        (void)freed_by(*frame_, dropped, sizes_);
        sizes_[at] = chunk.size();
        used_[at] = ++clock_;
        if (dir_) {
            dir_->stored(*session, name_, held());
        }
    } catch (const Error&) {
        // A cache that cannot be written (a full disk, a broken file) never fails a read: it
        // stops taking chunks. The bits already set name chunks that are there.
        writable_ = false;
        if (session) {
            dir_->settle(*session, name_, held());
        }
    }
}

}  // namespace b2nd::detail
