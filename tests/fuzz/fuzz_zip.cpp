// Fuzz target: read arbitrary bytes as a zip archive's directory, open every member as a window,
// and open each window as a frame (python-blosc2's .b2z stores hold frames). Only b2nd::Error may
// escape; every window must lie inside the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/storage/zip.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const auto zip = b2nd::storage::ZipDirectory::read(
            b2nd::storage::memory_source(b2nd::ByteSpan(data, size)));
        int n = 0;
        for (const auto& m : zip.members()) {
            if (++n > 64) {
                break;
            }
            try {
                const auto src = zip.open(m);
                const b2nd::ByteSpan v = src->view()->bytes;
                if (v.data() < data || v.data() + v.size() > data + size) {
                    std::abort();  // a window outside the archive
                }
                b2nd::storage::OpenOptions o;
                o.max_chunks = 1 << 16;
                const auto f = b2nd::storage::Frame::open(src, o);
                for (std::int64_t i = 0; i < f.nchunks() && i < 16; ++i) {
                    (void)f.chunk(i);
                }
            } catch (const b2nd::Error&) {
                // a bad member does not stop us from reading the others
            }
        }
    } catch (const b2nd::Error&) {
        // expected for malformed input
    }
    return 0;
}
