// Fixed-width string arrays as C++ strings (strings.hpp): the corpus's S and U arrays against
// numpy's bytes (trailing NULs dropped, embedded ones kept), values that do not fit refused by
// name, UTF-8 checked, and python-blosc2's default filters for the U arrays we create.
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>

#include "support/files.hpp"
#include "support/json.hpp"
#include "support/record_cases.hpp"
#include "support/reference.hpp"
#include "support/temp_dir.hpp"

using b2nd::test::Json;

TEST_CASE("strings: the corpus's S and U arrays read as strings", "[array][records][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const b2nd::test::RecordCases rc = b2nd::test::record_cases({"fixed_string"});
    const std::string& dir = rc.dir;
    int n = 0;
    for (const Json& c : rc.cases) {
        INFO(c["name"].as_string());
        const auto a = b2nd::AnyArray::open(dir + "/" + c["file"].as_string());
        const auto npy = b2nd::test::read_npy_payload(dir + "/" + c["npy"].as_string()).data;
        const auto isz = static_cast<std::size_t>(a.itemsize());
        const std::vector<std::string> s = b2nd::read_strings(a);
        REQUIRE(s.size() * isz == npy.size());
        if (a.dtype().kind() == b2nd::DType::Kind::bytes) {
            for (std::size_t i = 0; i < s.size(); ++i) {
                std::string want(reinterpret_cast<const char*>(npy.data() + i * isz), isz);
                want.erase(want.find_last_not_of('\0') + 1);  // NumPy's rule
                CHECK(s[i] == want);
            }
            CHECK_THROWS_AS(b2nd::read_u32strings(a), b2nd::UsageError);
        } else {
            const auto u = b2nd::read_u32strings(a);
            for (std::size_t i = 0; i < u.size(); ++i) {
                std::u32string want(isz / 4, U'\0');
                std::memcpy(want.data(), npy.data() + i * isz, isz);
                want.erase(want.find_last_not_of(U'\0') + 1);
                CHECK(u[i] == want);
            }
        }
        // UTF-8 (or bytes) back to the stored items: numpy's bytes exactly.
        CHECK(b2nd::encode_strings(a.dtype(), s) == npy);
        ++n;
    }
    CHECK(n == 4);
    // A selection.
    const auto u5 = b2nd::AnyArray::open(dir + "/strings/str_U5.b2nd");
    const auto all = b2nd::read_strings(u5);  // shape (6, 7): row 1, columns 2 and 3
    CHECK(b2nd::read_strings(u5, b2nd::parse_selection("1, 2:4")) ==
          std::vector<std::string>(all.begin() + 9, all.begin() + 11));
}

TEST_CASE("strings: written from strings; what does not fit is refused by name",
          "[array][records]") {
    b2nd::test::TempDir tmp;
    auto s = b2nd::AnyArray::create(tmp / "s.b2nd", b2nd::DType::parse("|S5"), {4});
    b2nd::write_strings(s, b2nd::parse_selection("0:3"), {"ab", std::string("a\0b", 3), "12345"});
    CHECK(b2nd::read_strings(s) ==
          std::vector<std::string>{"ab", std::string("a\0b", 3), "12345", ""});
    CHECK_THROWS_WITH(b2nd::write_strings(s, b2nd::parse_selection("3"), {"123456"}),
                      Catch::Contains("value 0 has 6 bytes") && Catch::Contains("|S5") &&
                          Catch::Contains("s.b2nd"));
    auto u = b2nd::AnyArray::create(tmp / "u.b2nd", b2nd::DType::parse("<U3"), {3});
    b2nd::write_strings(u, b2nd::parse_selection(":"), {"中文😀", "é", ""});
    CHECK(b2nd::read_strings(u) == std::vector<std::string>{"中文😀", "é", ""});
    CHECK(b2nd::read_u32strings(u)[0] == U"中文😀");
    CHECK_THROWS_WITH(b2nd::write_strings(u, b2nd::parse_selection("0"), {"abcd"}),
                      Catch::Contains("4 code points"));
    CHECK_THROWS_WITH(b2nd::write_strings(u, b2nd::parse_selection("0"), {"\xff"}),
                      Catch::Contains("not UTF-8"));
    b2nd::write_strings(u, b2nd::parse_selection("1"), std::vector<std::u32string>{U"xyz"});
    CHECK(b2nd::read_strings(u)[1] == "xyz");
    // A big-endian U array: code points swapped on the way in and out.
    auto be = b2nd::AnyArray::create(tmp / "be.b2nd", b2nd::DType::parse(">U2"), {1});
    b2nd::write_strings(be, b2nd::parse_selection(":"), {"Ω"});
    CHECK(be.read()[3] == 0xa9);  // U+03A9, big-endian: 00 00 03 a9
    CHECK(b2nd::read_strings(be)[0] == "Ω");
    auto f = b2nd::AnyArray::create(tmp / "f.b2nd", b2nd::DType::parse("<f4"), {1});
    CHECK_THROWS_AS(b2nd::read_strings(f), b2nd::UsageError);
}

TEST_CASE("strings: U arrays we create get python-blosc2's default filters", "[array][records]") {
    b2nd::test::TempDir tmp;
    const auto u = b2nd::AnyArray::create(tmp / "u.b2nd", b2nd::DType::parse("<U6"), {10});
    REQUIRE(u.compression().filters.size() == 1);
    CHECK(u.compression().filters[0].id == b2nd::Filter::shuffle);
    CHECK(u.compression().filters[0].meta == 4);  // UCS-4 code units, python's filters_meta 4
    b2nd::CreateOptions o;
    o.compression.codec = b2nd::Codec::lz4;  // explicit parameters: as given (python's rule)
    const auto e = b2nd::AnyArray::create(tmp / "e.b2nd", b2nd::DType::parse("<U6"), {10}, o);
    CHECK(e.compression().filters[0].meta == 0);
    const auto s = b2nd::AnyArray::create(tmp / "s.b2nd", b2nd::DType::parse("|S6"), {10});
    CHECK(s.compression().filters[0].meta == 0);
}

TEST_CASE("strings: embedded NULs stay, units that are no scalar value are refused",
          "[array][records]") {
    b2nd::test::TempDir tmp;
    const std::vector<std::uint32_t> units = {'a', 0, 'b', 0, 0xd800, 'c'};  // two <U3 items
    const auto u = b2nd::AnyArray::create_from(
        tmp / "u.b2nd", b2nd::DType::parse("<U3"), {2},
        {reinterpret_cast<const std::uint8_t*>(units.data()), units.size() * 4});
    CHECK(b2nd::read_strings(u, b2nd::parse_selection("0")) ==
          std::vector<std::string>{std::string("a\0b", 3)});
    CHECK_THROWS_WITH(b2nd::read_strings(u),
                      Catch::Contains("item 1") && Catch::Contains("no Unicode scalar value"));
    CHECK(b2nd::read_u32strings(u)[1] ==
          std::u32string{U'\0', static_cast<char32_t>(0xd800), U'c'});
}
