// Fuzz target: decode arbitrary bytes as a chunk, every way the decoder offers, then once more with
// a block shape (1-4 dims, guessed from the header) as arrays give one: ZFP, NDCELL and NDMEAN
// decode only with it. The contract is that only b2nd::Error may escape; anything else (another
// exception, a sanitizer report, a crash) is a bug.
#include <algorithm>
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
                // The block's rows scattered in reverse order (a fused unshuffle where the
                // chunk is byte-shuffled), when its size splits into rows of whole items.
                const std::size_t item = static_cast<std::size_t>(std::max(dec.typesize(), 1));
                const std::size_t row = blk.size() % (item * 4) == 0 ? item * 4 : blk.size();
                if (row > 0) {
                    std::vector<std::ptrdiff_t> offsets(blk.size() / row);
                    for (std::size_t r = 0; r < offsets.size(); ++r) {
                        offsets[r] = static_cast<std::ptrdiff_t>((offsets.size() - 1 - r) * row);
                    }
                    try {
                        dec.decode_block_rows(b, blk.data(), {row, offsets.size(), offsets.data()});
                    } catch (const b2nd::Error&) {
                    }
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
    try {
        const b2nd::ByteSpan bytes(data, size);
        const b2nd::codec::ChunkDecoder plain(bytes);
        const std::int64_t items = plain.blocksize() / std::max(plain.typesize(), 1);
        if (items <= 0 || plain.nbytes() > kMaxOutput) {
            return 0;
        }
        // A block shape whose items are the block's: the last dims small, the first the rest.
        const int ndim = 1 + static_cast<int>(size % 4);
        std::vector<std::int64_t> shape(static_cast<std::size_t>(ndim), 1);
        std::int64_t rest = items;
        for (int d = ndim - 1; d > 0; --d) {
            const std::int64_t f = rest % 8 == 0 ? 8 : (rest % 4 == 0 ? 4 : 1);
            shape[static_cast<std::size_t>(d)] = f;
            rest /= f;
        }
        shape[0] = rest;
        b2nd::codec::ChunkDecoder dec(bytes, shape);
        std::vector<std::uint8_t> out(static_cast<std::size_t>(dec.nbytes()));
        dec.decode(out, 1);
    } catch (const b2nd::Error&) {
    }
    return 0;
}
