// Large buffers mapped with huge pages asked for (big_buffer.hpp).
#include "big_buffer.hpp"

#include <new>
#include <utility>

#include <b2nd/memory.hpp>

#include <sys/mman.h>

namespace b2nd::detail {

namespace {

constexpr std::size_t kHuge = std::size_t{2} << 20;
constexpr std::size_t kPage = 4096;

// Under AddressSanitizer, buffers come from the heap at their exact size: a mapping rounded up
// to pages would hide an overflow from it.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kHeap = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kHeap = true;
#else
constexpr bool kHeap = false;
#endif
#else
constexpr bool kHeap = false;
#endif

}  // namespace

BigBuffer::BigBuffer(std::size_t n) : size_(n) {
    if (n == 0) {
        return;
    }
    if (kHeap) {
        data_ = new std::uint8_t[n]();
        mapped_ = n;
        track_alloc(mapped_);
        return;
    }
    // Huge pages for buffers of one at least; smaller ones in pages.
    const std::size_t unit = n >= kHuge ? kHuge : kPage;
    mapped_ = (n + unit - 1) / unit * unit;
    void* p = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        throw std::bad_alloc();
    }
#ifdef MADV_HUGEPAGE
    if (unit == kHuge) {
        (void)::madvise(p, mapped_, MADV_HUGEPAGE);  // advice: without it, 4 KiB pages
    }
#endif
    data_ = static_cast<std::uint8_t*>(p);
    track_alloc(mapped_);
}

BigBuffer::~BigBuffer() {
    if (data_ != nullptr && kHeap) {
        delete[] data_;
        track_free(mapped_);
    } else if (data_ != nullptr) {
        ::munmap(data_, mapped_);
        track_free(mapped_);
    }
}

BigBuffer::BigBuffer(BigBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      mapped_(std::exchange(o.mapped_, 0)) {}

BigBuffer& BigBuffer::operator=(BigBuffer&& o) noexcept {
    if (this != &o) {
        BigBuffer gone(std::move(*this));
        data_ = std::exchange(o.data_, nullptr);
        size_ = std::exchange(o.size_, 0);
        mapped_ = std::exchange(o.mapped_, 0);
    }
    return *this;
}

}  // namespace b2nd::detail
