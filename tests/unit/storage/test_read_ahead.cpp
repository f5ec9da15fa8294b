// ReadAhead: ranges of a mapped file not in the page cache are read in the background, in
// order, no further than the window past the range the reader is at, and not at all once
// stopped. Page residency is observed with mincore(); where the file system keeps files in
// memory (tmpfs) the test cannot drop them and skips.
#include <chrono>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>

#include <b2nd/storage/mapped_file.hpp>

#include "support/files.hpp"
#include "support/temp_dir.hpp"
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

using b2nd::ByteSpan;
using b2nd::storage::MappedFile;
using b2nd::storage::ReadAhead;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

/// Fraction of the pages of `span` in the page cache.
double resident(ByteSpan span) {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<std::uintptr_t>(span.data()) & ~(page - 1);
    const std::size_t len = reinterpret_cast<std::uintptr_t>(span.data()) + span.size() - begin;
    std::vector<unsigned char> v((len + page - 1) / page);
    // NOLINTNEXTLINE(performance-no-int-to-ptr)
    if (::mincore(reinterpret_cast<void*>(begin), len, v.data()) != 0) {
        return -1;
    }
    std::size_t n = 0;
    for (unsigned char c : v) {
        n += c & 1U;
    }
    return static_cast<double>(n) / static_cast<double>(v.size());
}

/// Waits (up to 10 s) until `pred` holds.
template <class F>
bool eventually(F pred) {
    for (int i = 0; i < 1000; ++i) {
        if (pred()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return pred();
}

}  // namespace

TEST_CASE("read-ahead: reads ranges in order within its window, and stops", "[storage]") {
    b2nd::test::TempDir tmp;
    const std::string path = tmp / "big.bin";
    {
        std::ofstream out(path, std::ios::binary);
        const std::vector<char> block(kMiB, 'x');
        for (int i = 0; i < 96; ++i) {
            out.write(block.data(), static_cast<std::streamsize>(block.size()));
        }
    }
    {  // out of the page cache before anything maps it
        const int fd = ::open(path.c_str(), O_RDONLY);
        REQUIRE(fd >= 0);
        ::fdatasync(fd);
        ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        ::close(fd);
    }
    auto map = MappedFile::open(path);
    const ByteSpan all = map->bytes();
    if (resident(all) > 0.5) {
        B2ND_SKIP("the file system keeps this file in memory; nothing to read ahead");
    }
    // Twelve ranges of 8 MiB; a window of 16 MiB past the reader.
    std::vector<ByteSpan> ranges;
    for (std::size_t k = 0; k < 12; ++k) {
        ranges.push_back(all.subspan(k * 8 * kMiB, 8 * kMiB));
    }
    ReadAhead ahead(map, ranges, 16 * kMiB);
    CHECK(eventually([&] { return resident(ranges[2]) == 1.0; }));
    // The kernel may read around what is asked, but not 64 MiB further.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK(resident(ranges[11]) < 0.5);
    ahead.reached(9);
    CHECK(eventually([&] { return resident(ranges[11]) == 1.0; }));

    // Stopped before it starts, a read-ahead reads nothing. The background thread is kept busy
    // first with a range that is not in memory (a file never mapped, dropped from the page
    // cache; the first file is all resident by now, so reading it again would take no time).
    auto cold_file = [&](const std::string& p, char fill, int mib) {
        {
            std::ofstream out(p, std::ios::binary);
            const std::vector<char> block(kMiB, fill);
            for (int i = 0; i < mib; ++i) {
                out.write(block.data(), static_cast<std::streamsize>(block.size()));
            }
        }
        const int fd = ::open(p.c_str(), O_RDONLY);
        ::fdatasync(fd);
        ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        ::close(fd);
        return MappedFile::open(p);
    };
    auto busy = cold_file(tmp / "busy.bin", 'z', 32);
    auto map2 = cold_file(tmp / "other.bin", 'y', 32);
    if (resident(busy->bytes()) > 0.5 || resident(map2->bytes()) > 0.5) {
        B2ND_SKIP("the file system keeps these files in memory; nothing to read ahead");
    }
    {
        ReadAhead blocker(busy, {busy->bytes()}, 64 * kMiB);
        ReadAhead stopped(map2, {map2->bytes().subspan(16 * kMiB, 16 * kMiB)}, 64 * kMiB);
        stopped = ReadAhead();  // stop
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK(resident(map2->bytes().subspan(16 * kMiB, 16 * kMiB)) < 0.5);
}
