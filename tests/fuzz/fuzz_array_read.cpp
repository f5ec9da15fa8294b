// Fuzz target: open arbitrary bytes as a b2nd array held in memory (a contiguous frame) and read
// it whole, in strided boxes chosen from the input, and element by element, from a cold and a
// warm cache. Only b2nd::Error may escape; reads never touch memory outside the buffers.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        b2nd::OpenOptions o;
        o.nthreads = 2;
        o.cache_bytes = 1 << 20;
        const auto a = b2nd::AnyArray::open_buffer(b2nd::ByteSpan(data, size), o);
        if (a.nbytes() > (std::int64_t{1} << 24)) {
            return 0;  // a valid but large array: reading it says nothing more
        }
        std::size_t pick = 0;
        auto next = [&](std::int64_t n) -> std::int64_t {  // input bytes drive the boxes
            const std::int64_t v = size == 0 ? 0 : data[pick++ % size];
            return n <= 0 ? 0 : v % n;
        };
        for (int pass = 0; pass < 2; ++pass) {
            try {
                (void)a.read();
            } catch (const b2nd::Error&) {
                // a bad chunk: go on with the boxes and elements
            }
            for (int k = 0; k < 4; ++k) {
                b2nd::Box b;
                std::vector<std::int64_t> idx;
                for (std::int64_t n : a.shape()) {
                    const std::int64_t start = next(n);
                    const std::int64_t step = (next(5) + 1) * (next(2) == 0 ? 1 : -1);
                    const std::int64_t room =
                        n == 0 ? 0 : (step > 0 ? (n - 1 - start) / step + 1 : start / -step + 1);
                    b.start.push_back(start);
                    b.count.push_back(room == 0 ? 0 : 1 + next(room));
                    b.step.push_back(step);
                    idx.push_back(start);
                }
                try {
                    (void)a.read(b);
                    if (a.size() > 0) {
                        std::vector<std::uint8_t> one(static_cast<std::size_t>(a.itemsize()));
                        a.read_element(idx.data(), one.data());
                    }
                } catch (const b2nd::Error&) {
                }
            }
        }
    } catch (const b2nd::Error&) {
        // expected for malformed input
    }
    return 0;
}
