// Lossy compression and plugins (docs/plugins.md):
//  1. one float32 field written with every codec that suits it, a table of ratio and max error;
//  2. a codec of your own, registered at run time, used like any other.
// Works in a temporary directory that it removes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <b2nd/b2nd.hpp>
#include <b2nd/codec/registry.hpp>

#include <unistd.h>

namespace fs = std::filesystem;

namespace {

/// A smooth 3-d temperature-like field with small-scale noise: (z, y, x) = (32, 256, 256).
std::vector<float> make_field(const b2nd::Shape& s) {
    std::vector<float> v(static_cast<std::size_t>(s[0] * s[1] * s[2]));
    std::uint32_t noise = 12345;
    std::size_t i = 0;
    for (std::int64_t z = 0; z < s[0]; ++z) {
        for (std::int64_t y = 0; y < s[1]; ++y) {
            for (std::int64_t x = 0; x < s[2]; ++x, ++i) {
                noise = noise * 1664525U + 1013904223U;
                const double r = static_cast<double>(noise >> 8) / 16777216.0 - 0.5;
                v[i] = static_cast<float>(15.0 +
                                          10.0 * std::sin(0.05 * static_cast<double>(x)) *
                                              std::cos(0.03 * static_cast<double>(y)) -
                                          0.2 * static_cast<double>(z) + 0.01 * r);
            }
        }
    }
    return v;
}

struct Row {
    const char* name;
    const char* when;
    b2nd::CompressionParams c;
};

/// Run-length coding of bytes: (count, byte) pairs. A user codec (ids 160-255).
void register_rle() {
    b2nd::codec::CodecPlugin p;
    p.id = 200;
    p.name = "rle";
    p.encode = [](const b2nd::codec::BlockContext&, b2nd::ByteSpan src,
                  b2nd::MutableByteSpan dst) -> std::size_t {
        std::size_t out = 0;
        for (std::size_t i = 0; i < src.size();) {
            std::size_t run = 1;
            while (i + run < src.size() && run < 255 && src[i + run] == src[i]) {
                ++run;
            }
            if (out + 2 > dst.size() || out + 2 >= src.size()) {
                return 0;  // not smaller: the stream is stored as it is
            }
            dst[out++] = static_cast<std::uint8_t>(run);
            dst[out++] = src[i];
            i += run;
        }
        return out;
    };
    p.decode = [](const b2nd::codec::BlockContext&, b2nd::ByteSpan src, b2nd::MutableByteSpan dst) {
        std::size_t out = 0;
        for (std::size_t i = 0; i + 1 < src.size(); i += 2) {
            if (src[i] > dst.size() - out) {
                throw b2nd::FormatError("rle: runs exceed the block");
            }
            std::memset(dst.data() + out, src[i + 1], src[i]);
            out += src[i];
        }
        if (out != dst.size() || src.size() % 2 != 0) {
            throw b2nd::FormatError("rle: runs do not make the block");
        }
    };
    b2nd::codec::register_codec(std::move(p));
}

}  // namespace

int main() {
    const fs::path dir = fs::temp_directory_path() / ("b2nd-plugins-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const b2nd::Shape shape{32, 256, 256};
    const std::vector<float> field = make_field(shape);
    const b2nd::ByteSpan bytes{reinterpret_cast<const std::uint8_t*>(field.data()),
                               field.size() * sizeof(float)};

    using b2nd::Codec;
    using b2nd::Filter;
    auto params = [](Codec codec, int meta, std::vector<b2nd::FilterSlot> filters, int clevel = 5) {
        b2nd::CompressionParams c;
        c.codec = codec;
        c.codec_meta = static_cast<std::uint8_t>(meta);
        c.filters = std::move(filters);
        c.clevel = clevel;
        return c;
    };
    const std::vector<Row> rows = {
        {"zstd:5 + shuffle", "lossless, the default kind",
         params(Codec::zstd, 0, {{Filter::shuffle, 0}})},
        {"zstd:5 + bitshuffle", "lossless, noisy floats",
         params(Codec::zstd, 0, {{Filter::bitshuffle, 0}})},
        {"int_trunc:-13 + shuffle, zstd:5", "keep 10 of 23 mantissa bits",
         params(Codec::zstd, 0,
                {{Filter::int_trunc, static_cast<std::uint8_t>(-13)}, {Filter::shuffle, 0}})},
        {"ndmean:2, zstd:5", "2x2x2 cell means", params(Codec::zstd, 0, {{Filter::ndmean, 2}})},
        {"zfp-accuracy:-2", "error at most 1e-2", params(Codec::zfp_accuracy, -2, {})},
        {"zfp-accuracy:-4", "error at most 1e-4", params(Codec::zfp_accuracy, -4, {})},
        {"zfp-precision:12", "12 + 9 bit planes (3-d)", params(Codec::zfp_precision, 12, {})},
        {"zfp-rate:10", "10% of the size, fixed", params(Codec::zfp_rate, 10, {})},
        {"zfp-rate:25", "25% of the size, fixed", params(Codec::zfp_rate, 25, {})},
    };
    std::printf("| codec and filters | what it keeps | ratio | max abs error |\n");
    std::printf("|---|---|---:|---:|\n");
    for (const Row& r : rows) {
        b2nd::CreateOptions o;
        o.chunk_shape = {8, 128, 256};
        o.block_shape = {4, 32, 64};
        o.compression = r.c;
        o.overwrite = true;
        try {
            const auto a = b2nd::AnyArray::create_from((dir / "f.b2nd").string(),
                                                       b2nd::DType::parse("<f4"), shape, bytes, o);
            const std::vector<std::uint8_t> back = a.read();
            double err = 0;
            for (std::size_t i = 0; i < field.size(); ++i) {
                float v;
                std::memcpy(&v, back.data() + i * 4, 4);
                err =
                    std::max(err, std::abs(static_cast<double>(v) - static_cast<double>(field[i])));
            }
            std::printf("| %s | %s | %.2f | %.2g |\n", r.name, r.when,
                        static_cast<double>(a.nbytes()) / static_cast<double>(a.cbytes()), err);
        } catch (const b2nd::Error& e) {
            std::printf("| %s | %s | - | (%s) |\n", r.name, r.when, e.what());
        }
    }

    // A codec of your own: register it once, then use its id like any built-in codec.
    register_rle();
    const b2nd::Shape mshape{512, 512};
    std::vector<std::uint8_t> mask(512 * 512);
    for (std::size_t i = 0; i < mask.size(); ++i) {
        const auto y = static_cast<double>(i / 512) - 256;
        const auto x = static_cast<double>(i % 512) - 256;
        mask[i] = x * x + y * y < 150.0 * 150.0 ? 1 : 0;  // a disc
    }
    b2nd::CreateOptions o;
    o.chunk_shape = {128, 512};
    o.block_shape = {32, 512};
    o.compression.codec = static_cast<Codec>(200);
    o.compression.filters = {};
    const auto m =
        b2nd::AnyArray::create_from((dir / "mask.b2nd").string(), b2nd::DType::parse("|u1"), mshape,
                                    {mask.data(), mask.size()}, o);
    const bool same = b2nd::AnyArray::open((dir / "mask.b2nd").string()).read() == mask;
    std::printf("\nuser codec '%s' (id 200) on a 512x512 mask: ratio %.1f, read back %s\n",
                std::string(b2nd::codec::codec_name(m.compression().codec)).c_str(),
                static_cast<double>(m.nbytes()) / static_cast<double>(m.cbytes()),
                same ? "identical" : "DIFFERENT");
    fs::remove_all(dir);
    return same ? 0 : 1;
}
