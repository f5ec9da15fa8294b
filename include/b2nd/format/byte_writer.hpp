// Appends bytes to a growable buffer; the writing twin of ByteReader.
//
// Advanced (b2nd::format, the byte layer): for tools that parse or write the format itself.
// Programs that read and write arrays need only <b2nd/b2nd.hpp>.
#pragma once

#include <cstdint>
#include <vector>

#include <b2nd/byte_span.hpp>
#include <b2nd/format/endian.hpp>

namespace b2nd::format {

/// Appends fields to a byte vector, in either byte order.
class ByteWriter {
public:
    /// Appends to `out`.
    explicit ByteWriter(std::vector<std::uint8_t>& out) noexcept : out_(out) {}

    /// Appends one byte.
    void u8(std::uint8_t v) { out_.push_back(v); }

    template <class T>
    /// Appends T little-endian.
    void write_le(T v) {
        const std::size_t at = out_.size();
        out_.resize(at + sizeof(T));
        store_le(out_.data() + at, v);
    }

    template <class T>
    /// Appends T big-endian.
    void write_be(T v) {
        const std::size_t at = out_.size();
        out_.resize(at + sizeof(T));
        store_be(out_.data() + at, v);
    }

    /// Appends bytes.
    void bytes(ByteSpan b) { out_.insert(out_.end(), b.begin(), b.end()); }
    /// Appends n zero bytes.
    void zeros(std::size_t n) { out_.resize(out_.size() + n, 0); }

    /// Bytes written so far.
    std::size_t size() const noexcept { return out_.size(); }

    /// Overwrites an already written little-endian value (for sizes known only at the end).
    template <class T>
    void patch_le(std::size_t at, T v) {
        store_le(out_.data() + at, v);
    }

private:
    std::vector<std::uint8_t>& out_;
};

}  // namespace b2nd::format
