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
