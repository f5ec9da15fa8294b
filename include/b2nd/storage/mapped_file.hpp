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

#include <b2nd/byte_span.hpp>

namespace b2nd::storage {

class MappedFile {
public:
    /// Maps the whole of `path` read-only. An empty file maps to an empty span.
    /// \throws IoError (with the errno) when the file cannot be opened or mapped.
    static std::shared_ptr<const MappedFile> open(const std::string& path);

    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    ByteSpan bytes() const noexcept { return bytes_; }

    /// Asks the kernel to read `range` (bytes of a mapping that `owner` keeps alive) into the
    /// page cache, from a background thread (madvise MADV_WILLNEED, which waits for the reads on
    /// many systems): a scan that announces what it will read next decodes while the rest of
    /// the file arrives, instead of waiting for one page fault after another. Requests are served
    /// in order. A hint: failures are ignored.
    static void prefetch(std::shared_ptr<const void> owner, ByteSpan range);
    std::uint64_t size() const noexcept { return bytes_.size(); }
    const std::string& path() const noexcept { return path_; }

private:
    struct Impl;
    MappedFile(std::string path, std::unique_ptr<Impl> impl, ByteSpan bytes);

    std::string path_;
    std::unique_ptr<Impl> impl_;
    ByteSpan bytes_;
};

}  // namespace b2nd::storage
