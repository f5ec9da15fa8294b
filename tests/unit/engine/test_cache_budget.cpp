// The process's one cache budget (b2nd::set_cache_budget): the caches of several open arrays
// hold at most the budget together (bytes held, measured by their own counts), the least
// recently used blocks go first whichever array they belong to, and without a budget each cache
// keeps to its own limit only.
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/memory.hpp>

#include "../../support/temp_dir.hpp"
#include "engine/block_cache.hpp"

namespace {

/// A budget set for one test, and none again after it.
struct Budget {
    explicit Budget(std::uint64_t bytes) { b2nd::set_cache_budget(bytes); }
    ~Budget() { b2nd::set_cache_budget(0); }
};

/// Reads one element of every block of `a` (each read decodes and caches its block).
void touch_every_block(const b2nd::NDArray<double>& a) {
    for (std::int64_t i = 0; i < 256; i += 16) {
        for (std::int64_t j = 0; j < 4096; j += 256) {
            (void)a.at({i, j});
        }
    }
}

std::size_t used(const std::vector<b2nd::NDArray<double>>& arrays) {
    std::size_t n = 0;
    for (const auto& a : arrays) {
        n += a.any().cache_stats().used_bytes;
    }
    return n;
}

}  // namespace

TEST_CASE("cache budget: open arrays hold at most the budget together, LRU first", "[array]") {
    b2nd::test::TempDir tmp;
    // Four arrays of 8 MiB, blocks of 16 x 256 doubles (32 KiB): 256 blocks each.
    std::vector<double> v(256 * 4096);
    for (std::size_t k = 0; k < v.size(); ++k) {
        v[k] = static_cast<double>(k % 1000);
    }
    b2nd::CreateOptions co;
    co.chunk_shape = {64, 1024};
    co.block_shape = {16, 256};
    std::vector<b2nd::NDArray<double>> arrays;
    for (int k = 0; k < 4; ++k) {
        const std::string path = tmp / ("a" + std::to_string(k) + ".b2nd");
        (void)b2nd::NDArray<double>::create_from(path, {256, 4096}, v, co);
        arrays.push_back(b2nd::NDArray<double>::open(path));  // each with a 256 MiB cache
    }
    const std::uint64_t base = b2nd::cache_held();  // what other open arrays hold (none here)

    SECTION("without a budget, each cache keeps what it decoded") {
        Budget none(0);
        for (const auto& a : arrays) {
            touch_every_block(a);
        }
        CHECK(used(arrays) == 4 * 256 * 32768u);
        CHECK(b2nd::cache_held() - base == used(arrays));
    }

    SECTION("a budget of 3 MiB bounds the four caches together") {
        const std::uint64_t budget = 3u << 20;
        Budget b(budget);
        CHECK(b2nd::cache_budget() == budget);
        for (const auto& a : arrays) {
            touch_every_block(a);
            CHECK(used(arrays) <= budget);
            CHECK(b2nd::cache_held() - base == used(arrays));
        }
        CHECK(used(arrays) >= budget / 2);  // used, not emptied
        // The last array read holds what is left; the first ones gave theirs up first.
        CHECK(arrays[0].any().cache_stats().used_bytes == 0);
        CHECK(arrays[3].any().cache_stats().used_bytes > 2u << 20);
        // Its most recent block is still there: a hit, no decode.
        const auto before = arrays[3].any().cache_stats();
        (void)arrays[3].at({240, 3840});
        CHECK(arrays[3].any().cache_stats().hits == before.hits + 1);
        // The first array's first block went: a miss.
        const auto first = arrays[0].any().cache_stats();
        (void)arrays[0].at({0, 0});
        CHECK(arrays[0].any().cache_stats().misses > first.misses);
        CHECK(arrays[0].any().cache_stats().hits == first.hits);
        // A smaller budget takes back at once.
        b2nd::set_cache_budget(1u << 20);
        CHECK(used(arrays) <= 1u << 20);
    }

    SECTION("closing an array gives its bytes back") {
        Budget none(0);
        touch_every_block(arrays[1]);
        const std::uint64_t held = b2nd::cache_held();
        CHECK(held - base >= 256 * 32768u);
        arrays.erase(arrays.begin() + 1);
        CHECK(b2nd::cache_held() == held - 256 * 32768u);
    }
}

TEST_CASE("cache budget: block caches follow the ledger's stamps", "[array]") {
    Budget b(64 << 10);
    b2nd::detail::BlockCache x(1 << 20), y(1 << 20);
    const auto block = [](std::uint8_t fill) {
        return std::make_shared<const std::vector<std::uint8_t>>(20 << 10, fill);
    };
    x.insert(1, block(1));
    y.insert(1, block(2));
    x.insert(2, block(3));
    (void)y.find(1);        // y's block is now more recent than both of x's
    y.insert(2, block(4));  // 80 KiB > 64 KiB: the oldest of all goes, x's first
    CHECK(x.size_bytes() + y.size_bytes() <= 64 << 10);
    CHECK(x.find(1) == nullptr);
    CHECK(y.find(1) != nullptr);
    CHECK(y.find(2) != nullptr);
}
