// Zip archives read as a directory of members (zip.hpp), after PKWARE's APPNOTE: the end of
// central directory record (and its ZIP64 form), the central directory, and each member's local
// header. Every offset and size is checked against the archive before it is used.
#include <algorithm>
#include <unordered_set>

#include <b2nd/error.hpp>
#include <b2nd/format/byte_reader.hpp>
#include <b2nd/format/checked_math.hpp>
#include <b2nd/storage/zip.hpp>

#include "../../detail/text.hpp"
#include "zip_layout.hpp"

namespace b2nd::storage {

namespace {

using namespace zip_layout;  // NOLINT: the record constants

/// Where the central directory is and how many entries it holds.
struct Directory {
    std::uint64_t entries = 0, size = 0, offset = 0;
};

/// A problem of the archive at byte `at` (ZipDirectory::read adds the archive's name).
[[noreturn]] void bad(const std::string& what, std::uint64_t at) {
    throw FormatError("zip archive: " + what, at);
}

/// The end of central directory record (ZIP64's when the archive has one).
Directory find_directory(const ByteSource& a) {
    const std::uint64_t size = a.size();
    if (size < kEndLen) {
        bad("too short (" + std::to_string(size) + " bytes) to hold an end record", 0);
    }
    const std::uint64_t tail_len = std::min(size, kEndLen + kMaxComment);
    const std::uint64_t tail_at = size - tail_len;
    const SourceBytes tail = a.read(tail_at, tail_len);
    // The last signature whose comment length reaches exactly the end of the archive.
    std::uint64_t end_at = UINT64_MAX;
    for (std::uint64_t k = tail_len - kEndLen + 1; k-- > 0;) {
        const std::uint8_t* p = tail.bytes.data() + k;
        if (format::load_le<std::uint32_t>(p) == kEndSig &&
            k + kEndLen + format::load_le<std::uint16_t>(p + 20) == tail_len) {
            end_at = k;
            break;
        }
    }
    if (end_at == UINT64_MAX) {
        bad("no end of central directory record (not a zip archive, or truncated)",
            size > 0 ? size - 1 : 0);
    }
    format::ByteReader r(tail.bytes.subspan(static_cast<std::size_t>(end_at), kEndLen),
                         tail_at + end_at);
    r.skip(4, "signature");
    const auto disk = r.read_le<std::uint16_t>("disk number");
    const auto cd_disk = r.read_le<std::uint16_t>("directory disk");
    const auto on_disk = r.read_le<std::uint16_t>("entries on this disk");
    Directory d;
    d.entries = r.read_le<std::uint16_t>("entries");
    d.size = r.read_le<std::uint32_t>("directory size");
    d.offset = r.read_le<std::uint32_t>("directory offset");
    const bool zip64 = d.entries == kMax16 || d.size == kMax32 || d.offset == kMax32;
    if (!zip64 && (disk != 0 || cd_disk != 0 || on_disk != d.entries)) {
        throw UnsupportedError(b2nd::detail::quoted_path(a.name()) +
                               ": a zip archive spanning several disks");
    }
    const std::uint64_t end_pos = tail_at + end_at;
    if (zip64) {
        if (end_pos < kEnd64LocatorLen) {
            bad("a ZIP64 archive without its locator", end_pos);
        }
        const SourceBytes loc = a.read(end_pos - kEnd64LocatorLen, kEnd64LocatorLen);
        format::ByteReader l(loc.bytes, end_pos - kEnd64LocatorLen);
        if (l.read_le<std::uint32_t>("ZIP64 locator signature") != kEnd64LocatorSig) {
            bad("a ZIP64 archive without its locator", end_pos - kEnd64LocatorLen);
        }
        l.skip(4, "ZIP64 disk");
        const auto at = l.read_le<std::uint64_t>("ZIP64 end record offset");
        if (at > end_pos || end_pos - at < kEnd64Len) {
            bad("the ZIP64 end record offset " + std::to_string(at) + " is out of place",
                end_pos - kEnd64LocatorLen + 8);
        }
        const SourceBytes rec = a.read(at, kEnd64Len);
        format::ByteReader e(rec.bytes, at);
        if (e.read_le<std::uint32_t>("ZIP64 end signature") != kEnd64Sig) {
            bad("no ZIP64 end record where its locator points", at);
        }
        e.skip(8 + 2 + 2, "ZIP64 record size and versions");
        const auto disk64 = e.read_le<std::uint32_t>("ZIP64 disk");
        const auto cd_disk64 = e.read_le<std::uint32_t>("ZIP64 directory disk");
        const auto on_disk64 = e.read_le<std::uint64_t>("ZIP64 entries on this disk");
        d.entries = e.read_le<std::uint64_t>("ZIP64 entries");
        d.size = e.read_le<std::uint64_t>("ZIP64 directory size");
        d.offset = e.read_le<std::uint64_t>("ZIP64 directory offset");
        if (disk64 != 0 || cd_disk64 != 0 || on_disk64 != d.entries) {
            throw UnsupportedError(b2nd::detail::quoted_path(a.name()) +
                                   ": a zip archive spanning several disks");
        }
    }
    std::uint64_t cd_end = 0;
    if (format::add_overflows(d.offset, d.size, &cd_end) || cd_end > end_pos) {
        bad("the central directory [" + std::to_string(d.offset) + ", +" + std::to_string(d.size) +
                ") does not lie before its end record",
            end_pos + 16);
    }
    if (d.entries > d.size / kCentralLen) {
        bad(std::to_string(d.entries) + " entries cannot fit a central directory of " +
                std::to_string(d.size) + " bytes",
            end_pos + 10);
    }
    return d;
}

/// Reads one ZIP64 extended-information field into the sizes and offset that need it.
void apply_zip64_extra(ByteSpan extra, std::uint64_t at, ZipMember& m) {
    format::ByteReader r(extra, at);
    while (r.remaining() >= 4) {
        const auto id = r.read_le<std::uint16_t>("extra field id");
        const auto len = r.read_le<std::uint16_t>("extra field length");
        const ByteSpan data = r.take(len, "extra field");
        if (id != 0x0001) {
            continue;
        }
        format::ByteReader z(data, at);
        if (m.size == kMax32) {
            m.size = z.read_le<std::uint64_t>("ZIP64 size");
        }
        if (m.compressed == kMax32) {
            m.compressed = z.read_le<std::uint64_t>("ZIP64 compressed size");
        }
        if (m.header_at == kMax32) {
            m.header_at = z.read_le<std::uint64_t>("ZIP64 local header offset");
        }
    }
}

}  // namespace

ZipDirectory ZipDirectory::read(std::shared_ptr<const ByteSource> archive) {
    if (!archive) {
        throw UsageError("ZipDirectory::read: no archive");
    }
    const ByteSource& a = *archive;
    ZipDirectory z;
    try {
        const Directory d = find_directory(a);
        const SourceBytes cd = a.read(d.offset, d.size);
        format::ByteReader r(cd.bytes, d.offset);
        z.members_.reserve(static_cast<std::size_t>(d.entries));
        std::unordered_set<std::string> names;
        for (std::uint64_t i = 0; i < d.entries; ++i) {
            const std::uint64_t entry_at = d.offset + r.position();
            if (r.read_le<std::uint32_t>("central header signature") != kCentralSig) {
                bad("central directory entry " + std::to_string(i) + " has no signature", entry_at);
            }
            ZipMember m;
            r.skip(4, "versions");
            m.flags = r.read_le<std::uint16_t>("flags");
            m.method = r.read_le<std::uint16_t>("method");
            r.skip(4, "time and date");
            m.crc32 = r.read_le<std::uint32_t>("crc-32");
            m.compressed = r.read_le<std::uint32_t>("compressed size");
            m.size = r.read_le<std::uint32_t>("size");
            const auto name_len = r.read_le<std::uint16_t>("name length");
            const auto extra_len = r.read_le<std::uint16_t>("extra length");
            const auto comment_len = r.read_le<std::uint16_t>("comment length");
            r.skip(2 + 2 + 4, "disk and attributes");
            m.header_at = r.read_le<std::uint32_t>("local header offset");
            const ByteSpan name = r.take(name_len, "name");
            m.name.assign(reinterpret_cast<const char*>(name.data()), name.size());
            const std::uint64_t extra_at = d.offset + r.position();
            apply_zip64_extra(r.take(extra_len, "extra fields"), extra_at, m);
            r.skip(comment_len, "comment");
            std::uint64_t end = 0;
            if (m.header_at >= d.offset ||
                format::add_overflows(m.header_at + kLocalLen, m.compressed, &end) ||
                end > d.offset) {
                bad("member '" + m.name + "' (" + std::to_string(m.compressed) + " bytes at " +
                        std::to_string(m.header_at) + ") does not lie before the directory",
                    entry_at + 42);
            }
            // Two members of one name are two different files to two readers (python's
            // zipfile takes the last, a scan the first): such an archive is refused.
            if (!names.insert(m.name).second) {
                bad("two members are named '" + m.name +
                        "'; readers disagree on which one the name means, so the archive is "
                        "refused",
                    entry_at);
            }
            z.members_.push_back(std::move(m));
        }
    } catch (const FormatError& e) {
        rethrow_with_context(e, b2nd::detail::quoted_path(a.name()));
    }
    z.archive_ = std::move(archive);
    return z;
}

const ZipMember* ZipDirectory::find(const std::string& name) const noexcept {
    for (const ZipMember& m : members_) {
        if (m.name == name) {
            return &m;
        }
    }
    return nullptr;
}

std::shared_ptr<const ByteSource> ZipDirectory::open(const ZipMember& m) const {
    return window_source(archive_, data_offset(m), m.size);
}

std::uint64_t ZipDirectory::data_offset(const ZipMember& m) const {
    const ByteSource& a = *archive_;
    const std::string who = b2nd::detail::quoted_path(a.name()) + ": member '" + m.name + "'";
    if ((m.flags & 1U) != 0) {
        throw UnsupportedError(who + " is encrypted");
    }
    if (m.method != 0 || m.compressed != m.size) {
        throw UnsupportedError(who + " is compressed (method " + std::to_string(m.method) +
                               "); python-blosc2 stores members uncompressed");
    }
    if (m.header_at > a.size() || a.size() - m.header_at < kLocalLen) {
        throw FormatError(who + ": its local header lies past the end of the archive", m.header_at);
    }
    const SourceBytes h = a.read(m.header_at, kLocalLen);
    format::ByteReader r(h.bytes, m.header_at);
    if (r.read_le<std::uint32_t>("local header signature") != kLocalSig) {
        throw FormatError(who + ": no local header where the directory points", m.header_at);
    }
    r.skip(22, "local header fields");
    const auto name_len = r.read_le<std::uint16_t>("local name length");
    const auto extra_len = r.read_le<std::uint16_t>("local extra length");
    const std::uint64_t data_at = m.header_at + kLocalLen + name_len + extra_len;
    if (data_at > a.size() || a.size() - data_at < m.size) {
        throw FormatError(who + ": its " + std::to_string(m.size) + " bytes at " +
                              std::to_string(data_at) + " pass the end of the archive",
                          m.header_at + 26);
    }
    return data_at;
}

}  // namespace b2nd::storage
