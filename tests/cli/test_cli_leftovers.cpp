// What the tool leaves behind: nothing of its own when interrupted (SIGINT, SIGTERM) or when it
// fails, and nothing at all when it refuses to start.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/store.hpp>

#include "../support/files.hpp"
#include "../support/process.hpp"
#include "../support/reference.hpp"
#include "../support/temp_dir.hpp"
#include "run.hpp"
#include <sys/wait.h>

using b2nd::test::q;
using b2nd::test::run;
using b2nd::test::Run;
using Catch::Matchers::Contains;

namespace fs = std::filesystem;

namespace {

/// Names in `dir` that are neither `keep` nor lock files: what a command left.
std::vector<std::string> leftovers(const std::string& dir, const std::vector<std::string>& keep) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        if (std::find(keep.begin(), keep.end(), name) == keep.end() &&
            name.find(".b2lock") == std::string::npos) {
            out.push_back(name);
        }
    }
    return out;
}

/// The output of a command that completed: the values `v` (a .npy, an array, or a store whose
/// two leaves hold them).
void whole(const std::string& out, const std::vector<double>& v) {
    const auto same = [&](const std::vector<std::uint8_t>& bytes) {
        CHECK(bytes.size() == v.size() * sizeof(double));
        CHECK(std::memcmp(bytes.data(), v.data(), std::min(bytes.size(), v.size() * 8)) == 0);
    };
    if (out.size() > 4 && out.compare(out.size() - 4, 4, ".npy") == 0) {
        same(b2nd::test::read_npy_payload(out).data);
    } else if (out.size() > 4 && out.compare(out.size() - 4, 4, ".b2z") == 0) {
        const b2nd::Store s = b2nd::Store::open(out);
        CHECK(s.entries().size() == 2);
        same(s.open_array("/a").read());
    } else {
        same(b2nd::AnyArray::open(out).read());
    }
}

}  // namespace

TEST_CASE("cli: SIGINT and SIGTERM remove the command's temporaries", "[cli][process]") {
    b2nd::test::TempDir tmp;
    // 32 MiB of poorly compressible values: zlib at level 9 on one thread takes a while.
    std::vector<double> v(4 * 1024 * 1024);
    b2nd::test::SplitMix rng(3);
    for (double& x : v) {
        x = static_cast<double>(rng.next() >> 11);
    }
    b2nd::CreateOptions co;
    co.chunk_shape = {256, 1024};
    const std::string src = tmp / "src.b2nd";
    (void)b2nd::NDArray<double>::create_from(src, {4096, 1024}, v, co);
    REQUIRE(run("export " + q(src) + " " + q(tmp / "src.npy")).status == 0);
    {
        auto w = b2nd::StoreWriter::create(tmp / "st.b2d");
        w.put("/a", b2nd::AnyArray::open(src));
        w.put("/b", b2nd::AnyArray::open(src));
    }
    const std::vector<std::string> kept = {"src.b2nd", "src.npy", "st.b2d"};
    struct Case {
        std::vector<std::string> argv;
        std::string out;
    };
    std::vector<Case> cases = {
        {{"convert", src, tmp / "o.b2frame", "--codec", "zlib", "--clevel", "9", "--nthreads", "1"},
         "o.b2frame"},
        {{"import", tmp / "src.npy", tmp / "i.b2nd", "--codec", "zlib", "--clevel", "9",
          "--nthreads", "1"},
         "i.b2nd"},
        {{"export", src, tmp / "e.npy", "--nthreads", "1"}, "e.npy"},
        {{"pack", tmp / "st.b2d", tmp / "p.b2z"}, "p.b2z"},
        {{"export", src, tmp / "z.zarr", "--codec", "zlib", "--clevel", "9", "--nthreads", "1"},
         "z.zarr"},
    };
    if (b2nd::have_hdf5()) {
        cases.push_back({{"export", src, tmp / "h.h5:/d", "--clevel", "9"}, "h.h5"});
    }
    std::mt19937 pick(11);
    int interrupted = 0;
    for (int round = 0; round < 18; ++round) {
        const Case& c = cases[static_cast<std::size_t>(round) % cases.size()];
        std::vector<std::string> argv = {B2ND_CLI_PATH};
        argv.insert(argv.end(), c.argv.begin(), c.argv.end());
        b2nd::test::Child child(argv);
        std::this_thread::sleep_for(
            std::chrono::milliseconds(std::uniform_int_distribution<int>(5, 120)(pick)));
        // Each command meets both signals.
        const int sig =
            (round + round / static_cast<int>(cases.size())) % 2 == 0 ? SIGINT : SIGTERM;
        ::kill(child.pid(), sig);
        int status = 0;
        (void)child.finish(&status);
        const std::vector<std::string> left = leftovers(tmp.path(), kept);
        std::string named;
        for (const std::string& n : left) {
            named += " " + n;
        }
        INFO(c.argv[0] << " round " << round << "; left:" << named);
        if (WIFSIGNALED(status)) {
            CHECK(WTERMSIG(status) == sig);
            ++interrupted;
            // No temporary; the output only if it was put in place before the signal came,
            // whole.
            CHECK((left.empty() || left == std::vector<std::string>{c.out}));
        } else {
            REQUIRE(WEXITSTATUS(status) == 0);  // done before the signal came
            CHECK(left == std::vector<std::string>{c.out});
        }
        if (fs::exists(tmp / c.out)) {
            whole(tmp / c.out, v);
            fs::remove_all(tmp / c.out);
        }
    }
    CHECK(interrupted >= 8);
}

TEST_CASE("cli: a refused command creates nothing", "[cli]") {
    b2nd::test::TempDir tmp;
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    // A persisted expression (copied: tests never write into the corpus): compact refuses it,
    // and leaves no lock file.
    const std::string dir = b2nd::test::corpus_dir() + "/stores/lazy";
    b2nd::test::copy_writable(dir + "/expr_arith.b2nd", tmp / "expr.b2nd");
    for (const std::string& cmd : {"compact " + q(tmp / "expr.b2nd")}) {
        INFO(cmd);
        const Run r = run(cmd);
        CHECK(r.status != 0);
        CHECK_THAT(r.output, Contains("lazyexpr, which is read-only here"));
        CHECK(leftovers(tmp.path(), {"expr.b2nd"}) == std::vector<std::string>{});
        CHECK_FALSE(fs::exists(tmp / "expr.b2nd.b2lock"));
    }
}
