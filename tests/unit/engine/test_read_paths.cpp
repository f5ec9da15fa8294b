// The read and write paths that are chosen by size: memory accounting, large reads streamed to
// the destination, reads of block prefixes without the cache, and covering writes that store
// uniform chunks as special ones.
#include "support/array_tests.hpp"

TEST_CASE("memory accounting follows the library's buffers", "[array]") {
    const b2nd::MemoryStats before = b2nd::memory_stats();
    {
        b2nd::tracked_vector<std::uint8_t> v(1 << 20);
        CHECK(b2nd::memory_stats().current >= before.current + (1 << 20));
        CHECK(b2nd::memory_stats().peak >= before.current + (1 << 20));
    }
    CHECK(b2nd::memory_stats().current == before.current);
    b2nd::reset_memory_peak();
    CHECK(b2nd::memory_stats().peak == b2nd::memory_stats().current);
}

TEST_CASE("ndarray: large reads (streamed to the destination) equal the data", "[array]") {
    // Reads of at least kStreamingBytes go through row groups and non-temporal stores.
    b2nd::test::TempDir tmp;
    const Shape big{192, 250, 360};  // 17.3 M int32: 69 MB
    const auto v =
        b2nd::test::generate<std::int32_t>(static_cast<std::size_t>(count_of(big)),
                                           [](std::size_t i) { return (i * 2654435761U) >> 7; });
    b2nd::CreateOptions o = b2nd::test::chunked({64, 100, 120}, {16, 50, 24});
    o.compression.codec = b2nd::Codec::lz4;
    auto a = b2nd::NDArray<std::int32_t>::create_from(tmp / "big.b2nd", big, v, o);
    // A uniform region: whole chunks of zeros and of a repeated value.
    a.write(Box::region({0, 0, 0}, {64, 100, 120}), std::vector<std::int32_t>(64 * 100 * 120, 0));
    a.write(Box::region({64, 100, 120}, {64, 100, 120}),
            std::vector<std::int32_t>(64 * 100 * 120, -5));
    std::vector<std::int32_t> model = v;
    for (std::int64_t i = 0; i < 64; ++i) {
        for (std::int64_t j = 0; j < 100; ++j) {
            for (std::int64_t k = 0; k < 120; ++k) {
                model[static_cast<std::size_t>((i * 250 + j) * 360 + k)] = 0;
                model[static_cast<std::size_t>(((64 + i) * 250 + 100 + j) * 360 + 120 + k)] = -5;
            }
        }
    }
    const std::vector<std::uint8_t> bytes(
        reinterpret_cast<const std::uint8_t*>(model.data()),
        reinterpret_cast<const std::uint8_t*>(model.data() + model.size()));
    for (const int threads : {1, 2}) {
        a.any().set_nthreads(threads);
        B2ND_REQUIRE_SAME_BYTES(a.read(), model);
        // Boxes of more than 32 MiB with an offset, a step in an outer dimension, a flipped
        // outer dimension, a partial last dimension.
        for (const Box& b :
             {Box::region({1, 3, 7}, {190, 247, 350}), Box{{0, 0, 0}, {96, 250, 360}, {2, 1, 1}},
              Box{{191, 0, 5}, {192, 250, 355}, {-1, 1, 1}}}) {
            INFO(b.str() << ", " << threads << " threads");
            REQUIRE(static_cast<std::uint64_t>(b.size()) * 4 >= (std::uint64_t{32} << 20));
            B2ND_REQUIRE_SAME_BYTES(a.any().read(b), b2nd::test::reference_slice(
                                                         bytes, big, 4, b.start, b.count, b.step));
        }
    }
    // Large reads load each chunk when its blocks' turn comes (after reading it ahead): a chunk
    // whose block starts are garbage is still a FormatError naming the file, from any thread.
    const std::uint64_t at = b2nd::storage::Frame::open(tmp / "big.b2nd").chunk(7).offset;
    {
        std::fstream f(tmp / "big.b2nd", std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(at + 32));
        const std::string garbage(16, '\xff');
        f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
    }
    b2nd::OpenOptions oo;
    oo.cache_bytes = 0;
    auto broken = b2nd::open<std::int32_t>(tmp / "big.b2nd", oo);
    for (const int threads : {1, 2}) {
        broken.any().set_nthreads(threads);
        CHECK_THROWS_WITH(broken.read(), Contains("big.b2nd") && Contains("chunk 7"));
    }
}

TEST_CASE("ndarray: reads without the block cache decode block prefixes, right to the byte",
          "[array]") {
    // LZ4 and BloscLZ with a byte shuffle over split streams (c-blosc2's default for them) and
    // with no filter: reads that bypass the cache decode each block only up to the last element
    // they use. Boxes anywhere, with steps, agree with the data.
    const b2nd::Codec codec = GENERATE(b2nd::Codec::lz4, b2nd::Codec::blosclz);
    const bool shuffled = GENERATE(true, false);
    const char* dtype = GENERATE("<f4", "<f8", "<i2");
    CAPTURE(static_cast<int>(codec), shuffled, dtype);
    b2nd::test::TempDir tmp;
    SplitMix rng(77);
    const DType dt = DType::parse(dtype);
    const Shape shape{37, 29, 23};
    const auto data = random_items(rng, dt, count_of(shape));
    b2nd::CreateOptions o = b2nd::test::chunked({16, 16, 16}, {8, 8, 8});
    o.compression.codec = codec;
    o.compression.filters = {{shuffled ? b2nd::Filter::shuffle : b2nd::Filter::none, 0}};
    o.compression.splitmode = shuffled ? b2nd::SplitMode::always : b2nd::SplitMode::never;
    AnyArray::create(tmp / "p.b2nd", dt, shape, o).write(Box::whole(shape), data);
    b2nd::OpenOptions oo;
    oo.cache_bytes = 0;
    const AnyArray a = AnyArray::open(tmp / "p.b2nd", oo);
    for (int k = 0; k < 150; ++k) {
        const Box b = b2nd::test::random_box(shape, rng, 12);
        INFO("box " << b.str());
        const auto want =
            b2nd::test::reference_slice(data, shape, dt.itemsize(), b.start, b.count, b.step);
        B2ND_REQUIRE_SAME_BYTES(a.read(b), want);
    }
    // Planes at a block's start touch the first eighth of each block.
    for (std::int64_t i : {0, 8, 16, 24, 32, 36}) {
        const Box plane = Box::region({i, 0, 0}, {1, 29, 23});
        B2ND_REQUIRE_SAME_BYTES(a.read(plane),
                                b2nd::test::reference_slice(data, shape, dt.itemsize(), plane.start,
                                                            plane.count, plane.step));
    }
}

TEST_CASE("ndarray: writes that cover chunks store uniform ones as special chunks", "[array]") {
    // Covered chunks are gathered block by block as they are encoded; a chunk is special only
    // when every block (padding included) repeats its first element.
    b2nd::test::TempDir tmp;
    const Shape shape{10, 7};
    const b2nd::CreateOptions o = b2nd::test::chunked({4, 4}, {2, 2});  // 3 x 2 chunks
    auto a = b2nd::NDArray<std::int32_t>::full(tmp / "u.b2nd", shape, 9, o);
    std::vector<std::int32_t> model(70, 9);
    const auto put = [&](std::int64_t r0, std::int64_t c0, std::int64_t nr, std::int64_t nc,
                         const std::function<std::int32_t(std::int64_t, std::int64_t)>& f) {
        std::vector<std::int32_t> v;
        for (std::int64_t r = r0; r < r0 + nr; ++r) {
            for (std::int64_t c = c0; c < c0 + nc; ++c) {
                v.push_back(f(r, c));
                model[static_cast<std::size_t>(r * 7 + c)] = v.back();
            }
        }
        a.write(Box::region({r0, c0}, {nr, nc}), v);
    };
    put(8, 4, 2, 3, [](std::int64_t, std::int64_t) { return 3; });  // edge chunk 5, uniform
    put(0, 0, 4, 4, [](std::int64_t r, std::int64_t c) { return r == 3 && c == 3 ? 8 : 7; });
    put(4, 0, 4, 4, [](std::int64_t, std::int64_t) { return 0; });                // chunk 2: zeros
    put(0, 4, 4, 3, [](std::int64_t r, std::int64_t) { return r < 2 ? 1 : 2; });  // chunk 1
    const auto kind = [&](std::int64_t ci) {
        const auto c = b2nd::storage::Frame::open(tmp / "u.b2nd").chunk(ci);
        return c.index_only() ? c.special : b2nd::codec::ChunkDecoder(c.bytes).special();
    };
    CHECK(kind(5) == b2nd::codec::Special::value);
    CHECK(kind(0) == b2nd::codec::Special::none);  // all 7 but its last element
    CHECK(kind(2) == b2nd::codec::Special::zeros);
    CHECK(kind(1) == b2nd::codec::Special::none);
    CHECK(a.read() == model);
    CHECK(b2nd::open<std::int32_t>(tmp / "u.b2nd").read() == model);
}
