// Work bounded by what is stored, not by what a file claims: an array of terabytes of zero
// chunks is verified by its headers.
#include <filesystem>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../support/temp_dir.hpp"
#include "run.hpp"

using b2nd::test::q;
using b2nd::test::run;
using b2nd::test::Run;
using Catch::Matchers::Contains;

TEST_CASE("cli: verify of an array claiming 8 TiB of zero chunks reads its headers only", "[cli]") {
    b2nd::test::TempDir tmp;
    const std::string path = tmp / "huge.b2nd";
    b2nd::CreateOptions o;
    o.chunk_shape = {4096, 4096};  // 128 MiB chunks, 65,536 of them, all zeros
    o.fill = b2nd::Fill::zeros;
    o.durable = false;
    (void)b2nd::NDArray<double>::create(path, {std::int64_t{1} << 20, std::int64_t{1} << 20}, o);
    REQUIRE(std::filesystem::file_size(path) < (std::uint64_t{64} << 20));
    // Filling each chunk would write 8 TiB of memory (hours); `timeout` turns that into a failure.
    const Run r = run("verify " + q(path), "timeout 300");
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("ok: ") && Contains("65536 chunks"));
}

TEST_CASE("cli: verify and diff stop at --max-seconds, say how far they got, and exit 4", "[cli]") {
    b2nd::test::TempDir tmp;
    const std::string path = tmp / "many.b2nd";
    // 4,000 chunks of 16 KiB, none special: each is decoded and compared, between deadlines.
    std::vector<std::int32_t> v(4000 * 4096);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<std::int32_t>(i % 977);
    }
    b2nd::CreateOptions o;
    o.chunk_shape = {4096};
    o.durable = false;
    (void)b2nd::NDArray<std::int32_t>::create_from(path, {4000 * 4096}, v, o);

    const Run verify = run("verify " + q(path) + " --max-seconds 0.001");
    INFO(verify.output);
    CHECK(verify.status == 4);
    CHECK_THAT(verify.output, Contains("stopped at --max-seconds 0.001: ") &&
                                  Contains(" of 4000 chunks checked, nothing wrong in them"));
    CHECK_THAT(verify.output, !Contains("ok: "));
    const Run diff = run("diff " + q(path) + " " + q(path) + " --max-seconds 0.001");
    INFO(diff.output);
    CHECK(diff.status == 4);
    CHECK_THAT(diff.output, Contains("stopped at --max-seconds 0.001: ") &&
                                Contains(" of 16384000 elements compared") &&
                                Contains("equal so far: "));
    // Given time, both finish as without the option.
    CHECK(run("verify " + q(path) + " --max-seconds 600").status == 0);
    const Run whole = run("diff " + q(path) + " " + q(path) + " --max-seconds 600");
    CHECK(whole.status == 0);
    CHECK_THAT(whole.output, Contains("equal: 16384000 elements"));
    for (const char* bad : {"0", "-1", "x", "1e9"}) {
        CHECK(run(std::string("verify ") + q(path) + " --max-seconds " + bad).status == 2);
    }
}

TEST_CASE("cli: a 15 KB store claiming a 2 GiB embedded value lists in bounded memory", "[cli]") {
    // The fuzz seed fuzz_store/bomb.b2e (make_seeds.cpp): embed.b2e's bytes claim 4 GiB (zero
    // chunks past the real values), and its map gives '/bomb' 2 GiB of those zeros. Reading the
    // claimed length whole took 4.27 GB; ours decodes the value's header only.
    const std::string bomb = std::string(B2ND_FUZZ_SEEDS) + "/fuzz_store/bomb.b2e";
    REQUIRE(std::filesystem::file_size(bomb) < 32 * 1024);
#ifdef B2ND_SANITIZED
    const std::string limit;  // sanitizers reserve terabytes of address space
#else
    const std::string limit = "ulimit -v 1048576;";  // 1 GiB of address space at most
#endif
    const Run r = run("ls " + q(bomb), limit);
    INFO(r.output);
    CHECK(r.status == 1);  // one unreadable leaf, said so, the others listed
    CHECK_THAT(r.output, Contains("/v ") && Contains("(10,) <i4"));
    CHECK_THAT(r.output, Contains("/bomb") && Contains("unreadable: ") &&
                             Contains("1 leaf could not be read"));
    CHECK_THAT(run("show " + q(bomb + ":/v"), limit).output, Contains("[ 0  3  6"));
}
