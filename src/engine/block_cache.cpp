#include "block_cache.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace b2nd::detail {

std::uint64_t BlockCache::next_id() noexcept {
    static std::atomic<std::uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

BlockCache::BlockCache(std::size_t budget_bytes) {
    budget_.store(budget_bytes, std::memory_order_relaxed);
    CacheLedger::get().join(this);
}

BlockCache::~BlockCache() {
    CacheLedger::get().leave(this);
    CacheLedger::get().charge(-static_cast<std::int64_t>(size_bytes()));
}

std::uint64_t BlockCache::Shard::oldest() const {
    return lru.empty() ? std::numeric_limits<std::uint64_t>::max() : map.at(lru.back()).stamp;
}

void BlockCache::touch(Shard& s, Entry& e) const {
    hits_.fetch_add(1, std::memory_order_relaxed);
    s.lru.splice(s.lru.begin(), s.lru, e.at);
    e.stamp = CacheLedger::get().tick();
}

BlockCache::Buffer BlockCache::find(std::uint64_t key) const {
    Shard& s = shard(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    const auto it = s.map.find(key);
    if (it == s.map.end()) {
        misses_.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    touch(s, it->second);
    return it->second.block;
}

bool BlockCache::copy_from(std::uint64_t key, std::size_t offset, std::size_t n, void* dest) const {
    Shard& s = shard(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    const auto it = s.map.find(key);
    if (it == s.map.end() || offset + n > it->second.block->size()) {
        misses_.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    touch(s, it->second);
    std::memcpy(dest, it->second.block->data() + offset, n);
    return true;
}

bool BlockCache::admit(std::uint64_t key, std::size_t block_bytes) {
    // Remembered per shard: twice the blocks its share of the budget holds, 16 at least.
    const std::size_t share = budget() / kShards / std::max<std::size_t>(block_bytes, 1);
    const std::size_t remembered = std::clamp<std::size_t>(2 * share, 16, std::size_t{1} << 16);
    Shard& s = shard(key);
    std::lock_guard<std::mutex> lock(s.mutex);
    if (const auto it = s.seen.find(key); it != s.seen.end()) {
        s.seen.erase(it);
        return true;
    }
    const std::uint64_t n = ++s.touches;
    s.seen[key] = n;
    s.order.emplace_back(key, n);
    while (s.order.size() > remembered) {
        const auto [old, at] = s.order.front();
        s.order.pop_front();
        if (const auto it = s.seen.find(old); it != s.seen.end() && it->second == at) {
            s.seen.erase(it);
        }
    }
    return false;
}

void BlockCache::insert(std::uint64_t key, Buffer block) {
    const std::size_t limit = budget() / kShards;
    if (!block || block->size() > limit) {
        return;
    }
    std::int64_t delta = 0;
    {
        Shard& s = shard(key);
        std::lock_guard<std::mutex> lock(s.mutex);
        auto it = s.map.find(key);
        if (it != s.map.end()) {
            delta -= static_cast<std::int64_t>(it->second.block->size());
            s.bytes -= it->second.block->size();
            s.lru.erase(it->second.at);
            s.map.erase(it);
            bump();
        }
        const std::size_t n = block->size();
        s.bytes += n;
        delta += static_cast<std::int64_t>(n);
        s.lru.push_front(key);
        s.map.emplace(key, Entry{std::move(block), s.lru.begin(), CacheLedger::get().tick()});
        delta -= static_cast<std::int64_t>(evict(s, limit));
    }
    CacheLedger::get().charge(delta);  // may reclaim: no lock of ours held
}

std::size_t BlockCache::evict(Shard& s, std::size_t limit) {
    std::size_t freed = 0;
    while (s.bytes > limit && !s.lru.empty()) {
        bump();
        const auto it = s.map.find(s.lru.back());
        s.bytes -= it->second.block->size();
        freed += it->second.block->size();
        s.map.erase(it);
        s.lru.pop_back();
    }
    return freed;
}

std::uint64_t BlockCache::oldest() const {
    std::uint64_t t = std::numeric_limits<std::uint64_t>::max();
    for (const Shard& s : shards_) {
        std::lock_guard<std::mutex> lock(s.mutex);
        t = std::min(t, s.oldest());
    }
    return t;
}

void BlockCache::drop_oldest(std::uint64_t before, std::size_t bytes) {
    std::size_t freed = 0;
    for (bool first = true; freed < bytes; first = false) {
        // The shard whose least recent entry is the oldest.
        Shard* pick = nullptr;
        std::uint64_t t = std::numeric_limits<std::uint64_t>::max();
        for (Shard& s : shards_) {
            std::lock_guard<std::mutex> lock(s.mutex);
            if (const std::uint64_t o = s.oldest(); o < t) {
                t = o;
                pick = &s;
            }
        }
        if (pick == nullptr || (!first && t >= before)) {
            break;
        }
        std::lock_guard<std::mutex> lock(pick->mutex);
        if (pick->lru.empty()) {
            continue;
        }
        bump();
        const auto it = pick->map.find(pick->lru.back());
        pick->bytes -= it->second.block->size();
        freed += it->second.block->size();
        pick->map.erase(it);
        pick->lru.pop_back();
    }
    CacheLedger::get().charge(-static_cast<std::int64_t>(freed));
}

void BlockCache::erase_range(std::uint64_t first, std::uint64_t count) {
    std::size_t freed = 0;
    for (std::uint64_t k = first; k < first + count; ++k) {
        Shard& s = shard(k);
        std::lock_guard<std::mutex> lock(s.mutex);
        const auto it = s.map.find(k);
        if (it != s.map.end()) {
            s.bytes -= it->second.block->size();
            freed += it->second.block->size();
            s.lru.erase(it->second.at);
            s.map.erase(it);
            bump();
        }
    }
    CacheLedger::get().charge(-static_cast<std::int64_t>(freed));
}

void BlockCache::clear() {
    std::size_t freed = 0;
    for (Shard& s : shards_) {
        std::lock_guard<std::mutex> lock(s.mutex);
        freed += s.bytes;
        s.map.clear();
        s.lru.clear();
        s.bytes = 0;
        s.seen.clear();
        s.order.clear();
    }
    bump();
    CacheLedger::get().charge(-static_cast<std::int64_t>(freed));
}

void BlockCache::set_budget(std::size_t bytes) {
    budget_.store(bytes, std::memory_order_relaxed);
    std::size_t freed = 0;
    for (Shard& s : shards_) {
        std::lock_guard<std::mutex> lock(s.mutex);
        freed += evict(s, bytes / kShards);
    }
    CacheLedger::get().charge(-static_cast<std::int64_t>(freed));
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
