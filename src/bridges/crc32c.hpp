// Internal: CRC-32C (Castagnoli), as Zarr v3's crc32c codec and its shard indexes carry it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace b2nd::bridges {

/// CRC-32C of n bytes at p (the standard one: reflected, initial and final value 0xffffffff).
std::uint32_t crc32c(const std::uint8_t* p, std::size_t n) noexcept;

}  // namespace b2nd::bridges
