// How an export chunks and compresses its output (issue 56, item 19): --chunks, --blocks,
// --compressor, --filters, --codec and --clevel on HDF5 and Zarr outputs, each output read back
// by an independent reader (h5py with Debian's Blosc plugin, zarr-python, zarrita) against the
// values NumPy wrote; what a format does not take is refused by name, with one wording.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/bridges.hpp>

#include "../support/cli_tool.hpp"
#include "../support/files.hpp"
#include "../support/temp_dir.hpp"
#include "read_back.hpp"
#include "run.hpp"

using b2nd::test::q;
using b2nd::test::read_back;
using b2nd::test::run;
using Catch::Matchers::Contains;

namespace {

/// t.b2nd in `tmp`, imported from expect.npy: a (6, 10, 8) float32 ramp NumPy wrote; the test
/// is skipped when numpy is missing.
#define MAKE_SOURCE_OR_SKIP(tmp)                                                               \
    do {                                                                                       \
        B2ND_NUMPY_OR_SKIP(                                                                    \
            "np.save(sys.argv[1] + '/expect.npy', np.arange(480, dtype='<f4').reshape(6, 10, " \
            "8))\n",                                                                           \
            (tmp).path());                                                                     \
        REQUIRE(run("import " + q((tmp) / "expect.npy") + " " + q((tmp) / "t.b2nd") +          \
                    " --chunks 3,5,8 --blocks 1,5,8")                                          \
                    .status == 0);                                                             \
    } while (0)

/// Exports t.b2nd to `out` with `options`, expecting success.
void exported(const b2nd::test::TempDir& tmp, const std::string& out, const std::string& options) {
    const auto r = run("export " + q(tmp / "t.b2nd") + " " + q(out) + " " + options);
    INFO(r.output);
    REQUIRE(r.status == 0);
}

/// What the python one-liner `code` prints about `path` (sys.argv[1]).
std::string python_says(const std::string& code, const std::string& path) {
    return b2nd::test::command_text(
        "HDF5_PLUGIN_PATH=/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins " + b2nd::test::python3() +
        " -c " + q(code) + " " + q(path) + " 2>&1");
}

}  // namespace

TEST_CASE("cli export coding: HDF5 with other chunks, Blosc or no compression",
          "[cli][bridges][coding]") {
    if (!b2nd::have_hdf5()) {
        B2ND_SKIP("this build has no libhdf5");
    }
    b2nd::test::TempDir tmp;
    MAKE_SOURCE_OR_SKIP(tmp);
    const std::string expect = tmp / "expect.npy";
    exported(tmp, tmp / "blosc.h5:/t",
             "--chunks 2,5,4 --compressor blosc --codec lz4 --filters bitshuffle --clevel 7");
    exported(tmp, tmp / "raw.h5:/t", "--chunks 6,10,8 --compressor none");
    exported(tmp, tmp / "gz.h5:/t", "--filters none --clevel 9");
    const std::string said =
        read_back("python3", "hdf5-coded", tmp / "blosc.h5:/t", expect, "2,5,4", "", "{}");
    if (said != "skip") {
        CHECK(said == "ok");
        CHECK(read_back("python3", "hdf5-coded", tmp / "raw.h5:/t", expect, "6,10,8", "", "{}") ==
              "ok");
        CHECK(read_back("python3", "hdf5-coded", tmp / "gz.h5:/t", expect, "3,5,8", "", "{}") ==
              "ok");
        // The filters as h5py lists them: Blosc's parameters (level 7, bit shuffle, lz4), none,
        // deflate 9 without shuffle.
        const std::string filters =
            "import h5py, sys; d = h5py.File(sys.argv[1])[\"t\"]; "
            "print({k: list(v) if isinstance(v, tuple) else v for k, v in d._filters.items()})";
        CHECK_THAT(python_says(filters, tmp / "blosc.h5"),
                   Contains("'32001': [2, 2, 4, 160, 7, 2, 1]"));
        CHECK_THAT(python_says(filters, tmp / "raw.h5"), Contains("{}"));
        CHECK_THAT(python_says(filters, tmp / "gz.h5"), Contains("{'gzip': 9}"));
    }
    // And b2nd reads its Blosc dataset back with its own decoder.
    const auto back = run("diff " + q(tmp / "blosc.h5:/t") + " " + q(tmp / "t.b2nd"));
    CHECK(back.status == 0);
}

TEST_CASE("cli export coding: Zarr v2 with each numcodecs compressor and other chunks",
          "[cli][bridges][coding][zarr]") {
    b2nd::test::TempDir tmp;
    MAKE_SOURCE_OR_SKIP(tmp);
    const std::string expect = tmp / "expect.npy";
    for (const char* c : {"zstd", "zlib", "gzip", "lz4", "none", "blosc"}) {
        INFO(c);
        const std::string out = tmp / (std::string(c) + ".zarr");
        exported(tmp, out, std::string("--zarr-format 2 --chunks 4,4,4 --compressor ") + c);
        const std::string said =
            read_back("python3", "zarr2-coded", out, expect, "4,4,4", "", "{}");
        if (said == "skip") {
            B2ND_SKIP("zarr-python is not installed (python3-zarr)");
        }
        CHECK(said == "ok");
        const std::string id = python_says(
            "import zarr, sys; c = zarr.open(sys.argv[1], \"r\").compressor; "
            "print(c.codec_id if c else \"none\")",
            out);
        CHECK_THAT(id, Contains(c));
    }
}

TEST_CASE("cli export coding: Zarr v3 shards and inner chunks as asked, gzip or none",
          "[cli][bridges][coding][zarr]") {
    b2nd::test::TempDir tmp;
    MAKE_SOURCE_OR_SKIP(tmp);
    const std::string expect = tmp / "expect.npy";
    exported(tmp, tmp / "gz.zarr", "--chunks 6,5,8 --blocks 2,5,4 --compressor gzip");
    exported(tmp, tmp / "raw.zarr", "--compressor none");
    const std::string gz = read_back("node", "", tmp / "gz.zarr", expect, "6,5,8", "2,5,4", "{}");
    if (gz == "skip") {
        B2ND_SKIP("zarrita is not installed (npm)");
    }
    CHECK(gz == "ok");
    CHECK(read_back("node", "", tmp / "raw.zarr", expect, "3,5,8", "1,5,8", "{}") == "ok");
    std::ifstream meta(tmp / "gz.zarr/zarr.json");
    const std::string text((std::istreambuf_iterator<char>(meta)), {});
    CHECK_THAT(text, Contains("\"name\": \"gzip\""));
}

TEST_CASE("cli export coding: what a format does not take is refused by name, exit 2",
          "[cli][bridges][coding]") {
    b2nd::test::TempDir tmp;
    MAKE_SOURCE_OR_SKIP(tmp);
    const std::string t = q(tmp / "t.b2nd") + " ";
    struct Case {
        std::string args, says;
    };
    std::vector<Case> cases = {
        {q(tmp / "a.zarr") + " --zarr-format 2 --blocks 1,1,1",
         "Zarr v2 has no blocks (they are Zarr v3's inner chunks)"},
        {q(tmp / "a.zarr") + " --compressor lz4",
         "Zarr v3 takes the compressors blosc, zstd, "
         "gzip or none, not lz4"},
        {q(tmp / "a.zarr") + " --compressor zstd --codec lz4",
         "a codec (lz4) is blosc's; the compressor is zstd"},
        {q(tmp / "a.zarr") + " --compressor zstd --filters shuffle",
         "Zarr v3 shuffles inside blosc only"},
        {q(tmp / "a.zarr") + " --chunks 3,3", "chunks (3, 3) for an array of 3 dimensions"},
        {q(tmp / "a.zarr") + " --filters delta", "--filters: an export shuffles bytes"},
        {q(tmp / "a.zarr") + " --compressor brotli", "--compressor: 'brotli' is none of"},
        {q(tmp / "a.npy") + " --chunks 2,2,2", "--chunks goes with an HDF5 or Zarr output"},
        {q(tmp / "a.npy") + " --zarr-format 2", "--zarr-format goes with a Zarr output"},
    };
    if (b2nd::have_hdf5()) {
        cases.push_back({q(tmp / "a.h5") + ":/t --compressor zstd",
                         "HDF5 takes the compressors gzip, blosc or none, not zstd"});
        cases.push_back(
            {q(tmp / "a.h5") + ":/t --filters bitshuffle", "shuffles bits only inside blosc"});
        cases.push_back(
            {q(tmp / "a.h5") + ":/t --zarr-format 2", "--zarr-format goes with a Zarr output"});
    }
    for (const Case& c : cases) {
        const auto r = run("export " + t + c.args);
        INFO(c.args << "\n" << r.output);
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains(c.says));
    }
    CHECK_FALSE(std::filesystem::exists(tmp / "a.zarr"));
    CHECK_FALSE(std::filesystem::exists(tmp / "a.h5"));
}
