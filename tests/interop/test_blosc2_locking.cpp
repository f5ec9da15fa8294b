// Optional (a c-blosc2 library was found): the lock protocol shared with c-blosc2 3.3, with real
// processes on both sides. c-blosc2 runs with locking on (BLOSC_LOCKING=1) in blosc2_worker;
// b2nd-cpp in tests/process/worker.
#include <memory>

#include <catch2/catch.hpp>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

using b2nd::test::Child;
using b2nd::test::field;

namespace {

std::unique_ptr<Child> ours(std::vector<std::string> args) {
    args.insert(args.begin(), B2ND_WORKER_PATH);
    return std::make_unique<Child>(args);
}

std::unique_ptr<Child> theirs(std::vector<std::string> args) {
    args.insert(args.begin(), B2ND_BLOSC2_WORKER_PATH);
    return std::make_unique<Child>(args);
}

void expect_clean(Child& reader, const char* who) {
    const std::string out = reader.finish();
    INFO(who << ": " << out);
    CHECK(field(out, "reads") > 50);
    CHECK(field(out, "errors") == 0);
    CHECK(field(out, "torn") == 0);
}

}  // namespace

TEST_CASE("locking interop: a c-blosc2 writer next to b2nd-cpp readers", "[interop]") {
    b2nd::test::TempDir dir;
    const std::string path = dir / "c.b2nd";
    REQUIRE(ours({"create", path})->finish().empty());
    auto writer = theirs({"cwriter", path, "3"});
    // c-blosc2 rewrites chunks in place: readers hold the shared lock through each read.
    auto r1 = ours({"reader", path, "3", "lockread"});
    auto r2 = ours({"reader", path, "3", "lockread"});
    expect_clean(*r1, "b2nd-cpp reader");
    expect_clean(*r2, "b2nd-cpp reader");
    const std::string w = writer->finish();
    INFO(w);
    CHECK(field(w, "commits") > 10);
    CHECK(ours({"check", path})->finish().rfind("ok", 0) == 0);
}

TEST_CASE("locking interop: a b2nd-cpp writer next to c-blosc2 readers", "[interop]") {
    const bool sparse = GENERATE(false, true);
    INFO((sparse ? "sparse" : "contiguous"));
    b2nd::test::TempDir dir;
    const std::string path = dir / (sparse ? "b.b2frame" : "b.b2nd");
    REQUIRE(ours({"create", path, sparse ? "sparse" : "contiguous"})->finish().empty());
    auto writer = ours({"writer", path, "3", "5", "rewrite"});
    auto r1 = theirs({"creader", path, "3"});
    auto r2 = theirs({"creader", path, "3"});
    expect_clean(*r1, "c-blosc2 reader");
    expect_clean(*r2, "c-blosc2 reader");
    const std::string w = writer->finish();
    INFO(w);
    CHECK(field(w, "commits") > 10);
}
