// Crash safety: a child process appends and updates chunks, following a seeded sequence, and is
// killed with SIGKILL at random moments. After each kill the frame must open and hold exactly the
// state after some prefix of that sequence: the old or the new content, never a mix or a broken
// file.
#include <chrono>
#include <cstring>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>

#include "support/files.hpp"
#include "support/temp_dir.hpp"
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace b2nd;

namespace {

constexpr std::int32_t kItems = 2000;
constexpr std::int32_t kChunk = kItems * 4;
constexpr int kInitialChunks = 4;

/// A chunk whose items are marker, marker + 1, ...: self-describing.
std::vector<std::uint8_t> chunk_for(std::int32_t marker) {
    std::vector<std::int32_t> v(kItems);
    for (std::int32_t i = 0; i < kItems; ++i) {
        v[static_cast<std::size_t>(i)] = marker * 7 + i;
    }
    codec::EncodeParams p;
    p.typesize = 4;
    p.blocksize = 2000;
    return codec::encode_chunk(as_bytes(v.data(), v.size()), p);
}

/// The marker a decoded chunk was made from, or -1 if it is not a well-formed chunk_for().
std::int32_t marker_of(const std::vector<std::uint8_t>& bytes) {
    if (bytes.size() != static_cast<std::size_t>(kChunk)) {
        return -1;
    }
    std::int32_t first;
    std::memcpy(&first, bytes.data(), 4);
    if (first % 7 != 0) {
        return -1;
    }
    for (std::int32_t i = 0; i < kItems; ++i) {
        std::int32_t x;
        std::memcpy(&x, bytes.data() + 4 * i, 4);
        if (x != first + i) {
            return -1;
        }
    }
    return first / 7;
}

/// Operation k of the sequence, applied to a list of markers: appends, or updates a chunk.
void apply(std::vector<std::int32_t>& state, int k) {
    const std::int32_t marker = 1000 + k;
    if (k % 3 == 0 || state.empty()) {
        state.push_back(marker);
    } else {
        state[static_cast<std::size_t>((k * 7919) % static_cast<int>(state.size()))] = marker;
    }
}

/// Follows the sequence until killed, writing one byte to `progress` after each commit.
[[noreturn]] void child_writer(const std::string& path, int progress) {
    try {
        storage::OpenOptions o;
        o.writable = true;
        storage::Frame f = storage::Frame::open(path, o);
        std::vector<std::int32_t> state(kInitialChunks);
        for (int i = 0; i < kInitialChunks; ++i) {
            state[static_cast<std::size_t>(i)] = i;
        }
        for (int k = 0;; ++k) {
            const std::size_t before = state.size();
            apply(state, k);
            const auto c = chunk_for(1000 + k);
            if (state.size() > before) {
                f.append_chunk(c);
            } else {
                f.update_chunk((k * 7919) % static_cast<int>(before), c);
            }
            const char one = 1;
            (void)!::write(progress, &one, 1);  // a full pipe only drops the count
        }
    } catch (...) {
        ::_exit(3);
    }
}

}  // namespace

TEST_CASE("crash: a writer killed with SIGKILL leaves the old or the new frame",
          "[storage][crash]") {
    for (bool sparse : {false, true}) {
        INFO((sparse ? "sparse" : "contiguous"));
        test::SplitMix rng(sparse ? 11 : 12);
        std::set<int> commits_seen;  // how many commits of the sequence each surviving state had
        for (int trial = 0; trial < 25; ++trial) {
            test::TempDir dir;
            const std::string path = dir / "crash";
            {
                storage::FrameParams fp;
                fp.typesize = 4;
                fp.chunksize = kChunk;
                fp.blocksize = 2000;
                storage::Frame f = storage::Frame::create(path, fp, sparse);
                for (int i = 0; i < kInitialChunks; ++i) {
                    f.append_chunk(chunk_for(i));
                }
            }
            int progress[2];
            REQUIRE(::pipe2(progress, O_CLOEXEC | O_NONBLOCK) == 0);
            const pid_t pid = ::fork();
            REQUIRE(pid >= 0);
            if (pid == 0) {
                child_writer(path, progress[1]);
            }
            ::close(progress[1]);
            // Kill after a random number of commits, a random moment into the next ones: with
            // commits counted rather than timed, a disk that syncs slowly moves nothing.
            const auto target = static_cast<int>(1 + rng.below(40));
            int committed = 0;
            while (committed < target) {
                pollfd p{progress[0], POLLIN, 0};
                REQUIRE(::poll(&p, 1, 20000) == 1);
                char buf[64];
                const ssize_t got = ::read(progress[0], buf, sizeof buf);
                REQUIRE(got > 0);  // 0: the child died on its own
                committed += static_cast<int>(got);
            }
            std::this_thread::sleep_for(std::chrono::microseconds(rng.below(3000)));
            ::kill(pid, SIGKILL);
            ::close(progress[0]);
            int status = 0;
            ::waitpid(pid, &status, 0);
            REQUIRE(WIFSIGNALED(status));  // the child never stops on its own

            INFO("trial " << trial);
            const storage::Frame f = storage::Frame::open(path);
            // The checksum table came with the commit that survived: it covers this frame, and
            // every chunk decoded below is checked against it.
            CHECK(f.checksums().state == storage::ChecksumReport::State::covered);
            std::vector<std::int32_t> seen;
            for (std::int64_t i = 0; i < f.nchunks(); ++i) {
                seen.push_back(marker_of(f.decode_chunk(i)));
            }
            // Find the prefix of the sequence that produced this state.
            std::vector<std::int32_t> state(kInitialChunks);
            for (int i = 0; i < kInitialChunks; ++i) {
                state[static_cast<std::size_t>(i)] = i;
            }
            bool found = state == seen;
            int commits = 0;
            for (int k = 0; !found && k < 200000; ++k) {
                apply(state, k);
                found = state == seen;
                commits = k + 1;
            }
            REQUIRE(found);
            CHECK(commits >= target);  // what was reported committed survived the kill
            commits_seen.insert(commits);
        }
        CHECK(commits_seen.size() > 10);  // the kills landed all along the sequence
    }
}
