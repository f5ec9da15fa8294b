// The lock file beside a frame as a hostile party may have prepared it (sidecar.hpp): a link, a
// FIFO, a hard link, a file of another user, a lock held for ever. Reads never write through it,
// never change a file they did not create, and never wait without bound.
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>

#include "support/files.hpp"
#include "support/temp_dir.hpp"
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace b2nd;
namespace fs = std::filesystem;

namespace {

std::string make_array(const test::TempDir& dir, bool sparse) {
    const std::string path = dir / (sparse ? "a.b2frame" : "a.b2nd");
    CreateOptions o;
    o.chunk_shape = {16};
    o.sparse = sparse;
    o.locking = false;  // no lock file: the tests plant their own
    std::vector<double> v(64);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<double>(i);
    }
    (void)NDArray<double>::create_from(path, {64}, v, o);
    fs::remove(sparse ? path + "/.b2lock" : path + ".b2lock");  // a sparse frame comes with one
    return path;
}

std::string lock_of(const std::string& path, bool sparse) {
    return sparse ? path + "/.b2lock" : path + ".b2lock";
}

void write_text(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

/// Reads the array whole (a snapshot, then data); its values must be the ones written.
void read_whole(const std::string& path) {
    const auto a = NDArray<double>::open(path);
    const auto v = a.read();
    REQUIRE(v.size() == 64);
    CHECK(v[63] == 63.0);
}

}  // namespace

TEST_CASE("lock file: a symbolic link is never written through, by readers or writers",
          "[storage][lock]") {
    for (const bool sparse : {false, true}) {
        INFO((sparse ? "sparse" : "contiguous"));
        test::TempDir dir;
        const std::string path = make_array(dir, sparse);
        const std::string victim = dir / "victim.txt";
        write_text(victim, "precious bytes");
        fs::create_symlink(victim, lock_of(path, sparse));
        CHECK_THROWS_WITH(NDArray<double>::open(path), Catch::Matchers::Contains("symbolic link") &&
                                                           Catch::Matchers::Contains(".b2lock"));
        OpenOptions w;
        w.writable = true;
        CHECK_THROWS_AS(NDArray<double>::open(path, w), IoError);
        CHECK(test::read_text(victim) == "precious bytes");
        CHECK(fs::is_symlink(lock_of(path, sparse)));
    }
}

TEST_CASE("lock file: a FIFO, a device or a hard link is refused without opening it",
          "[storage][lock]") {
    test::TempDir dir;
    const std::string path = make_array(dir, false);
    REQUIRE(::mkfifo(lock_of(path, false).c_str(), 0666) == 0);
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH(NDArray<double>::open(path), Catch::Matchers::Contains("a FIFO"));
    OpenOptions w;
    w.writable = true;
    CHECK_THROWS_WITH(NDArray<double>::open(path, w), Catch::Matchers::Contains("a FIFO"));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));

    fs::remove(lock_of(path, false));
    const std::string victim = dir / "victim.bin";
    write_text(victim, std::string(100, 'v'));
    fs::create_hard_link(victim, lock_of(path, false));
    CHECK_THROWS_WITH(NDArray<double>::open(path), Catch::Matchers::Contains("hard link"));
    CHECK_THROWS_WITH(NDArray<double>::open(path, w), Catch::Matchers::Contains("hard link"));
    CHECK(fs::file_size(victim) == 100);

    fs::remove(lock_of(path, false));
    fs::create_symlink("/dev/null", lock_of(path, false));
    CHECK_THROWS_AS(NDArray<double>::open(path), IoError);
}

TEST_CASE("lock file: a reader never grows or writes one it may not", "[storage][lock]") {
    test::TempDir dir;
    const std::string path = make_array(dir, false);
    const std::string lock = lock_of(path, false);
    // c-blosc2's own lock file: 16 bytes. A reader reads it as it is.
    write_text(lock, std::string(16, '\0'));
    read_whole(path);
    CHECK(fs::file_size(lock) == 16);

    // A full-sized lock file of another user, not group-writable: no reader slot is written.
    write_text(lock, std::string(8192, '\0'));
    if (::geteuid() == 0) {
        REQUIRE(::chown(lock.c_str(), 65534, 65534) == 0);
    } else {
        REQUIRE(::chmod(lock.c_str(), 0444) == 0);
    }
    REQUIRE(::chmod(lock.c_str(), 0644) == 0);
    {
        const auto a = NDArray<double>::open(path);  // registered readers write a slot at open
        CHECK(a.read().size() == 64);
        CHECK(test::read_file(lock) == std::vector<std::uint8_t>(8192, 0));
    }
    CHECK(fs::file_size(lock) == 8192);

    // Its own user's: the reader registers (the slot is written while the handle lives).
    if (::geteuid() == 0) {
        REQUIRE(::chown(lock.c_str(), 0, 0) == 0);
        const auto a = NDArray<double>::open(path);
        CHECK(test::read_file(lock) != std::vector<std::uint8_t>(8192, 0));
    }
}

TEST_CASE("lock file: a lock held for ever fails the open after the timeout, naming the holder",
          "[storage][lock]") {
    test::TempDir dir;
    const std::string path = make_array(dir, false);
    const std::string lock = lock_of(path, false);
    write_text(lock, std::string(8192, '\0'));
    // Another open file description of this process holds it exclusively, as a stuck writer.
    const int fd = ::open(lock.c_str(), O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX) == 0);
    OpenOptions o;
    o.lock_timeout_ms = 300;
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_AS(NDArray<double>::open(path, o), LockError);
    CHECK_THROWS_WITH(NDArray<double>::open(path, o),
                      Catch::Matchers::Contains("process " + std::to_string(::getpid())) &&
                          Catch::Matchers::Contains("0.3 s") &&
                          Catch::Matchers::Contains(".b2lock"));
    const auto took = std::chrono::steady_clock::now() - start;
    CHECK(took >= std::chrono::milliseconds(600));
    CHECK(took < std::chrono::seconds(10));
    ::flock(fd, LOCK_UN);
    read_whole(path);  // released: the open succeeds
    ::close(fd);
}

TEST_CASE("lock file: a writer that may not write it is told so, naming the owner",
          "[storage][lock][process]") {
    test::TempDir dir;
    const std::string path = make_array(dir, false);
    const std::string lock = lock_of(path, false);
    write_text(lock, std::string(8192, '\0'));
    REQUIRE(::chmod(lock.c_str(), 0444) == 0);
    // As root, a child becomes another user, who may write the array but not the lock file.
    REQUIRE(::chmod(dir.path().c_str(), 0777) == 0);
    REQUIRE(::chmod(path.c_str(), 0666) == 0);
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(fds[0]);
        if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) {
            ::_exit(5);
        }
        std::string msg = "no error";
        try {
            OpenOptions w;
            w.writable = true;
            (void)NDArray<double>::open(path, w);
        } catch (const std::exception& e) {
            msg = e.what();
        }
        (void)!::write(fds[1], msg.data(), msg.size());
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string msg;
    char buf[512];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) {
        msg.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    INFO(msg);
    CHECK(msg.find("a writer must write the lock file") != std::string::npos);
    CHECK(msg.find("mode 0444") != std::string::npos);
    CHECK(msg.find("Bad file descriptor") == std::string::npos);
}
