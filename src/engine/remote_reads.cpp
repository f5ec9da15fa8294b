// Reads of remote frames (remote_reads.hpp).
#include "remote_reads.hpp"

#include <algorithm>

#include "../select/box_plan.hpp"
#include "chunk_source.hpp"

namespace b2nd::detail {

std::vector<storage::ChunkBlocks> touched_blocks(const Grid& g, const BoxPlan& plan) {
    std::vector<storage::ChunkBlocks> out;
    out.reserve(plan.chunks().size());
    const std::int64_t walk[kMaxNdim] = {};
    for (const ChunkTask& ct : plan.chunks()) {
        storage::ChunkBlocks w;
        w.chunk = ct.ci;
        if (ct.nblocks < g.nblocks()) {
            w.blocks.reserve(static_cast<std::size_t>(ct.nblocks));
            for (std::int64_t k = 0; k < ct.nblocks; ++k) {
                w.blocks.push_back(static_cast<std::int32_t>(plan.part(ct, k, walk).block));
            }
        }
        out.push_back(std::move(w));
    }
    return out;
}

RemoteAhead::RemoteAhead(const ChunkSource& source,
                         std::vector<storage::ChunkBlocks> wants,
                         std::size_t ahead)
    : source_(source), wants_(std::move(wants)), ahead_(std::max<std::size_t>(ahead, 1)) {
    // A few requests in flight keep a connection's worth of bytes arriving while the chunks
    // before them decode; each thread waits on the network, not on a core.
    constexpr std::size_t kInFlight = 4;
    for (std::size_t t = 0; t < std::min(kInFlight, wants_.size()); ++t) {
        threads_.emplace_back([this] { run(); });
    }
}

RemoteAhead::~RemoteAhead() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    moved_.notify_all();
    for (std::thread& t : threads_) {
        t.join();
    }
}

void RemoteAhead::reached(std::size_t t) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (t <= reached_) {
            return;
        }
        reached_ = t;
    }
    moved_.notify_all();
}

void RemoteAhead::run() {
    for (;;) {
        std::size_t k = 0;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            moved_.wait(lock, [&] {
                return stop_ || next_ >= wants_.size() || next_ <= reached_ + ahead_;
            });
            if (stop_ || next_ >= wants_.size()) {
                return;
            }
            k = next_++;
        }
        try {
            source_.fetch({wants_[k]});
        } catch (...) {  // NOLINT(bugprone-empty-catch): the reader's own fetch reports it
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
            moved_.notify_all();
            return;
        }
    }
}

}  // namespace b2nd::detail
