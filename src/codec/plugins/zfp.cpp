// ZFP (codecs 33-35) through libzfp, as FORMAT-NOTES.md ("ZFP (33, 34, 35)") describes it.
//
// Each stream is one whole block compressed as one zfp field, with no zfp header: C order, zfp's
// x axis is the block's last dim, typesize 4 is zfp float and 8 double. The codec id picks the
// mode and the meta byte its parameter:
//  - 33 accuracy: tolerance 10^m, m read as int8;
//  - 34 precision: m + 5 + 2 (ndim - 1) bit planes, at most 64;
//  - 35 rate: m / 100 * typesize * 8 bits per value, without word alignment.
// Streams are padded to a multiple of 8 bytes (c-blosc2's zfp reads 64-bit words). Decoding
// copies the stream into a buffer with room for the most bits zfp can read for the block
// (max_read_bytes), since zfp's bit reader has no bounds: a corrupt stream reads garbage there,
// never outside it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/error.hpp>

#include "../../detail/memory.hpp"
#include "../../detail/text.hpp"
#include "plugins.hpp"

#ifdef B2ND_HAVE_ZFP
#include <zfp.h>
#endif

namespace b2nd::codec::plugins {

using b2nd::detail::num;

namespace {

[[maybe_unused]] constexpr int kMaxPrecision = 64;

[[maybe_unused]] bool moves_bytes(Filter f) {
    switch (f) {
        case Filter::shuffle:
        case Filter::bitshuffle:
        case Filter::delta:
        case Filter::bytedelta:
        case Filter::bytedelta_legacy:
            return true;
        default:
            return false;
    }
}

[[maybe_unused]] int precision_offset(int ndim) {
    return 5 + 2 * (ndim - 1);
}

[[maybe_unused]] std::string check(Codec mode, const BlockContext& c) {
    const std::string name(codec_name(mode));
    std::string why = check_geometry(c, name.c_str(), 4);
    if (!why.empty()) {
        return why;
    }
    if (c.typesize != 4 && c.typesize != 8) {
        return name + " compresses float32 or float64 items (typesize 4 or 8), not typesize " +
               num(c.typesize);
    }
    for (int d = 0; d < c.ndim; ++d) {
        if (c.blockshape[d] < 4) {
            return name + " needs every block dim >= 4; block dim " + num(d) + " is " +
                   num(c.blockshape[d]);
        }
    }
    for (int i = 0; i < c.nfilters; ++i) {
        if (moves_bytes(c.filters[i].id)) {
            return name + " after the " + filter_name(static_cast<std::uint8_t>(c.filters[i].id)) +
                   " filter would compress bytes that are not floats (c-blosc2 accepts it and "
                   "destroys the data); drop the filter";
        }
    }
    if (mode == Codec::zfp_precision) {
        const int m = c.meta;
        const int most = kMaxPrecision - precision_offset(c.ndim);
        if (m < 1 || m > most) {
            return "zfp_precision: " + num(m) + " is outside 1.." + num(most) + " for " +
                   num(c.ndim) + " dims (it keeps meta + " + num(precision_offset(c.ndim)) +
                   " bit planes, at most 64)";
        }
    }
    if (mode == Codec::zfp_rate && (c.meta < 1 || c.meta > 100)) {
        return "zfp_rate: " + num(c.meta) +
               " is not a percentage of the uncompressed size in 1..100";
    }
    return {};
}

#ifdef B2ND_HAVE_ZFP

struct ZfpScratch {
    b2nd::detail::Scratch buf;
};

ZfpScratch& scratch() {
    thread_local ZfpScratch s;
    return s;
}

/// A zfp stream and field set up for one block; closes them on scope exit.
class Zfp {
public:
    Zfp(Codec mode, const BlockContext& c, void* data, void* stream, std::size_t bytes) {
        const zfp_type type = c.typesize == 4 ? zfp_type_float : zfp_type_double;
        const auto n = [&](int d) { return static_cast<std::size_t>(c.blockshape[d]); };
        switch (c.ndim) {
            case 1:
                field_ = zfp_field_1d(data, type, n(0));
                break;
            case 2:
                field_ = zfp_field_2d(data, type, n(1), n(0));
                break;
            case 3:
                field_ = zfp_field_3d(data, type, n(2), n(1), n(0));
                break;
            default:
                field_ = zfp_field_4d(data, type, n(3), n(2), n(1), n(0));
                break;
        }
        zfp_ = zfp_stream_open(nullptr);
        switch (mode) {
            case Codec::zfp_accuracy:
                zfp_stream_set_accuracy(zfp_, std::pow(10.0, static_cast<std::int8_t>(c.meta)));
                break;
            case Codec::zfp_precision:
                zfp_stream_set_precision(
                    zfp_, static_cast<unsigned>(
                              std::min(c.meta + precision_offset(c.ndim), kMaxPrecision)));
                break;
            default:
                zfp_stream_set_rate(zfp_, static_cast<double>(c.meta) / 100.0 * c.typesize * 8,
                                    type, static_cast<unsigned>(c.ndim), zfp_false);
                break;
        }
        if (stream != nullptr) {
            attach(stream, bytes);
        }
    }
    ~Zfp() {
        if (bits_ != nullptr) {
            stream_close(bits_);
        }
        zfp_stream_close(zfp_);
        zfp_field_free(field_);
    }
    Zfp(const Zfp&) = delete;
    Zfp& operator=(const Zfp&) = delete;

    void attach(void* stream, std::size_t bytes) {
        bits_ = stream_open(stream, bytes);
        zfp_stream_set_bit_stream(zfp_, bits_);
        zfp_stream_rewind(zfp_);
    }
    std::size_t max_size() const { return zfp_stream_maximum_size(zfp_, field_); }
    std::size_t compress() { return zfp_compress(zfp_, field_); }
    std::size_t decompress() { return zfp_decompress(zfp_, field_); }
    std::uint64_t bits_read() const { return stream_rtell(bits_); }

private:
    zfp_field* field_ = nullptr;
    zfp_stream* zfp_ = nullptr;
    bitstream* bits_ = nullptr;
};

/// The most bytes zfp's decoder can read for a block, whatever the stream holds. Per cell of
/// s = 4^ndim values it reads a bit and the exponent (at most 12 bits), then bit planes of the
/// integer precision p (32 for float, 64 for double): each plane at most s value bits, and over
/// all planes at most 2 s + p group-test bits, since a coefficient turns significant only once;
/// its own budget (ZFP_MAX_BITS, or the rate's bits) caps that too.
std::size_t max_read_bytes(const BlockContext& c) {
    std::size_t cells = 1;
    for (int d = 0; d < c.ndim; ++d) {
        cells *= static_cast<std::size_t>((c.blockshape[d] + 3) / 4);
    }
    const std::size_t s = std::size_t{1} << (2 * c.ndim);
    const auto p = static_cast<std::size_t>(c.typesize) * 8;
    const std::size_t bits = std::min<std::size_t>(13 + p * s + 2 * s + p, ZFP_MAX_BITS);
    return cells * ((bits + 7) / 8) + 16;
}

/// The first item (of n, typesize bytes each) whose exponent bits are all ones (NaN or an
/// infinity), or -1. A branch-free pass that vectorizes, then the index where one was seen.
template <class U>
std::int64_t first_non_finite(const std::uint8_t* p, std::size_t n) {
    constexpr U exponent = static_cast<U>(sizeof(U) == 4 ? 0x7f800000ULL : 0x7ff0000000000000ULL);
    constexpr std::size_t kRun = 1024;
    for (std::size_t start = 0; start < n; start += kRun) {
        const std::size_t end = std::min(n, start + kRun);
        U any = 0;
        for (std::size_t i = start; i < end; ++i) {
            U v;
            std::memcpy(&v, p + i * sizeof(U), sizeof(U));
            any |= static_cast<U>((v & exponent) == exponent);
        }
        if (any != 0) {
            for (std::size_t i = start; i < end; ++i) {
                U v;
                std::memcpy(&v, p + i * sizeof(U), sizeof(U));
                if ((v & exponent) == exponent) {
                    return static_cast<std::int64_t>(i);
                }
            }
        }
    }
    return -1;
}

/// The first item of `src` that is NaN or infinite (-1: none), and why it cannot be encoded.
std::int64_t first_bad(const BlockContext& c, ByteSpan src) {
    const std::size_t items = src.size() / static_cast<std::size_t>(c.typesize);
    return c.typesize == 4   ? first_non_finite<std::uint32_t>(src.data(), items)
           : c.typesize == 8 ? first_non_finite<std::uint64_t>(src.data(), items)
                             : -1;
}

std::string not_finite(Codec mode) {
    return std::string(codec_name(mode)) +
           " cannot encode NaN or infinity (zfp does not define them); use a lossless codec "
           "for fields that hold them, or replace them first";
}

std::string check_finite(Codec mode, const BlockContext& c, ByteSpan src) {
    if (const std::int64_t bad = first_bad(c, src); bad >= 0) {
        throw ItemError(not_finite(mode), bad);
    }
    return {};
}

std::size_t encode(Codec mode, const BlockContext& c, ByteSpan src, MutableByteSpan dst) {
    std::string why = check(mode, c);
    if (!why.empty()) {
        throw UsageError(why);
    }
    require_block(c, src.size(), std::string(codec_name(mode)).c_str());
    if (const std::int64_t bad = first_bad(c, src); bad >= 0) {
        throw ItemError(not_finite(mode), bad);
    }
    Zfp z(mode, c, const_cast<std::uint8_t*>(src.data()), nullptr, 0);
    const std::size_t room = z.max_size() + 8;
    std::uint8_t* buf = b2nd::detail::scratch_bytes(scratch().buf, room);
    z.attach(buf, room);
    std::size_t size = z.compress();
    if (size == 0) {
        throw CodecError(std::string(codec_name(mode)) + ": zfp_compress failed");
    }
    const std::size_t padded = (size + 7) / 8 * 8;  // whole 64-bit words for c-blosc2's reader
    if (padded >= src.size() || padded > dst.size()) {
        return 0;  // not smaller: stored as it is
    }
    std::memset(buf + size, 0, padded - size);
    std::memcpy(dst.data(), buf, padded);
    return padded;
}

void decode(Codec mode, const BlockContext& c, ByteSpan src, MutableByteSpan dst) {
    const std::string name(codec_name(mode));
    require_block(c, dst.size(), name.c_str());
    if (c.typesize != 4 && c.typesize != 8) {
        throw FormatError(name + ": typesize " + num(c.typesize) +
                          " (zfp streams hold float32 or "
                          "float64)");
    }
    if (c.ndim > 4) {
        throw FormatError(name + ": " + num(c.ndim) + " dims (zfp handles 1..4)");
    }
    // Room for the most bits zfp can read for this block, whatever the stream says.
    const std::size_t room = (src.size() + max_read_bytes(c) + 7) / 8 * 8;
    std::uint8_t* buf = b2nd::detail::scratch_bytes(scratch().buf, room);
    std::memcpy(buf, src.data(), src.size());
    std::memset(buf + src.size(), 0, std::min<std::size_t>(room - src.size(), 64));
    Zfp z(mode, c, dst.data(), buf, room);
    if (z.decompress() == 0) {
        throw FormatError(name + ": zfp could not decode the stream");
    }
    const std::uint64_t used = (z.bits_read() + 7) / 8;
    if (used > src.size()) {
        throw FormatError(name + ": the stream of " + num(static_cast<std::int64_t>(src.size())) +
                          " bytes is truncated (decoding it needs " +
                          num(static_cast<std::int64_t>(used)) + ")");
    }
}

#endif

CodecPlugin make(Codec mode) {
    CodecPlugin p;
    p.id = static_cast<std::uint8_t>(mode);
    p.name = mode == Codec::zfp_accuracy    ? "zfp_accuracy"
             : mode == Codec::zfp_precision ? "zfp_precision"
                                            : "zfp_rate";
    p.needs_geometry = true;
    p.lossy = true;
    p.float_items = true;
#ifdef B2ND_HAVE_ZFP
    p.check = [mode](const BlockContext& c) { return check(mode, c); };
    p.check_data = [mode](const BlockContext& c, ByteSpan items) {
        return check_finite(mode, c, items);
    };
    p.encode = [mode](const BlockContext& c, ByteSpan src, MutableByteSpan dst) {
        return encode(mode, c, src, dst);
    };
    p.decode = [mode](const BlockContext& c, ByteSpan src, MutableByteSpan dst) {
        decode(mode, c, src, dst);
    };
#else
    const std::string why = p.name + " (codec " + num(p.id) +
                            "): this b2nd-cpp was built without ZFP (install libzfp-dev and "
                            "rebuild)";
    p.check = [why](const BlockContext&) { return why; };
    p.decode = [why](const BlockContext&, ByteSpan, MutableByteSpan) {
        throw UnsupportedError(why);
    };
#endif
    return p;
}

}  // namespace

std::vector<CodecPlugin> zfp() {
    return {make(Codec::zfp_accuracy), make(Codec::zfp_precision), make(Codec::zfp_rate)};
}

}  // namespace b2nd::codec::plugins
