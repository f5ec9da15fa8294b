// An appender's array killed with SIGKILL (issue 57): a worker process (worker.cpp, "appender")
// pushes rows and flushes again and again, printing "." after each flush; killed at a random
// moment, the array opens with every row flushed before the kill, each equal to what was pushed
// (element (r, j) = r * 40 + j), and any row after them whole.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "appender_rows.hpp"
#include "support/files.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace {

const std::string kWorker = B2ND_WORKER_PATH;

}  // namespace

TEST_CASE("append crash: rows flushed before a SIGKILL are all there, whole", "[process][append]") {
    b2nd::test::SplitMix rng(57);
    for (const bool sparse : {false, true}) {
        for (int trial = 0; trial < 6; ++trial) {
            INFO((sparse ? "sparse" : "contiguous") << " trial " << trial);
            b2nd::test::TempDir tmp;
            const std::string path = tmp / (sparse ? "a.b2frame" : "a.b2nd");
            b2nd::CreateOptions co;
            co.chunk_shape = {16, 40};
            co.block_shape = {4, 40};
            co.sparse = sparse;
            (void)b2nd::NDArray<std::int32_t>::create(path, {0, 40}, co);
            const auto target = static_cast<std::int64_t>(1 + rng.below(30));
            {
                b2nd::test::Child w({kWorker, "appender", path});
                REQUIRE(w.printed(static_cast<std::size_t>(target), 20000));
                w.kill();
            }
            const auto a = b2nd::NDArray<std::int32_t>::open(path);
            const std::int64_t rows = a.shape()[0];
            CHECK(rows >= b2nd::test::appended_rows_after(target));
            const std::vector<std::int32_t> all = a.read();
            REQUIRE(all.size() == static_cast<std::size_t>(rows * 40));
            for (std::size_t e = 0; e < all.size(); ++e) {
                if (all[e] != static_cast<std::int32_t>(e)) {
                    FAIL("element " << e << " is " << all[e]);
                }
            }
        }
    }
}
