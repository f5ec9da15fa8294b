// Internal: the decoded-block cache of an array, shared by every handle and view of it.
//
// A byte-budgeted LRU split into shards (each with its own mutex) so that concurrent readers
// rarely contend. Keys are chunk * blocks_per_chunk + block. Entries are immutable buffers held
// by shared_ptr: a reader copying out of one is never disturbed by its eviction. Each cache is a
// member of the process's ledger (detail/cache_ledger.hpp): entries carry the ledger's stamp of
// their last use, and the least recently used go when all caches together are over the budget.
//
// Admission on the second touch (admit(), ChunkSource::admits): a block that a read of a box
// needs less than half of, and whose codec can stop early (LZ4, BloscLZ), is decoded the first
// time only as far as that read needs and not kept; the cache remembers its key (among the last
// keys touched, about twice as many as it can hold), and a second read of it while remembered
// decodes it whole and keeps it. One-shot reads (a plane through many blocks, on a fresh handle)
// then cost what they cost without a cache; sweeps pay one short partial decode more. Other
// blocks, and those of single elements (loops come back to them), are kept from their first read.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "../detail/cache_ledger.hpp"

namespace b2nd::detail {

class BlockCache final : public CacheMember {
public:
    using Buffer = std::shared_ptr<const std::vector<std::uint8_t>>;

    explicit BlockCache(std::size_t budget_bytes);
    ~BlockCache() override;
    BlockCache(const BlockCache&) = delete;
    BlockCache& operator=(const BlockCache&) = delete;

    /// The block, or null.
    Buffer find(std::uint64_t key) const;
    /// Copies n bytes at `offset` of the block into dest; false when the block is not cached.
    bool copy_from(std::uint64_t key, std::size_t offset, std::size_t n, void* dest) const;
    /// Whether a block not cached, read now, is to be decoded whole and inserted: true when its
    /// key was touched before (and is still remembered), else remembers it and returns false.
    /// `block_bytes`: the size of a block (how many keys are remembered follows from it).
    bool admit(std::uint64_t key, std::size_t block_bytes);
    /// Adds a block (replacing any entry with the same key); blocks larger than a shard's share
    /// of the budget are not kept.
    void insert(std::uint64_t key, Buffer block);
    /// Drops keys [first, first + count).
    void erase_range(std::uint64_t first, std::uint64_t count);
    /// Drops every block and every key remembered for admission.
    void clear();

    void set_budget(std::size_t bytes);
    std::size_t budget() const noexcept { return budget_.load(std::memory_order_relaxed); }
    /// Bytes currently held.
    std::size_t size_bytes() const;
    std::uint64_t hits() const noexcept { return hits_.load(std::memory_order_relaxed); }
    /// This cache among all caches of the process (never reused).
    std::uint64_t id() const noexcept { return id_; }
    /// Changes whenever a block leaves the cache or is replaced (erased, evicted, cleared): a
    /// block found at epoch e is still the cached content of its key while epoch() == e.
    std::uint64_t epoch() const noexcept { return epoch_.load(std::memory_order_acquire); }
    std::uint64_t misses() const noexcept { return misses_.load(std::memory_order_relaxed); }

    std::uint64_t oldest() const override;
    void drop_oldest(std::uint64_t before, std::size_t bytes) override;

private:
    static constexpr std::size_t kShards = 16;
    struct Entry {
        Buffer block;
        std::list<std::uint64_t>::iterator at;  // its place in the shard's lru
        std::uint64_t stamp = 0;                // the ledger's clock at its last use
    };
    struct Shard {
        mutable std::mutex mutex;
        mutable std::list<std::uint64_t> lru;  // most recent first
        mutable std::unordered_map<std::uint64_t, Entry> map;
        std::size_t bytes = 0;
        // Keys touched once (admit), each with the number of its touch, oldest first in `order`:
        // a key leaves `seen` when its entry of `order` leaves, unless touched again since.
        std::unordered_map<std::uint64_t, std::uint64_t> seen;
        std::deque<std::pair<std::uint64_t, std::uint64_t>> order;
        std::uint64_t touches = 0;
        /// The stamp of its least recently used entry (UINT64_MAX: none); under the mutex.
        std::uint64_t oldest() const;
    };
    /// A hit: `e` becomes the shard's most recent entry. Under the shard's mutex.
    void touch(Shard& s, Entry& e) const;
    Shard& shard(std::uint64_t key) const noexcept {
        return shards_[static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> 60)];
    }
    /// Drops the shard's least recent entries until it holds at most `limit`; the bytes freed.
    std::size_t evict(Shard& s, std::size_t limit);

    mutable std::array<Shard, kShards> shards_;
    std::atomic<std::size_t> budget_{0};
    mutable std::atomic<std::uint64_t> hits_{0};
    mutable std::atomic<std::uint64_t> misses_{0};
    const std::uint64_t id_ = next_id();
    std::atomic<std::uint64_t> epoch_{0};
    static std::uint64_t next_id() noexcept;
    void bump() noexcept { epoch_.fetch_add(1, std::memory_order_acq_rel); }
};

}  // namespace b2nd::detail
