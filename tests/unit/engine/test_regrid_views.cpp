// Regridded views (AnyArray::rechunked): an array's items under other chunk and block shapes,
// against a ramp the test writes: whole reads, random boxes, chunkwise visits of the new chunks
// (edge chunks and blocks included), views of views; shapes that cannot be are refused.
#include <cstring>
#include <mutex>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>

#include "support/random_box.hpp"

using b2nd::AnyArray;
using b2nd::Box;
using b2nd::Shape;
using Catch::Matchers::Contains;

namespace {

/// A (13, 17, 6) int32 ramp in chunks (5, 8, 6) of blocks (2, 4, 3), and its values.
AnyArray ramp(std::vector<std::int32_t>& values) {
    values.resize(13 * 17 * 6);
    for (std::size_t i = 0; i < values.size(); ++i) {
        values[i] = static_cast<std::int32_t>(i * 7 + 1);
    }
    b2nd::CreateOptions co;
    co.chunk_shape = {5, 8, 6};
    co.block_shape = {2, 4, 3};
    return AnyArray::create_in_memory_from(
        b2nd::DType::parse("<i4"), {13, 17, 6},
        {reinterpret_cast<const std::uint8_t*>(values.data()), values.size() * 4}, co);
}

/// The ramp's values in `box` (C order, with its steps).
std::vector<std::int32_t> model(const std::vector<std::int32_t>& v, const Box& box) {
    std::vector<std::int32_t> out;
    for (std::int64_t i = 0; i < box.count[0]; ++i) {
        for (std::int64_t j = 0; j < box.count[1]; ++j) {
            for (std::int64_t k = 0; k < box.count[2]; ++k) {
                const auto at_ = [&](std::size_t d, std::int64_t n) {
                    return box.start[d] + n * box.step[d];
                };
                const std::int64_t at = (at_(0, i) * 17 + at_(1, j)) * 6 + at_(2, k);
                out.push_back(v[static_cast<std::size_t>(at)]);
            }
        }
    }
    return out;
}

std::vector<std::int32_t> as_ints(const std::vector<std::uint8_t>& b) {
    std::vector<std::int32_t> out(b.size() / 4);
    std::memcpy(out.data(), b.data(), b.size());
    return out;
}

}  // namespace

TEST_CASE("regrid views: other chunks and blocks read the same items", "[engine][regrid]") {
    std::vector<std::int32_t> values;
    const AnyArray a = ramp(values);
    const AnyArray v = a.rechunked({4, 7, 5}, {3, 2, 4});
    CHECK(v.shape() == a.shape());
    CHECK(v.chunk_shape() == Shape{4, 7, 5});
    CHECK(v.block_shape() == Shape{3, 2, 4});
    CHECK(as_ints(v.read()) == values);
    b2nd::test::SplitMix rng(11);
    for (int k = 0; k < 40; ++k) {
        const Box box = b2nd::test::random_box(v.shape(), rng);
        INFO(b2nd::to_string(box.start) << " " << b2nd::to_string(box.count));
        std::vector<std::uint8_t> got(static_cast<std::size_t>(box.size()) * 4);
        v.read(box, got.data(), got.size());
        CHECK(as_ints(got) == model(values, box));
    }
    // Each new chunk visited with its region and its items, edge chunks included (visits run
    // on several threads: what they saw is checked after).
    std::mutex m;
    std::int64_t visited = 0, wrong = 0;
    v.for_each_chunk(v.all_chunks(), [&](std::int64_t, const Box& region, const std::uint8_t* data,
                                         const std::uint8_t*) {
        std::vector<std::int32_t> got(static_cast<std::size_t>(region.size()));
        if (data != nullptr) {
            std::memcpy(got.data(), data, got.size() * 4);
        }
        const bool same = data != nullptr && got == model(values, region);
        std::lock_guard<std::mutex> lock(m);
        ++visited;
        wrong += same ? 0 : 1;
    });
    CHECK(wrong == 0);
    CHECK(visited == 4 * 3 * 2);
}

TEST_CASE("regrid views: defaults, views of views, attributes", "[engine][regrid]") {
    std::vector<std::int32_t> values;
    AnyArray a = ramp(values);
    // Chunks kept: the blocks too; new chunks: blocks chosen for them.
    CHECK(a.rechunked({}).block_shape() == a.block_shape());
    const AnyArray c = a.rechunked({13, 17, 6});
    CHECK(c.chunk_shape() == Shape{13, 17, 6});
    const AnyArray twice = c.rechunked({2, 3, 1}, {1, 3, 1});
    CHECK(as_ints(twice.read()) == values);
    CHECK(twice.grid().nchunks() == 7 * 6 * 6);
}

TEST_CASE("regrid views: shapes that cannot be are refused by name", "[engine][regrid]") {
    std::vector<std::int32_t> values;
    const AnyArray a = ramp(values);
    CHECK_THROWS_AS(a.rechunked({4, 4}), b2nd::UsageError);
    CHECK_THROWS_WITH(a.rechunked({4, 4}), Contains("chunks (4, 4) for an array of 3 dimensions"));
    CHECK_THROWS_AS(a.rechunked({4, 4, 4}, {5, 4, 4}), b2nd::UsageError);
    CHECK_THROWS_AS(a.rechunked({0, 4, 4}), b2nd::Error);
}
