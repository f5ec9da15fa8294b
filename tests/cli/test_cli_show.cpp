// b2nd show, run as a program: its text is NumPy's for arrays whose printing is written out
// here by hand (every kind of item, NumPy's padding and notation), its --json is strict JSON
// holding the .npy's values, large arrays are summarized, and output streams in bounded memory.
#include <chrono>
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
    } else if (j.kind() == Json::Kind::string) {  // show --json's NaN and infinities
        const std::string& s = j.as_string();
        REQUIRE((s == "NaN" || s == "Infinity" || s == "-Infinity"));
        out.push_back(s == "NaN" ? std::nan("") : s == "Infinity" ? HUGE_VAL : -HUGE_VAL);
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

namespace {

/// An array of `dtype` holding `items` (bytes as stored), created by the library.
std::string make_array(const b2nd::test::TempDir& tmp,
                       const std::string& name,
                       const std::string& dtype,
                       const b2nd::Shape& shape,
                       const std::vector<std::uint8_t>& items) {
    const std::string path = tmp / name;
    (void)b2nd::AnyArray::create_from(path, b2nd::DType::parse(dtype), shape,
                                      {items.data(), items.size()});
    return path;
}

}  // namespace

TEST_CASE("cli: show --json is strict JSON", "[cli]") {
    b2nd::test::TempDir tmp;
    const std::vector<double> f = {std::nan(""), HUGE_VAL, -HUGE_VAL, 1.5, 0.1};
    const std::string a = make_array(tmp, "f.b2nd", "<f8", {5}, bytes_of(f));
    Run r = run("show " + q(a) + " --json");
    REQUIRE(r.status == 0);
    CHECK(r.output == "[\"NaN\", \"Infinity\", \"-Infinity\", 1.5, 0.1]\n");
    (void)Json::parse(r.output);  // the test's parser takes strict JSON only
    // float32 and half values with their own precision's shortest digits.
    const std::vector<float> g = {0.1F, 1.0F / 3};
    CHECK(run("show " + q(make_array(tmp, "g.b2nd", "<f4", {2}, bytes_of(g))) + " --json").output ==
          "[0.1, 0.33333334]\n");
    const std::vector<std::uint16_t> h = {0xbc1a, 0x3800};  // -1.0253906, 0.5
    CHECK(run("show " + q(make_array(tmp, "h.b2nd", "<f2", {2}, bytes_of(h))) + " --json").output ==
          "[-1.025, 0.5]\n");
    // Nesting, an empty array, a scalar, strings and complex numbers.
    const std::vector<std::int32_t> m = {1, 2, 3, 4, 5, 6};
    CHECK(run("show " + q(make_array(tmp, "m.b2nd", "<i4", {2, 3}, bytes_of(m))) + " --json")
              .output == "[[1, 2, 3], [4, 5, 6]]\n");
    CHECK(run("show " + q(make_array(tmp, "e.b2nd", "<i4", {2, 0}, {})) + " --json").output ==
          "[[], []]\n");
    CHECK(run("show " + q(tmp / "m.b2nd") + " --slice 1,2 --json").output == "6\n");
    const std::vector<std::uint8_t> u = {'a', 0, 0, 0, '"', 0, 0, 0, 0xe9, 0, 0, 0};
    CHECK(run("show " + q(make_array(tmp, "u.b2nd", "<U1", {3}, u)) + " --json").output ==
          "[\"a\", \"\\\"\", \"\xc3\xa9\"]\n");
    const std::vector<double> c = {1, 2, 3.5, -1};
    CHECK(
        run("show " + q(make_array(tmp, "c.b2nd", "<c16", {2}, bytes_of(c))) + " --json").output ==
        "[[1.0, 2.0], [3.5, -1.0]]\n");
}

TEST_CASE("cli: show pads and spells values as NumPy does for each kind", "[cli]") {
    b2nd::test::TempDir tmp;
    const auto shown = [&](const std::string& dtype, const b2nd::Shape& shape,
                           const std::vector<std::uint8_t>& items) {
        static int n = 0;
        return run("show " +
                   q(make_array(tmp, "a" + std::to_string(n++) + ".b2nd", dtype, shape, items)))
            .output;
    };
    // Half floats with half precision's digits (not float32's -1.0253906).
    CHECK(shown("<f2", {3}, bytes_of(std::vector<std::uint16_t>{0xbc1a, 0x3800, 0x4000})) ==
          "[-1.025  0.5    2.   ]\n");
    // Strings are not padded: NumPy prints their repr as it is.
    CHECK(shown("<U1", {2}, {0, 0, 0, 0, 'b', 0, 0, 0}) == "['' 'b']\n");
    CHECK(shown("|S3", {3}, {'a', 0, 0, 'b', 'c', 'd', '\'', 0, 0}) == "[b'a' b'bcd' b\"'\"]\n");
    // nan and inf right-aligned to the column; scientific notation as NumPy switches to it.
    CHECK(shown("<f8", {3}, bytes_of(std::vector<double>{1.5, std::nan(""), HUGE_VAL})) ==
          "[1.5 nan inf]\n");
    CHECK(shown("<f8", {2}, bytes_of(std::vector<double>{-HUGE_VAL, 1})) == "[-inf   1.]\n");
    CHECK(shown("<f8", {2}, bytes_of(std::vector<double>{1e-5, 1})) == "[1.e-05 1.e+00]\n");
    CHECK(shown("<f8", {2}, bytes_of(std::vector<double>{1.5e10, 2.25})) ==
          "[1.50e+10 2.25e+00]\n");
    CHECK(shown("<c16", {2}, bytes_of(std::vector<double>{1, 2, 3.5, -1})) ==
          "[1. +2.j 3.5-1.j]\n");
    CHECK(shown("|b1", {2}, {1, 1}) == "[True True]\n");
    CHECK(shown("<i4", {2, 0}, {}) == "[]\n");
}

TEST_CASE("cli: show streams: bounded memory, and a closed pipe stops it at once", "[cli]") {
    b2nd::test::TempDir tmp;
    // 48 Mi one-byte elements: 48 MiB of data, about 150 MiB of JSON text (fewer under a
    // sanitizer, where memory is not measured).
    const std::int64_t n = std::int64_t{b2nd::test::memory_measurable() ? 48 : 8} << 20;
    std::vector<std::uint8_t> data(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        data[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>((i * 7919) >> 5);
    }
    const std::string a = make_array(tmp, "big.b2nd", "|u1", {n / 4096, 4096}, data);
    data = {};
    const auto timed = [](const std::string& cmd) {
        const auto t0 = std::chrono::steady_clock::now();
        const Run r = run(cmd);
        return std::make_pair(
            r, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    };
    // The whole output, counted, and the peak memory of the process that made it.
    const auto [all, all_s] = timed("show " + q(a) + " --json | wc -c");
    REQUIRE(all.status == 0);
    const long text_bytes = std::stol(all.output);
    CHECK(text_bytes > 3 * n);
    const long peak_kib = b2nd::test::peak_rss_kib("show " + q(a) + " --json");
    INFO("show --json of " << text_bytes << " bytes of text: peak RSS " << peak_kib << " KiB");
    CHECK(peak_kib > 0);
    CHECK((peak_kib < 40 * 1024 ||
           !b2nd::test::memory_measurable()));  // the data alone is 48 MiB, the text 150 MiB
    // The first 100 bytes, then the pipe closes: far sooner than the whole.
    const auto [head, head_s] = timed("show " + q(a) + " --json | head -c 100");
    INFO("whole output " << all_s << " s, first 100 bytes " << head_s << " s");
    CHECK(head.output.size() == 100);
    CHECK(head.output.rfind("[[0, 247, 238, ", 0) == 0);
    CHECK(head_s < all_s / 4);
    // Text output beyond the summary threshold streams too (two passes, nothing held).
    const long text_peak = b2nd::test::peak_rss_kib("show " + q(a) + " --threshold 100000000000");
    CHECK(text_peak > 0);
    CHECK((text_peak < 40 * 1024 || !b2nd::test::memory_measurable()));
}
