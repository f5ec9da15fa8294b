// b2nd::Value as JSON: both ways for every kind of value, strict output (no NaN or Infinity
// tokens), tagged forms for what JSON cannot say, output linear in the value's size, and nesting
// bounded with a clear error.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

using b2nd::Value;
using Catch::Matchers::Contains;

namespace {

std::vector<std::uint8_t> from_base64(const std::string& text) {
    const std::string digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::vector<std::uint8_t> out;
    std::uint32_t acc = 0;
    int bits = 0;
    for (const char c : text) {
        const std::size_t d = digits.find(c);
        if (d == std::string::npos) {
            break;  // '=' padding
        }
        acc = (acc << 6) | static_cast<std::uint32_t>(d);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<std::uint8_t>((acc >> bits) & 0xff));
        }
    }
    return out;
}

}  // namespace

TEST_CASE("value: JSON text both ways", "[array][attrs]") {
    const Value v = Value::from_json(
        R"({"a": [1, -2, 3.5, 1e3, true, null, "x\"y\u00e9"], "b": {"$bytes": "00ff"},)"
        R"( "c": 18446744073709551615, "d": -9223372036854775808, "e": NaN, "f": {}})");
    CHECK(v["a"][0].type() == Value::Type::integer);
    CHECK(v["a"][1].as<int>() == -2);
    CHECK(v["a"][2].type() == Value::Type::real);
    CHECK(v["a"][3].as<double>() == 1000.0);
    CHECK(v["a"][6].as<std::string>() == "x\"y\xc3\xa9");
    CHECK(v["b"].bytes() == std::vector<std::uint8_t>{0, 255});
    CHECK(v["c"].as<std::uint64_t>() == 18446744073709551615ULL);
    CHECK(v["d"].as<std::int64_t>() == INT64_MIN);
    CHECK(std::isnan(v["e"].as<double>()));
    CHECK(v["f"].size() == 0);
    CHECK(Value::from_json(v.to_json()) == v);
    CHECK(Value::from_json(v.to_json(2)) == v);
    CHECK(Value(0.1).to_json() == "0.1");
    CHECK(Value(2.0).to_json() == "2.0");
    CHECK(Value(-273.15).to_json() == "-273.15");
    const auto bytes = v.to_msgpack();
    const Value back = Value::from_msgpack({bytes.data(), bytes.size()});
    CHECK(back.to_json() == v.to_json());
    CHECK(back == v);
    for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "tru", "\"abc", "1 2",
                            "{\"$bytes\": \"0\"}", "[\"\\q\"]"}) {
        INFO(bad);
        CHECK_THROWS_AS(Value::from_json(bad), b2nd::UsageError);
    }
    CHECK_THROWS_WITH(Value::from_json("[1, x]"), Contains("character 5"));
    // msgpack extension values (fixext 4 of type 1) keep their type and bytes both ways.
    const std::vector<std::uint8_t> ext = {0xd6, 0x01, 'a', 'b', 'c', 'd'};
    const Value e = Value::from_msgpack({ext.data(), ext.size()});
    CHECK(e.type() == Value::Type::ext);
    CHECK(e.ext_type() == 1);
    CHECK(e.bytes() == std::vector<std::uint8_t>{'a', 'b', 'c', 'd'});
    CHECK(e.to_msgpack() == ext);
    CHECK(e.to_json() == R"({"$ext": 1, "$bytes": "61626364"})");
    CHECK(Value::from_json(e.to_json()) == e);
}

TEST_CASE("value: JSON output is strict: non-finite floats are tagged", "[array][attrs]") {
    const Value v(Value::Array{std::nan(""), HUGE_VAL, -HUGE_VAL, 1.5});
    const std::string j = v.to_json();
    CHECK(j == R"([{"$float": "NaN"}, {"$float": "Infinity"}, {"$float": "-Infinity"}, 1.5])");
    const Value back = Value::from_json(j);
    CHECK(std::isnan(back[0].as<double>()));
    CHECK(back[1].as<double>() == HUGE_VAL);
    CHECK(back[2].as<double>() == -HUGE_VAL);
    CHECK_THROWS_WITH(Value::from_json(R"({"$float": "nan"})"), Contains("\"$float\" must be"));
    // Python's json writes bare NaN and Infinity: still read.
    CHECK(Value::from_json("-Infinity").as<double>() == -HUGE_VAL);
}

TEST_CASE("value: maps with keys JSON cannot hold go through {\"$map\": pairs}", "[array][attrs]") {
    const Value m = Value::map({{Value(1), "one"}, {Value(Value::Array{1, 2}), Value(true)}});
    CHECK(m.to_json() == R"({"$map": [[1, "one"], [[1, 2], true]]})");
    CHECK(Value::from_json(m.to_json()) == m);
    CHECK(Value::from_json(m.to_json(2)) == m);
    // A map of string keys that reads like a tag is written as pairs too, so it stays a map.
    for (const Value& lookalike :
         {Value::map({{"$bytes", "00"}}), Value::map({{"$float", "NaN"}}),
          Value::map({{"$map", Value::Array{}}}), Value::map({{"$ext", 1}, {"$bytes", "61"}})}) {
        INFO(lookalike.to_json());
        CHECK(lookalike.to_json().rfind("{\"$map\": ", 0) == 0);
        const Value back = Value::from_json(lookalike.to_json());
        CHECK(back.type() == Value::Type::map);
        CHECK(back == lookalike);
    }
    CHECK_THROWS_WITH(Value::from_json(R"({"$map": [[1]]})"), Contains("[key, value] pairs"));
}

TEST_CASE("value: JSON of nested maps with map keys is linear (fuzzer finding)", "[array][attrs]") {
    // fuzz_msgpack found a 251-byte attribute of about a hundred nested one-entry maps whose keys
    // are maps: each level quoted its key's JSON text again, doubling the escapes per level
    // (18 s and 2 GB in to_json(2)).
    const std::vector<std::uint8_t> in = from_base64(
        "n5+fn5+fADRudQA9AP///////zI/bmT///8uMAAu/4FONGIyTmFOU4EA3AAAAD0A////////Lv+B2QAA3AAAPQD/"
        "////////gYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGB"
        "gYGBgYGBgYGBgdwAAD0A////////Lv//f////y7/gdkAANwAAAAAPXsiYSI6Dg4ODg4ODg4ODg4ODg4ODg4ODg4O"
        "Dg4AAGA1ADlIeg4ODg4ODg4ODmRkZGTRRiJ9ff///////y7/fwAt////Pf////8u//9///8=");
    REQUIRE(in.size() == 251);
    const Value v = Value::from_msgpack({in.data(), in.size()});
    const std::string j = v.to_json(2);
    CHECK(j.size() < 200 * in.size());
    CHECK(Value::from_json(j) == v);
    // Built directly: 100 levels of {{...}: nil}.
    Value deep;
    for (int i = 0; i < 100; ++i) {
        deep = Value::map({{deep, Value()}});
    }
    const std::string dj = deep.to_json(2);
    CHECK(dj.size() < 100 * 100 * 4);
    CHECK(Value::from_json(dj) == deep);
    const auto packed = deep.to_msgpack();
    CHECK(Value::from_msgpack({packed.data(), packed.size()}).to_json() == deep.to_json());
}

TEST_CASE("value: bytes that are not UTF-8 go out as \\udcXX and come back (fuzzer finding)",
          "[array][attrs]") {
    // Python's surrogateescape: a string holding byte 0x88 (a file name that is not UTF-8), as
    // a value and as a map key, writes \udc88 and reads back as that byte, not as U+DC88.
    const Value v = Value::map({{"$by\x88tes", Value("x\xff")}});
    const std::string json = v.to_json();
    CHECK(json == "{\"$by\\udc88tes\": \"x\\udcff\"}");
    CHECK(Value::from_json(json) == v);
    CHECK(Value::from_json("\"\\udc80\"").as<std::string>() == "\x80");
    // Pairs still make one code point; halves of one, or escapes of ASCII bytes, are refused.
    CHECK(Value::from_json("\"\\ud83d\\ude00\"").as<std::string>() == "\xf0\x9f\x98\x80");
    for (const char* bad :
         {"\"\\ud83d\"", "\"\\ud83dx\"", "\"\\ud83d\\u0041\"", "\"\\ude00\"", "\"\\udc41\""}) {
        INFO(bad);
        CHECK_THROWS_WITH(Value::from_json(bad), Catch::Contains("surrogate"));
    }
}

TEST_CASE("value: nesting deeper than 256 levels is refused both ways", "[array][attrs]") {
    Value deep;
    for (int i = 0; i < 300; ++i) {
        deep = Value(Value::Array{deep});
    }
    CHECK_THROWS_AS(deep.to_json(), b2nd::UsageError);
    CHECK_THROWS_WITH(deep.to_json(), Contains("nested deeper than 256"));
    CHECK_THROWS_WITH(Value::from_json(std::string(300, '[') + std::string(300, ']')),
                      Contains("nested deeper than 256"));
    const auto packed = deep.to_msgpack();
    CHECK_THROWS_AS(Value::from_msgpack({packed.data(), packed.size()}), b2nd::FormatError);
}

TEST_CASE("value: a type mismatch says what the value is and what was asked", "[array][attrs]") {
    CHECK_THROWS_WITH(Value("abc").as<int>(), R"(the value "abc" is a string, not an integer)");
    CHECK_THROWS_WITH(Value(2.5).as<std::string>(), "the value 2.5 is a float, not a string");
    CHECK_THROWS_WITH(Value().as<bool>(), "the value null is nil, not a bool");
    CHECK_THROWS_WITH(Value(-1).as<unsigned>(), Contains("out of the range [0, 4294967295]"));
    CHECK_THROWS_WITH(Value(std::string(100, 'x')).as<double>(),
                      Contains("xxx...\" is") || Contains("xxx... is"));
}
