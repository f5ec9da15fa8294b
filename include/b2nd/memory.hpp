// Accounting of the memory b2nd-cpp itself holds: decode and encode scratch, chunk buffers,
// slabs of lazy views and the windows of out-of-core evaluation. Lets a program (and our tests)
// check that work on arrays larger than RAM stays within a budget. The block cache is budgeted
// and reported on its own (AnyArray::cache_stats).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace b2nd {

/// Bytes the library holds in memory (memory_stats()).
struct MemoryStats {
    std::int64_t current = 0;  ///< bytes held now
    std::int64_t peak = 0;     ///< most bytes held at once since the last reset_memory_peak()
};

MemoryStats memory_stats() noexcept;

/// Sets the process's one cache budget: the decoded blocks and the fetched remote chunk images
/// of every open array and store leaf, together, hold at most about `bytes` (0: no budget;
/// each cache then keeps only to its own limit, OpenOptions::cache_bytes and
/// HttpOptions::memory_bytes, which hold under a budget too). Over it, the least recently used
/// entries of all caches go first, whichever array they belong to. The budget starts as
/// B2ND_CACHE_BYTES says (bytes, or 512M, 2G...), else 0.
/// \throws UsageError for a B2ND_CACHE_BYTES that is no size (at the first use of a cache)
void set_cache_budget(std::uint64_t bytes);
/// The budget set_cache_budget() set (0: none).
std::uint64_t cache_budget();
/// Bytes all caches of the process hold now (decoded blocks and fetched chunk images).
std::uint64_t cache_held();
/// Starts a new peak measurement at the current level.
void reset_memory_peak() noexcept;

namespace detail {
void track_alloc(std::size_t bytes) noexcept;
void track_free(std::size_t bytes) noexcept;
}  // namespace detail

/// An allocator that counts what it holds in memory_stats().
template <class T>
struct tracked_allocator {
    using value_type = T;  ///< the element type
    tracked_allocator() noexcept = default;
    template <class U>
    /// A copy for another element type (allocators are stateless).
    tracked_allocator(const tracked_allocator<U>&) noexcept {}  // NOLINT: allocator rebinding
    /// Allocates n elements, counted.
    T* allocate(std::size_t n) {
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) {
            throw std::bad_array_new_length();
        }
        T* p = static_cast<T*>(::operator new(n * sizeof(T)));
        detail::track_alloc(n * sizeof(T));
        return p;
    }
    /// Frees n elements, counted.
    void deallocate(T* p, std::size_t n) noexcept {
        detail::track_free(n * sizeof(T));
        ::operator delete(p);
    }
    template <class U>
    /// Always equal (stateless).
    bool operator==(const tracked_allocator<U>&) const noexcept {
        return true;
    }
    template <class U>
    /// Always equal (stateless).
    bool operator!=(const tracked_allocator<U>&) const noexcept {
        return false;
    }
};

template <class T>
using tracked_vector = std::vector<T, tracked_allocator<T>>;

}  // namespace b2nd
