// Internal: chunks made in parallel, staged in the order of their tasks (DESIGN.md section 5).
// Threads finish chunks in any order, and Frame::stage places each after the last one staged.
// So that a write's file holds the same bytes for any number of threads (and, for the same
// parameters, the bytes c-blosc2 writes), chunk k is staged only after chunks 0..k-1: a chunk
// finished before its turn is kept in memory (a copy) and staged by the thread whose chunk
// comes before it, right after its own. Tasks are handed out in order, so what is kept is what
// the other threads make while one chunk is being made: little, unless that chunk costs far more
// than the others or its thread is held up. Copies are bounded: past the bound, a thread waits
// for its chunk's turn (only in tasks run by run(), where a task that fails releases the
// waiters).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <b2nd/byte_span.hpp>
#include <b2nd/storage/frame.hpp>

#include "../detail/memory.hpp"
#include "block_seals.hpp"
#include "frame_internal.hpp"

namespace b2nd::storage::detail {

class OrderedStaging {
public:
    /// What copies of chunks made before their turn may hold at once, by default.
    static constexpr std::size_t kKeepBytes = std::size_t{256} << 20;

    /// Stages `n` tasks' chunks in `frame`, keeping at most `keep_bytes` of copies (chunks kept
    /// through their owner do not count).
    OrderedStaging(Frame& frame, std::size_t n, std::size_t keep_bytes = kKeepBytes);
    OrderedStaging(const OrderedStaging&) = delete;
    OrderedStaging& operator=(const OrderedStaging&) = delete;
    ~OrderedStaging();

    /// Task k's chunk, staged in its turn. Returns what Frame::stage said once it is staged, or
    /// an empty StagedChunk while it is kept for its turn: take() gives every task's. The bytes
    /// need to stay valid during the call only (they are copied to be kept), or as long as
    /// `owner` lives when one is given (they are kept as they are: chunks copied as stored).
    /// The chunk is sealed for the checksum table here, on the calling thread, before its turn,
    /// with what `hint` gives of its seal.
    StagedChunk stage(std::size_t k,
                      ByteSpan chunk,
                      const detail::SealHint& hint = {},
                      std::shared_ptr<const void> owner = nullptr);

    /// Runs the tasks, body(k) for k = 0..n-1, on up to `threads` threads (parallel_for, which
    /// hands tasks out in order); each must stage its chunk. Only here does a chunk past the
    /// bound wait for its turn: a task that throws, or returns without staging, abandons the
    /// staging (waiting threads return, nothing more is staged), and its exception propagates.
    void run(int threads, const std::function<void(std::size_t)>& body);

    /// Every task's staged chunk, in task order (after every task staged its chunk).
    std::vector<StagedChunk> take();

    /// The number of tasks.
    std::size_t size() const noexcept { return staged_.size(); }

    /// The most bytes of copies kept at once so far (for tests).
    std::size_t peak_kept_bytes() const;

private:
    struct Kept {
        b2nd::detail::Scratch bytes;        ///< a copy, or
        std::shared_ptr<const void> owner;  ///< what keeps `chunk` valid
        ByteSpan chunk;
        std::shared_ptr<const FrameInternal::Ahead> ahead;  ///< its seal, made by its thread
    };
    /// Stages chunk k (sealed ahead as `ahead`) and then every kept chunk whose turn follows;
    /// `l` holds mutex_.
    void stage_from(std::size_t k,
                    ByteSpan chunk,
                    std::shared_ptr<const FrameInternal::Ahead> ahead,
                    std::unique_lock<std::mutex>& l);
    /// Nothing more is staged; waiting threads return.
    void abandon();

    Frame& frame_;
    std::vector<StagedChunk> staged_;
    // Per task: staged or kept (not derived from next_ and kept_: a kept chunk leaves kept_
    // while it is being staged, before next_ passes it).
    std::vector<char> handed_;
    std::size_t next_ = 0;              ///< the task whose chunk is staged next
    std::map<std::size_t, Kept> kept_;  ///< chunks made before their turn
    std::size_t keep_bytes_;            ///< the bound on copies kept
    std::size_t kept_bytes_ = 0;        ///< copies kept now
    std::size_t peak_kept_bytes_ = 0;
    bool running_ = false;  ///< inside run(): a chunk past the bound waits for its turn
    bool failed_ = false;   ///< a stage() failed or a task was abandoned: nothing more is staged
    mutable std::mutex mutex_;
    std::condition_variable turn_;  ///< next_ moved, copies were staged, or failed_
};

}  // namespace b2nd::storage::detail
