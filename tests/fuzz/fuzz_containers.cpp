// Fuzz target: arbitrary bytes as a frame of python-blosc2's variable-length containers: an
// ObjectArray, BatchArray or ListArray (items read, ranges and single items), or either half of
// a UTF8Array (offsets paired with good bytes, bytes paired with good offsets). Only b2nd::Error
// may escape.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <b2nd/any_array.hpp>
#include <b2nd/containers.hpp>
#include <b2nd/error.hpp>
#include <b2nd/objects.hpp>
#include <b2nd/storage/frame.hpp>

namespace {

b2nd::AnyArray memory_array(const char* dtype,
                            const std::vector<std::uint8_t>& bytes,
                            std::int64_t n) {
    return b2nd::AnyArray::create_in_memory_from(b2nd::DType::parse(dtype), {n},
                                                 {bytes.data(), bytes.size()});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        b2nd::storage::OpenOptions fo;
        fo.max_chunks = 1 << 12;
        auto frame = std::make_shared<const b2nd::storage::Frame>(
            b2nd::storage::Frame::from_buffer(b2nd::ByteSpan(data, size), fo));
        if (b2nd::is_item_container(*frame)) {
            const std::int64_t n = b2nd::container_size(frame);
            (void)b2nd::container_items(frame, 0, std::min<std::int64_t>(n, 64));
            if (n > 0) {
                (void)b2nd::container_items(frame, n - 1, n);
            }
            return 0;
        }
        b2nd::OpenOptions o;
        o.max_chunks = 1 << 12;
        o.cache_bytes = 0;
        const auto a = b2nd::AnyArray::open_buffer(b2nd::ByteSpan(data, size), o);
        if (a.ndim() != 1 || a.size() > (1 << 16)) {
            return 0;
        }
        if (a.itemsize() == 8) {
            const std::vector<std::uint8_t> text(64, 'x');
            const auto u = b2nd::UTF8Array::from_arrays(a, memory_array("|u1", text, 64));
            (void)u.read();
            (void)u.read(u.size() / 2, u.size());
        } else if (a.itemsize() == 1) {
            const std::vector<std::int64_t> off = {0, 1, 5, 5, 40};
            const std::vector<std::uint8_t> raw(
                reinterpret_cast<const std::uint8_t*>(off.data()),
                reinterpret_cast<const std::uint8_t*>(off.data()) + 40);
            const auto u = b2nd::UTF8Array::from_arrays(memory_array("<i8", raw, 5), a);
            (void)u.read();
        }
    } catch (const b2nd::Error&) {
        // expected for malformed input
    }
    return 0;
}
