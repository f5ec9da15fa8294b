// The subset of msgpack (https://github.com/msgpack/msgpack/blob/master/spec.md) that the frame,
// b2nd and caterva formats use. Integers are big-endian. Every read checks its marker.
//
// Advanced (b2nd::format, the byte layer): for tools that parse or write the format itself.
// Programs that read and write arrays need only <b2nd/b2nd.hpp>.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <b2nd/format/byte_reader.hpp>
#include <b2nd/format/byte_writer.hpp>

namespace b2nd::format::msgpack {

// Markers.
inline constexpr std::uint8_t kFixArray = 0x90;  // | n (n <= 15)
inline constexpr std::uint8_t kFixStr = 0xa0;    // | n (n <= 31)
inline constexpr std::uint8_t kFalse = 0xc2;
inline constexpr std::uint8_t kTrue = 0xc3;
inline constexpr std::uint8_t kBin32 = 0xc6;
inline constexpr std::uint8_t kUint16 = 0xcd;
inline constexpr std::uint8_t kUint32 = 0xce;
inline constexpr std::uint8_t kUint64 = 0xcf;
inline constexpr std::uint8_t kInt16 = 0xd1;
inline constexpr std::uint8_t kInt32 = 0xd2;
inline constexpr std::uint8_t kInt64 = 0xd3;
inline constexpr std::uint8_t kFixExt16 = 0xd8;
inline constexpr std::uint8_t kStr32 = 0xdb;
inline constexpr std::uint8_t kArray16 = 0xdc;
inline constexpr std::uint8_t kMap16 = 0xde;

/// Reads a fixarray marker and returns its length.
inline int read_fixarray(ByteReader& r, const char* field) {
    const std::size_t at = r.position();
    const std::uint8_t m = r.u8(field);
    if ((m & 0xf0) != kFixArray) {
        r.fail(std::string(field) + ": expected a msgpack fixarray, got marker " + hex_byte(m), at);
    }
    return m & 0x0f;
}

/// Reads a fixstr (up to 31 bytes).
inline std::string read_fixstr(ByteReader& r, const char* field) {
    const std::size_t at = r.position();
    const std::uint8_t m = r.u8(field);
    if ((m & 0xe0) != kFixStr) {
        r.fail(std::string(field) + ": expected a msgpack fixstr, got marker " + hex_byte(m), at);
    }
    const ByteSpan s = r.take(m & 0x1f, field);
    return {reinterpret_cast<const char*>(s.data()), s.size()};
}

inline bool read_bool(ByteReader& r, const char* field) {
    const std::size_t at = r.position();
    const std::uint8_t m = r.u8(field);
    if (m != kTrue && m != kFalse) {
        r.fail(std::string(field) + ": expected a msgpack bool, got marker " + hex_byte(m), at);
    }
    return m == kTrue;
}

inline std::int16_t read_int16(ByteReader& r, const char* field) {
    r.expect_marker(kInt16, field);
    return r.read_be<std::int16_t>(field);
}
inline std::int32_t read_int32(ByteReader& r, const char* field) {
    r.expect_marker(kInt32, field);
    return r.read_be<std::int32_t>(field);
}
inline std::int64_t read_int64(ByteReader& r, const char* field) {
    r.expect_marker(kInt64, field);
    return r.read_be<std::int64_t>(field);
}
inline std::uint16_t read_uint16(ByteReader& r, const char* field) {
    r.expect_marker(kUint16, field);
    return r.read_be<std::uint16_t>(field);
}
inline std::uint32_t read_uint32(ByteReader& r, const char* field) {
    r.expect_marker(kUint32, field);
    return r.read_be<std::uint32_t>(field);
}
inline std::uint64_t read_uint64(ByteReader& r, const char* field) {
    r.expect_marker(kUint64, field);
    return r.read_be<std::uint64_t>(field);
}

inline void write_fixarray(ByteWriter& w, int n) {
    w.u8(static_cast<std::uint8_t>(kFixArray | n));
}
inline void write_fixstr(ByteWriter& w, std::string_view s) {
    w.u8(static_cast<std::uint8_t>(kFixStr | s.size()));
    w.bytes({reinterpret_cast<const std::uint8_t*>(s.data()), s.size()});
}
inline void write_bool(ByteWriter& w, bool v) {
    w.u8(v ? kTrue : kFalse);
}
inline void write_int16(ByteWriter& w, std::int16_t v) {
    w.u8(kInt16);
    w.write_be(v);
}
inline void write_int32(ByteWriter& w, std::int32_t v) {
    w.u8(kInt32);
    w.write_be(v);
}
inline void write_int64(ByteWriter& w, std::int64_t v) {
    w.u8(kInt64);
    w.write_be(v);
}
inline void write_uint16(ByteWriter& w, std::uint16_t v) {
    w.u8(kUint16);
    w.write_be(v);
}
inline void write_uint32(ByteWriter& w, std::uint32_t v) {
    w.u8(kUint32);
    w.write_be(v);
}
inline void write_uint64(ByteWriter& w, std::uint64_t v) {
    w.u8(kUint64);
    w.write_be(v);
}

}  // namespace b2nd::format::msgpack
