// Appenders (appender.hpp): the row being filled in memory, full rows handed to a worker that
// encodes (on the array's threads) and commits each with the array's new length, a bounded queue
// between them, buffers recycled so that memory is touched once.
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include <b2nd/appender.hpp>
#include <b2nd/error.hpp>

#include "../detail/text.hpp"
#include "array_core.hpp"
#include "engine_access.hpp"

namespace b2nd {

namespace detail {

void require_native_order(const AnyArray& a, const char* what) {
    const char order = a.dtype().byteorder();
    const std::uint16_t probe = 1;
    std::uint8_t first = 0;
    std::memcpy(&first, &probe, 1);
    const char native = first == 1 ? '<' : '>';
    if (order != '|' && order != '=' && order != native && !a.dtype().is_structured()) {
        throw UsageError(quoted_path(a.name()) + ": " + what + "<T> pushes native values; the " +
                         "array's items are " + a.dtype().str() +
                         " (AnyAppender pushes bytes in the array's order)");
    }
}

}  // namespace detail

namespace {

/// A full row waiting to be committed.
struct Job {
    std::int64_t row_start = 0;
    std::vector<std::uint8_t> rows;
};

}  // namespace

struct AnyAppender::State {
    AnyArray array;
    detail::ArrayCore* core = nullptr;
    int axis = 0;
    AppendOptions o;
    std::int64_t cs = 0;         // the chunk's extent along the axis
    std::int64_t outer = 1;      // the extents before the axis, multiplied
    std::int64_t inner = 0;      // bytes of the extents after it, times the item size
    std::int64_t slab = 0;       // bytes of one slab
    std::int64_t row_start = 0;  // where the row being filled starts
    std::int64_t in_row = 0;     // slabs in it
    std::int64_t committed = 0;  // the length last committed here
    std::vector<std::uint8_t> row;
    bool closed = false;

    std::thread worker;
    std::mutex m;
    std::condition_variable cv;
    std::deque<Job> queue;
    std::vector<std::vector<std::uint8_t>> spare;
    bool busy = false;
    bool stopping = false;
    std::exception_ptr error;

    std::string where() const { return detail::quoted_path(array.name()); }

    std::vector<std::uint8_t> fresh_row() {
        if (!spare.empty()) {
            std::vector<std::uint8_t> b = std::move(spare.back());
            spare.pop_back();
            return b;
        }
        return std::vector<std::uint8_t>(static_cast<std::size_t>(cs * slab));
    }

    /// What encoding or committing a row threw: thrown again by every later call (the rows
    /// after it cannot be committed).
    void rethrow_error() const {
        if (error) {
            std::rethrow_exception(error);
        }
    }

    void run() {
        std::unique_lock<std::mutex> lock(m);
        for (;;) {
            cv.wait(lock, [&] { return stopping || !queue.empty(); });
            if (queue.empty()) {
                return;
            }
            Job job = std::move(queue.front());
            queue.pop_front();
            busy = true;
            lock.unlock();
            try {
                if (!error) {
                    core->set_row(axis, job.row_start, cs, cs, job.rows.data());
                }
            } catch (...) {
                lock.lock();
                error = std::current_exception();
                lock.unlock();
            }
            lock.lock();
            busy = false;
            spare.push_back(std::move(job.rows));
            cv.notify_all();
        }
    }

    /// Waits until every queued row is committed.
    void drain(std::unique_lock<std::mutex>& lock) {
        cv.wait(lock, [&] { return queue.empty() && !busy; });
    }
};

AnyAppender::AnyAppender(AnyArray array, int axis, AppendOptions o)
    : s_(std::make_unique<State>()) {
    State& s = *s_;
    s.array = std::move(array);
    s.o = o;
    s.axis = axis;
    const std::string where = s.where();
    if (!s.array.valid()) {
        throw UsageError("AnyAppender: no array");
    }
    const int nd = s.array.ndim();
    if (axis < 0 || axis >= nd) {
        throw UsageError(where + ": append: axis " + detail::num(axis) + " out of range for " +
                         detail::num(nd) + " dimensions");
    }
    if (o.queue < 1) {
        throw UsageError(where + ": AppendOptions::queue is " + detail::num(o.queue) +
                         "; at least 1 row must be able to wait");
    }
    if (!s.array.writable()) {
        throw UsageError(where + ": append: the array is open read-only (OpenOptions::writable)");
    }
    s.core = &EngineAccess::writable_core(s.array);
    const Shape& shape = s.array.shape();
    const auto ax = static_cast<std::size_t>(axis);
    s.cs = s.array.chunk_shape()[ax];
    s.inner = s.array.itemsize();
    for (int d = 0; d < nd; ++d) {
        const std::int64_t e = shape[static_cast<std::size_t>(d)];
        if (d < axis) {
            s.outer *= e;
        } else if (d > axis) {
            s.inner *= e;
        }
    }
    s.slab = s.outer * s.inner;
    const std::int64_t length = shape[ax];
    s.row_start = length / s.cs * s.cs;
    s.in_row = length - s.row_start;
    s.committed = length;
    s.row = s.fresh_row();
    if (s.in_row > 0) {
        // The array's partial last row, read once: it is rewritten, whole, with what follows.
        Shape start(static_cast<std::size_t>(nd), 0), count = shape;
        start[ax] = s.row_start;
        count[ax] = s.in_row;
        const Box box = Box::region(start, count);
        std::vector<std::uint8_t> had(static_cast<std::size_t>(box.size() * s.array.itemsize()));
        s.array.read(box, had.data(), had.size());
        const std::int64_t run = s.in_row * s.inner;
        for (std::int64_t k = 0; k < s.outer; ++k) {
            std::memcpy(s.row.data() + k * s.cs * s.inner, had.data() + k * run,
                        static_cast<std::size_t>(run));
        }
    }
    s.worker = std::thread([&s] { s.run(); });
}

AnyAppender::~AnyAppender() {
    finish();
}

void AnyAppender::finish() noexcept {
    if (!s_) {
        return;
    }
    try {
        close();
    } catch (...) {
        // close() is where errors are seen; a destructor does not throw
    }
    if (s_->worker.joinable()) {
        {
            std::lock_guard<std::mutex> lock(s_->m);
            s_->stopping = true;
        }
        s_->cv.notify_all();
        s_->worker.join();
    }
}

AnyAppender::AnyAppender(AnyAppender&&) noexcept = default;
AnyAppender& AnyAppender::operator=(AnyAppender&& o) noexcept {
    if (this != &o) {
        finish();
        s_ = std::move(o.s_);
    }
    return *this;
}

void AnyAppender::push(ByteSpan data) {
    State& s = *s_;
    if (s.closed) {
        throw UsageError(s.where() + ": push after close()");
    }
    if (s.slab == 0 || data.size() % static_cast<std::size_t>(s.slab) != 0) {
        throw UsageError(s.where() + ": push of " +
                         detail::num(static_cast<std::int64_t>(data.size())) +
                         " bytes: not a whole number of slabs of " + detail::num(s.slab) +
                         " bytes (the array's shape without axis " + detail::num(s.axis) + ")");
    }
    {
        std::lock_guard<std::mutex> lock(s.m);
        s.rethrow_error();
    }
    const auto n = static_cast<std::int64_t>(data.size() / static_cast<std::size_t>(s.slab));
    std::int64_t done = 0;
    while (done < n) {
        // As many slabs as fit in the row: for each run of the extents before the axis, a copy
        // of `take` slabs' worth (one copy in all for axis 0).
        const std::int64_t take = std::min(n - done, s.cs - s.in_row);
        for (std::int64_t k = 0; k < s.outer; ++k) {
            std::memcpy(s.row.data() + (k * s.cs + s.in_row) * s.inner,
                        data.data() + (k * n + done) * s.inner,
                        static_cast<std::size_t>(take * s.inner));
        }
        s.in_row += take;
        done += take;
        if (s.in_row == s.cs) {
            std::unique_lock<std::mutex> lock(s.m);
            s.cv.wait(lock, [&] {
                return static_cast<int>(s.queue.size()) < s.o.queue || s.error != nullptr;
            });
            s.rethrow_error();
            s.queue.push_back(Job{s.row_start, std::move(s.row)});
            s.row = s.fresh_row();
            lock.unlock();
            s.cv.notify_all();
            s.row_start += s.cs;
            s.in_row = 0;
        }
    }
}

void AnyAppender::flush() {
    State& s = *s_;
    {
        std::unique_lock<std::mutex> lock(s.m);
        s.drain(lock);
        s.rethrow_error();
    }
    const std::int64_t length = s.row_start + s.in_row;
    if (s.in_row > 0 && length != s.committed) {
        s.core->set_row(s.axis, s.row_start, s.in_row, s.cs, s.row.data());
    }
    s.committed = length;
}

void AnyAppender::close() {
    State& s = *s_;
    if (s.closed) {
        return;
    }
    flush();
    s.closed = true;
    {
        std::lock_guard<std::mutex> lock(s.m);
        s.stopping = true;
    }
    s.cv.notify_all();
    s.worker.join();
}

std::int64_t AnyAppender::length() const noexcept {
    return s_->row_start + s_->in_row;
}

std::int64_t AnyAppender::slab_bytes() const noexcept {
    return s_->slab;
}

const AnyArray& AnyAppender::array() const noexcept {
    return s_->array;
}

}  // namespace b2nd
