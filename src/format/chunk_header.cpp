#include <cstring>
#include <string>

#include <b2nd/error.hpp>
#include <b2nd/format/byte_reader.hpp>
#include <b2nd/format/chunk_header.hpp>
#include <b2nd/format/endian.hpp>

#include "../detail/text.hpp"

namespace b2nd::format {

using b2nd::detail::num;

namespace {

constexpr std::uint8_t kFilterShuffle = 1;
constexpr std::uint8_t kFilterBitshuffle = 2;
constexpr std::uint8_t kFilterDelta = 3;
constexpr std::uint8_t kAlphaVersion = 3;  // Blosc2 alpha: slot 5 was never initialized
constexpr std::uint8_t kSpecialValue = 3;
constexpr std::uint8_t kSpecialLast = 4;

}  // namespace

ChunkHeader read_chunk_header(ByteSpan chunk, bool whole) {
    ByteReader r(chunk);
    ChunkHeader h;
    h.version = r.u8("chunk header version");
    h.versionlz = r.u8("chunk header versionlz");
    h.flags = r.u8("chunk header flags");
    h.typesize = r.u8("chunk header typesize");
    h.nbytes = r.read_le<std::int32_t>("chunk header nbytes");
    h.blocksize = r.read_le<std::int32_t>("chunk header blocksize");
    h.cbytes = r.read_le<std::int32_t>("chunk header cbytes");

    if (h.version > kMaxChunkVersion) {
        throw UnsupportedError("chunk header: format version " + num(h.version) +
                                   " is newer than the highest supported (" +
                                   num(kMaxChunkVersion) + ")",
                               0);
    }
    if (h.typesize == 0) {
        throw FormatError("chunk header: typesize is 0", 3);
    }
    if (h.nbytes < 0) {
        throw FormatError("chunk header: nbytes is negative (" + num(h.nbytes) + ")", 4);
    }
    if (h.nbytes > kMaxChunkNbytes) {
        throw FormatError("chunk header: nbytes " + num(h.nbytes) + " exceeds the format maximum " +
                              num(kMaxChunkNbytes),
                          4);
    }
    if (h.blocksize <= 0) {
        throw FormatError("chunk header: blocksize must be positive, got " + num(h.blocksize), 8);
    }
    if (h.blocksize > kMaxBlockSize) {
        throw FormatError("chunk header: blocksize " + num(h.blocksize) +
                              " exceeds the format maximum " + num(kMaxBlockSize),
                          8);
    }
    if (h.cbytes < kChunkMinHeaderSize) {
        throw FormatError(
            "chunk header: cbytes " + num(h.cbytes) + " is smaller than the 16-byte header", 12);
    }

    h.extended = (h.flags & chunk_flags::kExtended) == chunk_flags::kExtended;
    if (h.extended) {
        if (h.cbytes < kChunkExtendedHeaderSize) {
            throw FormatError("chunk header: cbytes " + num(h.cbytes) +
                                  " is smaller than the 32-byte extended header",
                              12);
        }
        for (auto& f : h.filters) {
            f = r.u8("chunk header filters");
        }
        h.udcodec = r.u8("chunk header udcodec");
        h.compcode_meta = r.u8("chunk header compcode_meta");
        for (auto& m : h.filters_meta) {
            m = r.u8("chunk header filters_meta");
        }
        h.blosc2_flags2 = r.u8("chunk header blosc2_flags2");
        h.blosc2_flags = r.u8("chunk header blosc2_flags");

        if ((h.blosc2_flags2 & ~blosc2_flags2::kVlBlocks) != 0) {
            throw UnsupportedError("chunk header: unknown blosc2_flags2 bits 0x" +
                                       std::to_string(h.blosc2_flags2 & ~blosc2_flags2::kVlBlocks),
                                   30);
        }
        if ((h.blosc2_flags & blosc2_flags::kInstrumented) != 0) {
            throw UnsupportedError(
                "chunk header: instrumented chunk (blocks hold codec statistics, not data)", 31);
        }
        if ((h.blosc2_flags & blosc2_flags::kLazy) != 0) {
            throw FormatError(
                "chunk header: lazy-chunk flag set (an in-memory form that is never stored)", 31);
        }
        const std::uint8_t special = h.special();
        if (special > kSpecialLast) {
            throw FormatError("chunk header: unknown special value kind " + num(special), 31);
        }
        if (h.vl_blocks()) {
            if (special != 0) {
                throw FormatError("chunk header: VL-block chunk cannot be a special chunk", 31);
            }
            if (h.memcpyed()) {
                throw FormatError("chunk header: VL-block chunk cannot be memcpyed", 2);
            }
        }
        if (special == kSpecialValue) {
            const std::int32_t vts = h.special_value_size();
            if (vts <= 0) {
                throw FormatError("chunk header: repeated-value chunk stores no value (cbytes " +
                                      num(h.cbytes) + ")",
                                  12);
            }
            if (vts > h.nbytes || h.nbytes % vts != 0) {
                throw FormatError("chunk header: repeated value of " + num(vts) +
                                      " bytes does not tile nbytes " + num(h.nbytes),
                                  4);
            }
        } else if (special != 0 && special != 1 && h.nbytes % h.typesize != 0) {
            throw FormatError("chunk header: nbytes " + num(h.nbytes) +
                                  " is not a multiple of typesize " + num(h.typesize),
                              4);
        }
        if (h.version == kAlphaVersion) {
            h.filters[5] = 0;
            h.filters_meta[5] = 0;
        }
    } else {
        // Blosc1-style header: the filter flags describe a fixed pipeline.
        if ((h.flags & chunk_flags::kShuffle) != 0) {
            h.filters[5] = kFilterShuffle;
        }
        if ((h.flags & chunk_flags::kBitshuffle) != 0) {
            h.filters[5] = kFilterBitshuffle;
        }
        if ((h.flags & chunk_flags::kDelta) != 0) {
            h.filters[4] = kFilterDelta;
        }
    }

    if (whole && static_cast<std::uint64_t>(h.cbytes) > chunk.size()) {
        throw FormatError("chunk header: cbytes " + num(h.cbytes) + " exceeds the " +
                              num(static_cast<std::int64_t>(chunk.size())) + " bytes available",
                          12);
    }
    if (h.memcpyed() && h.cbytes != h.nbytes + h.header_size()) {
        throw FormatError("chunk header: memcpyed chunk must have cbytes = nbytes + " +
                              num(h.header_size()) + ", got cbytes " + num(h.cbytes) +
                              " and nbytes " + num(h.nbytes),
                          12);
    }
    if (!h.vl_blocks() && h.nbytes > 0 && h.blocksize > h.nbytes) {
        h.blocksize = h.nbytes;  // c-blosc2 clamps the same way
    }
    return h;
}

void write_chunk_header(const ChunkHeader& h, std::uint8_t* out) noexcept {
    out[0] = h.version;
    out[1] = h.versionlz;
    out[2] = h.flags;
    out[3] = h.typesize;
    store_le(out + 4, h.nbytes);
    store_le(out + 8, h.blocksize);
    store_le(out + 12, h.cbytes);
    if (h.extended) {
        std::memcpy(out + 16, h.filters.data(), kChunkMaxFilters);
        out[22] = h.udcodec;
        out[23] = h.compcode_meta;
        std::memcpy(out + 24, h.filters_meta.data(), kChunkMaxFilters);
        out[30] = h.blosc2_flags2;
        out[31] = h.blosc2_flags;
    }
}

}  // namespace b2nd::format
