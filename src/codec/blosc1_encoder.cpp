// Blosc 1.x chunks (blosc1.hpp): header, block starts, then each block's one stream (its
// compressed size first; a block that does not compress is stored raw with its own size).
#include <algorithm>
#include <cstring>

#include <b2nd/codec/filters.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>

#include "blosc1.hpp"
#include "compressors.hpp"

namespace b2nd::codec::detail {

namespace {

void put32(std::uint8_t* p, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) {
        p[i] = static_cast<std::uint8_t>(v >> (8 * i));
    }
}

}  // namespace

void encode_blosc1_chunk(const std::uint8_t* src,
                         std::size_t n,
                         Codec codec,
                         int clevel,
                         int shuffle,
                         int typesize,
                         std::vector<std::uint8_t>& out,
                         std::size_t blocksize) {
    if (codec != Codec::blosclz && codec != Codec::lz4 && codec != Codec::lz4hc &&
        codec != Codec::zlib && codec != Codec::zstd) {
        throw UsageError("Blosc 1.x has no codec " + std::string(codec_name(codec)));
    }
    constexpr std::size_t kHeader = 16;
    if (n > 0x7fffffffU - kHeader) {
        throw UsageError("a Blosc 1.x chunk holds less than 2 GiB");
    }
    const auto ts = static_cast<std::size_t>(std::clamp(typesize, 1, 255));
    if (blocksize == 0) {
        blocksize = std::min<std::size_t>(n, std::size_t{256} << 10);
    }
    blocksize = std::max(ts, blocksize / (8 * ts) * (8 * ts));  // whole elements, bit rows
    if (blocksize > n && n > 0) {
        blocksize = n;
    }
    const std::size_t nblocks = n == 0 ? 0 : (n + blocksize - 1) / blocksize;
    out.resize(kHeader + 4 * nblocks + n + 4 * nblocks + 64);
    out[0] = 2;  // format version of Blosc 1.x
    out[1] = 1;  // the codec's format version
    const auto compformat = static_cast<std::uint8_t>(comp_format_of(codec));
    std::uint8_t flags =
        static_cast<std::uint8_t>(format::chunk_flags::kDontSplit | (compformat << 5));
    if (shuffle == 1 && ts > 1) {
        flags |= format::chunk_flags::kShuffle;
    } else if (shuffle == 2) {
        flags |= format::chunk_flags::kBitshuffle;
    }
    out[3] = static_cast<std::uint8_t>(ts);
    put32(out.data() + 4, static_cast<std::uint32_t>(n));
    put32(out.data() + 8, static_cast<std::uint32_t>(blocksize));
    std::size_t at = kHeader + 4 * nblocks;
    bool fits = clevel > 0;
    thread_local std::vector<std::uint8_t> filtered, scratch;  // their room reused
    filtered.resize(blocksize);
    scratch.resize(blocksize);
    for (std::size_t b = 0; b < nblocks && fits; ++b) {
        const std::size_t len = std::min(blocksize, n - b * blocksize);
        const std::uint8_t* block = src + b * blocksize;
        const std::uint8_t* in = block;
        if ((flags & format::chunk_flags::kShuffle) != 0) {
            codec::shuffle(static_cast<int>(ts), len, block, filtered.data());
            in = filtered.data();
        } else if ((flags & format::chunk_flags::kBitshuffle) != 0 && (len / ts) % 8 == 0) {
            // Blosc 1.x leaves blocks of a count of elements not a multiple of 8 as they are.
            codec::bitshuffle(static_cast<int>(ts), len, block, filtered.data(), scratch.data());
            in = filtered.data();
        }
        put32(out.data() + kHeader + 4 * b, static_cast<std::uint32_t>(at));
        if (at + 4 + len > out.size()) {
            fits = false;
            break;
        }
        std::size_t c = compress_stream(codec, clevel, in, len, out.data() + at + 4, len - 1);
        if (c == 0) {
            std::memcpy(out.data() + at + 4, in, len);  // raw: its size says so
            c = len;
        }
        put32(out.data() + at, static_cast<std::uint32_t>(c));
        at += 4 + c;
        fits = at < kHeader + n;
    }
    if (!fits) {
        // Compression does not pay: the chunk is stored whole (memcpyed), unfiltered.
        out.resize(kHeader + n);
        out[0] = 2;
        out[1] = 1;
        out[2] = static_cast<std::uint8_t>(format::chunk_flags::kMemcpyed |
                                           format::chunk_flags::kDontSplit | (compformat << 5));
        out[3] = static_cast<std::uint8_t>(ts);
        put32(out.data() + 4, static_cast<std::uint32_t>(n));
        put32(out.data() + 8, static_cast<std::uint32_t>(blocksize));
        if (n > 0) {
            std::memcpy(out.data() + kHeader, src, n);
        }
        at = kHeader + n;
    }
    out.resize(at);
    out[2] = fits ? flags : out[2];
    put32(out.data() + 12, static_cast<std::uint32_t>(at));
}

}  // namespace b2nd::codec::detail
