// Chunks staged in the order of their tasks (storage/ordered_staging.hpp): whatever order they
// are made in, and so writes whose files hold the same bytes for any number of threads.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>
#include <stdexcept>
#include <thread>

#include <catch2/catch.hpp>

#include <b2nd/any_array.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/format/frame_header.hpp>
#include <b2nd/ops.hpp>
#include <b2nd/storage/frame.hpp>

#include "storage/ordered_staging.hpp"
#include "support/data.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

using namespace b2nd;
using storage::Frame;
using storage::detail::OrderedStaging;

namespace {

constexpr std::int32_t kChunk = 4000;  // 1000 int32 per chunk

std::vector<std::uint8_t> encoded(std::int32_t v) {
    std::vector<std::uint8_t> values(kChunk);
    for (std::int32_t i = 0; i < kChunk / 4; ++i) {
        const std::int32_t x = v * 7 + i % (v + 2);
        std::memcpy(values.data() + 4 * i, &x, 4);
    }
    codec::EncodeParams p;
    p.typesize = 4;
    std::vector<std::uint8_t> out(codec::max_encoded_size(values.size()));
    out.resize(codec::encode_chunk({values.data(), values.size()}, p, {out.data(), out.size()}));
    return out;
}

Frame new_frame(const std::string& path, bool sparse) {
    storage::FrameParams fp;
    fp.typesize = 4;
    fp.chunksize = kChunk;
    (void)Frame::create(path, fp, sparse);
    storage::OpenOptions o;
    o.writable = true;
    return Frame::open(path, o);
}

/// The file's bytes (a sparse frame: its chunk files and index, by name), the writer's thread
/// counts in the header set to 0: they record the setting, as c-blosc2's do. (So does the
/// checksum table's digest of the header: frames with checksums are compared by placement().)
std::vector<std::uint8_t> bytes_of(const std::string& path) {
    namespace fs = std::filesystem;
    std::vector<std::uint8_t> out;
    std::vector<std::string> files;
    if (fs::is_directory(path)) {
        for (const auto& e : fs::directory_iterator(path)) {
            const std::string name = e.path().filename().string();
            if (name == "chunks.b2frame" || e.path().extension() == ".chunk") {
                files.push_back(e.path().string());
            }
        }
        std::sort(files.begin(), files.end());
    } else {
        files.push_back(path);
    }
    for (const std::string& f : files) {
        std::vector<std::uint8_t> b = test::read_file(f);
        if (f == path || fs::path(f).filename() == "chunks.b2frame") {
            for (std::size_t at :
                 {format::frame_offsets::kTcomp, format::frame_offsets::kTdecomp}) {
                b.at(at) = 0;
                b.at(at + 1) = 0;
            }
        }
        const std::string name = f == path ? "" : fs::path(f).filename().string();
        out.insert(out.end(), name.begin(), name.end());
        out.insert(out.end(), b.begin(), b.end());
    }
    return out;
}

/// Where each chunk of the frame at `path` lies (offset; a sparse frame: its file's number too)
/// and what it holds (its bytes and checksum record), in index order.
std::vector<std::uint8_t> placement(const std::string& path) {
    const Frame f = Frame::open(path);
    std::vector<std::uint8_t> out;
    for (std::int64_t k = 0; k < f.nchunks(); ++k) {
        const storage::StoredChunk c = f.chunk(k);
        const std::uint64_t where[2] = {c.offset, static_cast<std::uint64_t>(c.file)};
        const auto* w = reinterpret_cast<const std::uint8_t*>(where);
        out.insert(out.end(), w, w + sizeof where);
        out.insert(out.end(), c.bytes.begin(), c.bytes.end());
        out.insert(out.end(), c.record.begin(), c.record.end());
    }
    return out;
}

/// Commits the staged chunks in `f` (at `path`), then checks that the frame holds `chunks`, in
/// order.
void commit_and_compare(Frame& f,
                        const std::string& path,
                        const std::vector<storage::StagedChunk>& staged,
                        const std::vector<std::vector<std::uint8_t>>& chunks) {
    storage::FrameEdit e;
    for (const auto& s : staged) {
        e.add_staged(s);
    }
    f.apply(e);
    const Frame back = Frame::open(path);
    REQUIRE(back.nchunks() == static_cast<std::int64_t>(chunks.size()));
    for (std::size_t k = 0; k < chunks.size(); ++k) {
        const auto c = back.chunk(static_cast<std::int64_t>(k));
        CHECK(std::vector<std::uint8_t>(c.bytes.begin(), c.bytes.end()) == chunks[k]);
    }
}

/// Where two files first differ (-1: nowhere).
std::int64_t first_difference(const std::vector<std::uint8_t>& a,
                              const std::vector<std::uint8_t>& b) {
    const auto m = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
    return m.first == a.end() && m.second == b.end() ? -1 : m.first - a.begin();
}

}  // namespace

TEST_CASE("ordered staging: chunks made out of order are staged in task order", "[storage]") {
    for (const bool sparse : {false, true}) {
        test::TempDir dir;
        const std::string path = dir / (sparse ? "f.b2frame" : "f.b2nd");
        Frame f = new_frame(path, sparse);
        const std::size_t n = 6;
        std::vector<std::vector<std::uint8_t>> chunks;
        for (std::size_t k = 0; k < n; ++k) {
            chunks.push_back(encoded(static_cast<std::int32_t>(k)));
        }
        OrderedStaging order(f, n);
        // Made in the order 4, 2, 5, 0, 3, 1: only 0 is staged at once (and nothing after it
        // is ready); 1 brings 2 to 5 with it.
        for (std::size_t k : {std::size_t{4}, std::size_t{2}, std::size_t{5}}) {
            CHECK(order.stage(k, {chunks[k].data(), chunks[k].size()}).cbytes == 0);
        }
        CHECK(order.stage(0, {chunks[0].data(), chunks[0].size()}).cbytes ==
              static_cast<std::int64_t>(chunks[0].size()));
        CHECK_THROWS_AS(order.take(), std::logic_error);  // 1 to 5 not staged yet
        // A task that does not exist, or one staged or kept already: refused.
        CHECK_THROWS_AS(order.stage(n, {chunks[0].data(), chunks[0].size()}), std::logic_error);
        CHECK_THROWS_AS(order.stage(0, {chunks[0].data(), chunks[0].size()}), std::logic_error);
        CHECK_THROWS_AS(order.stage(4, {chunks[4].data(), chunks[4].size()}), std::logic_error);
        CHECK(order.stage(3, {chunks[3].data(), chunks[3].size()}).cbytes == 0);
        CHECK(order.stage(1, {chunks[1].data(), chunks[1].size()}).cbytes ==
              static_cast<std::int64_t>(chunks[1].size()));
        const std::vector<storage::StagedChunk> staged = order.take();
        REQUIRE(staged.size() == n);
        for (std::size_t k = 1; k < n; ++k) {
            // Contiguous: the offset of the chunk in the file; sparse: its file's number.
            CHECK(staged[k].entry > staged[k - 1].entry);
            CHECK(staged[k].cbytes == static_cast<std::int64_t>(chunks[k].size()));
        }
        commit_and_compare(f, path, staged, chunks);
    }
}

TEST_CASE("ordered staging: chunks from many threads, in any order, staged in task order",
          "[storage]") {
    test::TempDir dir;
    Frame f = new_frame(dir / "f.b2nd", false);
    const std::size_t n = 64;
    std::vector<std::vector<std::uint8_t>> chunks;
    for (std::size_t k = 0; k < n; ++k) {
        chunks.push_back(encoded(static_cast<std::int32_t>(k)));
    }
    OrderedStaging order(f, n);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < 4; ++t) {
        // Thread t stages the tasks k with k % 4 == t, from the last one down.
        threads.emplace_back([&, t] {
            for (std::size_t k = n - 4 + t;; k -= 4) {
                order.stage(k, {chunks[k].data(), chunks[k].size()});
                if (k < 4) {
                    break;
                }
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    const std::vector<storage::StagedChunk> staged = order.take();
    for (std::size_t k = 1; k < n; ++k) {
        // Each after the one before it (a checksum record may follow a chunk).
        CHECK(staged[k].entry >= staged[k - 1].entry + staged[k - 1].cbytes);
        CHECK(staged[k].entry <= staged[k - 1].entry + staged[k - 1].cbytes + 64);
    }
}

TEST_CASE("ordered staging: writes give the same file for any number of threads", "[storage]") {
    // Chunks that take different times to make (random, smooth, uniform), so that threads
    // finish them out of order.
    const Shape shape{40, 36, 30};
    const DType dt = DType::parse("<f4");
    const auto n = static_cast<std::size_t>(test::count_of(shape));
    std::vector<std::uint8_t> data = test::smooth_bytes(n * 4, 4, 7);
    test::SplitMix rng(11);
    for (std::size_t i = 0; i < n / 3; ++i) {
        data[i * 4 + 1] = static_cast<std::uint8_t>(rng.next());
    }
    std::fill(data.begin() + static_cast<std::ptrdiff_t>(n * 2), data.end(), 0);
    const Box part = Box::region({3, 5, 0}, {30, 20, 29});
    std::vector<std::uint8_t> patch(static_cast<std::size_t>(part.size() * 4), 0x41);

    for (const bool sparse : {false, true}) {
        for (const bool checksums : {false, true}) {
            // Without checksums, the files' bytes; with them, where each chunk lies and what it
            // holds (the checksum table covers the header, with its thread counts).
            const auto signature = checksums ? placement : bytes_of;
            test::TempDir dir;
            std::vector<std::vector<std::uint8_t>> created, patched, copied, as_stored;
            for (int threads : {1, 2, 4}) {
                CreateOptions o = test::chunked({8, 12, 10}, {4, 6, 5});
                o.compression.codec = Codec::zstd;
                o.compression.clevel = 3;
                o.sparse = sparse;
                o.checksums = checksums;
                o.nthreads = threads;
                o.durable = false;
                const std::string path = dir / ("a" + std::to_string(threads) + ".b2nd");
                AnyArray a = AnyArray::create_from(path, dt, shape, {data.data(), data.size()}, o);
                created.push_back(signature(path));
                // A write of part of the array: chunks it covers and chunks it patches.
                a.write(part, {patch.data(), patch.size()});
                patched.push_back(signature(path));
                CopyOptions co;
                CompressionParams lz4;
                lz4.codec = Codec::lz4;
                co.compression = lz4;
                co.nthreads = threads;
                co.durable = false;
                const std::string dst = dir / ("c" + std::to_string(threads) + ".b2nd");
                (void)copy(a, dst, co);
                copied.push_back(placement(dst));  // copies carry checksums
                // Chunks copied as they are stored (kept mapped, not copied, till their turn).
                CopyOptions same;
                same.nthreads = threads;
                same.durable = false;
                const std::string dst2 = dir / ("s" + std::to_string(threads) + ".b2nd");
                (void)copy(a, dst2, same);
                as_stored.push_back(placement(dst2));
            }
            INFO("sparse " << sparse << ", checksums " << checksums);
            for (std::size_t t : {std::size_t{1}, std::size_t{2}}) {
                INFO("threads " << (t == 1 ? 2 : 4) << " against 1");
                CHECK(first_difference(created[0], created[t]) == -1);
                CHECK(first_difference(patched[0], patched[t]) == -1);
                CHECK(first_difference(copied[0], copied[t]) == -1);
                CHECK(first_difference(as_stored[0], as_stored[t]) == -1);
            }
            CHECK(first_difference(created[0], patched[0]) != -1);
        }
    }
}

namespace {

/// Chunks of one size: stored as they are (clevel 0), `kChunk` bytes of values each.
std::vector<std::vector<std::uint8_t>> same_size_chunks(std::size_t n) {
    std::vector<std::vector<std::uint8_t>> out;
    for (std::size_t k = 0; k < n; ++k) {
        std::vector<std::uint8_t> values(kChunk, static_cast<std::uint8_t>(k * 13 + 1));
        values[0] = static_cast<std::uint8_t>(k);
        codec::EncodeParams p;
        p.typesize = 4;
        p.clevel = 0;
        std::vector<std::uint8_t> c(codec::max_encoded_size(values.size()));
        c.resize(codec::encode_chunk({values.data(), values.size()}, p, {c.data(), c.size()}));
        out.push_back(std::move(c));
    }
    return out;
}

/// Waits (at most 20 s) until `ready`; false when it never was.
bool wait_until(const std::function<bool()>& ready) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!ready()) {
        if (std::chrono::steady_clock::now() > until) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
}

}  // namespace

TEST_CASE("ordered staging: copies kept for their turn stay within the bound", "[storage]") {
    const std::size_t n = 24;
    const std::vector<std::vector<std::uint8_t>> chunks = same_size_chunks(n);
    const std::size_t size = chunks[0].size();
    REQUIRE(chunks[n - 1].size() == size);
    for (const bool bounded : {true, false}) {
        INFO((bounded ? "a bound of 3 chunks" : "the default bound"));
        test::TempDir dir;
        Frame f = new_frame(dir / "f.b2nd", false);
        OrderedStaging order(f, n, bounded ? 3 * size : OrderedStaging::kKeepBytes);
        std::atomic<std::size_t> returned{0};
        bool waited = true;
        // Task 0 is made last: with the bound, once 3 copies are kept (and the other threads
        // have had time to reach their next chunk); without it, once every other chunk is in.
        order.run(3, [&](std::size_t k) {
            if (k == 0) {
                waited = bounded ? wait_until([&] { return order.peak_kept_bytes() >= 3 * size; })
                                 : wait_until([&] { return returned == n - 1; });
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            }
            order.stage(k, {chunks[k].data(), chunks[k].size()});
            ++returned;
        });
        CHECK(waited);
        CHECK(order.peak_kept_bytes() == (bounded ? 3 : n - 1) * size);
        commit_and_compare(f, dir / "f.b2nd", order.take(), chunks);
    }
}

TEST_CASE("ordered staging: a task that fails or stages nothing releases the waiting threads",
          "[storage]") {
    const std::size_t n = 12;
    const std::vector<std::vector<std::uint8_t>> chunks = same_size_chunks(n);
    for (const bool throws : {true, false}) {
        INFO((throws ? "task 0 throws" : "task 0 returns without staging"));
        test::TempDir dir;
        Frame f = new_frame(dir / "f.b2nd", false);
        OrderedStaging order(f, n, chunks[0].size());  // one copy: the next chunk waits
        auto done = std::async(std::launch::async, [&] {
            order.run(3, [&](std::size_t k) {
                if (k == 0) {
                    (void)wait_until([&] { return order.peak_kept_bytes() > 0; });
                    std::this_thread::sleep_for(std::chrono::milliseconds(100));
                    if (throws) {
                        throw std::runtime_error("task 0 failed");
                    }
                    return;
                }
                order.stage(k, {chunks[k].data(), chunks[k].size()});
            });
        });
        REQUIRE(done.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
        if (throws) {
            CHECK_THROWS_WITH(done.get(), "task 0 failed");
        } else {
            CHECK_NOTHROW(done.get());
        }
        CHECK_THROWS_AS(order.take(), std::logic_error);
    }
}
