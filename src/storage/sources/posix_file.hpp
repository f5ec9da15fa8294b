// Internal: thin POSIX file helpers for the frame writers (pwrite loops, fsync, rename), with
// errors turned into IoError naming the path.
#pragma once

#include <cstdint>
#include <string>

#include <b2nd/byte_span.hpp>

namespace b2nd::storage::detail {

class PosixFile {
public:
    /// read_write: an existing file (links followed: the user's array may be one). create_new:
    /// a new file (O_EXCL), never through a link (O_NOFOLLOW): temporaries are made with
    /// unguessable names (publish.hpp's temporary_name), never by replacing what is there.
    enum class Mode { read_write, create_new };
    /// `mode_of`: for a created file, an existing file whose permission bits and owner it takes
    /// (the file it will replace, or its frame's); without one, 0666 less the umask.
    PosixFile(const std::string& path, Mode mode, const std::string& mode_of = {});
    ~PosixFile();
    PosixFile(const PosixFile&) = delete;
    PosixFile& operator=(const PosixFile&) = delete;
    PosixFile(PosixFile&& o) noexcept;

    /// Writes all of `data` at `offset` (one pwrite when the kernel allows, looping otherwise).
    void write_at(ByteSpan data, std::uint64_t offset);
    void read_at(MutableByteSpan out, std::uint64_t offset);
    void sync();
    void truncate(std::uint64_t size);
    std::uint64_t size() const;
    const std::string& path() const noexcept { return path_; }

private:
    std::string path_;
    int fd_ = -1;
};

/// What identifies a file's current version: a rename or rewrite changes it.
struct FileIdentity {
    std::uint64_t ino = 0;
    std::int64_t mtime_ns = 0;
    std::uint64_t size = 0;
    bool operator==(const FileIdentity& o) const noexcept {
        return ino == o.ino && mtime_ns == o.mtime_ns && size == o.size;
    }
};
FileIdentity file_identity(const std::string& path);

/// fsync calls made so far by this process through PosixFile::sync and fsync_directory (tests
/// count them to check what `durable` promises).
std::uint64_t fsync_calls() noexcept;

/// Whole-file helpers.
/// `path` written under a temporary name beside it and renamed over it; the new file takes the mode
/// and owner of `mode_of` (default: the file it replaces). `tail` follows `data` in the file.
void write_file_atomically(const std::string& path,
                           ByteSpan data,
                           bool durable,
                           const std::string& mode_of = {},
                           ByteSpan tail = {});
void fsync_directory(const std::string& dir);
void rename_file(const std::string& from, const std::string& to);
void remove_file(const std::string& path);
bool is_directory(const std::string& path);
bool path_exists(const std::string& path);
/// An existing file whose mode has no write bit for anyone.
bool read_only(const std::string& path);
/// A new directory, with the mode and owner of `mode_of` when given (else 0777 less the umask).
void make_directory(const std::string& path, const std::string& mode_of = {});
std::string directory_of(const std::string& path);

}  // namespace b2nd::storage::detail
