// Internal: a new array, or a file, made under a temporary name beside its target and moved into
// place in one step (DESIGN.md section 5), so that readers in other processes, and a crash at any
// moment, find under the target's name what was there before (nothing, or the array it
// replaces) or the whole new one, never a part.
#pragma once

#include <optional>
#include <string>

#include <b2nd/storage/frame.hpp>

namespace b2nd::detail {

/// Whether process `pid` no longer exists (kill(pid, 0) says ESRCH).
bool process_gone(long pid) noexcept;
/// Removes what writers killed before their rename left beside `target`: TARGET.b2nd-tmp-PID...
/// files and directories (and what was made under those names) whose process is gone.
void sweep_stale_temporaries(const std::string& target) noexcept;

class Publication {
public:
    /// Prepares to publish at `target` (trailing slashes dropped). Refuses a target that exists
    /// unless `overwrite` (UsageError "already exists"), and an existing array that another
    /// handle writes (LockError); an array being replaced is held open for writing until
    /// publish(), so that no writer starts on it meanwhile. `where` names the target in messages.
    Publication(const std::string& target, bool overwrite, const std::string& where);
    /// Removes the temporary unless it was published.
    ~Publication();
    Publication(const Publication&) = delete;
    Publication& operator=(const Publication&) = delete;

    const std::string& target() const noexcept { return target_; }
    /// Where to build: TARGET.b2nd-tmp-PID.N, with nothing there yet.
    const std::string& temporary() const noexcept { return temporary_; }

    /// Moves the temporary into place. Into an empty place, or a file over a file: one rename.
    /// Anything else (a directory, a file over a directory or the other way): the two are
    /// exchanged in one step (renameat2 RENAME_EXCHANGE) and the old one is removed. Handles that
    /// follow the replaced array are told (Frame::announce_replaced). `durable`: the directory
    /// entry is synced too.
    void publish(bool durable);

    /// Rethrows the exception being handled with the temporary's name replaced by the target's
    /// (after removing the temporary).
    [[noreturn]] void rethrow();

private:
    void remove_temporary() noexcept;

    std::string target_, temporary_, where_;
    bool overwrite_ = false;
    bool published_ = false;
    std::optional<storage::Frame> replaced_;  // the array being replaced, held for writing
};

}  // namespace b2nd::detail
