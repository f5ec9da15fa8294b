// Fuzz target: decode arbitrary bytes as a chunk, every way the decoder offers. The contract is
// that only b2nd::Error may escape; anything else (another exception, a sanitizer report, a
// crash) is a bug.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/error.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    constexpr std::int64_t kMaxOutput = std::int64_t{1} << 24;
    try {
        const b2nd::ByteSpan bytes(data, size);
        b2nd::codec::ChunkDecoder dec(bytes);
        if (dec.nbytes() <= kMaxOutput) {
            std::vector<std::uint8_t> out(static_cast<std::size_t>(dec.nbytes()));
            dec.decode(out, 1);
        }
        if (dec.nblocks() > 0) {
            const std::int32_t b =
                static_cast<std::int32_t>(size % static_cast<std::size_t>(dec.nblocks()));
            if (dec.block_nbytes(b) <= kMaxOutput) {
                std::vector<std::uint8_t> blk(static_cast<std::size_t>(dec.block_nbytes(b)));
                try {  // streams that stop early: a prefix of the block
                    dec.decode_block_prefix(b, blk, size % (blk.size() + 1));
                } catch (const b2nd::Error&) {
                }
                dec.decode_block(b, blk);
            }
        }
        if (dec.nbytes() > 0) {
            const std::int64_t len = std::min<std::int64_t>(dec.nbytes(), 4096);
            std::vector<std::uint8_t> part(static_cast<std::size_t>(len));
            dec.decode_range(dec.nbytes() - len, part);
        }
    } catch (const b2nd::Error&) {
        // expected for malformed input
    }
    return 0;
}
