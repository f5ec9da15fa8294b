// A read-only memory map of a whole file (Boost.Interprocess behind a pimpl, so that Boost stays
// out of public headers).
//
// Caveat: mmap cannot protect against another process truncating the file while it is mapped;
// touching the vanished pages raises SIGBUS. Do not truncate files that b2nd-cpp has open.
//
// Advanced (b2nd::storage, frames and files): for tools that work on chunks as stored.
// Programs that read and write arrays need only <b2nd/b2nd.hpp>.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <b2nd/byte_span.hpp>

namespace b2nd::storage {

/// A file mapped read-only (or a part of it), kept alive by shared ownership: frames and
/// the sources of their chunks hold it while they read.
class MappedFile {
public:
    /// Maps the whole of `path` read-only. An empty file maps to an empty span.
    /// \throws IoError (with the errno) when the file cannot be opened or mapped.
    static std::shared_ptr<const MappedFile> open(const std::string& path);
    /// The same for a file reached another way than its name (as a file of a directory handle,
    /// /proc/self/fd/N/NAME): `path` is what messages and path() name.
    static std::shared_ptr<const MappedFile> open(const std::string& reach,
                                                  const std::string& path);

    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    /// The mapped bytes.
    ByteSpan bytes() const noexcept { return bytes_; }

    /// The number of mapped bytes.
    std::uint64_t size() const noexcept { return bytes_.size(); }
    /// The file's path.
    const std::string& path() const noexcept { return path_; }

private:
    struct Impl;
    MappedFile(std::string path, std::unique_ptr<Impl> impl, ByteSpan bytes);

    std::string path_;
    std::unique_ptr<Impl> impl_;
    ByteSpan bytes_;
};

/// Reading ranges of a mapping ahead of a reader that will use them in order, from one
/// background thread shared by all read-aheads: pages are read and mapped
/// (madvise MADV_POPULATE_READ, else MADV_WILLNEED), at most `window` bytes past the range the
/// reader has reached, so that a scan of a file not in the page cache decodes while the rest of
/// the file arrives, without reading far more than it will soon use. A hint: failures are
/// ignored (the reader's own access reports them). Destroying it stops it.
class ReadAhead {
public:
    ReadAhead() = default;
    /// Starts reading `ranges` (bytes of a mapping that `owner` keeps alive; empty ones are
    /// skipped) in order.
    ReadAhead(std::shared_ptr<const void> owner, std::vector<ByteSpan> ranges, std::size_t window);
    ~ReadAhead() { stop(); }
    /// Moves the read-ahead (a moved-from one reads nothing).
    ReadAhead(ReadAhead&& o) noexcept : state_(std::move(o.state_)) {}
    /// Moves the read-ahead.
    ReadAhead& operator=(ReadAhead&& o) noexcept {
        if (this != &o) {
            stop();
            state_ = std::move(o.state_);
        }
        return *this;
    }
    ReadAhead(const ReadAhead&) = delete;
    ReadAhead& operator=(const ReadAhead&) = delete;

    /// The reader is at range k (calls may come from several threads, slightly out of order).
    void reached(std::size_t k) noexcept;

    struct State;

private:
    void stop() noexcept;
    std::shared_ptr<State> state_;
};

}  // namespace b2nd::storage
