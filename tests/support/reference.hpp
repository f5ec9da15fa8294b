// Test-side references, independent of the library: a minimal .npy payload reader and an
// element-by-element strided slicer (what NumPy's a[start:stop:step, ...] gives).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "files.hpp"

namespace b2nd::test {

struct NpyPayload {
    std::string header;  // the dict text
    std::vector<std::uint8_t> data;
};

/// Reads a version 1.0 .npy file: the header dict and the bytes after it.
inline NpyPayload read_npy_payload(const std::string& path) {
    std::vector<std::uint8_t> all = read_file(path);
    if (all.size() < 10 || std::memcmp(all.data(), "\x93NUMPY", 6) != 0 || all[6] != 1) {
        throw std::runtime_error(path + ": not a version 1.0 .npy file");
    }
    const std::size_t len = all[8] | (static_cast<std::size_t>(all[9]) << 8);
    NpyPayload p;
    p.header.assign(reinterpret_cast<const char*>(all.data() + 10), len);
    p.data.assign(all.begin() + static_cast<std::ptrdiff_t>(10 + len), all.end());
    return p;
}

/// The elements start[d] + k * step[d], k < count[d], of a C-order array, one at a time.
inline std::vector<std::uint8_t> reference_slice(const std::vector<std::uint8_t>& data,
                                                 const std::vector<std::int64_t>& shape,
                                                 std::int64_t itemsize,
                                                 const std::vector<std::int64_t>& start,
                                                 const std::vector<std::int64_t>& count,
                                                 const std::vector<std::int64_t>& step) {
    const std::size_t nd = shape.size();
    std::int64_t total = 1;
    for (std::int64_t c : count) {
        total *= c;
    }
    std::vector<std::uint8_t> out(static_cast<std::size_t>(total * itemsize));
    std::vector<std::int64_t> k(nd, 0);
    for (std::int64_t e = 0; e < total; ++e) {
        std::int64_t flat = 0;
        for (std::size_t d = 0; d < nd; ++d) {
            flat = flat * shape[d] + start[d] + k[d] * step[d];
        }
        std::memcpy(out.data() + e * itemsize, data.data() + flat * itemsize,
                    static_cast<std::size_t>(itemsize));
        for (std::size_t d = nd; d-- > 0;) {
            if (++k[d] < count[d]) {
                break;
            }
            k[d] = 0;
        }
    }
    return out;
}

}  // namespace b2nd::test
