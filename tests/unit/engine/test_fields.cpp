// One field of a structured array (AnyArray::read_field, DType::field): every field of the
// records corpus's structured arrays, whole and over selections, against the bytes of the
// full records (a plain byte model: each element's bytes [offset, offset + width)).
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>

#include "support/files.hpp"
#include "support/json.hpp"
#include "support/record_cases.hpp"
#include "support/reference.hpp"

using b2nd::test::Json;

TEST_CASE("fields: every field of the corpus's structured arrays, whole and sliced",
          "[array][fields][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const b2nd::test::RecordCases rc = b2nd::test::record_cases({"structured"});
    const std::string& dir = rc.dir;
    int n = 0;
    for (const Json& c : rc.cases) {
        const b2nd::AnyArray a = b2nd::AnyArray::open(dir + "/" + c["file"].as_string());
        const auto all = b2nd::test::read_npy_payload(dir + "/" + c["npy"].as_string()).data;
        const auto isz = static_cast<std::size_t>(a.itemsize());
        for (const Json& f : c["fields"].as_array()) {
            const std::string name = f["name"].as_string();
            INFO(c["name"].as_string() << " field " << name);
            const auto path = a.dtype().field(name);
            REQUIRE(path.has_value());
            b2nd::DType dt;
            b2nd::Shape shape;
            const auto got = a.read_field(name, {}, &dt, &shape);
            CHECK(dt.str() == b2nd::DType::parse(f["dtype"].as_string()).str());
            CHECK(b2nd::to_string(shape) == b2nd::to_string([&] {
                      b2nd::Shape s;
                      for (const Json& e : f["shape"].as_array()) {
                          s.push_back(e.as_int());
                      }
                      return s;
                  }()));
            // The byte model: each element's field bytes, from the full records.
            const std::size_t width = got.size() / static_cast<std::size_t>(a.size());
            std::vector<std::uint8_t> want;
            for (std::size_t e = 0; e < static_cast<std::size_t>(a.size()); ++e) {
                const auto* p = all.data() + e * isz + static_cast<std::size_t>(path->offset);
                want.insert(want.end(), p, p + width);
            }
            B2ND_REQUIRE_SAME_BYTES(got, want);
            // A strided slice of the first axis: the same bytes for those elements.
            const b2nd::Selection sel = b2nd::parse_selection("1::3");
            const auto part = a.read_field(name, sel);
            const std::int64_t rows = (a.shape()[0] - 1 + 2) / 3;
            const std::size_t row = static_cast<std::size_t>(a.size() / a.shape()[0]) * width;
            std::vector<std::uint8_t> want_part;
            for (std::int64_t r = 0; r < rows; ++r) {
                const auto at = static_cast<std::size_t>(1 + 3 * r) * row;
                want_part.insert(want_part.end(), want.begin() + static_cast<std::ptrdiff_t>(at),
                                 want.begin() + static_cast<std::ptrdiff_t>(at + row));
            }
            B2ND_REQUIRE_SAME_BYTES(part, want_part);
            ++n;
        }
        CHECK_THROWS_WITH(a.read_field("nope"),
                          Catch::Contains("nope") && Catch::Contains("fields"));
    }
    CHECK(n == 22);
    const b2nd::AnyArray plain =
        b2nd::AnyArray::open(b2nd::test::corpus_dir() + "/stores/lazy/a.b2nd");
    CHECK_THROWS_WITH(plain.read_field("x"), Catch::Contains("not a structured dtype"));
}
