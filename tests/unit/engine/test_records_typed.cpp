// NDArray<S> for described C++ structs (record.hpp): the records corpus read as structs (packed,
// padded, big-endian, sub-array and nested fields) against numpy's bytes; mismatches named by
// their first differing field; round trips C++ -> file -> C++.
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>

#include "support/files.hpp"
#include "support/reference.hpp"
#include "support/temp_dir.hpp"

#pragma pack(push, 1)
struct Vec {
    double x, y;
};
struct Nested {  // [('id', '<i4'), ('pos', [('x', '<f8'), ('y', '<f8')]), ('flag', '?')]
    std::int32_t id;
    Vec pos;
    bool flag;
};
struct Sub {  // [('t', '<f4'), ('v', '<i2', (3,)), ('m', '<f8', (2, 2))]
    float t;
    std::int16_t v[3];
    std::array<std::array<double, 2>, 2> m;
};
struct Mixed {  // [('be', '>i4'), ('le', '<i4'), ('bf', '>f8'), ('s', 'S5'), ('u', '>U2')]
    std::int32_t be, le;
    double bf;
    char s[5];
    char32_t u[2];
};
#pragma pack(pop)

struct Padded {  // {'names': ['a', 'b', 'c'], 'formats': ['<u2', '<f8', 'S3'], 'offsets': [0, 8,
                 // 20]}
    std::uint16_t a;
    double b;
    char gap[4];  // padding: not described
    char c[3];
    char tail[9];
};
static_assert(sizeof(Padded) == 32, "the corpus's padded record is 32 bytes");

struct Aligned {  // Nested's fields in a struct the compiler aligns: id at 0, pos at 8
    std::int32_t id;
    Vec pos;
    bool flag;
};

template <>
struct b2nd::record<Vec> {
    static auto fields() {
        return b2nd::fields(b2nd::field("x", &Vec::x), b2nd::field("y", &Vec::y));
    }
};
template <>
struct b2nd::record<Nested> {
    static auto fields() {
        return b2nd::fields(b2nd::field("id", &Nested::id), b2nd::field("pos", &Nested::pos),
                            b2nd::field("flag", &Nested::flag));
    }
};
template <>
struct b2nd::record<Sub> {
    static auto fields() {
        return b2nd::fields(b2nd::field("t", &Sub::t), b2nd::field("v", &Sub::v),
                            b2nd::field("m", &Sub::m));
    }
};
template <>
struct b2nd::record<Mixed> {
    static auto fields() {
        return b2nd::fields(b2nd::field("be", &Mixed::be), b2nd::field("le", &Mixed::le),
                            b2nd::field("bf", &Mixed::bf), b2nd::field("s", &Mixed::s),
                            b2nd::field("u", &Mixed::u));
    }
};
template <>
struct b2nd::record<Padded> {
    static auto fields() {
        return b2nd::fields(b2nd::field("a", &Padded::a), b2nd::field("b", &Padded::b),
                            b2nd::field("c", &Padded::c));
    }
};
template <>
struct b2nd::record<Aligned> {
    static auto fields() {
        return b2nd::fields(b2nd::field("id", &Aligned::id), b2nd::field("pos", &Aligned::pos),
                            b2nd::field("flag", &Aligned::flag));
    }
};

namespace {

template <class S>
void check_against_npy(const std::string& name) {
    const std::string dir = b2nd::test::corpus_dir() + "/records/structured";
    const auto a = b2nd::NDArray<S>::open(dir + "/" + name + ".b2nd");
    const auto npy = b2nd::test::read_npy_payload(dir + "/expected/" + name + ".npy").data;
    const std::vector<S> got = a.read();
    REQUIRE(got.size() * sizeof(S) == npy.size());
    // Native-order numpy bytes are the struct's bytes; foreign-order fields are checked apart.
    if constexpr (!std::is_same_v<S, Mixed>) {
        CHECK(std::memcmp(got.data(), npy.data(), npy.size()) == 0);
    }
}

}  // namespace

TEST_CASE("records: the corpus's structured arrays read as described structs",
          "[array][records][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    check_against_npy<Nested>("rec_nested");
    check_against_npy<Sub>("rec_subarray");
    check_against_npy<Padded>("rec_padded");
    check_against_npy<Mixed>("rec_bigendian");
    // Foreign byte orders converted: be and bf equal numpy's values, byte-swapped from the file.
    const std::string dir = b2nd::test::corpus_dir() + "/records/structured";
    const auto m = b2nd::NDArray<Mixed>::open(dir + "/rec_bigendian.b2nd").read();
    const auto npy = b2nd::test::read_npy_payload(dir + "/expected/rec_bigendian.npy").data;
    for (std::size_t i = 0; i < m.size(); ++i) {
        std::uint32_t be = 0;
        std::memcpy(&be, npy.data() + i * 29, 4);
        // Copies first: Catch binds references, and packed members may be misaligned.
        const auto got_be = static_cast<std::uint32_t>(m[i].be);
        const std::int32_t got_le = m[i].le;
        const auto got_u0 = static_cast<std::uint32_t>(m[i].u[0]);
        CHECK(got_be == __builtin_bswap32(be));
        std::int32_t le = 0;
        std::memcpy(&le, npy.data() + i * 29 + 4, 4);
        CHECK(got_le == le);
        CHECK(std::memcmp(m[i].s, npy.data() + i * 29 + 16, 5) == 0);
        std::uint32_t u0 = 0;
        std::memcpy(&u0, npy.data() + i * 29 + 21, 4);
        CHECK(got_u0 == __builtin_bswap32(u0));
    }
    const auto one = b2nd::NDArray<Nested>::open(dir + "/rec_nested.b2nd")(3);
    const auto all = b2nd::NDArray<Nested>::open(dir + "/rec_nested.b2nd").read();
    const double one_x = one.pos.x, all_x = all[3].pos.x;
    const std::int32_t one_id = one.id, all_id = all[3].id;
    CHECK(one_x == all_x);
    CHECK(one_id == all_id);
}

TEST_CASE("records: a struct that does not match is refused naming the first differing field",
          "[array][records][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string dir = b2nd::test::corpus_dir() + "/records/structured";
    // The compiler's alignment against python's packed dtype.
    CHECK_THROWS_WITH(b2nd::NDArray<Aligned>::open(dir + "/rec_nested.b2nd"),
                      Catch::Contains("the record is 21 bytes in the file, 24 in the struct"));
    CHECK_THROWS_WITH(b2nd::NDArray<Sub>::open(dir + "/rec_nested.b2nd"),
                      Catch::Contains("the record"));
    CHECK_THROWS_WITH(b2nd::NDArray<Nested>::open(dir + "/rec_deep.b2nd"),
                      Catch::Contains("record"));
    CHECK_THROWS_AS(b2nd::NDArray<Nested>::open(dir + "/../strings/str_S6.b2nd"), b2nd::UsageError);
    // Same size, a field's type differs: named with its path.
    const b2nd::DType have =
        b2nd::DType::parse("[('id', '<i4'), ('pos', [('x', '<f8'), ('y', '<i8')]), ('flag', '?')]");
    CHECK_THAT(have.layout_difference(b2nd::dtype_of<Nested>()),
               Catch::Contains("field 'pos.y'") && Catch::Contains("'<i8' at offset 12") &&
                   Catch::Contains("'<f8' at offset 12"));
    const b2nd::DType renamed =
        b2nd::DType::parse("[('id', '<i4'), ('pos', [('x', '<f8'), ('z', '<f8')]), ('flag', '?')]");
    CHECK_THAT(renamed.layout_difference(b2nd::dtype_of<Nested>()),
               Catch::Contains("'pos.z'") && Catch::Contains("'pos.y'"));
    CHECK(
        b2nd::DType::parse("[('id', '>i4'), ('pos', [('x', '>f8'), ('y', '<f8')]), ('flag', '?')]")
            .layout_difference(b2nd::dtype_of<Nested>())
            .empty());  // byte order aside
}

TEST_CASE("records: structs written and read back; the dtype is python's", "[array][records]") {
    b2nd::test::TempDir tmp;
    std::vector<Nested> v(50);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = {static_cast<std::int32_t>(i), {0.5 * static_cast<double>(i), -1.0}, i % 3 == 0};
    }
    auto a = b2nd::NDArray<Nested>::create_from(tmp / "n.b2nd", {50}, v);
    CHECK(a.dtype().str() ==
          "[('id', '<i4'), ('pos', [('x', '<f8'), ('y', '<f8')]), ('flag', '?')]");
    const auto back = b2nd::NDArray<Nested>::open(tmp / "n.b2nd").read();
    REQUIRE(back.size() == v.size());
    CHECK(std::memcmp(back.data(), v.data(), v.size() * sizeof(Nested)) == 0);
    // A padded struct keeps python's dict form (offsets and itemsize).
    CHECK(b2nd::dtype_of<Padded>().str() ==
          "{'names': ['a', 'b', 'c'], 'formats': ['<u2', '<f8', 'S3'], 'offsets': [0, 8, 20], "
          "'itemsize': 32}");
    CHECK(b2nd::dtype_of<Sub>().str() ==
          "[('t', '<f4'), ('v', '<i2', (3,)), ('m', '<f8', (2, 2))]");
    // Field views of a typed array, and one field written.
    const b2nd::NDArray<double> x = a.field<double>("pos.x");
    CHECK(x(10) == 5.0);
    b2nd::NDArray<double> y = a.field<double>("pos.y");
    y.write(b2nd::parse_selection("::2"), 7.0);
    const auto after = a.read();
    const double y4 = after[4].pos.y, y5 = after[5].pos.y;
    const std::int32_t id4 = after[4].id;
    CHECK(y4 == 7.0);
    CHECK(y5 == -1.0);
    CHECK(id4 == 4);
}
