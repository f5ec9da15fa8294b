// datetime64 / timedelta64 as C++ values (datetime.hpp): the records corpus read as
// Datetime<D> / Timedelta<D> (NaT distinct, counted as the manifest says), unit checks, round
// trips, and NumPy's ISO text for every unit (expected text from Python's datetime module).
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>

#include "support/files.hpp"
#include "support/json.hpp"
#include "support/record_cases.hpp"
#include "support/reference.hpp"
#include "support/temp_dir.hpp"

using b2nd::test::Json;
using namespace std::chrono;

namespace {

template <class T>
void check_case(const std::string& dir, const Json& c) {
    INFO(c["name"].as_string());
    const auto a = b2nd::NDArray<T>::open(dir + "/" + c["file"].as_string());
    const auto got = a.read();
    const auto npy = b2nd::test::read_npy_payload(dir + "/" + c["npy"].as_string()).data;
    REQUIRE(got.size() * 8 == npy.size());
    std::int64_t nat = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        std::int64_t t = 0;
        std::memcpy(&t, npy.data() + 8 * i, 8);
        CHECK(got[i].ticks() == t);
        if (got[i].is_nat()) {
            ++nat;
            CHECK(got[i] != got[i]);  // NaT equals nothing
        } else {
            CHECK(got[i] == got[i]);
        }
    }
    CHECK(nat == c["nat_count"].as_int());
}

}  // namespace

TEST_CASE("datetime: the corpus's datetime64 and timedelta64 arrays as chrono values",
          "[array][records][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const b2nd::test::RecordCases rc = b2nd::test::record_cases({"datetime"});
    const std::string& dir = rc.dir;
    int n = 0;
    for (const Json& c : rc.cases) {
        const std::string dt = c["dtype"].as_string();
        if (dt == "<M8[ns]") {
            check_case<b2nd::Datetime<nanoseconds>>(dir, c);
        } else if (dt == "<M8[D]") {
            check_case<b2nd::Datetime<b2nd::days>>(dir, c);
        } else if (dt == "<M8[s]") {
            check_case<b2nd::Datetime<seconds>>(dir, c);
        } else if (dt == "<m8[ms]") {
            check_case<b2nd::Timedelta<milliseconds>>(dir, c);
        } else if (dt == "<m8[us]") {
            check_case<b2nd::Timedelta<microseconds>>(dir, c);
        } else {
            FAIL("unexpected dtype " << dt);
        }
        ++n;
    }
    CHECK(n == 5);
    // The unit is part of the type: seconds do not read nanoseconds.
    CHECK_THROWS_WITH(b2nd::NDArray<b2nd::Datetime<seconds>>::open(dir + "/datetime/dt_M8ns.b2nd"),
                      Catch::Contains("M8[s]") && Catch::Contains("M8[ns]"));
    CHECK_THROWS_AS(b2nd::NDArray<b2nd::Timedelta<seconds>>::open(dir + "/datetime/dt_M8s.b2nd"),
                    b2nd::UsageError);
    // A time point out of the file: 1768566173 s is 2026-01-16T12:22:53 (Python's datetime).
    const auto t = b2nd::NDArray<b2nd::Datetime<seconds>>::open(dir + "/datetime/dt_M8s.b2nd");
    CHECK(t(1).time().time_since_epoch().count() == 1768566173);
    CHECK_THROWS_WITH(t(0).time(), Catch::Contains("NaT"));
}

TEST_CASE("datetime: written and read back, NaT included", "[array][records]") {
    b2nd::test::TempDir tmp;
    using Ms = b2nd::Datetime<milliseconds>;
    const std::vector<Ms> v = {Ms(Ms::time_point(milliseconds(-1))), Ms::nat(),
                               Ms(Ms::time_point(milliseconds(1700000000123)))};
    const auto a = b2nd::NDArray<Ms>::create_from(tmp / "t.b2nd", {3}, v);
    CHECK(a.dtype().str() == "<M8[ms]");
    const auto back = b2nd::NDArray<Ms>::open(tmp / "t.b2nd").read();
    CHECK(back[0] == v[0]);
    CHECK(back[1].is_nat());
    CHECK(back[2].time() == v[2].time());
    using D = b2nd::Timedelta<hours>;
    const auto d =
        b2nd::NDArray<D>::create_from(tmp / "d.b2nd", {2}, std::vector<D>{D(hours(-5)), D()});
    CHECK(d.dtype().str() == "<m8[h]");
    CHECK(d(0).value() == hours(-5));
    CHECK(d(1).is_nat());
}

TEST_CASE("datetime: NumPy's text for every unit", "[array][records]") {
    // Expected text computed with Python's datetime module (1970-01-01 plus the ticks).
    CHECK(b2nd::datetime_text(0, "Y") == "1970");
    CHECK(b2nd::datetime_text(634, "M") == "2022-11");
    CHECK(b2nd::datetime_text(-1, "M") == "1969-12");
    CHECK(b2nd::datetime_text(2800, "W") == "2023-08-31");
    CHECK(b2nd::datetime_text(16965, "D") == "2016-06-13");
    CHECK(b2nd::datetime_text(100, "h") == "1970-01-05T04");
    CHECK(b2nd::datetime_text(-1, "m") == "1969-12-31T23:59");
    CHECK(b2nd::datetime_text(-1, "ms") == "1969-12-31T23:59:59.999");
    CHECK(b2nd::datetime_text(1234567, "10s") == "1970-05-23T21:21:10");
    CHECK(b2nd::datetime_text(1771729648461061497, "ns") == "2026-02-22T03:07:28.461061497");
    CHECK(b2nd::datetime_text(1, "as") == "1970-01-01T00:00:00.000000000000000001");
    CHECK(b2nd::datetime_text(b2nd::kNaT, "s") == "NaT");
    CHECK_THROWS_AS(b2nd::datetime_text(1, "fortnight"), b2nd::UnsupportedError);
}
