// Plugin codecs and filters written through the array API: what each one promises, checked
// against models written here (lossless ones give the data back, ZFP accuracy E keeps
// |error| <= 10^E, INT_TRUNC and NDMEAN equal a model of them), every refusal made before
// anything is written, and a codec registered by the user.
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/codec/registry.hpp>

#include "../../support/data.hpp"
#include "../../support/temp_dir.hpp"

using b2nd::AnyArray;
using b2nd::Codec;
using b2nd::CreateOptions;
using b2nd::DType;
using b2nd::Filter;
using b2nd::Shape;
using Catch::Contains;

namespace {

/// Options with `codec`:`meta` and base's filters (none unless given).
CreateOptions opts(
    Shape chunks, Shape blocks, Codec codec, int meta, b2nd::CompressionParams base = {{}, 1, {}}) {
    CreateOptions o = b2nd::test::chunked(std::move(chunks), std::move(blocks));
    o.compression = base;
    o.compression.codec = codec;
    o.compression.codec_meta = static_cast<std::uint8_t>(meta);
    o.compression.clevel = 5;
    return o;
}

/// A smooth field with some noise, C order: what ZFP is for.
template <class T>
std::vector<T> field(const Shape& shape, std::uint64_t seed) {
    b2nd::test::SplitMix rng(seed);
    const std::int64_t n = b2nd::test::count_of(shape);
    std::vector<T> v(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        const double x = static_cast<double>(i % 97) / 13.0;
        const double y = static_cast<double>(i / 97) / 29.0;
        v[static_cast<std::size_t>(i)] = static_cast<T>(
            100.0 * std::sin(x) * std::cos(y) + 1e-3 * static_cast<double>(rng.below(1000)));
    }
    return v;
}

template <class T>
double max_error(const std::vector<T>& a, const std::vector<T>& b) {
    REQUIRE(a.size() == b.size());
    double m = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        m = std::max(m, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
    }
    return m;
}

template <class T>
std::vector<T> as_items(const std::vector<std::uint8_t>& bytes) {
    std::vector<T> v(bytes.size() / sizeof(T));
    std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
    return v;
}

template <class T>
b2nd::ByteSpan bytes_of(const std::vector<T>& v) {
    return {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * sizeof(T)};
}

/// Flat C-order index of `idx` in `shape`.
std::int64_t flat(const Shape& idx, const Shape& shape) {
    std::int64_t f = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        f = f * shape[d] + idx[d];
    }
    return f;
}

/// Steps idx through `ext` in C order; false after the last.
bool next(Shape& idx, const Shape& ext) {
    for (std::size_t d = ext.size(); d-- > 0;) {
        if (++idx[d] < ext[d]) {
            return true;
        }
        idx[d] = 0;
    }
    return false;
}

/// NDMEAN as b2nd-cpp writes it: every block of every padded chunk (padding: the nearest
/// valid element of the chunk, where c-blosc2's b2nd_from_cbuffer writes zeros),
/// cells of side min(side, block dim), each cell's items replaced by their mean, summed in T in
/// C order. Written from FORMAT-NOTES.md, independently of the plugin.
template <class T>
std::vector<T> ndmean_model(const std::vector<T>& data,
                            const Shape& shape,
                            const Shape& chunks,
                            const Shape& blocks,
                            int side) {
    const std::size_t nd = shape.size();
    std::vector<T> out(data.size());
    Shape nchunks(nd), nblocks(nd), cell(nd), ncells(nd);
    for (std::size_t d = 0; d < nd; ++d) {
        nchunks[d] = (shape[d] + chunks[d] - 1) / chunks[d];
        nblocks[d] = (chunks[d] + blocks[d] - 1) / blocks[d];
        cell[d] = std::min<std::int64_t>(side, blocks[d]);
        ncells[d] = (blocks[d] + cell[d] - 1) / cell[d];
    }
    Shape ci(nd, 0);
    do {
        Shape bi(nd, 0);
        do {
            Shape k(nd, 0);
            do {
                Shape ext(nd), origin(nd);
                for (std::size_t d = 0; d < nd; ++d) {
                    origin[d] = ci[d] * chunks[d] + bi[d] * blocks[d] + k[d] * cell[d];
                    ext[d] = std::min(cell[d], blocks[d] - k[d] * cell[d]);
                }
                T sum = 0;
                std::int64_t count = 0;
                Shape e(nd, 0);
                do {
                    // The padding (past the array's edge, or past the chunk up to whole
                    // blocks) repeats the nearest valid element of the chunk.
                    Shape at(nd);
                    for (std::size_t d = 0; d < nd; ++d) {
                        const std::int64_t last = std::min(shape[d], (ci[d] + 1) * chunks[d]) - 1;
                        at[d] = std::min(origin[d] + e[d], last);
                    }
                    sum += data[static_cast<std::size_t>(flat(at, shape))];
                    ++count;
                } while (next(e, ext));
                const T mean = sum / static_cast<T>(count);
                e.assign(nd, 0);
                do {
                    Shape at(nd);
                    bool inside = true;
                    for (std::size_t d = 0; d < nd; ++d) {
                        at[d] = origin[d] + e[d];
                        inside =
                            inside && at[d] < shape[d] && at[d] - ci[d] * chunks[d] < chunks[d];
                    }
                    if (inside) {
                        out[static_cast<std::size_t>(flat(at, shape))] = mean;
                    }
                } while (next(e, ext));
            } while (next(k, ncells));
        } while (next(bi, nblocks));
    } while (next(ci, nchunks));
    return out;
}

void require_refused(const std::string& path,
                     const DType& dt,
                     const Shape& shape,
                     const CreateOptions& o,
                     const std::string& why) {
    INFO(why);
    REQUIRE_THROWS_WITH(AnyArray::create(path, dt, shape, o), Contains(why));
    CHECK_FALSE(std::filesystem::exists(path));
}

}  // namespace

TEST_CASE("plugins: ZFP accuracy keeps every error within 10^E", "[array][plugins]") {
    if (!b2nd::codec::has_zfp()) {
        B2ND_SKIP("built without ZFP");
    }
    b2nd::test::TempDir dir;
    const Shape shape{97, 83};
    for (int e : {-1, -3, -5}) {
        INFO("E " << e);
        const auto f32 = field<float>(shape, 1);
        const auto f64 = field<double>(shape, 2);
        const auto a =
            AnyArray::create_from(dir / "a.b2nd", DType::parse("<f4"), shape, bytes_of(f32),
                                  opts({40, 40}, {16, 20}, Codec::zfp_accuracy, e));
        const auto b = AnyArray::create_from(
            dir / "b.b2frame", DType::parse("<f8"), shape, bytes_of(f64), [&] {
                auto o = opts({50, 30}, {25, 10}, Codec::zfp_accuracy, e);
                o.sparse = true;
                return o;
            }());
        const double tol = std::pow(10.0, e);
        const double err32 = max_error(as_items<float>(a.read()), f32);
        const double err64 = max_error(as_items<double>(b.read()), f64);
        CHECK(err32 <= tol);
        CHECK(err64 <= tol);
        CHECK(err64 > 0);  // lossy: zfp really ran (not stored raw)
        CHECK(a.compression().codec == Codec::zfp_accuracy);
        CHECK(static_cast<std::int8_t>(a.compression().codec_meta) == e);
        // Reopened, sliced: the same values as the whole read.
        const auto again = AnyArray::open(dir / "a.b2nd");
        const b2nd::Box box = b2nd::Box::region({13, 7}, {40, 50});
        const auto whole = again.read();
        const auto part = again.read(box);
        for (std::int64_t i = 0; i < 40; ++i) {
            REQUIRE(std::memcmp(part.data() + i * 50 * 4, whole.data() + ((13 + i) * 83 + 7) * 4,
                                50 * 4) == 0);
        }
        std::filesystem::remove_all(dir / "b.b2frame");
        std::filesystem::remove(dir / "a.b2nd");
    }
}

TEST_CASE("plugins: CompressionParams factories set the codec, its parameter and the filters",
          "[array][plugins]") {
    const auto acc = b2nd::CompressionParams::zfp_accuracy(-3);
    CHECK(acc.codec == Codec::zfp_accuracy);
    CHECK(static_cast<std::int8_t>(acc.codec_meta) == -3);
    CHECK(acc.filters.empty());
    CHECK(b2nd::CompressionParams::zfp_precision(20).codec_meta == 20);
    CHECK(b2nd::CompressionParams::zfp_rate(30).codec == Codec::zfp_rate);
    const auto nd = b2nd::CompressionParams::ndlz(8);
    CHECK(nd.codec == Codec::ndlz);
    CHECK(nd.codec_meta == 8);
    REQUIRE(nd.filters.size() == 1);
    CHECK(nd.filters[0].id == Filter::shuffle);
    CHECK_THROWS_WITH(b2nd::CompressionParams::zfp_rate(0), Contains("outside 1..100"));
    CHECK_THROWS_WITH(b2nd::CompressionParams::zfp_accuracy(-200), Contains("outside -128..127"));
    CHECK_THROWS_WITH(b2nd::CompressionParams::ndlz(5), Contains("4 or 8"));
    if (b2nd::codec::has_zfp()) {
        b2nd::test::TempDir dir;
        const Shape shape{40, 40};
        const auto f = field<float>(shape, 9);
        CreateOptions o = b2nd::test::chunked({20, 20}, {8, 8});
        o.compression = b2nd::CompressionParams::zfp_accuracy(-3);
        const auto a =
            AnyArray::create_from(dir / "f.b2nd", DType::parse("<f4"), shape, bytes_of(f), o);
        CHECK(max_error(as_items<float>(a.read()), f) <= 1e-3);
    }
}

TEST_CASE("plugins: ZFP precision and rate are lossy and bounded; more bits, less error",
          "[array][plugins]") {
    if (!b2nd::codec::has_zfp()) {
        B2ND_SKIP("built without ZFP");
    }
    b2nd::test::TempDir dir;
    const Shape shape{12, 20, 30};
    const auto f = field<double>(shape, 3);
    double last_err = 1e300;
    std::int64_t last_size = 0;
    for (int p : {8, 16, 32}) {
        const auto a = AnyArray::create_from(
            dir / ("p" + std::to_string(p) + ".b2nd"), DType::parse("<f8"), shape, bytes_of(f),
            opts({6, 10, 15}, {6, 5, 15}, Codec::zfp_precision, p));
        const double err = max_error(as_items<double>(a.read()), f);
        CHECK(err < last_err);
        CHECK(a.cbytes() > last_size);
        last_err = err;
        last_size = a.cbytes();
    }
    CHECK(last_err < 1e-3);
    const Shape cube{16, 20, 32};  // blocks of whole 4^3 cells: no partial cells to pad
    const auto g = field<double>(cube, 4);
    for (int r : {10, 25, 50}) {
        const auto a = AnyArray::create_from(dir / ("r" + std::to_string(r) + ".b2nd"),
                                             DType::parse("<f8"), cube, bytes_of(g),
                                             opts({8, 20, 32}, {8, 4, 16}, Codec::zfp_rate, r));
        // Fixed rate: every block takes r% of its size (plus word padding and headers).
        const double ratio = static_cast<double>(a.cbytes()) / static_cast<double>(a.nbytes());
        CHECK(ratio < r / 100.0 + 0.08);
        CHECK(ratio > r / 100.0 * 0.8);
    }
}

TEST_CASE("plugins: NaN and infinity under ZFP are refused, the array left as it was",
          "[array][plugins]") {
    if (!b2nd::codec::has_zfp()) {
        B2ND_SKIP("built without ZFP");
    }
    b2nd::test::TempDir dir;
    const Shape shape{40, 40};
    auto f = field<float>(shape, 4);
    const auto o = opts({20, 20}, {10, 10}, Codec::zfp_accuracy, -2);
    f[777] = std::numeric_limits<float>::quiet_NaN();
    REQUIRE_THROWS_WITH(
        AnyArray::create_from(dir / "nan.b2nd", DType::parse("<f4"), shape, bytes_of(f), o),
        Contains("NaN or infinity"));
    CHECK_FALSE(std::filesystem::exists(dir / "nan.b2nd"));
    // Into an existing array: the write fails, the old content stays.
    f[777] = 1.0F;
    auto a = AnyArray::create_from(dir / "a.b2nd", DType::parse("<f4"), shape, bytes_of(f), o);
    const auto before = a.read();
    a = AnyArray();
    std::vector<float> bad(100, std::numeric_limits<float>::infinity());
    a = AnyArray::open(dir / "a.b2nd", [] {
        b2nd::OpenOptions w;
        w.writable = true;
        return w;
    }());
    REQUIRE_THROWS_WITH(a.write(b2nd::Box::region({0, 0}, {10, 10}), bytes_of(bad)),
                        Contains("NaN or infinity"));
    CHECK(AnyArray::open(dir / "a.b2nd").read() == before);
}

TEST_CASE("plugins: NDLZ, NDCELL and BYTEDELTA give the data back", "[array][plugins]") {
    b2nd::test::TempDir dir;
    b2nd::test::SplitMix rng(5);
    struct Case {
        const char* dtype;
        Shape shape, chunks, blocks;
        Codec codec;
        int meta;
        std::vector<b2nd::FilterSlot> filters;
    };
    const Case cases[] = {
        {"|u1", {150, 131}, {64, 64}, {32, 32}, Codec::ndlz, 4, {}},
        {"|u1", {61, 100}, {40, 60}, {21, 30}, Codec::ndlz, 8, {}},
        {"<u2", {128, 100}, {64, 50}, {32, 25}, Codec::ndlz, 4, {{Filter::shuffle, 0}}},
        {"<f4", {80, 72}, {40, 72}, {16, 24}, Codec::ndlz, 8, {{Filter::bitshuffle, 0}}},
        {"<i8", {50, 40}, {25, 40}, {5, 7}, Codec::ndlz, 4, {}},  // split without a shuffle
        {"|u1", {3, 3}, {3, 3}, {3, 3}, Codec::ndlz, 4, {}},      // one partial cell
        {"<f4", {100, 90}, {50, 45}, {20, 15}, Codec::lz4, 0, {{Filter::ndcell, 4}}},
        {"<i4",
         {20, 24, 30},
         {10, 12, 15},
         {5, 6, 15},
         Codec::zstd,
         0,
         {{Filter::ndcell, 3}, {Filter::shuffle, 0}}},
        {"<f8",
         {8, 10, 12, 14},
         {4, 5, 6, 7},
         {4, 5, 6, 7},
         Codec::zstd,
         0,
         {{Filter::ndcell, 2}, {Filter::bitshuffle, 0}}},
        {"|S3", {3000}, {700}, {140}, Codec::blosclz, 0, {{Filter::ndcell, 8}}},
        {"<f4", {30, 120}, {15, 60}, {3, 40}, Codec::zstd, 0, {{Filter::ndcell, 6}}},
    };
    for (const Case& c : cases) {
        INFO(c.dtype << " codec " << static_cast<int>(c.codec) << ":" << c.meta);
        const DType dt = DType::parse(c.dtype);
        // Structured data NDLZ can match: tiles, constant cells, rows repeated, and noise.
        std::vector<std::uint8_t> data =
            b2nd::test::random_items(rng, dt, b2nd::test::count_of(c.shape));
        for (std::size_t i = 0; i < data.size() / 3; ++i) {
            data[i] = static_cast<std::uint8_t>((i / 16) % 7);
        }
        for (std::size_t i = data.size() / 3; i < data.size() / 2; ++i) {
            data[i] = data[i % 64];
        }
        b2nd::CompressionParams base;
        base.filters = c.filters;
        const auto o = opts(c.chunks, c.blocks, c.codec, c.meta, base);
        const auto a =
            AnyArray::create_from(dir / "a.b2nd", dt, c.shape, {data.data(), data.size()}, o);
        REQUIRE(a.read() == data);
        if (c.codec == Codec::ndlz && dt.itemsize() > 1) {
            CHECK(a.compression().splitmode == b2nd::SplitMode::always);
        }
        // Element and box reads too.
        const b2nd::Box box = b2nd::Box::whole(c.shape);
        CHECK(a.read(box) == data);
        std::filesystem::remove(dir / "a.b2nd");
    }
}

TEST_CASE("plugins: INT_TRUNC and NDMEAN match their models", "[array][plugins]") {
    b2nd::test::TempDir dir;
    SECTION("int_trunc") {
        const Shape shape{70, 61};
        b2nd::test::SplitMix rng(6);
        for (const char* d : {"|u1", "|i1", "<i2", ">i4", "<u8", "<f4", "<f8"}) {
            const DType dt = DType::parse(d);
            const int bits = static_cast<int>(dt.itemsize()) * 8;
            for (int p : {3, -2, bits, -(bits - 1)}) {
                INFO(d << " int_trunc " << p);
                const auto data = b2nd::test::random_items(rng, dt, b2nd::test::count_of(shape));
                b2nd::CompressionParams base;
                base.filters = {{Filter::int_trunc, static_cast<std::uint8_t>(p)},
                                {Filter::shuffle, 0}};
                const auto a =
                    AnyArray::create_from(dir / "t.b2nd", dt, shape, {data.data(), data.size()},
                                          opts({35, 30}, {7, 30}, Codec::lz4, 0, base));
                // The model: every item as a little-endian unsigned integer, low z bits cleared.
                const int z = p >= 0 ? bits - p : -p;
                std::vector<std::uint8_t> want = data;
                for (std::size_t i = 0; i < want.size(); i += static_cast<std::size_t>(bits / 8)) {
                    for (int bit = 0; bit < z; ++bit) {
                        want[i + static_cast<std::size_t>(bit / 8)] &=
                            static_cast<std::uint8_t>(~(1U << (bit % 8)));
                    }
                }
                REQUIRE(a.read() == want);
                std::filesystem::remove(dir / "t.b2nd");
            }
        }
    }
    SECTION("ndmean") {
        struct Case {
            Shape shape, chunks, blocks;
            int side;
        };
        const Case cases[] = {
            {{100, 80}, {50, 40}, {20, 20}, 4},
            {{20, 24, 28}, {10, 12, 14}, {5, 6, 7}, 3},
            {{5000}, {1100}, {220}, 7},
            {{70, 66}, {35, 33}, {10, 11}, 4},
            {{16, 20, 24}, {8, 10, 12}, {4, 5, 6}, 8},
            {{33, 47}, {20, 30}, {8, 12}, 5},  // chunks not a multiple of blocks: padding
        };
        for (const Case& c : cases) {
            INFO("ndmean " << c.side << " blocks " << b2nd::to_string(c.blocks));
            const auto f32 = field<float>(c.shape, 7);
            const auto f64 = field<double>(c.shape, 8);
            b2nd::CompressionParams base;
            base.filters = {{Filter::ndmean, static_cast<std::uint8_t>(c.side)}};
            const auto a =
                AnyArray::create_from(dir / "m4.b2nd", DType::parse("<f4"), c.shape, bytes_of(f32),
                                      opts(c.chunks, c.blocks, Codec::zstd, 0, base));
            {
                const auto got = as_items<float>(a.read());
                const auto want = ndmean_model(f32, c.shape, c.chunks, c.blocks, c.side);
                std::size_t i = 0;
                while (i < got.size() && got[i] == want[i]) {
                    ++i;
                }
                INFO("first difference at " << i << " of " << got.size() << ": "
                                            << (i < got.size() ? got[i] : 0.0F) << " vs "
                                            << (i < got.size() ? want[i] : 0.0F));
                CHECK(i == got.size());
            }
            base.filters.push_back({Filter::bitshuffle, 0});
            const auto b =
                AnyArray::create_from(dir / "m8.b2nd", DType::parse("<f8"), c.shape, bytes_of(f64),
                                      opts(c.chunks, c.blocks, Codec::lz4, 0, base));
            CHECK(as_items<double>(b.read()) ==
                  ndmean_model(f64, c.shape, c.chunks, c.blocks, c.side));
            std::filesystem::remove(dir / "m4.b2nd");
            std::filesystem::remove(dir / "m8.b2nd");
        }
    }
}

TEST_CASE("plugins: what cannot be written is refused before anything is", "[array][plugins]") {
    b2nd::test::TempDir dir;
    const std::string p = dir / "x.b2nd";
    const DType f4 = DType::parse("<f4");
    b2nd::CompressionParams shuf;
    shuf.filters = {{Filter::shuffle, 0}};
    if (b2nd::codec::has_zfp()) {
        require_refused(p, DType::parse("<i2"), {40, 40},
                        opts({20, 20}, {8, 8}, Codec::zfp_accuracy, -3), "typesize 4 or 8");
        require_refused(p, f4, {4, 4, 4, 4, 4},
                        opts({4, 4, 4, 4, 4}, {4, 4, 4, 4, 4}, Codec::zfp_rate, 20),
                        "1..4 dimensions");
        require_refused(p, f4, {40, 40}, opts({20, 20}, {3, 20}, Codec::zfp_precision, 10),
                        "block dim 0 is 3");
        require_refused(p, f4, {40, 40}, opts({20, 20}, {8, 8}, Codec::zfp_rate, 50, shuf),
                        "after the shuffle filter");
        require_refused(p, f4, {40, 40}, opts({20, 20}, {8, 8}, Codec::zfp_rate, 0), "1..100");
        require_refused(p, f4, {40, 40}, opts({20, 20}, {8, 8}, Codec::zfp_precision, 60),
                        "outside 1..57");
        // Items that are not little-endian floats would be compressed as floats: refused.
        require_refused(p, DType::parse("<i4"), {40, 40},
                        opts({20, 20}, {8, 8}, Codec::zfp_accuracy, -3),
                        "items of dtype '<i4' would be read as floats");
        require_refused(p, DType::parse(">f8"), {40, 40},
                        opts({20, 20}, {8, 8}, Codec::zfp_rate, 30), "dtype '>f8'");
    } else {
        require_refused(p, f4, {40, 40}, opts({20, 20}, {8, 8}, Codec::zfp_accuracy, -3),
                        "built without ZFP");
    }
    {
        b2nd::CompressionParams mean;
        mean.filters = {{Filter::ndmean, 2}};
        require_refused(
            p, DType::parse("<u4"), {40, 40}, opts({20, 20}, {8, 8}, Codec::lz4, 0, mean),
            "ndmean works on little-endian float32 or float64 values; items of dtype '<u4'");
    }
    require_refused(p, f4, {40, 40, 4}, opts({20, 20, 4}, {8, 8, 4}, Codec::ndlz, 4),
                    "2-d arrays only");
    require_refused(p, f4, {40, 40}, opts({20, 20}, {8, 8}, Codec::ndlz, 5), "must be 4 or 8");
    b2nd::CompressionParams m;
    m.filters = {{Filter::ndmean, 6}};
    require_refused(p, DType::parse("<i2"), {40, 40}, opts({20, 20}, {8, 8}, Codec::zstd, 0, m),
                    "typesize 4 or 8");
    require_refused(p, f4, {40, 40}, opts({20, 20}, {4, 8}, Codec::zstd, 0, m),
                    "c-blosc2 writes such chunks and cannot read them back");
    m.filters = {{Filter::shuffle, 0}, {Filter::ndmean, 2}};
    require_refused(p, f4, {40, 40}, opts({20, 20}, {8, 8}, Codec::zstd, 0, m),
                    "must come before the filters that move bytes");
    m.filters = {{Filter::int_trunc, 0}};
    require_refused(p, f4, {40, 40}, opts({20, 20}, {8, 8}, Codec::zstd, 0, m),
                    "not a valid bit count for typesize 4");
    m.filters = {{Filter::int_trunc, static_cast<std::uint8_t>(-32)}};
    require_refused(p, f4, {40, 40}, opts({20, 20}, {8, 8}, Codec::zstd, 0, m),
                    "not a valid bit count");
    m.filters = {{Filter::int_trunc, 4}};
    require_refused(p, DType::parse("|S3"), {40, 40}, opts({20, 20}, {8, 8}, Codec::zstd, 0, m),
                    "typesize 1, 2, 4 or 8");
    m.filters = {{Filter::ndcell, 9}};
    require_refused(p, f4, {40, 40}, opts({20, 20}, {8, 8}, Codec::zstd, 0, m), "exceeds a block");
    m.filters = {{Filter::bytedelta_legacy, 4}};
    require_refused(p, f4, {40, 40}, opts({20, 20}, {8, 8}, Codec::zstd, 0, m),
                    "cannot be used for writing");
}

TEST_CASE("plugins: a user codec and filter registered at run time", "[array][plugins]") {
    using namespace b2nd::codec;
    static std::atomic<int> decoded{0};  // decode runs on the array's threads
    if (find_codec_plugin(201) == nullptr) {
        CodecPlugin c;
        c.id = 201;
        c.name = "test_xor";
        c.encode = [](const BlockContext& ctx, b2nd::ByteSpan src,
                      b2nd::MutableByteSpan dst) -> std::size_t {
            // A toy codec: streams made of pairs of equal bytes are stored as one byte of each
            // pair, XORed with the meta byte.
            const std::size_t n = src.size();
            if (n % 2 != 0 || dst.size() < n / 2) {
                return 0;
            }
            for (std::size_t i = 0; i < n; i += 2) {
                if (src[i] != src[i + 1]) {
                    return 0;
                }
                dst[i / 2] = static_cast<std::uint8_t>(src[i] ^ ctx.meta);
            }
            return n / 2;
        };
        c.decode = [](const BlockContext& ctx, b2nd::ByteSpan src, b2nd::MutableByteSpan dst) {
            if (src.size() * 2 != dst.size()) {
                throw b2nd::FormatError("test_xor: wrong size");
            }
            for (std::size_t i = 0; i < src.size(); ++i) {
                dst[2 * i] = dst[2 * i + 1] = static_cast<std::uint8_t>(src[i] ^ ctx.meta);
            }
            ++decoded;
        };
        register_codec(std::move(c));
        FilterPlugin f;
        f.id = 202;
        f.name = "test_negate";
        f.forward = [](const BlockContext&, b2nd::ByteSpan src, b2nd::MutableByteSpan dst) {
            for (std::size_t i = 0; i < src.size(); ++i) {
                dst[i] = static_cast<std::uint8_t>(~src[i]);
            }
        };
        f.backward = f.forward;
        register_filter(std::move(f));
    }
    CHECK(codec_name(static_cast<Codec>(201)) == "test_xor");
    CHECK(parse_codec("test_xor") == static_cast<Codec>(201));
    CHECK(parse_filter("test_negate") == static_cast<Filter>(202));
    CHECK(filter_name(202) == "test_negate");
    // Ids below 160, taken ids and names are refused.
    CodecPlugin low;
    low.id = 40;
    low.name = "low";
    low.decode = [](const BlockContext&, b2nd::ByteSpan, b2nd::MutableByteSpan) {};
    CHECK_THROWS_WITH(register_codec(low), Contains("user ids are 160..255"));
    low.id = 201;
    CHECK_THROWS_WITH(register_codec(low), Contains("already registered"));
    low.id = 203;
    low.name = "test_xor";
    CHECK_THROWS_WITH(register_codec(low), Contains("name is already used"));

    b2nd::test::TempDir dir;
    const Shape shape{64, 50};
    std::vector<std::uint8_t> data(64 * 50 * 2);
    for (std::size_t i = 0; i < data.size(); ++i) {
        data[i] = static_cast<std::uint8_t>((i / 2) % 251);
    }
    b2nd::CompressionParams base;
    base.filters = {{static_cast<Filter>(202), 0}};
    const auto a = AnyArray::create_from(
        dir / "u.b2nd", DType::parse("<u2"), shape, {data.data(), data.size()},
        opts({32, 25}, {8, 25}, static_cast<Codec>(201), 0x5a, base));
    decoded.store(0);
    CHECK(AnyArray::open(dir / "u.b2nd").read() == data);
    CHECK(decoded.load() > 0);
    CHECK(AnyArray::open(dir / "u.b2nd").compression().codec == static_cast<Codec>(201));
}
