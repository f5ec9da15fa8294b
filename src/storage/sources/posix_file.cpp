#include "posix_file.hpp"

#include <atomic>
#include <cerrno>
#include <system_error>

#include <b2nd/error.hpp>

#include "../../detail/text.hpp"
#include "../outputs.hpp"
#include "../publish.hpp"
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace b2nd::storage::detail {

namespace {

std::atomic<std::uint64_t> g_fsyncs{0};

[[noreturn]] void fail(const std::string& what, const std::string& path) {
    throw IoError(what + " " + b2nd::detail::quoted_path(path),
                  std::error_code(errno, std::generic_category()));
}

}  // namespace

PosixFile::PosixFile(const std::string& path, Mode mode, const std::string& mode_of) : path_(path) {
    int flags = O_RDWR | O_CLOEXEC;
    if (mode == Mode::create_new) {
        flags |= O_CREAT | O_EXCL | O_NOFOLLOW;
    }
    // Created with the mode it will have (the umask may only take bits away), then given the
    // exact bits and the owner: never more open than the file it replaces.
    mode_t initial = 0666;
    struct stat like {};
    const bool has_like =
        mode == Mode::create_new && !mode_of.empty() && ::stat(mode_of.c_str(), &like) == 0;
    if (has_like) {
        initial = like.st_mode & 0777;
    }
    fd_ = ::open(path.c_str(), flags, initial);
    if (fd_ < 0) {
        fail(mode == Mode::read_write ? "cannot open for writing" : "cannot create", path);
    }
    if (has_like) {
        b2nd::detail::take_ownership(fd_, mode_of);
    }
}

PosixFile::PosixFile(PosixFile&& o) noexcept : path_(std::move(o.path_)), fd_(o.fd_) {
    o.fd_ = -1;
}

PosixFile::~PosixFile() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

void PosixFile::write_at(ByteSpan data, std::uint64_t offset) {
    const std::uint8_t* p = data.data();
    std::size_t left = data.size();
    while (left > 0) {
        const ssize_t n = ::pwrite(fd_, p, left, static_cast<off_t>(offset));
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            fail("cannot write", path_);
        }
        p += n;
        left -= static_cast<std::size_t>(n);
        offset += static_cast<std::uint64_t>(n);
    }
}

void PosixFile::read_at(MutableByteSpan out, std::uint64_t offset) {
    std::uint8_t* p = out.data();
    std::size_t left = out.size();
    while (left > 0) {
        const ssize_t n = ::pread(fd_, p, left, static_cast<off_t>(offset));
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            fail("cannot read", path_);
        }
        if (n == 0) {
            errno = EIO;
            fail("unexpected end of file reading", path_);
        }
        p += n;
        left -= static_cast<std::size_t>(n);
        offset += static_cast<std::uint64_t>(n);
    }
}

std::uint64_t fsync_calls() noexcept {
    return g_fsyncs.load(std::memory_order_relaxed);
}

void PosixFile::sync() {
    g_fsyncs.fetch_add(1, std::memory_order_relaxed);
    if (::fsync(fd_) != 0) {
        fail("cannot fsync", path_);
    }
}

void PosixFile::truncate(std::uint64_t size) {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
        fail("cannot truncate", path_);
    }
}

std::uint64_t PosixFile::size() const {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
        fail("cannot stat", path_);
    }
    return static_cast<std::uint64_t>(st.st_size);
}

void write_file_atomically(const std::string& path,
                           ByteSpan data,
                           bool durable,
                           const std::string& mode_of,
                           ByteSpan tail) {
    b2nd::detail::Temporary tmp(b2nd::detail::temporary_name(path));
    {
        PosixFile f(tmp.path(), PosixFile::Mode::create_new, mode_of.empty() ? path : mode_of);
        f.write_at(data, 0);
        f.write_at(tail, data.size());
        if (durable) {
            f.sync();
        }
    }
    rename_file(tmp.path(), path);
    tmp.keep();
    if (durable) {
        fsync_directory(directory_of(path));
    }
}

void fsync_directory(const std::string& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        fail("cannot open directory", dir);
    }
    g_fsyncs.fetch_add(1, std::memory_order_relaxed);
    const int rc = ::fsync(fd);
    ::close(fd);
    if (rc != 0) {
        fail("cannot fsync directory", dir);
    }
}

void rename_file(const std::string& from, const std::string& to) {
    if (::rename(from.c_str(), to.c_str()) != 0) {
        fail("cannot rename \"" + from + "\" to", to);
    }
}

void remove_file(const std::string& path) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
        fail("cannot remove", path);
    }
}

FileIdentity file_identity(const std::string& path) {
    FileIdentity id;
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
        id.ino = st.st_ino;
        id.mtime_ns =
            static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
        id.size = static_cast<std::uint64_t>(st.st_size);
    }
    return id;
}

bool is_directory(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool path_exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

bool read_only(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && (st.st_mode & 0222) == 0;
}

void make_directory(const std::string& path, const std::string& mode_of) {
    if (::mkdir(path.c_str(), mode_of.empty() ? 0777 : 0700) != 0) {
        fail("cannot create directory", path);
    }
    if (const auto o = b2nd::detail::ownership_of(mode_of); o && !mode_of.empty()) {
        b2nd::detail::give_ownership(path, *o);
    }
}

std::string directory_of(const std::string& path) {
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos) {
        return ".";
    }
    return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace b2nd::storage::detail
