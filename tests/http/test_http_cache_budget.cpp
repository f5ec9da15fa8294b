// One bound per persistent cache directory (OpenOptions::http_cache_bytes), across processes:
// the leaf caches of a remote store, written by one process or by several at once, together
// hold at most the bound; a cache no process writes gives its room; the ledger that keeps the
// count is never a file that was there before. What the caches hold is measured from the cache
// files themselves (their stored chunks), never from the ledger.
#include <filesystem>
#include <fstream>
#include <functional>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/store.hpp>

#include "support/files.hpp"
#include "support/served_array.hpp"
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

using b2nd::test::ServedArray;

/// The served array, and a store s.b2z beside it with two leaves /a and /b of its values.
std::unique_ptr<ServedArray> serve_store(std::string& why) {
    auto s = b2nd::test::serve_array(why);
    if (s) {
        auto w = b2nd::StoreWriter::create(s->dir / "s.b2z");
        w.put("/a", s->local());
        w.put("/b", s->local());
        w.commit();
    }
    return s;
}

/// Bytes the chunks of an array file take.
std::uint64_t stored_bytes(const std::string& path) {
    b2nd::OpenOptions raw;
    raw.raw_objects = true;
    const auto a = b2nd::AnyArray::open(path, raw);
    std::uint64_t n = 0;
    for (std::int64_t i = 0; i < a.frame().nchunks(); ++i) {
        n += a.frame().chunk_unchecked(i).bytes.size();
    }
    return n;
}

/// What the cache files (*.b2nd) of `dir` hold together.
std::uint64_t held_in(const std::string& dir) {
    std::uint64_t n = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        if (e.path().extension() == ".b2nd") {
            n += stored_bytes(e.path().string());
        }
    }
    return n;
}

/// Options of a store whose leaves keep their caches in `dir`, bounded by `bound`.
b2nd::OpenOptions in_directory(const ServedArray& s, const std::string& dir, std::uint64_t bound) {
    b2nd::OpenOptions o = s.cached(bound);
    o.http_cache = dir;
    o.nthreads = 1;
    return o;
}

/// A bound that one leaf alone fills: about 60% of what its chunks take.
std::uint64_t bound_for(const ServedArray& s) {
    return stored_bytes(s.dir / "a.b2nd") * 3 / 5;
}

/// The store's URL, and a cache directory with a bound that one leaf alone fills.
struct Shared {
    explicit Shared(const ServedArray& s)
        : dir(s.own / "leaves"), bound(bound_for(s)), url(s.server->url("s.b2z")) {}
    std::string dir;
    std::uint64_t bound;
    std::string url;
};

/// A child process running `body` (its exit code; 99 for an exception), talking through sockets.
struct Worker {
    pid_t pid = -1;
    int to = -1;    // the child reads it
    int from = -1;  // the child writes it

    template <class F>
    explicit Worker(F body) {
        int down[2];
        int up[2];
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, down) == 0);
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, up) == 0);
        pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            ::close(down[1]);
            ::close(up[0]);
            int code = 99;
            try {
                code = body(down[0], up[1]);
            } catch (...) {  // NOLINT(bugprone-empty-catch): the exit code says it
            }
            ::_exit(code);
        }
        ::close(down[0]);
        ::close(up[1]);
        to = down[1];
        from = up[0];
    }
    /// Tells the child to end (a byte: a later child holds a copy of `to`, so closing it is not
    /// seen) and waits for its exit code (-1: killed).
    int finish() {
        const char c = 'x';
        (void)::send(to, &c, 1, MSG_NOSIGNAL);  // it may have ended already
        ::close(to);
        ::close(from);
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
};

void signal(int fd) {
    const char c = 'x';
    REQUIRE(::send(fd, &c, 1, MSG_NOSIGNAL) == 1);
}
bool wait_signal(int fd) {
    char c = 0;
    return ::read(fd, &c, 1) == 1;
}

/// A child's part: `first`, then (told to go) `second`, saying when each is done, and alive until
/// told to end. 0: both right; 1: wrong values; 2: never told to go.
int in_two_steps(int in,
                 int out,
                 const std::function<bool()>& first,
                 const std::function<bool()>& second) {
    const bool one = first();
    signal(out);
    if (!wait_signal(in)) {
        return 2;
    }
    const bool two = second();
    signal(out);
    (void)wait_signal(in);  // the parent measures meanwhile
    return one && two ? 0 : 1;
}

}  // namespace

TEST_CASE("http cache budget: the leaves of one store share the directory's bound",
          "[http][cache]") {
    B2ND_HTTP_FIXTURE(s, serve_store);
    const std::string dir = s.own / "leaves";
    const std::uint64_t bound = bound_for(s);
    b2nd::OpenOptions o = in_directory(s, dir, bound);
    o.nthreads = 2;  // stores from two decoding threads, and one cache asking the other for room
    const b2nd::Store store = b2nd::Store::open(s.server->url("s.b2z"), o);
    const auto a = store.open_array("/a");
    const auto b = store.open_array("/b");
    CHECK(a.read() == s.local().read());
    const std::uint64_t a_alone = stored_bytes(dir + "/a.b2nd");
    CHECK(a_alone > bound / 2);  // one leaf fills the bound
    CHECK(b.read() == s.local().read());
    // Both leaves' files together, each bounded alone before, stay within the one bound: /b's
    // reads took room from /a.
    CHECK(held_in(dir) <= bound);
    CHECK(stored_bytes(dir + "/b.b2nd") > bound / 2);
    CHECK(stored_bytes(dir + "/a.b2nd") < a_alone);
    // And /a still reads right, from what its cache kept and the network.
    CHECK(a.read() == s.local().read());
    CHECK(held_in(dir) <= bound);
}

TEST_CASE("http cache budget: two processes writing one directory hold one bound",
          "[http][cache][fork]") {
    B2ND_HTTP_FIXTURE(s, serve_store);
    const Shared d(s);
    const auto expected = s.local().read();
    // Each child opens its leaf, waits until both are open, reads the whole leaf twice, and keeps
    // its handle (and its cache file) until told to end.
    const auto reader = [&](const char* key) {
        return [&, key](int in, int out) {
            const b2nd::Store store = b2nd::Store::open(d.url, in_directory(s, d.dir, d.bound));
            const auto leaf = store.open_array(key);
            return in_two_steps(
                in, out, [] { return true; },
                [&] { return leaf.read() == expected && leaf.read() == expected; });
        };
    };
    Worker one(reader("/a"));
    Worker two(reader("/b"));
    REQUIRE(wait_signal(one.from));
    REQUIRE(wait_signal(two.from));
    signal(one.to);
    signal(two.to);
    REQUIRE(wait_signal(one.from));
    REQUIRE(wait_signal(two.from));
    // Both alive, both done: each alone would have kept about the bound.
    const std::uint64_t held = held_in(d.dir);
    CHECK(held <= d.bound);
    CHECK(held > 0);
    CHECK(one.finish() == 0);  // 1: wrong values, 2: no go, 99: an exception
    CHECK(two.finish() == 0);
    CHECK(held_in(d.dir) <= d.bound);
}

TEST_CASE("http cache budget: a process writing a full directory gives room when asked",
          "[http][cache][fork]") {
    B2ND_HTTP_FIXTURE(s, serve_store);
    const Shared d(s);
    const b2nd::Box front{{0, 0, 0}, {16, 64, 64}, {1, 1, 1}};  // chunks 0-3
    const b2nd::Box back{{16, 0, 0}, {16, 64, 64}, {1, 1, 1}};  // chunks 4-7
    const auto local = s.local();
    // The child fills the d.bound with /a's first half and keeps writing its cache file.
    Worker one([&](int in, int out) {
        const b2nd::Store store = b2nd::Store::open(d.url, in_directory(s, d.dir, d.bound));
        const auto a = store.open_array("/a");
        return in_two_steps(
            in, out, [&] { return a.read(front) == local.read(front); },
            [&] { return a.read(back) == local.read(back); });  // its next stores
    });
    REQUIRE(wait_signal(one.from));
    const std::uint64_t one_chunk = stored_bytes(s.dir / "a.b2nd") / 8;
    const b2nd::Store store = b2nd::Store::open(d.url, in_directory(s, d.dir, d.bound));
    {
        // /b finds no room: the child writes /a's file. Its reads go on uncached, and ask.
        const auto b = store.open_array("/b");
        CHECK(b.read() == local.read());
        CHECK(stored_bytes(d.dir + "/b.b2nd") < one_chunk);
        CHECK(held_in(d.dir) <= d.bound);
    }
    signal(one.to);
    REQUIRE(wait_signal(one.from));
    // The child's next stores gave up what was asked, and kept room for what /b waits to store:
    // a new handle on /b finds it.
    CHECK(held_in(d.dir) <= d.bound);
    const auto b = store.open_array("/b");
    CHECK(b.read() == local.read());
    CHECK(stored_bytes(d.dir + "/b.b2nd") > 0);
    CHECK(held_in(d.dir) <= d.bound);
    CHECK(one.finish() == 0);  // 1: wrong values, 2: no go, 99: an exception
}

TEST_CASE("http cache budget: a cache no process writes gives its room", "[http][cache][fork]") {
    B2ND_HTTP_FIXTURE(s, serve_store);
    const Shared d(s);
    const auto expected = s.local().read();
    Worker one([&](int, int) {
        const b2nd::Store store = b2nd::Store::open(d.url, in_directory(s, d.dir, d.bound));
        return store.open_array("/a").read() == expected ? 0 : 1;
    });
    REQUIRE(one.finish() == 0);
    const std::uint64_t a_alone = stored_bytes(d.dir + "/a.b2nd");
    CHECK(a_alone > d.bound / 2);
    // This process reads /b: /a's file, which nobody writes now, is emptied for it.
    const b2nd::Store store = b2nd::Store::open(d.url, in_directory(s, d.dir, d.bound));
    CHECK(store.open_array("/b").read() == expected);
    CHECK(stored_bytes(d.dir + "/b.b2nd") > d.bound / 2);
    CHECK(stored_bytes(d.dir + "/a.b2nd") < a_alone);
    CHECK(held_in(d.dir) <= d.bound);
    // What /a's cache kept still reads right.
    CHECK(store.open_array("/a").read() == expected);
    CHECK(held_in(d.dir) <= d.bound);
}

TEST_CASE("http cache budget: the ledger is never a file that was there", "[http][cache]") {
    B2ND_HTTP_FIXTURE(s, serve_store);
    const std::string dir = s.own / "leaves";
    fs::create_directory(dir);
    const std::string ledger = dir + "/.b2nd-cache-ledger";
    const std::string url = s.server->url("s.b2z");
    // A ledger that cannot be used: the read goes on uncached (a read never fails because of
    // the cache), and the file is left as it is.
    SECTION("a file of the user's") {
        {
            std::ofstream f(ledger);
            f << "user data\n";
        }
        const b2nd::Store store = b2nd::Store::open(url, in_directory(s, dir, bound_for(s)));
        CHECK(store.open_array("/a").read() == s.local().read());
        CHECK(b2nd::test::read_text(ledger) == "user data\n");
        CHECK(stored_bytes(dir + "/a.b2nd") < bound_for(s) / 4);
    }
    SECTION("a planted link") {
        const std::string target = s.own / "target";
        {
            std::ofstream f(target);
            f << "user data\n";
        }
        fs::create_symlink(target, ledger);
        const b2nd::Store store = b2nd::Store::open(url, in_directory(s, dir, bound_for(s)));
        CHECK(store.open_array("/a").read() == s.local().read());
        CHECK(b2nd::test::read_text(target) == "user data\n");
    }
    SECTION("a FIFO") {
        REQUIRE(::mkfifo(ledger.c_str(), 0600) == 0);
        const b2nd::Store store = b2nd::Store::open(url, in_directory(s, dir, bound_for(s)));
        CHECK(store.open_array("/a").read() == s.local().read());
        CHECK(fs::is_fifo(ledger));
    }
    SECTION("another user's ledger, or one others may write") {
        {
            std::ofstream f(ledger);
            f << "b2nd cache ledger 1\ntick 1\nend 0\n";
        }
        REQUIRE(::chmod(ledger.c_str(), 0666) == 0);
        {
            const b2nd::Store store = b2nd::Store::open(url, in_directory(s, dir, bound_for(s)));
            CHECK(store.open_array("/a").read() == s.local().read());
        }
        CHECK(b2nd::test::read_text(ledger) == "b2nd cache ledger 1\ntick 1\nend 0\n");
        if (::geteuid() == 0) {
            REQUIRE(::chmod(ledger.c_str(), 0644) == 0);
            REQUIRE(::chown(ledger.c_str(), 65534, 65534) == 0);
            const b2nd::Store store = b2nd::Store::open(url, in_directory(s, dir, bound_for(s)));
            CHECK(store.open_array("/b").read() == s.local().read());
            CHECK(b2nd::test::read_text(ledger) == "b2nd cache ledger 1\ntick 1\nend 0\n");
        }
    }
    SECTION("a ledger torn by a crash is started anew") {
        {
            std::ofstream f(ledger);
            f << "b2nd cache ledger 1\ntick 4\nentry 12 3";
        }
        const std::uint64_t bound = bound_for(s);
        const b2nd::Store store = b2nd::Store::open(url, in_directory(s, dir, bound));
        CHECK(store.open_array("/a").read() == s.local().read());
        CHECK(store.open_array("/b").read() == s.local().read());
        CHECK(held_in(dir) <= bound);
        CHECK(b2nd::test::read_text(ledger).rfind("b2nd cache ledger 1\n", 0) == 0);
    }
    SECTION("a hostile ledger never touches a file that is no cache, nor turns caching off") {
        // An entry claiming the most bytes there are, for an array of the user's: it names no
        // cache, so it holds nothing; the user's file is never opened for writing (no lock
        // file beside it) and the caches of the directory go on caching.
        fs::copy_file(s.dir / "a.b2nd", dir + "/user.b2nd");
        const auto before = b2nd::test::read_file(dir + "/user.b2nd");
        {
            std::ofstream f(ledger);
            f << "b2nd cache ledger 1\ntick 1\nentry 18446744073709551615 0 0 0 0 -1 user.b2nd\n"
                 "end 1\n";
        }
        REQUIRE(::chmod(ledger.c_str(), 0600) == 0);
        const b2nd::Store store = b2nd::Store::open(url, in_directory(s, dir, bound_for(s)));
        CHECK(store.open_array("/a").read() == s.local().read());
        CHECK(stored_bytes(dir + "/a.b2nd") > bound_for(s) / 4);
        CHECK(b2nd::test::read_file(dir + "/user.b2nd") == before);
        CHECK_FALSE(fs::exists(dir + "/user.b2nd.b2lock"));
        CHECK(b2nd::test::read_text(ledger).find("user.b2nd") == std::string::npos);
    }
    SECTION("without a bound there is no ledger") {
        const b2nd::Store store = b2nd::Store::open(url, in_directory(s, dir, 0));
        CHECK(store.open_array("/a").read() == s.local().read());
        CHECK_FALSE(fs::exists(ledger));
    }
}
