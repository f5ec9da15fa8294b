// b2nd show --json of python-blosc2's variable-length containers from ../shared/corpus/records:
// UTF8Arrays (NAME.b2nd + NAME.utf8.b2nd), ObjectArrays, BatchArrays and a CTable's utf8 and
// dictionary columns print the JSON list of items the manifest expects, whole and by --slice.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../support/files.hpp"
#include "../support/json.hpp"
#include "../support/record_cases.hpp"
#include "../support/reference.hpp"
#include "../support/temp_dir.hpp"
#include "run.hpp"

using b2nd::Value;
using b2nd::test::Json;
using b2nd::test::q;
using b2nd::test::run;

namespace {

Value expected_items(const std::string& path) {
    return Value::from_json(b2nd::test::read_text(path));
}

Value shown_by(const std::string& args) {
    const auto r = run(args);
    INFO(args << "\n" << r.output);
    REQUIRE(r.status == 0);
    return Value::from_json(r.output);
}

Value shown(const std::string& args) {
    return shown_by("show " + args);
}

}  // namespace

TEST_CASE("cli: show --json of UTF8Arrays, ObjectArrays and BatchArrays gives python's items",
          "[cli][records][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const b2nd::test::RecordCases rc =
        b2nd::test::record_cases({"utf8array", "objectarray", "batcharray"});
    const std::string& dir = rc.dir;
    int cases = 0, slices = 0;
    for (const Json& c : rc.cases) {
        const std::string kind = c["kind"].as_string();
        INFO(c["name"].as_string());
        const std::string file = q(dir + "/" + c["file"].as_string());
        const Value want = expected_items(dir + "/" + c["expected_json"].as_string());
        REQUIRE(want.size() == static_cast<std::size_t>(c["n"].as_int()));
        CHECK(shown(file + " --json") == want);
        ++cases;
        for (const Json& s : c["slices"].as_array()) {
            const auto a = static_cast<std::size_t>(s["start"].as_int());
            const auto b = static_cast<std::size_t>(s["stop"].as_int());
            const Value got = shown(file + " --json --slice " + s["slice"].as_string());
            REQUIRE(got.size() == b - a);
            for (std::size_t i = a; i < b; ++i) {
                CHECK(got[i - a] == want[i]);
            }
            ++slices;
        }
    }
    CHECK(cases == 9);
    CHECK(slices >= 30);
}

TEST_CASE("cli: show --json of a CTable's utf8 column and dictionary values, both store forms",
          "[cli][records][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string dir = b2nd::test::corpus_dir() + "/records/ctable";
    for (const char* form : {"table.b2d", "table.b2z"}) {
        INFO(form);
        const std::string t = dir + "/" + form;
        CHECK(shown(q(t + ":/_cols/name") + " --json") ==
              expected_items(dir + "/expected/table/name.json"));
        CHECK(shown(q(t + ":/_cols/city_dict") + " --json") ==
              expected_items(dir + "/expected/table/city_dict.json"));
        const Value names = expected_items(dir + "/expected/table/name.json");
        const Value tail = shown(q(t + ":/_cols/name") + " --slice -3:");
        REQUIRE(tail.size() == 3);
        CHECK(tail[2] == names[names.size() - 1]);
    }
}

TEST_CASE("cli: show of containers refuses what does not apply", "[cli][records]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string f = q(b2nd::test::corpus_dir() + "/records/objects/obj_mixed.b2frame");
    const auto bad = run("show " + f + " --slice 1:2:0");
    CHECK(bad.status == 2);
    CHECK_THAT(bad.output, Catch::Contains("step"));
    CHECK(run("show " + f + " --field x").status == 2);
    const auto out = run("show " + f + " --slice 99");
    CHECK(out.status == 2);
    CHECK_THAT(out.output, Catch::Contains("out of range"));
}

TEST_CASE("cli: ls of a CTable lists its columns; export of its fixed-width columns",
          "[cli][records][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const b2nd::test::RecordCases rc = b2nd::test::record_cases({"ctable"});
    const std::string& dir = rc.dir;
    b2nd::test::TempDir tmp;
    int tables = 0;
    for (const Json& c : rc.cases) {
        const std::string t = dir + "/" + c["file"].as_string();
        INFO(t);
        const Value listed = shown_by("ls " + q(t) + " --json");
        const auto& cols = c["columns"].as_array();
        REQUIRE(listed.size() == cols.size());
        for (std::size_t i = 0; i < cols.size(); ++i) {
            CHECK(listed[i]["name"] == Value(cols[i]["name"].as_string()));
            CHECK(listed[i]["kind"] == Value(cols[i]["kind"].as_string()));
            if (!cols[i]["dtype"].is_null()) {
                CHECK(listed[i]["dtype"] == Value(cols[i]["dtype"].as_string()));
            }
            if (cols[i]["read"].as_string() == "export") {
                const std::string out = tmp / "c.npy";
                REQUIRE(run("export " + q(t + ":" + cols[i]["key"].as_string()) + " " + q(out) +
                            " --overwrite")
                            .status == 0);
                B2ND_REQUIRE_SAME_BYTES(
                    b2nd::test::read_file(out),
                    b2nd::test::read_file(dir + "/" + cols[i]["npy"].as_string()));
            }
        }
        const std::string out = tmp / "v.npy";
        REQUIRE(run("export " + q(t + ":/_valid_rows") + " " + q(out) + " --overwrite").status ==
                0);
        B2ND_REQUIRE_SAME_BYTES(
            b2nd::test::read_file(out),
            b2nd::test::read_file(dir + "/" + c["valid_rows"]["npy"].as_string()));
        const auto text = run("ls " + q(t));
        CHECK_THAT(text.output, Catch::Contains("145 live rows of 150") &&
                                    Catch::Contains("float32 (nullable, mask)"));
        // --keys: the store's keys, as for any store.
        CHECK_THAT(run("ls " + q(t) + " --keys").output, Catch::Contains("/_cols/name.utf8"));
        ++tables;
    }
    CHECK(tables == 2);
}

namespace {

/// A '<U' .npy's items as UTF-8 strings (trailing NULs dropped, as NumPy reads them) and its
/// width in code points; test-side decoding.
std::vector<std::string> unicode_items(const std::string& npy, std::size_t& width) {
    const auto p = b2nd::test::read_npy_payload(npy);
    const auto at = p.header.find("'descr': '<U");
    REQUIRE(at != std::string::npos);
    width = std::stoul(p.header.substr(at + 12));
    std::vector<std::string> out;
    for (std::size_t i = 0; width > 0 && i + 4 * width <= p.data.size(); i += 4 * width) {
        std::u32string cps;
        for (std::size_t k = 0; k < width; ++k) {
            std::uint32_t c = 0;
            for (int b = 3; b >= 0; --b) {
                c = (c << 8) | p.data[i + 4 * k + static_cast<std::size_t>(b)];
            }
            cps.push_back(static_cast<char32_t>(c));
        }
        while (!cps.empty() && cps.back() == 0) {
            cps.pop_back();
        }
        std::string s;
        for (const char32_t c32 : cps) {
            const auto c = static_cast<std::uint32_t>(c32);
            if (c < 0x80) {
                s += static_cast<char>(c);
            } else if (c < 0x800) {
                s += static_cast<char>(0xc0 | (c >> 6));
                s += static_cast<char>(0x80 | (c & 0x3f));
            } else if (c < 0x10000) {
                s += static_cast<char>(0xe0 | (c >> 12));
                s += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
                s += static_cast<char>(0x80 | (c & 0x3f));
            } else {
                s += static_cast<char>(0xf0 | (c >> 18));
                s += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
                s += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
                s += static_cast<char>(0x80 | (c & 0x3f));
            }
        }
        out.push_back(s);
    }
    return out;
}

std::size_t code_points(const std::string& s) {
    std::size_t n = 0;
    for (const char c : s) {
        n += (static_cast<unsigned char>(c) & 0xc0) != 0x80 ? 1 : 0;
    }
    return n;
}

}  // namespace

TEST_CASE("cli: export of a UTF8Array writes NumPy's '<U' array of its strings",
          "[cli][records][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    b2nd::test::TempDir tmp;
    const b2nd::test::RecordCases rc = b2nd::test::record_cases({"utf8array"});
    int cases = 0;
    for (const Json& c : rc.cases) {
        INFO(c["name"].as_string());
        const std::string file = q(rc.dir + "/" + c["file"].as_string());
        const Value want = expected_items(rc.dir + "/" + c["expected_json"].as_string());
        const auto r = run("export " + file + " " + q(tmp / "u.npy") + " --overwrite");
        INFO(r.output);
        REQUIRE(r.status == 0);
        std::size_t width = 0;
        const std::vector<std::string> got = unicode_items(tmp / "u.npy", width);
        REQUIRE(got.size() == want.size());
        std::size_t widest = 1;  // NumPy: at least '<U1'
        for (std::size_t i = 0; i < got.size(); ++i) {
            std::string w = want[i].as<std::string>();
            widest = std::max(widest, code_points(w));
            w.erase(w.find_last_not_of('\0') + 1);
            CHECK(got[i] == w);
        }
        CHECK(width == widest);
        // A slice of the strings.
        if (want.size() >= 3) {
            REQUIRE(run("export " + file + " " + q(tmp / "s.npy") + " --overwrite --slice 1:3")
                        .status == 0);
            const std::vector<std::string> part = unicode_items(tmp / "s.npy", width);
            REQUIRE(part.size() == 2);
            CHECK(part[0] == got[1]);
        }
        ++cases;
    }
    CHECK(cases >= 5);
    // --points makes no sense for strings.
    const auto r = run("export " + q(rc.dir + "/utf8/u8_mixed.b2nd") + " " + q(tmp / "p.npy") +
                       " --points " + q(tmp / "u.npy"));
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Catch::Contains("is a UTF8Array"));
}
