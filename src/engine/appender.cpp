// Appenders (appender.hpp): the row being filled held in memory as its chunks' images (pushed
// slabs copied straight into their blocks), full rows handed to encoder threads (as many as the
// array has threads, a row each) and from them, in order, to a writer that stages each row in
// the frame and commits what it staged at flush, close and every commit interval; bounded
// queues between them, buffers recycled so that memory is touched once.
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <b2nd/appender.hpp>
#include <b2nd/error.hpp>

#include "../detail/text.hpp"
#include "../select/strided_copy.hpp"
#include "array_core.hpp"
#include "chunk_rows.hpp"
#include "engine_access.hpp"
#include <unistd.h>

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

/// A full row waiting to be encoded: its chunk images.
struct RawRow {
    std::int64_t row_start = 0;
    detail::BigBuffer images;
};

/// A full row encoded, waiting to be committed.
struct CodedRow {
    std::int64_t row_start = 0;
    detail::EncodedRow row;
};

}  // namespace

struct AnyAppender::State {
    using Clock = std::chrono::steady_clock;
    AnyArray array;
    detail::ArrayCore* core = nullptr;
    int axis = 0;
    AppendOptions o;
    std::int64_t cs = 0;         // the chunk's extent along the axis
    std::int64_t slab = 0;       // bytes of one slab
    Grid full;                   // a full row's grid (row_grid)
    bool padded = false;         // the full row's chunks have padding (the array's edges)
    std::size_t row_bytes = 0;   // the chunk images of a row
    bool stream = false;         // rows far larger than the caches: written past them
    std::int64_t row_start = 0;  // where the row being filled starts
    std::int64_t in_row = 0;     // slabs in it
    std::int64_t committed = 0;  // the length last committed here
    detail::BigBuffer row;       // the row being filled
    std::optional<detail::RowScatter> scatter;  // how pushed slabs go into it
    bool closed = false;

    // Full rows go to the encoders (at most o.queue wait), encoded rows to the writer (at most
    // one per encoder waits, but the next one it needs), which stages them in order and commits
    // what it staged when o.commit_interval has passed: rows are encoded while the ones before
    // them are written.
    std::vector<std::thread> encoders;  // the array's threads, a row each
    std::thread writer;
    std::mutex m;
    std::condition_variable cv;
    std::deque<RawRow> raw;
    std::map<std::int64_t, CodedRow> coded;  // by row_start; the writer takes them in order
    std::int64_t next_stage = 0;             // the row the writer stages next
    std::vector<detail::BigBuffer> spare_raw;
    std::vector<detail::EncodedRow> spare_coded;
    int encoding = 0;  // encoders at work
    bool writing = false;
    bool flushing = false;  // flush() stages and commits itself: the writer waits
    bool stopping = false;
    std::int64_t per_row = 1;                   // chunks in a row
    std::int64_t pending_first = 0;             // where the rows staged since the last commit start
    std::vector<storage::StagedChunk> pending;  // their chunks, row after row
    Clock::time_point last_commit = Clock::now();
    std::exception_ptr error;

    std::string where() const { return detail::quoted_path(array.name()); }

    detail::BigBuffer fresh_row() {
        std::lock_guard<std::mutex> lock(m);
        if (!spare_raw.empty()) {
            detail::BigBuffer b = std::move(spare_raw.back());
            spare_raw.pop_back();
            return b;
        }
        return detail::BigBuffer(row_bytes);
    }

    /// What encoding or committing a row threw: thrown again by every later call (the rows
    /// after it cannot be committed).
    void rethrow_error() const {
        if (error) {
            std::rethrow_exception(error);
        }
    }

    void fail(std::unique_lock<std::mutex>& lock) {
        lock.lock();
        if (!error) {
            error = std::current_exception();
        }
        lock.unlock();
    }

    void encode_rows() {
        std::unique_lock<std::mutex> lock(m);
        for (;;) {
            cv.wait(lock, [&] { return stopping || !raw.empty(); });
            if (raw.empty()) {
                return;
            }
            RawRow job = std::move(raw.front());
            raw.pop_front();
            // A row alone (none waiting, no other encoder at work: the first row, or a caller
            // slower than the encoders) is encoded on all the array's threads, for its latency;
            // rows that queue up are encoded side by side, one thread each.
            const int threads =
                raw.empty() && encoding == 0 ? static_cast<int>(encoders.size()) : 1;
            ++encoding;
            CodedRow out{job.row_start, {}};
            if (!spare_coded.empty()) {
                out.row = std::move(spare_coded.back());
                spare_coded.pop_back();
            }
            const bool skip = error != nullptr;
            lock.unlock();
            bool made = false;
            try {
                if (!skip) {
                    if (padded) {
                        detail::pad_row(full, job.images.data());
                    }
                    core->encode_row(full, job.images.data(), out.row, threads);
                    made = true;
                }
            } catch (...) {
                fail(lock);
            }
            lock.lock();
            spare_raw.push_back(std::move(job.images));
            cv.notify_all();
            if (made) {
                // At most one row per encoder waits; the row the writer needs next always enters.
                cv.wait(lock, [&] {
                    return coded.size() < encoders.size() || out.row_start == next_stage ||
                           error != nullptr;
                });
            }
            if (made && error == nullptr) {
                const std::int64_t at = out.row_start;
                coded.emplace(at, std::move(out));
            } else {  // (after an error, rows are dropped: the row that failed never comes)
                spare_coded.push_back(std::move(out.row));
            }
            --encoding;
            cv.notify_all();
        }
    }

    /// Whether the rows staged since the last commit are due to be committed (never after an
    /// error: they cannot be).
    bool commit_due() const { return error == nullptr && interval_passed(); }
    /// Whether no row is waiting or being encoded, and every row encoded was staged (or an
    /// error stopped everything: rows after the one that failed are never staged).
    bool idle() const {
        return raw.empty() && encoding == 0 && (coded.empty() || error != nullptr);
    }
    /// Whether the row the writer stages next is encoded.
    bool next_ready() const { return !coded.empty() && coded.begin()->first == next_stage; }
    /// Whether rows are staged and the interval since the last commit has passed (the writer's
    /// thread only: reads nothing else does).
    bool interval_passed() const {
        return !pending.empty() &&
               (o.commit_interval.count() <= 0 || Clock::now() >= last_commit + o.commit_interval);
    }

    /// Commits the rows staged since the last commit, with the array's length `length`.
    void commit_pending(std::int64_t length) {
        core->commit_rows(axis, pending_first, length, pending);
        pending.clear();
        pending_first = length / cs * cs;
        last_commit = Clock::now();
    }

    void write_rows() {
        std::unique_lock<std::mutex> lock(m);
        for (;;) {
            const auto ready = [&] {
                return !flushing && (next_ready() || commit_due() || (stopping && idle()));
            };
            // (While a flush runs, it alone touches `pending` and `last_commit`: not read here.)
            if (!flushing && !pending.empty() && o.commit_interval.count() > 0) {
                cv.wait_until(lock, last_commit + o.commit_interval, ready);
            } else {
                cv.wait(lock, ready);
            }
            if (!ready()) {
                continue;  // woken at the deadline while a flush runs
            }
            writing = true;
            const bool skip = error != nullptr;
            std::optional<CodedRow> job;
            if (next_ready()) {
                job = std::move(coded.begin()->second);
                coded.erase(coded.begin());
                cv.notify_all();
            } else if (!commit_due()) {
                writing = false;
                return;  // stopping, and nothing left
            }
            lock.unlock();
            try {
                if (job && !skip) {
                    core->stage_row(job->row, pending);
                }
                if (!skip && interval_passed()) {
                    commit_pending(pending_first +
                                   static_cast<std::int64_t>(pending.size()) / per_row * cs);
                }
            } catch (...) {
                fail(lock);
            }
            lock.lock();
            if (job) {
                spare_coded.push_back(std::move(job->row));
                next_stage += cs;
            }
            writing = false;
            cv.notify_all();
        }
    }

    /// Waits until every full row is committed (or abandoned after an error).
    void drain(std::unique_lock<std::mutex>& lock) {
        cv.wait(lock, [&] { return idle() && !writing; });
    }

    /// Stops and joins the threads (after close() or a failed construction).
    void stop() noexcept {
        {
            std::lock_guard<std::mutex> lock(m);
            stopping = true;
        }
        cv.notify_all();
        for (std::thread& t : encoders) {
            if (t.joinable()) {
                t.join();
            }
        }
        if (writer.joinable()) {
            writer.join();
        }
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
    const Grid& g = s.core->grid();
    const auto ax = static_cast<std::size_t>(axis);
    s.cs = g.chunk_shape()[ax];
    s.full = detail::row_grid(g, axis, s.cs);
    for (std::int64_t ci = 0; ci < s.full.nchunks(); ++ci) {
        s.padded = s.padded || s.full.chunk_padded(ci);
    }
    s.scatter.emplace(s.full, axis);
    s.per_row = s.full.nchunks();
    s.row_bytes = static_cast<std::size_t>(s.per_row * s.full.chunk_nbytes());
    if (s.row_bytes == 0) {
        throw UsageError(where + ": append: the array's slabs along axis " + detail::num(axis) +
                         " hold no elements (shape " + to_string(g.shape()) + ")");
    }
    // Rows that memory cannot hold are refused here, not by the kernel's OOM killer later.
    const auto pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    const double held = static_cast<double>(o.queue + 2) * static_cast<double>(s.row_bytes);
    if (pages > 0 && page > 0 && held > static_cast<double>(pages) * static_cast<double>(page)) {
        throw UsageError(where + ": append: a row of chunks along axis " + detail::num(axis) +
                         " holds " + detail::num(static_cast<std::int64_t>(s.row_bytes)) +
                         " bytes, and an appender holds at least " +
                         detail::num(static_cast<std::int64_t>(o.queue + 2)) +
                         " rows: more than this machine's memory (smaller chunks across the "
                         "axis, or a smaller AppendOptions::queue)");
    }
    s.stream = s.row_bytes >= detail::kStreamingBytes / 4;
    s.slab = s.array.itemsize();
    for (int d = 0; d < nd; ++d) {
        if (d != axis) {
            s.slab *= g.shape()[static_cast<std::size_t>(d)];
        }
    }
    const std::int64_t length = g.shape()[ax];
    s.row_start = length / s.cs * s.cs;
    s.committed = length;
    s.pending_first = s.row_start;
    s.row = s.fresh_row();
    // Rows are staged long before they are committed: their bytes go to the disk meanwhile.
    storage::FrameInternal::flush_behind(s.core->frame_for_writing());
    const std::int64_t had_rows = length - s.row_start;
    if (had_rows > 0) {
        // The array's partial last row, read once: it is rewritten, whole, with what follows.
        Shape start(static_cast<std::size_t>(nd), 0), count = g.shape();
        start[ax] = s.row_start;
        count[ax] = had_rows;
        const Box box = Box::region(start, count);
        std::vector<std::uint8_t> had(static_cast<std::size_t>(box.size() * s.array.itemsize()));
        s.array.read(box, had.data(), had.size());
        (*s.scatter)(had.data(), had_rows, 0, had_rows, 0, s.row.data(), s.stream);
        s.in_row = had_rows;
    }
    s.next_stage = s.row_start;
    try {
        for (int k = 0; k < std::max(1, s.array.nthreads()); ++k) {
            s.encoders.emplace_back([&s] { s.encode_rows(); });
        }
        s.writer = std::thread([&s] { s.write_rows(); });
    } catch (...) {
        s.stop();
        throw;
    }
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
    s_->stop();
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
        const std::int64_t take = std::min(n - done, s.cs - s.in_row);
        (*s.scatter)(data.data(), n, done, take, s.in_row, s.row.data(), s.stream);
        if (s.stream) {
            detail::stream_fence();  // before the encoder's thread reads the row
        }
        s.in_row += take;
        done += take;
        if (s.in_row == s.cs) {
            std::unique_lock<std::mutex> lock(s.m);
            s.cv.wait(lock, [&] {
                return static_cast<int>(s.raw.size()) < s.o.queue || s.error != nullptr;
            });
            s.rethrow_error();
            s.raw.push_back(RawRow{s.row_start, std::move(s.row)});
            lock.unlock();
            s.cv.notify_all();
            s.row = s.fresh_row();
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
        s.flushing = true;
    }
    const std::int64_t length = s.row_start + s.in_row;
    try {
        if (s.in_row > 0 && length != s.committed) {
            // The partial row, encoded and staged here (the threads wait): its padding along
            // the axis is overwritten by the slabs pushed next, and the row staged again.
            const Grid part = detail::row_grid(s.core->grid(), s.axis, s.in_row);
            detail::pad_row(part, s.row.data());
            detail::EncodedRow coded;
            s.core->encode_row(part, s.row.data(), coded);
            s.core->stage_row(coded, s.pending);
        }
        if (!s.pending.empty()) {
            s.commit_pending(length);
        }
    } catch (...) {
        std::unique_lock<std::mutex> lock(s.m, std::defer_lock);
        s.fail(lock);
        lock.lock();
        s.flushing = false;
        s.cv.notify_all();
        throw;
    }
    std::lock_guard<std::mutex> lock(s.m);
    s.flushing = false;
    s.committed = length;
    s.cv.notify_all();
}

void AnyAppender::close() {
    State& s = *s_;
    if (s.closed) {
        return;
    }
    flush();
    s.closed = true;
    s.stop();
}

std::int64_t AnyAppender::length() const noexcept {
    return s_->row_start + s_->in_row;
}

std::int64_t AnyAppender::slab_bytes() const noexcept {
    return s_->slab;
}

int AnyAppender::axis() const noexcept {
    return s_->axis;
}

const AnyArray& AnyAppender::array() const noexcept {
    return s_->array;
}

}  // namespace b2nd
