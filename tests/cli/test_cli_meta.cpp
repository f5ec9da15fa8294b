// b2nd meta and info --json's decoded metadata, run as a program: meta lists, gets, sets and
// deletes attributes that the library and other readers see as msgpack; info --json decodes the
// corpus's meta_* cases.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../support/files.hpp"
#include "../support/json.hpp"
#include "../support/temp_dir.hpp"
#include "run.hpp"

using b2nd::test::Json;
using b2nd::test::q;
using b2nd::test::run;
using b2nd::test::Run;
using Catch::Matchers::Contains;

TEST_CASE("cli: meta lists, gets, sets and deletes attributes; info --json decodes them",
          "[cli][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string root = b2nd::test::corpus_dir();
    const Json m = b2nd::test::load_json_file(root + "/manifest.json");
    b2nd::test::TempDir tmp;
    int checked = 0;
    for (const Json& c : m["cases"].as_array()) {
        const std::string file = c["file"].as_string();
        if (file.rfind("meta_", 0) != 0) {
            continue;
        }
        INFO(file);
        // info --json: every metalayer and vlmeta decoded, equal to the manifest's meaning where
        // that is JSON.
        Run r = run("info --json " + q(root + "/" + file));
        REQUIRE(r.status == 0);
        const Json info = Json::parse(r.output);
        for (const char* kind : {"metalayers", "vlmetalayers"}) {
            const Json& listed = info[std::string(kind) == "metalayers" ? "metalayers" : "vlmeta"];
            for (const Json& e : c[kind].as_array()) {
                const std::string name = e["name"].as_string();
                INFO(name);
                const Json* found = nullptr;
                for (const Json& x : listed.as_array()) {
                    if (x["name"].as_string() == name) {
                        found = &x;
                    }
                }
                REQUIRE(found != nullptr);
                REQUIRE(found->has("value"));
                if (name == "attrs" || name == "units" || name == "scale") {
                    const Json want = Json::parse(e["meaning"].as_string());
                    CHECK((*found)["value"].kind() == want.kind());
                    if (name == "attrs") {
                        CHECK((*found)["value"]["title"].as_string() == want["title"].as_string());
                        CHECK((*found)["value"]["level"].as_int() == 300);
                        CHECK((*found)["value"]["fill"].is_null());
                    } else if (name == "units") {
                        CHECK((*found)["value"].as_string() == "kelvin");
                    } else {
                        CHECK((*found)["value"].as_number() == -0.125);
                    }
                    ++checked;
                }
            }
        }
        if (c["vlmetalayers"].as_array().empty()) {
            continue;
        }
        // meta on a copy.
        const std::string copy = tmp / "m.b2nd";
        REQUIRE(run("convert " + q(root + "/" + file) + " " + q(copy) + " --overwrite").status ==
                0);
        r = run("meta " + q(copy));
        REQUIRE(r.status == 0);
        CHECK_THAT(r.output, Contains("scale = -0.125\n") &&
                                 Contains("blob = {\"$bytes\": \"f0f1f2f3f4f5f6f7f8f9\"}\n") &&
                                 Contains("attrs = {\"title\": \"conformance corpus\""));
        r = run("meta " + q(copy) + " --json");
        REQUIRE(r.status == 0);
        CHECK(Json::parse(r.output)["vlmeta"]["attrs"]["axes"].as_array().size() == 3);
        CHECK(Json::parse(r.output)["metalayers"]["b2nd"].as_array().size() == 7);
        r = run("meta " + q(copy) + " attrs");
        REQUIRE(r.status == 0);
        CHECK(Json::parse(r.output)["level"].as_int() == 300);
        CHECK_THAT(r.output, Contains("\n  \"title\""));  // indented
        REQUIRE(run("meta " + q(copy) + " units '\"K\"'").status == 0);
        REQUIRE(run("meta " + q(copy) + " calib '{\"offset\": -273.15, \"n\": [1, 2]}'").status ==
                0);
        {
            const b2nd::AnyArray a = b2nd::AnyArray::open(copy);
            CHECK(*a.vlmeta("units") == std::vector<std::uint8_t>{0xa1, 'K'});
            CHECK(a.attrs().get("calib")["offset"].as<double>() == -273.15);
            CHECK(a.attrs().get("calib")["n"].as<std::vector<int>>() == std::vector<int>{1, 2});
        }
        REQUIRE(run("meta " + q(copy) + " units --delete").status == 0);
        CHECK_FALSE(b2nd::AnyArray::open(copy).vlmeta("units").has_value());
        r = run("meta " + q(copy) + " units --delete");
        CHECK(r.status == 2);
        r = run("meta " + q(copy) + " x '{\"a\": }'");
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains("VALUE: JSON") && Contains("--string"));
        r = run("meta " + q(copy) + " nope");
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains("'nope'"));

        // A vlmeta that is not msgpack: shown as hex by info and meta, never a crash.
        {
            b2nd::OpenOptions w;
            w.writable = true;
            b2nd::AnyArray a = b2nd::AnyArray::open(copy, w);
            const std::vector<std::uint8_t> junk = {0xdd, 0xff, 0xff, 0xff, 0xff, 0x01};
            a.set_vlmeta("junk", {junk.data(), junk.size()});
        }
        r = run("info --json " + q(copy));
        REQUIRE(r.status == 0);
        CHECK_THAT(r.output, Contains("\"hex\": \"ddffffffff01\", \"not_msgpack\""));
        r = run("info " + q(copy));
        CHECK_THAT(r.output, Contains("junk (6 bytes) not msgpack: ddffffffff01"));
        r = run("meta " + q(copy));
        REQUIRE(r.status == 0);
        CHECK_THAT(r.output, Contains("vlmeta    junk = {\"$not_msgpack\": \"ddffffffff01\"}"));
        r = run("meta " + q(copy) + " junk");
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains("'junk'") && Contains("msgpack"));
    }
    CHECK(checked >= 6);
}

TEST_CASE("cli: meta reads metalayers too, saying which is which", "[cli]") {
    b2nd::test::TempDir tmp;
    b2nd::CreateOptions o;
    o.metalayers.emplace_back("units", b2nd::Value("K").to_msgpack());
    (void)b2nd::NDArray<float>::create_from(tmp / "a.b2nd", {4}, std::vector<float>(4, 1.0F), o);
    const std::string a = tmp / "a.b2nd";
    REQUIRE(run("meta " + q(a) + " title 'hello' --string").status == 0);
    Run r = run("meta " + q(a));
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Contains("vlmeta    title = \"hello\"\n") &&
                             Contains("metalayer units = \"K\"\n") &&
                             Contains("metalayer b2nd = [0, 1, [4]"));
    r = run("meta " + q(a) + " units");  // info lists it; meta reads it
    CHECK(r.status == 0);
    CHECK(r.output == "\"K\"\n");
    r = run("meta " + q(a) + " units --delete");
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("metalayers cannot be removed"));
    r = run("meta " + q(a) + " nothing");
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("no attribute or metalayer 'nothing'"));
}

TEST_CASE("cli: meta takes a value from a file, from standard input, or as a plain string",
          "[cli]") {
    b2nd::test::TempDir tmp;
    (void)b2nd::NDArray<float>::create_from(tmp / "a.b2nd", {4}, std::vector<float>(4, 1.0F));
    const std::string a = tmp / "a.b2nd";
    // A JSON list of 400 KB: too long for a command line ("Argument list too long").
    std::string list = "[";
    for (int i = 0; i < 60000; ++i) {
        list += (i > 0 ? ", " : "") + std::to_string(i * 7);
    }
    list += "]";
    REQUIRE(list.size() > 400000);
    std::ofstream(tmp / "big.json") << list;
    REQUIRE(run("meta " + q(a) + " big @" + q(tmp / "big.json")).status == 0);
    const auto big = b2nd::AnyArray::open(a).attrs().get("big").as<std::vector<int>>();
    REQUIRE(big.size() == 60000);
    CHECK(big[59999] == 59999 * 7);
    // Standard input, as JSON and as a plain string.
    REQUIRE(run("meta " + q(a) + " cfg - < " + q(tmp / "big.json")).status == 0);
    CHECK(b2nd::AnyArray::open(a).attrs().get("cfg").size() == 60000);
    std::ofstream(tmp / "note.txt") << "line one\nline \"two\"";
    REQUIRE(run("meta " + q(a) + " note - --string < " + q(tmp / "note.txt")).status == 0);
    CHECK(b2nd::AnyArray::open(a).attrs().get("note").as<std::string>() ==
          "line one\nline \"two\"");
    // What comes from stdin loses the newline that ends it, as in a shell's $(...).
    REQUIRE(run("meta " + q(a) + " unit - --string", "printf 'kelvin\\n' |").status == 0);
    CHECK(b2nd::AnyArray::open(a).attrs().get("unit").as<std::string>() == "kelvin");
    REQUIRE(run("meta " + q(a) + " unit K --string").status == 0);
    CHECK(b2nd::AnyArray::open(a).attrs().get("unit").as<std::string>() == "K");
    // Without --string, K is not JSON: the message says what to do.
    const Run r = run("meta " + q(a) + " unit K");
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("for a plain string, add --string"));
    CHECK(run("meta " + q(a) + " x @" + q(tmp / "missing.json")).status == 2);
}

TEST_CASE("cli: info describes several paths, and names each it cannot read", "[cli]") {
    b2nd::test::TempDir tmp;
    (void)b2nd::NDArray<float>::create_from(tmp / "a.b2nd", {4}, std::vector<float>(4, 1.0F));
    (void)b2nd::NDArray<std::int16_t>::create_from(tmp / "b.b2nd", {2, 3},
                                                   std::vector<std::int16_t>(6, 2));
    std::ofstream(tmp / "c.txt") << "not an array";
    Run r = run("info " + q(tmp / "a.b2nd") + " " + q(tmp / "b.b2nd"));
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("shape       (4,)") && Contains("shape       (2, 3)"));
    r = run("info --json " + q(tmp / "a.b2nd") + " " + q(tmp / "b.b2nd"));
    REQUIRE(r.status == 0);
    const Json j = Json::parse(r.output);
    REQUIRE(j.as_array().size() == 2);
    CHECK(j.as_array()[1]["dtype"].as_string() == "<i2");
    r = run("info " + q(tmp / "a.b2nd") + " " + q(tmp / "c.txt") + " " + q(tmp / "b.b2nd"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("c.txt") && Contains("shape       (2, 3)"));
}

TEST_CASE("cli: meta and info show a file's own metadata as it is, its names made safe", "[cli]") {
    b2nd::test::TempDir tmp;
    const std::string a = tmp / "a.b2nd";
    b2nd::CreateOptions o;
    o.chunk_shape = {8};
    auto arr = b2nd::NDArray<double>::create_from(a, {16}, std::vector<double>(16, 1.0), o);
    // python-blosc2's index record holds a `token` (a hash): no credential, shown whole. A URL's
    // credentials are still left out; a name holding terminal escapes is printed escaped.
    arr.any().attrs().set(
        "blosc2_indexes",
        b2nd::Value::map(
            {{"token", "abc123def"},
             {"tokens", b2nd::Value(b2nd::Value::Array{b2nd::Value("t1"), b2nd::Value("t2")})}}));
    arr.any().attrs().set("src", "https://u:PLANTED9@h/x.b2nd");
    arr.any().attrs().set("evil\x1b[31mred", 1);
    for (const std::string& cmd : {"meta " + q(a), "meta --json " + q(a), "info " + q(a),
                                   "meta " + q(a) + " blosc2_indexes"}) {
        INFO(cmd);
        const Run r = run(cmd);
        CHECK(r.status == 0);
        CHECK_THAT(r.output, Contains("abc123def") && !Contains("<redacted>") &&
                                 !Contains("PLANTED9") && !Contains("\x1b"));
    }
    CHECK_THAT(run("meta " + q(a)).output, Contains("evil\\x1b[31mred"));
    // A message quoting a name from the command line or a file: escaped too.
    const Run missing = run("meta " + q(a) + " $'no\\x1b[2Jname'");
    CHECK(missing.status == 2);
    CHECK_THAT(missing.output, Contains("no\\x1b[2Jname") && !Contains("\x1b"));
}
