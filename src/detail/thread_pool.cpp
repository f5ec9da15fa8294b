#include "thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>

namespace b2nd::detail {

struct ThreadPool::Job {
    std::size_t n;
    const std::function<void(std::size_t)>* fn;
    std::atomic<std::size_t> next{0};
    int helpers_wanted = 0;  // workers that may still join (guarded by the pool mutex)
    int helpers_active = 0;  // workers inside run_iterations (guarded by the pool mutex)
    std::condition_variable done;
    std::mutex error_mutex;
    std::exception_ptr error;
};

ThreadPool& ThreadPool::shared() {
    static ThreadPool pool([] {
        const unsigned hc = std::thread::hardware_concurrency();
        return hc > 1 ? hc - 1 : 1U;
    }());
    return pool;
}

ThreadPool::ThreadPool(unsigned workers) {
    threads_.reserve(workers);
    for (unsigned i = 0; i < workers; ++i) {
        threads_.emplace_back([this] { worker_loop(); });
    }
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) {
        t.join();
    }
}

void ThreadPool::run_iterations(Job& job) {
    for (;;) {
        const std::size_t i = job.next.fetch_add(1, std::memory_order_relaxed);
        if (i >= job.n) {
            return;
        }
        try {
            (*job.fn)(i);
        } catch (...) {
            std::lock_guard<std::mutex> lock(job.error_mutex);
            if (!job.error) {
                job.error = std::current_exception();
            }
            job.next.store(job.n, std::memory_order_relaxed);
        }
    }
}

void ThreadPool::worker_loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        if (queue_.empty() && !stop_) {
            // Watch for work for about 50 microseconds before sleeping.
            lock.unlock();
            const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
            while (queued_.load(std::memory_order_acquire) == 0 &&
                   std::chrono::steady_clock::now() < until) {
                std::this_thread::yield();
            }
            lock.lock();
        }
        ++sleeping_;
        wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        --sleeping_;
        if (stop_) {
            return;
        }
        Job* job = queue_.front();
        if (--job->helpers_wanted == 0) {
            queue_.pop_front();
            queued_.fetch_sub(1, std::memory_order_relaxed);
        }
        ++job->helpers_active;
        lock.unlock();
        run_iterations(*job);
        lock.lock();
        if (--job->helpers_active == 0) {
            job->done.notify_all();
        }
    }
}

void ThreadPool::parallel_for(std::size_t n,
                              int nthreads,
                              const std::function<void(std::size_t)>& fn) {
    Job job;
    job.n = n;
    job.fn = &fn;
    const auto helpers = static_cast<int>(std::min<std::size_t>(
        {static_cast<std::size_t>(std::max(nthreads, 1) - 1), threads_.size(), n > 0 ? n - 1 : 0}));
    if (helpers > 0) {
        int sleeping = 0;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            job.helpers_wanted = helpers;
            queue_.push_back(&job);
            queued_.fetch_add(1, std::memory_order_release);
            sleeping = sleeping_;
        }
        // Workers watching the queue take the job without a wake-up.
        if (sleeping > 0) {
            if (helpers == 1) {
                wake_.notify_one();
            } else {
                wake_.notify_all();
            }
        }
    }
    run_iterations(job);
    if (helpers > 0) {
        std::unique_lock<std::mutex> lock(mutex_);
        // Workers that have not picked the job up yet must not find it any more.
        if (job.helpers_wanted > 0) {
            queue_.erase(std::find(queue_.begin(), queue_.end(), &job));
            queued_.fetch_sub(1, std::memory_order_relaxed);
            job.helpers_wanted = 0;
        }
        job.done.wait(lock, [&job] { return job.helpers_active == 0; });
    }
    if (job.error) {
        std::rethrow_exception(job.error);
    }
}

void parallel_for(std::size_t n, int nthreads, const std::function<void(std::size_t)>& fn) {
    if (nthreads <= 1 || n <= 1) {
        for (std::size_t i = 0; i < n; ++i) {
            fn(i);
        }
        return;
    }
    ThreadPool::shared().parallel_for(n, nthreads, fn);
}

}  // namespace b2nd::detail
