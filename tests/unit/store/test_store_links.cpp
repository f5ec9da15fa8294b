// Links inside a python-blosc2 store directory (.b2d), as a downloaded or shared store may hold
// them: reads refuse them unless asked (OpenOptions::store_links), writes never go through them.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>
#include <b2nd/store.hpp>

#include "support/files.hpp"
#include "support/temp_dir.hpp"

using namespace b2nd;
namespace fs = std::filesystem;

namespace {

NDArray<double> ones(const std::string& path) {
    CreateOptions o;
    o.chunk_shape = {8};
    (void)NDArray<double>::create_from(path, {16}, std::vector<double>(16, 1.0), o);
    return NDArray<double>::open(path);
}

bool empty_dir(const std::string& dir) {
    return fs::is_empty(dir);
}

}  // namespace

TEST_CASE("store links: a write through a linked group is refused, outside stays untouched",
          "[store][links]") {
    test::TempDir dir;
    const std::string st = dir / "p.b2d";
    const std::string outside = dir / "outside";
    fs::create_directory(outside);
    const auto a = ones(dir / "a.b2nd");
    {
        auto w = StoreWriter::create(st);
        w.put("/x", a);
        w.commit();
    }
    fs::create_directory_symlink(outside, st + "/evil");
    // The store with a link in it is refused as a whole; so is a writer's open of it.
    CHECK_THROWS_WITH(Store::open(st), Catch::Matchers::Contains("evil") &&
                                           Catch::Matchers::Contains("symbolic link"));
    CHECK_THROWS_AS(StoreWriter::open(st), UsageError);
    CHECK(empty_dir(outside));

    // A link planted after the writer opened the store: the write is refused all the same.
    fs::remove(st + "/evil");
    auto w = StoreWriter::open(st);
    fs::create_directory_symlink(outside, st + "/evil");
    CHECK_THROWS_WITH(w.put("/evil/x", a), Catch::Matchers::Contains("symbolic link"));
    CHECK(empty_dir(outside));

    // embed.b2e itself a link: no change of the store writes through it.
    fs::remove(st + "/evil");
    const std::string elsewhere = dir / "elsewhere.b2e";
    fs::rename(st + "/embed.b2e", elsewhere);
    fs::create_symlink(elsewhere, st + "/embed.b2e");
    const auto before = test::read_file(elsewhere);
    CHECK_THROWS_AS(w.put("/y", a), UsageError);
    CHECK(test::read_file(elsewhere) == before);
}

TEST_CASE("store links: reading through a linked leaf needs OpenOptions::store_links",
          "[store][links]") {
    test::TempDir dir;
    const std::string st = dir / "p.b2d";
    const auto a = ones(dir / "a.b2nd");
    {
        auto w = StoreWriter::create(st);
        w.put("/x", a);
        w.commit();
    }
    (void)ones(dir / "private.b2nd");
    fs::create_symlink(dir / "private.b2nd", st + "/leak.b2nd");
    CHECK_THROWS_WITH(Store::open(st), Catch::Matchers::Contains("leak.b2nd") &&
                                           Catch::Matchers::Contains("store_links"));
    OpenOptions o;
    o.store_links = true;
    const Store s = Store::open(st, o);
    CHECK(s.open<double>("/leak").read() == std::vector<double>(16, 1.0));
}
