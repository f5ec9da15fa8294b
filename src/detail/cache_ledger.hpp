// Internal: the process's one cache budget (b2nd::set_cache_budget). Every cache of decoded
// blocks (engine/block_cache) and of fetched remote chunk images (storage/remote_chunks) is a
// member: it reports what it holds as it changes, stamps its entries with the ledger's clock
// when they are used, and gives back its least recently used entries when asked. When the
// members together hold more than the budget, the ledger takes from the member whose oldest
// entry is the oldest of all, until they are back under it: one LRU over all the caches.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace b2nd::detail {

class CacheMember {
public:
    virtual ~CacheMember() = default;
    /// The clock stamp of its least recently used entry that it may drop; UINT64_MAX: none.
    virtual std::uint64_t oldest() const = 0;
    /// Drops least recently used entries stamped before `before` (at least the oldest one),
    /// until about `bytes` are freed. Calls no ledger function but charge().
    virtual void drop_oldest(std::uint64_t before, std::size_t bytes) = 0;
};

class CacheLedger {
public:
    /// The process's ledger; its budget is B2ND_CACHE_BYTES when set (bytes, or with a K, M or G
    /// suffix: powers of 1024). \throws UsageError, naming the variable, for a value that is no
    /// size
    static CacheLedger& get();

    /// A stamp for an entry used now (larger than every earlier one).
    std::uint64_t tick() noexcept { return clock_.fetch_add(1, std::memory_order_relaxed) + 1; }
    /// Whether a budget is set (stamps matter only then).
    bool active() const noexcept { return budget_.load(std::memory_order_relaxed) != 0; }

    void join(CacheMember* m);
    /// Waits for a reclaim that uses `m` to end.
    void leave(CacheMember* m);
    /// A member holds `delta` more bytes (less, when negative). Over the budget, it reclaims:
    /// call it holding none of the member's locks.
    void charge(std::int64_t delta);
    /// Changes the budget (0: none) and reclaims down to it.
    void set_budget(std::uint64_t bytes);
    std::uint64_t budget() const noexcept { return budget_.load(std::memory_order_relaxed); }
    std::uint64_t held() const noexcept;

private:
    CacheLedger();
    void reclaim();

    std::atomic<std::uint64_t> clock_{0};
    std::atomic<std::int64_t> held_{0};
    std::atomic<std::uint64_t> budget_{0};
    std::mutex members_mutex_;  // the members, and one reclaim at a time
    std::vector<CacheMember*> members_;
};

}  // namespace b2nd::detail
