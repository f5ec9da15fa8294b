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
    constexpr ByteSpan() noexcept = default;
    constexpr ByteSpan(const std::uint8_t* data, std::size_t size) noexcept
        : data_(data), size_(size) {}
    ByteSpan(const std::vector<std::uint8_t>& v) noexcept  // NOLINT: implicit on purpose
        : data_(v.data()), size_(v.size()) {}

    constexpr const std::uint8_t* data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr bool empty() const noexcept { return size_ == 0; }
    constexpr const std::uint8_t* begin() const noexcept { return data_; }
    constexpr const std::uint8_t* end() const noexcept { return data_ + size_; }
    constexpr std::uint8_t operator[](std::size_t i) const noexcept { return data_[i]; }

    /// Sub-view; the caller guarantees offset + count <= size() (checked in debug builds only;
    /// file data must be checked with format::ByteReader instead).
    constexpr ByteSpan subspan(std::size_t offset, std::size_t count) const noexcept {
        return {data_ + offset, count};
    }
    constexpr ByteSpan first(std::size_t count) const noexcept { return {data_, count}; }

private:
    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
};

/// A writable view of contiguous bytes.
class MutableByteSpan {
public:
    constexpr MutableByteSpan() noexcept = default;
    constexpr MutableByteSpan(std::uint8_t* data, std::size_t size) noexcept
        : data_(data), size_(size) {}
    MutableByteSpan(std::vector<std::uint8_t>& v) noexcept  // NOLINT: implicit on purpose
        : data_(v.data()), size_(v.size()) {}

    constexpr std::uint8_t* data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr bool empty() const noexcept { return size_ == 0; }
    constexpr std::uint8_t* begin() const noexcept { return data_; }
    constexpr std::uint8_t* end() const noexcept { return data_ + size_; }
    constexpr std::uint8_t& operator[](std::size_t i) const noexcept { return data_[i]; }
    constexpr MutableByteSpan subspan(std::size_t offset, std::size_t count) const noexcept {
        return {data_ + offset, count};
    }
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
