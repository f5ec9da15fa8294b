// The other processes of the process tests (test_processes.cpp starts them with posix_spawn).
//
// The arrays they share have shape (rows, 40) int32 and one invariant in every committed
// state: element (i, j) is v * 1000 + j for one v. A writer changes v by rewriting everything,
// and appends, inserts and removes rows of the current v; a reader that ever sees two values of
// v, or a row that breaks the pattern, has seen a torn state.
//
//   worker create PATH [sparse]                 a fresh array, v = 1, 64 rows
//   worker writer PATH SECONDS SEED [rewrite] [fast]
//                                               random commits for SECONDS (0: until killed);
//                                               prints "commits=N" at the end; with `rewrite`
//                                               only whole rewrites (the shape stays); with
//                                               `fast` commits are not fsynced (durable off)
//   worker reader PATH SECONDS MODE             reads the whole array again and again; MODE is
//                                               open (a fresh open per read), refresh, follow,
//                                               lockread (OpenOptions::lock_reads);
//                                               prints "reads=N errors=E torn=T changes=C"
//   worker publisher PATH SECONDS [sparse] [fast]
//                                               replaces the array again and again, each time
//                                               with create_from (overwrite) of the next v and
//                                               16-80 rows (0 SECONDS: until killed); prints
//                                               "publishes=N"; `fast`: not fsynced
//   worker hold PATH SECONDS                    reads, prints "held v=V", sleeps SECONDS, reads
//                                               its snapshot again: "same" when unchanged
//   worker try-write PATH                       prints "locked" (LockError) or "opened"
//   worker check PATH                           prints "ok rows=R v=V" or "bad: ..."
//   worker memory SECONDS                       an in-memory array (B2ND_MEMORY_DIR), written,
//                                               then sleeps SECONDS and exits normally
//   worker store-writer PATH SEED               rewrites both leaves of a store and its "gen"
//                                               until killed, printing "." after each commit
//   worker store-check PATH                     prints "ok G" when each leaf holds one whole
//                                               generation G, else what is wrong
//   worker appender PATH [PAUSE_MS]             an Appender on PATH ((0, 40) int32): pushes
//                                               k % 7 + 1 rows (element (r, j) = r * 40 + j),
//                                               flushes, prints ".", pauses; until killed
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <b2nd/appender.hpp>
#include <b2nd/b2nd.hpp>
#include <b2nd/store.hpp>

#include <unistd.h>

namespace {

constexpr std::int64_t kCols = 40;
using Clock = std::chrono::steady_clock;

std::vector<std::int32_t> rows_of(std::int64_t v, std::int64_t n) {
    std::vector<std::int32_t> out(static_cast<std::size_t>(n * kCols));
    for (std::size_t k = 0; k < out.size(); ++k) {
        out[k] = static_cast<std::int32_t>(v * 1000 + static_cast<std::int64_t>(k) % kCols);
    }
    return out;
}

/// "" when `data` (rows x 40) is one committed state, else what is wrong.
std::string check_state(const std::vector<std::int32_t>& data, std::int64_t rows) {
    if (static_cast<std::int64_t>(data.size()) != rows * kCols) {
        return "size " + std::to_string(data.size()) + " for " + std::to_string(rows) + " rows";
    }
    if (rows == 0) {
        return {};
    }
    const std::int64_t v = data[0] / 1000;
    for (std::size_t k = 0; k < data.size(); ++k) {
        const std::int64_t want = v * 1000 + static_cast<std::int64_t>(k) % kCols;
        if (data[k] != want) {
            return "element " + std::to_string(k) + " is " + std::to_string(data[k]) +
                   ", expected " + std::to_string(want);
        }
    }
    return {};
}

struct Rng {
    std::uint64_t s;
    std::uint64_t below(std::uint64_t n) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        return (s >> 33) % n;
    }
};

/// How the workers create arrays: small chunks and blocks, replacing what is there.
b2nd::CreateOptions create_options(bool sparse) {
    b2nd::CreateOptions o;
    o.chunk_shape = {16, kCols};
    o.block_shape = {4, kCols};
    o.sparse = sparse;
    o.overwrite = true;
    o.nthreads = 1;
    return o;
}

int create(const std::string& path, bool sparse) {
    (void)b2nd::NDArray<std::int32_t>::create_from(path, {64, kCols}, rows_of(1, 64),
                                                   create_options(sparse));
    return 0;
}

int writer(
    const std::string& path, double seconds, std::uint64_t seed, bool rewrite_only, bool durable) {
    b2nd::OpenOptions o;
    o.writable = true;
    o.durable = durable;
    o.nthreads = 1;
    o.lock_wait_ms = 5000;  // a writer killed a moment ago may still be on its way out
    auto a = b2nd::NDArray<std::int32_t>::open(path, o);
    Rng rng{seed};
    const auto until = Clock::now() + std::chrono::duration<double>(seconds);
    std::int64_t commits = 0;
    while (seconds == 0 || Clock::now() < until) {
        const std::int64_t rows = a.shape()[0];
        const std::int64_t v = rows == 0 ? 1 : a(0, 0) / 1000;
        switch (rewrite_only ? 0 : rng.below(rows > 300 ? 5 : 4)) {
            case 0:  // rewrite everything with the next value
                a.write(b2nd::Box::whole(a.shape()), rows_of(v + 1, rows));
                break;
            case 1:
                a.append(0, rows_of(v, 1 + static_cast<std::int64_t>(rng.below(20))));
                break;
            case 2:
                a.insert(0,
                         static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(rows + 1))),
                         rows_of(v, 1 + static_cast<std::int64_t>(rng.below(20))));
                break;
            default: {
                const std::int64_t n =
                    std::min<std::int64_t>(rows, 1 + static_cast<std::int64_t>(rng.below(30)));
                if (n > 0) {
                    a.remove(0,
                             static_cast<std::int64_t>(
                                 rng.below(static_cast<std::uint64_t>(rows - n + 1))),
                             n);
                }
                break;
            }
        }
        ++commits;
    }
    std::printf("commits=%lld\n", static_cast<long long>(commits));
    return 0;
}

int publisher(const std::string& path, double seconds, bool sparse, bool durable) {
    b2nd::CreateOptions o = create_options(sparse);
    o.durable = durable;
    Rng rng{static_cast<std::uint64_t>(::getpid())};
    const auto until = Clock::now() + std::chrono::duration<double>(seconds);
    std::int64_t publishes = 0;
    for (std::int64_t v = 2; seconds == 0 || Clock::now() < until; ++v) {
        const auto rows = static_cast<std::int64_t>(16 + rng.below(65));
        (void)b2nd::NDArray<std::int32_t>::create_from(path, {rows, kCols}, rows_of(v, rows), o);
        ++publishes;
    }
    std::printf("publishes=%lld\n", static_cast<long long>(publishes));
    return 0;
}

int reader(const std::string& path, double seconds, const std::string& mode) {
    std::int64_t reads = 0, errors = 0, torn = 0, changes = 0;
    b2nd::OpenOptions o;
    o.nthreads = 1;
    o.follow = mode == "follow";
    o.lock_reads = mode == "lockread";
    std::optional<b2nd::NDArray<std::int32_t>> kept;
    const auto until = Clock::now() + std::chrono::duration<double>(seconds);
    std::string first_problem;
    while (Clock::now() < until) {
        try {
            if (mode == "open" || !kept) {
                kept = b2nd::NDArray<std::int32_t>::open(path, o);
            } else if (mode == "refresh") {
                changes += kept->refresh() ? 1 : 0;
            }
            const std::vector<std::int32_t> data = kept->read();
            const std::string why = check_state(data, kept->shape()[0]);
            if (!why.empty()) {
                ++torn;
                if (first_problem.empty()) {
                    first_problem = "torn: " + why;
                }
            }
        } catch (const b2nd::Error& e) {
            ++errors;
            if (first_problem.empty()) {
                first_problem = e.what();
            }
        }
        ++reads;
    }
    std::printf("reads=%lld errors=%lld torn=%lld changes=%lld\n", static_cast<long long>(reads),
                static_cast<long long>(errors), static_cast<long long>(torn),
                static_cast<long long>(changes));
    if (!first_problem.empty()) {
        std::printf("first: %s\n", first_problem.c_str());
    }
    return 0;
}

int try_write(const std::string& path) {
    b2nd::OpenOptions o;
    o.writable = true;
    try {
        (void)b2nd::AnyArray::open(path, o);
        std::printf("opened\n");
    } catch (const b2nd::LockError& e) {
        std::printf("locked: %s\n", e.what());
    }
    return 0;
}

int check(const std::string& path) {
    try {
        const auto a = b2nd::NDArray<std::int32_t>::open(path);
        const std::vector<std::int32_t> data = a.read();
        const std::string why = check_state(data, a.shape()[0]);
        if (!why.empty()) {
            std::printf("bad: %s\n", why.c_str());
            return 0;
        }
        std::printf("ok rows=%lld v=%lld\n", static_cast<long long>(a.shape()[0]),
                    static_cast<long long>(data.empty() ? 0 : data[0] / 1000));
    } catch (const b2nd::Error& e) {
        std::printf("bad: %s\n", e.what());
    }
    return 0;
}

/// A reader that keeps one snapshot, idle: reads the array, prints "held v=V", sleeps SECONDS,
/// reads it again and prints "same" when it got the same values (its snapshot's files are all
/// still there), else what it got.
int hold(const std::string& path, double seconds) {
    b2nd::OpenOptions o;
    o.nthreads = 1;
    const auto a = b2nd::NDArray<std::int32_t>::open(path, o);
    const std::vector<std::int32_t> first = a.read();
    std::printf("held v=%lld\n", static_cast<long long>(first.empty() ? 0 : first[0] / 1000));
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    try {
        const std::vector<std::int32_t> again = a.read();
        std::printf(again == first ? "same\n" : "changed: %s\n",
                    check_state(again, a.shape()[0]).c_str());
    } catch (const b2nd::Error& e) {
        std::printf("error: %s\n", e.what());
    }
    return 0;
}

int memory(double seconds) {
    auto a = b2nd::NDArray<std::int32_t>::create_in_memory_from({64, kCols}, rows_of(7, 64));
    std::printf("path=%s\n", a.path().c_str());
    std::fflush(stdout);
    const auto until = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return check_state(a.read(), 64).empty() ? 0 : 3;
}

/// Changes the store at `path` forever (until killed): generation g puts /a (2,000 doubles: a
/// file of its own) and /g/b (10 doubles: embedded) filled with g and sets the tree's "gen".
int store_writer(const std::string& path, std::uint64_t seed) {
    for (std::uint64_t i = 0;; ++i) {
        const double g = static_cast<double>(seed * 100000 + i);
        auto w = b2nd::StoreWriter::open(path, 1000);
        for (const auto& [key, n] : {std::pair<const char*, std::int64_t>{"/a", 2000},
                                     std::pair<const char*, std::int64_t>{"/g/b", 10}}) {
            const std::vector<double> v(static_cast<std::size_t>(n), g);
            w.put(key, b2nd::AnyArray::create_in_memory_from(
                           b2nd::dtype_of<double>(), {n},
                           {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * 8}));
        }
        w.set_vlmeta("/", "gen", b2nd::Value(g));
        w.commit();
        std::fputc('.', stdout);  // one per commit, for a parent that kills after so many
        std::fflush(stdout);
    }
}

/// "ok" when the store opens and each leaf holds one generation whole (and, for a .b2z, the
/// same one as the other leaf and "gen": one commit); else what is wrong.
int store_check(const std::string& path) {
    const b2nd::Store s = b2nd::Store::open(path);
    std::vector<double> gens;
    for (const char* key : {"/a", "/g/b"}) {
        const auto bytes = s.open_array(key).read();
        std::vector<double> v(bytes.size() / 8);
        std::memcpy(v.data(), bytes.data(), bytes.size());
        for (double x : v) {
            if (x != v.front()) {
                std::printf("torn: %s holds %g and %g\n", key, v.front(), x);
                return 3;
            }
        }
        gens.push_back(v.front());
    }
    double gen = -1;
    for (const auto& [n, v] : s.vlmeta("/")) {
        if (n == "gen") {
            gen = v.as<double>();
        }
    }
    if (std::string(s.form()) == "b2z" && (gens[0] != gens[1] || gens[0] != gen)) {
        std::printf("mixed: /a %g, /g/b %g, gen %g\n", gens[0], gens[1], gen);
        return 3;
    }
    std::printf("ok %g\n", gens[0]);
    return 0;
}

}  // namespace

/// Pushes k % 7 + 1 rows (element (r, j) = r * 40 + j) and flushes, printing "." after each
/// flush, until killed.
int appender(const std::string& path, int pause_ms) {
    b2nd::OpenOptions o;
    o.writable = true;
    o.nthreads = 2;
    auto a = b2nd::NDArray<std::int32_t>::open(path, o);
    b2nd::Appender<std::int32_t> app(a, 0);
    std::int64_t row = 0;
    for (std::int64_t k = 0;; ++k) {
        const std::int64_t n = k % 7 + 1;
        std::vector<std::int32_t> rows(static_cast<std::size_t>(n * kCols));
        for (std::size_t e = 0; e < rows.size(); ++e) {
            rows[e] = static_cast<std::int32_t>(row * kCols + static_cast<std::int64_t>(e));
        }
        app.push(rows);
        row += n;
        app.flush();
        std::printf(".");
        std::fflush(stdout);
        if (pause_ms > 0) {  // a reader's turn
            std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
        }
    }
}

int main(int argc, char** argv) {
    const std::vector<std::string> a(argv + 1, argv + argc);
    const auto flag = [&](const char* word) {  // a word after the first three arguments
        return a.size() > 3 && std::find(a.begin() + 3, a.end(), word) != a.end();
    };
    try {
        if (a.size() >= 2 && a[0] == "create") {
            return create(a[1], a.size() > 2 && a[2] == "sparse");
        }
        if (a.size() >= 4 && a.size() <= 6 && a[0] == "writer") {
            return writer(a[1], std::stod(a[2]), std::stoull(a[3]), flag("rewrite"), !flag("fast"));
        }
        if (a.size() == 4 && a[0] == "reader") {
            return reader(a[1], std::stod(a[2]), a[3]);
        }
        if (a.size() >= 3 && a.size() <= 5 && a[0] == "publisher") {
            return publisher(a[1], std::stod(a[2]), flag("sparse"), !flag("fast"));
        }
        if (a.size() == 3 && a[0] == "hold") {
            return hold(a[1], std::stod(a[2]));
        }
        if (a.size() == 2 && a[0] == "try-write") {
            return try_write(a[1]);
        }
        if (a.size() == 2 && a[0] == "memory") {
            return memory(std::stod(a[1]));
        }
        if (a.size() == 2 && a[0] == "check") {
            return check(a[1]);
        }
        if (a.size() == 3 && a[0] == "store-writer") {
            return store_writer(a[1], std::stoull(a[2]));
        }
        if ((a.size() == 2 || a.size() == 3) && a[0] == "appender") {
            return appender(a[1], a.size() == 3 ? std::stoi(a[2]) : 0);
        }
        if (a.size() == 2 && a[0] == "store-check") {
            return store_check(a[1]);
        }
    } catch (const std::exception& e) {
        std::printf("failed: %s\n", e.what());
        return 1;
    }
    std::fprintf(stderr, "usage: see tests/process/worker.cpp\n");
    return 2;
}
