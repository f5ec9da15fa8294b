// The decoded-block cache: its own contract (a byte budget split over shards, least recently used
// out, keys erased by range, entries that outlive their eviction, admission on the second touch),
// and how arrays use it.
#include <memory>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../../support/data.hpp"
#include "../../support/temp_dir.hpp"
#include "engine/block_cache.hpp"

using b2nd::detail::BlockCache;

namespace {

BlockCache::Buffer block(std::size_t n, std::uint8_t fill) {
    return std::make_shared<const std::vector<std::uint8_t>>(n, fill);
}

}  // namespace

TEST_CASE("block cache: a byte budget, least recently used blocks out", "[array]") {
    // 16 KiB in 16 shards: a shard holds at most 1 KiB, and a larger block is not kept at all.
    BlockCache c(16 << 10);
    CHECK(c.budget() == 16 << 10);
    c.insert(1, block(100, 1));
    REQUIRE(c.find(1) != nullptr);
    CHECK((*c.find(1))[99] == 1);
    CHECK(c.size_bytes() == 100);
    CHECK(c.find(2) == nullptr);
    CHECK(c.hits() == 2);
    CHECK(c.misses() == 1);
    // Replacing a key keeps one entry.
    c.insert(1, block(200, 2));
    CHECK(c.size_bytes() == 200);
    CHECK((*c.find(1))[0] == 2);
    // A block larger than a shard's share of the budget is not kept.
    c.insert(3, block(2000, 3));
    CHECK(c.find(3) == nullptr);
    // Many blocks: the total never exceeds the budget, and the most recent block of each shard
    // stays.
    for (std::uint64_t k = 100; k < 400; ++k) {
        c.insert(k, block(300, static_cast<std::uint8_t>(k)));
        CHECK(c.size_bytes() <= c.budget());
        REQUIRE(c.find(k) != nullptr);
    }
    CHECK(c.size_bytes() > c.budget() / 2);  // the shards are used, not emptied
    // copy_from copies a part of a cached block, and says false for a missing one.
    std::uint8_t out[4] = {};
    CHECK(c.copy_from(399, 10, 4, out));
    CHECK(out[3] == static_cast<std::uint8_t>(399));
    CHECK_FALSE(c.copy_from(399, 298, 4, out));  // past the block's end
    CHECK_FALSE(c.copy_from(5, 0, 1, out));
}

TEST_CASE("block cache: erase_range, clear and a smaller budget", "[array]") {
    BlockCache c(1 << 20);
    for (std::uint64_t k = 0; k < 40; ++k) {
        c.insert(k, block(64, static_cast<std::uint8_t>(k)));
    }
    CHECK(c.size_bytes() == 40 * 64);
    c.erase_range(10, 20);  // keys 10..29
    for (std::uint64_t k = 0; k < 40; ++k) {
        CHECK((c.find(k) != nullptr) == (k < 10 || k >= 30));
    }
    CHECK(c.size_bytes() == 20 * 64);
    // An entry held by a reader survives its eviction.
    const BlockCache::Buffer held = c.find(35);
    c.set_budget(0);
    CHECK(c.size_bytes() == 0);
    CHECK(c.find(35) == nullptr);
    REQUIRE(held != nullptr);
    CHECK((*held)[0] == 35);
    c.insert(1, block(64, 1));  // a zero budget keeps nothing
    CHECK(c.size_bytes() == 0);
    c.set_budget(1 << 20);
    c.insert(1, block(64, 1));
    c.clear();
    CHECK(c.size_bytes() == 0);
    CHECK(c.find(1) == nullptr);
}

TEST_CASE("block cache: concurrent readers and writers keep it consistent",
          "[array][concurrency]") {
    BlockCache c(64 << 10);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&c, t] {
            b2nd::test::SplitMix rng(static_cast<std::uint64_t>(t));
            for (int i = 0; i < 5000; ++i) {
                const std::uint64_t k = rng.below(500);
                if (rng.below(2) == 0) {
                    c.insert(k, block(256, static_cast<std::uint8_t>(k)));
                } else if (const auto b = c.find(k)) {
                    REQUIRE((*b)[255] == static_cast<std::uint8_t>(k));
                }
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    CHECK(c.size_bytes() <= c.budget());
}

TEST_CASE("block cache: an array serves repeated reads from it and scans bypass it", "[array]") {
    b2nd::test::TempDir tmp;
    const auto v = b2nd::test::generate<std::int32_t>(
        256 * 256, [](std::size_t i) { return i * 7919 % 1000; });
    auto o = b2nd::test::chunked({64, 64}, {16, 16});
    o.compression.codec = b2nd::Codec::lz4;  // streams that stop early: partial decodes
    auto t = b2nd::NDArray<std::int32_t>::create_from(tmp / "c.b2nd", {256, 256}, v, o);
    t.any().set_cache_bytes(512 << 10);  // a full read (256 KiB) is a scan: more than a quarter
    t.any().clear_cache();
    CHECK(t.read() == v);
    CHECK(t.any().cache_stats().used_bytes == 0);
    // Single elements keep their block from the first read (loops come back to it), even where
    // a partial decode would do (element (100, 100) needs 69 of the block's 256 elements).
    CHECK(t(100, 100) == v[100 * 256 + 100]);
    const auto s1 = t.any().cache_stats();
    CHECK(s1.used_bytes == 16 * 16 * 4);
    CHECK(t(101, 99) == v[101 * 256 + 99]);  // same block: a hit
    CHECK(t.any().cache_stats().hits == s1.hits + 1);
    t.any().set_cache_bytes(0);
    CHECK(t.any().cache_stats().used_bytes == 0);
    CHECK(t(255, 0) == v[255 * 256]);
}

TEST_CASE("block cache: admission remembers a key's first touch and admits its second", "[array]") {
    // 1 MiB of 4 KiB blocks: 16 per shard, so 32 keys per shard are remembered.
    BlockCache c(1 << 20);
    CHECK_FALSE(c.admit(7, 4096));
    CHECK(c.admit(7, 4096));        // the second touch
    CHECK_FALSE(c.admit(7, 4096));  // admitted keys are forgotten: the cache holds them now
    CHECK(c.admit(7, 4096));
    // A key touched once and then followed by many others is forgotten.
    CHECK_FALSE(c.admit(1000, 4096));
    for (std::uint64_t k = 2000; k < 2000 + 16 * 64; ++k) {
        c.admit(k, 4096);
    }
    CHECK_FALSE(c.admit(1000, 4096));
    // clear() forgets the touches too.
    CHECK_FALSE(c.admit(5, 4096));
    c.clear();
    CHECK_FALSE(c.admit(5, 4096));
    CHECK(c.admit(5, 4096));
}

TEST_CASE("block cache: one-shot slices decode what they use, reads that come back keep blocks",
          "[array]") {
    b2nd::test::TempDir tmp;
    const auto v = b2nd::test::generate<float>(
        64 * 64 * 64, [](std::size_t i) { return static_cast<float>(i % 977) * 0.5f; });
    const b2nd::Codec codec = GENERATE(b2nd::Codec::lz4, b2nd::Codec::blosclz, b2nd::Codec::zstd);
    CAPTURE(static_cast<int>(codec));
    auto o = b2nd::test::chunked({32, 64, 64}, {16, 16, 16});
    o.compression.codec = codec;
    const std::string path = tmp / "c.b2nd";
    (void)b2nd::NDArray<float>::create_from(path, {64, 64, 64}, v, o);
    const std::size_t block = 16 * 16 * 16 * 4;
    const auto plane = [&](const b2nd::NDArray<float>& a, std::int64_t i) {
        std::vector<float> out(64 * 64);
        a.any().read(b2nd::Box::region({i, 0, 0}, {1, 64, 64}), out.data(), out.size() * 4);
        for (std::size_t k = 0; k < out.size(); ++k) {
            if (out[k] != v[static_cast<std::size_t>(i) * 64 * 64 + k]) {
                return false;
            }
        }
        return true;
    };
    const bool stops_early = codec != b2nd::Codec::zstd;  // LZ4 and BloscLZ streams
    auto a = b2nd::NDArray<float>::open(path);
    // Plane 1 needs 2 of each block's 16 planes: with a codec that stops early, the first read
    // keeps nothing; the second read of the same blocks keeps all 16 of them whole.
    CHECK(plane(a, 1));
    CHECK(a.any().cache_stats().used_bytes == (stops_early ? 0 : 16 * block));
    CHECK(plane(a, 2));
    CHECK(a.any().cache_stats().used_bytes == 16 * block);
    const auto s = a.any().cache_stats();
    CHECK(plane(a, 3));  // hits from here on
    CHECK(a.any().cache_stats().hits == s.hits + 16);
    CHECK(a.any().cache_stats().used_bytes == 16 * block);
    // Plane 12 needs most of each block of the next row of blocks (along axis 1 and 2 they are
    // whole): kept from its first read.
    CHECK(plane(a, 12));
    CHECK(a.any().cache_stats().used_bytes == 16 * block);  // same blocks as planes 1-3
    CHECK(plane(a, 28));
    CHECK(a.any().cache_stats().used_bytes == 32 * block);
    // Without a cache nothing is remembered or kept, and values are the same.
    auto none = b2nd::NDArray<float>::open(path);
    none.any().set_cache_bytes(0);
    for (const std::int64_t i : {1, 2, 17, 63}) {
        CHECK(plane(none, i));
    }
    CHECK(none.any().cache_stats().used_bytes == 0);
}

TEST_CASE("block cache: element loops and point lists over blocks read once are right", "[array]") {
    // Element loops over two arrays at once (blocks kept from their first element), and point
    // lists whose blocks are decoded in part into this thread's scratch on their first touch and
    // kept on their second: every value right.
    b2nd::test::TempDir tmp;
    const auto v = b2nd::test::generate<std::int32_t>(
        128 * 128, [](std::size_t i) { return static_cast<std::int32_t>(i * 31 % 10007); });
    auto o = b2nd::test::chunked({64, 64}, {16, 16});
    o.compression.codec = b2nd::Codec::lz4;
    auto a = b2nd::NDArray<std::int32_t>::create_from(tmp / "a.b2nd", {128, 128}, v, o);
    auto b = b2nd::NDArray<std::int32_t>::create_from(tmp / "b.b2nd", {128, 128}, v, o);
    std::int64_t wrong = 0;
    for (std::int64_t j = 0; j < 128; j += 5) {  // column-wise: a new block every 16 elements
        for (std::int64_t i = 0; i < 128; ++i) {
            const std::int32_t want = v[static_cast<std::size_t>(i * 128 + j)];
            wrong += a(i, j) + b(127 - i, 127 - j) !=
                     want + v[static_cast<std::size_t>((127 - i) * 128 + 127 - j)];
        }
    }
    CHECK(wrong == 0);
    std::vector<std::int64_t> pts;
    for (std::int64_t k = 0; k < 500; ++k) {
        pts.push_back(k * 37 % 128);
        pts.push_back(k * 91 % 128);
    }
    std::vector<std::int32_t> out(500);
    a.any().clear_cache();
    for (int pass = 0; pass < 3; ++pass) {  // first touches, second touches, hits
        a.any().read_points(pts.data(), 500, out.data());
        std::int64_t bad = 0;
        for (std::size_t k = 0; k < 500; ++k) {
            bad += out[k] != v[static_cast<std::size_t>(pts[2 * k] * 128 + pts[2 * k + 1])];
        }
        CHECK(bad == 0);
    }
}
