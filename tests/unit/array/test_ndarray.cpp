// Arrays we write read back exactly: a model (a plain C-order byte array updated element by
// element) follows random writes with steps, fills, resizes, appends, inserts and removes, for
// many dtypes, ndim 0 to 8, ragged chunks and blocks, contiguous and sparse frames; the array
// must equal the model after every operation and after reopening.
#include <algorithm>
#include <atomic>
#include <complex>
#include <cstring>
#include <fstream>
#include <functional>
#include <thread>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/storage/frame.hpp>

#include "../../support/data.hpp"
#include "../../support/files.hpp"
#include "../../support/model.hpp"
#include "../../support/random_box.hpp"
#include "../../support/reference.hpp"
#include "../../support/temp_dir.hpp"

using b2nd::AnyArray;
using b2nd::Box;
using b2nd::DType;
using b2nd::Shape;
using b2nd::test::count_of;
using b2nd::test::Model;
using b2nd::test::random_items;
using b2nd::test::SplitMix;
using Catch::Matchers::Contains;

namespace {

const char* const kDtypes[] = {
    "|b1",   "|i1",  "<u2", ">i4", "<f4",     "<f8",
    ">f8",   "<c16", "|S5", "<U3", "<M8[ms]", "[('a', '<i4'), ('b', '>f8')]",
    "|V300",
};

void check_equal(const AnyArray& a, const Model& m) {
    REQUIRE(a.shape() == m.shape);
    B2ND_REQUIRE_SAME_BYTES(a.read(), m.data);
}

}  // namespace

TEST_CASE("ndarray: random operations agree with an element-by-element model",
          "[array][roundtrip]") {
    // Every dtype, each in 6 configurations (ndim 0 to 8 across the dtypes), seeded by the dtype.
    const std::size_t which = GENERATE(range(std::size_t{0}, std::size(kDtypes)));
    const DType dt = DType::parse(kDtypes[which]);
    b2nd::test::TempDir tmp;
    SplitMix rng(20261122 + which);
    for (int config = 0; config < 6; ++config) {
        const int ndim = static_cast<int>((which * 6 + static_cast<std::size_t>(config)) % 9);
        const bool sparse = rng.below(2) == 0;
        Shape shape, chunks, blocks;
        const std::int64_t max_extent = ndim <= 2 ? 40 : (ndim <= 4 ? 9 : 4);
        for (int d = 0; d < ndim; ++d) {
            const auto n = static_cast<std::int64_t>(
                rng.below(10) == 0 ? 0 : 1 + rng.below(static_cast<std::uint64_t>(max_extent)));
            const auto c = static_cast<std::int64_t>(
                1 + rng.below(static_cast<std::uint64_t>(std::max<std::int64_t>(n, 1) + 2)));
            shape.push_back(n);
            chunks.push_back(c);
            blocks.push_back(
                static_cast<std::int64_t>(1 + rng.below(static_cast<std::uint64_t>(c))));
        }
        b2nd::CreateOptions o;
        o.chunk_shape = chunks;
        o.block_shape = blocks;
        o.sparse = sparse;
        o.nthreads = 1 + static_cast<int>(rng.below(2));
        static const b2nd::Codec codecs[] = {b2nd::Codec::zstd, b2nd::Codec::lz4,
                                             b2nd::Codec::blosclz, b2nd::Codec::zlib,
                                             b2nd::Codec::lz4hc};
        o.compression.codec = codecs[rng.below(5)];
        o.compression.clevel = static_cast<int>(rng.below(6));  // zstd 8-9 (levels 20-22) are slow
        static const b2nd::Filter filters[] = {b2nd::Filter::shuffle, b2nd::Filter::bitshuffle,
                                               b2nd::Filter::delta, b2nd::Filter::none};
        o.compression.filters = {{filters[rng.below(4)], 0}};
        if (rng.below(4) == 0) {
            o.compression.filters.push_back({b2nd::Filter::delta, 0});
        }
        const std::string path =
            tmp / ("a" + std::to_string(config) + (sparse ? ".b2frame" : ".b2nd"));
        INFO("config " << config << ": " << dt.str() << " shape " << b2nd::to_string(shape)
                       << " chunks " << b2nd::to_string(chunks) << " blocks "
                       << b2nd::to_string(blocks) << (sparse ? " sparse" : " contiguous"));
        AnyArray a = AnyArray::create(path, dt, shape, o);
        Model m(shape, dt.itemsize());
        check_equal(a, m);
        for (int op = 0; op < 14; ++op) {
            const std::uint64_t kind = rng.below(ndim == 0 ? 2 : 7);
            if (kind == 0) {  // write random data into a strided box
                const Box b = b2nd::test::random_box(a.shape(), rng);
                const auto data = random_items(rng, dt, b.size());
                a.write(b, {data.data(), data.size()});
                m.write(b, data);
            } else if (kind == 1) {  // fill a box with one value (uniform chunks become special)
                const Box b = Box::region(Shape(a.shape().size(), 0), a.shape());
                const auto one = random_items(rng, dt, 1);
                const bool zero = rng.below(2) == 0;
                std::vector<std::uint8_t> data;
                for (std::int64_t i = 0; i < b.size(); ++i) {
                    for (std::uint8_t byte : one) {
                        data.push_back(zero ? 0 : byte);
                    }
                }
                a.write(b, {data.data(), data.size()});
                m.write(b, data);
            } else if (kind == 2) {  // resize every dimension
                Shape ns;
                for (std::int64_t v : a.shape()) {
                    ns.push_back(
                        std::max<std::int64_t>(0, v + static_cast<std::int64_t>(rng.below(7)) - 3));
                }
                INFO("resize to " << b2nd::to_string(ns));
                a.resize(ns);
                m.resize(ns);
            } else if (kind == 3 || kind == 4) {  // insert (or append) slices
                const auto axis = static_cast<int>(rng.below(static_cast<std::uint64_t>(ndim)));
                const auto ax = static_cast<std::size_t>(axis);
                const auto len = a.shape()[ax];
                // Sometimes chunk-aligned, to take the fast path that moves whole chunks.
                const std::int64_t c = a.chunk_shape()[ax];
                const bool aligned = rng.below(2) == 0;
                const std::int64_t pos =
                    kind == 4 ? len
                    : aligned
                        ? c * static_cast<std::int64_t>(
                                  rng.below(static_cast<std::uint64_t>(len / c + 1)))
                        : static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(len + 1)));
                const std::int64_t n = aligned ? c * static_cast<std::int64_t>(1 + rng.below(2))
                                               : static_cast<std::int64_t>(1 + rng.below(5));
                Shape es = a.shape();
                es[ax] = n;
                if (count_of(es) == 0) {
                    continue;
                }
                const auto data = random_items(rng, dt, count_of(es));
                INFO("insert " << n << " at " << pos << " along " << axis);
                if (kind == 4) {
                    a.append(axis, {data.data(), data.size()});
                } else {
                    a.insert(axis, pos, {data.data(), data.size()});
                }
                m.insert(ax, pos, data, n);
            } else if (kind == 5) {  // remove slices
                const auto axis = static_cast<int>(rng.below(static_cast<std::uint64_t>(ndim)));
                const auto ax = static_cast<std::size_t>(axis);
                const auto len = a.shape()[ax];
                if (len == 0) {
                    continue;
                }
                const std::int64_t c = a.chunk_shape()[ax];
                std::int64_t pos, n;
                if (rng.below(2) == 0 && len >= c) {
                    pos = c *
                          static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(len / c)));
                    n = std::min(c, len - pos);
                } else {
                    pos = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(len)));
                    n = 1 + static_cast<std::int64_t>(rng.below(
                                static_cast<std::uint64_t>(std::min<std::int64_t>(len - pos, 4))));
                }
                INFO("remove " << n << " at " << pos << " along " << axis);
                a.remove(axis, pos, n);
                m.remove(ax, pos, n);
            } else {  // read a random strided box
                const Box b = b2nd::test::random_box(a.shape(), rng);
                INFO("read " << b.str());
                B2ND_REQUIRE_SAME_BYTES(
                    a.read(b),
                    b2nd::test::reference_slice(m.data, m.shape, m.isz, b.start, b.count, b.step));
                continue;
            }
            check_equal(a, m);
        }
        a = AnyArray();
        const AnyArray back = AnyArray::open(path);
        CHECK(back.dtype() == dt);
        CHECK(back.sparse() == sparse);
        check_equal(back, m);
    }
}

TEST_CASE("ndarray: typed access, byte order, fills", "[array]") {
    b2nd::test::TempDir tmp;
    {
        auto t = b2nd::create<double>(tmp / "d.b2nd", {30, 20}, [] {
            b2nd::CreateOptions o;
            o.chunk_shape = {7, 8};
            o.block_shape = {3, 5};
            return o;
        }());
        CHECK(t(29, 19) == 0.0);
        std::vector<double> v(600);
        for (std::size_t i = 0; i < v.size(); ++i) {
            v[i] = static_cast<double>(i) * 0.5;
        }
        t.write(Box::whole(t.shape()), v);
        CHECK(t(3, 4) == 64 * 0.5);
        t.set({3, 4}, -1.0);
        CHECK(t.at({3, 4}) == -1.0);
        const std::vector<double> col = t.read({b2nd::Slice::all(), 7});
        REQUIRE(col.size() == 30);
        CHECK(col[5] == (5 * 20 + 7) * 0.5);
        CHECK_THROWS_WITH(t(30, 0), Contains("out of range"));
        const std::vector<double> pts =
            t.read_points({{29, 19}, {0, 0}, {3, 4}, {29, 19}, {15, 2}});
        CHECK(pts == std::vector<double>{599 * 0.5, 0.0, -1.0, 599 * 0.5, (15 * 20 + 2) * 0.5});
        CHECK_THROWS_WITH(t.read_points({{0, 0}, {0, 20}}),
                          Contains("point 1 (0, 20): index 20 on axis 1 is out of range"));
        CHECK_THROWS_AS(t.read_points({{0}}), b2nd::UsageError);
        CHECK_THROWS_WITH(t(1), Contains("1 indices for an array of 2 dimensions"));
        CHECK_THROWS_AS(t.read(Box::region({25, 0}, {10, 1})), b2nd::UsageError);
        CHECK_THROWS_AS(t.read(Box::region({0, 0}, {-1, 1})), b2nd::UsageError);
    }
    // NDArray<double> over float data: a clear error naming both dtypes.
    b2nd::create<float>(tmp / "f.b2nd", {4});
    CHECK_THROWS_WITH(b2nd::open<double>(tmp / "f.b2nd"),
                      Contains("'<f8'") && Contains("'<f4'") && Contains("f.b2nd"));
    CHECK_THROWS_AS(b2nd::open<std::int32_t>(tmp / "f.b2nd"), b2nd::UsageError);

    // Big-endian storage: values come out native, bytes on disk stay big-endian.
    {
        b2nd::CreateOptions o;
        AnyArray be = AnyArray::create(tmp / "be.b2nd", DType::parse(">i4"), {5}, o);
        const std::uint8_t raw[] = {0, 0, 0, 1, 0, 0, 1,    0,    0,    1,
                                    0, 0, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xfe};
        be.write(Box::whole({5}), {raw, sizeof raw});
        const auto t = be.as<std::int32_t>();
        CHECK(t.read() == std::vector<std::int32_t>{1, 256, 65536, 16777216, -2});
        auto tw = be.as<std::int32_t>();
        tw.set({0}, 7);
        CHECK(be.read(Box::region({0}, {1})) == std::vector<std::uint8_t>{0, 0, 0, 7});
    }
    // Fills.
    {
        b2nd::CreateOptions o;
        o.fill = b2nd::Fill::nan;
        auto n = b2nd::create<float>(tmp / "nan.b2nd", {10, 10}, o);
        CHECK(std::isnan(n(9, 9)));
        const auto full = b2nd::NDArray<std::int16_t>::full(tmp / "full.b2frame", {50}, -3, [] {
            b2nd::CreateOptions s;
            s.sparse = true;
            s.chunk_shape = {16};
            return s;
        }());
        CHECK(full.read() == std::vector<std::int16_t>(50, -3));
        o.fill = b2nd::Fill::nan;
        CHECK_THROWS_WITH(b2nd::create<std::int32_t>(tmp / "bad.b2nd", {3}, o), Contains("float"));
        o.fill = b2nd::Fill::uninit;
        CHECK(b2nd::create<std::uint8_t>(tmp / "u.b2nd", {7}, o).read() ==
              std::vector<std::uint8_t>(7, 0));
    }
    // bool: any non-zero stored byte reads as true.
    {
        AnyArray b = AnyArray::create(tmp / "b.b2nd", DType::parse("|b1"), {3});
        const std::uint8_t raw[] = {0, 2, 255};
        b.write(Box::whole({3}), {raw, 3});
        CHECK(b.as<bool>().read() == std::vector<bool>{false, true, true});
    }
}

TEST_CASE("ndarray: creating, opening and writing fail clearly", "[array]") {
    b2nd::test::TempDir tmp;
    b2nd::create<float>(tmp / "x.b2nd", {10});
    CHECK_THROWS_WITH(b2nd::create<float>(tmp / "x.b2nd", {10}), Contains("already exists"));
    b2nd::CreateOptions o;
    o.overwrite = true;
    CHECK(b2nd::create<float>(tmp / "x.b2nd", {12}, o).shape() == Shape{12});
    o.chunk_shape = {4};
    o.block_shape = {8};
    CHECK_THROWS_WITH(b2nd::create<float>(tmp / "y.b2nd", {10}, o),
                      Contains("exceeds chunk shape"));
    CHECK_FALSE(std::filesystem::exists(tmp / "y.b2nd"));

    auto ro = b2nd::open<float>(tmp / "x.b2nd");
    CHECK_THROWS_WITH(ro.set({0}, 1.0f), Contains("writable"));
    b2nd::OpenOptions w;
    w.writable = true;
    auto rw = b2nd::open<float>(tmp / "x.b2nd", w);
    CHECK_THROWS_WITH(rw.write(Box::region({0}, {3}), std::vector<float>(2)),
                      Contains("needs 12 bytes"));
    CHECK_THROWS_AS(rw.resize({3, 4}), b2nd::UsageError);
    CHECK_THROWS_AS(rw.remove(0, 5, 8), b2nd::UsageError);
    CHECK_THROWS_AS(rw.insert(1, 0, {1.0f}), b2nd::UsageError);
    CHECK_THROWS_AS(rw.any().append(0, {nullptr, 3}), b2nd::UsageError);
    b2nd::OpenOptions wrong;
    wrong.dtype = DType::parse("<f8");
    CHECK_THROWS_WITH(AnyArray::open(tmp / "x.b2nd", wrong), Contains("8-byte items"));
    CHECK_THROWS_AS(AnyArray::open(tmp / "missing.b2nd"), b2nd::IoError);
}

TEST_CASE("ndarray: metalayers and vlmeta", "[array]") {
    b2nd::test::TempDir tmp;
    b2nd::CreateOptions o;
    o.metalayers = {{"units", {0xa1, 'K'}}};
    AnyArray a = AnyArray::create(tmp / "m.b2nd", DType::parse("<f4"), {8}, o);
    CHECK(a.metalayer_names() == std::vector<std::string>{"b2nd", "units"});
    const std::uint8_t c[] = {0xa1, 'C'};
    a.update_metalayer("units", {c, 2});
    CHECK_THROWS_AS(a.update_metalayer("b2nd", {c, 2}), b2nd::UsageError);
    const std::uint8_t note[] = {0xa3, 'h', 'i', '!'};
    a.set_vlmeta("note", {note, 4});
    a.resize({20});  // metadata survives structural changes
    a = AnyArray();
    const AnyArray back = AnyArray::open(tmp / "m.b2nd");
    CHECK(back.shape() == Shape{20});
    CHECK(*back.metalayer("units") == std::vector<std::uint8_t>{0xa1, 'C'});
    CHECK(*back.vlmeta("note") == std::vector<std::uint8_t>(note, note + 4));
}

TEST_CASE("ndarray: chunk-wise production and visits", "[array]") {
    b2nd::test::TempDir tmp;
    b2nd::CreateOptions o;
    o.chunk_shape = {7, 5};
    o.block_shape = {3, 2};
    auto v = b2nd::test::generate<std::int32_t>(20 * 12, [](std::size_t i) { return i; });
    auto t = b2nd::NDArray<std::int32_t>::create_from(tmp / "c.b2nd", {20, 12}, v, o);
    AnyArray& a = t.any();
    // In place: each chunk reads its own old window from the same array and doubles it.
    std::int64_t calls = 0, last_done = 0;
    a.write_chunks(
        a.all_chunks(),
        [&](std::int64_t, const Box& region, std::uint8_t* out) {
            a.read(region, out, static_cast<std::size_t>(region.size()) * 4);
            auto* p = reinterpret_cast<std::int32_t*>(out);
            for (std::int64_t i = 0; i < region.size(); ++i) {
                p[i] *= 2;
            }
        },
        2,
        [&](std::int64_t done, std::int64_t total) {
            ++calls;
            last_done = done;
            CHECK(total == 9);  // 3 x 3 chunks
        });
    CHECK(calls == 9);
    CHECK(last_done == 9);
    std::vector<std::int32_t> doubled = v;
    for (auto& x : doubled) {
        x *= 2;
    }
    CHECK(t.read() == doubled);

    // One chunk made uniform: visits report it without data.
    a.write_chunks({0}, [](std::int64_t, const Box& region, std::uint8_t* out) {
        for (std::int64_t i = 0; i < region.size(); ++i) {
            const std::int32_t seven = 7;
            std::memcpy(out + 4 * i, &seven, 4);
        }
    });
    std::atomic<std::int64_t> sum{0}, uniform_chunks{0};
    a.for_each_chunk(a.all_chunks(), [&](std::int64_t ci, const Box& region,
                                         const std::uint8_t* data, const std::uint8_t* uniform) {
        std::int64_t s = 0;
        if (data == nullptr) {
            ++uniform_chunks;
            CHECK(ci == 0);
            std::int32_t u;
            std::memcpy(&u, uniform, 4);
            s = u * region.size();
        } else {
            for (std::int64_t i = 0; i < region.size(); ++i) {
                std::int32_t x;
                std::memcpy(&x, data + 4 * i, 4);
                s += x;
            }
        }
        sum += s;
    });
    std::int64_t want = 0;
    const auto now = t.read();
    for (std::int32_t x : now) {
        want += x;
    }
    CHECK(uniform_chunks == 1);
    CHECK(sum == want);
    CHECK(now[0] == 7);
    CHECK_THROWS_AS(a.write_chunks({9}, [](std::int64_t, const Box&, std::uint8_t*) {}),
                    b2nd::UsageError);
}

TEST_CASE("memory accounting follows the library's buffers", "[array]") {
    const b2nd::MemoryStats before = b2nd::memory_stats();
    {
        b2nd::tracked_vector<std::uint8_t> v(1 << 20);
        CHECK(b2nd::memory_stats().current >= before.current + (1 << 20));
        CHECK(b2nd::memory_stats().peak >= before.current + (1 << 20));
    }
    CHECK(b2nd::memory_stats().current == before.current);
    b2nd::reset_memory_peak();
    CHECK(b2nd::memory_stats().peak == b2nd::memory_stats().current);
}

namespace {

/// A value of T from random bits: 0/1 for bool, exact small values for floating types.
template <class T>
T value_of(std::uint64_t bits) {
    if constexpr (std::is_same_v<T, bool>) {
        return (bits & 1) != 0;
    } else if constexpr (std::is_floating_point_v<T>) {
        return static_cast<T>(static_cast<std::int64_t>(bits % 20001) - 10000) / T(8);
    } else if constexpr (std::is_integral_v<T>) {
        T v;
        std::memcpy(&v, &bits, sizeof(T));
        return v;
    } else {  // std::complex
        using R = typename T::value_type;
        return T(value_of<R>(bits), value_of<R>(bits >> 20));
    }
}

}  // namespace

TEMPLATE_TEST_CASE("ndarray: typed round trips, both byte orders",
                   "[array]",
                   bool,
                   std::int8_t,
                   std::uint8_t,
                   std::int16_t,
                   std::uint16_t,
                   std::int32_t,
                   std::uint32_t,
                   std::int64_t,
                   std::uint64_t,
                   float,
                   double,
                   std::complex<float>,
                   std::complex<double>) {
    using T = TestType;
    const char order = GENERATE('<', '>');
    const DType native = b2nd::dtype_of<T>();
    if (order == '>' && native.byteorder() == '|') {
        return;  // one-byte types have no byte order
    }
    b2nd::test::TempDir tmp;
    SplitMix rng(sizeof(T) * 131 + static_cast<std::uint64_t>(order));
    const Shape shape{13, 17};
    const DType stored =
        DType::make(native.kind(), native.itemsize(), native.byteorder() == '|' ? '|' : order);
    AnyArray any =
        AnyArray::create(tmp / "t.b2nd", stored, shape, b2nd::test::chunked({5, 7}, {2, 3}));
    auto t = any.as<T>();
    std::vector<T> model(static_cast<std::size_t>(count_of(shape)));
    for (int op = 0; op < 12; ++op) {
        const Box b = b2nd::test::random_box(shape, rng);
        std::vector<T> data(static_cast<std::size_t>(b.size()));
        for (std::size_t i = 0; i < data.size(); ++i) {
            data[i] = value_of<T>(rng.next());
        }
        t.write(b, data);
        std::size_t e = 0;
        for (std::int64_t i = 0; i < b.count[0]; ++i) {
            for (std::int64_t j = 0; j < b.count[1]; ++j) {
                const std::int64_t r = b.start[0] + i * b.step[0];
                const std::int64_t c = b.start[1] + j * b.step[1];
                model[static_cast<std::size_t>(r * 17 + c)] = data[e++];
            }
        }
        CHECK(t.read() == model);
        const std::int64_t r = static_cast<std::int64_t>(rng.below(13));
        const std::int64_t c = static_cast<std::int64_t>(rng.below(17));
        CHECK(t(r, c) == model[static_cast<std::size_t>(r * 17 + c)]);
        CHECK(t.read_points({{r, c}, {12, 16}}) ==
              std::vector<T>{model[static_cast<std::size_t>(r * 17 + c)], model.back()});
    }
    // Reopened from disk: the same values, the stored byte order.
    const auto back = b2nd::open<T>(tmp / "t.b2nd");
    CHECK(back.dtype() == stored);
    CHECK(back.read() == model);
    // A full array of one value is a special chunk per position and reads back as the value.
    const T one = value_of<T>(0x5a5a5a5a12345ULL);
    b2nd::CreateOptions fo;
    const auto full = b2nd::NDArray<T>::full(tmp / "f.b2nd", {9, 4}, one, fo);
    CHECK(full.read() == std::vector<T>(36, one));
}

TEST_CASE("ndarray: large reads (streamed to the destination) equal the data", "[array]") {
    // Reads of at least kStreamingBytes go through row groups and non-temporal stores.
    b2nd::test::TempDir tmp;
    const Shape big{192, 250, 360};  // 17.3 M int32: 69 MB
    const auto v =
        b2nd::test::generate<std::int32_t>(static_cast<std::size_t>(count_of(big)),
                                           [](std::size_t i) { return (i * 2654435761U) >> 7; });
    b2nd::CreateOptions o = b2nd::test::chunked({64, 100, 120}, {16, 50, 24});
    o.compression.codec = b2nd::Codec::lz4;
    auto a = b2nd::NDArray<std::int32_t>::create_from(tmp / "big.b2nd", big, v, o);
    // A uniform region: whole chunks of zeros and of a repeated value.
    a.write(Box::region({0, 0, 0}, {64, 100, 120}), std::vector<std::int32_t>(64 * 100 * 120, 0));
    a.write(Box::region({64, 100, 120}, {64, 100, 120}),
            std::vector<std::int32_t>(64 * 100 * 120, -5));
    std::vector<std::int32_t> model = v;
    for (std::int64_t i = 0; i < 64; ++i) {
        for (std::int64_t j = 0; j < 100; ++j) {
            for (std::int64_t k = 0; k < 120; ++k) {
                model[static_cast<std::size_t>((i * 250 + j) * 360 + k)] = 0;
                model[static_cast<std::size_t>(((64 + i) * 250 + 100 + j) * 360 + 120 + k)] = -5;
            }
        }
    }
    const std::vector<std::uint8_t> bytes(
        reinterpret_cast<const std::uint8_t*>(model.data()),
        reinterpret_cast<const std::uint8_t*>(model.data() + model.size()));
    for (const int threads : {1, 2}) {
        a.any().set_nthreads(threads);
        B2ND_REQUIRE_SAME_BYTES(a.read(), model);
        // Boxes of more than 32 MiB with an offset, a step in an outer dimension, a flipped
        // outer dimension, a partial last dimension.
        for (const Box& b :
             {Box::region({1, 3, 7}, {190, 247, 350}), Box{{0, 0, 0}, {96, 250, 360}, {2, 1, 1}},
              Box{{191, 0, 5}, {192, 250, 355}, {-1, 1, 1}}}) {
            INFO(b.str() << ", " << threads << " threads");
            REQUIRE(static_cast<std::uint64_t>(b.size()) * 4 >= (std::uint64_t{32} << 20));
            B2ND_REQUIRE_SAME_BYTES(a.any().read(b), b2nd::test::reference_slice(
                                                         bytes, big, 4, b.start, b.count, b.step));
        }
    }
    // Large reads load each chunk when its blocks' turn comes (after reading it ahead): a chunk
    // whose block starts are garbage is still a FormatError naming the file, from any thread.
    const std::uint64_t at = b2nd::storage::Frame::open(tmp / "big.b2nd").chunk(7).offset;
    {
        std::fstream f(tmp / "big.b2nd", std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(at + 32));
        const std::string garbage(16, '\xff');
        f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
    }
    b2nd::OpenOptions oo;
    oo.cache_bytes = 0;
    auto broken = b2nd::open<std::int32_t>(tmp / "big.b2nd", oo);
    for (const int threads : {1, 2}) {
        broken.any().set_nthreads(threads);
        CHECK_THROWS_WITH(broken.read(), Contains("big.b2nd") && Contains("chunk 7"));
    }
}

TEST_CASE("ndarray: reads without the block cache decode block prefixes, right to the byte",
          "[array]") {
    // LZ4 and BloscLZ with a byte shuffle over split streams (c-blosc2's default for them) and
    // with no filter: reads that bypass the cache decode each block only up to the last element
    // they use. Boxes anywhere, with steps, agree with the data.
    const b2nd::Codec codec = GENERATE(b2nd::Codec::lz4, b2nd::Codec::blosclz);
    const bool shuffled = GENERATE(true, false);
    const char* dtype = GENERATE("<f4", "<f8", "<i2");
    CAPTURE(static_cast<int>(codec), shuffled, dtype);
    b2nd::test::TempDir tmp;
    SplitMix rng(77);
    const DType dt = DType::parse(dtype);
    const Shape shape{37, 29, 23};
    const auto data = random_items(rng, dt, count_of(shape));
    b2nd::CreateOptions o = b2nd::test::chunked({16, 16, 16}, {8, 8, 8});
    o.compression.codec = codec;
    o.compression.filters = {{shuffled ? b2nd::Filter::shuffle : b2nd::Filter::none, 0}};
    o.compression.splitmode = shuffled ? b2nd::SplitMode::always : b2nd::SplitMode::never;
    AnyArray::create(tmp / "p.b2nd", dt, shape, o).write(Box::whole(shape), data);
    b2nd::OpenOptions oo;
    oo.cache_bytes = 0;
    const AnyArray a = AnyArray::open(tmp / "p.b2nd", oo);
    for (int k = 0; k < 150; ++k) {
        const Box b = b2nd::test::random_box(shape, rng, 12);
        INFO("box " << b.str());
        const auto want =
            b2nd::test::reference_slice(data, shape, dt.itemsize(), b.start, b.count, b.step);
        B2ND_REQUIRE_SAME_BYTES(a.read(b), want);
    }
    // Planes at a block's start touch the first eighth of each block.
    for (std::int64_t i : {0, 8, 16, 24, 32, 36}) {
        const Box plane = Box::region({i, 0, 0}, {1, 29, 23});
        B2ND_REQUIRE_SAME_BYTES(a.read(plane),
                                b2nd::test::reference_slice(data, shape, dt.itemsize(), plane.start,
                                                            plane.count, plane.step));
    }
}

TEST_CASE("ndarray: writes that cover chunks store uniform ones as special chunks", "[array]") {
    // Covered chunks are gathered block by block as they are encoded; a chunk is special only
    // when every block (padding included) repeats its first element.
    b2nd::test::TempDir tmp;
    const Shape shape{10, 7};
    const b2nd::CreateOptions o = b2nd::test::chunked({4, 4}, {2, 2});  // 3 x 2 chunks
    auto a = b2nd::NDArray<std::int32_t>::full(tmp / "u.b2nd", shape, 9, o);
    std::vector<std::int32_t> model(70, 9);
    const auto put = [&](std::int64_t r0, std::int64_t c0, std::int64_t nr, std::int64_t nc,
                         const std::function<std::int32_t(std::int64_t, std::int64_t)>& f) {
        std::vector<std::int32_t> v;
        for (std::int64_t r = r0; r < r0 + nr; ++r) {
            for (std::int64_t c = c0; c < c0 + nc; ++c) {
                v.push_back(f(r, c));
                model[static_cast<std::size_t>(r * 7 + c)] = v.back();
            }
        }
        a.write(Box::region({r0, c0}, {nr, nc}), v);
    };
    put(8, 4, 2, 3, [](std::int64_t, std::int64_t) { return 3; });  // edge chunk 5, uniform
    put(0, 0, 4, 4, [](std::int64_t r, std::int64_t c) { return r == 3 && c == 3 ? 8 : 7; });
    put(4, 0, 4, 4, [](std::int64_t, std::int64_t) { return 0; });                // chunk 2: zeros
    put(0, 4, 4, 3, [](std::int64_t r, std::int64_t) { return r < 2 ? 1 : 2; });  // chunk 1
    const auto kind = [&](std::int64_t ci) {
        const auto c = b2nd::storage::Frame::open(tmp / "u.b2nd").chunk(ci);
        return c.index_only() ? c.special : b2nd::codec::ChunkDecoder(c.bytes).special();
    };
    CHECK(kind(5) == b2nd::codec::Special::value);
    CHECK(kind(0) == b2nd::codec::Special::none);  // all 7 but its last element
    CHECK(kind(2) == b2nd::codec::Special::zeros);
    CHECK(kind(1) == b2nd::codec::Special::none);
    CHECK(a.read() == model);
    CHECK(b2nd::open<std::int32_t>(tmp / "u.b2nd").read() == model);
}

TEST_CASE("ndarray: element by element reads follow writes, resizes and the cache", "[array]") {
    // Elements read one after another come from the block the thread read last while the cache
    // still holds it: blocks that pad their chunk (blocks of 3 in chunks of 4), writes, resizes
    // and cache budgets must all be seen.
    b2nd::test::TempDir tmp;
    SplitMix rng(11);
    Shape shape{10, 7};
    std::vector<std::int32_t> model(70);
    for (auto& v : model) {
        v = static_cast<std::int32_t>(rng.below(1000));
    }
    auto a = b2nd::NDArray<std::int32_t>::create_from(tmp / "e.b2nd", shape, model,
                                                      b2nd::test::chunked({4, 4}, {3, 3}));
    const auto check_all = [&](const char* when) {
        INFO(when);
        for (std::int64_t i = 0; i < shape[0]; ++i) {
            for (std::int64_t j = 0; j < shape[1]; ++j) {
                REQUIRE(a(i, j) == model[static_cast<std::size_t>(i * shape[1] + j)]);
            }
        }
        for (int k = 0; k < 300; ++k) {  // and in random order
            const auto i =
                static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(shape[0])));
            const auto j =
                static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(shape[1])));
            REQUIRE(a(i, j) == model[static_cast<std::size_t>(i * shape[1] + j)]);
        }
    };
    check_all("fresh");
    // A write to the block read last: the next element read from it is the new value.
    CHECK(a(5, 5) == model[5 * 7 + 5]);
    a.write(Box::region({5, 5}, {1, 1}), std::vector<std::int32_t>{-77});
    model[5 * 7 + 5] = -77;
    CHECK(a(5, 5) == -77);
    CHECK(a(5, 4) == model[5 * 7 + 4]);
    check_all("after a write");
    // Another handle of the same file writes; this one follows.
    {
        b2nd::OpenOptions oo;
        oo.follow = true;
        auto f = b2nd::NDArray<std::int32_t>::open(tmp / "e.b2nd", oo);
        CHECK(f(2, 2) == model[2 * 7 + 2]);
        a.write(Box::region({2, 2}, {1, 1}), std::vector<std::int32_t>{-5});
        model[2 * 7 + 2] = -5;
        CHECK(f(2, 2) == -5);
        CHECK(f(2, 1) == model[2 * 7 + 1]);
    }
    // Growing the array: the old last rows' blocks get new elements.
    CHECK(a(9, 6) == model.back());
    a.append(0, std::vector<std::int32_t>(14, 4242));
    shape = {12, 7};
    model.resize(84, 4242);
    check_all("after an append");
    CHECK_THROWS_AS(a(12, 0), b2nd::UsageError);
    a.any().set_cache_bytes(0);
    check_all("without a cache");
    a.any().set_cache_bytes(std::size_t{1} << 20);
    check_all("with a cache again");
}

TEST_CASE("ndarray: element reads on several threads beside a writer see old or new values",
          "[array]") {
    // Each write sets every element (i, j) to v * 1000 + (i * 40 + j) % 7 for the next v. A
    // reader's elements are whole values of some v, never older than what the same thread saw
    // of that element before, and all of the last v once the writer is done.
    b2nd::test::TempDir tmp;
    const Shape shape{40, 40};
    const auto level = [](std::int32_t v) {
        std::vector<std::int32_t> out(1600);
        for (std::size_t k = 0; k < out.size(); ++k) {
            out[k] = v * 1000 + static_cast<std::int32_t>(k % 7);
        }
        return out;
    };
    auto a = b2nd::NDArray<std::int32_t>::create_from(tmp / "t.b2nd", shape, level(1),
                                                      b2nd::test::chunked({16, 16}, {8, 8}));
    std::atomic<bool> stop{false};
    std::atomic<std::int64_t> bad{0}, reads{0}, stale_at_end{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < 2; ++t) {
        readers.emplace_back([&] {
            std::vector<std::int32_t> seen(1600, 1);
            const auto pass = [&] {
                for (std::int64_t i = 0; i < 40; ++i) {
                    for (std::int64_t j = 0; j < 40; ++j) {
                        const auto k = static_cast<std::size_t>(i * 40 + j);
                        const std::int32_t x = a(i, j);
                        const std::int32_t v = x / 1000;
                        if (x % 1000 != static_cast<std::int32_t>(k % 7) || v < seen[k] || v > 20) {
                            ++bad;
                        }
                        seen[k] = v;
                        ++reads;
                    }
                }
            };
            while (!stop.load()) {
                pass();
            }
            pass();
            stale_at_end +=
                std::count_if(seen.begin(), seen.end(), [](std::int32_t v) { return v != 20; });
        });
    }
    for (std::int32_t v = 2; v <= 20; ++v) {
        a.write(Box::whole(shape), level(v));
    }
    stop = true;
    for (auto& r : readers) {
        r.join();
    }
    CHECK(bad == 0);
    CHECK(stale_at_end == 0);
    CHECK(reads >= 2 * 1600);
}
