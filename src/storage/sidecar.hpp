// Internal: the lock file beside a frame, shared with c-blosc2 3.3's locking protocol
// (blosc/frame.c: frame_lock, frame_unlock), extended for b2nd-cpp's single writer and readers.
//
// Where: NAME.b2lock beside a contiguous frame NAME, DIR/.b2lock inside a sparse frame DIR.
// Layout (c-blosc2 uses bytes 0-15 and ignores the rest):
//
//   [0, 8)        reserved: the byte range LockFileEx locks on Windows
//   [8, 16)       generation counter, uint64 in native order (c-blosc2's): every writer bumps it
//                 under the exclusive lock, so a changed value means "another commit happened"
//   [64, 65)      the writer byte: a b2nd-cpp handle open for writing holds an open-file-
//                 description write lock (F_OFD_SETLK) on it for its lifetime; a second writer
//                 finds it taken. OFD locks are independent of flock, so c-blosc2 never sees it.
//   [4096, 8192)  the reader table: 256 slots of {owner, generation} (uint64 each). A reader
//                 handle claims a slot (owner = pid << 32 | a random token) and records the
//                 generation of the snapshot it reads; a writer frees space (sparse chunk files)
//                 only once no live reader holds an older generation. Slots of dead processes
//                 are cleared by whoever finds them.
//
// Locks, as c-blosc2 takes them: flock(LOCK_SH) while a snapshot is taken (header, index and
// trailer parsed), flock(LOCK_EX) while a commit is written. Data reads take no lock.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace b2nd::storage::detail {

class Sidecar {
public:
    /// The sidecar's path for a frame at `frame_path` (a directory when `sparse`).
    static std::string path_for(const std::string& frame_path, bool sparse);

    /// Opens the sidecar of a frame, creating it when `create` (writers do; readers only use an
    /// existing one, so that reading leaves no file behind). Never through a symbolic link, and
    /// only a regular file of one link (a FIFO, a device, a link or a hard link to another file
    /// is refused: IoError). A writer needs it writable (IoError naming its owner otherwise). A
    /// reader never grows it and writes its slot only into a full-sized file that its user owns,
    /// or that is group-writable for one of its groups, as a shared directory requires; else it
    /// reads unregistered. Null for a reader when there is none or it cannot be opened.
    /// `timeout_ms`: the longest lock_shared and lock_exclusive wait (negative: no limit).
    /// \throws IoError for other failures
    static std::unique_ptr<Sidecar> open(const std::string& frame_path,
                                         bool sparse,
                                         bool create,
                                         int timeout_ms = 60000);
    ~Sidecar();
    Sidecar(const Sidecar&) = delete;
    Sidecar& operator=(const Sidecar&) = delete;

    const std::string& path() const noexcept { return path_; }
    /// Whether `file` is the lock file this handle has open (not one that took its name: a
    /// sparse frame's directory, which holds it, can be replaced by a rename).
    bool is_file(const std::string& file) const noexcept;

    /// flock held for a scope.
    class Lock {
    public:
        Lock() = default;
        Lock(Lock&& o) noexcept : owner_(o.owner_), exclusive_(o.exclusive_) { o.owner_ = nullptr; }
        Lock& operator=(Lock&& o) noexcept;
        ~Lock();
        void release() noexcept;

    private:
        friend class Sidecar;
        Lock(const Sidecar* owner, bool exclusive) : owner_(owner), exclusive_(exclusive) {}
        const Sidecar* owner_ = nullptr;
        bool exclusive_ = false;
    };
    /// Waits until no writer holds the lock (a commit in progress). Nests: shared locks taken
    /// through one Sidecar (from any thread) share one flock, released with the last of them.
    /// \throws LockError after the timeout, naming the process that holds it where known
    Lock lock_shared() const;
    /// Waits until no reader takes a snapshot and no other commit is in progress.
    /// \throws LockError after the timeout
    Lock lock_exclusive() const;

    /// The generation counter: a load from the shared mapping (no system call).
    std::uint64_t generation() const noexcept;
    /// With the exclusive lock held: adds one to the counter and returns the new value.
    std::uint64_t bump();

    /// Takes the writer byte for this handle: false when another handle (of any process) holds
    /// it. `wait_ms` > 0 retries for that long.
    bool acquire_writer(int wait_ms);
    void release_writer() noexcept;

    /// Records that this handle reads the snapshot of generation `g` (claims a slot the first
    /// time). False when the table is full or read-only: the handle then reads unregistered.
    bool register_reader(std::uint64_t g);
    void release_reader() noexcept;
    /// Whether a live handle other than this one holds a slot of the reader table.
    bool read_by_others() const;
    /// The generations live registered readers hold, ascending and each once (clearing slots of
    /// dead processes on the way).
    std::vector<std::uint64_t> reader_generations();
    /// The oldest of them, or UINT64_MAX when there is none.
    std::uint64_t oldest_reader();

private:
    Sidecar(std::string path, int fd, bool writable, int timeout_ms);
    std::uint64_t* word(std::size_t offset) const noexcept;
    void lock(int op) const;
    void unlock(bool exclusive) const noexcept;

    std::string path_;
    int fd_ = -1;
    bool writable_ = false;
    int timeout_ms_ = 60000;
    std::uint8_t* map_ = nullptr;  // the first kMapBytes, shared
    bool writer_ = false;
    int slot_ = -1;
    std::uint64_t owner_ = 0;
    mutable std::mutex shared_mutex_;  // guards shared_depth_
    mutable int shared_depth_ = 0;
};

}  // namespace b2nd::storage::detail
