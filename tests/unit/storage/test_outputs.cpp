// What the library's writers may replace (outputs.hpp): the `overwrite` options replace only
// what they write, links are written through, a read-only file is refused, rewrites keep the
// mode, and a failed rewrite leaves no temporary.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>
#include <b2nd/ops.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/store.hpp>

#include "support/files.hpp"
#include "support/temp_dir.hpp"
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

std::vector<double> values(std::size_t n, double base) {
    std::vector<double> v(n);
    b2nd::test::SplitMix rng(static_cast<std::uint64_t>(base) + 1);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = base + static_cast<double>(rng.next() >> 40);
    }
    return v;
}

b2nd::NDArray<double> make(const std::string& path, double base, bool overwrite = false) {
    b2nd::CreateOptions o;
    o.chunk_shape = {16, 16};
    o.overwrite = overwrite;
    o.sparse = path.find(".b2frame") != std::string::npos;
    return b2nd::NDArray<double>::create_from(path, {64, 16}, values(64 * 16, base), o);
}

unsigned mode_of(const std::string& path) {
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

bool temporaries_beside(const std::string& dir) {
    for (const auto& e : fs::directory_iterator(dir)) {
        if (e.path().filename().string().find(".b2nd-tmp-") != std::string::npos ||
            e.path().extension() == ".tmp") {
            return true;
        }
    }
    return false;
}

}  // namespace

TEST_CASE("outputs: overwrite replaces an array, never a directory of other files",
          "[storage][outputs]") {
    b2nd::test::TempDir tmp;
    fs::create_directory(tmp / "results");
    std::ofstream(tmp / "results/table.csv") << "1,2,3\n";
    CHECK_THROWS_WITH(make(tmp / "results", 1.0, true),
                      Contains("\"" + tmp / "results" + "\" is a directory that is not an array"));
    CHECK(fs::exists(tmp / "results/table.csv"));

    const auto a = make(tmp / "a.b2nd", 1.0);
    b2nd::CopyOptions co;
    co.overwrite = true;
    CHECK_THROWS_WITH(b2nd::copy(a.any(), tmp / "results", co), Contains("is a directory"));
    CHECK_THROWS_WITH(b2nd::copy(a.any(), tmp.path(), co), Contains("holds a source of the copy"));
    CHECK(fs::exists(tmp / "results/table.csv"));

    // An array is replaced by an array, whatever its frame kind; the old values are gone.
    (void)make(tmp / "s.b2frame", 5.0);
    (void)make(tmp / "s.b2frame", 9.0, true);
    CHECK(b2nd::NDArray<double>::open(tmp / "s.b2frame").read() == values(64 * 16, 9.0));

    // Stores: a store is replaced by a store, a directory of other files never.
    b2nd::StoreOptions so;
    so.overwrite = true;
    CHECK_THROWS_WITH(b2nd::StoreWriter::create(tmp / "results", so), Contains("is a directory"));
    CHECK(fs::exists(tmp / "results/table.csv"));
    {
        auto w = b2nd::StoreWriter::create(tmp / "st.b2d");
        w.put("/a", a.any());
    }
    {
        auto w = b2nd::StoreWriter::create(tmp / "st.b2d", so);
        w.put("/b", a.any());
    }
    const auto entries = b2nd::Store::open(tmp / "st.b2d").entries();
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].key == "/b");
    CHECK_THROWS_WITH(b2nd::StoreWriter::create(tmp / "a.b2nd", so),
                      Contains("is a Blosc2 frame, not a store"));
    CHECK_FALSE(temporaries_beside(tmp.path()));
}

TEST_CASE("outputs: links are written through, read-only files refused", "[storage][outputs]") {
    b2nd::test::TempDir tmp;
    fs::create_directory(tmp / "data");
    (void)make(tmp / "data/a.b2nd", 1.0);
    fs::create_symlink(tmp / "data/a.b2nd", tmp / "a.b2nd");
    (void)make(tmp / "a.b2nd", 2.0, true);
    CHECK(fs::is_symlink(tmp / "a.b2nd"));
    CHECK(b2nd::NDArray<double>::open(tmp / "data/a.b2nd").read() == values(64 * 16, 2.0));

    // compact through the link: the link stays, the file it leads to is compacted.
    {
        b2nd::OpenOptions w;
        w.writable = true;
        w.auto_compact = false;
        auto arr = b2nd::NDArray<double>::open(tmp / "a.b2nd", w);
        arr.write(b2nd::Box::whole(arr.shape()), values(64 * 16, 3.0));
        CHECK(arr.any().frame().dead_bytes() > 0);
        arr.any().compact();
        CHECK(arr.any().frame().dead_bytes() == 0);
    }
    CHECK(fs::is_symlink(tmp / "a.b2nd"));
    CHECK(b2nd::NDArray<double>::open(tmp / "data/a.b2nd").read() == values(64 * 16, 3.0));
    CHECK_FALSE(temporaries_beside(tmp / "data"));

    // Read-only: every writer refuses, root included.
    fs::permissions(tmp / "data/a.b2nd",
                    fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    b2nd::OpenOptions w;
    w.writable = true;
    CHECK_THROWS_WITH(b2nd::NDArray<double>::open(tmp / "data/a.b2nd", w),
                      Contains("is read-only; make it writable"));
    CHECK_THROWS_WITH(make(tmp / "a.b2nd", 4.0, true), Contains("is read-only"));
    CHECK_THROWS_AS(b2nd::storage::Frame::open(tmp / "data/a.b2nd", w), b2nd::UsageError);
    CHECK(b2nd::NDArray<double>::open(tmp / "data/a.b2nd").read() == values(64 * 16, 3.0));
    // A refused open leaves nothing behind (no lock file).
    (void)make(tmp / "ro.b2nd", 1.0);
    fs::remove(tmp / "ro.b2nd.b2lock");  // as a file copied from elsewhere comes
    fs::permissions(tmp / "ro.b2nd", fs::perms::owner_read);
    CHECK_THROWS_AS(b2nd::AnyArray::open(tmp / "ro.b2nd", w), b2nd::UsageError);
    CHECK_FALSE(fs::exists(tmp / "ro.b2nd.b2lock"));
}

TEST_CASE("outputs: rewrites keep the mode of what they rewrite", "[storage][outputs]") {
    b2nd::test::TempDir tmp;
    const auto priv = fs::perms::owner_read | fs::perms::owner_write;
    (void)make(tmp / "p.b2nd", 1.0);
    fs::permissions(tmp / "p.b2nd", priv);
    (void)make(tmp / "p.b2nd", 2.0, true);
    CHECK(mode_of(tmp / "p.b2nd") == 0600);

    // Automatic compaction (a file above twice its compacted size and 4 MiB).
    b2nd::CreateOptions big;
    big.chunk_shape = {64, 1024};
    (void)b2nd::NDArray<double>::create_from(tmp / "big.b2nd", {1024, 1024},
                                             values(1024 * 1024, 1.0), big);
    fs::permissions(tmp / "big.b2nd", priv);
    {
        b2nd::OpenOptions w;
        w.writable = true;
        auto arr = b2nd::NDArray<double>::open(tmp / "big.b2nd", w);
        for (int round = 0; round < 3; ++round) {
            arr.write(b2nd::Box::whole(arr.shape()), values(1024 * 1024, 2.0 + round));
        }
    }
    CHECK(fs::file_size(tmp / "big.b2nd") < 2 * 1024 * 1024 * 8 + (4 << 20));
    CHECK(mode_of(tmp / "big.b2nd") == 0600);

    // A sparse frame's new chunk files take its frame file's mode.
    (void)make(tmp / "s.b2frame", 1.0);
    for (const auto& e : fs::directory_iterator(tmp / "s.b2frame")) {
        fs::permissions(e.path(), priv);
    }
    {
        b2nd::OpenOptions w;
        w.writable = true;
        auto arr = b2nd::NDArray<double>::open(tmp / "s.b2frame", w);
        arr.write(b2nd::Box::whole(arr.shape()), values(64 * 16, 5.0));
    }
    int files = 0;
    for (const auto& e : fs::directory_iterator(tmp / "s.b2frame")) {
        if (e.path().filename() != ".b2lock") {
            CHECK(mode_of(e.path()) == 0600);
            ++files;
        }
    }
    CHECK(files == 5);  // chunks.b2frame and 4 chunk files
}

TEST_CASE("outputs: a compaction that fails (a full disk) leaves no temporary",
          "[storage][outputs][process]") {
    b2nd::test::TempDir tmp;
    (void)make(tmp / "c.b2nd", 1.0);
    {
        b2nd::OpenOptions w;
        w.writable = true;
        w.auto_compact = false;
        auto arr = b2nd::NDArray<double>::open(tmp / "c.b2nd", w);
        arr.write(b2nd::Box::whole(arr.shape()), values(64 * 16, 2.0));
    }
    const auto before = b2nd::test::read_file(tmp / "c.b2nd");
    // A child whose files may not grow past 1 KiB: its writes fail as on a full disk.
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::signal(SIGXFSZ, SIG_IGN);
        rlimit lim{1024, 1024};
        ::setrlimit(RLIMIT_FSIZE, &lim);
        try {
            b2nd::OpenOptions w;
            w.writable = true;
            b2nd::storage::Frame::open(tmp / "c.b2nd", w).compact();
        } catch (const b2nd::IoError&) {
            ::_exit(3);
        } catch (...) {
            ::_exit(4);
        }
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 3);
    CHECK(b2nd::test::read_file(tmp / "c.b2nd") == before);
    CHECK_FALSE(temporaries_beside(tmp.path()));
}

TEST_CASE("outputs: a file replaced is let go of (a large one closed in the background)",
          "[storage][outputs]") {
    // Small (closed at once) and large enough (48 MiB of values, over 16 MiB stored) to be
    // closed on a thread of its own.
    for (const std::size_t rows : {std::size_t{64}, std::size_t{48 * 1024}}) {
        b2nd::test::TempDir dir;
        const std::string path = dir / "a.b2nd";
        b2nd::CreateOptions o;
        o.chunk_shape = {1024, 16};
        o.durable = false;
        const auto write = [&](double base) {
            (void)b2nd::NDArray<double>::create_from(path, {static_cast<std::int64_t>(rows), 128},
                                                     values(rows * 128, base), o);
            o.overwrite = true;
        };
        write(1);
        struct stat old {};
        REQUIRE(::stat(path.c_str(), &old) == 0);
        INFO("bytes " << old.st_size);
        if (rows > 64) {
            REQUIRE(old.st_size >= 16 << 20);  // the background path (publish.cpp's kLarge)
        }
        write(2);
        struct stat now {};
        REQUIRE(::stat(path.c_str(), &now) == 0);
        CHECK(now.st_ino != old.st_ino);
        // No descriptor of this process keeps the old file (and its blocks) alive for long.
        const auto holds_old = [&] {
            for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
                struct stat st {};
                if (::stat(e.path().c_str(), &st) == 0 && st.st_ino == old.st_ino &&
                    st.st_dev == old.st_dev) {
                    return true;
                }
            }
            return false;
        };
        bool held = holds_old();
        for (int i = 0; i < 500 && held; ++i) {
            ::usleep(10000);
            held = holds_old();
        }
        CHECK_FALSE(held);
        CHECK(b2nd::NDArray<double>::open(path).read() == values(rows * 128, 2));
    }
}
