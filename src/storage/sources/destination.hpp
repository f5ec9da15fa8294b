// Internal: where a writer publishes when its target is a URL (publish.hpp): a driver's
// destination, made by the scheme table (open_source.cpp). What a writer builds is made in a
// local temporary first, then put there whole: a file as one object that appears complete or
// not at all, a directory (a sparse frame, a .b2d store) object by object, its indexes last.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace b2nd::storage {
struct OpenOptions;
}

namespace b2nd::storage::detail {

/// What a destination holds before a writer publishes there.
struct RemotePresence {
    bool object = false;             ///< an object named as the target
    std::string head;                ///< ... its first bytes (up to 64)
    std::vector<std::string> under;  ///< names of the objects under TARGET/ (relative to it)
    bool empty() const noexcept { return !object && under.empty(); }
};

class Destination {
public:
    virtual ~Destination() = default;
    /// What is there now.
    virtual RemotePresence present() const = 0;
    /// Puts the local file or directory `local` there (a directory's files as TARGET/NAME, each
    /// directory's index files, chunks.b2frame and embed.b2e, after what they index), then
    /// removes what `before` held that the new one does not. `only_new`: nothing was there;
    /// refused where the store can tell that something appeared meanwhile.
    virtual void put(const std::string& local,
                     const RemotePresence& before,
                     bool only_new) const = 0;
};

/// Told how an upload goes: (bytes put so far, bytes to put), from the uploading threads one
/// call at a time, after each part or object. The tool draws a progress bar with it.
using UploadObserver = std::function<void(std::uint64_t, std::uint64_t)>;
/// Sets the process's upload observer (empty: none). Not for use while uploads run.
void set_upload_observer(UploadObserver observer);

/// An s3:// URL's destination (s3_destination.cpp).
std::unique_ptr<Destination> s3_destination(const std::string& url, const OpenOptions& options);

/// The names of the objects under the prefix URL/ (s3_destination.cpp), relative to it.
std::vector<std::string> s3_list(const std::string& url, const OpenOptions& options);

/// The destination at `url`, or null for a local path (OpenOptions' driver settings reach it).
/// \throws UsageError for a URL of a scheme that cannot be written (http), or a malformed one
std::unique_ptr<Destination> open_destination(const std::string& url, const OpenOptions& options);

}  // namespace b2nd::storage::detail
