// Fuzz target: our HDF5 filter decoders (LZF 32000, Blosc 32001) as libhdf5 calls them. Input:
// one byte (even: LZF, odd: Blosc), four bytes of the dataset's chunk size (little-endian, at
// most 16 MiB), four of cd_values[2] (what the file claims), then the stored chunk. The stream
// is handed over in a buffer from H5allocate_memory, as libhdf5 hands it. A decoder returns 0, or
// exactly the chunk size with a buffer of that size (what libhdf5 then reads whole); outside a
// FilterScope it always refuses. Nothing may read outside the input or allocate more than the
// chunk size.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "bridges/hdf5_detail.hpp"

using namespace b2nd::bridges::h5;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 9) {
        return 0;
    }
    const bool lzf = (data[0] & 1) == 0;
    const std::uint32_t chunk =
        static_cast<std::uint32_t>(data[1]) | static_cast<std::uint32_t>(data[2]) << 8 |
        static_cast<std::uint32_t>(data[3]) << 16 | static_cast<std::uint32_t>(data[4]) << 24;
    const std::uint32_t claimed =
        static_cast<std::uint32_t>(data[5]) | static_cast<std::uint32_t>(data[6]) << 8 |
        static_cast<std::uint32_t>(data[7]) << 16 | static_cast<std::uint32_t>(data[8]) << 24;
    if (chunk == 0 || chunk > (1U << 24)) {
        return 0;
    }
    const std::size_t n = size - 9;
    const unsigned cd[7] = {2, 2, 4, claimed, 5, 1, 0};
    const auto run = [&](bool scoped) {
        void* buf = H5allocate_memory(n == 0 ? 1 : n, false);
        if (buf == nullptr) {
            return;
        }
        if (n != 0) {
            std::memcpy(buf, data + 9, n);
        }
        std::size_t buf_size = n;
        std::size_t got = 0;
        if (scoped) {
            FilterScope scope(chunk);
            got = lzf ? lzf_filter(H5Z_FLAG_REVERSE, 3, cd, n, &buf_size, &buf)
                      : blosc_filter(H5Z_FLAG_REVERSE, 7, cd, n, &buf_size, &buf);
            if (got != 0 && (got != chunk || buf_size != chunk)) {
                std::abort();  // libhdf5 would read `chunk` bytes of a shorter buffer
            }
            if (got != 0) {
                // Every byte of what libhdf5 reads is written (ASan/MSan see it read here).
                volatile std::uint8_t sum = 0;
                for (std::size_t i = 0; i < got; ++i) {
                    sum = static_cast<std::uint8_t>(sum + static_cast<std::uint8_t*>(buf)[i]);
                }
                (void)sum;
            }
        } else {
            got = lzf ? lzf_filter(H5Z_FLAG_REVERSE, 3, cd, n, &buf_size, &buf)
                      : blosc_filter(H5Z_FLAG_REVERSE, 7, cd, n, &buf_size, &buf);
            if (got != 0) {
                std::abort();  // no size known: refused
            }
        }
        H5free_memory(buf);
    };
    run(true);
    run(false);
    return 0;
}
