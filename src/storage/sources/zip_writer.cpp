// Writing zip archives of stored members (zip.hpp, ZipWriter).
#include <set>

#include <b2nd/error.hpp>
#include <b2nd/format/byte_writer.hpp>
#include <b2nd/storage/zip.hpp>

#include "../../codec/compressors.hpp"
#include "../../detail/text.hpp"
#include "posix_file.hpp"
#include "zip_layout.hpp"

namespace b2nd::storage {

using namespace zip_layout;  // NOLINT: the record constants

namespace {

/// 1980-01-01 00:00, the earliest time zip can say: fixed, so that the same store gives the same
/// bytes (python writes the files' times; readers ignore them).
constexpr std::uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;
constexpr std::uint16_t kDosTime = 0;
constexpr std::size_t kPiece = std::size_t{16} << 20;

template <class T>
void put(std::vector<std::uint8_t>& b, T v) {
    for (std::size_t i = 0; i < sizeof(T); ++i) {
        b.push_back(static_cast<std::uint8_t>(static_cast<std::uint64_t>(v) >> (8 * i)));
    }
}

struct Entry {
    std::string name;
    std::uint64_t size = 0;
    std::uint64_t header_at = 0;
    std::uint32_t crc = 0;
};

/// General purpose bit 11: the name is UTF-8. Set, as Python's zipfile sets it, for a name that
/// is not ASCII: readers take a name without it as cp437 ("donn├⌐es" for "données").
std::uint16_t name_flags(const std::string& name) {
    for (const char c : name) {
        if ((static_cast<unsigned char>(c) & 0x80) != 0) {
            return 0x800;
        }
    }
    return 0;
}

}  // namespace

struct ZipWriter::Impl {
    detail::PosixFile file;
    bool zip64 = false;
    std::uint64_t at = 0;
    std::vector<Entry> entries;
    std::set<std::string> names;
    bool finished = false;

    Impl(const std::string& path, bool z64)
        : file(path, detail::PosixFile::Mode::create_new), zip64(z64) {}

    void write(const std::vector<std::uint8_t>& b) {
        file.write_at({b.data(), b.size()}, at);
        at += b.size();
    }
};

ZipWriter::ZipWriter(const std::string& path, bool zip64)
    : impl_(std::make_unique<Impl>(path, zip64)) {}

ZipWriter::~ZipWriter() = default;

void ZipWriter::add(const std::string& name, const ByteSource& data) {
    Impl& z = *impl_;
    const std::string who = b2nd::detail::quoted_path(z.file.path()) + ": member '" + name + "'";
    if (z.finished) {
        throw UsageError(who + ": the archive is finished");
    }
    if (name.empty() || name.size() > kMax16 || !z.names.insert(name).second) {
        throw UsageError(who + ": a member needs a new name of 1 to 65,535 bytes");
    }
    Entry e;
    e.name = name;
    e.size = data.size();
    e.header_at = z.at;
    // The CRC first (the source is read twice: a mapping or memory, cheap), so that the local
    // header is written once, complete, as zipfile writes it.
    for (std::uint64_t off = 0; off < e.size; off += kPiece) {
        const SourceBytes piece = data.read(off, std::min<std::uint64_t>(kPiece, e.size - off));
        e.crc = codec::detail::crc32(e.crc, piece.bytes.data(), piece.bytes.size());
    }
    const bool big = z.zip64 || e.size >= kMax32;
    std::vector<std::uint8_t> h;
    put(h, kLocalSig);
    put(h, big ? kVersion45 : kVersion20);
    put(h, name_flags(name));
    put<std::uint16_t>(h, 0);  // stored
    put(h, kDosTime);
    put(h, kDosDate);
    put(h, e.crc);
    put<std::uint32_t>(h, big ? kMax32 : static_cast<std::uint32_t>(e.size));
    put<std::uint32_t>(h, big ? kMax32 : static_cast<std::uint32_t>(e.size));
    put(h, static_cast<std::uint16_t>(name.size()));
    put<std::uint16_t>(h, big ? 20 : 0);
    h.insert(h.end(), name.begin(), name.end());
    if (big) {
        put(h, kZip64Extra);
        put<std::uint16_t>(h, 16);
        put(h, e.size);
        put(h, e.size);
    }
    z.write(h);
    for (std::uint64_t off = 0; off < e.size; off += kPiece) {
        const SourceBytes piece = data.read(off, std::min<std::uint64_t>(kPiece, e.size - off));
        z.file.write_at(piece.bytes, z.at);
        z.at += piece.bytes.size();
    }
    z.entries.push_back(std::move(e));
}

void ZipWriter::finish() {
    Impl& z = *impl_;
    if (z.finished) {
        return;
    }
    const std::uint64_t cd_at = z.at;
    std::vector<std::uint8_t> cd;
    for (const Entry& e : z.entries) {
        const bool big_size = z.zip64 || e.size >= kMax32;
        const bool big_at = z.zip64 || e.header_at >= kMax32;
        std::vector<std::uint8_t> extra;
        if (big_size || big_at) {
            put(extra, kZip64Extra);
            put<std::uint16_t>(extra,
                               static_cast<std::uint16_t>((big_size ? 16 : 0) + (big_at ? 8 : 0)));
            if (big_size) {
                put(extra, e.size);
                put(extra, e.size);
            }
            if (big_at) {
                put(extra, e.header_at);
            }
        }
        put(cd, kCentralSig);
        put(cd, kMadeByUnix);
        put(cd, extra.empty() ? kVersion20 : kVersion45);
        put(cd, name_flags(e.name));
        put<std::uint16_t>(cd, 0);  // stored
        put(cd, kDosTime);
        put(cd, kDosDate);
        put(cd, e.crc);
        put<std::uint32_t>(cd, big_size ? kMax32 : static_cast<std::uint32_t>(e.size));
        put<std::uint32_t>(cd, big_size ? kMax32 : static_cast<std::uint32_t>(e.size));
        put(cd, static_cast<std::uint16_t>(e.name.size()));
        put(cd, static_cast<std::uint16_t>(extra.size()));
        put<std::uint16_t>(cd, 0);               // comment
        put<std::uint16_t>(cd, 0);               // disk
        put<std::uint16_t>(cd, 0);               // internal attributes
        put<std::uint32_t>(cd, 0100644U << 16);  // a regular file, rw-r--r--
        put<std::uint32_t>(cd, big_at ? kMax32 : static_cast<std::uint32_t>(e.header_at));
        cd.insert(cd.end(), e.name.begin(), e.name.end());
        cd.insert(cd.end(), extra.begin(), extra.end());
    }
    z.write(cd);
    const std::uint64_t n = z.entries.size();
    const std::uint64_t cd_size = cd.size();
    const bool big = z.zip64 || n >= kMax16 || cd_at >= kMax32 || cd_size >= kMax32;
    std::vector<std::uint8_t> end;
    if (big) {
        const std::uint64_t end64_at = z.at;
        put(end, kEnd64Sig);
        put<std::uint64_t>(end, kEnd64Len - 12);
        put(end, kMadeByUnix);
        put(end, kVersion45);
        put<std::uint32_t>(end, 0);  // this disk
        put<std::uint32_t>(end, 0);  // the directory's disk
        put(end, n);
        put(end, n);
        put(end, cd_size);
        put(end, cd_at);
        put(end, kEnd64LocatorSig);
        put<std::uint32_t>(end, 0);
        put(end, end64_at);
        put<std::uint32_t>(end, 1);  // disks
    }
    put(end, kEndSig);
    put<std::uint16_t>(end, 0);
    put<std::uint16_t>(end, 0);
    put<std::uint16_t>(end, big ? kMax16 : static_cast<std::uint16_t>(n));
    put<std::uint16_t>(end, big ? kMax16 : static_cast<std::uint16_t>(n));
    put<std::uint32_t>(end, big ? kMax32 : static_cast<std::uint32_t>(cd_size));
    put<std::uint32_t>(end, big ? kMax32 : static_cast<std::uint32_t>(cd_at));
    put<std::uint16_t>(end, 0);  // comment
    z.write(end);
    z.file.sync();
    z.finished = true;
}

}  // namespace b2nd::storage
