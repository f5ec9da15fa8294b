// Fuzz target: arbitrary bytes as a frame's offsets index (a Blosc2 chunk of int64 entries).
// Only b2nd::Error may escape; an index that decodes has every entry classified (an offset or a
// special value) and encodes again to an index that decodes to the same entries.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/error.hpp>

#include "storage/frame_impl.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const b2nd::codec::ChunkDecoder dec(b2nd::ByteSpan(data, size));
        if (dec.nbytes() % 8 != 0 || dec.nbytes() > (std::int64_t{1} << 24)) {
            return 0;  // the frame parser refuses these before decoding
        }
        std::vector<std::int64_t> idx(static_cast<std::size_t>(dec.nbytes() / 8));
        dec.decode(b2nd::as_writable_bytes(idx.data(), idx.size()));
        // The first entry that is neither an offset nor a special value ends the classification
        // (a frame classifies a chunk as it reads it: each bad one fails its own read). Catching
        // a throw for each of 2^21 bad entries cost this harness seconds, not the library.
        try {
            for (std::size_t i = 0; i < idx.size(); ++i) {
                (void)b2nd::storage::special_of(idx[i], static_cast<std::int64_t>(i));
            }
        } catch (const b2nd::FormatError&) {
        }
        const std::vector<std::uint8_t> again = b2nd::storage::encode_index(idx);
        const std::vector<std::uint8_t> back =
            b2nd::codec::decode_chunk({again.data(), again.size()});
        if (back.size() != idx.size() * 8 ||
            (!idx.empty() && std::memcmp(back.data(), idx.data(), back.size()) != 0)) {
            std::abort();  // encode_index lost entries
        }
    } catch (const b2nd::Error&) {
    }
    return 0;
}
