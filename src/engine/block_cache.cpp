#include "block_cache.hpp"

#include <cstring>

namespace b2nd::detail {

std::uint64_t BlockCache::next_id() noexcept {
    static std::atomic<std::uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

BlockCache::Buffer BlockCache::find(std::uint64_t key) const {
    Shard& s = shard(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    const auto it = s.map.find(key);
    if (it == s.map.end()) {
        misses_.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    hits_.fetch_add(1, std::memory_order_relaxed);
    s.lru.splice(s.lru.begin(), s.lru, it->second.second);
    return it->second.first;
}

bool BlockCache::copy_from(std::uint64_t key, std::size_t offset, std::size_t n, void* dest) const {
    Shard& s = shard(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    const auto it = s.map.find(key);
    if (it == s.map.end() || offset + n > it->second.first->size()) {
        misses_.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    hits_.fetch_add(1, std::memory_order_relaxed);
    s.lru.splice(s.lru.begin(), s.lru, it->second.second);
    std::memcpy(dest, it->second.first->data() + offset, n);
    return true;
}

void BlockCache::insert(std::uint64_t key, Buffer block) {
    const std::size_t limit = budget() / kShards;
    if (!block || block->size() > limit) {
        return;
    }
    Shard& s = shard(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.map.find(key);
    if (it != s.map.end()) {
        s.bytes -= it->second.first->size();
        s.lru.erase(it->second.second);
        s.map.erase(it);
        bump();
    }
    s.bytes += block->size();
    s.lru.push_front(key);
    s.map.emplace(key, std::make_pair(std::move(block), s.lru.begin()));
    evict(s, limit);
}

void BlockCache::evict(Shard& s, std::size_t limit) {
    while (s.bytes > limit && !s.lru.empty()) {
        bump();
        const auto it = s.map.find(s.lru.back());
        s.bytes -= it->second.first->size();
        s.map.erase(it);
        s.lru.pop_back();
    }
}

void BlockCache::erase_range(std::uint64_t first, std::uint64_t count) {
    for (std::uint64_t k = first; k < first + count; ++k) {
        Shard& s = shard(k);
        std::lock_guard<std::mutex> lock(s.mutex);
        const auto it = s.map.find(k);
        if (it != s.map.end()) {
            s.bytes -= it->second.first->size();
            s.lru.erase(it->second.second);
            s.map.erase(it);
            bump();
        }
    }
}

void BlockCache::clear() {
    for (Shard& s : shards_) {
        std::lock_guard<std::mutex> lock(s.mutex);
        s.map.clear();
        s.lru.clear();
        s.bytes = 0;
    }
    bump();
}

void BlockCache::set_budget(std::size_t bytes) {
    budget_.store(bytes, std::memory_order_relaxed);
    for (Shard& s : shards_) {
        std::lock_guard<std::mutex> lock(s.mutex);
        evict(s, bytes / kShards);
    }
}

std::size_t BlockCache::size_bytes() const {
    std::size_t n = 0;
    for (const Shard& s : shards_) {
        std::lock_guard<std::mutex> lock(s.mutex);
        n += s.bytes;
    }
    return n;
}

}  // namespace b2nd::detail
