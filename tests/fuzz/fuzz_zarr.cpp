// Fuzz target: Zarr metadata and the chunks and shards it describes. Input: one byte (even: v3
// zarr.json, odd: v2 .zarray), two bytes of metadata length (little-endian), the metadata text,
// then the bytes of one stored chunk (a shard when the metadata shards). The metadata is parsed;
// when it parses, the rest is decoded as the array's reader would: a shard's index read from its
// end or start and each inner chunk it names bounds-checked and decoded. Only b2nd::Error may
// escape; nothing may read outside the input or allocate without bound.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <b2nd/error.hpp>

#include "bridges/zarr_meta.hpp"

namespace {

constexpr std::int64_t kMaxBytes = std::int64_t{1} << 24;

std::int64_t items_of(const b2nd::Shape& s) {
    std::int64_t n = 1;
    for (const std::int64_t e : s) {
        if (e <= 0 || n > kMaxBytes / e) {
            return -1;
        }
        n *= e;
    }
    return n;
}

void decode(const b2nd::bridges::ZarrMeta& m, const std::uint8_t* p, std::size_t n) {
    using namespace b2nd::bridges;
    const std::int64_t item = m.dtype.itemsize();
    if (const ZarrSharding* s = m.codecs.sharding.get()) {
        std::int64_t inners = 1;
        for (std::size_t d = 0; d < m.chunks.size(); ++d) {
            inners *= m.chunks[d] / s->inner[d];
        }
        const std::int64_t inner_items = items_of(s->inner);
        if (inners <= 0 || inners > 4096 || inner_items < 0 || inner_items * item > kMaxBytes) {
            return;
        }
        const std::uint64_t idx = shard_index_nbytes(*s, inners);
        if (n < idx) {
            return;
        }
        const std::uint8_t* at = s->index_at_end ? p + (n - idx) : p;
        const std::vector<std::uint64_t> e = decode_shard_index(*s, inners, at, idx, "shard");
        std::vector<std::uint8_t> out(static_cast<std::size_t>(inner_items * item));
        for (std::size_t k = 0; k + 1 < e.size(); k += 2) {
            if (e[k] == ~std::uint64_t{0} && e[k + 1] == ~std::uint64_t{0}) {
                continue;
            }
            if (e[k] > n || e[k + 1] > n - e[k]) {
                continue;  // the reader refuses it (FormatError); nothing to decode
            }
            decode_zarr_chunk(s->codecs, m.dtype, s->inner, p + e[k], e[k + 1], out.data(),
                              "inner");
        }
        return;
    }
    const std::int64_t items = items_of(m.chunks);
    if (items < 0 || items * item > kMaxBytes) {
        return;
    }
    std::vector<std::uint8_t> out(static_cast<std::size_t>(items * item));
    decode_zarr_chunk(m.codecs, m.dtype, m.chunks, p, n, out.data(), "chunk");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 3) {
        return 0;
    }
    const bool v2 = (data[0] & 1U) != 0;
    const std::size_t len = std::size_t{data[1]} | std::size_t{data[2]} << 8;
    if (len > size - 3) {
        return 0;
    }
    const std::string text(reinterpret_cast<const char*>(data + 3), len);
    try {
        const b2nd::bridges::ZarrMeta m = v2 ? b2nd::bridges::parse_zarr_v2(text, "", "fuzz")
                                             : b2nd::bridges::parse_zarr_v3(text, "fuzz");
        decode(m, data + 3 + len, size - 3 - len);
    } catch (const b2nd::Error&) {
    }
    return 0;
}
