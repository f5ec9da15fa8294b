#include "cache_ledger.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <string>

#include <b2nd/error.hpp>
#include <b2nd/memory.hpp>

namespace b2nd::detail {

namespace {

/// B2ND_CACHE_BYTES: "1073741824", "512M", "2G", "64k" (powers of 1024); unset or empty: 0.
std::uint64_t budget_from_environment() {
    const char* v = std::getenv("B2ND_CACHE_BYTES");
    if (v == nullptr || *v == '\0') {
        return 0;
    }
    const std::string s(v);
    std::size_t used = 0;
    unsigned long long n = 0;
    try {
        n = std::stoull(s, &used, 10);
    } catch (const std::exception&) {
        used = 0;
    }
    int shift = 0;
    if (used > 0 && used + 1 == s.size()) {
        switch (std::toupper(static_cast<unsigned char>(s.back()))) {
            case 'K':
                shift = 10;
                break;
            case 'M':
                shift = 20;
                break;
            case 'G':
                shift = 30;
                break;
            default:
                used = 0;
        }
    } else if (used != s.size()) {
        used = 0;
    }
    if (used == 0 || s[0] == '-' ||
        (shift > 0 && n > (std::numeric_limits<std::uint64_t>::max() >> shift))) {
        throw UsageError("B2ND_CACHE_BYTES=\"" + s +
                         "\": not a size (bytes, or a number with K, M or G: 512M, 2G)");
    }
    return static_cast<std::uint64_t>(n) << shift;
}

}  // namespace

CacheLedger::CacheLedger() {
    budget_ = budget_from_environment();
}

CacheLedger& CacheLedger::get() {
    static CacheLedger ledger;
    return ledger;
}

void CacheLedger::join(CacheMember* m) {
    std::lock_guard<std::mutex> lock(members_mutex_);
    members_.push_back(m);
}

void CacheLedger::leave(CacheMember* m) {
    std::lock_guard<std::mutex> lock(members_mutex_);
    members_.erase(std::remove(members_.begin(), members_.end(), m), members_.end());
}

std::uint64_t CacheLedger::held() const noexcept {
    return static_cast<std::uint64_t>(std::max<std::int64_t>(0, held_.load()));
}

void CacheLedger::charge(std::int64_t delta) {
    const std::int64_t now = held_.fetch_add(delta, std::memory_order_relaxed) + delta;
    const std::uint64_t b = budget();
    if (delta > 0 && b != 0 && now > static_cast<std::int64_t>(b)) {
        reclaim();
    }
}

void CacheLedger::set_budget(std::uint64_t bytes) {
    budget_ = bytes;
    if (bytes != 0 && held() > bytes) {
        reclaim();
    }
}

void CacheLedger::reclaim() {
    // One reclaim at a time; a thread that finds one under way leaves it the work.
    std::unique_lock<std::mutex> lock(members_mutex_, std::try_to_lock);
    if (!lock.owns_lock()) {
        return;
    }
    const std::uint64_t b = budget();
    // Down to 15/16 of the budget, so that each reclaim frees a batch, not one block.
    const std::uint64_t goal = b - b / 16;
    while (b != 0 && held() > goal) {
        CacheMember* victim = nullptr;
        std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
        std::uint64_t second = first;
        for (CacheMember* m : members_) {
            const std::uint64_t t = m->oldest();
            if (t < first) {
                second = first;
                first = t;
                victim = m;
            } else if (t < second) {
                second = t;
            }
        }
        if (victim == nullptr) {
            return;  // nothing may be dropped (entries in use)
        }
        // Its entries older than every other member's oldest, up to what is over the goal.
        const std::uint64_t before = held();
        victim->drop_oldest(second, static_cast<std::size_t>(before - goal));
        if (held() >= before) {
            return;  // nothing went (its entries came into use meanwhile): no spinning
        }
    }
}

}  // namespace b2nd::detail

namespace b2nd {

void set_cache_budget(std::uint64_t bytes) {
    detail::CacheLedger::get().set_budget(bytes);
}

std::uint64_t cache_budget() {
    return detail::CacheLedger::get().budget();
}

std::uint64_t cache_held() {
    return detail::CacheLedger::get().held();
}

}  // namespace b2nd
