// The tool on HDF5 and Zarr names as their users spell them (issue 56): HDF5 files by signature
// whatever their extension (NeXus .nxs, MATLAB 7.3 .mat with its user block), dataset paths
// without a leading '/', a Zarr array named by its metadata file; verify and checksum on such
// sources; outputs in directories that do not exist; messages that name the dataset.
#include <cstring>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../support/cli_tool.hpp"
#include "../support/files.hpp"
#include "../support/reference.hpp"
#include "../support/temp_dir.hpp"
#include "run.hpp"

using b2nd::test::q;
using b2nd::test::run;
using b2nd::test::Run;
using Catch::Matchers::Contains;

namespace {

/// data.nxs:/entry/x (float64 0..4), m.mat:/v (int64 0..2, after a 512-byte user block),
/// run.zarr (Zarr v2, int32 1..4 in chunks of 2), ocean.h5 (groups, links, a vlen string
/// dataset) and the Zarr group g.zarr made by h5py and zarr-python in `dir`; false when they
/// are not installed.
bool make_sources(const std::string& dir) {
    const std::string script =
        "import sys\n"
        "try:\n"
        "    import h5py, numpy as np, zarr\n"
        "except ImportError:\n"
        "    sys.exit(77)\n"
        "d = sys.argv[1]\n"
        "with h5py.File(d + '/data.nxs', 'w') as f:\n"
        "    f['entry/x'] = np.arange(5.0)\n"
        "with h5py.File(d + '/m.mat', 'w', userblock_size=512) as f:\n"
        "    f['v'] = np.arange(3, dtype='<i8')\n"
        "z = zarr.open(d + '/run.zarr', mode='w', shape=(4,), chunks=(2,), dtype='<i4')\n"
        "z[:] = [1, 2, 3, 4]\n"
        "with h5py.File(d + '/ocean.h5', 'w') as f:\n"
        "    f.create_dataset('run7/temperature', data=np.zeros((10, 20), 'f4'), chunks=(5, 5))\n"
        "    f['run7/salinity'] = np.arange(4)\n"
        "    f['soft'] = h5py.SoftLink('/run7/salinity')\n"
        "    f['ext'] = h5py.ExternalLink('/etc/passwd', '/d')\n"
        "    f.create_dataset('names', data=['a', 'bb'], dtype=h5py.string_dtype())\n"
        "    f.attrs['Conventions'] = 'CF-1.8'\n"
        "    f['run7'].attrs['member'] = 3\n"
        "    f['run7/temperature'].attrs['units'] = 'K'\n"
        "g = zarr.open_group(d + '/g.zarr', mode='w')\n"
        "g.create_dataset('fields/u', shape=(8, 8), chunks=(4, 4), dtype='<f8')[:] = 1\n"
        "g.create_dataset('t', shape=(3,), dtype='<i2')\n"
        "g.attrs['title'] = 'zg'\n"
        "import numcodecs\n"
        "o = zarr.open(d + '/obj.zarr', mode='w', shape=(2,), dtype=object,\n"
        "              object_codec=numcodecs.VLenUTF8())\n"
        "o[:] = ['a', 'bb']\n"
        "with h5py.File(d + '/ext.h5', 'w') as f:\n"
        "    f.create_dataset('t', data=np.arange(10.0), maxshape=(None,), chunks=(4,),\n"
        "                     fillvalue=np.nan, compression='gzip', shuffle=True,\n"
        "                     fletcher32=True)\n";
    const int st = b2nd::test::run_python(script, dir);
    REQUIRE((st == 0 || st == 77));
    return st == 0;
}

}  // namespace

#define SOURCES_OR_SKIP(tmp)                                                                \
    do {                                                                                    \
        if (!b2nd::have_hdf5()) {                                                           \
            B2ND_SKIP("this build has no libhdf5");                                         \
        }                                                                                   \
        if (!make_sources((tmp).path())) {                                                  \
            B2ND_SKIP("h5py, numpy or zarr is not installed (python3-h5py, python3-zarr)"); \
        }                                                                                   \
    } while (0)

TEST_CASE("cli bridge names: HDF5 by signature, relative dataset paths, Zarr metadata files",
          "[cli][bridges]") {
    b2nd::test::TempDir tmp;
    SOURCES_OR_SKIP(tmp);
    for (const std::string at : {"data.nxs:/entry/x", "data.nxs:entry/x"}) {
        INFO(at);
        const Run r = run("show " + q(tmp / at));
        CHECK(r.status == 0);
        CHECK_THAT(r.output, Contains("[0. 1. 2. 3. 4.]"));
    }
    const Run mat = run("info " + q(tmp / "m.mat"));
    CHECK(mat.status == 0);
    CHECK_THAT(mat.output, Contains("HDF5") && Contains("(3,)") && Contains("<i8"));
    CHECK_THAT(run("show " + q(tmp / "m.mat") + ":v").output, Contains("[0 1 2]"));
    const Run meta = run("info " + q(tmp / "run.zarr/.zarray"));
    CHECK(meta.status == 0);
    CHECK_THAT(meta.output, Contains("Zarr v2 array") && Contains("(4,)"));
    // A file of another kind keeps its refusal: not read as HDF5.
    std::ofstream(tmp / "notes.mat") << "MATLAB 5.0 MAT-file, not HDF5";
    CHECK(run("show " + q(tmp / "notes.mat") + ":v").status != 0);
}

TEST_CASE(
    "cli bridge names: verify reads every chunk of a Zarr array or HDF5 dataset; checksum "
    "says it needs a frame",
    "[cli][bridges]") {
    b2nd::test::TempDir tmp;
    SOURCES_OR_SKIP(tmp);
    const std::string z = tmp / "run.zarr";
    for (const std::string& src : {z, tmp / "data.nxs:/entry/x"}) {
        INFO(src);
        const Run ok = run("verify " + q(src));
        CHECK(ok.status == 0);
        CHECK_THAT(ok.output, Contains("ok:") && Contains("read and decoded"));
        const Run sums = run("checksum " + q(src));
        CHECK(sums.status == 2);
        CHECK_THAT(sums.output, Contains("not a b2nd frame") && Contains("b2nd verify"));
        CHECK(run("checksum add " + q(src)).status == 2);
    }
    // A damaged chunk (its Blosc header cut): named, exit 1, the good one counted.
    {
        std::ofstream f(z + "/1", std::ios::binary | std::ios::trunc);
        f << "garbage";
    }
    const Run bad = run("verify " + q(z));
    CHECK(bad.status == 1);
    CHECK_THAT(bad.output, Contains("run.zarr") && Contains("bad:") && Contains("1 of 2 chunks"));
}

TEST_CASE(
    "cli bridge names: outputs in a missing directory are refused as usage (exit 2); "
    "messages name the dataset",
    "[cli][bridges]") {
    b2nd::test::TempDir tmp;
    const std::string t = tmp / "t.b2nd";
    (void)b2nd::NDArray<double>::create_from(t, {3}, std::vector<double>{1, 2, 3});
    for (const std::string& out : {std::string("export ") + q(t) + " " + q(tmp / "nodir/y.npy"),
                                   std::string("convert ") + q(t) + " " + q(tmp / "nodir/y.b2nd"),
                                   std::string("export ") + q(t) + " " + q(tmp / "nodir/y.zarr")}) {
        INFO(out);
        const Run r = run(out);
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains("nodir") && Contains("does not exist"));
    }
    CHECK(!std::filesystem::exists(tmp / "nodir"));
    if (!b2nd::have_hdf5() || !make_sources(tmp.path())) {
        return;
    }
    const Run concat = run("concat " + q(tmp / "c.b2nd") + " " + q(t) + " " + q(tmp / "m.mat:/v"));
    CHECK(concat.status == 2);
    CHECK_THAT(concat.output, Contains("m.mat:/v") && !Contains("<memory>"));
}

TEST_CASE("cli bridge names: ls lists HDF5 files and Zarr groups, links not followed",
          "[cli][bridges]") {
    b2nd::test::TempDir tmp;
    SOURCES_OR_SKIP(tmp);
    const Run h5 = run("ls " + q(tmp / "ocean.h5"));
    CHECK(h5.status == 0);
    CHECK_THAT(h5.output, Contains("/run7/temperature") && Contains("(10, 20) <f4 chunks (5, 5)") &&
                              Contains("/run7/salinity") && Contains("soft link") &&
                              Contains("-> /run7/salinity") && Contains("external link") &&
                              Contains("/etc/passwd:/d") && Contains("variable-length strings"));
    const Run group = run("ls " + q(tmp / "ocean.h5") + ":run7 --json");
    CHECK(group.status == 0);
    CHECK_THAT(group.output,
               Contains("{\"path\": \"/run7/salinity\", \"kind\": \"dataset\", \"shape\": [4], "
                        "\"dtype\": \"<i8\", \"chunks\": null") &&
                   !Contains("soft"));
    const Run zarr = run("ls " + q(tmp / "g.zarr"));
    CHECK(zarr.status == 0);
    CHECK_THAT(zarr.output, Contains("/fields ") && Contains("group") && Contains("/fields/u") &&
                                Contains("(8, 8) <f8 chunks (4, 4)") && Contains("/t ") &&
                                Contains("(3,) <i2"));
    CHECK(run("ls " + q(tmp / "ocean.h5") + ":/nope").status == 2);
}

TEST_CASE("cli bridge names: info says an HDF5 dataset's storage and a Zarr v2 array's .zarray",
          "[cli][bridges]") {
    b2nd::test::TempDir tmp;
    SOURCES_OR_SKIP(tmp);
    // The file's only dataset, named; its layout, maximum shape, filters, fill value and size.
    const Run h5 = run("info " + q(tmp / "ext.h5"));
    CHECK(h5.status == 0);
    CHECK_THAT(h5.output, Contains("dataset     /t") &&
                              Contains("shape       (10,), max (None,)") &&
                              Contains("layout      chunked, chunks (4,)") &&
                              Contains("filters     shuffle, deflate(4), fletcher32") &&
                              Contains("fill value  NaN") && Contains("size        80 B in "));
    // A contiguous dataset has no chunks (it said its shape was its chunks).
    const Run flat = run("info " + q(tmp / "m.mat"));
    CHECK_THAT(flat.output, Contains("layout      contiguous") && !Contains("chunks") &&
                                Contains("filters     none"));
    const Run json = run("info " + q(tmp / "ext.h5") + " --json");
    CHECK_THAT(json.output, Contains("\"maxshape\": [\n    null\n  ]") &&
                                Contains("\"fill_value\": \"NaN\"") && Contains("\"stored\": "));
    // Zarr v2: the .zarray's own order, compressor and filters, not a v3 pipeline.
    const Run z = run("info " + q(tmp / "run.zarr"));
    CHECK_THAT(z.output, Contains("order       C") && Contains("compressor  {") &&
                             Contains("\"id\": \"blosc\"") && Contains("filters     none") &&
                             !Contains("codecs"));
}

TEST_CASE("cli bridge names: a path inside a Zarr group is a Zarr output of the group's version",
          "[cli][bridges]") {
    b2nd::test::TempDir tmp;
    SOURCES_OR_SKIP(tmp);
    const std::string t = tmp / "t.b2nd";
    (void)b2nd::NDArray<double>::create_from(t, {3}, std::vector<double>{7, 8, 9});
    const std::string out = tmp / "g.zarr/fields/new";
    const Run made = run("export " + q(t) + " " + q(out));
    CHECK(made.status == 0);
    // A Zarr v2 array in the v2 group (it dropped a .npy named "new" there), beside the others.
    CHECK(std::filesystem::exists(out + "/.zarray"));
    CHECK_THAT(run("show " + q(out)).output, Contains("[7. 8. 9.]"));
    const Run listed = run("ls " + q(tmp / "g.zarr"));
    CHECK_THAT(listed.output, Contains("/fields/new") && Contains("/fields/u") && Contains("/t "));
    // --overwrite replaces that array only; a path inside an array is refused.
    CHECK(run("export " + q(t) + " " + q(out)).status == 2);
    CHECK(run("export " + q(t) + " " + q(out) + " --overwrite").status == 0);
    CHECK(std::filesystem::exists(tmp / "g.zarr/fields/u/.zarray"));
    const Run inside = run("export " + q(t) + " " + q(tmp / "g.zarr/fields/u/bad"));
    CHECK(inside.status == 2);
    CHECK_THAT(inside.output, Contains("inside the Zarr array"));
    CHECK(!std::filesystem::exists(tmp / "g.zarr/fields/u/bad"));
}

TEST_CASE(
    "cli bridge names: meta reads the attributes of HDF5 files, groups and datasets and of "
    "Zarr groups, read-only, without a b2nd metalayer",
    "[cli][bridges]") {
    b2nd::test::TempDir tmp;
    SOURCES_OR_SKIP(tmp);
    const std::string h5 = tmp / "ocean.h5";
    CHECK_THAT(run("meta " + q(h5)).output, Contains("attribute Conventions = \"CF-1.8\""));
    CHECK_THAT(run("meta " + q(h5) + ":/run7").output, Contains("attribute member = 3"));
    const Run d = run("meta " + q(h5) + ":run7/temperature");
    CHECK(d.status == 0);
    CHECK_THAT(d.output,
               Contains("attribute units = \"K\"") && !Contains("metalayer") && !Contains("b2nd"));
    CHECK_THAT(run("meta " + q(h5) + " Conventions").output, Contains("\"CF-1.8\""));
    CHECK_THAT(run("meta " + q(tmp / "g.zarr") + " --json").output,
               Contains("{\"attributes\": {\"title\": \"zg\"}}"));
    const Run set = run("meta " + q(h5) + " title x --string");
    CHECK(set.status == 2);
    CHECK_THAT(set.output, Contains("read-only"));
}

TEST_CASE("cli bridge names: HDF5 attributes keep their shape and type through import and export",
          "[cli][bridges]") {
    if (!b2nd::have_hdf5()) {
        B2ND_SKIP("this build has no libhdf5");
    }
    b2nd::test::TempDir tmp;
    const std::string make =
        "import sys\n"
        "try:\n"
        "    import h5py, numpy as np\n"
        "except ImportError:\n"
        "    sys.exit(77)\n"
        "with h5py.File(sys.argv[1] + '/a.h5', 'w') as f:\n"
        "    d = f.create_dataset('x', data=np.arange(4.0))\n"
        "    d.attrs['grid'] = np.arange(6, dtype='i1').reshape(2, 3)\n"
        "    d.attrs['z'] = np.complex128(1.5 - 2j)\n"
        "    d.attrs['half'] = np.array([1.5, 2.5], dtype='f2')\n"
        "    d.attrs['plain'] = np.array([1.0, 2.0])\n";
    const int st = b2nd::test::run_python(make, tmp.path());
    if (st == 77) {
        B2ND_SKIP("h5py or numpy is not installed (python3-h5py)");
    }
    REQUIRE(st == 0);
    REQUIRE(run("import " + q(tmp / "a.h5") + ":/x " + q(tmp / "x.b2nd")).status == 0);
    REQUIRE(run("export " + q(tmp / "x.b2nd") + " " + q(tmp / "out.h5") + ":/x").status == 0);
    // What h5py reads back: each attribute's dtype, shape and values as written.
    std::ofstream(tmp / "check.py")
        << "import sys, h5py, numpy as np\n"
           "a = h5py.File(sys.argv[1] + '/a.h5', 'r')['x'].attrs\n"
           "b = h5py.File(sys.argv[1] + '/out.h5', 'r')['x'].attrs\n"
           "for k in ('grid', 'z', 'half', 'plain'):\n"
           "    x, y = np.asarray(a[k]), np.asarray(b[k])\n"
           "    ok = x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y)\n"
           "    print(k, 'same' if ok else 'differs: %s %s %s' % (y.dtype, y.shape, y))\n"
           "    if k == 'half':\n"
           "        print('half values', 'same' if np.array_equal(x, y) else 'differ')\n";
    const std::string out = b2nd::test::command_text(
        b2nd::test::python3() + " " + q(tmp / "check.py") + " " + q(tmp.path()) + " 2>&1");
    // Arrays of more than one dimension and complex numbers keep dtype and shape (a (2, 3) int8
    // came back flat and int64; a complex one was dropped); a flat list of narrower numbers
    // keeps its dtype (float16 came back as float64).
    CHECK_THAT(out, Contains("grid same") && Contains("z same") && Contains("plain same") &&
                        Contains("half same"));
}

TEST_CASE("cli bridge names: export --salvage reads a Zarr array's damaged chunk as zeros",
          "[cli][bridges]") {
    b2nd::test::TempDir tmp;
    SOURCES_OR_SKIP(tmp);
    const std::string z = tmp / "run.zarr";
    {
        std::ofstream f(z + "/1", std::ios::binary | std::ios::trunc);
        f << "garbage";
    }
    CHECK(run("export " + q(z) + " " + q(tmp / "plain.npy")).status == 1);
    CHECK(!std::filesystem::exists(tmp / "plain.npy"));
    const Run saved = run("export " + q(z) + " " + q(tmp / "saved.npy") + " --salvage");
    CHECK(saved.status == 1);  // written, and the damage said
    CHECK_THAT(saved.output, Contains("run.zarr"));
    REQUIRE(std::filesystem::exists(tmp / "saved.npy"));
    const auto back = b2nd::test::read_npy_payload(tmp / "saved.npy");
    std::vector<std::int32_t> values(back.data.size() / 4);
    std::memcpy(values.data(), back.data.data(), back.data.size());
    CHECK(values == std::vector<std::int32_t>{1, 2, 0, 0});
}

TEST_CASE("cli bridge names: a Zarr array of Python objects is refused in plain words",
          "[cli][bridges]") {
    b2nd::test::TempDir tmp;
    SOURCES_OR_SKIP(tmp);
    const Run r = run("info " + q(tmp / "obj.zarr"));
    CHECK(r.status == 1);
    // It said: dtype "|O": dtype "|O": Python objects cannot be stored at offset 2.
    CHECK_THAT(r.output, Contains("obj.zarr") && Contains("Python objects") &&
                             Contains("vlen-utf8") && !Contains("at offset"));
}
