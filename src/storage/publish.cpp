#include "publish.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <b2nd/error.hpp>

#include "../detail/text.hpp"
#include "frame_internal.hpp"
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

namespace b2nd::detail {

namespace fs = std::filesystem;

namespace {

constexpr const char* kReplacedTag = ".b2nd-old-";  // replaced directories readers still use

/// Whether handles in live processes still read the sparse frame at `dir`.
bool still_read(const std::string& dir) noexcept {
    try {
        storage::OpenOptions o;
        o.writable = true;  // the writer's slot is not a reader's
        o.auto_compact = false;
        o.lock_wait_ms = 0;
        return storage::FrameInternal::read_by_others(storage::Frame::open(dir, o));
    } catch (...) {
        return false;  // not a frame any more, or one another handle writes: nobody reads it
    }
}

std::string trimmed(std::string path) {
    while (path.size() > 1 && path.back() == '/') {
        path.pop_back();
    }
    return path;
}

void sync_directory_of(const std::string& path) {
    std::string dir = fs::path(path).parent_path().string();
    if (dir.empty()) {
        dir = ".";
    }
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)::fsync(fd);
        ::close(fd);
    }
}

}  // namespace

bool process_gone(long pid) noexcept {
    return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

namespace {

/// The process of a temporary's name, `prefix` (NAME and a tag) + PID + '.' + the random
/// digits (then the end, or '.' and what was made under that name), or -1 when it is not one.
long temporary_pid(const std::string& name, const std::string& prefix) {
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) {
        return -1;
    }
    // The same shape as a temporary's suffix, whatever the tag.
    const std::string as_suffix = kTemporaryTag + name.substr(prefix.size());
    const std::size_t n = temporary_suffix_at(as_suffix, 0);
    if (n == 0 || (n < as_suffix.size() && as_suffix[n] != '.')) {
        return -1;
    }
    return std::strtol(name.c_str() + prefix.size(), nullptr, 10);
}

/// Whether this user owns the directory entry at `p` (never followed).
bool mine(const fs::path& p) noexcept {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0 && st.st_uid == ::geteuid();
}

void remove_quietly(const fs::path& p) noexcept {
    std::error_code ignored;
    fs::remove_all(p, ignored);  // a link is removed, never followed
}

}  // namespace

bool stale_temporary(const std::string& dir, const std::string& name, bool any_process) {
    const std::size_t tag = name.rfind(kTemporaryTag);
    if (tag == std::string::npos) {
        return false;
    }
    const long pid = temporary_pid(name, name.substr(0, tag) + kTemporaryTag);
    return pid > 0 && (any_process || process_gone(pid)) && mine(fs::path(dir) / name);
}

void sweep_stale_temporaries(const std::string& target) noexcept {
    const fs::path t(target);
    const std::string prefix = t.filename().string() + kTemporaryTag;
    const std::string replaced = t.filename().string() + kReplacedTag;
    fs::path dir = t.parent_path();
    if (dir.empty()) {
        dir = ".";
    }
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (temporary_pid(name, replaced) > 0 && mine(it->path())) {
            if (!still_read(it->path().string())) {
                remove_quietly(it->path());
            }
        } else if (const long pid = temporary_pid(name, prefix);
                   pid > 0 && process_gone(pid) && mine(it->path())) {
            remove_quietly(it->path());
        }
    }
}

void sweep_temporaries_in(const std::string& dir, bool recursive, bool any_process) noexcept {
    std::error_code ec;
    std::vector<fs::path> stale;
    const auto look = [&](const fs::path& p) {
        if (stale_temporary(p.parent_path().string(), p.filename().string(), any_process)) {
            stale.push_back(p);
        }
    };
    if (recursive) {  // links to directories are not followed
        for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end;
             it.increment(ec)) {
            look(it->path());
        }
    } else {
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
            look(it->path());
        }
    }
    for (const fs::path& p : stale) {
        remove_quietly(p);
    }
}

std::string temporary_name(const std::string& target) {
    std::uint64_t r = 0;
    while (::getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) {
        if (errno != EINTR) {
            static std::atomic<std::uint64_t> fallback{0};
            r = (static_cast<std::uint64_t>(
                     std::chrono::steady_clock::now().time_since_epoch().count()) *
                 0x9E3779B97F4A7C15ULL) ^
                fallback.fetch_add(1);
            break;
        }
    }
    char hex[kTemporaryRandomDigits + 1];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(r));
    return target + kTemporaryTag + std::to_string(::getpid()) + "." + hex;
}

namespace {

std::mutex& registry_mutex() {
    static std::mutex m;
    return m;
}

std::set<std::string>& registry() {
    static std::set<std::string> paths;
    return paths;
}

}  // namespace

Temporary::Temporary(std::string path) : path_(std::move(path)) {
    std::lock_guard<std::mutex> lock(registry_mutex());
    registry().insert(path_);
}

Temporary::~Temporary() {
    if (!kept_) {
        std::error_code ignored;
        fs::remove_all(path_, ignored);
    }
    keep();
}

void Temporary::keep() noexcept {
    kept_ = true;
    std::lock_guard<std::mutex> lock(registry_mutex());
    registry().erase(path_);
}

namespace {

std::map<std::uint64_t, std::function<void()>>& abandons() {
    static std::map<std::uint64_t, std::function<void()>> undo;
    return undo;
}

}  // namespace

Abandon::Abandon(std::function<void()> undo) {
    static std::uint64_t last = 0;
    std::lock_guard<std::mutex> lock(registry_mutex());
    id_ = ++last;
    abandons().emplace(id_, std::move(undo));
}

Abandon::~Abandon() {
    std::lock_guard<std::mutex> lock(registry_mutex());
    abandons().erase(id_);
}

namespace {
std::atomic<bool> ending{false};
}  // namespace

bool process_ending() noexcept {
    return ending.load();
}

void remove_registered_temporaries() noexcept {
    ending = true;
    std::map<std::uint64_t, std::function<void()>> undo;
    {
        std::lock_guard<std::mutex> lock(registry_mutex());
        for (const std::string& p : registry()) {
            std::error_code ignored;
            fs::remove_all(p, ignored);
        }
        registry().clear();
        undo.swap(abandons());
    }
    for (auto& [id, f] : undo) {
        try {
            f();
        } catch (...) {
            // best effort: the process is ending
        }
    }
}

Publication::Publication(const std::string& target,
                         bool overwrite,
                         const std::string& where,
                         OutputKind kind,
                         int lock_wait_ms,
                         const storage::OpenOptions& remote)
    : named_(trimmed(target)), where_(where), overwrite_(overwrite) {
    remote_ = storage::detail::open_destination(named_, remote);
    if (remote_) {
        target_ = named_;
        present_ = remote_->present();
        if (!present_.empty()) {
            check_replacement(where_, remote_replacement_refusal(present_, kind), overwrite);
        }
        // Built here, then put there: a private directory of the temporary directory.
        const std::string beside = (fs::temp_directory_path() / "b2nd-upload").string();
        sweep_stale_temporaries(beside);
        make_wrapper(beside);
        std::string name = named_.substr(named_.rfind('/') + 1);
        temporary_ = wrapper_->path() + "/" + name;
        return;
    }
    target_ = checked_output(named_, kind, overwrite, where_);
    std::error_code ec;
    if (fs::exists(fs::symlink_status(target_, ec))) {
        // A frame is held for writing until replaced (its writer lock keeps others out). Looked
        // at read-only first: opening something else for writing would leave a lock file
        // beside it (an .npy replaced by an export).
        bool frame = false;
        try {
            (void)storage::Frame::open(target_);
            frame = true;
        } catch (const Error&) {
            // Not a frame we can open (or not a frame): replaced as it is.
        }
        if (frame) {
            storage::OpenOptions o;
            o.writable = true;
            o.auto_compact = false;
            o.lock_wait_ms = lock_wait_ms;
            replaced_.emplace(storage::Frame::open(target_, o));  // LockError: another writer
        }
    }
    sweep_stale_temporaries(target_);
    make_wrapper(target_);
    temporary_ = wrapper_->path() + "/" + fs::path(target_).filename().string();
}

void Publication::make_wrapper(const std::string& beside) {
    wrapper_.emplace(temporary_name(beside));
    if (::mkdir(wrapper_->path().c_str(), 0700) != 0) {
        const int err = errno;
        const fs::path dir = fs::path(beside).parent_path();
        std::error_code ec;
        if (err == ENOENT || (err == ENOTDIR && !fs::is_directory(dir, ec))) {
            // A path that may not be written (a usage error): outputs make no directories.
            throw UsageError(where_ + ": the directory " + detail::quoted_path(dir.string()) +
                             " does not exist (outputs are written into existing directories)");
        }
        errno = err;
        throw IoError(where_ + ": cannot create a temporary directory for it (" +
                          fs::path(beside).parent_path().string() + ")",
                      std::error_code(errno, std::generic_category()));
    }
}

Publication::~Publication() = default;

namespace {

/// A descriptor of a file being replaced: closed on the way out (an error), or once the new
/// file is in place: in the background for a large file (freeing its blocks takes a while),
/// at once for a small one (a thread would cost more).
struct ReplacedFile {
    int fd;
    explicit ReplacedFile(int f) : fd(f) {
        struct stat st {};
        if (fd >= 0 && ::fstat(fd, &st) == 0 && st.st_size < kLarge) {
            ::close(fd);  // nothing worth a thread: let the rename free it
            fd = -1;
        }
    }
    static constexpr off_t kLarge = off_t{16} << 20;
    ReplacedFile(const ReplacedFile&) = delete;
    ReplacedFile& operator=(const ReplacedFile&) = delete;
    ~ReplacedFile() {
        if (fd >= 0) {
            ::close(fd);
        }
    }
    void close_behind() {
        if (fd >= 0) {
            std::thread([f = fd] { ::close(f); }).detach();
            fd = -1;
        }
    }
};

}  // namespace

void Publication::publish(bool durable) {
    if (remote_) {
        remote_->put(temporary_, present_, !overwrite_);  // complete, or nothing new seen
        published_ = true;
        wrapper_.reset();
        return;
    }
    std::error_code ec;
    const fs::file_status old = fs::symlink_status(target_, ec);
    const bool there = fs::exists(old);
    if (there && !overwrite_) {
        throw UsageError(where_ + ": already exists (made meanwhile by someone else)");
    }
    if (there) {
        if (const auto own = ownership_of(target_)) {
            give_ownership(temporary_, *own);  // a rewrite keeps the mode and the owner
        }
    }
    const bool directory = fs::is_directory(fs::symlink_status(temporary_, ec));
    if (directory) {
        // A sparse frame goes into place with its lock file, so that its readers register from
        // the start (a replacement then knows whether they still use it).
        try {
            storage::OpenOptions o;
            o.writable = true;
            o.auto_compact = false;
            (void)storage::Frame::open(temporary_, o);
        } catch (const Error&) {
            // not a frame: nothing to lock
        }
    }
    const bool file_over_file = there && fs::is_regular_file(old) && !directory;
    // A file renamed over: its blocks are freed when its last descriptor closes, which for a
    // file on disk (with online discard) takes about as long as writing a tenth of it. This one
    // is closed in the background, after the new file is in place.
    ReplacedFile replaced_file{
        file_over_file ? ::open(target_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1};
    int rc = 0;
    if (!there) {
        // Not over something that appeared since the check above.
        rc = ::renameat2(AT_FDCWD, temporary_.c_str(), AT_FDCWD, target_.c_str(), RENAME_NOREPLACE);
        if (rc != 0 && errno == EINVAL) {  // a file system without renameat2's flags
            rc = std::rename(temporary_.c_str(), target_.c_str());
        }
    } else if (file_over_file) {
        rc = std::rename(temporary_.c_str(), target_.c_str());
    } else {
        rc = ::renameat2(AT_FDCWD, temporary_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE);
        if (rc != 0 && errno == EINVAL) {
            // No atomic exchange here: the old one is moved aside, then the new one in.
            const std::string aside = temporary_ + ".old";
            rc = std::rename(target_.c_str(), aside.c_str());
            if (rc == 0) {
                rc = std::rename(temporary_.c_str(), target_.c_str());
                if (rc != 0) {
                    const int err = errno;
                    (void)std::rename(aside.c_str(), target_.c_str());
                    errno = err;
                } else {
                    (void)std::rename(aside.c_str(), temporary_.c_str());
                }
            }
        }
    }
    if (rc != 0) {
        const int err = errno;
        wrapper_.reset();
        throw IoError(where_ + ": cannot move the new " +
                          std::string(directory ? "directory" : "file") + " into place",
                      std::error_code(err, std::generic_category()));
    }
    published_ = true;
    if (durable) {
        sync_directory_of(target_);
    }
    // What was replaced is where the temporary was (or gone, for a file renamed over). A
    // directory that registered readers still use stays until the next publication here finds
    // them gone (their snapshots read its chunk files).
    bool kept = false;
    if (replaced_) {
        storage::FrameInternal::announce_replaced(*replaced_);
        kept = replaced_->sparse() && storage::FrameInternal::read_by_others(*replaced_);
        replaced_.reset();
    }
    if (kept) {
        const std::string aside =
            target_ + kReplacedTag +
            wrapper_->path().substr(target_.size() + std::strlen(kTemporaryTag));
        (void)std::rename(temporary_.c_str(), aside.c_str());
    }
    wrapper_.reset();
    replaced_file.close_behind();
}

void Publication::rethrow() {
    wrapper_.reset();
    rethrow_renamed(temporary_, named_);
}

}  // namespace b2nd::detail
