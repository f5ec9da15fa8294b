// How a frame is opened (storage::Frame::open); an array's OpenOptions (params.hpp) add to it.
//
// Advanced (b2nd::storage, frames and files): for tools that work on chunks as stored.
// Programs that read and write arrays need only <b2nd/b2nd.hpp>.
#pragma once

#include <cstddef>
#include <cstdint>

#include <b2nd/storage/http.hpp>
#include <b2nd/storage/s3.hpp>

namespace b2nd::storage {

/// How many chunks an open accepts by default (an offsets index of 128 MiB): a bound against
/// absurd sizes in files; OpenOptions::max_chunks and CreateOptions::max_chunks raise it.
inline constexpr std::int64_t kDefaultMaxChunks = std::int64_t{1} << 24;

/// Options for Frame::open (and, inherited, for opening an array).
struct OpenOptions {
    bool writable = false;     ///< open for appending/updating (contiguous or sparse on disk)
    std::uint64_t offset = 0;  ///< where the frame starts in the file (contiguous frames)
    std::size_t max_mapped_chunk_files = 256;  ///< sparse frames: chunk files kept mapped
    /// Refuse frames of more chunks (larger offsets indexes); a writer also refuses to grow an
    /// array beyond it.
    std::int64_t max_chunks = kDefaultMaxChunks;
    /// Writing: fsync data before the header names it, and the header after, at every commit
    /// (a sparse frame: the new chunk files and the index before the index's rename, then the
    /// directory), so that a commit survives power loss, not only crashes of the process. On by
    /// default; off for scratch data, where commits are several times faster (docs/sharing.md,
    /// "Sharing an array between processes").
    bool durable = true;
    /// Writing: flush the chunks staged to the disk in the background, every few tens of MiB,
    /// while writing goes on (on a thread that waits on the disk, not on a core). For a file made
    /// durable at the end (one sync(), as b2nd's own create and copy do): that fsync then waits
    /// for little. A flush that fails makes the next commit fail (IoError naming the file).
    bool flush_behind = false;
    /// Take part in the lock protocol shared with c-blosc2 (the NAME.b2lock sidecar): one writer
    /// at a time, snapshots parsed while no commit is in progress, the generation counter. Off:
    /// no sidecar is touched (for frames nobody else uses, or media where none can exist).
    bool locking = true;
    /// Writing: how long to wait for another writer to close (0: fail at once with LockError).
    int lock_wait_ms = 0;
    /// The longest a snapshot (reading) or a commit (writing) waits for the lock file's flock,
    /// which a commit holds while it is written: a process that keeps it locked makes the open
    /// or the commit fail with a LockError naming it, never hang. Negative: no limit.
    int lock_timeout_ms = 60000;
    /// Writing a contiguous frame: after a commit that leaves the file larger than twice its
    /// compacted size plus kAutoCompactSlack, compact() it (readers of older snapshots keep the
    /// old file). Updates leave the replaced bytes behind; this bounds how many.
    bool auto_compact = true;
    /// Writing a contiguous frame that no other handle, in any process, reads meanwhile (one
    /// built under a temporary name, as b2nd's own create and copy do): a commit writes over the
    /// index and trailer the previous one left instead of after them, so that building leaves no
    /// dead space. A crash may then leave the file unreadable, so use it for private files only.
    bool exclusive = false;
    /// Check the frame's checksums, where it carries them (docs/CHECKSUMS.md): the header, the
    /// index and the vlmetalayers at open, each chunk the first time its bytes are used; a
    /// mismatch is a FormatError naming the file, the chunk and the offset. Off: nothing is
    /// checked (commits still keep a valid table up to date).
    bool verify_checksums = true;
    /// Frames opened by URL (http.hpp): timeouts, retries, requests in flight, merge gap.
    HttpOptions http;
    /// s3:// URLs (s3.hpp): credentials, region, endpoint; empty fields from the environment
    /// and the AWS files.
    S3Options s3;
};

}  // namespace b2nd::storage
