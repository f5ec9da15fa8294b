// Records and text from ../shared/corpus/records (issue 26, first step): structured, datetime and
// fixed-width string arrays export to the .npy numpy.save writes, byte for byte (header included:
// a padded struct's descr in the list form with padding entries, numpy.lib.format's spare room),
// and their dtype strings (python's str(dtype)) round-trip through b2nd::DType.
#include <cstring>
#include <string>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../support/files.hpp"
#include "../support/json.hpp"
#include "../support/record_cases.hpp"
#include "../support/reference.hpp"
#include "../support/temp_dir.hpp"
#include "run.hpp"

using b2nd::test::Json;
using b2nd::test::q;
using b2nd::test::run;

TEST_CASE("cli: structured, datetime and string arrays export as numpy.save writes them",
          "[cli][records][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const b2nd::test::RecordCases rc =
        b2nd::test::record_cases({"structured", "datetime", "fixed_string"});
    const std::string& dir = rc.dir;
    b2nd::test::TempDir tmp;
    int n = 0;
    for (const Json& c : rc.cases) {
        const std::string kind = c["kind"].as_string();
        INFO(c["name"].as_string());
        if (c.has("dtype")) {
            const std::string s = c["dtype"].as_string();
            CHECK(b2nd::DType::parse(s).str() == s);  // python's str(dtype), as it wrote it
        }
        const std::string out = tmp / (c["name"].as_string() + ".npy");
        REQUIRE(run("export " + q(dir + "/" + c["file"].as_string()) + " " + q(out)).status == 0);
        B2ND_REQUIRE_SAME_BYTES(b2nd::test::read_file(out),
                                b2nd::test::read_file(dir + "/" + c["npy"].as_string()));
        ++n;
    }
    CHECK(n == 14);
}

TEST_CASE("cli: export --field writes one field as numpy's a['name'] saves it",
          "[cli][records][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const b2nd::test::RecordCases rc = b2nd::test::record_cases({"structured"});
    const std::string& dir = rc.dir;
    b2nd::test::TempDir tmp;
    int n = 0;
    for (const Json& c : rc.cases) {
        for (const Json& f : c["fields"].as_array()) {
            INFO(c["name"].as_string() << " field " << f["name"].as_string());
            const std::string out = tmp / "f.npy";
            REQUIRE(run("export " + q(dir + "/" + c["file"].as_string()) + " " + q(out) +
                        " --overwrite --field " + q(f["name"].as_string()))
                        .status == 0);
            B2ND_REQUIRE_SAME_BYTES(b2nd::test::read_file(out),
                                    b2nd::test::read_file(dir + "/" + f["npy"].as_string()));
            ++n;
        }
    }
    CHECK(n == 22);
    const std::string nested = q(dir + "/structured/rec_nested.b2nd");
    const auto bad = run("export " + nested + " " + q(tmp / "x.npy") + " --field pos.z");
    CHECK(bad.status == 2);
    CHECK_THAT(bad.output, Catch::Contains("pos.z") && Catch::Contains("'id'"));
    CHECK(
        run("export " + nested + " " + q(tmp / "y.npy") + " --field id --mask " + q(tmp / "m.npy"))
            .status == 2);
}

TEST_CASE("cli: show --field prints one field; bytes as Python's repr", "[cli][records][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string dir = b2nd::test::corpus_dir() + "/records/structured";
    // --json: the field's values, equal to numpy's a['pos']['x'].
    const auto r = run("show " + q(dir + "/rec_nested.b2nd") + " --field pos.x --json");
    REQUIRE(r.status == 0);
    const Json got = Json::parse(r.output);
    const auto want = b2nd::test::read_npy_payload(dir + "/expected/rec_nested.pos.x.npy").data;
    REQUIRE(got.as_array().size() * 8 == want.size());
    for (std::size_t i = 0; i < got.as_array().size(); ++i) {
        double w = 0;
        std::memcpy(&w, want.data() + 8 * i, 8);
        CHECK(got.as_array()[i].as_number() == w);
    }
    // Bytes above 0x7f are \xNN once, as Python prints b'\xff' (not b'\\xff').
    const auto s = run("show " + q(dir + "/rec_bigendian.b2nd") + " --field s");
    REQUIRE(s.status == 0);
    CHECK_THAT(s.output, Catch::Contains("b'\\xff\\xfe\\x80'"));
    CHECK(s.output.find("\\\\x") == std::string::npos);
}

TEST_CASE("cli: show prints dates as NumPy's ISO text and records as tuples",
          "[cli][records][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string dir = b2nd::test::corpus_dir() + "/records";
    // Expected text from Python's datetime module on the .npy values (1771729648461061497 ns,
    // -9223286400000000000 ns, -1 ns; 16965 and 30737 days; 1768566173 s).
    const auto ns = run("show " + q(dir + "/datetime/dt_M8ns.b2nd") + " --slice :4");
    REQUIRE(ns.status == 0);
    CHECK_THAT(ns.output, Catch::Contains("'2026-02-22T03:07:28.461061497'") &&
                              Catch::Contains("'1677-09-22T00:00:00.000000000'") &&
                              Catch::Contains("'1969-12-31T23:59:59.999999999'") &&
                              Catch::Contains("'NaT'"));
    const auto days = run("show " + q(dir + "/datetime/dt_M8D.b2nd") + " --slice 0,:2");
    CHECK(days.output == "['2016-06-13' '2054-02-26']\n");
    const Json js =
        Json::parse(run("show " + q(dir + "/datetime/dt_M8s.b2nd") + " --slice :2 --json").output);
    CHECK(js.as_array()[0].is_null());  // NaT
    CHECK(js.as_array()[1].as_string() == "2026-01-16T12:22:53");
    const auto td = run("show " + q(dir + "/datetime/dt_m8us.b2nd") + " --slice :4");
    CHECK(td.output == "[-918298  911809   'NaT' -430997]\n");
    const auto rec = run("show " + q(dir + "/structured/rec_subarray.b2nd") + " --slice 0,:1");
    REQUIRE(rec.status == 0);
    CHECK_THAT(rec.output,
               Catch::StartsWith("[(") && Catch::Contains("], [[") && Catch::EndsWith("]])]\n"));
    const Json recs = Json::parse(
        run("show " + q(dir + "/structured/rec_nested.b2nd") + " --slice :2 --json").output);
    REQUIRE(recs.as_array().size() == 2);
    CHECK(recs.as_array()[0].as_array().size() == 3);                // id, pos, flag
    CHECK(recs.as_array()[0].as_array()[1].as_array().size() == 2);  // pos: x, y
}

TEST_CASE("cli: show keeps embedded NULs of S and U items (NumPy drops trailing ones only)",
          "[cli][records]") {
    b2nd::test::TempDir tmp;
    const std::vector<std::uint32_t> units = {'a', 0, 'b', 'c', 0, 0};  // 'a\0b', 'c'
    b2nd::AnyArray::create_from(tmp / "u.b2nd", b2nd::DType::parse("<U3"), {2},
                                {reinterpret_cast<const std::uint8_t*>(units.data()), 24});
    const std::string bytes("x\0y\0\0", 5);
    b2nd::AnyArray::create_from(tmp / "s.b2nd", b2nd::DType::parse("|S5"), {1},
                                {reinterpret_cast<const std::uint8_t*>(bytes.data()), 5});
    const Json u = Json::parse(run("show " + q(tmp / "u.b2nd") + " --json").output);
    CHECK(u.as_array()[0].as_string() == std::string("a\0b", 3));
    CHECK(u.as_array()[1].as_string() == "c");
    const Json s = Json::parse(run("show " + q(tmp / "s.b2nd") + " --json").output);
    CHECK(s.as_array()[0].as_string() == std::string("x\0y", 3));
    CHECK_THAT(run("show " + q(tmp / "u.b2nd")).output, Catch::Contains("'a\\x00b'"));
}
