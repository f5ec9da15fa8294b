// NumPy dtype strings: every kind the corpus uses, printed back in NumPy's spelling, structured
// forms, byte order handling, and refusal of what we cannot represent.
#include <cstring>

#include <catch2/catch.hpp>

#include <b2nd/dtype.hpp>
#include <b2nd/error.hpp>

using b2nd::DType;
using Kind = b2nd::DType::Kind;
using Catch::Matchers::Contains;

TEST_CASE("dtype: simple dtypes parse and print back", "[array]") {
    struct Case {
        const char* text;
        Kind kind;
        std::int64_t itemsize;
        char order;
    };
    const Case cases[] = {
        {"|b1", Kind::boolean, 1, '|'},      {"|i1", Kind::int_, 1, '|'},
        {"|u1", Kind::uint, 1, '|'},         {"<i2", Kind::int_, 2, '<'},
        {">u2", Kind::uint, 2, '>'},         {"<i4", Kind::int_, 4, '<'},
        {">i4", Kind::int_, 4, '>'},         {"<u8", Kind::uint, 8, '<'},
        {"<f2", Kind::float_, 2, '<'},       {"<f4", Kind::float_, 4, '<'},
        {">f8", Kind::float_, 8, '>'},       {"<c8", Kind::complex_, 8, '<'},
        {"<c16", Kind::complex_, 16, '<'},   {"|S7", Kind::bytes, 7, '|'},
        {"<U3", Kind::unicode, 12, '<'},     {"|V16", Kind::void_, 16, '|'},
        {"<M8[ms]", Kind::datetime, 8, '<'}, {">m8[s]", Kind::timedelta, 8, '>'},
    };
    for (const Case& c : cases) {
        INFO(c.text);
        const DType d = DType::parse(c.text);
        CHECK(d.kind() == c.kind);
        CHECK(d.itemsize() == c.itemsize);
        CHECK(d.byteorder() == c.order);
        CHECK(d.str() == c.text);
    }
    CHECK(DType::parse("<M8[ms]").unit() == "ms");
}

TEST_CASE("dtype: NumPy shorthand spellings normalize", "[array]") {
    CHECK(DType::parse("?").str() == "|b1");
    CHECK(DType::parse("b").str() == "|i1");
    CHECK(DType::parse("<u1").str() == "|u1");  // order is meaningless for one byte
    CHECK(DType::parse("f8").itemsize() == 8);
    CHECK(DType::parse("i").itemsize() == 4);
    CHECK(DType::parse("a5").str() == "|S5");
    CHECK(DType::parse("=f4") == b2nd::dtype_of<float>());
}

TEST_CASE("dtype: C++ types map to native dtypes", "[array]") {
    const bool little = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
    CHECK(b2nd::dtype_of<bool>().str() == "|b1");
    CHECK(b2nd::dtype_of<std::int8_t>().str() == "|i1");
    CHECK(b2nd::dtype_of<std::uint8_t>().str() == "|u1");
    CHECK(b2nd::dtype_of<std::int16_t>().str() == (little ? "<i2" : ">i2"));
    CHECK(b2nd::dtype_of<std::uint64_t>().str() == (little ? "<u8" : ">u8"));
    CHECK(b2nd::dtype_of<float>().str() == (little ? "<f4" : ">f4"));
    CHECK(b2nd::dtype_of<double>().str() == (little ? "<f8" : ">f8"));
    CHECK(b2nd::dtype_of<std::complex<float>>().str() == (little ? "<c8" : ">c8"));
    CHECK(b2nd::dtype_of<std::complex<double>>().str() == (little ? "<c16" : ">c16"));
    CHECK(b2nd::dtype_of<double>() != DType::parse("<f4"));
}

TEST_CASE("dtype: structured list form", "[array]") {
    const DType d = DType::parse("[('a', '<i4'), ('b', '<f8')]");
    REQUIRE(d.is_structured());
    CHECK(d.itemsize() == 12);
    REQUIRE(d.fields().size() == 2);
    CHECK(d.fields()[0].name == "a");
    CHECK(d.fields()[0].type->str() == "<i4");
    CHECK(d.fields()[1].offset == 4);
    CHECK(d.str() == "[('a', '<i4'), ('b', '<f8')]");

    const DType nested =
        DType::parse("[('p', [('x', '>f4'), ('y', '>f4')]), ('v', '<u2', (2, 3)), ('s', '|S3')]");
    CHECK(nested.itemsize() == 8 + 12 + 3);
    CHECK(nested.fields()[1].shape == std::vector<std::int64_t>{2, 3});
    CHECK(nested.fields()[2].offset == 20);
    CHECK(DType::parse(nested.str()) == nested);
    CHECK(nested.needs_byteswap() == (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__));
    CHECK(DType::parse("[('v', '<u2', 4)]").fields()[0].shape == std::vector<std::int64_t>{4});
}

TEST_CASE("dtype: structured dict form with offsets and padding", "[array]") {
    const DType d = DType::parse(
        "{'names': ['a', 'b'], 'formats': ['<i2', '<f8'], 'offsets': [0, 8], 'itemsize': 16}");
    CHECK(d.itemsize() == 16);
    CHECK(d.fields()[1].offset == 8);
    // Not packed: printed in dict form, which parses back to the same layout.
    CHECK(d.str() ==
          "{'names': ['a', 'b'], 'formats': ['<i2', '<f8'], 'offsets': [0, 8], 'itemsize': 16}");
    // Packed dict form prints as a list, field types as numpy's str(dtype) writes them.
    CHECK(DType::parse("{'names': ['a'], 'formats': ['|u1']}").str() == "[('a', 'u1')]");
}

TEST_CASE(
    "dtype: python's str(dtype) forms round-trip: short field types, aligned structs, "
    "sub-array and nested fields in the dict form; .npy descr with padding",
    "[array]") {
    for (const char* s : {
             "[('id', '<i4'), ('pos', [('x', '<f8'), ('y', '<f8')]), ('flag', '?')]",
             "[('be', '>i4'), ('s', 'S5'), ('u', '>U2'), ('v', 'V3'), ('t', '<M8[s]'), ('b', "
             "'i1')]",
             "{'names': ['a', 'b', 'c'], 'formats': ['<u2', '<f8', 'S3'], 'offsets': [0, 8, 20], "
             "'itemsize': 32}",
             "{'names': ['a', 'b'], 'formats': ['u1', '<f8'], 'offsets': [0, 8], 'itemsize': 16, "
             "'aligned': True}",
             "{'names': ['v', 'w'], 'formats': [('<i2', (3,)), [('p', '<f4')]], 'offsets': [0, 8], "
             "'itemsize': 16}",
         }) {
        INFO(s);
        const DType d = DType::parse(s);
        CHECK(d.str() == s);
        CHECK(DType::parse(d.str()) == d);
    }
    const DType aligned = DType::parse(
        "{'names': ['a', 'b'], 'formats': ['u1', '<f8'], 'offsets': [0, 8], 'itemsize': 16, "
        "'aligned': True}");
    CHECK(aligned.aligned());
    CHECK(aligned.is_structured());  // not raw bytes
    CHECK(aligned.npy_descr() == "[('a', '|u1'), ('', '|V7'), ('b', '<f8')]");
    const DType sub = DType::parse(
        "{'names': ['v', 'w'], 'formats': [('<i2', (3,)), [('p', '<f4')]], 'offsets': [0, 8], "
        "'itemsize': 16}");
    CHECK(sub.fields()[0].shape == std::vector<std::int64_t>{3});
    CHECK(sub.npy_descr() ==
          "[('v', '<i2', (3,)), ('', '|V2'), ('w', [('p', '<f4')]), ('', '|V4')]");
    CHECK(DType::parse("<f8").npy_descr() == "'<f8'");
    CHECK_THROWS_AS(DType::parse("{'names': ['a'], 'formats': ['u1'], 'aligned': Maybe}"),
                    b2nd::FormatError);
}

TEST_CASE("dtype: byte swapping to native order", "[array]") {
    const bool little = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
    const DType be = DType::parse(">i4");
    CHECK(be.needs_byteswap() == little);
    CHECK(be.native().str() == (little ? "<i4" : ">i4"));
    CHECK_FALSE(DType::parse("|S4").needs_byteswap());

    std::uint8_t v[8] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
    be.byteswap(v, 2);
    CHECK(v[0] == 0x04);
    CHECK(v[3] == 0x01);
    CHECK(v[4] == 0x08);

    std::uint8_t c[8] = {1, 2, 3, 4, 5, 6, 7, 8};  // one complex64: two float32 swapped separately
    DType::parse(">c8").byteswap(c, 1);
    CHECK(std::memcmp(c, "\x04\x03\x02\x01\x08\x07\x06\x05", 8) == 0);

    std::uint8_t u[8] = {0, 0, 0, 'A', 0, 0, 0, 'B'};  // ">U2"
    DType::parse(">U2").byteswap(u, 1);
    CHECK(u[0] == 'A');
    CHECK(u[4] == 'B');

    std::uint8_t s[6] = {0, 1, 9, 0, 0, 2};  // [('a', '>u2'), ('b', '|u1'), ('c', '>u2')] packed=5
    const DType st = DType::parse("[('a', '>u2'), ('b', '|u1'), ('c', '>u2')]");
    st.byteswap(s, 1);
    CHECK(s[0] == 1);
    CHECK(s[1] == 0);
    CHECK(s[2] == 9);
    CHECK(s[3] == 0);
    CHECK(s[4] == 0);
    CHECK(st.native().str() == (little ? "[('a', '<u2'), ('b', 'u1'), ('c', '<u2')]"
                                       : "[('a', '>u2'), ('b', 'u1'), ('c', '>u2')]"));
}

TEST_CASE("dtype: what cannot be represented is refused clearly", "[array]") {
    CHECK_THROWS_AS(DType::parse("|O"), b2nd::UnsupportedError);
    CHECK_THROWS_AS(DType::parse("<f16"), b2nd::UnsupportedError);
    CHECK_THROWS_AS(DType::parse("<i3"), b2nd::UnsupportedError);
    CHECK_THROWS_WITH(DType::parse("<q4"), Contains("unknown type code 'q'"));
    CHECK_THROWS_AS(DType::parse(""), b2nd::FormatError);
    CHECK_THROWS_AS(DType::parse("<f4 junk"), b2nd::FormatError);
    CHECK_THROWS_AS(DType::parse("[('a', '<i4')"), b2nd::FormatError);
    CHECK_THROWS_AS(DType::parse("[]"), b2nd::FormatError);
    CHECK_THROWS_AS(DType::parse("<f4[ms]"), b2nd::FormatError);
    CHECK_THROWS_AS(DType::parse("{'names': ['a'], 'formats': []}"), b2nd::FormatError);
    CHECK_THROWS_AS(DType::parse("{'names': ['a'], 'formats': ['<f8'], 'itemsize': 4}"),
                    b2nd::FormatError);
    // Hostile sizes: no overflow, no huge allocation, a clear error.
    CHECK_THROWS_WITH(DType::parse("|S999999999999"), Contains("itemsize exceeds"));
    CHECK_THROWS_WITH(DType::parse("[('a', '<f8', (999999999999, 999999999999, 999999999999))]"),
                      Contains("itemsize exceeds"));
    CHECK_THROWS_WITH(DType::parse("[('a', '|V2000000000'), ('b', '|V2000000000')]"),
                      Contains("itemsize exceeds"));
}

TEST_CASE(
    "dtype: field names with quotes, backslashes and control characters round-trip as "
    "Python writes them",
    "[array][dtype]") {
    // Python's repr of each name (str(dtype) uses it): quotes switch for a name holding ',
    // backslashes and control characters are escaped.
    const std::string s =
        R"([("it's", '<i4'), ('a\\b', '<f8'), ('tab\there', 'u1'), ('\x01', '?')])";
    const b2nd::DType d = b2nd::DType::parse(s);
    REQUIRE(d.fields().size() == 4);
    CHECK(d.fields()[0].name == "it's");
    CHECK(d.fields()[1].name == "a\\b");
    CHECK(d.fields()[2].name == "tab\there");
    CHECK(d.fields()[3].name == "\x01");
    CHECK(d.str() == s);
    CHECK(b2nd::DType::parse(R"([('caf\xe9', '<i4'), ('\u03a9', '<i4')])").fields()[0].name ==
          "caf\xc3\xa9");
    CHECK_THROWS_AS(b2nd::DType::parse(R"([('a\x4', '<i4')])"), b2nd::FormatError);
}
