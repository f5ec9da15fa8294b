// The bound of a directory of persistent remote caches, across processes (cache_directory.hpp).
#include "cache_directory.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <b2nd/error.hpp>

#include "../detail/text.hpp"
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace b2nd::detail {

namespace {

constexpr const char* kLedgerName = ".b2nd-cache-ledger";
constexpr const char* kFirstLine = "b2nd cache ledger 1\n";
constexpr std::size_t kMaxLedgerBytes = std::size_t{16} << 20;  // beyond: torn or hostile
constexpr auto kLockWait = std::chrono::seconds(10);            // a store gives up after it
constexpr std::int64_t kWantSeconds = 60;  // how long room waits for a store that found none

std::int64_t now_seconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/// One cache file of the directory.
struct Entry {
    std::uint64_t held = 0;  // bytes its chunks take
    std::uint64_t last = 0;  // the ledger's tick at its last store
    std::uint64_t ask = 0;   // bytes another process asked its writer to give up
    std::uint64_t want = 0;  // bytes a store of it could not have for want of room,
    std::int64_t until = 0;  // kept free for it by others' stores until then (unix seconds)
    long pid = 0;            // the process writing it (0: none)
};

struct Ledger {
    std::uint64_t tick = 0;
    std::map<std::string, Entry> entries;
};

/// a + b, or the largest value where that overflows (a hostile ledger's sizes add up to it).
std::uint64_t sum(std::uint64_t a, std::uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

bool alive(long pid) {
    return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

/// A name the ledger may hold: a file directly in the directory.
bool plain_name(const std::string& n) {
    return !n.empty() && n != "." && n != ".." && n.find('/') == std::string::npos &&
           n.find('\0') == std::string::npos;
}

std::string text_of(const Ledger& l) {
    std::string out = kFirstLine;
    out += "tick " + std::to_string(l.tick) + "\n";
    for (const auto& [name, e] : l.entries) {
        out += "entry " + std::to_string(e.held) + " " + std::to_string(e.last) + " " +
               std::to_string(e.ask) + " " + std::to_string(e.want) + " " +
               std::to_string(e.until) + " " + std::to_string(e.pid) + " " +
               percent_encoded(name, "-_.") + "\n";
    }
    out += "end " + std::to_string(l.entries.size()) + "\n";
    return out;
}

/// The ledger after its first line; nothing when it is torn (a crash mid-write).
std::optional<Ledger> parse(const std::string& text) {
    std::istringstream in(text.substr(std::strlen(kFirstLine)));
    Ledger l;
    std::string word;
    if (!(in >> word >> l.tick) || word != "tick") {
        return std::nullopt;
    }
    while (in >> word) {
        if (word == "end") {
            std::size_t n = 0;
            if (!(in >> n) || n != l.entries.size()) {
                return std::nullopt;
            }
            return l;
        }
        Entry e;
        std::string encoded;
        if (word != "entry" ||
            !(in >> e.held >> e.last >> e.ask >> e.want >> e.until >> e.pid >> encoded)) {
            return std::nullopt;
        }
        const auto name = percent_decoded(encoded);
        if (!name || !plain_name(*name)) {
            return std::nullopt;
        }
        l.entries[*name] = e;
    }
    return std::nullopt;
}

/// The directories open in this process, by the ledger's identity (a fork starts anew).
struct Registry {
    std::mutex mutex;
    pid_t pid = 0;
    std::map<std::pair<dev_t, ino_t>, std::weak_ptr<CacheDirectory>> open;
};
Registry& registry() {
    static Registry r;
    return r;
}

}  // namespace

bool own_file(const std::string& path) {
    struct stat f {};
    if (::lstat(path.c_str(), &f) != 0) {
        return errno == ENOENT;  // made here, by this process
    }
    const std::string parent = std::filesystem::path(path).parent_path().string();
    struct stat d {};
    if (::stat(parent.empty() ? "." : parent.c_str(), &d) != 0) {
        return false;
    }
    const bool others_write = (d.st_mode & (S_IWGRP | S_IWOTH)) != 0;
    return S_ISREG(f.st_mode) && f.st_uid == ::geteuid() &&
           (f.st_mode & (S_IWGRP | S_IWOTH)) == 0 && (d.st_uid == ::geteuid() || d.st_uid == 0) &&
           (!others_write || (d.st_mode & S_ISVTX) != 0);
}

struct CacheDirectory::Impl {
    std::string dir;
    std::string where;  // the ledger, quoted
    int fd = -1;
    std::mutex mutex;  // one session at a time in this process (flock is per open file)
    std::map<std::string, Member*> members;
    // Entries checked to name a cache file of this user's, by the file's identity and size
    // (its header is read once, not at every session).
    std::map<std::tuple<dev_t, ino_t, off_t>, bool> checked;
    ~Impl() {
        if (fd >= 0) {
            ::close(fd);
        }
    }

    std::string read_all() const {
        struct stat st {};
        if (::fstat(fd, &st) != 0) {
            throw IoError(where, std::error_code(errno, std::generic_category()));
        }
        const auto size = static_cast<std::size_t>(st.st_size);
        if (size > kMaxLedgerBytes) {
            return std::string(kFirstLine) + "torn";  // started anew
        }
        std::string text(size, '\0');
        std::size_t got = 0;
        while (got < size) {
            const ssize_t n = ::pread(fd, &text[got], size - got, static_cast<off_t>(got));
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                break;
            }
            got += static_cast<std::size_t>(n);
        }
        text.resize(got);
        return text;
    }
    /// The file's content, checked to be a ledger (empty: a new one).
    std::string checked_text() const {
        std::string text = read_all();
        if (!text.empty() && text.compare(0, std::strlen(kFirstLine), kFirstLine) != 0) {
            throw FormatError(where +
                              ": not a b2nd cache ledger (the file that keeps a cache directory "
                              "within OpenOptions::http_cache_bytes); b2nd never replaces such a "
                              "file: keep the caches in another directory");
        }
        return text;
    }
    void write_all(const std::string& text) const {
        std::size_t done = 0;
        while (done < text.size()) {
            const ssize_t n =
                ::pwrite(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                throw IoError(where + ": cannot write",
                              std::error_code(errno, std::generic_category()));
            }
            done += static_cast<std::size_t>(n);
        }
        if (::ftruncate(fd, static_cast<off_t>(text.size())) != 0) {
            throw IoError(where + ": cannot write",
                          std::error_code(errno, std::generic_category()));
        }
    }
};

class CacheDirectory::Session {
public:
    explicit Session(Impl& d) : d_(d), lock_(d.mutex) {
        const auto until = std::chrono::steady_clock::now() + kLockWait;
        while (::flock(d.fd, LOCK_EX | LOCK_NB) != 0) {
            if (errno != EWOULDBLOCK && errno != EINTR) {
                throw IoError(d.where + ": cannot lock",
                              std::error_code(errno, std::generic_category()));
            }
            if (std::chrono::steady_clock::now() > until) {
                throw LockError(
                    d.where + ": another process held the cache ledger for " +
                    seconds_text(
                        std::chrono::duration_cast<std::chrono::milliseconds>(kLockWait).count()));
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        try {
            const std::string text = d.checked_text();
            if (!text.empty()) {
                if (auto l = parse(text)) {
                    ledger = std::move(*l);
                }
            }
            // The ledger names only cache files this user made: an entry whose file is gone,
            // is not a plain file of this user's, or is no cache holds nothing (a planted entry
            // can neither turn caching off nor have a file opened for writing); no entry holds
            // more than its file's size.
            for (auto it = ledger.entries.begin(); it != ledger.entries.end();) {
                struct stat st {};
                const std::string p = d.dir + "/" + it->first;
                bool keep = ::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
                if (keep && d.members.count(it->first) == 0) {
                    const auto key = std::make_tuple(st.st_dev, st.st_ino, st.st_size);
                    const auto known = d.checked.find(key);
                    keep = known != d.checked.end() ? known->second
                                                    : (d.checked[key] = own_cache_file(p));
                }
                if (!keep) {
                    it = ledger.entries.erase(it);
                    dirty = true;
                    continue;
                }
                const auto size = static_cast<std::uint64_t>(st.st_size);
                if (it->second.held > size) {
                    it->second.held = size;
                    dirty = true;
                }
                ++it;
            }
        } catch (...) {
            ::flock(d.fd, LOCK_UN);
            throw;
        }
    }
    ~Session() {
        if (dirty) {
            try {
                d_.write_all(text_of(ledger));
            } catch (const Error&) {  // NOLINT(bugprone-empty-catch): the next session rebuilds
            }
        }
        ::flock(d_.fd, LOCK_UN);
    }
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    Ledger ledger;
    bool dirty = false;

private:
    Impl& d_;
    std::unique_lock<std::mutex> lock_;
};

CacheDirectory::CacheDirectory(std::unique_ptr<Impl> impl, std::string path)
    : impl_(std::move(impl)), path_(std::move(path)) {}

CacheDirectory::~CacheDirectory() = default;

std::shared_ptr<CacheDirectory> CacheDirectory::of(const std::string& cache_path) {
    std::string dir = std::filesystem::path(cache_path).parent_path().string();
    if (dir.empty()) {
        dir = ".";
    }
    const std::string path = dir + "/" + kLedgerName;
    auto impl = std::make_unique<Impl>();
    impl->dir = dir;
    impl->where = quoted_path(path);
    if (!own_file(path)) {
        throw IoError(impl->where +
                          ": not this user's own plain file (another user's, or one others may "
                          "write or replace); b2nd keeps no cache bound through it",
                      std::error_code(EPERM, std::generic_category()));
    }
    impl->fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
    if (impl->fd < 0) {
        const std::error_code e(errno, std::generic_category());
        throw IoError(
            impl->where + (e.value() == ELOOP ? ": a symbolic link; b2nd never writes through one"
                                              : ": cannot open the cache ledger"),
            e);
    }
    struct stat st {};
    if (::fstat(impl->fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
        st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        throw IoError(
            impl->where +
                ": not a plain file of one link; b2nd never writes the cache ledger there",
            std::error_code(EPERM, std::generic_category()));
    }
    (void)impl->checked_text();
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.pid != ::getpid()) {
        r.open.clear();  // a forked child: its parent's directories are not its own
        r.pid = ::getpid();
    }
    const auto key = std::make_pair(st.st_dev, st.st_ino);
    if (auto existing = r.open[key].lock()) {
        return existing;
    }
    std::shared_ptr<CacheDirectory> d(new CacheDirectory(std::move(impl), path));
    r.open[key] = d;
    return d;
}

CacheDirectory::SessionPtr CacheDirectory::lock() {
    return SessionPtr(new Session(*impl_));
}

void CacheDirectory::EndSession::operator()(Session* s) const noexcept {
    delete s;
}

void CacheDirectory::join(Session& s, const std::string& name, Member* m, std::uint64_t held) {
    Entry& e = s.ledger.entries[name];
    e.held = held;
    e.pid = ::getpid();
    e.ask = 0;
    e.want = 0;
    if (e.last == 0) {
        e.last = ++s.ledger.tick;  // new: the most recent
    }
    s.dirty = true;
    impl_->members[name] = m;
}

void CacheDirectory::leave(const std::string& name) noexcept {
    try {
        Session s(*impl_);
        impl_->members.erase(name);
        const auto it = s.ledger.entries.find(name);
        if (it != s.ledger.entries.end() && it->second.pid == ::getpid()) {
            it->second.pid = 0;  // its want stays until it expires: it may be opened again
            it->second.ask = 0;
            s.dirty = true;
        }
    } catch (...) {
        // Locked out or broken: still never asked again from this process.
        std::lock_guard<std::mutex> lock(impl_->mutex);
        impl_->members.erase(name);
    }
}

bool CacheDirectory::admit(Session& s,
                           const std::string& name,
                           std::uint64_t bound,
                           std::uint64_t growth,
                           const std::function<std::uint64_t(std::uint64_t)>& self_shed) {
    Ledger& l = s.ledger;
    const long me_pid = ::getpid();
    s.dirty = true;
    Entry& me = l.entries[name];
    me.pid = me_pid;
    if (me.ask > 0) {  // another process wants room: given at once
        me.held -= std::min(me.held, self_shed(me.ask));
        me.ask = 0;
    }
    const std::int64_t now = now_seconds();
    std::uint64_t used = 0;
    for (const auto& [n, e] : l.entries) {
        used = sum(used, e.held);
        if (n != name && e.want > 0 && now < e.until) {
            used = sum(used, e.want);  // room another file's store waits for
        }
    }
    if (sum(used, growth) <= bound) {
        me.want = 0;
        return true;
    }
    std::uint64_t need = sum(used, growth) - bound;
    std::vector<std::pair<std::uint64_t, std::string>> order;  // least recently stored first
    for (const auto& [n, e] : l.entries) {
        order.emplace_back(e.last, n);
    }
    std::sort(order.begin(), order.end());
    for (const auto& victim : order) {
        if (need == 0) {
            break;
        }
        Entry& e = l.entries[victim.second];
        std::uint64_t freed = 0;
        const auto member = impl_->members.find(victim.second);
        if (victim.second == name) {
            freed = self_shed(need);
        } else if (member != impl_->members.end()) {
            freed = member->second->shed(need);
        } else {
            std::optional<std::uint64_t> idle;
            if (!(e.pid != me_pid && alive(e.pid))) {
                idle = shed_idle_cache(impl_->dir + "/" + victim.second, need);
            }
            if (!idle) {
                e.ask = std::max(e.ask, std::min(need, e.held));  // its writer gives it later
                continue;
            }
            freed = *idle;
            e.pid = 0;
        }
        e.held -= std::min(e.held, freed);
        need -= std::min(need, freed);
    }
    if (need > 0) {
        me.want = now < me.until ? std::max(me.want, growth) : growth;
        me.until = now + kWantSeconds;
        return false;
    }
    me.want = 0;
    return true;
}

void CacheDirectory::settle(Session& s, const std::string& name, std::uint64_t held) {
    s.ledger.entries[name].held = held;
    s.dirty = true;
}

void CacheDirectory::stored(Session& s, const std::string& name, std::uint64_t held) {
    Entry& e = s.ledger.entries[name];
    e.held = held;
    e.last = ++s.ledger.tick;
    s.dirty = true;
}

}  // namespace b2nd::detail
