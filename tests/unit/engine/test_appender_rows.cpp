// How an appender's rows are made and committed (appender.cpp, chunk_rows.cpp): rows of several
// chunks with padding at the array's edges (and a partial row flushed) are stored as the very
// chunks create_from writes for the same elements, along axis 0 and along another axis, with
// checksums; rows of one value become special chunks; rows are committed by flush(), close()
// and, with commit_interval 0, once written; an error of the writer's thread is thrown by the
// calls that follow; memory stays within the queue whatever the number of rows.
#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/appender.hpp>
#include <b2nd/b2nd.hpp>
#include <b2nd/codec/registry.hpp>
#include <b2nd/error.hpp>
#include <b2nd/memory.hpp>
#include <b2nd/storage/frame.hpp>

#include "support/temp_dir.hpp"

using b2nd::Shape;
using Catch::Matchers::Contains;

namespace {

b2nd::CreateOptions options(const Shape& chunks, const Shape& blocks) {
    b2nd::CreateOptions o;
    o.chunk_shape = chunks;
    o.block_shape = blocks;
    o.compression = b2nd::CompressionParams{b2nd::Codec::lz4, 5};
    o.nthreads = 2;
    o.checksums = true;
    return o;
}

/// Every chunk of `a` equals the same chunk of `b`, as stored (bytes, or the same special).
void require_same_chunks(const b2nd::AnyArray& a, const b2nd::AnyArray& b) {
    const b2nd::storage::Frame& fa = a.frame();
    const b2nd::storage::Frame& fb = b.frame();
    REQUIRE(fa.nchunks() == fb.nchunks());
    for (std::int64_t i = 0; i < fa.nchunks(); ++i) {
        INFO("chunk " << i);
        const b2nd::storage::StoredChunk ca = fa.chunk(i), cb = fb.chunk(i);
        CHECK(ca.special == cb.special);
        CHECK(std::vector<std::uint8_t>(ca.bytes.begin(), ca.bytes.end()) ==
              std::vector<std::uint8_t>(cb.bytes.begin(), cb.bytes.end()));
    }
}

}  // namespace

TEST_CASE("appender: rows of padded chunks are the chunks create_from writes", "[engine][append]") {
    b2nd::test::TempDir tmp;
    SECTION("axis 0, a flush in the middle of a row") {
        // Frames of 7 x 10: chunks of 4 x 4 across them, blocks of 3 x 2 (padding everywhere).
        const auto o = options({3, 4, 4}, {2, 3, 2});
        auto a = b2nd::NDArray<std::uint16_t>::create(tmp / "a.b2nd", {0, 7, 10}, o);
        std::vector<std::uint16_t> model;
        b2nd::Appender<std::uint16_t> app(a, 0);
        for (std::int64_t k = 0; k < 8; ++k) {
            std::vector<std::uint16_t> f(70);
            for (std::size_t e = 0; e < f.size(); ++e) {
                f[e] = static_cast<std::uint16_t>(k * 1000 + static_cast<std::int64_t>(e) * 3);
            }
            app.push(f.data(), 1);
            model.insert(model.end(), f.begin(), f.end());
            if (k == 3) {
                app.flush();  // a full row and one frame of the next
                CHECK(b2nd::NDArray<std::uint16_t>::open(tmp / "a.b2nd").read() == model);
            }
        }
        app.close();  // two full rows and two frames of the third
        const auto back = b2nd::NDArray<std::uint16_t>::open(tmp / "a.b2nd");
        REQUIRE(back.shape() == Shape{8, 7, 10});
        CHECK(back.read() == model);
        const auto bulk =
            b2nd::NDArray<std::uint16_t>::create_from(tmp / "b.b2nd", {8, 7, 10}, model, o);
        require_same_chunks(back.any(), bulk.any());
    }
    SECTION("axis 1, slabs of several extents") {
        // (5, t, 6): slabs of (5, n, 6), chunks of 2 x 3 x 4, blocks of 2 x 2 x 3.
        const auto o = options({2, 3, 4}, {2, 2, 3});
        auto a = b2nd::NDArray<std::int32_t>::create(tmp / "a.b2nd", {5, 0, 6}, o);
        b2nd::Appender<std::int32_t> app(a, 1);
        std::int64_t t = 0;
        for (const std::int64_t n : {2, 1, 4, 3}) {
            std::vector<std::int32_t> slab;
            for (std::int64_t i = 0; i < 5; ++i) {
                for (std::int64_t s = 0; s < n; ++s) {
                    for (std::int64_t j = 0; j < 6; ++j) {
                        slab.push_back(static_cast<std::int32_t>(100 * (t + s) + 10 * i + j));
                    }
                }
            }
            app.push(slab.data(), n);
            t += n;
        }
        app.close();
        std::vector<std::int32_t> model;
        for (std::int64_t i = 0; i < 5; ++i) {
            for (std::int64_t s = 0; s < t; ++s) {
                for (std::int64_t j = 0; j < 6; ++j) {
                    model.push_back(static_cast<std::int32_t>(100 * s + 10 * i + j));
                }
            }
        }
        const auto back = b2nd::NDArray<std::int32_t>::open(tmp / "a.b2nd");
        REQUIRE(back.shape() == Shape{5, 10, 6});
        CHECK(back.read() == model);
        const auto bulk =
            b2nd::NDArray<std::int32_t>::create_from(tmp / "b.b2nd", {5, 10, 6}, model, o);
        require_same_chunks(back.any(), bulk.any());
    }
}

TEST_CASE("appender: rows of one value are special chunks", "[engine][append]") {
    b2nd::test::TempDir tmp;
    auto a = b2nd::NDArray<float>::create(tmp / "u.b2nd", {0, 8, 8}, options({2, 8, 8}, {1, 4, 8}));
    b2nd::Appender<float> app(a, 0);
    const std::vector<float> zeros(64, 0.0F), sevens(64, 7.0F);
    app.push(zeros.data(), 1);
    app.push(zeros.data(), 1);
    app.push(sevens.data(), 1);
    app.push(sevens.data(), 1);
    app.close();
    const auto back = b2nd::NDArray<float>::open(tmp / "u.b2nd");
    REQUIRE(back.any().frame().nchunks() == 2);
    CHECK(back.any().frame().chunk(0).special == b2nd::codec::Special::zeros);
    // A repeated value: a header and the value, where an encoded chunk would hold 256 bytes.
    CHECK(back.any().frame().chunk(1).bytes.size() < 64);
    std::vector<float> model(128, 0.0F);
    model.insert(model.end(), 128, 7.0F);
    CHECK(back.read() == model);
}

TEST_CASE("appender: rows are committed by flush, close and the interval", "[engine][append]") {
    b2nd::test::TempDir tmp;
    const std::string path = tmp / "c.b2nd";
    const std::vector<std::int16_t> frame(12, 5);
    const auto length = [&] { return b2nd::AnyArray::open(path).shape()[0]; };
    SECTION("a long interval: written rows wait for flush") {
        auto a =
            b2nd::NDArray<std::int16_t>::create(path, {0, 3, 4}, options({2, 3, 4}, {1, 3, 4}));
        b2nd::AppendOptions ao;
        ao.commit_interval = std::chrono::hours(1);
        b2nd::Appender<std::int16_t> app(a, 0, ao);
        for (int k = 0; k < 5; ++k) {
            app.push(frame.data(), 1);
        }
        CHECK(length() == 0);
        app.flush();
        CHECK(length() == 5);
        app.push(frame.data(), 1);
        app.close();
        CHECK(length() == 6);
    }
    SECTION("interval zero: each full row once written") {
        auto a =
            b2nd::NDArray<std::int16_t>::create(path, {0, 3, 4}, options({2, 3, 4}, {1, 3, 4}));
        b2nd::AppendOptions ao;
        ao.commit_interval = std::chrono::milliseconds(0);
        b2nd::Appender<std::int16_t> app(a, 0, ao);
        for (int k = 0; k < 5; ++k) {
            app.push(frame.data(), 1);
        }
        // Two full rows are committed by the writer's thread on its own (no flush): waited for,
        // within a generous bound.
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (length() < 4 && std::chrono::steady_clock::now() < until) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        CHECK(length() == 4);
        app.close();
        CHECK(length() == 5);
    }
}

TEST_CASE("appender: what the writer's thread throws is thrown by the calls after it",
          "[engine][append]") {
    b2nd::test::TempDir tmp;
    const std::string path = tmp / "e.b2nd";
    (void)b2nd::NDArray<std::uint8_t>::create(path, {0, 4}, options({1, 4}, {1, 4}));
    b2nd::OpenOptions w;
    w.writable = true;
    w.max_chunks = 3;  // a fourth row cannot be committed
    b2nd::AppendOptions ao;
    ao.commit_interval = std::chrono::milliseconds(0);
    b2nd::Appender<std::uint8_t> app(b2nd::NDArray<std::uint8_t>::open(path, w), 0, ao);
    const std::vector<std::uint8_t> row(4, 1);
    for (int k = 0; k < 3; ++k) {
        app.push(row.data(), 1);
    }
    app.flush();
    CHECK(app.length() == 3);
    app.push(row.data(), 1);
    CHECK_THROWS_WITH(app.flush(), Contains("max_chunks") && Contains("e.b2nd"));
    CHECK_THROWS_WITH(app.push(row.data(), 1), Contains("max_chunks"));
    CHECK_THROWS_AS(app.close(), b2nd::UsageError);
    CHECK(b2nd::AnyArray::open(path).shape() == Shape{3, 4});
}

TEST_CASE("appender: a row that cannot be encoded is thrown by flush, with rows in flight",
          "[engine][append]") {
    // A filter that refuses blocks holding the byte 0x77 (a user's plugin, id 230).
    static const bool registered = [] {
        b2nd::codec::FilterPlugin f;
        f.id = 230;
        f.name = "test_refuse_77";
        f.forward = [](const b2nd::codec::BlockContext&, b2nd::ByteSpan src,
                       b2nd::MutableByteSpan dst) {
            for (std::size_t i = 0; i < src.size(); ++i) {
                if (src[i] == 0x77) {
                    throw b2nd::UsageError("test_refuse_77: a 0x77 byte");
                }
                dst[i] = src[i];
            }
        };
        f.backward = [](const b2nd::codec::BlockContext&, b2nd::ByteSpan src,
                        b2nd::MutableByteSpan dst) {
            std::copy(src.begin(), src.end(), dst.begin());
        };
        b2nd::codec::register_filter(std::move(f));
        return true;
    }();
    REQUIRE(registered);
    b2nd::test::TempDir tmp;
    // Slabs of 1 KiB (chunks of 2, blocks of 1 slab: large enough to be encoded, not copied).
    b2nd::CreateOptions o = options({2, 1024}, {1, 1024});
    o.compression.filters = {{static_cast<b2nd::Filter>(230), 0}};
    auto a = b2nd::NDArray<std::uint8_t>::create(tmp / "p.b2nd", {0, 1024}, o);
    b2nd::Appender<std::uint8_t> app(a, 0);  // 2 threads: two rows encoded at once
    std::vector<std::uint8_t> fine(1024), poison(1024);
    for (std::size_t i = 0; i < fine.size(); ++i) {
        fine[i] = static_cast<std::uint8_t>(i % 61);
        poison[i] = static_cast<std::uint8_t>(i % 2 == 0 ? 0x77 : i % 61);
    }
    for (int k = 0; k < 4; ++k) {
        app.push(fine.data(), 1);
    }
    app.flush();
    // Row 2 (slabs 4, 5) cannot be encoded; rows 3-5 can, and are encoded meanwhile. The error
    // comes out of a push or of the flush (when the encoder got to it), and of every call after.
    std::string first;
    try {
        for (int k = 4; k < 12; ++k) {
            app.push((k == 5 ? poison : fine).data(), 1);
        }
        app.flush();
    } catch (const b2nd::UsageError& e) {
        first = e.what();
    }
    CHECK_THAT(first, Contains("test_refuse_77"));
    CHECK_THROWS_WITH(app.flush(), Contains("test_refuse_77"));
    CHECK_THROWS_WITH(app.push(fine.data(), 1), Contains("test_refuse_77"));
    CHECK_THROWS_WITH(app.close(), Contains("test_refuse_77"));
    CHECK(b2nd::AnyArray::open(tmp / "p.b2nd").shape() == Shape{4, 1024});
}

TEST_CASE("appender: memory stays within the queue, whatever the number of rows",
          "[engine][append]") {
    b2nd::test::TempDir tmp;
    // Rows of 1 MiB (4 frames of 256 x 256 uint32), 64 of them: 64 MiB pushed.
    auto a = b2nd::NDArray<std::uint32_t>::create(tmp / "m.b2nd", {0, 256, 256},
                                                  options({4, 256, 256}, {4, 64, 64}));
    b2nd::AppendOptions ao;
    ao.queue = 1;
    std::vector<std::uint32_t> f(256 * 256);
    const std::int64_t row = 4 * 256 * 256 * 4;
    const std::int64_t before = b2nd::memory_stats().current;
    b2nd::reset_memory_peak();
    {
        b2nd::Appender<std::uint32_t> app(a, 0, ao);
        for (std::int64_t k = 0; k < 256; ++k) {
            for (std::size_t e = 0; e < f.size(); ++e) {
                f[e] = static_cast<std::uint32_t>(k * 7919 + static_cast<std::int64_t>(e) * 31);
            }
            app.push(f.data(), 1);
        }
        app.close();
    }
    const std::int64_t grew = b2nd::memory_stats().peak - before;
    INFO("peak growth " << grew << " bytes, rows of " << row);
    // queue + 2 rows being filled and encoded, up to 3 encoded (each at most a row and a bit),
    // and the encoder's scratch: far below the 64 rows pushed.
    CHECK(grew < 12 * row);
    CHECK(b2nd::NDArray<std::uint32_t>::open(tmp / "m.b2nd").shape() == Shape{256, 256, 256});
}
