// Internal: memcpy/memset that accept empty ranges with null pointers (a zero-length std::memcpy
// with a null pointer is undefined behaviour, and empty std::vectors hand out null pointers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
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

/// Per-thread objects (scratch buffers, workspaces) that a nested use on the same thread never
/// shares. A read can re-enter the engine on its own thread: a block origin's make_block (a
/// persisted expression, a field view, a bridged dataset) reads other arrays, whose reads run the
/// same code; a plain thread_local buffer that the inner read resizes frees the outer read's.
/// lease() hands out an object that no live lease holds (the pool's shared_ptr is its only
/// owner), so a lease may be kept across any call and outlive the function (a BlockView keeps its
/// block's). Up to `Kept` objects are kept for reuse; deeper nesting gets fresh ones. Use one pool
/// per thread (a thread_local).
template <class T, std::size_t Kept = 4>
class LeasePool {
public:
    std::shared_ptr<T> lease() {
        for (const std::shared_ptr<T>& p : kept_) {
            if (p.use_count() == 1) {
                return p;
            }
        }
        auto p = std::make_shared<T>();
        if (kept_.size() < Kept) {
            kept_.push_back(p);
        }
        return p;
    }

private:
    std::vector<std::shared_ptr<T>> kept_;
};

/// A leased scratch buffer of at least n bytes (see LeasePool).
inline std::shared_ptr<Scratch> lease_bytes(LeasePool<Scratch>& pool, std::size_t n) {
    std::shared_ptr<Scratch> s = pool.lease();
    scratch_bytes(*s, n);
    return s;
}

}  // namespace b2nd::detail
