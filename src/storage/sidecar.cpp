#include "sidecar.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <system_error>
#include <thread>

#include <b2nd/error.hpp>

#include "../detail/text.hpp"
#include "outputs.hpp"
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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

/// The process that holds a flock on the file `fd` has open, from /proc/locks (-1 unknown).
long flock_holder(int fd) noexcept {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return -1;
    }
    std::ifstream in("/proc/locks");
    std::string line;
    while (std::getline(in, line)) {
        // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF" (waiters have "->" after the number)
        std::istringstream f(line);
        std::string n, kind, advisory, mode, dev;
        long pid = -1;
        if (!(f >> n >> kind) || kind != "FLOCK" || !(f >> advisory >> mode >> pid >> dev)) {
            continue;
        }
        unsigned maj = 0, min = 0;
        unsigned long long ino = 0;
        if (std::sscanf(dev.c_str(), "%x:%x:%llu", &maj, &min, &ino) == 3 &&
            ino == static_cast<unsigned long long>(st.st_ino) && maj == major(st.st_dev) &&
            min == minor(st.st_dev) && pid > 0) {
            return pid;
        }
    }
    return -1;
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

namespace {

std::string kind_of(mode_t m) {
    if (S_ISDIR(m)) {
        return "a directory";
    }
    if (S_ISLNK(m)) {
        return "a symbolic link";
    }
    const std::string special = b2nd::detail::special_kind(m);
    return special.empty() ? "not a regular file" : special;
}

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
    throw IoError("the lock file " + b2nd::detail::quoted_path(path) + " is " + why +
                      "; b2nd reads and writes only a regular file there (remove it: the next "
                      "writer makes a new one)",
                  std::make_error_code(std::errc::operation_not_permitted));
}

/// What a lock file must be before it is opened or used: a regular file of one link.
void check_lock_file(const struct stat& st, const std::string& path) {
    if (!S_ISREG(st.st_mode)) {
        refuse(path, kind_of(st.st_mode));
    }
    if (st.st_nlink > 1) {
        refuse(path, "a hard link (" + std::to_string(st.st_nlink) + " names for one file)");
    }
}

bool in_my_groups(gid_t g) {
    if (g == ::getegid()) {
        return true;
    }
    const int n = ::getgroups(0, nullptr);
    std::vector<gid_t> groups(static_cast<std::size_t>(n > 0 ? n : 0));
    const int got = n > 0 ? ::getgroups(n, groups.data()) : 0;
    for (int i = 0; i < got; ++i) {
        if (groups[static_cast<std::size_t>(i)] == g) {
            return true;
        }
    }
    return false;
}

/// Whether a reader may write its slot into the lock file: its user owns it, or it is
/// group-writable for one of the user's groups (a directory shared by a group).
bool reader_may_write(const struct stat& st) {
    return st.st_uid == ::geteuid() || ((st.st_mode & S_IWGRP) != 0 && in_my_groups(st.st_gid));
}

constexpr int kOpenFlags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;

}  // namespace

std::unique_ptr<Sidecar> Sidecar::open(const std::string& frame_path,
                                       bool sparse,
                                       bool create,
                                       int timeout_ms) {
    const std::string path = path_for(frame_path, sparse);
    struct stat st {};
    // Looked at before it is opened, so that a FIFO or a device is never opened at all.
    if (::lstat(path.c_str(), &st) == 0) {
        check_lock_file(st, path);
    } else if (errno != ENOENT || !create) {
        if (errno == ENOENT || errno == EACCES || errno == ENOTDIR) {
            return nullptr;
        }
        fail("cannot look at the lock file", path);
    }
    int fd = -1;
    bool writable = false;
    if (create) {
        fd = ::open(path.c_str(), O_RDWR | O_CREAT | kOpenFlags, 0666);
        if (fd < 0) {
            const int e = errno;
            std::string owner;
            if (::lstat(path.c_str(), &st) == 0) {
                owner = " (it belongs to user " + std::to_string(st.st_uid) + ", mode " +
                        b2nd::detail::octal(st.st_mode & 07777) + ")";
            }
            errno = e;
            fail("a writer must write the lock file" + owner + ", and cannot open", path);
        }
        writable = true;
    } else {
        fd = ::open(path.c_str(), O_RDONLY | kOpenFlags);
        if (fd < 0) {
            if (errno == ENOENT || errno == EACCES || errno == EPERM) {
                return nullptr;
            }
            if (errno == ELOOP) {
                refuse(path, "a symbolic link");
            }
            fail("cannot open the lock file", path);
        }
    }
    auto close_and_fail = [&](const char* what) {
        const int e = errno;
        ::close(fd);
        errno = e;
        fail(what, path);
    };
    if (::fstat(fd, &st) != 0) {
        close_and_fail("cannot inspect the lock file");
    }
    try {
        check_lock_file(st, path);  // what was opened, which may differ from what was looked at
    } catch (...) {
        ::close(fd);
        throw;
    }
    if (!create && reader_may_write(st) && static_cast<std::size_t>(st.st_size) >= kMapBytes) {
        const int rw = ::open(path.c_str(), O_RDWR | kOpenFlags);
        struct stat again {};
        if (rw >= 0 && ::fstat(rw, &again) == 0 && again.st_ino == st.st_ino &&
            again.st_dev == st.st_dev) {
            ::close(fd);
            fd = rw;
            writable = true;
        } else if (rw >= 0) {
            ::close(rw);
        }
    }
    return std::unique_ptr<Sidecar>(new Sidecar(path, fd, writable, timeout_ms));
}

Sidecar::Sidecar(std::string path, int fd, bool writable, int timeout_ms)
    : path_(std::move(path)), fd_(fd), writable_(writable), timeout_ms_(timeout_ms) {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
        const int e = errno;
        ::close(fd_);
        errno = e;
        fail("cannot inspect the lock file", path_);
    }
    // c-blosc2 leaves a sidecar of 0 or 16 bytes: a writer makes room for the reader table
    // (growing a file is harmless to c-blosc2, which reads and writes bytes 8-15 only). Readers
    // never change its size.
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

void Sidecar::lock(int op) const {
    // Polled (a blocking flock could not keep the timeout), at most 1 ms apart: c-blosc2's
    // writers and readers retake the lock as soon as they drop it, and a waiter that slept
    // longer found it taken nearly every time (readers beside a c-blosc2 writer made 1-34 reads
    // in 3 s with pauses up to 20 ms; 1,500-6,600 with 1 ms).
    const auto start = std::chrono::steady_clock::now();
    auto pause = std::chrono::microseconds(200);
    for (;;) {
        if (::flock(fd_, op | LOCK_NB) == 0) {
            return;
        }
        if (errno != EWOULDBLOCK && errno != EINTR) {
            fail("cannot lock", path_);
        }
        const auto waited = std::chrono::steady_clock::now() - start;
        if (timeout_ms_ >= 0 && waited >= std::chrono::milliseconds(timeout_ms_)) {
            const long holder = flock_holder(fd_);
            throw LockError("the lock file " + b2nd::detail::quoted_path(path_) + " is held" +
                            (holder > 0 ? " by process " + std::to_string(holder) : std::string()) +
                            " and was not released within " +
                            b2nd::detail::seconds_text(timeout_ms_) +
                            " (a commit that does not end, or a process that keeps it locked; "
                            "OpenOptions::lock_timeout_ms waits longer)");
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
}

Sidecar::Lock Sidecar::lock_shared() const {
    std::lock_guard<std::mutex> g(shared_mutex_);
    if (shared_depth_ == 0) {
        lock(LOCK_SH);
    }
    ++shared_depth_;
    return Lock(this, false);
}

Sidecar::Lock Sidecar::lock_exclusive() const {
    lock(LOCK_EX);
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

std::vector<std::uint64_t> Sidecar::reader_generations() {
    std::vector<std::uint64_t> held;
    if (map_ == nullptr) {
        return held;
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
        held.push_back(__atomic_load_n(word(kTableAt + i * kSlotBytes + 8), __ATOMIC_ACQUIRE));
    }
    std::sort(held.begin(), held.end());
    held.erase(std::unique(held.begin(), held.end()), held.end());
    return held;
}

std::uint64_t Sidecar::oldest_reader() {
    const std::vector<std::uint64_t> held = reader_generations();
    return held.empty() ? std::numeric_limits<std::uint64_t>::max() : held.front();
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
