// python-blosc2's msgpack conventions in b2nd::Value: tuples (lists headed by "__tuple__"),
// references and recipes (ext 43), whole Blosc2 objects (ext 42), read from the corpus's
// vlmeta/attrs.b2nd and written back byte for byte.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>
#include <b2nd/objects.hpp>

#include "support/bytes.hpp"
#include "support/files.hpp"
#include "support/json.hpp"
#include "support/reference.hpp"

using b2nd::Value;

TEST_CASE("value: tuples, references and Blosc2 objects made and recognised", "[value][python]") {
    const Value t = Value::tuple({1, 2.5, "x"});
    CHECK(t.is_tuple());
    CHECK(t.size() == 4);
    CHECK(t.tuple_items() == Value::Array{1, 2.5, "x"});
    CHECK(t.to_python_json() == "[1, 2.5, \"x\"]");
    CHECK(t.to_json() == "[\"__tuple__\", 1, 2.5, \"x\"]");  // the lossless form keeps the head
    // A list whose head is not the marker is not a tuple, wherever the marker is.
    CHECK(!Value(Value::Array{1, "__tuple__"}).is_tuple());
    CHECK(!Value(Value::Array{}).is_tuple());
    CHECK_THROWS_AS(Value(Value::Array{1}).tuple_items(), b2nd::UsageError);

    const Value ref =
        Value::reference(Value::map({{"kind", "urlpath"}, {"version", 1}, {"urlpath", "a.b2nd"}}));
    CHECK(ref.is_reference());
    CHECK(ref.ext_type() == 43);
    CHECK(ref.reference()["urlpath"].as<std::string>() == "a.b2nd");
    CHECK(ref.to_python_json() ==
          R"({"$ref": {"kind": "urlpath", "version": 1, "urlpath": "a.b2nd"}})");
    // {"$ref": ...} reads back as the same ext 43 value.
    CHECK(Value::from_json(ref.to_python_json()) == ref);
    CHECK_THROWS_AS(Value::reference(Value(3)), b2nd::UsageError);
    CHECK_THROWS_AS(Value(3).reference(), b2nd::UsageError);
    // An ext 43 whose payload is not msgpack is shown in the generic form, not lost.
    const Value broken = Value::ext(43, {0xc1});
    CHECK(broken.to_python_json() == R"({"$ext": 43, "$bytes": "c1"})");
    CHECK_THROWS_AS(broken.reference(), b2nd::FormatError);
    // ext 42 that is not a frame says so instead of failing the whole value.
    CHECK(Value::blosc2_object({1, 2, 3}).to_python_json().find("\"error\"") != std::string::npos);
    CHECK_THROWS_AS(b2nd::open_blosc2_object(Value(1)), b2nd::UsageError);
    CHECK_THROWS_AS(b2nd::open_blosc2_object(Value::blosc2_object({1, 2, 3})), b2nd::FormatError);
}

TEST_CASE("value: python-blosc2's attribute conventions from the corpus read and write back",
          "[value][python][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string dir = b2nd::test::corpus_dir() + "/stores";
    const b2nd::test::Json m = b2nd::test::load_json_file(dir + "/manifest.json");
    const b2nd::AnyArray a = b2nd::AnyArray::open(dir + "/vlmeta/attrs.b2nd");
    int n = 0;
    for (const auto& c : m["cases"].as_array()) {
        if (c["kind"].as_string() != "vlmeta") {
            continue;
        }
        for (const auto& v : c["vlmeta"].as_array()) {
            const std::string name = v["name"].as_string();
            INFO(name);
            const auto want = b2nd::test::hex(v["msgpack_hex"].as_string());
            const Value got = a.attrs().get(name);
            // Written back as python-blosc2 wrote it.
            CHECK(got.to_msgpack() == want);
            if (name == "tuple" || name == "empty_tuple") {
                CHECK(got.is_tuple());
            }
            if (name == "mixed") {
                CHECK(!got.is_tuple());
            }
            if (name.rfind("ref_", 0) == 0 || name == "recipe") {
                CHECK(got.is_reference());
                CHECK(got.reference().find("kind") != nullptr);
            }
            if (name == "array" || name == "holder") {
                const Value& obj = name == "array" ? got : got["arr"];
                REQUIRE(obj.is_blosc2_object());
                const b2nd::AnyArray inner = b2nd::open_blosc2_object(obj);
                B2ND_REQUIRE_SAME_BYTES(
                    inner.read(),
                    b2nd::test::read_npy_payload(dir + "/" + v["ext42_npy"].as_string()).data);
            }
            ++n;
        }
    }
    CHECK(n == 11);
}
