// Staged bytes flushed in the background (storage/flush_behind.hpp): flushes happen once enough
// bytes wait, finish() waits for them, and a failed flush is reported once, naming the file.
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/error.hpp>

#include "storage/flush_behind.hpp"
#include "support/temp_dir.hpp"

using b2nd::storage::detail::FlushBehind;

TEST_CASE("flush behind: files are flushed once enough bytes wait for it", "[storage]") {
    b2nd::test::TempDir dir;
    const std::string a = dir / "a.bin", b = dir / "b.bin";
    for (const std::string& p : {a, b}) {
        std::ofstream(p) << std::string(3000, 'x');
    }
    FlushBehind fb(4000);
    fb.wrote(a, 1500);
    fb.wrote(b, 1500);
    fb.finish();  // nothing due
    CHECK(fb.flushes() == 0);
    fb.wrote(a, 1500);  // 4500 bytes wait: both files are flushed
    fb.finish();
    CHECK(fb.flushes() == 2);
    fb.wrote(b, 3999);
    fb.finish();
    CHECK(fb.flushes() == 2);
    fb.wrote(b, 1);
    fb.finish();
    CHECK(fb.flushes() == 3);
}

TEST_CASE("flush behind: a failed flush makes finish() throw once, naming the file", "[storage]") {
    b2nd::test::TempDir dir;
    const std::string plain = dir / "plain";
    std::ofstream(plain) << "not a directory";
    const std::string bad = plain + "/chunk.bin";  // cannot be opened: ENOTDIR
    const std::string gone = dir / "removed.bin";  // a staged file dropped meanwhile: no error
    FlushBehind fb(10);
    fb.wrote(gone, 5);
    fb.wrote(bad, 5);
    try {
        fb.finish();
        FAIL("finish() did not report the failed flush");
    } catch (const b2nd::IoError& e) {
        CHECK(std::string(e.what()).find(bad) != std::string::npos);
    }
    CHECK_NOTHROW(fb.finish());  // reported once
    fb.wrote(gone, 20);
    CHECK_NOTHROW(fb.finish());
}
