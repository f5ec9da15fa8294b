// Element by element reads: they follow writes, resizes and the cache, and on several threads
// beside a writer they see the old value or the new one.
#include "support/array_tests.hpp"

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
