#include <atomic>

#include <b2nd/memory.hpp>

namespace b2nd {

namespace {

std::atomic<std::int64_t> g_current{0};
std::atomic<std::int64_t> g_peak{0};

}  // namespace

namespace detail {

void track_alloc(std::size_t bytes) noexcept {
    const std::int64_t now =
        g_current.fetch_add(static_cast<std::int64_t>(bytes), std::memory_order_relaxed) +
        static_cast<std::int64_t>(bytes);
    std::int64_t peak = g_peak.load(std::memory_order_relaxed);
    while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
}

void track_free(std::size_t bytes) noexcept {
    g_current.fetch_sub(static_cast<std::int64_t>(bytes), std::memory_order_relaxed);
}

}  // namespace detail

MemoryStats memory_stats() noexcept {
    return {g_current.load(std::memory_order_relaxed), g_peak.load(std::memory_order_relaxed)};
}

void reset_memory_peak() noexcept {
    g_peak.store(g_current.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

}  // namespace b2nd
