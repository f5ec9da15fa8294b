// Chunk by chunk: write_chunks produces whole chunks in parallel, for_each_chunk visits them
// (uniform chunks without decoding).
#include "support/array_tests.hpp"

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
