#include <catch2/catch.hpp>

#include <b2nd/error.hpp>
#include <b2nd/format/byte_reader.hpp>
#include <b2nd/format/byte_writer.hpp>
#include <b2nd/format/checked_math.hpp>

#include "../../support/bytes.hpp"

using b2nd::FormatError;
using b2nd::format::ByteReader;
using b2nd::format::ByteWriter;
using b2nd::test::hex;
using Catch::Matchers::Contains;
using Catch::Matchers::Message;

TEST_CASE("byte reader: little- and big-endian loads in order", "[format]") {
    const auto bytes = hex("01 02 03 04 05 06 07 08 09 0a 0b");
    ByteReader r(bytes);
    CHECK(r.u8("a") == 0x01);
    CHECK(r.read_le<std::uint16_t>("b") == 0x0302);
    CHECK(r.read_be<std::uint32_t>("c") == 0x04050607U);
    CHECK(r.read_le<std::int32_t>("d") == 0x0b0a0908);
    CHECK(r.remaining() == 0);
    CHECK(r.offset() == 11);
}

TEST_CASE("byte reader: truncation names the field, the need and the offset", "[format]") {
    const auto bytes = hex("01 02 03");
    ByteReader r(bytes, 100);
    r.u8("first");
    REQUIRE_THROWS_MATCHES(
        r.read_le<std::uint32_t>("nbytes"), FormatError,
        Message("truncated reading nbytes (need 4 bytes, 2 left) at offset 101"));
}

TEST_CASE("byte reader: markers and end checks", "[format]") {
    const auto bytes = hex("d3 00");
    ByteReader r(bytes);
    r.expect_marker(0xd3, "shape[0]");
    REQUIRE_THROWS_MATCHES(r.expect_marker(0xd2, "chunkshape[0]"), FormatError,
                           Message("chunkshape[0]: expected marker 0xd2, got 0x00 at offset 1"));
    ByteReader r2(bytes);
    r2.u8("x");
    REQUIRE_THROWS_WITH(r2.expect_end("meta"), Contains("1 unexpected trailing bytes"));
}

TEST_CASE("byte writer and reader round trip", "[format]") {
    std::vector<std::uint8_t> buf;
    ByteWriter w(buf);
    w.u8(7);
    w.write_le<std::int64_t>(-5);
    w.write_be<std::uint32_t>(0xdeadbeef);
    w.write_le<double>(2.5);
    w.patch_le<std::int64_t>(1, 42);
    ByteReader r(buf);
    CHECK(r.u8("u8") == 7);
    CHECK(r.read_le<std::int64_t>("i64") == 42);
    CHECK(r.read_be<std::uint32_t>("u32") == 0xdeadbeefU);
    CHECK(r.read_le<double>("f64") == 2.5);
    r.expect_end("buffer");
}

TEST_CASE("checked arithmetic throws FormatError on overflow", "[format]") {
    using b2nd::format::checked_add;
    using b2nd::format::checked_cast;
    using b2nd::format::checked_mul;
    CHECK(checked_mul<std::int64_t>(1 << 20, 1 << 20, "x") == (std::int64_t{1} << 40));
    REQUIRE_THROWS_AS(
        checked_mul<std::int64_t>(std::int64_t{1} << 40, std::int64_t{1} << 40, "shape"),
        FormatError);
    REQUIRE_THROWS_WITH(checked_add<std::int32_t>(2147483647, 1, "cbytes"),
                        Contains("cbytes: arithmetic overflow"));
    REQUIRE_THROWS_AS(checked_cast<std::int32_t>(std::int64_t{1} << 40, "n"), FormatError);
    CHECK(checked_cast<std::uint8_t>(200, "n") == 200);
}
