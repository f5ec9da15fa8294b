// The decoded-block cache: its own contract (a byte budget split over shards, least recently used
// out, keys erased by range, entries that outlive their eviction), and how arrays use it.
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
    auto t = b2nd::NDArray<std::int32_t>::create_from(tmp / "c.b2nd", {256, 256}, v,
                                                      b2nd::test::chunked({64, 64}, {16, 16}));
    t.any().set_cache_bytes(512 << 10);  // a full read (256 KiB) is a scan: more than a quarter
    t.any().clear_cache();
    CHECK(t.read() == v);
    CHECK(t.any().cache_stats().used_bytes == 0);
    CHECK(t(100, 100) == v[100 * 256 + 100]);
    const auto s1 = t.any().cache_stats();
    CHECK(s1.used_bytes == 16 * 16 * 4);
    CHECK(t(101, 99) == v[101 * 256 + 99]);  // same block: a hit
    CHECK(t.any().cache_stats().hits == s1.hits + 1);
    t.any().set_cache_bytes(0);
    CHECK(t.any().cache_stats().used_bytes == 0);
    CHECK(t(255, 0) == v[255 * 256]);
}
