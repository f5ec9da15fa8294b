// Attributes as values: the corpus's meta_* cases (vlmeta and user metalayers that python-blosc2's
// conventions produce) decode to what manifest.json says they mean, typed gets convert or refuse
// with the file and attribute named, writes store msgpack other readers decode, malformed msgpack
// is a FormatError, and JSON text goes both ways.
#include <cmath>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../../support/files.hpp"
#include "../../support/json.hpp"
#include "../../support/temp_dir.hpp"

using b2nd::AnyArray;
using b2nd::Value;
using b2nd::test::Json;
using Catch::Matchers::Contains;

namespace {

std::vector<std::uint8_t> unhex(const std::string& h) {
    std::vector<std::uint8_t> out;
    for (std::size_t i = 0; i + 1 < h.size(); i += 2) {
        out.push_back(static_cast<std::uint8_t>(std::stoi(h.substr(i, 2), nullptr, 16)));
    }
    return out;
}

}  // namespace

TEST_CASE("attrs: the corpus's vlmeta and metalayers decode to their meaning", "[array][attrs]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string root = b2nd::test::corpus_dir();
    const Json m = b2nd::test::load_json_file(root + "/manifest.json");
    int cases = 0, values = 0, compared = 0;
    for (const Json& c : m["cases"].as_array()) {
        const std::string file = c["file"].as_string();
        if (file.rfind("meta_", 0) != 0) {
            continue;
        }
        ++cases;
        INFO(file);
        const AnyArray a = AnyArray::open(root + "/" + file);
        const b2nd::Attrs attrs = a.attrs();
        for (const char* kind : {"metalayers", "vlmetalayers"}) {
            const bool vl = std::string(kind) == "vlmetalayers";
            for (const Json& e : c[kind].as_array()) {
                const std::string name = e["name"].as_string();
                INFO(name);
                const auto stored = vl ? a.vlmeta(name) : a.metalayer(name);
                REQUIRE(stored.has_value());
                REQUIRE(*stored == unhex(e["msgpack_hex"].as_string()));
                const Value v = vl ? attrs.get(name) : b2nd::metalayer_value(a, name);
                ++values;
                // Encoding what we decoded and decoding it again gives the same value.
                const auto again = v.to_msgpack();
                CHECK(Value::from_msgpack({again.data(), again.size()}) == v);
                const std::string meaning = e["meaning"].as_string();
                try {
                    if (v.type() == Value::Type::binary) {
                        throw std::runtime_error("a description, not the value");
                    }
                    const Json j = Json::parse(meaning);
                    CHECK(b2nd::test::same_value(v, j));
                    ++compared;
                } catch (const std::exception&) {
                    // Meanings with a note after the value ("..." (msgpack str16, 210 chars)).
                }
            }
        }
        if (c["vlmetalayers"].as_array().size() >= 4) {
            CHECK(attrs.get<double>("scale") == -0.125);
            CHECK(attrs.get("blob").bytes() == std::vector<std::uint8_t>{0xf0, 0xf1, 0xf2, 0xf3,
                                                                         0xf4, 0xf5, 0xf6, 0xf7,
                                                                         0xf8, 0xf9});
            const std::string history = attrs.get<std::string>("history");
            CHECK(history.size() == 210);
            CHECK(history.rfind("step00;step01;", 0) == 0);
            CHECK(attrs.get<Value>("attrs")["axes"].as<std::vector<std::string>>() ==
                  std::vector<std::string>{"t", "y", "x"});
            CHECK(attrs.get<Value>("attrs")["level"].as<std::int16_t>() == 300);
            CHECK(attrs.get("attrs").to_json() ==
                  R"({"title": "conformance corpus", "axes": ["t", "y", "x"], "fill": null, )"
                  R"("level": 300})");
            // Byte-identical re-encoding where python's msgpack uses the smallest forms.
            for (const char* name : {"history", "blob", "scale"}) {
                CHECK(attrs.get(name).to_msgpack() == *a.vlmeta(name));
            }
            // Typed gets that do not fit name the file, the attribute and the types.
            CHECK_THROWS_WITH(attrs.get<int>("scale"),
                              Contains(file) && Contains("'scale'") && Contains("float"));
            CHECK_THROWS_WITH(attrs.get<std::string>("blob"),
                              Contains("'blob'") && Contains("bytes") && Contains("string"));
            CHECK_THROWS_WITH(attrs.get<Value>("attrs")["level"].as<std::uint8_t>(),
                              Contains("300") && Contains("range"));
            CHECK_THROWS_WITH(attrs.get("nope"), Contains("'nope'") && Contains("no such"));
            CHECK(attrs.get_or<double>("nope", 2.5) == 2.5);
            // Iteration in stored order.
            std::vector<std::string> seen;
            for (const auto& [name, value] : attrs) {
                seen.push_back(name);
                CHECK(value == attrs.get(name));
            }
            CHECK(seen == a.vlmeta_names());
        }
        if (!c["metalayers"].as_array().empty()) {
            const Value calib = b2nd::metalayer_value(a, "calib");
            CHECK(calib["offset"].as<double>() == -273.15);
            CHECK(calib["valid"].as<bool>());
            CHECK(calib["neg"].as<int>() == -5);
            CHECK(calib["count"].as<std::int64_t>() > 1234567890000);
            CHECK(b2nd::metalayer_value(a, "units").as<std::string>() == "kelvin");
        }
    }
    CHECK(cases >= 3);
    CHECK(values >= 12);
    CHECK(compared >= 8);
}

TEST_CASE("attrs: writes store msgpack, read back after reopening", "[array][attrs]") {
    b2nd::test::TempDir dir;
    {
        AnyArray a = AnyArray::create(dir / "a.b2nd", b2nd::DType::parse("<f4"), {10, 10});
        b2nd::Attrs at = a.attrs();
        at["units"] = "K";
        at["n"] = 42;
        at["neg"] = -70000;
        at["big"] = std::uint64_t{1} << 63;
        at["mixed"] = Value(Value::Array{1, 2.5, "x", nullptr, true});
        at["calib"] = Value::map({{"offset", -273.15}, {"factor", 0.01}});
        at["raw"] = Value::binary({1, 2, 3});
        CHECK(at.size() == 7);
        CHECK(at.erase("n"));
        CHECK_FALSE(at.erase("n"));
        at["n"] = 43;
    }
    const AnyArray a = AnyArray::open(dir / "a.b2nd");
    const b2nd::Attrs at = a.attrs();
    // The bytes any msgpack reader decodes (spec forms written out by hand).
    CHECK(*a.vlmeta("units") == std::vector<std::uint8_t>{0xa1, 'K'});
    CHECK(*a.vlmeta("n") == std::vector<std::uint8_t>{0x2b});
    CHECK(*a.vlmeta("neg") == std::vector<std::uint8_t>{0xd2, 0xff, 0xfe, 0xee, 0x90});
    CHECK(*a.vlmeta("big") == std::vector<std::uint8_t>{0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0});
    CHECK(*a.vlmeta("raw") == std::vector<std::uint8_t>{0xc4, 3, 1, 2, 3});
    CHECK(at.get<std::string>("units") == "K");
    CHECK(at.get<int>("n") == 43);
    CHECK(at.get<long>("neg") == -70000);
    CHECK(at.get<std::uint64_t>("big") == std::uint64_t{1} << 63);
    CHECK_THROWS_AS(at.get<std::int64_t>("big"), b2nd::UsageError);
    CHECK_THROWS_AS(at.get<unsigned>("neg"), b2nd::UsageError);
    CHECK(at.get("mixed")[1].as<double>() == 2.5);
    CHECK(at.get("mixed")[3].is_nil());
    CHECK(at.get<std::map<std::string, double>>("calib").at("factor") == 0.01);
    CHECK(at.get<double>("n") == 43.0);  // integers read as floats
    CHECK(at.names() ==
          std::vector<std::string>{"units", "neg", "big", "mixed", "calib", "raw", "n"});
    // A read-only array refuses writes.
    b2nd::Attrs ro = a.attrs();
    CHECK_THROWS_AS(ro["x"] = 1, b2nd::Error);
}

TEST_CASE("attrs: malformed msgpack is a FormatError naming the attribute", "[array][attrs]") {
    b2nd::test::TempDir dir;
    AnyArray a = AnyArray::create(dir / "a.b2nd", b2nd::DType::parse("<u1"), {4});
    const std::vector<std::pair<const char*, std::vector<std::uint8_t>>> bad = {
        {"huge_array", {0xdd, 0xff, 0xff, 0xff, 0xff}},  // 4 G elements claimed, none there
        {"huge_str", {0xdb, 0x7f, 0xff, 0xff, 0xff, 'a'}},
        {"truncated", {0x92, 0x01}},
        {"trailing", {0x01, 0x02}},
        {"reserved", {0xc1}},
        {"empty", {}},
    };
    for (const auto& [name, bytes] : bad) {
        a.set_vlmeta(name, {bytes.data(), bytes.size()});
    }
    std::vector<std::uint8_t> deep(100000, 0x91);  // arrays nested 100000 deep
    deep.push_back(0xc0);
    a.set_vlmeta("deep", {deep.data(), deep.size()});
    const b2nd::Attrs at = a.attrs();
    for (const char* name :
         {"huge_array", "huge_str", "truncated", "trailing", "reserved", "empty", "deep"}) {
        INFO(name);
        CHECK_THROWS_AS(at.get(name), b2nd::FormatError);
        CHECK_THROWS_WITH(at.get(name), Contains("a.b2nd") && Contains(std::string("'") + name));
    }
    CHECK_THROWS_AS(at.items(), b2nd::FormatError);
}

TEST_CASE("attrs: a string that is not UTF-8 is refused at write time", "[array][attrs]") {
    b2nd::test::TempDir tmp;
    auto a = b2nd::NDArray<float>::create(tmp / "a.b2nd", {4});
    CHECK_THROWS_WITH(a.any().attrs().set("x", b2nd::Value(std::string("\xff\xfe"))),
                      Catch::Matchers::Contains("is not valid UTF-8") &&
                          Catch::Matchers::Contains("python-blosc2 cannot read"));
    CHECK_FALSE(a.any().attrs().contains("x"));
    // Bytes are fine, and so is real UTF-8.
    a.any().attrs().set("b", b2nd::Value::binary({0xff, 0xfe}));
    a.any().attrs().set("u", b2nd::Value(std::string("gr\xc3\xbc\xc3\x9f"
                                                     "e")));
    CHECK(a.any().attrs().get("u").as<std::string>() ==
          "gr\xc3\xbc\xc3\x9f"
          "e");
}
