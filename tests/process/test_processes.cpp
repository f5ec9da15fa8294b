// Processes sharing one array, tested with real processes (worker.cpp, started with posix_spawn):
// a writer committing continuously next to readers that must see exactly one committed state
// every time, a second writer refused, writers killed with SIGKILL at random moments.
#include <chrono>
#include <filesystem>
#include <memory>
#include <random>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/store.hpp>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

using b2nd::test::Child;
using b2nd::test::field;

namespace {

const std::string kWorker = B2ND_WORKER_PATH;

std::string run(const std::vector<std::string>& args) {
    std::vector<std::string> argv{kWorker};
    argv.insert(argv.end(), args.begin(), args.end());
    Child c(argv);
    return c.finish();
}

std::unique_ptr<Child> start(const std::vector<std::string>& args) {
    std::vector<std::string> argv{kWorker};
    argv.insert(argv.end(), args.begin(), args.end());
    return std::make_unique<Child>(argv);
}

/// One more publication at `path`: it removes what earlier ones left beside it (temporaries of
/// killed writers, replaced directories no reader uses any more); nothing of them may remain.
void publish_once_more_and_check_nothing_left(const std::string& dir,
                                              const std::string& path,
                                              bool sparse) {
    REQUIRE(
        run({"publisher", path, "0.01", sparse ? "sparse" : "contiguous"}).rfind("publishes=", 0) ==
        0);
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        INFO(e.path());
        CHECK(e.path().filename().string().find(".b2nd-") == std::string::npos);
    }
}

}  // namespace

TEST_CASE("processes: readers see one committed state while a writer commits", "[process]") {
    const bool sparse = GENERATE(false, true);
    INFO((sparse ? "sparse" : "contiguous"));
    b2nd::test::TempDir dir;
    const std::string path = dir / (sparse ? "a.b2frame" : "a.b2nd");
    REQUIRE(run({"create", path, sparse ? "sparse" : "contiguous"}).empty());
    // Commits as fast as they come: what readers see does not depend on fsync, and a disk that
    // syncs slowly would leave them too few commits to race.
    auto writer = start({"writer", path, "4", "7", "fast"});
    std::vector<std::unique_ptr<Child>> readers;
    for (const char* mode : {"open", "open", "refresh", "follow"}) {
        readers.push_back(start({"reader", path, "4", mode}));
    }
    long long reads = 0;
    for (auto& r : readers) {
        const std::string out = r->finish();
        INFO(out);
        CHECK(field(out, "errors") == 0);
        CHECK(field(out, "torn") == 0);
        REQUIRE(field(out, "reads") > 0);
        reads += field(out, "reads");
    }
    const std::string w = writer->finish();
    INFO(w);
    CHECK(field(w, "commits") > 100);
    CHECK(reads >= 10000);
    CHECK(run({"check", path}).rfind("ok", 0) == 0);
}

TEST_CASE("processes: a second writer is refused, and let in once the first is gone", "[process]") {
    b2nd::test::TempDir dir;
    const std::string path = dir / "w.b2nd";
    REQUIRE(run({"create", path}).empty());
    auto writer = start({"writer", path, "0", "1"});
    // Wait until the writer holds the array (it commits all the time).
    std::string seen;
    for (int i = 0; i < 200; ++i) {
        seen = run({"try-write", path});
        if (seen.rfind("locked", 0) == 0) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(seen.rfind("locked", 0) == 0);
    CHECK(seen.find("open for writing") != std::string::npos);
    writer->kill();
    CHECK(run({"try-write", path}) == "opened\n");
}

TEST_CASE("processes: writers killed at random moments leave one committed state", "[process]") {
    const bool sparse = GENERATE(false, true);
    INFO((sparse ? "sparse" : "contiguous"));
    b2nd::test::TempDir dir;
    const std::string path = dir / (sparse ? "k.b2frame" : "k.b2nd");
    REQUIRE(run({"create", path, sparse ? "sparse" : "contiguous"}).empty());
    // A reader that runs through all the kills.
    auto reader = start({"reader", path, "6", "follow"});
    std::mt19937 rng(sparse ? 2 : 1);
    int kills = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (kills < 100 || std::chrono::steady_clock::now() < until) {
        auto w = start({"writer", path, "0", std::to_string(kills)});
        std::this_thread::sleep_for(std::chrono::microseconds(2000 + rng() % 20000));
        w->kill();
        ++kills;
        if (kills % 20 == 0) {
            const std::string c = run({"check", path});
            INFO("after " << kills << " kills: " << c);
            REQUIRE(c.rfind("ok", 0) == 0);
        }
        if (kills >= 100 && std::chrono::steady_clock::now() >= until) {
            break;
        }
    }
    const std::string c = run({"check", path});
    INFO(c);
    CHECK(c.rfind("ok", 0) == 0);
    const std::string r = reader->finish();
    INFO(r);
    CHECK(field(r, "errors") == 0);
    CHECK(field(r, "torn") == 0);
    CHECK(field(r, "reads") > 0);
    CHECK(kills >= 100);
}

TEST_CASE("processes: an array replaced again and again is, for readers, the old one or the new",
          "[process]") {
    // create_from with overwrite, as b2nd import --overwrite: readers opening it afresh, or
    // following it, see the array before or after, whole, never its parts nor an error.
    const bool sparse = GENERATE(false, true);
    INFO((sparse ? "sparse" : "contiguous"));
    b2nd::test::TempDir dir;
    const std::string path = dir / (sparse ? "p.b2frame" : "p.b2nd");
    REQUIRE(run({"create", path, sparse ? "sparse" : "contiguous"}).empty());
    // Not fsynced, as the writer above: readers race as many publications as the disk allows.
    auto publisher = start({"publisher", path, "4", sparse ? "sparse" : "contiguous", "fast"});
    std::vector<std::unique_ptr<Child>> readers;
    for (const char* mode : {"open", "open", "follow"}) {
        readers.push_back(start({"reader", path, "4", mode}));
    }
    for (auto& r : readers) {
        const std::string out = r->finish();
        INFO(out);
        CHECK(field(out, "errors") == 0);
        CHECK(field(out, "torn") == 0);
        CHECK(field(out, "reads") > 100);
    }
    const std::string p = publisher->finish();
    INFO(p);
    CHECK(field(p, "publishes") > 50);
    CHECK(run({"check", path}).rfind("ok", 0) == 0);
    // Once no reader is left, the next publication removes every replaced directory.
    publish_once_more_and_check_nothing_left(dir.path(), path, sparse);
}

TEST_CASE("processes: a create_from killed at any moment leaves the old array or the new one",
          "[process]") {
    const bool sparse = GENERATE(false, true);
    INFO((sparse ? "sparse" : "contiguous"));
    b2nd::test::TempDir dir;
    const std::string path = dir / (sparse ? "q.b2frame" : "q.b2nd");
    REQUIRE(run({"create", path, sparse ? "sparse" : "contiguous"}).empty());
    auto reader = start({"reader", path, "5", "open"});
    std::mt19937 rng(sparse ? 4 : 3);
    for (int kills = 0; kills < 60; ++kills) {
        auto w = start({"publisher", path, "0", sparse ? "sparse" : "contiguous"});
        std::this_thread::sleep_for(std::chrono::microseconds(1000 + rng() % 15000));
        w->kill();
        const std::string c = run({"check", path});
        INFO("after " << kills + 1 << " kills: " << c);
        REQUIRE(c.rfind("ok", 0) == 0);
    }
    const std::string r = reader->finish();
    INFO(r);
    CHECK(field(r, "errors") == 0);
    CHECK(field(r, "torn") == 0);
    // What the killed ones left beside it goes with the next publication.
    publish_once_more_and_check_nothing_left(dir.path(), path, sparse);
}

TEST_CASE("processes: in-memory arrays of killed processes are swept, others removed at exit",
          "[process]") {
    b2nd::test::TempDir root;
    ::setenv("B2ND_MEMORY_DIR", root.path().c_str(), 1);
    auto entries = [&] {
        std::vector<std::string> names;
        for (const auto& e : std::filesystem::directory_iterator(root.path())) {
            names.push_back(e.path().filename().string());
        }
        return names;
    };
    // A process that exits normally removes its array.
    CHECK_THAT(run({"memory", "0"}), Catch::Matchers::StartsWith("path=" + root.path()));
    CHECK(entries().empty());
    // One killed with SIGKILL cannot: its directory stays until the next create_in_memory.
    auto w = start({"memory", "60"});
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (entries().empty() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(entries().size() == 1);
    const std::string dead = entries()[0];
    CHECK(dead.rfind("b2nd-mem-" + std::to_string(w->pid()) + "-", 0) == 0);
    w->kill();
    CHECK(entries() == std::vector<std::string>{dead});
    {
        const auto a = b2nd::AnyArray::create_in_memory(b2nd::DType::parse("<f4"), {10});
        const auto left = entries();
        REQUIRE(left.size() == 1);
        CHECK(left[0] != dead);
        CHECK(a.path().rfind(root.path() + "/" + left[0], 0) == 0);
    }
    CHECK(entries().empty());
    ::unsetenv("B2ND_MEMORY_DIR");
}

TEST_CASE("processes: store writers killed at random moments leave a readable store",
          "[process][store]") {
    const bool zip = GENERATE(true, false);
    INFO((zip ? ".b2z" : ".b2d"));
    b2nd::test::TempDir dir;
    const std::string path = dir / (zip ? "s.b2z" : "s.b2d");
    {
        b2nd::StoreOptions o;
        o.threshold = 1000;
        auto w = b2nd::StoreWriter::create(path, o);
        const std::vector<double> a(2000, -1.0), b(10, -1.0);
        w.put("/a", b2nd::AnyArray::create_in_memory_from(
                        b2nd::dtype_of<double>(), {2000},
                        {reinterpret_cast<const std::uint8_t*>(a.data()), a.size() * 8}));
        w.put("/g/b", b2nd::AnyArray::create_in_memory_from(
                          b2nd::dtype_of<double>(), {10},
                          {reinterpret_cast<const std::uint8_t*>(b.data()), b.size() * 8}));
        w.set_vlmeta("/", "gen", b2nd::Value(-1.0));
        w.commit();
    }
    std::mt19937 rng(zip ? 5 : 6);
    int kills = 0;
    std::set<std::string> seen;
    while (kills < 40) {
        auto w = start({"store-writer", path, std::to_string(kills)});
        // Some commits in (counted, whatever the disk's speed), then a random moment later.
        REQUIRE(w->printed(1 + rng() % 3, 20000));
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 20000));
        w->kill();
        ++kills;
        const std::string c = run({"store-check", path});
        INFO("after " << kills << " kills: " << c);
        REQUIRE(c.rfind("ok", 0) == 0);
        seen.insert(c);
    }
    CHECK(seen.size() > 1);  // the writers got changes in between the kills
    if (!zip) {
        // The next change sweeps what the killed writers left (NAME.PID.tmp of dead processes).
        auto w = b2nd::StoreWriter::open(path, 1000);
        w.set_vlmeta("/", "swept", b2nd::Value(true));
        for (const auto& f : std::filesystem::recursive_directory_iterator(path)) {
            INFO(f.path().string());
            CHECK(f.path().extension() != ".tmp");
        }
    }
}

TEST_CASE("processes: an idle reader keeps one version of a sparse array, not one per commit",
          "[process]") {
    b2nd::test::TempDir dir;
    const std::string path = dir / "idle.b2frame";
    REQUIRE(run({"create", path, "sparse"}).empty());  // 64 rows: 4 chunk files
    const auto chunk_files = [&] {
        std::size_t n = 0;
        for (const auto& e : std::filesystem::directory_iterator(path)) {
            n += e.path().extension() == ".chunk" ? 1U : 0U;
        }
        return n;
    };
    REQUIRE(chunk_files() == 4);
    auto holder = start({"hold", path, "3"});
    REQUIRE(holder->printed(std::string("held v=1\n").size(), 20000));
    const std::string w = run({"writer", path, "1", "3", "rewrite", "fast"});
    INFO(w);
    REQUIRE(field(w, "commits") > 20);  // every one replaced all four files
    CHECK(chunk_files() <= 8);          // 4 live, 4 the holder's snapshot names
    const std::string h = holder->finish();
    INFO(h);
    CHECK(h.find("same") != std::string::npos);  // and those 4 were the right ones
    // With the holder gone, the next commit leaves only the live files.
    REQUIRE(run({"writer", path, "0.01", "4", "rewrite", "fast"}).rfind("commits=", 0) == 0);
    CHECK(chunk_files() == 4);
}
