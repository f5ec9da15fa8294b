// Written bytes flushed in the background (flush_behind.hpp).
#include "flush_behind.hpp"

#include <cerrno>
#include <system_error>
#include <vector>

#include <b2nd/error.hpp>

#include "../detail/text.hpp"
#include <fcntl.h>
#include <unistd.h>

namespace b2nd::storage::detail {

FlushBehind::FlushBehind(std::uint64_t every) : every_(every) {}

FlushBehind::~FlushBehind() {
    {
        std::lock_guard<std::mutex> l(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
}

void FlushBehind::wrote(const std::string& path, std::uint64_t bytes) {
    bool flush = false;
    {
        std::lock_guard<std::mutex> l(mutex_);
        pending_[path] += bytes;
        pending_bytes_ += bytes;
        flush = pending_bytes_ >= every_;
        if (flush && !thread_.joinable()) {
            thread_ = std::thread([this] { run(); });
        }
    }
    if (flush) {
        wake_.notify_one();
    }
}

void FlushBehind::finish() {
    std::unique_lock<std::mutex> l(mutex_);
    if (pending_bytes_ >= every_) {
        wake_.notify_one();  // (notified already; harmless)
    }
    idle_.wait(l, [&] { return !busy_ && pending_bytes_ < every_; });
    if (error_code_ != 0) {
        const std::string what = error_;
        const int code = error_code_;
        error_.clear();
        error_code_ = 0;
        throw IoError(what, std::error_code(code, std::generic_category()));
    }
}

std::uint64_t FlushBehind::flushes() const {
    std::lock_guard<std::mutex> l(mutex_);
    return flushes_;
}

void FlushBehind::run() {
    std::unique_lock<std::mutex> l(mutex_);
    for (;;) {
        wake_.wait(l, [&] { return stop_ || pending_bytes_ >= every_; });
        if (stop_) {
            return;
        }
        std::map<std::string, std::uint64_t> files;
        files.swap(pending_);
        pending_bytes_ = 0;
        busy_ = true;
        l.unlock();
        // fdatasync through a descriptor of our own: it flushes the file whoever wrote it.
        std::string failed;
        int code = 0;
        const auto note = [&](const char* what, const std::string& path) {
            if (code == 0) {
                failed = what + b2nd::detail::quoted_path(path);
                code = errno;
            }
        };
        for (const auto& f : files) {
            const int fd = ::open(f.first.c_str(), O_RDONLY | O_CLOEXEC);
            if (fd < 0) {
                if (errno != ENOENT) {  // a staged file dropped meanwhile needs no flush
                    note("cannot open for flushing ", f.first);
                }
                continue;
            }
            if (::fdatasync(fd) != 0) {
                note("cannot flush ", f.first);
            }
            ::close(fd);
        }
        l.lock();
        flushes_ += files.size();
        busy_ = false;
        if (code != 0 && error_code_ == 0) {
            error_ = failed;
            error_code_ = code;
        }
        idle_.notify_all();
    }
}

}  // namespace b2nd::storage::detail
