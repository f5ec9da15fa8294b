// Chunks staged in the order of their tasks (ordered_staging.hpp).
#include "ordered_staging.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "../detail/thread_pool.hpp"

namespace b2nd::storage::detail {

namespace {

using b2nd::detail::Scratch;

/// Buffers for kept chunks, reused across writes: a fresh buffer costs its first touch (page
/// faults) on every write. At most 64 MiB are kept, in at most 4 buffers.
class SparePool {
public:
    static SparePool& get() {
        static SparePool pool;
        return pool;
    }
    Scratch take(std::size_t n) {
        Scratch b;
        {
            std::lock_guard<std::mutex> l(mutex_);
            if (!spare_.empty()) {
                b = std::move(spare_.back());
                spare_.pop_back();
            }
        }
        b2nd::detail::scratch_bytes(b, n);
        return b;
    }
    void give(Scratch&& b) {
        std::lock_guard<std::mutex> l(mutex_);
        std::size_t held = b.capacity();
        for (const Scratch& s : spare_) {
            held += s.capacity();
        }
        if (spare_.size() < kKept && b.capacity() > 0 && held <= kKeptBytes) {
            spare_.push_back(std::move(b));
        }
    }

private:
    static constexpr std::size_t kKept = 4;
    static constexpr std::size_t kKeptBytes = std::size_t{64} << 20;
    std::mutex mutex_;
    std::vector<Scratch> spare_;
};

}  // namespace

OrderedStaging::OrderedStaging(Frame& frame, std::size_t n, std::size_t keep_bytes)
    : frame_(frame), staged_(n), handed_(n, 0), keep_bytes_(keep_bytes) {}

OrderedStaging::~OrderedStaging() {
    for (auto& kc : kept_) {
        SparePool::get().give(std::move(kc.second.bytes));
    }
}

StagedChunk OrderedStaging::stage(std::size_t k,
                                  ByteSpan chunk,
                                  const SealHint& hint,
                                  std::shared_ptr<const void> owner) {
    // Sealed now, in parallel with the other threads' chunks: sealing a chunk for a version-3
    // table decodes it. A chunk that cannot be sealed is staged unsealed, to fail in its turn.
    std::shared_ptr<const FrameInternal::Ahead> ahead;
    try {
        ahead = FrameInternal::seal_ahead(frame_, chunk, hint);
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): staging reports it
    }
    std::unique_lock<std::mutex> l(mutex_);
    if (k >= staged_.size() || handed_[k] != 0) {
        throw std::logic_error("ordered staging: task " + std::to_string(k) + " of " +
                               std::to_string(staged_.size()) +
                               (k >= staged_.size() ? " does not exist" : " was staged already"));
    }
    const std::size_t copy = owner ? 0 : chunk.size();
    if (running_ && copy > 0) {
        // Past the bound, the chunk waits for its turn rather than being copied.
        turn_.wait(l, [&] { return failed_ || next_ == k || kept_bytes_ + copy <= keep_bytes_; });
    }
    if (failed_) {
        return {};
    }
    handed_[k] = 1;
    if (next_ != k) {
        Kept c;
        if (owner) {
            c.owner = std::move(owner);
            c.chunk = chunk;
        } else {
            c.bytes = SparePool::get().take(chunk.size());
            b2nd::detail::copy_bytes(c.bytes.data(), chunk.data(), chunk.size());
            c.chunk = {c.bytes.data(), chunk.size()};
        }
        c.ahead = std::move(ahead);
        kept_.emplace(k, std::move(c));
        kept_bytes_ += copy;
        peak_kept_bytes_ = std::max(peak_kept_bytes_, kept_bytes_);
        return {};
    }
    stage_from(k, chunk, std::move(ahead), l);
    return staged_[k];
}

void OrderedStaging::stage_from(std::size_t k,
                                ByteSpan chunk,
                                std::shared_ptr<const FrameInternal::Ahead> ahead,
                                std::unique_lock<std::mutex>& l) {
    Kept held;
    for (;;) {
        // Staged without the lock: the threads that finish meanwhile keep their chunks.
        l.unlock();
        StagedChunk s;
        try {
            s = FrameInternal::stage(frame_, chunk, ahead.get());
        } catch (...) {
            l.lock();
            failed_ = true;
            SparePool::get().give(std::move(held.bytes));
            turn_.notify_all();
            throw;
        }
        l.lock();
        staged_[k] = s;
        SparePool::get().give(std::move(held.bytes));
        held = {};
        next_ = k + 1;
        turn_.notify_all();
        const auto it = kept_.find(next_);
        if (it == kept_.end()) {
            return;
        }
        held = std::move(it->second);
        kept_.erase(it);
        kept_bytes_ -= held.owner ? 0 : held.chunk.size();
        k = next_;
        chunk = held.chunk;
        ahead = std::move(held.ahead);
    }
}

void OrderedStaging::abandon() {
    std::lock_guard<std::mutex> l(mutex_);
    failed_ = true;
    turn_.notify_all();
}

void OrderedStaging::run(int threads, const std::function<void(std::size_t)>& body) {
    struct Running {
        OrderedStaging& o;
        explicit Running(OrderedStaging& s) : o(s) {
            std::lock_guard<std::mutex> l(o.mutex_);
            o.running_ = true;
        }
        ~Running() {
            std::lock_guard<std::mutex> l(o.mutex_);
            o.running_ = false;
        }
        Running(const Running&) = delete;
        Running& operator=(const Running&) = delete;
    } running(*this);
    b2nd::detail::parallel_for(staged_.size(), threads, [&](std::size_t k) {
        try {
            body(k);
        } catch (...) {
            abandon();
            throw;
        }
        bool handed = false;
        {
            std::lock_guard<std::mutex> l(mutex_);
            handed = handed_[k] != 0;
        }
        if (!handed) {
            abandon();  // take() says so
        }
    });
}

std::size_t OrderedStaging::peak_kept_bytes() const {
    std::lock_guard<std::mutex> l(mutex_);
    return peak_kept_bytes_;
}

std::vector<StagedChunk> OrderedStaging::take() {
    std::lock_guard<std::mutex> l(mutex_);
    if (failed_ || next_ != staged_.size()) {
        throw std::logic_error("ordered staging: " + std::to_string(staged_.size() - next_) +
                               " chunks were not staged");
    }
    return std::move(staged_);
}

}  // namespace b2nd::storage::detail
