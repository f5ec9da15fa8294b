// The b2nd and caterva metalayers from hand-assembled bytes (seeds/b2nd-metalayer.rst,
// seeds/caterva-metalayer.txt); the corpus check of real files is in golden/test_corpus_arrays.
#include <catch2/catch.hpp>

#include <b2nd/error.hpp>
#include <b2nd/format/b2nd_meta.hpp>

#include "../../support/bytes.hpp"

using b2nd::FormatError;
using b2nd::format::B2ndMeta;
using b2nd::format::read_b2nd_meta;
using b2nd::format::write_b2nd_meta;
using b2nd::test::hex;
using Catch::Matchers::Contains;

namespace {

// A 2-D "<f4" array: shape (10, 20), chunks (5, 7), blocks (2, 3), spelled out per the seed doc.
const char* kB2nd2d =
    "97 00 02"
    " 92 d3 00 00 00 00 00 00 00 0a  d3 00 00 00 00 00 00 00 14"
    " 92 d2 00 00 00 05  d2 00 00 00 07"
    " 92 d2 00 00 00 02  d2 00 00 00 03"
    " 00 db 00 00 00 03 3c 66 34";

}  // namespace

TEST_CASE("b2nd meta: the seed document's layout parses field by field", "[format]") {
    const B2ndMeta m = read_b2nd_meta(hex(kB2nd2d));
    CHECK(m.version == 0);
    CHECK(m.has_dtype);
    CHECK(m.shape == std::vector<std::int64_t>{10, 20});
    CHECK(m.chunk_shape == std::vector<std::int32_t>{5, 7});
    CHECK(m.block_shape == std::vector<std::int32_t>{2, 3});
    CHECK(m.dtype_format == 0);
    CHECK(m.dtype == "<f4");
}

TEST_CASE("b2nd meta: writing gives back the same bytes", "[format]") {
    const auto bytes = hex(kB2nd2d);
    CHECK(write_b2nd_meta(read_b2nd_meta(bytes)) == bytes);
}

TEST_CASE("b2nd meta: the caterva layout has no dtype", "[format]") {
    const auto bytes =
        hex("95 00 01  91 d3 00 00 00 00 00 00 01 00  91 d2 00 00 00 40  91 d2 00 00 00 10");
    const B2ndMeta m = read_b2nd_meta(bytes);
    CHECK_FALSE(m.has_dtype);
    CHECK(m.shape == std::vector<std::int64_t>{256});
    CHECK(m.chunk_shape == std::vector<std::int32_t>{64});
    CHECK(m.block_shape == std::vector<std::int32_t>{16});
    CHECK(m.dtype.empty());
    CHECK(write_b2nd_meta(m) == bytes);
}

TEST_CASE("b2nd meta: ndim 0 and ndim 16 (marker 0xa0) round trip", "[format]") {
    B2ndMeta m0;
    m0.dtype = "<i8";
    const auto b0 = write_b2nd_meta(m0);
    CHECK(b0 == hex("97 00 00 90 90 90 00 db 00 00 00 03 3c 69 38"));
    CHECK(read_b2nd_meta(b0).shape.empty());

    B2ndMeta m16;
    m16.dtype = "|u1";
    for (int d = 0; d < 16; ++d) {
        m16.shape.push_back(d + 1);
        m16.chunk_shape.push_back(1);
        m16.block_shape.push_back(1);
    }
    const auto b16 = write_b2nd_meta(m16);
    CHECK(b16[3] == 0xa0);  // what c-blosc2 writes: 0x90 + 16
    const B2ndMeta back = read_b2nd_meta(b16);
    CHECK(back.shape == m16.shape);
    CHECK(back.block_shape == m16.block_shape);
}

TEST_CASE("b2nd meta: malformed bytes raise FormatError naming the field", "[format]") {
    auto bytes = hex(kB2nd2d);
    SECTION("wrong top-level marker") {
        bytes[0] = 0x96;
        CHECK_THROWS_WITH(read_b2nd_meta(bytes), Contains("fixarray of 7"));
    }
    SECTION("ndim above 16") {
        bytes[2] = 17;
        CHECK_THROWS_WITH(read_b2nd_meta(bytes), Contains("ndim 17"));
    }
    SECTION("shape array marker disagrees with ndim") {
        bytes[3] = 0x93;
        CHECK_THROWS_AS(read_b2nd_meta(bytes), FormatError);
    }
    SECTION("negative shape") {
        bytes[5] = 0xff;
        CHECK_THROWS_WITH(read_b2nd_meta(bytes), Contains("shape[0] is negative"));
    }
    SECTION("negative blockshape") {
        bytes[40] = 0x80;  // first byte of blockshape[1]
        CHECK_THROWS_WITH(read_b2nd_meta(bytes), Contains("blockshape[1] is negative"));
    }
    SECTION("dtype length past the end") {
        bytes[bytes.size() - 4] = 9;
        CHECK_THROWS_AS(read_b2nd_meta(bytes), FormatError);
    }
    SECTION("every truncation") {
        for (std::size_t n = 0; n < bytes.size(); ++n) {
            INFO(n);
            const std::vector<std::uint8_t> cut(bytes.begin(),
                                                bytes.begin() + static_cast<long>(n));
            CHECK_THROWS_AS(read_b2nd_meta(cut), FormatError);
        }
    }
}

TEST_CASE("b2nd meta: inconsistent ndims are refused on write", "[format]") {
    B2ndMeta m;
    m.shape = {4, 4};
    m.chunk_shape = {2};
    m.block_shape = {1, 1};
    CHECK_THROWS_AS(write_b2nd_meta(m), b2nd::UsageError);
}
