// b2nd show, b2nd meta and info --json's decoded metadata, run as a program: show's text is
// NumPy's for arrays whose printing is written out here by hand, its --json holds the .npy's
// values, large arrays are summarized; meta lists, gets, sets and deletes attributes that the
// library and other readers see as msgpack; info --json decodes the corpus's meta_* cases.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../support/files.hpp"
#include "../support/json.hpp"
#include "../support/reference.hpp"
#include "../support/temp_dir.hpp"
#include "run.hpp"

using b2nd::test::Json;
using b2nd::test::npy_bytes;
using b2nd::test::q;
using b2nd::test::run;
using b2nd::test::Run;
using Catch::Matchers::Contains;

namespace {

void write_bytes(const std::string& path, const std::vector<std::uint8_t>& b) {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

template <class T>
std::vector<std::uint8_t> bytes_of(const std::vector<T>& v) {
    std::vector<std::uint8_t> b(v.size() * sizeof(T));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

/// Flattens nested JSON arrays into numbers.
void flatten(const Json& j, std::vector<double>& out) {
    if (j.kind() == Json::Kind::array) {
        for (const Json& e : j.as_array()) {
            flatten(e, out);
        }
    } else if (j.kind() == Json::Kind::boolean) {
        out.push_back(j.as_bool() ? 1 : 0);
    } else {
        out.push_back(j.as_number());
    }
}

}  // namespace

TEST_CASE("cli: show prints as NumPy does", "[cli]") {
    b2nd::test::TempDir tmp;
    std::vector<std::int16_t> counting(30 * 20 * 10);
    for (std::size_t i = 0; i < counting.size(); ++i) {
        counting[i] = static_cast<std::int16_t>(i);
    }
    write_bytes(tmp / "i.npy", npy_bytes("<i2", "(30, 20, 10)", bytes_of(counting)));
    REQUIRE(
        run("import " + q(tmp / "i.npy") + " " + q(tmp / "i.b2nd") + " --chunks 7,7,7").status ==
        0);
    Run r = run("show " + q(tmp / "i.b2nd") + " --slice '0, :3, :4'");
    REQUIRE(r.status == 0);
    CHECK(r.output == "[[ 0  1  2  3]\n [10 11 12 13]\n [20 21 22 23]]\n");
    r = run("show " + q(tmp / "i.b2nd") + " --slice '[2, 0], 1, ::4'");
    REQUIRE(r.status == 0);
    CHECK(r.output == "[[410 414 418]\n [ 10  14  18]]\n");
    r = run("show " + q(tmp / "i.b2nd") + " --slice '1, 2, 3'");
    CHECK(r.output == "223\n");
    // 6000 elements: summarized to the first and last 3 along each axis.
    r = run("show " + q(tmp / "i.b2nd"));
    REQUIRE(r.status == 0);
    CHECK(r.output.rfind("[[[   0    1    2 ...    7    8    9]\n  [  10   11   12 ...", 0) == 0);
    CHECK_THAT(r.output, Contains("[5990 5991 5992 ... 5997 5998 5999]]]\n"));
    CHECK_THAT(r.output, Contains("\n\n ...\n\n"));
    r = run("show " + q(tmp / "i.b2nd") + " --slice ':2, :2' --threshold 1 --edgeitems 1");
    CHECK(r.output == "[[[  0 ...   9]\n  [ 10 ...  19]]\n\n [[200 ... 209]\n  [210 ... 219]]]\n");

    const std::vector<double> f = {1.5, 2.25, -3, 0};
    write_bytes(tmp / "f.npy", npy_bytes("<f8", "(4,)", bytes_of(f)));
    REQUIRE(run("import " + q(tmp / "f.npy") + " " + q(tmp / "f.b2nd")).status == 0);
    CHECK(run("show " + q(tmp / "f.b2nd")).output == "[ 1.5   2.25 -3.    0.  ]\n");
    const std::vector<float> g = {0.1F, 1.0F / 3, 100};
    write_bytes(tmp / "g.npy", npy_bytes("<f4", "(3,)", bytes_of(g)));
    REQUIRE(run("import " + q(tmp / "g.npy") + " " + q(tmp / "g.b2nd")).status == 0);
    CHECK(run("show " + q(tmp / "g.b2nd")).output == "[  0.1          0.33333334 100.        ]\n");
    write_bytes(tmp / "b.npy", npy_bytes("|b1", "(2, 2)", {1, 0, 0, 1}));
    REQUIRE(run("import " + q(tmp / "b.npy") + " " + q(tmp / "b.b2nd")).status == 0);
    CHECK(run("show " + q(tmp / "b.b2nd")).output == "[[ True False]\n [False  True]]\n");

    // Rows wrap at NumPy's line width, continued under the first element.
    r = run("show " + q(tmp / "i.b2nd") + " --slice '0, 0:4, :'");
    CHECK(r.output ==
          "[[ 0  1  2  3  4  5  6  7  8  9]\n [10 11 12 13 14 15 16 17 18 19]\n"
          " [20 21 22 23 24 25 26 27 28 29]\n [30 31 32 33 34 35 36 37 38 39]]\n");
    std::vector<std::int16_t> forty(40);
    for (std::size_t i = 0; i < forty.size(); ++i) {
        forty[i] = static_cast<std::int16_t>(i);
    }
    write_bytes(tmp / "a.npy", npy_bytes("<i2", "(40,)", bytes_of(forty)));
    REQUIRE(run("import " + q(tmp / "a.npy") + " " + q(tmp / "a.b2nd")).status == 0);
    CHECK(run("show " + q(tmp / "a.b2nd")).output ==
          "[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n"
          " 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39]\n");

    // A billion elements (zeros, nothing stored): the summary lists and reads only its edges.
    (void)b2nd::AnyArray::create(tmp / "big.b2nd", b2nd::DType::parse("|u1"), {1000000000});
    r = run("show " + q(tmp / "big.b2nd") + " --slice '::3'");
    REQUIRE(r.status == 0);
    CHECK(r.output == "[0 0 0 ... 0 0 0]\n");

    r = run("show " + q(tmp / "i.b2nd") + " --slice '40'");
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("--slice"));
}

TEST_CASE("cli: show --json gives the corpus .npy values", "[cli][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string root = b2nd::test::corpus_dir();
    struct Case {
        const char* name;
        int kind;  // 0 float64, 1 float32, 2 int32 big-endian, 3 bool, 4 uint16
    };
    for (const Case c : {Case{"dtype_lef8", 0}, Case{"dtype_lef4", 1}, Case{"dtype_bei4", 2},
                         Case{"dtype_nab1", 3}, Case{"dtype_leu2", 4}}) {
        INFO(c.name);
        std::string file = root + "/" + c.name + ".b2nd";
        if (!std::filesystem::exists(file)) {
            file = root + "/" + c.name + ".b2frame";
        }
        const Run r = run("show " + q(file) + " --json");
        REQUIRE(r.status == 0);
        std::vector<double> got;
        flatten(Json::parse(r.output), got);
        const auto npy = b2nd::test::read_npy_payload(root + "/" + c.name + ".npy");
        const std::size_t isz = c.kind == 0 ? 8 : c.kind == 3 ? 1 : c.kind == 4 ? 2 : 4;
        REQUIRE(got.size() * isz == npy.data.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            const std::uint8_t* p = npy.data.data() + i * isz;
            double want = 0;
            if (c.kind == 0) {
                std::memcpy(&want, p, 8);
            } else if (c.kind == 1) {
                float x;
                std::memcpy(&x, p, 4);
                want = static_cast<double>(x);
            } else if (c.kind == 2) {
                const std::uint32_t u = (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) |
                                        (std::uint32_t{p[2]} << 8) | p[3];
                want = static_cast<std::int32_t>(u);
            } else if (c.kind == 3) {
                want = p[0];
            } else {
                want = p[0] | (p[1] << 8);
            }
            if (std::isnan(want)) {
                CHECK(std::isnan(got[i]));
            } else if (c.kind == 1) {
                CHECK(static_cast<float>(got[i]) == static_cast<float>(want));
            } else {
                REQUIRE(got[i] == want);
            }
        }
    }
}

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
        CHECK(Json::parse(r.output)["attrs"]["axes"].as_array().size() == 3);
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
        CHECK_THAT(r.output, Contains("VALUE-JSON"));
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
        CHECK_THAT(r.output, Contains("junk = {\"$not_msgpack\": \"ddffffffff01\"}"));
        r = run("meta " + q(copy) + " junk");
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains("'junk'") && Contains("msgpack"));
    }
    CHECK(checked >= 6);
}
