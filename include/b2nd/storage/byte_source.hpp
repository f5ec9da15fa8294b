// Where a frame's bytes come from: one small interface, so that a frame can lie in a whole
// mapped file, in a window of a mapping that several frames share (the members of one zip file),
// in a caller's memory buffer, or in ranges fetched over HTTP (http.hpp).
//
//   auto zip = storage::mapped_source(storage::MappedFile::open("store.b2z"));
//   auto member = storage::window_source(zip, 4096, 1 << 20);   // [4096, 4096 + 1 MiB)
//   storage::Frame f = storage::Frame::open(member);               // read-only, no copy
//
// Sources that hold their bytes in memory (mappings, buffers, windows of those) answer view():
// the frame then reads chunks as spans of it, with no copy and no call per chunk. A source without
// a view is asked for exact ranges: the header, the trailer, the offsets index, and for each chunk
// its header and then its bytes; it may block and may fail with IoError.
//
// Advanced (b2nd::storage, frames and files): for tools that work on chunks as stored.
// Programs that read and write arrays need only <b2nd/b2nd.hpp>.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <b2nd/byte_span.hpp>
#include <b2nd/storage/mapped_file.hpp>

namespace b2nd::storage {

/// Bytes read from a source, kept valid by `owner` (the mapping, the buffer's owner, or a copy).
struct SourceBytes {
    ByteSpan bytes;                     ///< the bytes
    std::shared_ptr<const void> owner;  ///< keeps them valid
};

/// One range of a batch read (ByteSource::read_into): bytes [offset, offset + n) into `into`.
/// With `got` set, the source may end inside the range (a remote file whose length is not known
/// yet): *got receives how many bytes there were. `probe`: bytes that tell whether the file
/// changed; a remote source asks the server for them even when it kept them, within another
/// request of the batch where it can.
struct RangeInto {
    std::uint64_t offset = 0;      ///< the first byte
    std::uint64_t n = 0;           ///< how many
    std::uint8_t* into = nullptr;  ///< where they go
    std::uint64_t* got =
        nullptr;         ///< with got: how many there were (the source may end inside the range)
    bool probe = false;  ///< ask the server even when the bytes are at hand (a change probe)
};

/// What a source fetched so far (remote sources; zeros for the others).
struct TransferStats {
    std::uint64_t requests = 0;  ///< requests answered (each retry counts)
    std::uint64_t bytes = 0;     ///< body bytes received
    std::uint64_t retries = 0;   ///< requests repeated after a transient failure
};

class ByteSource;

/// Ranges of one source, for read_many().
struct SourceRanges {
    std::shared_ptr<const ByteSource> file;  ///< the source
    std::vector<RangeInto> ranges;           ///< its ranges
};

/// A source of bytes: a driver (sources.hpp opens the one a path or URL names). Every member
/// is safe from several threads at once.
class ByteSource {
public:
    virtual ~ByteSource() = default;
    /// Bytes in the source.
    virtual std::uint64_t size() const = 0;
    /// How messages name it: a path (or URL), or empty for a caller's buffer (`<memory>`).
    virtual const std::string& name() const = 0;
    /// Bytes [offset, offset + n), exactly n of them. Safe from several threads at once.
    /// \throws FormatError naming the source when the range passes its end; IoError when the
    ///         bytes cannot be had (a source that fetches them)
    virtual SourceBytes read(std::uint64_t offset, std::uint64_t n) const = 0;
    /// All of the source as one span in memory, when it has one (zero-copy readers use it).
    virtual std::optional<SourceBytes> view() const { return std::nullopt; }
    /// Where byte 0 of this source lies in the file name() names (a window's offset).
    virtual std::uint64_t offset_in_file() const noexcept { return 0; }

    // ---- sources whose reads cost a round trip (http.hpp) ----
    /// True when each read is a request to another machine: frames then fetch chunk headers and
    /// the touched blocks, many at once, rather than whole chunks one by one.
    virtual bool remote() const noexcept { return false; }
    /// Reads every range into its buffer; a remote source fetches them together (near ranges
    /// merged into one request, several requests in flight). The default calls read().
    /// \throws as read()
    virtual void read_into(const std::vector<RangeInto>& ranges) const;
    /// What identifies the bytes behind the source (a remote file's ETag or Last-Modified, and
    /// its size), for caches that must notice a changed file; empty when nothing does.
    virtual std::string stamp() const { return {}; }
    /// Requests and bytes a remote source used so far.
    virtual TransferStats transfers() const { return {}; }
    /// True when every answer carries a validator that changes with any change of the content
    /// (an object store's ETag) and is checked against the first one: a reader then needs no
    /// probe of the file's bytes to notice a new version (over plain HTTP it does: a rewrite
    /// may keep the size and the modification time, and so the ETag).
    virtual bool strong_identity() const noexcept { return false; }

    // ---- drivers of files in a directory or under a prefix (sparse frames, stores) ----
    /// The file `name` beside this one (relative to this file's directory; "a/b" goes down),
    /// reached the same way (the same connections and credentials). No request is made yet: its
    /// size() is unknown (UINT64_MAX) until a read says how much there was (RangeInto::got).
    /// Null for sources that have no such place (buffers, windows).
    virtual std::shared_ptr<const ByteSource> sibling(const std::string& name) const;
    /// The same file opened afresh, its identity (stamp()) learned again: for a reader that
    /// must notice a new version. Null for sources whose bytes cannot change under a reader.
    virtual std::shared_ptr<const ByteSource> reopen() const;
    /// Sources with one equal, non-null key fetch their ranges together: read_many() hands all
    /// of them to one of them (read_batch). Null: this source reads alone.
    virtual const void* batch_key() const noexcept { return nullptr; }
    /// Reads the ranges of every entry of `batch`, all sources of this one's batch_key() (this
    /// one among them). The default reads them one source after the other.
    virtual void read_batch(const std::vector<SourceRanges*>& batch) const;
};

/// Reads every source's ranges: those of sources of one batch_key() together (a remote
/// driver's in one batch of requests, all in flight at once), the others source by source.
/// \throws as ByteSource::read()
void read_many(std::vector<SourceRanges>& batch);

/// A whole mapped file.
std::shared_ptr<const ByteSource> mapped_source(std::shared_ptr<const MappedFile> file);
/// A caller's buffer: `owner` (may be null) keeps it alive; otherwise it must outlive every frame
/// read from it. `name` is what messages call it (empty: `<memory>`).
std::shared_ptr<const ByteSource> memory_source(ByteSpan bytes,
                                                std::shared_ptr<const void> owner = {},
                                                std::string name = {});
/// Bytes [offset, offset + size) of `whole`, as a source of their own (offset 0 is `offset` of
/// `whole`); windows of windows compose. `name`: what messages call it (empty: whole's name).
/// \throws UsageError when the window passes the end
std::shared_ptr<const ByteSource> window_source(std::shared_ptr<const ByteSource> whole,
                                                std::uint64_t offset,
                                                std::uint64_t size,
                                                std::string name = {});

}  // namespace b2nd::storage
