#include "sidecar.hpp"

#include <cerrno>
#include <chrono>
#include <limits>
#include <random>
#include <system_error>
#include <thread>

#include <b2nd/error.hpp>

#include "../detail/strings.hpp"
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace b2nd::storage::detail {

namespace {

constexpr std::size_t kGenerationAt = 8;
constexpr off_t kWriterByte = 64;
constexpr std::size_t kTableAt = 4096;
constexpr std::size_t kSlots = 256;
constexpr std::size_t kSlotBytes = 16;
constexpr std::size_t kMapBytes = kTableAt + kSlots * kSlotBytes;

[[noreturn]] void fail(const std::string& what, const std::string& path) {
    throw IoError(what + " " + b2nd::detail::quoted_path(path),
                  std::error_code(errno, std::generic_category()));
}

void flock_retrying(int fd, int op, const std::string& path) {
    while (::flock(fd, op) != 0) {
        if (errno != EINTR) {
            fail("cannot lock", path);
        }
    }
}

std::uint64_t random_token() {
    std::random_device rd;
    std::uint64_t t = 0;
    while (t == 0) {
        t = rd() & 0xffffffffU;
    }
    return t;
}

}  // namespace

std::string Sidecar::path_for(const std::string& frame_path, bool sparse) {
    return frame_path + (sparse ? "/.b2lock" : ".b2lock");
}

bool Sidecar::is_file(const std::string& file) const noexcept {
    struct stat mine {
    }, there{};
    return ::fstat(fd_, &mine) == 0 && ::stat(file.c_str(), &there) == 0 &&
           mine.st_ino == there.st_ino && mine.st_dev == there.st_dev;
}

std::unique_ptr<Sidecar> Sidecar::open(const std::string& frame_path, bool sparse, bool create) {
    const std::string path = path_for(frame_path, sparse);
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0666);
    bool writable = fd >= 0;
    if (fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM)) {
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    }
    if (fd < 0) {
        if (errno == ENOENT || errno == EACCES || errno == EROFS || errno == EPERM) {
            return nullptr;
        }
        fail("cannot open the lock file", path);
    }
    return std::unique_ptr<Sidecar>(new Sidecar(path, fd, writable));
}

Sidecar::Sidecar(std::string path, int fd, bool writable)
    : path_(std::move(path)), fd_(fd), writable_(writable) {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
        const int e = errno;
        ::close(fd_);
        errno = e;
        fail("cannot inspect the lock file", path_);
    }
    // c-blosc2 leaves a sidecar of 0 or 16 bytes: make room for the reader table (growing a file
    // is harmless to c-blosc2, which reads and writes bytes 8-15 only).
    if (static_cast<std::size_t>(st.st_size) < kMapBytes && writable_ &&
        ::ftruncate(fd_, static_cast<off_t>(kMapBytes)) == 0) {
        st.st_size = static_cast<off_t>(kMapBytes);
    }
    if (static_cast<std::size_t>(st.st_size) >= kMapBytes) {
        void* m = ::mmap(nullptr, kMapBytes, PROT_READ | (writable_ ? PROT_WRITE : 0), MAP_SHARED,
                         fd_, 0);
        if (m != MAP_FAILED) {
            map_ = static_cast<std::uint8_t*>(m);
        }
    }
    owner_ = (static_cast<std::uint64_t>(::getpid()) << 32) | random_token();
}

Sidecar::~Sidecar() {
    release_reader();
    release_writer();
    if (map_ != nullptr) {
        ::munmap(map_, kMapBytes);
    }
    ::close(fd_);
}

std::uint64_t* Sidecar::word(std::size_t offset) const noexcept {
    return static_cast<std::uint64_t*>(static_cast<void*>(map_ + offset));
}

Sidecar::Lock& Sidecar::Lock::operator=(Lock&& o) noexcept {
    if (this != &o) {
        release();
        owner_ = o.owner_;
        exclusive_ = o.exclusive_;
        o.owner_ = nullptr;
    }
    return *this;
}

Sidecar::Lock::~Lock() {
    release();
}

void Sidecar::Lock::release() noexcept {
    if (owner_ != nullptr) {
        owner_->unlock(exclusive_);
        owner_ = nullptr;
    }
}

Sidecar::Lock Sidecar::lock_shared() const {
    std::lock_guard<std::mutex> g(shared_mutex_);
    if (shared_depth_ == 0) {
        flock_retrying(fd_, LOCK_SH, path_);
    }
    ++shared_depth_;
    return Lock(this, false);
}

Sidecar::Lock Sidecar::lock_exclusive() const {
    flock_retrying(fd_, LOCK_EX, path_);
    return Lock(this, true);
}

void Sidecar::unlock(bool exclusive) const noexcept {
    if (!exclusive) {
        std::lock_guard<std::mutex> g(shared_mutex_);
        if (--shared_depth_ > 0) {
            return;
        }
    }
    ::flock(fd_, LOCK_UN);
}

std::uint64_t Sidecar::generation() const noexcept {
    if (map_ != nullptr) {
        return __atomic_load_n(word(kGenerationAt), __ATOMIC_ACQUIRE);
    }
    std::uint64_t g = 0;
    if (::pread(fd_, &g, sizeof g, static_cast<off_t>(kGenerationAt)) != sizeof g) {
        g = 0;  // a fresh (short) sidecar reads as 0, as in c-blosc2
    }
    return g;
}

std::uint64_t Sidecar::bump() {
    const std::uint64_t g = generation() + 1;
    if (map_ != nullptr && writable_) {
        __atomic_store_n(word(kGenerationAt), g, __ATOMIC_RELEASE);
    } else if (::pwrite(fd_, &g, sizeof g, static_cast<off_t>(kGenerationAt)) != sizeof g) {
        fail("cannot write the generation counter of", path_);
    }
    return g;
}

bool Sidecar::acquire_writer(int wait_ms) {
    if (writer_) {
        return true;
    }
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
    for (;;) {
        struct flock fl {};
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        fl.l_start = kWriterByte;
        fl.l_len = 1;
        if (::fcntl(fd_, F_OFD_SETLK, &fl) == 0) {
            writer_ = true;
            return true;
        }
        if (errno != EAGAIN && errno != EACCES && errno != EINTR) {
            fail("cannot take the writer lock of", path_);
        }
        if (std::chrono::steady_clock::now() >= until) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

void Sidecar::release_writer() noexcept {
    if (writer_) {
        struct flock fl {};
        fl.l_type = F_UNLCK;
        fl.l_whence = SEEK_SET;
        fl.l_start = kWriterByte;
        fl.l_len = 1;
        ::fcntl(fd_, F_OFD_SETLK, &fl);
        writer_ = false;
    }
}

bool Sidecar::register_reader(std::uint64_t g) {
    if (map_ == nullptr || !writable_) {
        return false;
    }
    if (slot_ < 0) {
        for (std::size_t i = 0; i < kSlots && slot_ < 0; ++i) {
            std::uint64_t expected = 0;
            if (__atomic_compare_exchange_n(word(kTableAt + i * kSlotBytes), &expected, owner_,
                                            false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                slot_ = static_cast<int>(i);
            }
        }
        if (slot_ < 0) {
            return false;
        }
    }
    __atomic_store_n(word(kTableAt + static_cast<std::size_t>(slot_) * kSlotBytes + 8), g,
                     __ATOMIC_RELEASE);
    return true;
}

void Sidecar::release_reader() noexcept {
    if (slot_ >= 0) {
        std::uint64_t expected = owner_;
        __atomic_compare_exchange_n(word(kTableAt + static_cast<std::size_t>(slot_) * kSlotBytes),
                                    &expected, std::uint64_t{0}, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE);
        slot_ = -1;
    }
}

std::uint64_t Sidecar::oldest_reader() {
    std::uint64_t oldest = std::numeric_limits<std::uint64_t>::max();
    if (map_ == nullptr) {
        return oldest;
    }
    const auto self = static_cast<std::uint64_t>(::getpid());
    for (std::size_t i = 0; i < kSlots; ++i) {
        std::uint64_t* owner = word(kTableAt + i * kSlotBytes);
        std::uint64_t o = __atomic_load_n(owner, __ATOMIC_ACQUIRE);
        if (o == 0) {
            continue;
        }
        const auto pid = static_cast<pid_t>(o >> 32);
        if (static_cast<std::uint64_t>(pid) != self && ::kill(pid, 0) != 0 && errno == ESRCH) {
            if (writable_) {  // a reader that died without releasing its slot
                __atomic_compare_exchange_n(owner, &o, std::uint64_t{0}, false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE);
            }
            continue;
        }
        oldest = std::min(oldest,
                          __atomic_load_n(word(kTableAt + i * kSlotBytes + 8), __ATOMIC_ACQUIRE));
    }
    return oldest;
}

bool Sidecar::read_by_others() const {
    if (map_ == nullptr) {
        return false;
    }
    for (std::size_t i = 0; i < kSlots; ++i) {
        const std::uint64_t o = __atomic_load_n(word(kTableAt + i * kSlotBytes), __ATOMIC_ACQUIRE);
        if (o == 0 || (slot_ >= 0 && static_cast<std::size_t>(slot_) == i)) {
            continue;
        }
        const auto pid = static_cast<pid_t>(o >> 32);
        if (::kill(pid, 0) == 0 || errno != ESRCH) {
            return true;
        }
    }
    return false;
}

}  // namespace b2nd::storage::detail
