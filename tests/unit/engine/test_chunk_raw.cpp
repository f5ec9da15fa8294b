// Chunks compressed by the caller (AnyArray::write_chunk_raw, issue 57): a chunk encoded
// elsewhere (here: by another array of the same grid, as a camera's own encoder would) is
// committed as it is and reads back; chunks that are not the array's (another size, block size
// or item size, a damaged one, an index out of range) are refused by name and change nothing.
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>

#include "support/temp_dir.hpp"

using b2nd::AnyArray;
using Catch::Matchers::Contains;

namespace {

b2nd::CreateOptions grid(const b2nd::Shape& chunks, const b2nd::Shape& blocks) {
    b2nd::CreateOptions o;
    o.chunk_shape = chunks;
    o.block_shape = blocks;
    o.compression = b2nd::CompressionParams{b2nd::Codec::lz4, 5};
    return o;
}

/// Chunk `i` of an array of (8, 6) int32 holding `v`, as stored.
std::vector<std::uint8_t> chunk_of(const std::vector<std::int32_t>& v,
                                   const b2nd::CreateOptions& o,
                                   std::int64_t i) {
    const AnyArray src = AnyArray::create_in_memory_from(
        b2nd::DType::parse("<i4"), {8, 6},
        {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * 4}, o);
    const b2nd::storage::StoredChunk c = src.frame().chunk(i);
    return std::vector<std::uint8_t>(c.bytes.begin(), c.bytes.end());
}

}  // namespace

TEST_CASE("chunk raw: a chunk compressed elsewhere is committed as it is", "[engine][chunk_raw]") {
    b2nd::test::TempDir tmp;
    const auto o = grid({4, 6}, {2, 6});
    auto a = b2nd::NDArray<std::int32_t>::create(tmp / "a.b2nd", {8, 6}, o);
    std::vector<std::int32_t> v(48);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<std::int32_t>(i * 3 + 1);
    }
    const std::vector<std::uint8_t> c1 = chunk_of(v, o, 1);
    a.any().write_chunk_raw(1, {c1.data(), c1.size()});
    const auto back = b2nd::NDArray<std::int32_t>::open(tmp / "a.b2nd");
    const std::vector<std::int32_t> all = back.read();
    for (std::size_t i = 0; i < 24; ++i) {
        CHECK(all[i] == 0);  // chunk 0 untouched
        CHECK(all[24 + i] == v[24 + i]);
    }
    // As stored: the very bytes given.
    const b2nd::storage::StoredChunk stored = back.any().frame().chunk(1);
    CHECK(std::vector<std::uint8_t>(stored.bytes.begin(), stored.bytes.end()) == c1);
}

TEST_CASE("chunk raw: chunks that are not the array's are refused by name", "[engine][chunk_raw]") {
    b2nd::test::TempDir tmp;
    const auto o = grid({4, 6}, {2, 6});
    auto a = b2nd::NDArray<std::int32_t>::create(tmp / "a.b2nd", {8, 6}, o);
    const std::vector<std::int32_t> v(48, 7);
    const auto c = chunk_of(v, o, 0);
    // Another block size, another chunk size.
    const auto other_blocks = chunk_of(v, grid({4, 6}, {1, 6}), 0);
    const auto other_chunks = chunk_of(v, grid({2, 6}, {1, 6}), 0);
    CHECK_THROWS_WITH(a.any().write_chunk_raw(0, {other_blocks.data(), other_blocks.size()}),
                      Contains("a.b2nd") && Contains("chunk 0") && Contains("block size"));
    CHECK_THROWS_WITH(a.any().write_chunk_raw(0, {other_chunks.data(), other_chunks.size()}),
                      Contains("decoded size"));
    // Damaged: the header's compressed size beyond the bytes given; the header cut.
    std::vector<std::uint8_t> bad = c;
    const auto cbytes = static_cast<std::uint32_t>(bad.size() + 100);
    std::memcpy(bad.data() + 12, &cbytes, 4);
    CHECK_THROWS_WITH(a.any().write_chunk_raw(0, {bad.data(), bad.size()}), Contains("chunk 0"));
    CHECK_THROWS_AS(a.any().write_chunk_raw(0, {c.data(), 10}), b2nd::FormatError);
    CHECK_THROWS_AS(a.any().write_chunk_raw(2, {c.data(), c.size()}), b2nd::UsageError);
    AnyArray ro = AnyArray::open(tmp / "a.b2nd");
    CHECK_THROWS_AS(ro.write_chunk_raw(0, {c.data(), c.size()}), b2nd::UsageError);
    // Nothing refused changed the array.
    const auto back = b2nd::NDArray<std::int32_t>::open(tmp / "a.b2nd");
    CHECK(back.read() == std::vector<std::int32_t>(48, 0));
}
