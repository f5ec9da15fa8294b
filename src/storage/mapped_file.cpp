#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>

#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/file_mapping.hpp>
#include <boost/interprocess/mapped_region.hpp>

#include <b2nd/error.hpp>
#include <b2nd/storage/mapped_file.hpp>

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

/// The thread behind MappedFile::prefetch: advises ranges one after the other, in order.
class Prefetcher {
public:
    Prefetcher() : thread_([this] { run(); }) {}
    ~Prefetcher() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
            queue_.clear();
        }
        wake_.notify_one();
        thread_.join();
    }
    void push(std::shared_ptr<const void> owner, ByteSpan range) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            queue_.emplace_back(std::move(owner), range);
        }
        wake_.notify_one();
    }

private:
    void run() {
        static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
            if (stop_) {
                return;
            }
            auto [owner, range] = std::move(queue_.front());
            queue_.pop_front();
            lock.unlock();
            const auto begin = reinterpret_cast<std::uintptr_t>(range.data()) & ~(page - 1);
            const auto end = reinterpret_cast<std::uintptr_t>(range.data()) + range.size();
            // NOLINTNEXTLINE(performance-no-int-to-ptr): the page holding the range's first byte
            ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_WILLNEED);
            owner.reset();  // the mapping may go once its range is advised
            lock.lock();
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::pair<std::shared_ptr<const void>, ByteSpan>> queue_;
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace

void MappedFile::prefetch(std::shared_ptr<const void> owner, ByteSpan range) {
    if (!range.empty()) {
        static Prefetcher prefetcher;
        prefetcher.push(std::move(owner), range);
    }
}

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        throw IoError("cannot open \"" + path + "\"",
                      std::error_code(errno, std::generic_category()));
    }
    if (!S_ISREG(st.st_mode)) {
        throw IoError("\"" + path + "\" is not a regular file",
                      std::make_error_code(std::errc::invalid_argument));
    }
    auto impl = std::make_unique<Impl>();
    ByteSpan bytes;
    if (st.st_size > 0) {
        try {
            impl->mapping = bip::file_mapping(path.c_str(), bip::read_only);
            impl->region = bip::mapped_region(impl->mapping, bip::read_only);
        } catch (const bip::interprocess_exception& e) {
            throw IoError("cannot map \"" + path + "\" (" + e.what() + ")",
                          std::error_code(e.get_native_error(), std::system_category()));
        }
        bytes = ByteSpan(static_cast<const std::uint8_t*>(impl->region.get_address()),
                         impl->region.get_size());
    }
    return std::shared_ptr<const MappedFile>(new MappedFile(path, std::move(impl), bytes));
}

}  // namespace b2nd::storage
