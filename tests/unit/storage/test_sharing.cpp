// Frames shared between handles through the lock file (sidecar.hpp): one writer at a time, the
// generation counter, snapshots readers keep while a writer replaces chunks, reading that leaves
// no lock file behind. (tests/process/ does the same with real processes.)
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>

#include "storage/sources/posix_file.hpp"
#include "support/data.hpp"
#include "support/temp_dir.hpp"
#include <unistd.h>

using namespace b2nd;
using storage::Frame;

namespace {

constexpr std::int32_t kChunk = 400;  // 100 int32 per chunk

/// A chunk of 100 int32, all `v` except the last, v + 1 (so it is not a special chunk).
std::vector<std::uint8_t> chunk_of(std::int32_t v) {
    std::vector<std::int32_t> x(100, v);
    x.back() = v + 1;
    codec::EncodeParams p;
    p.typesize = 4;
    p.blocksize = 200;
    return codec::encode_chunk({reinterpret_cast<const std::uint8_t*>(x.data()), kChunk}, p);
}

std::int32_t first_of(const Frame& f, std::int64_t i) {
    const auto b = f.decode_chunk(i);
    std::int32_t v = 0;
    std::memcpy(&v, b.data(), 4);
    return v;
}

storage::FrameParams params() {
    storage::FrameParams p;
    p.typesize = 4;
    p.chunksize = kChunk;
    p.blocksize = 200;
    return p;
}

std::size_t chunk_files(const std::string& dir) {
    std::size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        n += e.path().extension() == ".chunk" ? 1U : 0U;
    }
    return n;
}

}  // namespace

TEST_CASE("sharing: one writer at a time, a clear LockError for the second", "[storage]") {
    for (const bool sparse : {false, true}) {
        INFO((sparse ? "sparse" : "contiguous"));
        test::TempDir dir;
        const std::string path = dir / (sparse ? "w.b2frame" : "w.b2nd");
        Frame w = Frame::create(path, params(), sparse);
        w.append_chunk(chunk_of(1));
        const std::string lock_file = sparse ? path + "/.b2lock" : path + ".b2lock";
        CHECK(std::filesystem::exists(lock_file));
        storage::OpenOptions o;
        o.writable = true;
        REQUIRE_THROWS_AS(Frame::open(path, o), LockError);
        CHECK_THROWS_WITH(Frame::open(path, o), Catch::Matchers::Contains(path) &&
                                                    Catch::Matchers::Contains("open for writing") &&
                                                    Catch::Matchers::Contains(".b2lock"));
        // Readers are welcome, and see the writer's commits after a refresh.
        Frame r = Frame::open(path);
        CHECK(r.nchunks() == 1);
        w.append_chunk(chunk_of(2));
        CHECK(r.nchunks() == 1);  // its snapshot
        CHECK(r.refresh());
        CHECK(r.nchunks() == 2);
        CHECK(first_of(r, 1) == 2);
        CHECK_FALSE(r.refresh());  // nothing new
        // Waiting: a writer that closes within the wait lets the next one in.
        o.lock_wait_ms = 2000;
        std::thread closer([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            w = Frame::open(path);  // the writable handle goes; w becomes a reader
        });
        const auto t0 = std::chrono::steady_clock::now();
        Frame w2 = Frame::open(path, o);
        closer.join();
        CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(90));
        w2.append_chunk(chunk_of(3));
        CHECK(w.refresh());
        CHECK(first_of(w, 2) == 3);
        // Without locking a handle neither takes nor honours the protocol.
        o.locking = false;
        o.lock_wait_ms = 0;
        CHECK_NOTHROW(Frame::open(path, o));
    }
}

TEST_CASE("sharing: reading a frame no writer shares leaves no lock file", "[storage]") {
    test::TempDir dir;
    const std::string path = dir / "r.b2nd";
    {
        Frame w = Frame::create(path, params(), false, {}, false, /*locking=*/false);
        w.append_chunk(chunk_of(5));
    }
    CHECK_FALSE(std::filesystem::exists(path + ".b2lock"));
    const Frame r = Frame::open(path);
    CHECK(first_of(r, 0) == 5);
    CHECK_FALSE(std::filesystem::exists(path + ".b2lock"));
    // Arrays: create() builds under a temporary name without a lock file, then takes the
    // array's own for writing; nothing else is left behind.
    {
        auto a = NDArray<float>::create(dir / "a.b2nd", {10});
        a.set({3}, 1.5f);
    }
    std::size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
        ++files;
        INFO(e.path().string());
        CHECK((e.path().filename() == "r.b2nd" || e.path().filename() == "a.b2nd" ||
               e.path().filename() == "a.b2nd.b2lock"));
    }
    CHECK(files == 3);
}

TEST_CASE("sharing: a reader's snapshot survives the writer replacing its chunks", "[storage]") {
    test::TempDir dir;
    const std::string path = dir / "s.b2frame";
    Frame w = Frame::create(path, params(), true);
    w.append_chunks({chunk_of(10), chunk_of(20), chunk_of(30)});
    std::optional<Frame> old_reader = Frame::open(path);
    // Replace every chunk twice: the files the old snapshot names must stay.
    for (int round = 1; round <= 2; ++round) {
        storage::FrameEdit e;
        for (std::int32_t i = 0; i < 3; ++i) {
            e.add_staged(w.stage(chunk_of(100 * round + i)));
        }
        w.apply(e);
    }
    CHECK(first_of(*old_reader, 0) == 10);
    CHECK(first_of(*old_reader, 2) == 30);
    // 3 live, 3 kept for the older snapshot; the 3 files of the state in between named nothing
    // that a reader holds, and went with the second commit.
    CHECK(chunk_files(path) == 6);
    // Once the reader moves on, the writer's next commit removes what no snapshot names: the 6
    // files of the first two states, not the one it replaces now (the reader's state has it).
    CHECK(old_reader->refresh());
    CHECK(first_of(*old_reader, 0) == 200);
    w.update_chunk(0, chunk_of(300));
    CHECK(chunk_files(path) == 4);
    CHECK(first_of(*old_reader, 0) == 200);
    CHECK(first_of(Frame::open(path), 0) == 300);
    // A reader that closes releases its claim.
    old_reader.reset();
    w.update_chunk(1, chunk_of(301));
    CHECK(chunk_files(path) == 3);
}

TEST_CASE("sharing: arrays take the writer lock too", "[storage]") {
    test::TempDir dir;
    auto a = NDArray<std::int32_t>::create(dir / "x.b2nd", {100});
    OpenOptions o;
    o.writable = true;
    CHECK_THROWS_AS(NDArray<std::int32_t>::open(dir / "x.b2nd", o), LockError);
    auto r = NDArray<std::int32_t>::open(dir / "x.b2nd");
    a.set({7}, 70);
    CHECK(r(7) == 0);  // r's snapshot is from before
}

TEST_CASE("sharing: a file under many small updates stays near its compacted size", "[storage]") {
    test::TempDir dir;
    const std::string path = dir / "grow.b2nd";
    CreateOptions co = test::chunked({16, 40}, {4, 40});
    auto a = NDArray<std::int32_t>::create(path, {208, 40}, co);
    std::vector<std::int32_t> model(208 * 40, 0);
    const auto reader = NDArray<std::int32_t>::open(path);  // an old snapshot, held throughout
    std::uint64_t largest = 0;
    for (int i = 0; i < 10000; ++i) {
        const std::int64_t r = (i * 37) % 208, c = (i * 11) % 40;
        a.set({r, c}, i);
        model[static_cast<std::size_t>(r * 40 + c)] = i;
        largest = std::max<std::uint64_t>(largest, std::filesystem::file_size(path));
    }
    CHECK(a.read() == model);
    CHECK(reader.read() == std::vector<std::int32_t>(208 * 40, 0));  // its file, kept alive
    // The bound: twice the compacted size plus the slack, at every moment.
    const std::uint64_t before = std::filesystem::file_size(path);
    a.any().compact();
    const std::uint64_t compacted = std::filesystem::file_size(path);
    INFO("largest " << largest << ", compacted " << compacted << ", before " << before);
    CHECK(largest <= 2 * compacted + storage::kAutoCompactSlack + 64 * 1024);
    CHECK(before > compacted);
    // Without the policy the file grows with every update.
    OpenOptions o;
    o.writable = true;
    o.auto_compact = false;
    a = NDArray<std::int32_t>();
    auto b = NDArray<std::int32_t>::open(path, o);
    for (int i = 0; i < 6000; ++i) {
        b.set({i % 208, 0}, i);
    }
    CHECK(std::filesystem::file_size(path) > 2 * compacted + storage::kAutoCompactSlack);
}

TEST_CASE("sharing: durable commits make the fsync calls they promise", "[storage]") {
    using storage::detail::fsync_calls;
    for (const bool sparse : {false, true}) {
        INFO((sparse ? "sparse" : "contiguous"));
        test::TempDir dir;
        const std::string path = dir / (sparse ? "d.b2frame" : "d.b2nd");
        {
            Frame f = Frame::create(path, params(), sparse, {}, false);  // scratch: not durable
            const std::uint64_t before = fsync_calls();
            f.append_chunks({chunk_of(1), chunk_of(2)});
            f.update_chunk(0, chunk_of(3));
            CHECK(fsync_calls() == before);
            f.sync();  // asked for
            CHECK(fsync_calls() > before);
        }
        storage::OpenOptions o;
        o.writable = true;
        CHECK(o.durable);  // the default
        Frame f = Frame::open(path, o);
        std::uint64_t before = fsync_calls();
        f.update_chunk(1, chunk_of(4));
        // Contiguous: the data before the header names it, the header after. Sparse: the chunk
        // file and its directory entry, then chunks.b2frame and its directory entry.
        CHECK(fsync_calls() - before >= (sparse ? 4U : 2U));
        before = fsync_calls();
        const storage::StagedChunk s = f.stage(chunk_of(5));
        storage::FrameEdit e = f.keep_all();
        e.replace(0, s);
        f.apply(e);
        CHECK(fsync_calls() - before >= (sparse ? 4U : 2U));
        CHECK(first_of(Frame::open(path), 0) == 5);
    }
}

TEST_CASE("sharing: array handles refresh, follow, and views keep one state", "[storage]") {
    test::TempDir dir;
    const std::string path = dir / "f.b2nd";
    CreateOptions co = test::chunked({8, 8}, {4, 4});
    auto w = NDArray<std::int32_t>::create(path, {16, 16}, co);
    w.write(Box::whole({16, 16}), std::vector<std::int32_t>(256, 1));

    auto r = NDArray<std::int32_t>::open(path);
    CHECK(r(5, 5) == 1);  // its block is now cached
    OpenOptions fo;
    fo.follow = true;
    auto f = NDArray<std::int32_t>::open(path, fo);
    CHECK(f.follows());
    CHECK(f(5, 5) == 1);
    const auto view_before = b2nd::NDArray<std::int32_t>(f.pinned());

    w.set({5, 5}, 2);                                   // replaces chunk 0
    w.append(0, std::vector<std::int32_t>(16 * 4, 3));  // 20 rows now
    CHECK(r(5, 5) == 1);  // r reads its snapshot (and its cache) until it refreshes
    CHECK(r.shape() == Shape{16, 16});
    CHECK(r.refresh());
    CHECK(r.shape() == Shape{20, 16});
    CHECK(r(5, 5) == 2);  // the cached block of the replaced chunk was dropped
    CHECK(r(19, 0) == 3);
    CHECK_FALSE(r.refresh());

    CHECK(f(5, 5) == 2);  // follows without being asked
    CHECK(f.shape() == Shape{20, 16});
    CHECK(f.read().size() == 20 * 16);
    CHECK(view_before.shape() == Shape{16, 16});  // a pinned handle keeps its state
    CHECK(view_before(5, 5) == 1);

    // Reads of a selection are resolved against the state they read.
    w.remove(0, 0, 12);  // rows 12-19 remain
    const std::vector<std::int32_t> all = f.read();
    CHECK(all.size() == 8 * 16);
    CHECK(f.shape() == Shape{8, 16});
}

TEST_CASE("sharing: a sparse frame under many small updates keeps only live chunk files",
          "[storage]") {
    test::TempDir dir;
    const std::string path = dir / "grow.b2frame";
    CreateOptions co = test::chunked({16, 40}, {4, 40});
    co.sparse = true;
    auto a = NDArray<std::int32_t>::create(path, {208, 40}, co);
    for (int i = 0; i < 2000; ++i) {
        a.set({(i * 37) % 208, (i * 11) % 40}, i + 1);
    }
    CHECK(chunk_files(path) == 13);  // one per chunk: replaced files went at once (no readers)
    {
        const auto reader = NDArray<std::int32_t>::open(path);
        const std::vector<std::int32_t> before = reader.read();
        for (int i = 0; i < 200; ++i) {
            a.set({(i * 53) % 208, 0}, -i);
        }
        CHECK(reader.read() == before);  // the files of its snapshot are still there
        CHECK(chunk_files(path) > 13);
        CHECK(chunk_files(path) <= 26);  // and only those: one version, not one per commit
    }
    a.set({0, 0}, 7);  // the reader is gone: its files go with this commit
    CHECK(chunk_files(path) == 13);
}

TEST_CASE("sharing: a reader slot forged in the lock file keeps one version, not every one",
          "[storage]") {
    // Anyone who may write the lock file can claim a slot for a live process and an old
    // generation. The writer then keeps the files of that generation's snapshot, and no others.
    test::TempDir dir;
    const std::string path = dir / "forged.b2frame";
    Frame w = Frame::create(path, params(), true);
    w.append_chunks({chunk_of(10), chunk_of(20), chunk_of(30)});
    {
        // Slot 200 of the reader table (sidecar.hpp): {owner: this live process, generation 1}.
        storage::detail::PosixFile lock(path + "/.b2lock",
                                        storage::detail::PosixFile::Mode::read_write);
        const std::uint64_t slot[2] = {static_cast<std::uint64_t>(::getpid()) << 32 | 0x5EED, 1};
        lock.write_at({reinterpret_cast<const std::uint8_t*>(slot), sizeof slot}, 4096 + 200 * 16);
    }
    for (std::int32_t k = 0; k < 300; ++k) {
        w.update_chunk(k % 3, chunk_of(1000 + k));
    }
    CHECK(chunk_files(path) <= 6);  // 3 live, at most 3 named by generation 1
    CHECK(first_of(Frame::open(path), 2) == 1299);
}

TEST_CASE("sharing: what create and import publish is fsynced, then its directory", "[storage]") {
    using storage::detail::fsync_calls;
    test::TempDir dir;
    std::uint64_t before = fsync_calls();
    (void)NDArray<std::int32_t>::create_from(dir / "c.b2nd", {100},
                                             std::vector<std::int32_t>(100, 7));
    // The file, then the directory that names it.
    CHECK(fsync_calls() - before >= 2U);
    CreateOptions scratch;
    scratch.durable = false;
    before = fsync_calls();
    (void)NDArray<std::int32_t>::create_from(dir / "s.b2nd", {100},
                                             std::vector<std::int32_t>(100, 7), scratch);
    CHECK(fsync_calls() == before);
}
