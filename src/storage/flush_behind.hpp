// Internal: written bytes flushed to the disk in the background while writing goes on
// (OpenOptions::flush_behind). A new array is built without fsyncs and made durable once, at the
// end; that last fsync then waits for the whole file to reach the disk (on a virtual machine the
// host flushes it then, at a few GB/s at best). Flushing what is written every few tens of MiB on a
// thread of its own, which waits on the disk without using a core, leaves that fsync little to do.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace b2nd::storage::detail {

class FlushBehind {
public:
    /// Flushes once `every` bytes written wait for it.
    explicit FlushBehind(std::uint64_t every = std::uint64_t{32} << 20);
    FlushBehind(const FlushBehind&) = delete;
    FlushBehind& operator=(const FlushBehind&) = delete;
    /// Stops the thread (a flush in progress ends first).
    ~FlushBehind();

    /// `bytes` more were written to the file at `path`.
    void wrote(const std::string& path, std::uint64_t bytes);
    /// Waits for the flush in progress or due, if any; throws the IoError of one that failed since
    /// the last call (its error would otherwise be lost: the kernel reports a failed writeback to
    /// one fsync only).
    void finish();
    /// Flushes of a file done so far.
    std::uint64_t flushes() const;

private:
    void run();

    const std::uint64_t every_;
    mutable std::mutex mutex_;
    std::condition_variable wake_, idle_;
    std::map<std::string, std::uint64_t> pending_;  ///< bytes written and not yet flushed, by file
    std::uint64_t pending_bytes_ = 0;
    bool busy_ = false;
    bool stop_ = false;
    std::string error_;  ///< the first failed flush's message
    int error_code_ = 0;
    std::uint64_t flushes_ = 0;
    std::thread thread_;  ///< started by the first wrote()
};

}  // namespace b2nd::storage::detail
