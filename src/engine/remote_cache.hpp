// Internal: the persistent local cache of an array read over HTTP (OpenOptions::http_cache).
//
// The cache is a b2nd file laid out as python-blosc2's Proxy cache (proxy.py): the remote
// array's shape, chunks, blocks and metalayers plus a `proxy-source` metalayer, one chunk per
// remote chunk, and in its vlmeta the bitmap of what it holds: `proxy-fetched-blocks` (a bit per
// block, chunk-major, least significant bit first; `proxy-fetched-bpc` blocks per chunk) and
// `proxy-stamp` (what identified the remote file: size, ETag, Last-Modified). A chunk fetched
// whole is stored as it came; a chunk of which some blocks were fetched is stored spliced, as
// python does: its blocks where fetched, streams of length zero (zeros) elsewhere, so that any
// reader decodes it, and only the bitmap says which blocks are real.
//
// A read asks has() before it fetches: blocks the cache holds are decoded from the local file,
// with no request. Fetched chunks are stored as they arrive, each in one commit with the new
// bitmap. A cache built for another version of the remote file (stamp) or another geometry is
// emptied at open. Beyond the size bound, other chunks are dropped (their bits cleared first,
// in the same commit). Another process holding the cache for writing: this one reads it and
// stores nothing.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <b2nd/storage/frame.hpp>

namespace b2nd::detail {

class ChunkSource;

class RemoteCache {
public:
    /// Opens (or creates) the cache at `path` for the remote array `src` reads.
    /// \throws IoError, FormatError naming the cache file (not a cache: refused, never replaced)
    RemoteCache(const std::string& path, const ChunkSource& src, std::uint64_t max_bytes);

    /// Whether chunk ci's `blocks` (null: all of them) are in the cache.
    bool has(std::int64_t ci, const std::vector<std::int32_t>* blocks) const;
    /// Chunk ci as the cache stores it (decode only the blocks has() said it holds).
    storage::StoredChunk chunk(std::int64_t ci) const;
    /// Keeps what was fetched of chunk ci: `c` (whole, or partial with `blocks` fetched).
    void store(std::int64_t ci,
               const storage::StoredChunk& c,
               const std::vector<std::int32_t>* blocks);
    /// Chunks whose blocks the cache holds, dropped from `wants` (nothing left to fetch).
    void drop_cached(std::vector<storage::ChunkBlocks>& wants) const;

private:
    bool holds(std::int64_t ci, std::int32_t b) const {
        return fetched_[static_cast<std::size_t>(ci * bpc_ + b)];
    }
    /// A bitmap as python stores it (a bit per block, least significant first).
    static std::vector<std::uint8_t> bitmap(const std::vector<bool>& bits);
    void create(const std::string& path, const ChunkSource& src);

    std::string path_;
    std::uint64_t max_bytes_;
    std::int64_t bpc_ = 1;
    std::vector<std::uint8_t> zeros_;  // the special chunk of zeros of this geometry
    mutable std::mutex mutex_;
    std::optional<storage::Frame> frame_;
    bool writable_ = false;
    std::vector<bool> fetched_;
    std::vector<std::uint64_t> sizes_;  // stored bytes per chunk
};

}  // namespace b2nd::detail
