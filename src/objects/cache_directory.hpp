// Internal: the one bound of a directory of persistent remote caches
// (OpenOptions::http_cache_bytes), kept across processes. Every bounded cache file of a directory
// (an array's cache file, a store's leaf caches) is an entry of the directory's ledger,
// DIR/.b2nd-cache-ledger: the bytes it holds, when it last stored, and which process writes it. A
// store into any of them is admitted under the ledger's lock only when the directory's total stays
// within the bound: room is made first, least recently stored file first:
//  - a file this process writes gives up its least recently used chunks at once;
//  - a file no process writes is opened and emptied of chunks (largest first);
//  - a file another live process writes is asked to give up bytes, which that process does at
//    its next store; meanwhile the store that asked is not admitted (its read goes on uncached)
//    and its demand is recorded: for a minute, stores into other files leave it that room.
// So the files of a directory together never hold more than the bound, whatever the number of
// processes.
//
// The ledger is a small text file rewritten in place under flock. One that does not start with
// its own first line is not ours: refused, never replaced. One torn by a crash is started anew
// (entries come back as their files are opened). Without a bound there is no ledger.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace b2nd::detail {

class CacheDirectory {
public:
    /// A cache file this process writes, as the directory asks it for room. Called with the
    /// directory locked; the member takes its own lock (never the directory's).
    class Member {
    public:
        virtual ~Member() = default;
        /// Drops chunks worth at least `bytes` (fewer when it holds fewer); returns what it freed.
        virtual std::uint64_t shed(std::uint64_t bytes) = 0;

    protected:
        Member() = default;
        Member(const Member&) = default;
        Member& operator=(const Member&) = default;
    };

    /// The directory of the cache file `cache_path`, shared by its caches in this process.
    /// \throws IoError, FormatError naming the ledger (a link, or a file that is not a ledger)
    static std::shared_ptr<CacheDirectory> of(const std::string& cache_path);
    ~CacheDirectory();
    CacheDirectory(const CacheDirectory&) = delete;
    CacheDirectory& operator=(const CacheDirectory&) = delete;

    /// The ledger's path.
    const std::string& path() const noexcept { return path_; }

    /// The ledger held for one decision: the in-process lock and the flock. Stores take it
    /// before their cache's own lock.
    class Session;
    /// Ends a session: the ledger written back if it changed, the locks released.
    struct EndSession {
        void operator()(Session* s) const noexcept;
    };
    using SessionPtr = std::unique_ptr<Session, EndSession>;
    /// \throws LockError when another process holds the ledger for long (a store then skips)
    SessionPtr lock();

    /// Records that this process writes the cache file `name` (of this directory), which holds
    /// `held` bytes; `m` is asked for room until leave().
    void join(Session& s, const std::string& name, Member* m, std::uint64_t held);
    /// This process no longer writes `name` (its bytes stay counted: the file keeps them).
    void leave(const std::string& name) noexcept;
    /// Whether `name` may grow by `growth` bytes within `bound`: room is made as the header
    /// says (`self_shed` gives up bytes of `name` itself, whose lock the caller holds, in the
    /// commit that stores: it returns no more than it will free). True: the caller stores, then
    /// calls stored(). False: not now (the caller makes what `self_shed` gave up, then calls
    /// settle()).
    bool admit(Session& s,
               const std::string& name,
               std::uint64_t bound,
               std::uint64_t growth,
               const std::function<std::uint64_t(std::uint64_t)>& self_shed);
    /// After an admitted store: `name` now holds `held` bytes.
    void stored(Session& s, const std::string& name, std::uint64_t held);
    /// `name` holds `held` bytes, as they were (a store not made after admit(), or one that
    /// failed: the room its own file planned to give is not given).
    void settle(Session& s, const std::string& name, std::uint64_t held);

private:
    struct Impl;
    explicit CacheDirectory(std::unique_ptr<Impl> impl, std::string path);
    std::unique_ptr<Impl> impl_;
    std::string path_;
};

/// Empties a cache file no process writes of chunks worth at least `bytes` (largest first, their
/// bits cleared in the same commit); returns what it freed, or nothing when a process writes it
/// (or it is no cache of this user's: then nothing is touched, nothing opened for writing).
/// Defined with the cache (proxy_cache.cpp).
std::optional<std::uint64_t> shed_idle_cache(const std::string& path, std::uint64_t bytes);

/// Whether `path` is this user's own file: a regular file (not a link) owned by the process's
/// user that no other user may write, in a directory where no other user may replace it (not
/// writable by others, or sticky as /tmp). true for a path that does not exist (made here).
/// What a cache file, and a ledger, must be to be used: another user of a shared cache
/// directory could otherwise plant one.
bool own_file(const std::string& path);

/// Whether `path` is a persistent cache this user made: own_file and a proxy cache (its header
/// read without opening it for writing). Defined with the cache (proxy_cache.cpp).
bool own_cache_file(const std::string& path);

}  // namespace b2nd::detail
