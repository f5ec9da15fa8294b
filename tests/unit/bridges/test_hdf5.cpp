// HDF5 datasets through libhdf5: every dataset of the bridges corpus (h5py's files, Blosc and LZF
// filters included) opens as an array with its dtype, values and attributes; damaged or unmapped
// ones are refused by name; arrays written as datasets read back equal, and the file written to
// is only ever replaced whole, keeping what it held and its permissions.
#include <cmath>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/ops.hpp>

#include "../../support/bridge_cases.hpp"
#include "../../support/files.hpp"
#include "../../support/random_box.hpp"
#include "../../support/reference.hpp"
#include "../../support/temp_dir.hpp"
#include <sys/stat.h>

using b2nd::AnyArray;
using b2nd::test::bridge_case;
using b2nd::test::bridge_cases;
using b2nd::test::BridgeCase;
using b2nd::test::have_bridges;
using Catch::Matchers::Contains;

#define REQUIRE_HDF5()                                                    \
    do {                                                                  \
        if (!b2nd::have_hdf5()) {                                         \
            B2ND_SKIP("this build has no libhdf5 (install libhdf5-dev)"); \
        }                                                                 \
    } while (0)

TEST_CASE("hdf5: every dataset of the corpus reads in place", "[bridges][hdf5]") {
    REQUIRE_HDF5();
    if (!have_bridges()) {
        B2ND_SKIP("bridges corpus not found under " B2ND_CORPUS_DIR);
    }
    const auto all = bridge_cases({"hdf5"});
    REQUIRE(all.size() >= 36);
    b2nd::test::SplitMix rng(5);
    for (const BridgeCase& c : all) {
        INFO(c.name);
        const AnyArray a = AnyArray::open(c.src);
        CHECK(a.shape() == b2nd::test::json_shape(c.entry["shape"]));
        if (c.entry["dtype"].kind() == b2nd::test::Json::Kind::string) {
            CHECK(a.dtype().str() == c.entry["dtype"].as_string());
        } else {
            CHECK(a.dtype().fields().size() == c.entry["dtype"].as_array().size());
        }
        const auto whole = b2nd::test::read_npy_payload(c.expect).data;
        CHECK(a.read() == whole);
        for (const auto& [k, v] : c.entry["attrs"].as_object()) {
            INFO("attribute " << k);
            REQUIRE(a.attrs().contains(k));
            CHECK(b2nd::test::same_value(a.attrs().get(k), v));
        }
        if (a.ndim() > 0) {
            for (int k = 0; k < 6; ++k) {
                const b2nd::Box b = b2nd::test::random_box(a.shape(), rng);
                CHECK(a.read(b) == b2nd::test::reference_slice(whole, a.shape(), a.itemsize(),
                                                               b.start, b.count, b.step));
            }
        }
    }
}

TEST_CASE("hdf5: a chunked dataset's chunks become the array's; the only dataset opens alone",
          "[bridges][hdf5]") {
    REQUIRE_HDF5();
    if (!have_bridges()) {
        B2ND_SKIP("bridges corpus not found under " B2ND_CORPUS_DIR);
    }
    const AnyArray a = AnyArray::open(bridge_case("h5_chunked_edges_int32").src);
    CHECK(a.chunk_shape() == b2nd::Shape{8, 8, 6});
    // ocean.nc holds more than one dataset (the variable and its dimension scales).
    try {
        (void)AnyArray::open(b2nd::test::bridges_dir() + "/hdf5/ocean.nc");
        FAIL("opened a file of several datasets without a path");
    } catch (const b2nd::UsageError& e) {
        CHECK_THAT(e.what(), Contains("ocean.nc") && Contains("/temperature") &&
                                 Contains("name one as FILE:/path"));
    }
}

TEST_CASE("hdf5: missing datasets, groups and unmapped types are refused by name",
          "[bridges][hdf5]") {
    REQUIRE_HDF5();
    if (!have_bridges()) {
        B2ND_SKIP("bridges corpus not found under " B2ND_CORPUS_DIR);
    }
    const std::vector<std::pair<std::string, std::string>> says = {
        {"bad_h5_missing_dataset", "no dataset /no/such/dataset"},
        {"bad_h5_group_not_dataset", "is a group, not a dataset"},
        {"bad_h5_vlen_strings", "variable-length strings"},
    };
    for (const auto& [name, text] : says) {
        INFO(name);
        const BridgeCase c = bridge_case(name);
        try {
            (void)AnyArray::open(c.src);
            FAIL("opened");
        } catch (const b2nd::Error& e) {
            CHECK_THAT(e.what(), Contains(text));
        }
    }
    b2nd::test::TempDir dir;
    std::ofstream(dir / "fake.h5") << "not an HDF5 file at all";
    CHECK_THROWS_WITH(AnyArray::open(dir / "fake.h5:/x"),
                      Contains("fake.h5") && Contains("not an HDF5 file"));
    CHECK_THROWS_AS(AnyArray::open(dir / "absent.h5:/x"), b2nd::IoError);
}

TEST_CASE("hdf5: an array written as a dataset reads back, beside what the file held",
          "[bridges][hdf5]") {
    REQUIRE_HDF5();
    b2nd::test::TempDir dir;
    b2nd::CreateOptions co;
    co.chunk_shape = {7, 5};
    co.block_shape = {4, 5};
    std::vector<double> values(19 * 13);
    for (std::size_t i = 0; i < values.size(); ++i) {
        values[i] = std::sin(static_cast<double>(i)) * 100;
    }
    AnyArray a = AnyArray::create_from(
        dir / "a.b2nd", b2nd::dtype_of<double>(), {19, 13},
        {reinterpret_cast<const std::uint8_t*>(values.data()), values.size() * 8}, co);
    a.attrs().set("units", "K");
    a.attrs().set("scale", 0.5);
    a.attrs().set("range", b2nd::Value(b2nd::Value::Array{-1, 7}));
    const std::string file = dir / "out.h5";
    b2nd::export_hdf5(a, file + ":/run/t", {});
    ::chmod(file.c_str(), 0640);
    // A second dataset added: the first stays, and so does the file's mode.
    b2nd::export_hdf5(a, file + ":/run/u", {});
    struct stat st {};
    REQUIRE(::stat(file.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0640);
    for (const char* path : {"/run/t", "/run/u"}) {
        INFO(path);
        const AnyArray back = AnyArray::open(file + ":" + path);
        CHECK(back.shape() == a.shape());
        CHECK(back.chunk_shape() == b2nd::Shape{7, 5});
        CHECK(back.read() == a.read());
        CHECK(back.attrs().get<std::string>("units") == "K");
        CHECK(back.attrs().get<double>("scale") == 0.5);
        CHECK(back.attrs().get("range") == b2nd::Value(b2nd::Value::Array{-1, 7}));
    }
    // An existing dataset needs overwrite; refused, the file is left byte for byte.
    const auto before = b2nd::test::read_file(file);
    CHECK_THROWS_WITH(b2nd::export_hdf5(a, file + ":/run/t", {}), Contains("exists"));
    CHECK(b2nd::test::read_file(file) == before);
    b2nd::Hdf5ExportOptions o;
    o.overwrite = true;
    b2nd::export_hdf5(a, file + ":/run/t", o);
    CHECK(AnyArray::open(file + ":/run/t").read() == a.read());
    // Nothing left beside it.
    int entries = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
        entries += e.path().filename().string().find("b2nd-tmp") != std::string::npos ? 100 : 1;
    }
    CHECK(entries < 100);
}

TEST_CASE("hdf5: a file that is not HDF5 is never written into", "[bridges][hdf5]") {
    REQUIRE_HDF5();
    b2nd::test::TempDir dir;
    const AnyArray a = AnyArray::create_in_memory(b2nd::dtype_of<std::int32_t>(), {10});
    const std::string file = dir / "notes.h5";
    std::ofstream(file) << "my notes, not an HDF5 file";
    CHECK_THROWS_WITH(b2nd::export_hdf5(a, file + ":/x", {}),
                      Contains("notes.h5") && Contains("not an HDF5 file"));
    CHECK(b2nd::test::read_text(file) == "my notes, not an HDF5 file");
    CHECK_THROWS_WITH(b2nd::export_hdf5(a, dir / "new.h5", {}), Contains("name the dataset"));
    CHECK_FALSE(std::filesystem::exists(dir / "new.h5"));
}

TEST_CASE("hdf5: a file is HDF5 by its signature too; paths with or without '/'; messages name it",
          "[bridges][hdf5]") {
    REQUIRE_HDF5();
    b2nd::test::TempDir dir;
    const AnyArray a = AnyArray::create_in_memory_from(
        b2nd::dtype_of<std::int32_t>(), {4},
        {reinterpret_cast<const std::uint8_t*>(std::vector<std::int32_t>{5, 6, 7, 8}.data()), 16});
    b2nd::export_hdf5(a, dir / "made.h5:/entry/x", {});
    // A NeXus file: HDF5 under another name.
    std::filesystem::copy_file(dir / "made.h5", dir / "data.nxs");
    for (const std::string at : {"data.nxs:/entry/x", "data.nxs:entry/x", "made.h5:entry/x"}) {
        INFO(at);
        const AnyArray back = AnyArray::open(dir / at);
        CHECK(back.read() == a.read());
        CHECK(back.name() == dir / (at.substr(0, at.find(':')) + ":/entry/x"));
        CHECK(back.path().empty());
    }
    // A file of another kind under that name is not HDF5; neither is a b2nd frame.
    std::ofstream(dir / "notes.nxs") << "plain text";
    CHECK_THROWS_WITH(AnyArray::open(dir / "notes.nxs:/x"), !Contains("HDF5"));
    // The typed open names the dataset it refuses (it said "").
    try {
        (void)b2nd::open<double>(dir / "data.nxs:/entry/x");
        FAIL("opened int32 as double");
    } catch (const b2nd::UsageError& e) {
        CHECK_THAT(e.what(), Contains("data.nxs:/entry/x") && Contains("<i4"));
    }
}

TEST_CASE("hdf5: list_hdf5 lists a file's groups and datasets recursively, or one group",
          "[bridges][hdf5]") {
    REQUIRE_HDF5();
    b2nd::test::TempDir dir;
    b2nd::CreateOptions co;
    co.chunk_shape = {2};
    const AnyArray a = AnyArray::create_from(
        dir / "a.b2nd", b2nd::dtype_of<std::int16_t>(), {5},
        {reinterpret_cast<const std::uint8_t*>(std::vector<std::int16_t>{1, 2, 3, 4, 5}.data()),
         10},
        co);
    const std::string file = dir / "f.h5";
    b2nd::export_hdf5(a, file + ":/run7/t", {});
    b2nd::export_hdf5(a, file + ":/grid/x", {});
    const std::vector<b2nd::HierarchyEntry> all = b2nd::list_hdf5(file);
    std::vector<std::string> paths;
    for (const auto& e : all) {
        paths.push_back(e.path + " " + e.kind);
    }
    CHECK(paths == std::vector<std::string>{"/grid group", "/grid/x dataset", "/run7 group",
                                            "/run7/t dataset"});
    CHECK(all[1].shape == b2nd::Shape{5});
    CHECK(all[1].dtype == "<i2");
    CHECK(all[1].chunks == b2nd::Shape{2});
    CHECK(all[1].stored > 0);
    const auto one = b2nd::list_hdf5(file + ":run7");
    REQUIRE(one.size() == 1);
    CHECK(one[0].path == "/run7/t");
    const auto itself = b2nd::list_hdf5(file + ":/grid/x");
    REQUIRE(itself.size() == 1);
    CHECK(itself[0].kind == "dataset");
    CHECK_THROWS_WITH(b2nd::list_hdf5(file + ":/nope"), Contains("/nope does not exist"));
    CHECK_THROWS_AS(b2nd::list_hdf5(dir / "absent.h5"), b2nd::IoError);
}
