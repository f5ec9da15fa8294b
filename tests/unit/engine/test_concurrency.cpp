// Many threads on one array: readers of random boxes and elements agree with a single-threaded
// read while the cache churns, and a writer updating one region does not disturb readers of
// another. Built again with ThreadSanitizer in CI.
#include <atomic>
#include <thread>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../../support/data.hpp"
#include "../../support/files.hpp"
#include "../../support/random_box.hpp"
#include "../../support/reference.hpp"
#include "../../support/temp_dir.hpp"

using b2nd::Box;
using b2nd::Shape;
using b2nd::test::SplitMix;

namespace {}  // namespace

TEST_CASE("concurrency: 8 readers of one array agree with a single-threaded read",
          "[array][concurrency]") {
    b2nd::test::TempDir tmp;
    const Shape shape{48, 40, 36};
    std::vector<float> v(48 * 40 * 36);
    SplitMix fill(7);
    for (float& x : v) {
        x = static_cast<float>(fill.below(1000)) * 0.25f;
    }
    b2nd::CreateOptions o;
    o.chunk_shape = {16, 16, 12};
    o.block_shape = {8, 5, 6};
    o.compression.filters = {{b2nd::Filter::shuffle, 0}, {b2nd::Filter::delta, 0}};
    auto t = b2nd::NDArray<float>::create_from(tmp / "c.b2nd", shape, v, o);
    t.any().set_cache_bytes(64 << 10);  // small: blocks are evicted while others read them
    t.any().set_nthreads(2);            // each read also fans out on the pool
    std::vector<std::uint8_t> bytes(v.size() * sizeof(float));
    std::memcpy(bytes.data(), v.data(), bytes.size());

    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int th = 0; th < 8; ++th) {
        threads.emplace_back([&, th] {
            SplitMix rng(100 + static_cast<std::uint64_t>(th));
            for (int i = 0; i < 150; ++i) {
                if (rng.below(3) == 0) {
                    const std::int64_t a = static_cast<std::int64_t>(rng.below(48)),
                                       b = static_cast<std::int64_t>(rng.below(40)),
                                       c = static_cast<std::int64_t>(rng.below(36));
                    if (t(a, b, c) != v[static_cast<std::size_t>((a * 40 + b) * 36 + c)]) {
                        ++failures;
                    }
                    continue;
                }
                const Box box = b2nd::test::random_box(shape, rng, 24);
                const auto want =
                    b2nd::test::reference_slice(bytes, shape, 4, box.start, box.count, box.step);
                if (t.any().read(box) != want) {
                    ++failures;
                }
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    CHECK(failures.load() == 0);
}

TEST_CASE("concurrency: a writer and readers of other regions", "[array][concurrency]") {
    b2nd::test::TempDir tmp;
    b2nd::CreateOptions o;
    o.chunk_shape = {8, 32};
    o.block_shape = {4, 8};
    auto v = b2nd::test::generate<std::int32_t>(64 * 32, [](std::size_t i) { return i; });
    auto t = b2nd::NDArray<std::int32_t>::create_from(tmp / "w.b2nd", {64, 32}, v, o);
    std::atomic<bool> stop{false};
    std::atomic<int> failures{0};
    std::vector<std::thread> readers;
    for (int th = 0; th < 4; ++th) {
        readers.emplace_back([&, th] {
            SplitMix rng(static_cast<std::uint64_t>(th));
            while (!stop.load()) {
                const auto row =
                    static_cast<std::int64_t>(32 + rng.below(32));  // rows the writer never touches
                const std::vector<std::int32_t> got = t.read({row, b2nd::Slice::all()});
                for (std::size_t j = 0; j < got.size(); ++j) {
                    if (got[j] != v[static_cast<std::size_t>(row) * 32 + j]) {
                        ++failures;
                    }
                }
            }
        });
    }
    for (int k = 0; k < 40; ++k) {
        t.write(Box::region({k % 32, 0}, {1, 32}), std::vector<std::int32_t>(32, -k));
    }
    stop = true;
    for (auto& th : readers) {
        th.join();
    }
    CHECK(failures.load() == 0);
    CHECK(t(7, 3) == -39);
}
