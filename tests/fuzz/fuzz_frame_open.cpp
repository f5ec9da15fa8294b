// Fuzz target: open arbitrary bytes as a contiguous frame held in memory and read everything in
// it (chunks, metalayers, vlmetalayers). Only b2nd::Error may escape.
#include <cstddef>
#include <cstdint>

#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        b2nd::storage::OpenOptions o;
        o.max_chunks = 1 << 16;
        const auto f = b2nd::storage::Frame::from_buffer(b2nd::ByteSpan(data, size), o);
        for (std::int64_t i = 0; i < f.nchunks() && i < 64; ++i) {
            try {
                const auto c = f.chunk(i);
                if (c.nbytes <= (1 << 22)) {
                    (void)f.decode_chunk(i);
                }
            } catch (const b2nd::Error&) {
                // a bad chunk does not stop us from reading the others
            }
        }
        for (const auto& name : f.vlmeta_names()) {
            (void)f.vlmeta(name);
        }
        (void)f.dead_bytes();
    } catch (const b2nd::Error&) {
        // expected for malformed input
    }
    return 0;
}
