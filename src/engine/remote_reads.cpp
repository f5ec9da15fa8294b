// Reads of remote frames (remote_reads.hpp).
#include "remote_reads.hpp"

#include <algorithm>

#include "../select/box_plan.hpp"

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

RemoteAhead::RemoteAhead(const storage::Frame& frame,
                         std::vector<storage::ChunkBlocks> wants,
                         std::size_t ahead)
    : frame_(frame), wants_(std::move(wants)), ahead_(std::max<std::size_t>(ahead, 1)) {
    thread_ = std::thread([this] { run(); });
}

RemoteAhead::~RemoteAhead() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    moved_.notify_all();
    thread_.join();
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
    // Two chunks per batch: the first batch arrives soon, and each later one is in flight while
    // the chunks before it decode.
    constexpr std::size_t kBatch = 2;
    for (std::size_t k = 0; k < wants_.size(); k += kBatch) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            moved_.wait(lock, [&] { return stop_ || k <= reached_ + ahead_; });
            if (stop_) {
                return;
            }
        }
        const auto end = static_cast<std::ptrdiff_t>(std::min(k + kBatch, wants_.size()));
        try {
            frame_.fetch({wants_.begin() + static_cast<std::ptrdiff_t>(k), wants_.begin() + end});
        } catch (...) {  // NOLINT(bugprone-empty-catch): the reader's own fetch reports it
            return;
        }
    }
}

}  // namespace b2nd::detail
