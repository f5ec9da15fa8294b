// The members of a zip archive as byte sources: python-blosc2 keeps the arrays of a TreeStore or
// DictStore (".b2z") as members stored without compression, each a whole frame, so a member is a
// window of the archive and a frame opens over it without extraction or copy.
//
//   auto zip = storage::ZipDirectory::read(storage::mapped_source(MappedFile::open("t.b2z")));
//   for (const auto& m : zip.members()) { ... m.name, m.size ... }
//   storage::Frame f = storage::Frame::open(zip.open(*zip.find("group/pressure.b2nd")));
//
// Reading the directory costs two reads of the archive (its tail, then the central directory);
// opening a member one more (its local header). ZIP64 archives are read; compressed and
// encrypted members, and archives spanning several disks, are refused with a clear error.
//
// Advanced (b2nd::storage, frames and files): for tools that work on chunks as stored.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <b2nd/storage/byte_source.hpp>

namespace b2nd::storage {

/// One member as the central directory describes it.
struct ZipMember {
    std::string name;              ///< the member's name in the archive
    std::uint64_t size = 0;        ///< bytes of data (stored: compressed size = size)
    std::uint64_t header_at = 0;   ///< where its local header starts in the archive
    std::uint16_t method = 0;      ///< 0: stored
    std::uint16_t flags = 0;       ///< general purpose flags (bit 0: encrypted)
    std::uint32_t crc32 = 0;       ///< the CRC-32 the directory records
    std::uint64_t compressed = 0;  ///< compressed size
};

/// The central directory of a zip archive (python-blosc2's .b2z), over one mapping: its stored
/// members open in place, as windows of the archive.
class ZipDirectory {
public:
    /// Reads the central directory of the archive in `archive`.
    /// \throws FormatError naming the archive (not a zip archive, truncated, inconsistent
    ///         offsets or sizes), UnsupportedError (several disks)
    static ZipDirectory read(std::shared_ptr<const ByteSource> archive);

    /// In central-directory order.
    const std::vector<ZipMember>& members() const noexcept { return members_; }
    /// The member named `name`, or null.
    const ZipMember* find(const std::string& name) const noexcept;
    /// A member's data, as a window of the archive (no copy when the archive is mapped).
    /// \throws UnsupportedError for a compressed or encrypted member; FormatError when its
    ///         local header does not fit the archive or disagrees with the directory
    std::shared_ptr<const ByteSource> open(const ZipMember& m) const;
    /// Where a member's data starts in the archive (after its local header). \throws as open()
    std::uint64_t data_offset(const ZipMember& m) const;
    /// The archive as a byte source (members are windows of it).
    const std::shared_ptr<const ByteSource>& archive() const noexcept { return archive_; }

private:
    std::shared_ptr<const ByteSource> archive_;
    std::vector<ZipMember> members_;
};

/// Writes a zip archive of members stored uncompressed, as python-blosc2's .b2z stores are (and
/// as Python's zipfile writes them: version 20 headers, CRC-32 and sizes in the local header, no
/// data descriptors), with ZIP64 records where a size, an offset or the member count needs them.
///
///   storage::ZipWriter w("new.b2z.tmp");
///   w.add("big.b2nd", *source_of_big);
///   w.add("embed.b2e", *source_of_embed);   // python's order: the embed store last
///   w.finish();                             // central directory, end record, fsync
class ZipWriter {
public:
    /// Creates (or truncates) `path`. `zip64`: ZIP64 records for every member, whatever its
    /// size (tests; archives above 4 GiB get them anyway).
    explicit ZipWriter(const std::string& path, bool zip64 = false);
    ~ZipWriter();
    ZipWriter(const ZipWriter&) = delete;
    ZipWriter& operator=(const ZipWriter&) = delete;

    /// Appends member `name` with the bytes of `data`. \throws UsageError for an empty or
    /// repeated name, a name longer than 65,535 bytes; IoError
    void add(const std::string& name, const ByteSource& data);
    /// Writes the central directory and the end records and makes the file durable (fsync).
    void finish();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace b2nd::storage
