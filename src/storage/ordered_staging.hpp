// Internal: chunks made in parallel, staged in the order of their tasks (DESIGN.md section 5).
// Threads finish chunks in any order, and Frame::stage places each after the last one staged.
// So that a write's file holds the same bytes for any number of threads (and, for the same
// parameters, the bytes c-blosc2 writes), chunk k is staged only after chunks 0..k-1: a chunk
// finished before its turn is kept in memory (a copy) and staged by the thread whose chunk
// comes before it, right after its own. No thread ever waits for another: tasks are handed out
// in order, so what is kept is what the other threads make while one chunk is being made.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <b2nd/byte_span.hpp>
#include <b2nd/storage/frame.hpp>

#include "../detail/memory.hpp"

namespace b2nd::storage::detail {

class OrderedStaging {
public:
    /// Stages `n` tasks' chunks in `frame`.
    OrderedStaging(Frame& frame, std::size_t n);
    OrderedStaging(const OrderedStaging&) = delete;
    OrderedStaging& operator=(const OrderedStaging&) = delete;
    ~OrderedStaging();

    /// Task k's chunk, staged in its turn. Returns what Frame::stage said once it is staged, or
    /// an empty StagedChunk while it is kept for its turn: take() gives every task's. The bytes
    /// need to stay valid during the call only (they are copied to be kept), or as long as
    /// `owner` lives when one is given (they are kept as they are: chunks copied as stored).
    StagedChunk stage(std::size_t k, ByteSpan chunk, std::shared_ptr<const void> owner = nullptr);

    /// Every task's staged chunk, in task order (after every task staged its chunk).
    std::vector<StagedChunk> take();

private:
    struct Kept {
        b2nd::detail::Scratch bytes;        ///< a copy, or
        std::shared_ptr<const void> owner;  ///< what keeps `chunk` valid
        ByteSpan chunk;
    };
    /// Stages chunk k and then every kept chunk whose turn follows; `l` holds mutex_.
    void stage_from(std::size_t k, ByteSpan chunk, std::unique_lock<std::mutex>& l);

    Frame& frame_;
    std::vector<StagedChunk> staged_;
    std::size_t next_ = 0;              ///< the task whose chunk is staged next
    std::map<std::size_t, Kept> kept_;  ///< chunks made before their turn
    bool failed_ = false;               ///< a stage() failed: nothing more is staged
    std::mutex mutex_;
};

}  // namespace b2nd::storage::detail
