// Appending at the speed of acquisition: frames, time steps or rows pushed one at a time along
// an axis that grows, each chunk encoded once (docs/appending.md).
//
//   auto a = b2nd::NDArray<std::uint16_t>::create("run.b2nd", {0, 1024, 1024}, options);
//   b2nd::Appender<std::uint16_t> app(a, /*axis=*/0);
//   app.push(frame, 1);   // one 1024 x 1024 frame, C order
//   app.flush();          // everything pushed so far is committed: durable, seen by readers
//   app.close();          // flush and finish (the destructor closes, without throwing)
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include <b2nd/any_array.hpp>
#include <b2nd/ndarray.hpp>

namespace b2nd {

/// How an appender works.
struct AppendOptions {
    /// Full chunk rows (the chunk's extent along the axis, across the whole array) that may
    /// wait to be encoded while the caller pushes on; push() waits when this many do. At
    /// least 1. An appender holds queue + 1 + threads rows of memory, and up to 2 × threads +
    /// 1 rows encoded (threads: the array's), whatever the number of frames.
    int queue = 2;
    /// Full rows are written to the file as soon as they are encoded, and committed (the
    /// array's length grows: readers see them, and they are durable when the array is) by
    /// flush(), close(), and on their own once this long has passed since the last commit.
    /// Zero: each full row is committed once written (a commit per row; with durable arrays
    /// each then waits for the disk).
    std::chrono::milliseconds commit_interval{1000};
};

/// Appends to an array along `axis`, in its stored byte order. The row being filled (a chunk's
/// extent along the axis) is held in memory as its chunks' blocks and never decoded; each full
/// row is encoded once, by one of the array's threads (rows in parallel), while the caller
/// pushes the next, and written to the file, in order, while the rows after it are encoded. Rows
/// written are committed with the array's new length (durable when the array is, seen by readers
/// that follow it) by flush(), close() and every AppendOptions::commit_interval. flush() commits
/// the partial row too (its chunks written, then rewritten once the row is full). An array that
/// already holds a partial row has it read once, at construction. Meanwhile nothing else may write
/// the array. Not thread-safe: one caller pushes.
class AnyAppender {
public:
    /// \throws UsageError for an array open read-only, an axis out of range, `o.queue` < 1
    AnyAppender(AnyArray array, int axis, AppendOptions o = {});
    /// close(), errors swallowed: call close() to see them.
    ~AnyAppender();
    /// Moves the appender (its worker goes with it).
    AnyAppender(AnyAppender&&) noexcept;
    /// Moves the appender; the one replaced is closed first, errors swallowed.
    AnyAppender& operator=(AnyAppender&&) noexcept;
    AnyAppender(const AnyAppender&) = delete;
    AnyAppender& operator=(const AnyAppender&) = delete;

    /// Appends n slabs: `data` holds the array's shape with extent n along the axis, C order,
    /// stored byte order (for axis 0: n frames one after the other). Waits only while the
    /// queue is full. \throws UsageError when the size is not a whole number of slabs, after
    /// close(); what encoding or committing an earlier row threw
    void push(ByteSpan data);
    /// Commits everything pushed: when it returns, the array's length along the axis is
    /// length(), durable (when the array is) and visible to readers. \throws as push
    void flush();
    /// flush(), then stops the worker; later pushes are refused. Idempotent.
    void close();
    /// The array's length along the axis once everything pushed is committed.
    std::int64_t length() const noexcept;
    /// The bytes of one slab (the array's shape without the axis, times the item size).
    std::int64_t slab_bytes() const noexcept;
    /// The axis that grows.
    int axis() const noexcept;
    /// The array appended to.
    const AnyArray& array() const noexcept;

private:
    struct State;
    /// close(), errors swallowed, and the worker stopped: what the destructor does.
    void finish() noexcept;
    std::unique_ptr<State> s_;
};

namespace detail {
/// \throws UsageError naming `what` and the array when its items are not in native byte order.
void require_native_order(const AnyArray& a, const char* what);
}  // namespace detail

/// AnyAppender for an NDArray<T> in native byte order: push(data, n) takes n slabs of T (and
/// b2nd::push, in <b2nd/xtensor.hpp>, an xtensor expression).
template <typename T>
class Appender {
public:
    /// \throws UsageError as AnyAppender's, and for an array not in native byte order
    Appender(NDArray<T> array, int axis, AppendOptions o = {})
        : impl_(native(std::move(array)).any(), axis, o) {}

    /// Appends n slabs from data (n times the slab's items, C order).
    void push(const T* data, std::int64_t n) {
        impl_.push(ByteSpan(reinterpret_cast<const std::uint8_t*>(data),
                            static_cast<std::size_t>(n * impl_.slab_bytes())));
    }
    /// Appends the slabs `data` holds (a whole number of them).
    void push(const std::vector<T>& data) {
        impl_.push(
            ByteSpan(reinterpret_cast<const std::uint8_t*>(data.data()), data.size() * sizeof(T)));
    }
    /// As AnyAppender::flush.
    void flush() { impl_.flush(); }
    /// As AnyAppender::close.
    void close() { impl_.close(); }
    /// As AnyAppender::length.
    std::int64_t length() const noexcept { return impl_.length(); }
    /// As AnyAppender::axis.
    int axis() const noexcept { return impl_.axis(); }
    /// The untyped appender.
    AnyAppender& any() noexcept { return impl_; }

private:
    static NDArray<T> native(NDArray<T> a) {
        detail::require_native_order(a.any(), "Appender");
        return a;
    }
    AnyAppender impl_;
};

}  // namespace b2nd
