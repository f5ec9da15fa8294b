// Internal: memcpy/memset that accept empty ranges with null pointers (a zero-length std::memcpy
// with a null pointer is undefined behaviour, and empty std::vectors hand out null pointers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include <b2nd/memory.hpp>

namespace b2nd::detail {

inline void copy_bytes(void* dst, const void* src, std::size_t n) noexcept {
    if (n != 0) {
        std::memcpy(dst, src, n);
    }
}

inline void fill_bytes(void* dst, int value, std::size_t n) noexcept {
    if (n != 0) {
        std::memset(dst, value, n);
    }
}

/// A scratch buffer of at least n bytes: grows `v` when needed, never shrinks it.
template <class A>
std::uint8_t* scratch_bytes(std::vector<std::uint8_t, A>& v, std::size_t n) {
    if (v.size() < n) {
        v.resize(n);
    }
    return v.data();
}

/// Per-thread scratch, counted in memory_stats().
using Scratch = tracked_vector<std::uint8_t>;

/// Per-thread scratch is kept for reuse, unless it grew beyond 64 MiB.
inline void release_if_large(Scratch& v) {
    if (v.capacity() > (std::size_t{64} << 20)) {
        Scratch().swap(v);
    }
}

}  // namespace b2nd::detail
