// Internal: making room in persistent remote caches (proxy_cache.cpp's own chunks, and another
// process's idle cache files, which the directory's ledger asks for: cache_directory.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <b2nd/storage/frame.hpp>

namespace b2nd::detail {

/// Chunks of `sizes` to drop for at least `bytes`, in `order`: each is replaced by `zeros` in `e`
/// and its bits cleared in `bits` (bpc per chunk). Returns the chunks.
std::vector<std::size_t> plan_drops(const std::vector<std::size_t>& order,
                                    const std::vector<std::uint64_t>& sizes,
                                    std::uint64_t bytes,
                                    const std::vector<std::uint8_t>& zeros,
                                    std::int64_t bpc,
                                    storage::FrameEdit& e,
                                    std::vector<bool>& bits);

/// Bytes the chunks `dropped` gave up, their sizes in `sizes` set to what they take now.
std::uint64_t freed_by(const storage::Frame& f,
                       const std::vector<std::size_t>& dropped,
                       std::vector<std::uint64_t>& sizes);

}  // namespace b2nd::detail
