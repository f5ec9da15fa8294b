// b2nd diff, run as a program: equal arrays exit 0, a changed element is found and located, the
// tolerance is numpy.isclose's, NaN equals NaN only with --equal-nan, numeric dtypes compare as
// numbers, other kinds as bytes, shapes that differ stop it, and any size streams in bounded
// memory.
#include <cmath>
#include <cstdint>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../support/temp_dir.hpp"
#include "run.hpp"

using b2nd::test::q;
using b2nd::test::run;
using b2nd::test::Run;
using Catch::Matchers::Contains;

namespace {

std::vector<double> ramp(std::size_t n) {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = std::sin(static_cast<double>(i) * 0.01) * 100.0;
    }
    return v;
}

}  // namespace

TEST_CASE("cli: diff finds, counts and locates differences", "[cli]") {
    b2nd::test::TempDir tmp;
    std::vector<double> v = ramp(40 * 50);
    b2nd::CreateOptions o;
    o.chunk_shape = {16, 16};
    (void)b2nd::NDArray<double>::create_from(tmp / "a.b2nd", {40, 50}, v, o);
    o.chunk_shape = {7, 50};  // another geometry, and a sparse frame
    o.sparse = true;
    (void)b2nd::NDArray<double>::create_from(tmp / "same.b2frame", {40, 50}, v, o);
    Run r = run("diff " + q(tmp / "a.b2nd") + " " + q(tmp / "same.b2frame"));
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("equal: 2000 elements"));
    // Two elements changed: one by 0.5, one by 1e-9.
    v[3 * 50 + 7] += 0.5;
    v[39 * 50 + 49] += 1e-9;
    (void)b2nd::NDArray<double>::create_from(tmp / "b.b2nd", {40, 50}, v);
    r = run("diff " + q(tmp / "a.b2nd") + " " + q(tmp / "b.b2nd"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("differ: 2 of 2000 elements (0.1%)") &&
                             Contains("largest absolute difference 0.5 at (3, 7)") &&
                             Contains("  (3, 7): ") && Contains("  (39, 49): "));
    // Within an absolute tolerance of 1e-6, one differs; of 1, none.
    r = run("diff " + q(tmp / "a.b2nd") + " " + q(tmp / "b.b2nd") + " --atol 1e-6");
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("differ: 1 of 2000"));
    r = run("diff " + q(tmp / "a.b2nd") + " " + q(tmp / "b.b2nd") + " --atol 1");
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("equal: 2000 elements (within |a - b| <= 1 + 0 * |b|)"));
    // A relative tolerance scales with |b| (about 100.5 at (3, 7)).
    REQUIRE(v[3 * 50 + 7] > 100.0);
    CHECK(run("diff " + q(tmp / "a.b2nd") + " " + q(tmp / "b.b2nd") + " --rtol 0.01").status == 0);
    CHECK(run("diff " + q(tmp / "a.b2nd") + " " + q(tmp / "b.b2nd") + " --rtol 0.001").status == 1);
    // A slice: positions stay the array's.
    r = run("diff " + q(tmp / "a.b2nd") + " " + q(tmp / "b.b2nd") + " --slice '3:5, 5:9'");
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("differ: 1 of 8") && Contains("  (3, 7): "));
    CHECK(run("diff " + q(tmp / "a.b2nd") + " " + q(tmp / "b.b2nd") + " --slice '4:'").status == 1);
    CHECK(run("diff " + q(tmp / "a.b2nd") + " " + q(tmp / "b.b2nd") + " --slice ':3'").status == 0);
    // --count bounds the list.
    r = run("diff " + q(tmp / "a.b2nd") + " " + q(tmp / "b.b2nd") + " --count 1");
    CHECK_THAT(r.output, Contains("  (3, 7): ") && !Contains("  (39, 49): "));
}

TEST_CASE("cli: diff compares NaN, other dtypes and shapes as it says", "[cli]") {
    b2nd::test::TempDir tmp;
    const std::vector<float> f = {1.5F, std::nanf(""), HUGE_VALF, -2.0F};
    (void)b2nd::NDArray<float>::create_from(tmp / "f.b2nd", {4}, f);
    const std::vector<double> d = {1.5, std::nan(""), HUGE_VAL, -2.0};
    (void)b2nd::NDArray<double>::create_from(tmp / "d.b2nd", {4}, d);
    Run r = run("diff " + q(tmp / "f.b2nd") + " " + q(tmp / "d.b2nd"));
    CHECK(r.status == 1);  // as numpy.isclose: NaN equals nothing, inf equals inf
    CHECK_THAT(r.output, Contains("dtypes differ: values compared as numbers") &&
                             Contains("differ: 1 of 4 elements") &&
                             Contains("  (1,): NaN, NaN, NaN against NaN"));
    // NaN in the same places is said to be that, with the option that counts them equal; it
    // is no infinite difference (it said "largest absolute difference inf").
    CHECK_THAT(r.output, Contains("all of them NaN against NaN") && Contains("--equal-nan") &&
                             !Contains("difference inf"));
    r = run("diff " + q(tmp / "f.b2nd") + " " + q(tmp / "d.b2nd") + " --equal-nan");
    CHECK(r.status == 0);  // float32 and float64 as numbers
    CHECK_THAT(r.output, Contains("equal: 4 elements"));
    const std::vector<double> d2 = {1.5, 0.0, HUGE_VAL, -2.0};
    (void)b2nd::NDArray<double>::create_from(tmp / "d2.b2nd", {4}, d2);
    r = run("diff " + q(tmp / "d.b2nd") + " " + q(tmp / "d2.b2nd") + " --atol 100");
    CHECK(r.status == 1);  // NaN against a number is never within a tolerance
    CHECK_THAT(r.output, Contains("  (1,): NaN, 0") && !Contains("NaN against NaN"));
    const std::vector<double> d3 = {1.0, std::nan(""), HUGE_VAL, -2.0};
    (void)b2nd::NDArray<double>::create_from(tmp / "d3.b2nd", {4}, d3);
    r = run("diff " + q(tmp / "d.b2nd") + " " + q(tmp / "d3.b2nd"));
    CHECK_THAT(r.output, Contains("differ: 2 of 4") && Contains("of them, 1 NaN against NaN") &&
                             Contains("largest absolute difference 0.5 at (0,)"));
    // Integers beyond 2^53 are compared exactly.
    const std::vector<std::int64_t> i1 = {(std::int64_t{1} << 60) + 1};
    const std::vector<std::int64_t> i2 = {(std::int64_t{1} << 60)};
    (void)b2nd::NDArray<std::int64_t>::create_from(tmp / "i1.b2nd", {1}, i1);
    (void)b2nd::NDArray<std::int64_t>::create_from(tmp / "i2.b2nd", {1}, i2);
    r = run("diff " + q(tmp / "i1.b2nd") + " " + q(tmp / "i2.b2nd"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("largest absolute difference 1 at (0,)"));
    // Strings: bytes, same dtype needed; tolerances refused.
    (void)b2nd::AnyArray::create_from(tmp / "s1.b2nd", b2nd::DType::parse("|S2"), {2},
                                      {reinterpret_cast<const std::uint8_t*>("abcd"), 4});
    (void)b2nd::AnyArray::create_from(tmp / "s2.b2nd", b2nd::DType::parse("|S2"), {2},
                                      {reinterpret_cast<const std::uint8_t*>("abce"), 4});
    r = run("diff " + q(tmp / "s1.b2nd") + " " + q(tmp / "s2.b2nd"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("differ: 1 of 2") && Contains("  (1,): cd, ce"));
    CHECK(run("diff " + q(tmp / "s1.b2nd") + " " + q(tmp / "s2.b2nd") + " --atol 1").status == 2);
    r = run("diff " + q(tmp / "s1.b2nd") + " " + q(tmp / "f.b2nd"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("no value compared"));
    // Shapes.
    (void)b2nd::NDArray<float>::create_from(tmp / "g.b2nd", {2, 2}, f);
    r = run("diff " + q(tmp / "f.b2nd") + " " + q(tmp / "g.b2nd"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("the shapes (4,) and (2, 2) differ"));
    CHECK(run("diff " + q(tmp / "f.b2nd") + " " + q(tmp / "g.b2nd") + " --rtol -1").status == 2);
    CHECK(run("diff " + q(tmp / "f.b2nd")).status == 2);
}

TEST_CASE("cli: diff streams two large arrays in bounded memory", "[cli]") {
    b2nd::test::TempDir tmp;
    // 48 MiB of one-byte elements each (fewer under a sanitizer, where memory is not measured).
    const std::int64_t n = std::int64_t{b2nd::test::memory_measurable() ? 48 : 8} << 20;
    std::vector<std::uint8_t> data(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        data[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>((i * 7919) >> 5);
    }
    const b2nd::DType u1 = b2nd::DType::parse("|u1");
    (void)b2nd::AnyArray::create_from(tmp / "a.b2nd", u1, {n / 4096, 4096},
                                      {data.data(), data.size()});
    data[static_cast<std::size_t>(n - 1)] ^= 1;
    (void)b2nd::AnyArray::create_from(tmp / "b.b2nd", u1, {n / 4096, 4096},
                                      {data.data(), data.size()});
    data = {};
    const Run r = run("diff " + q(tmp / "a.b2nd") + " " + q(tmp / "b.b2nd"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("differ: 1 of " + std::to_string(n)) &&
                             Contains("(" + std::to_string(n / 4096 - 1) + ", 4095)"));
    const long peak =
        b2nd::test::peak_rss_kib("diff " + q(tmp / "a.b2nd") + " " + q(tmp / "a.b2nd"));
    INFO("peak RSS of a diff of two 48 MiB arrays: " << peak << " KiB");
    CHECK(peak > 0);
    CHECK((peak < 48 * 1024 || !b2nd::test::memory_measurable()));
}
