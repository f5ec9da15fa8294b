// Internal: reads of arrays whose frame is fetched over a network (storage::Frame::remote()).
//
// A read names, per touched chunk, the blocks it will decode (chunk_blocks), so that only their
// bytes are fetched. Small reads fetch everything they need up front, in two batches of
// requests (Frame::fetch); large reads in order have a RemoteAhead fetch a few chunks ahead
// of the decoding threads, so that the transfer of the next chunks overlaps the decoding of
// these.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include <b2nd/grid.hpp>
#include <b2nd/storage/frame.hpp>

namespace b2nd::detail {

class BoxPlan;
class ChunkSource;

/// The blocks each chunk task of `plan` touches, in the plan's order (no blocks: all of them).
std::vector<storage::ChunkBlocks> touched_blocks(const Grid& g, const BoxPlan& plan);

/// Fetches `wants` of a remote frame in order, on threads of its own (a chunk each, several in
/// flight), at most `ahead` chunks past the one its reader has reached. A failed fetch stops it
/// (the reader's own fetch of that chunk reports the error). Destroying it stops it and waits
/// for the fetches in flight.
class RemoteAhead {
public:
    RemoteAhead(const ChunkSource& source,
                std::vector<storage::ChunkBlocks> wants,
                std::size_t ahead);
    ~RemoteAhead();
    RemoteAhead(const RemoteAhead&) = delete;
    RemoteAhead& operator=(const RemoteAhead&) = delete;
    /// The reader is at want t.
    void reached(std::size_t t);

private:
    void run();

    const ChunkSource& source_;
    std::vector<storage::ChunkBlocks> wants_;
    std::size_t ahead_;
    std::mutex mutex_;
    std::condition_variable moved_;
    std::size_t reached_ = 0;
    std::size_t next_ = 0;  // the next want to fetch
    bool stop_ = false;
    std::vector<std::thread> threads_;
};

}  // namespace b2nd::detail
