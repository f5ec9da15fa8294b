#include <algorithm>
#include <cstring>
#include <string>

#include <b2nd/error.hpp>
#include <b2nd/format/byte_reader.hpp>
#include <b2nd/format/byte_writer.hpp>
#include <b2nd/format/frame_header.hpp>
#include <b2nd/format/msgpack.hpp>

#include "../detail/text.hpp"

namespace b2nd::format {

using b2nd::detail::num;

namespace {

constexpr std::uint8_t kHeaderArray = 0x9e;   // fixarray of 14
constexpr std::uint8_t kTrailerArray = 0x94;  // fixarray of 4
constexpr char kMagic[8] = {'b', '2', 'f', 'r', 'a', 'm', 'e', '\0'};
constexpr std::uint8_t kOffsets64 = 0x10;  // general_flags bits 4-5 = 1: 64-bit offsets
constexpr std::size_t kTrailerTail = 23;   // ce len(4) d8 type fp(16)

/// Parses a metalayers section (header or trailer): 93 cd idx_size de n {name, d2 offset}*
/// dc n {c6 len content}*. Offsets are relative to the start of `whole` (the header or trailer).
std::vector<Metalayer> read_metalayers(ByteReader& r,
                                       ByteSpan whole,
                                       std::size_t max_count,
                                       const char* what) {
    const std::string w(what);
    if (msgpack::read_fixarray(r, (w + " section").c_str()) != 3) {
        r.fail(w + " section: expected a fixarray of 3");
    }
    (void)msgpack::read_uint16(r, (w + " index size").c_str());
    r.expect_marker(msgpack::kMap16, (w + " map").c_str());
    const std::uint16_t n = r.read_be<std::uint16_t>((w + " count").c_str());
    if (n > max_count) {
        r.fail(w + ": " + num(n) + " entries exceed the maximum of " +
               num(static_cast<std::int64_t>(max_count)));
    }
    std::vector<Metalayer> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        Metalayer& m = out[i];
        m.name = msgpack::read_fixstr(r, (w + " name").c_str());
        const std::size_t at = r.position();
        const std::int32_t off = msgpack::read_int32(r, (w + " offset").c_str());
        if (off < 0 || static_cast<std::uint64_t>(off) >= whole.size()) {
            r.fail(w + " '" + m.name + "': content offset " + num(off) + " outside the " +
                       num(static_cast<std::int64_t>(whole.size())) + " bytes",
                   at);
        }
        ByteReader c(whole.subspan(static_cast<std::size_t>(off),
                                   whole.size() - static_cast<std::size_t>(off)),
                     r.offset() - r.position() + static_cast<std::uint64_t>(off));
        c.expect_marker(msgpack::kBin32, (w + " '" + m.name + "' content").c_str());
        const std::int32_t len = c.read_be<std::int32_t>((w + " '" + m.name + "' length").c_str());
        if (len < 0) {
            c.fail(w + " '" + m.name + "': negative content length " + num(len));
        }
        const ByteSpan content =
            c.take(static_cast<std::size_t>(len), (w + " '" + m.name + "' content").c_str());
        m.content.assign(content.begin(), content.end());
        m.offset = static_cast<std::size_t>(off) + 5;
    }
    r.expect_marker(msgpack::kArray16, (w + " contents array").c_str());
    const std::uint16_t n2 = r.read_be<std::uint16_t>((w + " contents count").c_str());
    if (n2 != n) {
        r.fail(w + ": " + num(n) + " names but " + num(n2) + " contents");
    }
    return out;
}

void write_metalayers(ByteWriter& w,
                      std::vector<std::uint8_t>& buf,
                      const std::vector<Metalayer>& ms,
                      const char* what) {
    const std::size_t section = buf.size();
    msgpack::write_fixarray(w, 3);
    msgpack::write_uint16(w, 0);  // index size, patched below
    w.u8(msgpack::kMap16);
    w.write_be(static_cast<std::uint16_t>(ms.size()));
    std::vector<std::size_t> offset_at;
    for (const Metalayer& m : ms) {
        if (m.name.size() > kMaxMetalayerName) {
            throw UsageError(std::string(what) + " name '" + m.name + "' is longer than 31 bytes");
        }
        msgpack::write_fixstr(w, m.name);
        w.u8(msgpack::kInt32);
        offset_at.push_back(buf.size());
        w.write_be<std::int32_t>(0);
    }
    const auto idx_size = static_cast<std::uint16_t>(buf.size() - section);
    store_be(buf.data() + section + 2, idx_size);
    w.u8(msgpack::kArray16);
    w.write_be(static_cast<std::uint16_t>(ms.size()));
    for (std::size_t i = 0; i < ms.size(); ++i) {
        store_be(buf.data() + offset_at[i], static_cast<std::int32_t>(buf.size()));
        w.u8(msgpack::kBin32);
        w.write_be(static_cast<std::int32_t>(ms[i].content.size()));
        w.bytes(ms[i].content);
    }
}

}  // namespace

const Metalayer* FrameHeader::metalayer(const std::string& name) const noexcept {
    for (const Metalayer& m : metalayers) {
        if (m.name == name) {
            return &m;
        }
    }
    return nullptr;
}

std::string foreign_format(ByteSpan start) {
    const auto starts_with = [&](const char* magic, std::size_t n) {
        return start.size() >= n && std::memcmp(start.data(), magic, n) == 0;
    };
    if (starts_with("\x93NUMPY", 6)) {
        return "a NumPy .npy file";
    }
    if (starts_with("PK\x03\x04", 4) || starts_with("PK\x05\x06", 4)) {
        return "a zip archive";
    }
    if (starts_with("\x89HDF\r\n\x1a\n", 8)) {
        return "an HDF5 file (netCDF-4 files are HDF5 files too)";
    }
    if (starts_with("CDF\x01", 4) || starts_with("CDF\x02", 4) || starts_with("CDF\x05", 4)) {
        return "a netCDF classic file";
    }
    if (starts_with("\x1f\x8b", 2)) {
        return "a gzip file";
    }
    if (starts_with("\x28\xb5\x2f\xfd", 4)) {
        return "a Zstandard file";
    }
    if (starts_with("PAR1", 4)) {
        return "a Parquet file";
    }
    if (starts_with("SIMPLE  =", 9)) {
        return "a FITS file";
    }
    if (starts_with("{", 1) || starts_with("[", 1)) {
        return "a JSON or text file";
    }
    return {};
}

FrameLengths read_frame_lengths(ByteSpan frame_start) {
    if (const std::string other = foreign_format(frame_start); !other.empty()) {
        throw FormatError("not a Blosc2 frame: this is " + other);
    }
    ByteReader r(frame_start);
    r.expect_marker(kHeaderArray, "frame header");
    r.expect_marker(msgpack::kFixStr | 8, "frame magic");
    const ByteSpan magic = r.take(8, "frame magic");
    if (std::memcmp(magic.data(), kMagic, 8) != 0) {
        r.fail("frame magic: expected \"b2frame\"", 2);
    }
    FrameLengths l{};
    l.header_len = msgpack::read_int32(r, "frame header_len");
    l.frame_len = msgpack::read_uint64(r, "frame frame_len");
    if (l.header_len < kFrameHeaderMinLen) {
        throw FormatError("frame header: header_len " + num(l.header_len) +
                              " is smaller than the minimum " + num(kFrameHeaderMinLen),
                          frame_offsets::kHeaderLen);
    }
    if (l.frame_len < static_cast<std::uint64_t>(l.header_len) + kFrameTrailerMinLen ||
        l.frame_len > static_cast<std::uint64_t>(INT64_MAX)) {
        throw FormatError("frame header: frame_len " + std::to_string(l.frame_len) +
                              " cannot hold the header (" + num(l.header_len) +
                              " bytes) and a trailer",
                          frame_offsets::kFrameLen);
    }
    return l;
}

FrameHeader read_frame_header(ByteSpan frame) {
    const FrameLengths lengths = read_frame_lengths(frame);
    if (static_cast<std::size_t>(lengths.header_len) > frame.size()) {
        throw FormatError("frame header: header_len " + num(lengths.header_len) + " exceeds the " +
                              num(static_cast<std::int64_t>(frame.size())) + " bytes available",
                          frame_offsets::kHeaderLen);
    }
    const ByteSpan hbytes = frame.first(static_cast<std::size_t>(lengths.header_len));
    ByteReader r(hbytes);
    r.seek(frame_offsets::kGeneralFlags - 1, "frame flags");
    FrameHeader h;
    h.header_len = lengths.header_len;
    h.frame_len = lengths.frame_len;
    r.expect_marker(msgpack::kFixStr | 4, "frame flags");
    h.general_flags = r.u8("frame general_flags");
    h.frame_type = r.u8("frame frame_type");
    h.codec_flags = r.u8("frame codec_flags");
    h.other_flags = r.u8("frame other_flags");
    h.nbytes = msgpack::read_int64(r, "frame nbytes");
    h.cbytes = msgpack::read_int64(r, "frame cbytes");
    h.typesize = msgpack::read_int32(r, "frame typesize");
    h.blocksize = msgpack::read_int32(r, "frame blocksize");
    h.chunksize = msgpack::read_int32(r, "frame chunksize");
    h.tcomp = msgpack::read_int16(r, "frame tcomp");
    h.tdecomp = msgpack::read_int16(r, "frame tdecomp");
    h.has_vlmetalayers = msgpack::read_bool(r, "frame has_vlmetalayers");
    r.expect_marker(msgpack::kFixExt16, "frame filter pipeline");
    h.nfilters = r.u8("frame nfilters");
    const std::size_t pipeline = r.position();
    for (auto& f : h.filters) {
        f = r.u8("frame filters");
    }
    h.udcodec = r.u8("frame udcodec");
    h.compcode_meta = r.u8("frame compcode_meta");
    for (auto& m : h.filters_meta) {
        m = r.u8("frame filters_meta");
    }
    h.other_flags2 = r.u8("frame other_flags2");
    r.skip(1, "frame reserved byte");

    if (h.version() > kMaxFrameVersion) {
        throw UnsupportedError("frame header: format version " + num(h.version()) +
                                   " is newer than the highest supported (" +
                                   num(kMaxFrameVersion) + ")",
                               frame_offsets::kGeneralFlags);
    }
    if ((h.general_flags & 0x30) != kOffsets64) {
        throw UnsupportedError(
            "frame header: only 64-bit chunk offsets are supported (general_flags " +
                hex_byte(h.general_flags) + ")",
            frame_offsets::kGeneralFlags);
    }
    if (h.frame_type > 1) {
        throw UnsupportedError(
            "frame header: frame type " + num(h.frame_type) + " is not supported",
            frame_offsets::kFrameType);
    }
    if (h.nbytes < 0 || h.cbytes < 0) {
        throw FormatError("frame header: negative nbytes or cbytes", frame_offsets::kNbytes);
    }
    // c-blosc2 2.7 writes chunksize -1 for a frame that never got a chunk; accept it there.
    if (h.typesize <= 0 || h.blocksize < 0 ||
        (h.chunksize < 0 && (h.chunksize != -1 || h.nbytes != 0))) {
        throw FormatError("frame header: typesize " + num(h.typesize) + ", blocksize " +
                              num(h.blocksize) + ", chunksize " + num(h.chunksize) + " are invalid",
                          47);
    }
    if (h.nfilters > kChunkMaxFilters) {
        throw FormatError(
            "frame header: " + num(h.nfilters) + " filters (at most " + num(kChunkMaxFilters) + ")",
            pipeline - 1);
    }
    if (h.header_len > kFrameHeaderMinLen) {
        r.seek(frame_offsets::kMetalayers, "frame metalayers");
        h.metalayers = read_metalayers(r, hbytes, kMaxMetalayers, "frame metalayer");
    }
    return h;
}

std::vector<std::uint8_t> write_frame_header(const FrameHeader& h) {
    std::vector<std::uint8_t> buf;
    buf.reserve(256);
    ByteWriter w(buf);
    w.u8(kHeaderArray);
    w.u8(msgpack::kFixStr | 8);
    w.bytes({reinterpret_cast<const std::uint8_t*>(kMagic), 8});
    msgpack::write_int32(w, 0);  // header_len, patched below
    msgpack::write_uint64(w, h.frame_len);
    w.u8(msgpack::kFixStr | 4);
    w.u8(h.general_flags);
    w.u8(h.frame_type);
    w.u8(h.codec_flags);
    w.u8(h.other_flags);
    msgpack::write_int64(w, h.nbytes);
    msgpack::write_int64(w, h.cbytes);
    msgpack::write_int32(w, h.typesize);
    msgpack::write_int32(w, h.blocksize);
    msgpack::write_int32(w, h.chunksize);
    msgpack::write_int16(w, h.tcomp);
    msgpack::write_int16(w, h.tdecomp);
    msgpack::write_bool(w, h.has_vlmetalayers);
    w.u8(msgpack::kFixExt16);
    w.u8(h.nfilters);
    w.bytes({h.filters.data(), h.filters.size()});
    w.u8(h.udcodec);
    w.u8(h.compcode_meta);
    w.bytes({h.filters_meta.data(), h.filters_meta.size()});
    w.u8(h.other_flags2);
    w.u8(0);
    if (h.metalayers.size() > kMaxMetalayers) {
        throw UsageError("a frame holds at most 16 metalayers");
    }
    write_metalayers(w, buf, h.metalayers, "metalayer");
    store_be(buf.data() + frame_offsets::kHeaderLen, static_cast<std::int32_t>(buf.size()));
    return buf;
}

std::uint32_t read_trailer_len(ByteSpan frame_tail, std::uint64_t at) {
    if (frame_tail.size() < kTrailerTail) {
        throw FormatError("frame trailer: truncated (need 23 bytes at the end of the frame)");
    }
    ByteReader r(frame_tail.subspan(frame_tail.size() - kTrailerTail, kTrailerTail),
                 at + frame_tail.size() - kTrailerTail);
    return msgpack::read_uint32(r, "frame trailer_len");
}

FrameTrailer read_frame_trailer(ByteSpan trailer, std::uint64_t at) {
    ByteReader r(trailer, at);
    FrameTrailer t;
    r.expect_marker(kTrailerArray, "frame trailer");
    t.version = r.u8("frame trailer version");
    if (t.version > 127) {
        r.fail("frame trailer: version is not a positive fixint", 1);
    }
    t.vlmetalayers = read_metalayers(r, trailer, kMaxVlMetalayers, "vlmetalayer");
    // The length and fingerprint sit at the end, whatever padding precedes them.
    r.seek(trailer.size() - kTrailerTail, "frame trailer_len");
    t.trailer_len = msgpack::read_uint32(r, "frame trailer_len");
    if (t.trailer_len != trailer.size()) {
        r.fail("frame trailer: trailer_len " + std::to_string(t.trailer_len) +
                   " disagrees with its " + num(static_cast<std::int64_t>(trailer.size())) +
                   " bytes",
               trailer.size() - kTrailerTail);
    }
    r.expect_marker(msgpack::kFixExt16, "frame fingerprint");
    t.fingerprint_type = r.u8("frame fingerprint type");
    const ByteSpan fp = r.take(16, "frame fingerprint");
    std::copy(fp.begin(), fp.end(), t.fingerprint.begin());
    return t;
}

std::vector<std::uint8_t> write_frame_trailer(const std::vector<Metalayer>& vlmetalayers,
                                              std::uint8_t fingerprint_type,
                                              const std::array<std::uint8_t, 16>& fingerprint) {
    std::vector<std::uint8_t> buf;
    ByteWriter w(buf);
    w.u8(kTrailerArray);
    w.u8(1);  // trailer format version
    if (vlmetalayers.size() > kMaxVlMetalayers) {
        throw UsageError("too many vlmetalayers");
    }
    write_metalayers(w, buf, vlmetalayers, "vlmetalayer");
    msgpack::write_uint32(w, static_cast<std::uint32_t>(buf.size() + kTrailerTail));
    w.u8(msgpack::kFixExt16);
    w.u8(fingerprint_type);
    w.bytes({fingerprint.data(), fingerprint.size()});
    return buf;
}

}  // namespace b2nd::format
