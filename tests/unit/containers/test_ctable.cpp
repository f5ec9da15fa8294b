// python-blosc2's CTable read (ctable.hpp) from ../shared/corpus/records/ctable, both store
// forms: the schema, live and physical rows, every column as the manifest expects it
// (fixed-width columns and codes against numpy's .npy, utf8 and dictionary values against
// python's JSON, the .notnull mask), and computed columns refused by name.
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/ctable.hpp>
#include <b2nd/error.hpp>
#include <b2nd/store.hpp>

#include "support/files.hpp"
#include "support/json.hpp"
#include "support/record_cases.hpp"
#include "support/reference.hpp"
#include "support/temp_dir.hpp"

using b2nd::Value;
using b2nd::test::Json;

TEST_CASE("ctable: the corpus table reads as python wrote it, .b2d and .b2z",
          "[array][records][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const b2nd::test::RecordCases rc = b2nd::test::record_cases({"ctable"});
    const std::string& dir = rc.dir;
    int tables = 0;
    for (const Json& c : rc.cases) {
        const std::string file = c["file"].as_string();
        INFO(file);
        const auto t = b2nd::CTable::open(dir + "/" + file);
        CHECK(t.nrows() == c["n_rows_live"].as_int());
        CHECK(t.physical_rows() == c["n_rows_physical"].as_int());
        const auto valid = t.valid_rows();
        for (const Json& d : c["deleted_positions"].as_array()) {
            CHECK_FALSE(valid.at(static_cast<std::size_t>(d.as_int())));
        }
        const auto& cols = c["columns"].as_array();
        REQUIRE(t.columns().size() == cols.size());
        for (std::size_t i = 0; i < cols.size(); ++i) {
            const Json& want = cols[i];
            const std::string name = want["name"].as_string();
            INFO(name);
            const b2nd::CTableColumn& got = t.columns()[i];
            CHECK(got.name == name);
            CHECK(got.kind == want["kind"].as_string());
            CHECK(got.key == want["key"].as_string());
            if (!want["dtype"].is_null()) {
                CHECK(got.dtype == want["dtype"].as_string());
            }
            const std::string read = want["read"].as_string();
            if (read == "export") {
                const auto npy = b2nd::test::read_npy_payload(dir + "/" + want["npy"].as_string());
                CHECK(t.column(name).read() == npy.data);
            } else if (read == "show") {
                const Value strings = Value::from_json(
                    b2nd::test::read_text(dir + "/" + want["expected_json"].as_string()));
                const auto u = t.utf8_column(name).read();
                REQUIRE(u.size() == strings.size());
                for (std::size_t r = 0; r < u.size(); ++r) {
                    CHECK(std::string(u[r]) == strings[r].as<std::string>());
                }
            } else if (read == "dictionary") {
                const auto codes =
                    b2nd::test::read_npy_payload(dir + "/" + want["codes_npy"].as_string());
                CHECK(t.column(name).read() == codes.data);
                const Value values = Value::from_json(
                    b2nd::test::read_text(dir + "/" + want["dict_json"].as_string()));
                CHECK(Value(t.dictionary_values(name).items()) == values);
                // Decoded: codes through the values, null for the null code.
                const Value decoded = Value::from_json(
                    b2nd::test::read_text(dir + "/" + want["decoded_json"].as_string()));
                const auto dict = t.dictionary_values(name).items();
                std::vector<std::int32_t> code(codes.data.size() / 4);
                std::memcpy(code.data(), codes.data.data(), codes.data.size());
                REQUIRE(decoded.size() == code.size());
                for (std::size_t r = 0; r < code.size(); ++r) {
                    CHECK((code[r] < 0 ? Value() : dict.at(static_cast<std::size_t>(code[r]))) ==
                          decoded[r]);
                }
            }
            if (want.has("notnull_npy")) {
                const auto mask = t.notnull(name);
                REQUIRE(mask.has_value());
                CHECK(
                    mask->read() ==
                    b2nd::test::read_npy_payload(dir + "/" + want["notnull_npy"].as_string()).data);
            } else {
                CHECK_FALSE(t.notnull(name).has_value());
            }
        }
        CHECK_THROWS_WITH(t.column("nope"),
                          Catch::Contains("no such column") && Catch::Contains("id, score"));
        CHECK_THROWS_WITH(t.column("name"), Catch::Contains("a utf8 column"));
        CHECK_THROWS_AS(t.utf8_column("id"), b2nd::UsageError);
        CHECK_THROWS_WITH(t.items("id", 0, 1), Catch::Contains("not a variable-length one"));
        CHECK_THROWS_WITH(t.items("name", 0, 1), Catch::Contains("a utf8 column"));
        ++tables;
    }
    CHECK(tables == 2);
}

TEST_CASE("ctable: computed columns are named and refused; a store that is no table is refused",
          "[array][records]") {
    b2nd::test::TempDir tmp;
    const std::string path = tmp / "t.b2d";
    {
        auto w = b2nd::StoreWriter::create(path);
        const std::vector<std::int64_t> x = {1, 2, 3};
        w.put("/_cols/x", b2nd::AnyArray::create_in_memory_from(
                              b2nd::DType::parse("<i8"), {3},
                              {reinterpret_cast<const std::uint8_t*>(x.data()), 24}));
        const std::vector<std::uint8_t> live = {1, 1, 0};
        w.put("/_valid_rows", b2nd::AnyArray::create_in_memory_from(b2nd::DType::parse("|b1"), {3},
                                                                    {live.data(), 3}));
        w.commit();
    }
    CHECK_THROWS_WITH(b2nd::CTable::open(path), Catch::Contains("not a CTable"));
    {
        // /_meta as python writes it: a super-chunk whose vlmeta holds kind and schema.
        auto w = b2nd::StoreWriter::open(path);
        auto meta = b2nd::AnyArray::create_in_memory(b2nd::DType::parse("|u1"), {1});
        const auto kind = Value("ctable").to_msgpack();
        meta.set_vlmeta("kind", {kind.data(), kind.size()});
        const auto schema =
            Value(R"({"version": 2, "columns": [{"name": "x", "kind": "int64"}], )"
                  R"("computed_columns": [{"name": "y", "expression": "o0 * 2", )"
                  R"("col_deps": ["x"], "dtype": "<i8"}, {"name": "z", "kind": "dsl", )"
                  R"("dsl_source": "def f(x): ...", "col_deps": ["x"], "dtype": "<f8"}]})")
                .to_msgpack();
        meta.set_vlmeta("schema", {schema.data(), schema.size()});
        w.put("/_meta", meta);
        w.commit();
    }
    const auto t = b2nd::CTable::open(path);
    CHECK(t.nrows() == 2);
    CHECK(t.physical_rows() == 3);
    REQUIRE(t.columns().size() == 3);
    CHECK(t.columns()[1].kind == "computed");
    CHECK(t.column("x").read().size() == 24);
    CHECK_THROWS_WITH(t.column("y"),
                      Catch::Contains("computed column") && Catch::Contains("[\"x\"]"));
    CHECK_THROWS_WITH(t.column("z"), Catch::Contains("Python code, never executed"));
    CHECK_THROWS_WITH(t.items("z", 0, 1), Catch::Contains("computed column"));
}
