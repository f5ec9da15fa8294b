// Field views (AnyArray::field, NDArray<T>::field<F>, write_field): every field of the records
// corpus's structured arrays read through the view, whole, by slices, elements and points,
// against a plain byte model of the records; writes through a view change that field's bytes
// of the touched elements and nothing else (byte model again), and re-encode only touched
// chunks.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>

#include "support/files.hpp"
#include "support/json.hpp"
#include "support/record_cases.hpp"
#include "support/reference.hpp"
#include "support/temp_dir.hpp"

using b2nd::test::Json;

namespace {

/// Each element's bytes [offset, offset + width) of the records in `all`.
std::vector<std::uint8_t> field_bytes(const std::vector<std::uint8_t>& all,
                                      std::size_t isz,
                                      std::size_t offset,
                                      std::size_t width) {
    std::vector<std::uint8_t> out;
    for (std::size_t e = 0; e < all.size() / isz; ++e) {
        out.insert(out.end(), all.begin() + static_cast<std::ptrdiff_t>(e * isz + offset),
                   all.begin() + static_cast<std::ptrdiff_t>(e * isz + offset + width));
    }
    return out;
}

}  // namespace

TEST_CASE("field views: every corpus field read whole, by slices, elements and points",
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
            const b2nd::AnyArray v = a.field(name);
            std::int64_t sub = 1;
            b2nd::Shape shape = a.shape();
            for (const std::int64_t e : path->shape) {
                sub *= e;
                shape.push_back(e);
            }
            const auto width = static_cast<std::size_t>(path->type->itemsize() * sub);
            CHECK(v.shape() == shape);
            CHECK(v.dtype().str() == path->type->str());
            const auto want = field_bytes(all, isz, static_cast<std::size_t>(path->offset), width);
            B2ND_REQUIRE_SAME_BYTES(v.read(), want);
            // A slice of the first axis.
            const auto part = v.read(b2nd::parse_selection("1::3"));
            const std::size_t row = static_cast<std::size_t>(a.size() / a.shape()[0]) * width;
            std::vector<std::uint8_t> want_part;
            for (std::int64_t r = 1; r < a.shape()[0]; r += 3) {
                const auto at = static_cast<std::size_t>(r) * row;
                want_part.insert(want_part.end(), want.begin() + static_cast<std::ptrdiff_t>(at),
                                 want.begin() + static_cast<std::ptrdiff_t>(at + row));
            }
            B2ND_REQUIRE_SAME_BYTES(part, want_part);
            // The last element (an edge block), one item of it.
            std::vector<std::int64_t> last;
            for (const std::int64_t e : v.shape()) {
                last.push_back(e - 1);
            }
            const auto item = static_cast<std::size_t>(v.itemsize());
            std::vector<std::uint8_t> one(item);
            v.read_element(last.data(), one.data());
            CHECK(
                std::equal(one.begin(), one.end(), want.end() - static_cast<std::ptrdiff_t>(item)));
            ++n;
        }
    }
    CHECK(n == 22);
}

TEST_CASE("field views: typed, nested, and refused when the type or name is wrong",
          "[array][fields][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string dir = b2nd::test::corpus_dir() + "/records/structured";
    const b2nd::AnyArray a = b2nd::AnyArray::open(dir + "/rec_nested.b2nd");
    const auto want = b2nd::test::read_npy_payload(dir + "/expected/rec_nested.pos.x.npy").data;
    const b2nd::NDArray<double> px = b2nd::NDArray<double>(a.field("pos.x"));
    const std::vector<double> got = px.read();
    REQUIRE(got.size() * 8 == want.size());
    CHECK(std::memcmp(got.data(), want.data(), want.size()) == 0);
    CHECK(px(7) == got[7]);
    // Foreign byte order converted, as for scalars.
    const b2nd::AnyArray be = b2nd::AnyArray::open(dir + "/rec_bigendian.b2nd");
    const auto bf = b2nd::NDArray<double>(be.field("bf")).read();
    const auto bf_npy = b2nd::test::read_npy_payload(dir + "/expected/rec_bigendian.bf.npy").data;
    for (std::size_t i = 0; i < bf.size(); ++i) {
        std::uint64_t raw = 0;
        std::memcpy(&raw, bf_npy.data() + 8 * i, 8);
        raw = __builtin_bswap64(raw);
        double d = 0;
        std::memcpy(&d, &raw, 8);
        CHECK(bf[i] == d);
    }
    CHECK_THROWS_WITH(b2nd::NDArray<float>(a.field("pos.x")), Catch::Contains("<f8"));
    CHECK_THROWS_WITH(a.field("pos.z"), Catch::Contains("pos.z"));
}

TEST_CASE("field views: writes change one field of the touched elements and nothing else",
          "[array][fields][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    b2nd::test::TempDir tmp;
    const std::string dir = b2nd::test::corpus_dir() + "/records/structured";
    b2nd::AnyArray::open(dir + "/rec_nested.b2nd").save(tmp / "r.b2nd");
    b2nd::OpenOptions w;
    w.writable = true;
    b2nd::AnyArray a = b2nd::AnyArray::open(tmp / "r.b2nd", w);
    const auto before = a.read();
    const auto isz = static_cast<std::size_t>(a.itemsize());
    const auto path = *a.dtype().field("pos.y");
    // Elements 2, 5, ..., 29 (chunks of 16: chunks 0 and 1 touched, chunk 2 not).
    std::vector<double> values;
    for (int i = 2; i < 30; i += 3) {
        values.push_back(1000.0 + i);
    }
    const auto chunk2_before = a.frame().chunk(2).bytes;
    const std::vector<std::uint8_t> c2(chunk2_before.begin(), chunk2_before.end());
    b2nd::NDArray<double> py(a.field("pos.y"));
    py.write(b2nd::parse_selection("2:30:3"), values);
    // The byte model: the records before, with pos.y of those elements replaced.
    std::vector<std::uint8_t> want = before;
    for (std::size_t k = 0; k < values.size(); ++k) {
        std::memcpy(want.data() + (2 + 3 * k) * isz + static_cast<std::size_t>(path.offset),
                    &values[k], 8);
    }
    B2ND_REQUIRE_SAME_BYTES(a.read(), want);
    // Through the view too, and the untouched chunk's bytes as they were.
    CHECK(py(5) == 1005.0);
    const auto chunk2 = a.frame().chunk(2).bytes;
    CHECK(std::vector<std::uint8_t>(chunk2.begin(), chunk2.end()) == c2);
    // write_field with one value for all, and a nested struct field as a whole.
    const std::int32_t seven = 7;
    a.write_field("id", b2nd::parse_selection(":"),
                  {reinterpret_cast<const std::uint8_t*>(&seven), 4});
    const auto ids = b2nd::NDArray<std::int32_t>(a.field("id")).read();
    CHECK(std::all_of(ids.begin(), ids.end(), [](std::int32_t v) { return v == 7; }));
    B2ND_REQUIRE_SAME_BYTES(a.field("pos").read(),
                            field_bytes(want, isz, static_cast<std::size_t>(path.offset) - 8, 16));
    // A read-only parent refuses.
    const b2nd::AnyArray ro = b2nd::AnyArray::open(tmp / "r.b2nd");
    CHECK_THROWS_AS(ro.field("id").write(b2nd::parse_selection("0"),
                                         {reinterpret_cast<const std::uint8_t*>(&seven), 4}),
                    b2nd::Error);
}

TEST_CASE("field views: empty arrays and empty sub-array fields", "[array][fields]") {
    const auto none =
        b2nd::AnyArray::create_in_memory(b2nd::DType::parse("[('a', '<i4'), ('b', '<f8')]"), {0});
    CHECK(none.field("b").read().empty());
    const auto empty_sub = b2nd::AnyArray::create_in_memory(
        b2nd::DType::parse("[('a', '<i4'), ('b', '<f8', (0,))]"), {3});
    const b2nd::AnyArray v = empty_sub.field("b");
    CHECK(v.shape() == b2nd::Shape{3, 0});
    CHECK(v.read().empty());
    CHECK(empty_sub.field("a").read().size() == 12);
}
