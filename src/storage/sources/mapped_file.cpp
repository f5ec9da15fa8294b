#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/file_mapping.hpp>
#include <boost/interprocess/mapped_region.hpp>

#include <b2nd/error.hpp>
#include <b2nd/storage/mapped_file.hpp>

#include "../../detail/text.hpp"
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace b2nd::storage {

namespace bip = boost::interprocess;

struct MappedFile::Impl {
    bip::file_mapping mapping;
    bip::mapped_region region;
};

MappedFile::MappedFile(std::string path, std::unique_ptr<Impl> impl, ByteSpan bytes)
    : path_(std::move(path)), impl_(std::move(impl)), bytes_(bytes) {}

MappedFile::~MappedFile() = default;

namespace {

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

/// madvise(MADV_POPULATE_READ); false where the kernel does not know it (before 5.14).
bool populate_read(void* at, std::size_t n) {
    static std::atomic<bool> unknown{false};
    if (unknown.load(std::memory_order_relaxed)) {
        return false;
    }
    if (::madvise(at, n, MADV_POPULATE_READ) == 0) {
        return true;
    }
    if (errno == EINVAL) {
        unknown.store(true, std::memory_order_relaxed);
        return false;
    }
    return true;  // EFAULT/EIO: the reader reports what it finds
}

/// The pages holding a range of a mapping: from the first byte of the first, n bytes.
struct PageRange {
    void* at;
    std::size_t n;
};
PageRange pages_of(ByteSpan range) {
    static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<std::uintptr_t>(range.data()) & ~(page - 1);
    const auto end = reinterpret_cast<std::uintptr_t>(range.data()) + range.size();
    // NOLINTNEXTLINE(performance-no-int-to-ptr): the page holding the range's first byte
    return {reinterpret_cast<void*>(begin), end - begin};
}

/// Whether every page of every range is in the page cache (false if that cannot be told).
bool all_resident(const std::vector<ByteSpan>& ranges) {
    static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> in_core;
    for (const ByteSpan& r : ranges) {
        if (r.empty()) {
            continue;
        }
        const PageRange p = pages_of(r);
        in_core.resize((p.n + page - 1) / page);
        if (::mincore(p.at, p.n, in_core.data()) != 0 ||
            !std::all_of(in_core.begin(), in_core.end(),
                         [](unsigned char c) { return (c & 1) != 0; })) {
            return false;
        }
    }
    return true;
}

/// Reads (or advises) the pages of one range of a mapping.
void read_pages(ByteSpan range) {
    const PageRange p = pages_of(range);
    // Read the pages and map them (Linux 5.14+), so that the decoding threads take no page fault
    // at all; else only read them into the page cache. A range the file no longer covers fails
    // here (EFAULT) instead of raising SIGBUS.
    if (!populate_read(p.at, p.n)) {
        ::madvise(p.at, p.n, MADV_WILLNEED);
    }
}

}  // namespace

/// One ReadAhead's ranges and how far its reader is.
struct ReadAhead::State {
    std::shared_ptr<const void> owner;
    std::vector<ByteSpan> ranges;
    std::vector<std::size_t> before;  // bytes of the ranges before range k
    std::size_t window = 0;
    std::size_t next = 0;                 // the next range to read (prefetcher's mutex)
    std::atomic<std::size_t> reached{0};  // the range the reader is at
    std::atomic<bool> cancelled{false};

    /// Whether range `next` is within the window past the reader (prefetcher's mutex held).
    bool ready() const {
        return next < ranges.size() &&
               before[next] <=
                   before[std::min(reached.load(std::memory_order_relaxed), ranges.size() - 1)] +
                       window;
    }
};

namespace {

/// The thread behind ReadAhead: serves the active read-aheads in turn, a range at a time, each
/// only as far as its window past its reader allows.
class Prefetcher {
public:
    static Prefetcher& instance() {
        static Prefetcher p;
        return p;
    }
    Prefetcher(const Prefetcher&) = delete;
    Prefetcher& operator=(const Prefetcher&) = delete;
    ~Prefetcher() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
            active_.clear();
        }
        wake_.notify_one();
        thread_.join();
    }
    void add(std::shared_ptr<ReadAhead::State> s) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            active_.push_back(std::move(s));
        }
        wake_.notify_one();
    }
    /// A reader moved on, or gave up: the thread may have something to do again.
    void poke() { wake_.notify_one(); }

private:
    Prefetcher() : thread_([this] { run(); }) {}

    /// The next read-ahead with a range to read now (round robin), dropping finished ones.
    std::shared_ptr<ReadAhead::State> pick() {
        for (std::size_t n = active_.size(); n > 0; --n) {
            std::shared_ptr<ReadAhead::State> s = std::move(active_.front());
            active_.pop_front();
            if (s->cancelled.load(std::memory_order_relaxed) || s->next >= s->ranges.size()) {
                continue;
            }
            active_.push_back(s);
            if (s->ready()) {
                return s;
            }
        }
        return nullptr;
    }

    void run() {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            std::shared_ptr<ReadAhead::State> s;
            wake_.wait(lock, [&] { return stop_ || (s = pick()) != nullptr; });
            if (stop_) {
                return;
            }
            const bool first = s->next == 0;
            const ByteSpan range = s->ranges[s->next++];
            lock.unlock();
            if (first && all_resident(s->ranges)) {
                // A file already in the page cache is left to the readers' page faults (which
                // map 16 pages at a time): mapping it from here too costs a warm read 4-5%.
                // Checked once for the whole read: pages that the kernel's own read-ahead is
                // still reading look resident too, and must be waited for here, not by a reader.
                s->cancelled.store(true, std::memory_order_relaxed);
            } else if (!range.empty()) {
                read_pages(range);
            }
            s.reset();  // the mapping may go once its last range is read
            lock.lock();
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::shared_ptr<ReadAhead::State>> active_;
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace

ReadAhead::ReadAhead(std::shared_ptr<const void> owner,
                     std::vector<ByteSpan> ranges,
                     std::size_t window)
    : state_(std::make_shared<State>()) {
    state_->owner = std::move(owner);
    state_->ranges = std::move(ranges);
    state_->window = window;
    state_->before.resize(state_->ranges.size());
    std::size_t total = 0;
    for (std::size_t k = 0; k < state_->ranges.size(); ++k) {
        state_->before[k] = total;
        total += state_->ranges[k].size();
    }
    if (!state_->ranges.empty()) {
        Prefetcher::instance().add(state_);
    }
}

void ReadAhead::stop() noexcept {
    if (state_) {
        state_->cancelled.store(true, std::memory_order_relaxed);
        Prefetcher::instance().poke();
        state_.reset();
    }
}

void ReadAhead::reached(std::size_t k) noexcept {
    if (!state_) {
        return;
    }
    std::size_t cur = state_->reached.load(std::memory_order_relaxed);
    while (k > cur && !state_->reached.compare_exchange_weak(cur, k, std::memory_order_relaxed)) {
    }
    if (k > cur) {
        Prefetcher::instance().poke();
    }
}

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path) {
    return open(path, path);
}

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& reach,
                                                   const std::string& path) {
    struct stat st {};
    if (::stat(reach.c_str(), &st) != 0) {
        throw IoError("cannot open " + detail::quoted_path(path),
                      std::error_code(errno, std::generic_category()));
    }
    if (!S_ISREG(st.st_mode)) {
        throw IoError(detail::quoted_path(path) + " is not a regular file",
                      std::make_error_code(std::errc::invalid_argument));
    }
    auto impl = std::make_unique<Impl>();
    ByteSpan bytes;
    if (st.st_size > 0) {
        try {
            impl->mapping = bip::file_mapping(reach.c_str(), bip::read_only);
            impl->region = bip::mapped_region(impl->mapping, bip::read_only);
        } catch (const bip::interprocess_exception& e) {
            throw IoError("cannot map " + detail::quoted_path(path) + " (" + e.what() + ")",
                          std::error_code(e.get_native_error(), std::system_category()));
        }
        bytes = ByteSpan(static_cast<const std::uint8_t*>(impl->region.get_address()),
                         impl->region.get_size());
    }
    return std::shared_ptr<const MappedFile>(new MappedFile(path, std::move(impl), bytes));
}

}  // namespace b2nd::storage
