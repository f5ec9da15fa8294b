// Internal: a new array, or a file, made under a temporary name beside its target and moved into
// place in one step (DESIGN.md section 5), so that readers in other processes, and a crash at any
// moment, find under the target's name what was there before (nothing, or the array it
// replaces) or the whole new one, never a part.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <b2nd/storage/frame.hpp>

#include "../detail/temporary_names.hpp"
#include "outputs.hpp"

namespace b2nd::detail {

/// Whether process `pid` no longer exists (kill(pid, 0) says ESRCH).
bool process_gone(long pid) noexcept;
/// Removes what writers killed before their rename left beside `target`: TARGET.b2nd-tmp-PID...
/// files and directories (and what was made under those names) whose process is gone.
void sweep_stale_temporaries(const std::string& target) noexcept;

/// TARGET.b2nd-tmp-PID.R (R: 16 random hex digits): a new name beside `target` for a temporary
/// of this process, which no one can guess to plant a link there first; create it with O_EXCL
/// and O_NOFOLLOW. The sweepers remove those of processes that are gone, and nothing else.
std::string temporary_name(const std::string& target);

/// Whether `name` in `dir` is a temporary b2nd made (the tag, a process id, the random digits,
/// perhaps '.' and more), owned by this user, of a process that is gone (or of any process,
/// with `any_process`: for a writer that holds the lock of the directory it looks in).
bool stale_temporary(const std::string& dir, const std::string& name, bool any_process = false);
/// Removes the stale temporaries (above) in `dir`, or in its tree with `recursive` (links are
/// removed, never followed).
void sweep_temporaries_in(const std::string& dir,
                          bool recursive,
                          bool any_process = false) noexcept;

/// A temporary file or directory this process is making: removed (with what it holds) when the
/// object goes, unless kept, and by remove_registered_temporaries() meanwhile.
class Temporary {
public:
    explicit Temporary(std::string path);
    ~Temporary();
    Temporary(const Temporary&) = delete;
    Temporary& operator=(const Temporary&) = delete;
    const std::string& path() const noexcept { return path_; }
    /// It is no temporary any more (renamed into place): nothing to remove.
    void keep() noexcept;

private:
    std::string path_;
    bool kept_ = false;
};

/// Something this process has begun elsewhere that must not outlive it unfinished (a multipart
/// upload): `undo` runs once, by remove_registered_temporaries(), while the object lives.
class Abandon {
public:
    explicit Abandon(std::function<void()> undo);
    ~Abandon();
    Abandon(const Abandon&) = delete;
    Abandon& operator=(const Abandon&) = delete;

private:
    std::uint64_t id_ = 0;
};

/// Removes every temporary this process has registered and not yet removed or kept, and undoes
/// what is registered to be abandoned: for the tool's signal handling thread (SIGINT, SIGTERM),
/// before it ends the process. Not
/// async-signal-safe: call it from a thread, not from a signal handler.
void remove_registered_temporaries() noexcept;

/// Whether remove_registered_temporaries() has run: the process is ending on a signal, and
/// what fails meanwhile for want of its temporaries is no error to report.
bool process_ending() noexcept;

class Publication {
public:
    /// Prepares to publish `kind` at `target` (outputs.hpp's rules: trailing slashes dropped, a
    /// link written through; an existing target replaced only with `overwrite` and only when it
    /// is of `kind`; UsageError otherwise), and refuses an existing array that another handle
    /// writes (LockError); an array being replaced is held open for writing until publish(), so
    /// that no writer starts on it meanwhile. `where` names the target in messages.
    ///
    /// A URL target (s3://) is built in a local temporary (under $TMPDIR) and put at the
    /// driver's destination by publish() (sources/destination.hpp), reached with `remote`'s
    /// driver settings; the same rules hold for what is there (an object, or objects under it).
    Publication(const std::string& target,
                bool overwrite,
                const std::string& where,
                OutputKind kind = OutputKind::array,
                int lock_wait_ms = 0,
                const storage::OpenOptions& remote = {});
    /// Removes the temporary unless it was published.
    ~Publication();
    Publication(const Publication&) = delete;
    Publication& operator=(const Publication&) = delete;

    /// Where it is published (the target, or what the link that was named leads to).
    const std::string& target() const noexcept { return target_; }
    /// Where to build: TARGET.b2nd-tmp-PID.N/NAME (NAME: the target's own), with nothing there
    /// yet, in a directory only this user may enter: what is built is never more open than what
    /// it replaces.
    const std::string& temporary() const noexcept { return temporary_; }

    /// Moves the temporary into place, with the mode and owner of what it replaces (new: the
    /// umask's). Into an empty place, or a file over a file: one rename. Anything else (a
    /// directory, a file over a directory or the other way): the two are exchanged in one step
    /// (renameat2 RENAME_EXCHANGE) and the old one is removed. Handles that follow the replaced
    /// array are told (Frame::announce_replaced). `durable`: the directory entry is synced too.
    void publish(bool durable);

    /// Rethrows the exception being handled with the temporary's name replaced by the target's
    /// (after removing the temporary).
    [[noreturn]] void rethrow();

private:
    /// Makes the private directory the temporary is built in, named after `beside`.
    void make_wrapper(const std::string& beside);

    std::string named_, target_, temporary_, where_;
    std::optional<Temporary> wrapper_;  // TARGET.b2nd-tmp-PID.N, holding the temporary
    bool overwrite_ = false;
    bool published_ = false;
    std::optional<storage::Frame> replaced_;  // the array being replaced, held for writing
    std::unique_ptr<storage::detail::Destination> remote_;  // a URL's destination
    storage::detail::RemotePresence present_;               // ... and what it held
};

}  // namespace b2nd::detail
