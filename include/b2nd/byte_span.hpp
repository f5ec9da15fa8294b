// Non-owning views of bytes (C++17 has no std::span).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

namespace b2nd {

/// A read-only view of contiguous bytes. Never owns; the viewed memory must outlive it.
class ByteSpan {
public:
    /// An empty view.
    constexpr ByteSpan() noexcept = default;
    /// The `size` bytes at `data`.
    constexpr ByteSpan(const std::uint8_t* data, std::size_t size) noexcept
        : data_(data), size_(size) {}
    /// All of `v`'s bytes (implicit: a vector passes where a span is asked for).
    ByteSpan(const std::vector<std::uint8_t>& v) noexcept  // NOLINT: implicit on purpose
        : data_(v.data()), size_(v.size()) {}

    // Access, as std::span's members.
    /// The first byte.
    constexpr const std::uint8_t* data() const noexcept { return data_; }
    /// The number of bytes.
    constexpr std::size_t size() const noexcept { return size_; }
    /// Whether there are none.
    constexpr bool empty() const noexcept { return size_ == 0; }
    /// Iteration: the first byte.
    constexpr const std::uint8_t* begin() const noexcept { return data_; }
    /// Iteration: past the last byte.
    constexpr const std::uint8_t* end() const noexcept { return data_ + size_; }
    /// Byte i (unchecked).
    constexpr std::uint8_t operator[](std::size_t i) const noexcept { return data_[i]; }

    /// Sub-view; the caller guarantees offset + count <= size() (checked in debug builds only;
    /// file data must be checked with format::ByteReader instead).
    constexpr ByteSpan subspan(std::size_t offset, std::size_t count) const noexcept {
        return {data_ + offset, count};
    }
    /// The first `count` bytes (the caller guarantees count <= size()).
    constexpr ByteSpan first(std::size_t count) const noexcept { return {data_, count}; }

private:
    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
};

/// A writable view of contiguous bytes.
class MutableByteSpan {
public:
    /// An empty view.
    constexpr MutableByteSpan() noexcept = default;
    /// The `size` bytes at `data`.
    constexpr MutableByteSpan(std::uint8_t* data, std::size_t size) noexcept
        : data_(data), size_(size) {}
    /// All of `v`'s bytes (implicit: a vector passes where a span is asked for).
    MutableByteSpan(std::vector<std::uint8_t>& v) noexcept  // NOLINT: implicit on purpose
        : data_(v.data()), size_(v.size()) {}

    // Access, as std::span's members.
    /// The first byte.
    constexpr std::uint8_t* data() const noexcept { return data_; }
    /// The number of bytes.
    constexpr std::size_t size() const noexcept { return size_; }
    /// Whether there are none.
    constexpr bool empty() const noexcept { return size_ == 0; }
    /// Iteration: the first byte.
    constexpr std::uint8_t* begin() const noexcept { return data_; }
    /// Iteration: past the last byte.
    constexpr std::uint8_t* end() const noexcept { return data_ + size_; }
    /// Byte i (unchecked).
    constexpr std::uint8_t& operator[](std::size_t i) const noexcept { return data_[i]; }
    /// Sub-view; the caller guarantees offset + count <= size().
    constexpr MutableByteSpan subspan(std::size_t offset, std::size_t count) const noexcept {
        return {data_ + offset, count};
    }
    /// The same bytes, read-only.
    constexpr operator ByteSpan() const noexcept { return {data_, size_}; }  // NOLINT

private:
    std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
};

/// Views the bytes of a trivially copyable array.
template <class T>
ByteSpan as_bytes(const T* data, std::size_t count) noexcept {
    static_assert(std::is_trivially_copyable_v<T>, "as_bytes needs trivially copyable elements");
    return {reinterpret_cast<const std::uint8_t*>(data), count * sizeof(T)};
}

/// Views the writable bytes of a trivially copyable array.
template <class T>
MutableByteSpan as_writable_bytes(T* data, std::size_t count) noexcept {
    static_assert(std::is_trivially_copyable_v<T>, "as_writable_bytes needs trivially copyable");
    return {reinterpret_cast<std::uint8_t*>(data), count * sizeof(T)};
}

}  // namespace b2nd
