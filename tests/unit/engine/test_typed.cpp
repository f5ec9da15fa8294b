// Typed access: NDArray<T> over every element type, stored byte orders converted, fills, and
// typed round trips in both byte orders.
#include "support/array_tests.hpp"

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
        CHECK(t.ndim() == 2);  // one name with AnyArray's; dimension() is xtensor's spelling
        CHECK(t.dimension() == 2);
        CHECK(t.any().ndim() == 2);
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
