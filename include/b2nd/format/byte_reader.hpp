// A bounds-checked cursor over untrusted bytes. Every read names its field so that a truncated
// input reports what was being read, where, and how many bytes were missing.
//
// Advanced (b2nd::format, the byte layer): for tools that parse or write the format itself.
// Programs that read and write arrays need only <b2nd/b2nd.hpp>.
#pragma once

#include <cstdint>
#include <string>

#include <b2nd/byte_span.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/endian.hpp>

namespace b2nd::format {

/// "0x" followed by two lowercase hex digits.
inline std::string hex_byte(std::uint8_t v) {
    static const char* digits = "0123456789abcdef";
    std::string s = "0x";
    s += digits[v >> 4];
    s += digits[v & 15];
    return s;
}

/// A bounds-checked cursor over bytes being parsed: every read names its field, and a read past
/// the end is a FormatError naming it and its offset.
class ByteReader {
public:
    /// Reads `bytes`; offsets in error messages are `base_offset` + position in `bytes`.
    explicit ByteReader(ByteSpan bytes, std::uint64_t base_offset = 0) noexcept
        : bytes_(bytes), base_(base_offset) {}

    /// The next byte. \throws FormatError naming `field` at the end
    std::uint8_t u8(const char* field) {
        require(1, field);
        return bytes_[pos_++];
    }

    template <class T>
    /// The next little-endian T. \throws FormatError naming `field` past the end
    T read_le(const char* field) {
        require(sizeof(T), field);
        T v = load_le<T>(bytes_.data() + pos_);
        pos_ += sizeof(T);
        return v;
    }

    template <class T>
    /// The next big-endian T. \throws FormatError naming `field` past the end
    T read_be(const char* field) {
        require(sizeof(T), field);
        T v = load_be<T>(bytes_.data() + pos_);
        pos_ += sizeof(T);
        return v;
    }

    /// The next n bytes as a sub-span; advances past them.
    ByteSpan take(std::size_t n, const char* field) {
        require(n, field);
        ByteSpan s = bytes_.subspan(pos_, n);
        pos_ += n;
        return s;
    }

    /// Skips n bytes. \throws FormatError naming `field` past the end
    void skip(std::size_t n, const char* field) { (void)take(n, field); }

    /// Reads one byte and checks it equals `marker` (msgpack type markers).
    void expect_marker(std::uint8_t marker, const char* field);

    /// Fails unless every byte has been consumed.
    void expect_end(const char* what) const;

    /// Moves the cursor to `pos`. \throws FormatError naming `field` past the end
    void seek(std::size_t pos, const char* field) {
        if (pos > bytes_.size()) {
            fail(std::string(field) + ": position " + std::to_string(pos) + " is past the end (" +
                     std::to_string(bytes_.size()) + " bytes)",
                 bytes_.size());
        }
        pos_ = pos;
    }

    /// Bytes left after the cursor.
    std::size_t remaining() const noexcept { return bytes_.size() - pos_; }
    /// The cursor's position in the bytes.
    std::size_t position() const noexcept { return pos_; }
    /// Absolute offset of the cursor (base_offset + position).
    std::uint64_t offset() const noexcept { return base_ + pos_; }
    /// All the bytes.
    ByteSpan bytes() const noexcept { return bytes_; }

    /// Throws a FormatError at the cursor.
    [[noreturn]] void fail(const std::string& msg) const { fail(msg, pos_); }
    /// Throws a FormatError at position `at`.
    [[noreturn]] void fail(const std::string& msg, std::size_t at) const {
        throw FormatError(msg, base_ + at);
    }

private:
    void require(std::size_t n, const char* field) const {
        if (n > bytes_.size() - pos_) {
            fail(std::string("truncated reading ") + field + " (need " + std::to_string(n) +
                 " bytes, " + std::to_string(bytes_.size() - pos_) + " left)");
        }
    }

    ByteSpan bytes_;
    std::uint64_t base_;
    std::size_t pos_ = 0;
};

inline void ByteReader::expect_marker(std::uint8_t marker, const char* field) {
    const std::size_t at = pos_;
    const std::uint8_t got = u8(field);
    if (got != marker) {
        fail(
            std::string(field) + ": expected marker " + hex_byte(marker) + ", got " + hex_byte(got),
            at);
    }
}

inline void ByteReader::expect_end(const char* what) const {
    if (pos_ != bytes_.size()) {
        fail(std::string(what) + ": " + std::to_string(bytes_.size() - pos_) +
             " unexpected trailing bytes");
    }
}

}  // namespace b2nd::format
