// Internal: python-blosc2's data derived from an array's data (derived.cpp): its query indexes
// (vlmeta `blosc2_indexes`) and its persisted query cache (vlmeta `_blosc2_query_cache`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <b2nd/byte_span.hpp>

namespace b2nd::detail {

inline constexpr const char* kIndexesVlmeta = "blosc2_indexes";
inline constexpr const char* kQueryCacheVlmeta = "_blosc2_query_cache";

/// The `blosc2_indexes` vlmeta `raw` with every index marked stale, as python-blosc2 marks them
/// after a write to the data; nullopt when it holds no index (or nothing this can read).
std::optional<std::vector<std::uint8_t>> stale_indexes(ByteSpan raw, const std::string& where);

}  // namespace b2nd::detail
