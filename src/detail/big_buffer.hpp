// Internal: large buffers that are touched for the first time quickly. A fresh buffer of tens of
// MiB from malloc costs a page fault per 4 KiB on its first touch (a few GB/s at best, far below
// a copy into memory already touched); these are mapped with transparent huge pages asked for
// (a fault per 2 MiB where the kernel allows it), come zeroed, and count in memory_stats().
// Under AddressSanitizer they come from the heap at their exact size, so that it sees overflows.
#pragma once

#include <cstddef>
#include <cstdint>

namespace b2nd::detail {

class BigBuffer {
public:
    BigBuffer() noexcept = default;
    /// n zero bytes. \throws std::bad_alloc when they cannot be mapped
    explicit BigBuffer(std::size_t n);
    ~BigBuffer();
    BigBuffer(BigBuffer&& o) noexcept;
    BigBuffer& operator=(BigBuffer&& o) noexcept;
    BigBuffer(const BigBuffer&) = delete;
    BigBuffer& operator=(const BigBuffer&) = delete;

    std::uint8_t* data() noexcept { return data_; }
    const std::uint8_t* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }

private:
    std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
    std::size_t mapped_ = 0;
};

}  // namespace b2nd::detail
