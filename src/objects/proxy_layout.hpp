// Internal: python-blosc2's Proxy layout (proxy.py), described once. A Proxy keeps what it has
// fetched of a source array in a local array of the source's geometry, whose other chunks are
// zeros or uninitialized:
//  - metalayer `proxy-source`: where the data comes from (a map: local_abspath, urlpath,
//    caterva2_env, and b2nd's `url`); its presence makes a frame a proxy (kind.cpp);
//  - vlmeta `proxy-fetched-blocks`: a bit per block, chunk-major, least significant bit first,
//    with `proxy-fetched-bpc` blocks per chunk; or, written by older proxies, `proxy-fetched`: a
//    bit per chunk. With neither, every chunk that is not a special chunk was fetched (python's
//    reading of caches written before the bitmaps);
//  - vlmeta `proxy-stamp` (b2nd's persistent HTTP cache): what identified the remote file.
// Its readers: proxy.cpp (opening a proxy as an array), proxy_cache.cpp (the persistent cache of
// arrays read over HTTP, in this layout so that python reads it), open.cpp (what a copy leaves
// out).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <b2nd/storage/frame.hpp>
#include <b2nd/value.hpp>

namespace b2nd::detail::proxy_layout {

inline constexpr const char* kSource = "proxy-source";
inline constexpr const char* kBlockBits = "proxy-fetched-blocks";
inline constexpr const char* kBlocksPerChunk = "proxy-fetched-bpc";
inline constexpr const char* kChunkBits = "proxy-fetched";
inline constexpr const char* kStamp = "proxy-stamp";
inline constexpr const char* kIndex = "proxy-index";

/// Whether `name` is one of the layout's metalayers or vlmeta entries.
bool owns(const std::string& name);

/// The `proxy-source` content for a source at `url` (without its credentials).
Value source_for(const std::string& url);
/// The url a `proxy-source` content names (b2nd's caches), if any.
std::optional<std::string> source_url(const Value& source);
/// A `proxy-source` content as messages name it (never an auth token).
std::string describe(const Value& source);

/// A vlmeta entry of the layout as a value; nothing when absent or unreadable (as if absent).
std::optional<Value> vlmeta_value(const storage::Frame& f, const char* name);
/// A value as the layout stores it (msgpack).
inline std::vector<std::uint8_t> packed(const Value& v) {
    return v.to_msgpack();
}

/// Bits packed as python stores them (least significant first).
std::vector<std::uint8_t> pack(const std::vector<bool>& bits);

/// What a proxy's bitmaps say was fetched: a bit per block (nchunks * bpc, chunk-major; a chunk
/// bitmap gives all blocks of a chunk its bit), or nothing when neither bitmap fits this
/// geometry. \throws FormatError naming `where` for a bitmap that cannot be read, or a
/// `proxy-fetched-bpc` other than `bpc`
std::optional<std::vector<bool>> fetched(const storage::Frame& f,
                                         std::int64_t nchunks,
                                         std::int64_t bpc,
                                         const std::string& where);

}  // namespace b2nd::detail::proxy_layout
