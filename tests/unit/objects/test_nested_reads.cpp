// Reads that re-enter the engine on their own thread: a block origin (a persisted expression, a
// field view) reads other arrays while it makes a block, and those reads run the same code. The
// outer read's buffers (the scratch a block is made into, an expression's workspace, a field
// view's rows) must not be moved or reused by the inner one. Without a block cache every block
// goes through scratch, which is where the nested reads met; these tests run under ASan in CI.
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>

#include "support/files.hpp"
#include "support/lazy_carriers.hpp"
#include "support/reference.hpp"
#include "support/temp_dir.hpp"

using b2nd::test::lazy_recipe;
using b2nd::test::path_ref;
using b2nd::test::write_carrier;

namespace {

/// Open options without a block cache (every block decoded into scratch) or with the default one.
b2nd::OpenOptions opened(bool cached, int threads) {
    b2nd::OpenOptions o;
    o.cache_bytes = cached ? b2nd::OpenOptions{}.cache_bytes : 0;
    o.nthreads = threads;
    return o;
}

/// `a` read by selections that land whole and that do not, against the model `want` (C order).
void check_reads(const b2nd::AnyArray& a, const std::vector<std::uint8_t>& want) {
    B2ND_REQUIRE_SAME_BYTES(a.read(), want);
    for (const char* text : {"1:-1, :", "1:-1:2, 3::3", "::7, -5:", "5, :", ":, 2"}) {
        INFO("selection " << text);
        const b2nd::Resolved r = b2nd::resolve(a.shape(), b2nd::parse_selection(text));
        const auto ref = b2nd::test::reference_slice(want, a.shape(), a.itemsize(), r.box.start,
                                                     r.box.count, r.box.step);
        B2ND_REQUIRE_SAME_BYTES(a.read(b2nd::parse_selection(text)), ref);
    }
    // Points, one block each.
    const std::vector<std::int64_t> pts{0, 0, 7, 5, a.shape()[0] - 1, a.shape()[1] - 1};
    const auto isz = static_cast<std::size_t>(a.itemsize());
    std::vector<std::uint8_t> got(3 * isz);
    a.read_points(pts.data(), 3, got.data());
    for (std::size_t p = 0; p < 3; ++p) {
        const auto at = static_cast<std::size_t>(pts[2 * p] * a.shape()[1] + pts[2 * p + 1]) * isz;
        CHECK(std::memcmp(got.data() + p * isz, want.data() + at, isz) == 0);
    }
}

}  // namespace

TEST_CASE("nested reads: an expression whose operand is a .b2z leaf, read through scratch",
          "[objects][lazyexpr][nested][golden]") {
    const std::string corpus = b2nd::test::corpus_dir();
    if (corpus.empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    // x * 2 + y, x a leaf of ../trees/t1.b2z: the leaf's blocks are larger than the carrier's,
    // so its reads grew the very scratch the carrier's block was being made into.
    const std::string dir = corpus + "/stores/lazy";
    const auto want = b2nd::test::read_npy_payload(dir + "/expected/expr_storekey.npy").data;
    for (const bool cached : {false, true}) {
        for (const int threads : {1, 2}) {
            INFO((cached ? "cached" : "no cache") << ", " << threads << " threads");
            check_reads(b2nd::AnyArray::open(dir + "/expr_storekey.b2nd", opened(cached, threads)),
                        want);
        }
    }
}

TEST_CASE("nested reads: expressions whose operands are expressions, three deep",
          "[objects][lazyexpr][nested]") {
    b2nd::test::TempDir tmp;
    const b2nd::Shape shape{60, 30};
    std::vector<double> x(60 * 30), r(30);
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<double>(i % 97) * 0.5 - 7;
    }
    for (std::size_t j = 0; j < r.size(); ++j) {
        r[j] = static_cast<double>(j) * 100;
    }
    b2nd::CreateOptions xo;
    xo.chunk_shape = {20, 30};
    xo.block_shape = {4, 30};
    (void)b2nd::NDArray<double>::create_from(tmp / "x.b2nd", shape, x.data(), x.size(), xo);
    (void)b2nd::NDArray<double>::create_from(tmp / "r.b2nd", {1, 30}, r.data(), r.size());
    // Each level with blocks of another size than the one below it (larger and smaller), and a
    // broadcast operand (r) at each.
    const auto level = [&](const std::string& name, const std::string& expr, const b2nd::Value& ops,
                           b2nd::Shape chunks, b2nd::Shape blocks) {
        b2nd::CreateOptions o;
        o.chunk_shape = std::move(chunks);
        o.block_shape = std::move(blocks);
        return write_carrier(tmp / name, lazy_recipe(expr, ops), shape, o);
    };
    level("e1.b2nd", "x * 2 + r",
          b2nd::Value::map({{"x", path_ref("x.b2nd")}, {"r", path_ref("r.b2nd")}}), {30, 30},
          {10, 30});
    level("e2.b2nd", "e1 + x - r",
          b2nd::Value::map(
              {{"e1", path_ref("e1.b2nd")}, {"x", path_ref("x.b2nd")}, {"r", path_ref("r.b2nd")}}),
          {60, 30}, {20, 30});
    level(
        "e3.b2nd", "e2 - e1 + r",
        b2nd::Value::map(
            {{"e2", path_ref("e2.b2nd")}, {"e1", path_ref("e1.b2nd")}, {"r", path_ref("r.b2nd")}}),
        {12, 30}, {3, 10});
    // e2 = 3x, e3 = 3x - (2x + r) + r = x: exact in float64 for these values.
    std::vector<double> e2(x.size()), e3(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        e2[i] = 3 * x[i];
        e3[i] = x[i];
    }
    const auto bytes = [](const std::vector<double>& v) {
        std::vector<std::uint8_t> b(v.size() * sizeof(double));
        std::memcpy(b.data(), v.data(), b.size());
        return b;
    };
    for (const bool cached : {false, true}) {
        for (const int threads : {1, 2}) {
            INFO((cached ? "cached" : "no cache") << ", " << threads << " threads");
            check_reads(b2nd::AnyArray::open(tmp / "e2.b2nd", opened(cached, threads)), bytes(e2));
            check_reads(b2nd::AnyArray::open(tmp / "e3.b2nd", opened(cached, threads)), bytes(e3));
        }
    }
}

TEST_CASE("nested reads: a field of a field view, edge blocks made through scratch",
          "[array][fields][nested]") {
    b2nd::test::TempDir tmp;
    const b2nd::DType dt =
        b2nd::DType::parse("[('a', [('x', '<i4'), ('y', '<f8')]), ('b', '<i2')]");
    REQUIRE(dt.itemsize() == 14);
    const b2nd::Shape shape{37, 11};  // edges along both axes
    std::vector<std::uint8_t> all(static_cast<std::size_t>(37 * 11 * 14));
    std::vector<std::uint8_t> want_y, want_x;
    for (std::size_t e = 0; e < 37 * 11; ++e) {
        const auto xi = static_cast<std::int32_t>(e * 3 + 1);
        const double yi = static_cast<double>(e) / 8 - 3;
        const auto bi = static_cast<std::int16_t>(e);
        std::memcpy(&all[e * 14], &xi, 4);
        std::memcpy(&all[e * 14 + 4], &yi, 8);
        std::memcpy(&all[e * 14 + 12], &bi, 2);
        want_x.insert(want_x.end(), &all[e * 14], &all[e * 14] + 4);
        want_y.insert(want_y.end(), &all[e * 14 + 4], &all[e * 14 + 4] + 8);
    }
    b2nd::CreateOptions o;
    o.chunk_shape = {16, 8};
    o.block_shape = {6, 3};
    (void)b2nd::AnyArray::create_from(tmp / "s.b2nd", dt, shape, {all.data(), all.size()}, o);
    for (const bool cached : {false, true}) {
        for (const int threads : {1, 2}) {
            INFO((cached ? "cached" : "no cache") << ", " << threads << " threads");
            const auto s = b2nd::AnyArray::open(tmp / "s.b2nd", opened(cached, threads));
            const b2nd::AnyArray a = s.field("a");
            check_reads(a.field("y"), want_y);
            check_reads(a.field("x"), want_x);
            // Messages name the file and the fields on the way.
            const std::int64_t outside[2] = {40, 0};
            double y = 0;
            CHECK_THROWS_WITH(a.field("y").read_points(outside, 1, &y),
                              Catch::Contains("s.b2nd") && Catch::Contains("field 'a'") &&
                                  Catch::Contains("field 'y'"));
        }
    }
}
