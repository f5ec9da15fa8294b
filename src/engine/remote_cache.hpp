// Internal: the persistent local cache of an array read over HTTP (OpenOptions::http_cache), as
// the engine sees it. A read asks has() before it fetches: blocks the cache holds are decoded
// from the local file, with no request; fetched chunks are given to store() as they arrive.
//
// The cache's layout is python-blosc2's Proxy (so that python reads it), which the objects layer
// owns: RemoteCache::open is defined there (objects/proxy_cache.cpp, which says how the cache is
// kept), and the engine names no part of the layout.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <b2nd/storage/frame.hpp>

namespace b2nd::detail {

class ChunkSource;

class RemoteCache {
public:
    virtual ~RemoteCache() = default;

    /// Opens (or creates) the cache at `path` for the remote array `src` reads; the caches of its
    /// directory together hold at most `max_bytes` (0: no bound), across processes. \throws
    /// IoError, FormatError naming the cache file (what is not a cache is refused, never replaced)
    static std::shared_ptr<RemoteCache> open(const std::string& path,
                                             const ChunkSource& src,
                                             std::uint64_t max_bytes);

    /// Whether chunk ci's `blocks` (null: all of them) are in the cache.
    virtual bool has(std::int64_t ci, const std::vector<std::int32_t>* blocks) const = 0;
    /// Chunk ci as the cache stores it, when it holds `blocks` (null: all of them) of it: decode
    /// only those. Asked and taken at once, so that a chunk given up meanwhile (to stay within
    /// the bound) is never read as held.
    virtual std::optional<storage::StoredChunk> cached(
        std::int64_t ci, const std::vector<std::int32_t>* blocks) const = 0;
    /// Keeps what was fetched of chunk ci: `c` (whole, or partial with `blocks` fetched). Never
    /// fails a read: a cache that cannot be written stops taking chunks.
    virtual void store(std::int64_t ci,
                       const storage::StoredChunk& c,
                       const std::vector<std::int32_t>* blocks) = 0;
    /// Chunks whose blocks the cache holds, dropped from `wants` (nothing left to fetch).
    virtual void drop_cached(std::vector<storage::ChunkBlocks>& wants) const = 0;

protected:
    RemoteCache() = default;
    RemoteCache(const RemoteCache&) = default;
    RemoteCache& operator=(const RemoteCache&) = default;
};

}  // namespace b2nd::detail
