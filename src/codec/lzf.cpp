// LZF streams (the format of liblzf, which h5py's filter 32000 writes), decoded by our own code.
#include "compressors.hpp"

namespace b2nd::codec::detail {

bool lzf_decompress(const std::uint8_t* in,
                    std::size_t n,
                    std::uint8_t* out,
                    std::size_t cap,
                    std::size_t& produced) noexcept {
    std::size_t ip = 0;
    std::size_t op = 0;
    while (ip < n) {
        const std::size_t ctrl = in[ip++];
        if (ctrl < 32) {
            // A literal run of ctrl + 1 bytes.
            const std::size_t len = ctrl + 1;
            if (len > n - ip || len > cap - op) {
                return false;
            }
            for (std::size_t k = 0; k < len; ++k) {
                out[op + k] = in[ip + k];
            }
            ip += len;
            op += len;
            continue;
        }
        // A back reference: length in the top 3 bits (7: one more byte follows), distance in
        // the low 5 bits and the next byte, plus one.
        std::size_t len = ctrl >> 5;
        if (len == 7) {
            if (ip >= n) {
                return false;
            }
            len += in[ip++];
        }
        len += 2;
        if (ip >= n) {
            return false;
        }
        const std::size_t back = ((ctrl & 0x1fU) << 8) + in[ip++] + 1;
        if (back > op || len > cap - op) {
            return false;
        }
        for (std::size_t k = 0; k < len; ++k) {  // overlapping copies repeat bytes on purpose
            out[op + k] = out[op - back + k];
        }
        op += len;
    }
    produced = op;
    return true;
}

}  // namespace b2nd::codec::detail
