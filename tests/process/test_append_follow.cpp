// Readers follow an appender (issue 57): a worker process (worker.cpp, "appender") pushes rows
// and flushes again and again, printing "." after each flush; this process follows the array
// (OpenOptions::follow) meanwhile. Every state it reads is whole rows equal to what was pushed
// (element (r, j) = r * 40 + j), its length never goes back, and once a flush is printed the
// next read holds every row flushed.
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "appender_rows.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace {

const std::string kWorker = B2ND_WORKER_PATH;

}  // namespace

TEST_CASE("append follow: a reader following the array sees each flush, whole rows only",
          "[process][append]") {
    for (const bool sparse : {false, true}) {
        INFO((sparse ? "sparse" : "contiguous"));
        b2nd::test::TempDir tmp;
        const std::string path = tmp / (sparse ? "f.b2frame" : "f.b2nd");
        b2nd::CreateOptions co;
        co.chunk_shape = {16, 40};
        co.block_shape = {4, 40};
        co.sparse = sparse;
        (void)b2nd::NDArray<std::int32_t>::create(path, {0, 40}, co);
        b2nd::OpenOptions o;
        o.follow = true;
        const auto follower = b2nd::NDArray<std::int32_t>::open(path, o);
        b2nd::test::Child w({kWorker, "appender", path, "3"});
        std::int64_t flushes = 0, last = 0;
        std::set<std::int64_t> lengths;
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (flushes < 40 && std::chrono::steady_clock::now() < until) {
            if (w.printed(static_cast<std::size_t>(flushes + 1), 5)) {
                ++flushes;  // a flush done before the read below (one per read, at most)
            }
            const auto state = follower.pinned();  // one state for the shape and the read
            const std::int64_t rows = state.shape()[0];
            const std::vector<std::int32_t> all = state.read();
            INFO("after " << flushes << " flushes: " << rows << " rows");
            CHECK(rows >= b2nd::test::appended_rows_after(flushes));
            CHECK(rows >= last);
            REQUIRE(all.size() == static_cast<std::size_t>(rows * 40));
            for (std::size_t e = 0; e < all.size(); ++e) {
                if (all[e] != static_cast<std::int32_t>(e)) {
                    FAIL("element " << e << " is " << all[e]);
                }
            }
            last = rows;
            lengths.insert(rows);
        }
        REQUIRE(flushes >= 40);
        CHECK(lengths.size() >= 5);  // the shape was seen growing, not only at its end
    }
}
