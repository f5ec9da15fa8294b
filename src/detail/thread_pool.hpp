// Internal: a small shared thread pool for data-parallel loops.
//
// Why our own and not oneTBB: the library needs one primitive, "run f(i) for i in [0, n) on up to
// k threads, the caller included", with no scheduler state to configure and no extra runtime
// dependency for users. The caller always takes part, so nested calls cannot deadlock.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace b2nd::detail {

class ThreadPool {
public:
    /// The process-wide pool (hardware_concurrency - 1 workers, at least 1), started lazily.
    static ThreadPool& shared();

    explicit ThreadPool(unsigned workers);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    /// Runs fn(i) for every i in [0, n) on up to `nthreads` threads including the caller, and
    /// returns when all are done. The first exception thrown by fn is rethrown here (remaining
    /// iterations are skipped).
    void parallel_for(std::size_t n, int nthreads, const std::function<void(std::size_t)>& fn);

    unsigned workers() const noexcept { return static_cast<unsigned>(threads_.size()); }

private:
    struct Job;
    void worker_loop();
    static void run_iterations(Job& job);

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Job*> queue_;
    std::vector<std::thread> threads_;
    bool stop_ = false;
    // Jobs in the queue, readable without the mutex: an idle worker watches it for a short while
    // before it sleeps, so that a request arriving right after the last one starts at once
    // rather than after a wake-up (tens of microseconds in a virtual machine).
    std::atomic<int> queued_{0};
    int sleeping_ = 0;  // workers waiting on wake_ (guarded by mutex_)
};

/// Convenience: ThreadPool::shared().parallel_for, or a plain loop when nthreads <= 1 or n <= 1.
void parallel_for(std::size_t n, int nthreads, const std::function<void(std::size_t)>& fn);

}  // namespace b2nd::detail
