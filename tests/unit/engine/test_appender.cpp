// Appenders (b2nd/appender.hpp): frames pushed one at a time, or any number at a time, along
// axis 0 and along another axis, read back equal to what was pushed (a model the test keeps);
// flush() commits a partial row that another handle reads; an array that already ends in a
// partial row is continued; refusals name the array.
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/appender.hpp>
#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>

#include "support/temp_dir.hpp"

using b2nd::AnyArray;
using b2nd::Shape;
using Catch::Matchers::Contains;

namespace {

/// Frame k of (rows x cols) uint16: element (i, j) = k * 97 + i * cols + j (mod 2^16).
std::vector<std::uint16_t> frame(std::int64_t k, std::int64_t rows, std::int64_t cols) {
    std::vector<std::uint16_t> f(static_cast<std::size_t>(rows * cols));
    for (std::size_t e = 0; e < f.size(); ++e) {
        f[e] = static_cast<std::uint16_t>(k * 97 + static_cast<std::int64_t>(e));
    }
    return f;
}

b2nd::CreateOptions options(const Shape& chunks, const Shape& blocks, bool sparse = false) {
    b2nd::CreateOptions o;
    o.chunk_shape = chunks;
    o.block_shape = blocks;
    o.sparse = sparse;
    o.nthreads = 2;
    return o;
}

}  // namespace

TEST_CASE("appender: frames pushed one by one along axis 0 read back equal", "[engine][append]") {
    for (const bool sparse : {false, true}) {
        INFO((sparse ? "sparse" : "contiguous"));
        b2nd::test::TempDir tmp;
        const std::string path = tmp / (sparse ? "run.b2frame" : "run.b2nd");
        auto a = b2nd::NDArray<std::uint16_t>::create(path, {0, 6, 5},
                                                      options({4, 6, 5}, {2, 3, 5}, sparse));
        std::vector<std::uint16_t> model;
        b2nd::Appender<std::uint16_t> app(a, 0);
        for (std::int64_t k = 0; k < 6; ++k) {
            const auto f = frame(k, 6, 5);
            app.push(f.data(), 1);
            model.insert(model.end(), f.begin(), f.end());
        }
        app.flush();  // one full row and a partial one
        {
            const auto seen = b2nd::NDArray<std::uint16_t>::open(path);
            CHECK(seen.shape() == Shape{6, 6, 5});
            CHECK(seen.read() == model);
        }
        // Several frames at once, across rows.
        std::vector<std::uint16_t> many;
        for (std::int64_t k = 6; k < 17; ++k) {
            const auto f = frame(k, 6, 5);
            many.insert(many.end(), f.begin(), f.end());
        }
        app.push(many);
        model.insert(model.end(), many.begin(), many.end());
        CHECK(app.length() == 17);
        app.close();
        const auto back = b2nd::NDArray<std::uint16_t>::open(path);
        CHECK(back.shape() == Shape{17, 6, 5});
        CHECK(back.read() == model);
    }
}

TEST_CASE("appender: another axis grows, slabs of any extent", "[engine][append]") {
    b2nd::test::TempDir tmp;
    // (3, t, 4): slabs of (3, n, 4); chunks of 3 along the axis.
    auto a = b2nd::NDArray<std::int32_t>::create(tmp / "t.b2nd", {3, 0, 4}, b2nd::CreateOptions{});
    b2nd::AppendOptions ao;
    ao.queue = 1;
    std::vector<std::vector<std::int32_t>> columns;  // the model: per time step, a (3, 4) slab
    auto app = std::make_unique<b2nd::Appender<std::int32_t>>(a, 1, ao);
    std::int64_t t = 0;
    for (const std::int64_t n : {1, 2, 4, 1, 5, 3}) {
        // The pushed data: (3, n, 4) in C order; element (i, s, j) = 1000 * (t + s) + 10 * i + j.
        std::vector<std::int32_t> data;
        for (std::int64_t i = 0; i < 3; ++i) {
            for (std::int64_t s = 0; s < n; ++s) {
                for (std::int64_t j = 0; j < 4; ++j) {
                    data.push_back(static_cast<std::int32_t>(1000 * (t + s) + 10 * i + j));
                }
            }
        }
        app->push(data.data(), n);
        t += n;
    }
    app->close();
    const auto back = b2nd::NDArray<std::int32_t>::open(tmp / "t.b2nd");
    REQUIRE(back.shape() == Shape{3, 16, 4});
    const auto all = back.read();
    for (std::int64_t i = 0; i < 3; ++i) {
        for (std::int64_t s = 0; s < 16; ++s) {
            for (std::int64_t j = 0; j < 4; ++j) {
                INFO(i << " " << s << " " << j);
                CHECK(all[static_cast<std::size_t>((i * 16 + s) * 4 + j)] == 1000 * s + 10 * i + j);
            }
        }
    }
}

TEST_CASE("appender: an array ending in a partial row is continued", "[engine][append]") {
    b2nd::test::TempDir tmp;
    std::vector<std::uint16_t> model;
    for (std::int64_t k = 0; k < 5; ++k) {
        const auto f = frame(k, 4, 4);
        model.insert(model.end(), f.begin(), f.end());
    }
    (void)b2nd::NDArray<std::uint16_t>::create_from(tmp / "p.b2nd", {5, 4, 4}, model,
                                                    options({4, 4, 4}, {2, 4, 4}));
    b2nd::OpenOptions w;
    w.writable = true;
    {
        b2nd::Appender<std::uint16_t> app(b2nd::NDArray<std::uint16_t>::open(tmp / "p.b2nd", w), 0);
        for (std::int64_t k = 5; k < 12; ++k) {
            const auto f = frame(k, 4, 4);
            app.push(f.data(), 1);
            model.insert(model.end(), f.begin(), f.end());
        }
    }  // the destructor closes
    const auto back = b2nd::NDArray<std::uint16_t>::open(tmp / "p.b2nd");
    CHECK(back.shape() == Shape{12, 4, 4});
    CHECK(back.read() == model);
}

TEST_CASE("appender: moved, and replaced by another, each closes once", "[engine][append]") {
    b2nd::test::TempDir tmp;
    auto a = b2nd::NDArray<std::int32_t>::create(tmp / "m.b2nd", {0, 2}, b2nd::CreateOptions{});
    b2nd::AnyAppender first(a.any(), 0);
    const std::vector<std::int32_t> row{1, 2};
    first.push({reinterpret_cast<const std::uint8_t*>(row.data()), 8});
    b2nd::AnyAppender moved(std::move(first));
    moved.push({reinterpret_cast<const std::uint8_t*>(row.data()), 8});
    auto b = b2nd::NDArray<std::int32_t>::create(tmp / "n.b2nd", {0, 2}, b2nd::CreateOptions{});
    moved = b2nd::AnyAppender(b.any(), 0);  // the one replaced commits its two rows first
    CHECK(b2nd::NDArray<std::int32_t>::open(tmp / "m.b2nd").shape() == Shape{2, 2});
    moved.push({reinterpret_cast<const std::uint8_t*>(row.data()), 8});
    moved.close();
    CHECK(b2nd::NDArray<std::int32_t>::open(tmp / "n.b2nd").read() == row);
}

TEST_CASE("appender: refusals name the array", "[engine][append]") {
    b2nd::test::TempDir tmp;
    auto a = b2nd::NDArray<std::uint16_t>::create(tmp / "r.b2nd", {0, 3}, b2nd::CreateOptions{});
    CHECK_THROWS_WITH((b2nd::Appender<std::uint16_t>(a, 2)),
                      Contains("r.b2nd") && Contains("axis 2 out of range"));
    const auto ro = b2nd::NDArray<std::uint16_t>::open(tmp / "r.b2nd");
    CHECK_THROWS_WITH((b2nd::Appender<std::uint16_t>(ro, 0)), Contains("read-only"));
    b2nd::AnyAppender app(a.any(), 0);
    const std::vector<std::uint8_t> odd(5);
    CHECK_THROWS_WITH(app.push({odd.data(), odd.size()}),
                      Contains("not a whole number of slabs of 6 bytes"));
    app.close();
    const std::vector<std::uint8_t> one(6);
    CHECK_THROWS_WITH(app.push({one.data(), one.size()}), Contains("after close()"));
    // Slabs of no elements; rows no memory holds (1e5 chunks of 1 MiB across the axis).
    auto none =
        b2nd::NDArray<std::uint16_t>::create(tmp / "z.b2nd", {0, 0, 4}, b2nd::CreateOptions{});
    CHECK_THROWS_WITH((b2nd::Appender<std::uint16_t>(none, 0)),
                      Contains("z.b2nd") && Contains("hold no elements"));
    b2nd::CreateOptions big;
    big.chunk_shape = {1, 1024, 512};
    big.block_shape = {1, 256, 512};
    big.max_chunks = std::int64_t{1} << 40;
    auto huge = b2nd::NDArray<std::uint16_t>::create(tmp / "h.b2nd", {0, 1024 * 100000, 512}, big);
    CHECK_THROWS_WITH((b2nd::Appender<std::uint16_t>(huge, 0)),
                      Contains("h.b2nd") && Contains("more than this machine's memory"));
    auto be = b2nd::AnyArray::create(tmp / "be.b2nd", b2nd::DType::parse(">u2"), {0, 3});
    CHECK_THROWS_WITH((b2nd::Appender<std::uint16_t>(b2nd::NDArray<std::uint16_t>(be), 0)),
                      Contains("native"));
}
