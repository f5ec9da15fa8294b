// b2nd show and b2nd diff against NumPy's own output over the corpus: show prints what
// str(numpy.load(npy)) prints, diff counts what numpy.isclose counts. The expected text is
// numpy/expected.txt, written by numpy/make_expected.py (NumPy 1.24); the tests never run NumPy.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../support/files.hpp"
#include "../support/reference.hpp"
#include "../support/temp_dir.hpp"
#include "run.hpp"

using b2nd::test::q;
using b2nd::test::run;
using b2nd::test::Run;

namespace {

struct Record {
    std::string kind;  // "show" or "diff"
    std::vector<std::string> args;
    std::string text;  // show: the lines that follow, joined
};

std::vector<Record> expected() {
    std::ifstream in(B2ND_NUMPY_EXPECTED);
    REQUIRE(in.good());
    std::vector<Record> out;
    for (std::string line; std::getline(in, line);) {
        if (line.compare(0, 3, "@@ ") == 0) {
            std::istringstream words(line.substr(3));
            Record r;
            words >> r.kind;
            for (std::string w; words >> w;) {
                r.args.push_back(w);
            }
            out.push_back(std::move(r));
        } else if (!out.empty()) {
            out.back().text += line + "\n";
        }
    }
    return out;
}

/// (elements that differ, elements compared) from b2nd diff's output; (-1, -1) if it says
/// neither.
std::pair<long long, long long> counts(const std::string& output) {
    long long n = 0, m = 0;
    const auto eq = output.find("\nequal: ");
    if (eq != std::string::npos && std::sscanf(output.c_str() + eq, "\nequal: %lld", &m) == 1) {
        return {0, m};
    }
    const auto d = output.find("\ndiffer: ");
    if (d != std::string::npos &&
        std::sscanf(output.c_str() + d, "\ndiffer: %lld of %lld", &n, &m) == 2) {
        return {n, m};
    }
    return {-1, -1};
}

std::vector<std::uint8_t> special_bytes(const std::string& dtype, bool second) {
    // tests/cli/numpy/make_expected.py's SPECIAL_A and SPECIAL_B.
    const std::vector<double> a = {1.0,          -HUGE_VAL, 5.0,      std::nan(""),
                                   std::nan(""), 0.0,       HUGE_VAL, 2.5};
    const std::vector<double> b = {HUGE_VAL, HUGE_VAL, -HUGE_VAL, std::nan(""),
                                   1.0,      -0.0,     HUGE_VAL,  2.5000001};
    const std::vector<double>& v = second ? b : a;
    std::vector<std::uint8_t> out;
    for (const double x : v) {
        if (dtype == "<f8") {
            out.insert(out.end(), reinterpret_cast<const std::uint8_t*>(&x),
                       reinterpret_cast<const std::uint8_t*>(&x) + 8);
        } else if (dtype == "<f4") {
            const auto f = static_cast<float>(x);
            out.insert(out.end(), reinterpret_cast<const std::uint8_t*>(&f),
                       reinterpret_cast<const std::uint8_t*>(&f) + 4);
        } else {  // <f2: these values' half-precision bits, by hand
            std::uint16_t h = std::isnan(x)   ? 0x7e00
                              : std::isinf(x) ? (x > 0 ? 0x7c00 : 0xfc00)
                              : x == 1.0      ? 0x3c00
                              : x == 5.0      ? 0x4500
                              : x == 0.0      ? (std::signbit(x) ? 0x8000 : 0x0000)
                                              : 0x4100;  // 2.5 and 2.5000001
            out.push_back(static_cast<std::uint8_t>(h & 0xff));
            out.push_back(static_cast<std::uint8_t>(h >> 8));
        }
    }
    return out;
}

}  // namespace

TEST_CASE("cli: show prints what str() of the NumPy array prints, over the corpus",
          "[cli][golden][numpy]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    int shown = 0;
    std::vector<std::string> wrong;
    for (const Record& r : expected()) {
        if (r.kind != "show") {
            continue;
        }
        const std::string file = b2nd::test::corpus_dir() + "/" + r.args.at(0);
        const Run out = run("show " + q(file));
        ++shown;
        if (out.status != 0 || out.output != r.text) {
            wrong.push_back(r.args[0] + ":\n--- NumPy\n" + r.text + "--- b2nd show\n" + out.output);
        }
    }
    CHECK(shown >= 160);
    INFO(wrong.size() << " of " << shown << " print differently; the first: "
                      << (wrong.empty() ? std::string() : wrong.front()));
    CHECK(wrong.empty());
}

TEST_CASE("cli: diff counts what numpy.isclose counts, infinities and NaN included",
          "[cli][golden][numpy]") {
    b2nd::test::TempDir tmp;
    const bool corpus = !b2nd::test::corpus_dir().empty();
    std::map<std::string, std::string> flipped;  // array -> its reversed copy
    int compared = 0;
    std::vector<std::string> wrong;
    for (const Record& r : expected()) {
        if (r.kind != "diff") {
            continue;
        }
        const std::string& name = r.args.at(0);
        std::string a, b;
        if (name.compare(0, 9, "<special:") == 0) {
            const std::string dtype = name.substr(9, 3);
            a = tmp / ("special" + dtype.substr(1) + "a.b2nd");
            b = tmp / ("special" + dtype.substr(1) + "b.b2nd");
            if (flipped.count(a) == 0) {
                for (const bool second : {false, true}) {
                    const auto bytes = special_bytes(dtype, second);
                    (void)b2nd::AnyArray::create_from(second ? b : a, b2nd::DType::parse(dtype),
                                                      {8}, {bytes.data(), bytes.size()});
                }
                flipped[a] = b;
            }
        } else {
            if (!corpus) {
                continue;
            }
            a = b2nd::test::corpus_dir() + "/" + name;
            if (flipped.count(a) == 0) {
                // The array reversed in C order, from its .npy (not from the library's reading).
                const b2nd::AnyArray src = b2nd::AnyArray::open(a);
                auto data =
                    b2nd::test::read_npy_payload(b2nd::test::corpus_dir() + "/" + r.args.at(1))
                        .data;
                const auto isz = static_cast<std::size_t>(src.itemsize());
                const std::size_t n = data.size() / isz;
                for (std::size_t i = 0; i < n / 2; ++i) {
                    std::swap_ranges(data.begin() + static_cast<std::ptrdiff_t>(i * isz),
                                     data.begin() + static_cast<std::ptrdiff_t>((i + 1) * isz),
                                     data.begin() + static_cast<std::ptrdiff_t>((n - 1 - i) * isz));
                }
                const std::string out = tmp / ("flip" + std::to_string(flipped.size()) + ".b2nd");
                (void)b2nd::AnyArray::create_from(out, src.dtype(), src.shape(),
                                                  {data.data(), data.size()});
                flipped[a] = out;
            }
            b = flipped[a];
        }
        const std::string& rtol = r.args.at(2);
        const std::string& atol = r.args.at(3);
        const bool equal_nan = r.args.at(4) == "1";
        const long long want = std::stoll(r.args.at(5)), total = std::stoll(r.args.at(6));
        const Run out = run("diff " + q(a) + " " + q(b) + " --count 0 --rtol " + rtol + " --atol " +
                            atol + (equal_nan ? " --equal-nan" : ""));
        ++compared;
        const auto got = counts(out.output);
        if (got != std::make_pair(want, total) || out.status != (want == 0 ? 0 : 1)) {
            wrong.push_back(name + " rtol " + rtol + " atol " + atol +
                            (equal_nan ? " equal_nan" : "") + ": NumPy " + std::to_string(want) +
                            " of " + std::to_string(total) + ", b2nd diff:\n" + out.output);
        }
    }
    CHECK(compared >= 12);
    INFO(wrong.size() << " of " << compared << " counts differ; the first: "
                      << (wrong.empty() ? std::string() : wrong.front()));
    CHECK(wrong.empty());
}
