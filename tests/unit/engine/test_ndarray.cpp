// Arrays we write read back exactly: a model (a plain C-order byte array updated element by
// element) follows random writes with steps, fills, resizes, appends, inserts and removes, for
// many dtypes, ndim 0 to 8, ragged chunks and blocks, contiguous and sparse frames; the array
// must equal the model after every operation and after reopening.
#include "support/array_tests.hpp"

namespace {

const char* const kDtypes[] = {
    "|b1",   "|i1",  "<u2", ">i4", "<f4",     "<f8",
    ">f8",   "<c16", "|S5", "<U3", "<M8[ms]", "[('a', '<i4'), ('b', '>f8')]",
    "|V300",
};

void check_equal(const AnyArray& a, const Model& m) {
    REQUIRE(a.shape() == m.shape);
    B2ND_REQUIRE_SAME_BYTES(a.read(), m.data);
}

}  // namespace

TEST_CASE("ndarray: random operations agree with an element-by-element model",
          "[array][roundtrip]") {
    // Every dtype, each in 6 configurations (ndim 0 to 8 across the dtypes), seeded by the dtype.
    const std::size_t which = GENERATE(range(std::size_t{0}, std::size(kDtypes)));
    const DType dt = DType::parse(kDtypes[which]);
    b2nd::test::TempDir tmp;
    SplitMix rng(20261122 + which);
    for (int config = 0; config < 6; ++config) {
        const int ndim = static_cast<int>((which * 6 + static_cast<std::size_t>(config)) % 9);
        const bool sparse = rng.below(2) == 0;
        Shape shape, chunks, blocks;
        const std::int64_t max_extent = ndim <= 2 ? 40 : (ndim <= 4 ? 9 : 4);
        for (int d = 0; d < ndim; ++d) {
            const auto n = static_cast<std::int64_t>(
                rng.below(10) == 0 ? 0 : 1 + rng.below(static_cast<std::uint64_t>(max_extent)));
            const auto c = static_cast<std::int64_t>(
                1 + rng.below(static_cast<std::uint64_t>(std::max<std::int64_t>(n, 1) + 2)));
            shape.push_back(n);
            chunks.push_back(c);
            blocks.push_back(
                static_cast<std::int64_t>(1 + rng.below(static_cast<std::uint64_t>(c))));
        }
        b2nd::CreateOptions o;
        o.chunk_shape = chunks;
        o.block_shape = blocks;
        o.sparse = sparse;
        o.nthreads = 1 + static_cast<int>(rng.below(2));
        static const b2nd::Codec codecs[] = {b2nd::Codec::zstd, b2nd::Codec::lz4,
                                             b2nd::Codec::blosclz, b2nd::Codec::zlib,
                                             b2nd::Codec::lz4hc};
        o.compression.codec = codecs[rng.below(5)];
        o.compression.clevel = static_cast<int>(rng.below(6));  // zstd 8-9 (levels 20-22) are slow
        static const b2nd::Filter filters[] = {b2nd::Filter::shuffle, b2nd::Filter::bitshuffle,
                                               b2nd::Filter::delta, b2nd::Filter::none};
        o.compression.filters = {{filters[rng.below(4)], 0}};
        if (rng.below(4) == 0) {
            o.compression.filters.push_back({b2nd::Filter::delta, 0});
        }
        const std::string path =
            tmp / ("a" + std::to_string(config) + (sparse ? ".b2frame" : ".b2nd"));
        INFO("config " << config << ": " << dt.str() << " shape " << b2nd::to_string(shape)
                       << " chunks " << b2nd::to_string(chunks) << " blocks "
                       << b2nd::to_string(blocks) << (sparse ? " sparse" : " contiguous"));
        AnyArray a = AnyArray::create(path, dt, shape, o);
        Model m(shape, dt.itemsize());
        check_equal(a, m);
        for (int op = 0; op < 14; ++op) {
            const std::uint64_t kind = rng.below(ndim == 0 ? 2 : 7);
            if (kind == 0) {  // write random data into a strided box
                const Box b = b2nd::test::random_box(a.shape(), rng);
                const auto data = random_items(rng, dt, b.size());
                a.write(b, {data.data(), data.size()});
                m.write(b, data);
            } else if (kind == 1) {  // fill a box with one value (uniform chunks become special)
                const Box b = Box::region(Shape(a.shape().size(), 0), a.shape());
                const auto one = random_items(rng, dt, 1);
                const bool zero = rng.below(2) == 0;
                std::vector<std::uint8_t> data;
                for (std::int64_t i = 0; i < b.size(); ++i) {
                    for (std::uint8_t byte : one) {
                        data.push_back(zero ? 0 : byte);
                    }
                }
                a.write(b, {data.data(), data.size()});
                m.write(b, data);
            } else if (kind == 2) {  // resize every dimension
                Shape ns;
                for (std::int64_t v : a.shape()) {
                    ns.push_back(
                        std::max<std::int64_t>(0, v + static_cast<std::int64_t>(rng.below(7)) - 3));
                }
                INFO("resize to " << b2nd::to_string(ns));
                a.resize(ns);
                m.resize(ns);
            } else if (kind == 3 || kind == 4) {  // insert (or append) slices
                const auto axis = static_cast<int>(rng.below(static_cast<std::uint64_t>(ndim)));
                const auto ax = static_cast<std::size_t>(axis);
                const auto len = a.shape()[ax];
                // Sometimes chunk-aligned, to take the fast path that moves whole chunks.
                const std::int64_t c = a.chunk_shape()[ax];
                const bool aligned = rng.below(2) == 0;
                const std::int64_t pos =
                    kind == 4 ? len
                    : aligned
                        ? c * static_cast<std::int64_t>(
                                  rng.below(static_cast<std::uint64_t>(len / c + 1)))
                        : static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(len + 1)));
                const std::int64_t n = aligned ? c * static_cast<std::int64_t>(1 + rng.below(2))
                                               : static_cast<std::int64_t>(1 + rng.below(5));
                Shape es = a.shape();
                es[ax] = n;
                if (count_of(es) == 0) {
                    continue;
                }
                const auto data = random_items(rng, dt, count_of(es));
                INFO("insert " << n << " at " << pos << " along " << axis);
                if (kind == 4) {
                    a.append(axis, {data.data(), data.size()});
                } else {
                    a.insert(axis, pos, {data.data(), data.size()});
                }
                m.insert(ax, pos, data, n);
            } else if (kind == 5) {  // remove slices
                const auto axis = static_cast<int>(rng.below(static_cast<std::uint64_t>(ndim)));
                const auto ax = static_cast<std::size_t>(axis);
                const auto len = a.shape()[ax];
                if (len == 0) {
                    continue;
                }
                const std::int64_t c = a.chunk_shape()[ax];
                std::int64_t pos, n;
                if (rng.below(2) == 0 && len >= c) {
                    pos = c *
                          static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(len / c)));
                    n = std::min(c, len - pos);
                } else {
                    pos = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(len)));
                    n = 1 + static_cast<std::int64_t>(rng.below(
                                static_cast<std::uint64_t>(std::min<std::int64_t>(len - pos, 4))));
                }
                INFO("remove " << n << " at " << pos << " along " << axis);
                a.remove(axis, pos, n);
                m.remove(ax, pos, n);
            } else {  // read a random strided box
                const Box b = b2nd::test::random_box(a.shape(), rng);
                INFO("read " << b.str());
                B2ND_REQUIRE_SAME_BYTES(
                    a.read(b),
                    b2nd::test::reference_slice(m.data, m.shape, m.isz, b.start, b.count, b.step));
                continue;
            }
            check_equal(a, m);
        }
        a = AnyArray();
        const AnyArray back = AnyArray::open(path);
        CHECK(back.dtype() == dt);
        CHECK(back.sparse() == sparse);
        check_equal(back, m);
    }
}
