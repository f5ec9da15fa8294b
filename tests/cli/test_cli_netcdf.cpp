// netCDF-4 files through import and export (issue 56, items 12, 14, 15): a variable imported and
// exported again, or replaced in its file, keeps what netCDF makes of it: its dimensions (named,
// unlimited, shared with other variables), its _FillValue in the variable's type, the dataset's
// fill value, narrow attribute types, text attributes, the file's global attributes. Files are
// made and described by the netCDF library and h5py (tests/cli/bridges/netcdf_cases.py).
#include <cstring>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/bridges.hpp>

#include "../support/cli_tool.hpp"
#include "../support/files.hpp"
#include "../support/temp_dir.hpp"
#include "run.hpp"

using b2nd::test::q;
using b2nd::test::run;
using Catch::Matchers::Contains;

namespace {

/// Makes ocean.nc and plain.h5 in `dir`: false when netCDF4 or h5py is missing.
bool make_cases(const std::string& dir) {
    const std::string cmd = b2nd::test::python3() + " " + q(B2ND_NETCDF_CASES) + " make " + q(dir) +
                            " > /dev/null 2>&1";
    const int st = std::system(cmd.c_str());
    if (!WIFEXITED(st) || WEXITSTATUS(st) == 77) {
        return false;
    }
    REQUIRE(WEXITSTATUS(st) == 0);
    return true;
}

/// The bytes of `v`, as a .npy payload holds them.
template <typename T>
std::vector<std::uint8_t> payload(const std::vector<T>& v) {
    std::vector<std::uint8_t> out(v.size() * sizeof(T));
    std::memcpy(out.data(), v.data(), out.size());
    return out;
}

/// What netCDF and h5py say of `var` in `file`.
std::string describe(const std::string& file, const std::string& var) {
    int st = 0;
    const std::string out =
        b2nd::test::command_text(b2nd::test::python3() + " " + q(B2ND_NETCDF_CASES) + " describe " +
                                     q(file) + " " + var + " 2>&1",
                                 &st);
    INFO(out);
    REQUIRE(st == 0);
    return out;
}

#define NETCDF_OR_SKIP(tmp)                                                \
    do {                                                                   \
        if (!b2nd::have_hdf5()) {                                          \
            B2ND_SKIP("this build has no libhdf5");                        \
        }                                                                  \
        if (!make_cases((tmp).path())) {                                   \
            B2ND_SKIP("python3-netcdf4 or python3-h5py is not installed"); \
        }                                                                  \
    } while (0)

}  // namespace

TEST_CASE("cli netcdf: a variable imported and exported to a new file is the same variable",
          "[cli][bridges][netcdf]") {
    b2nd::test::TempDir tmp;
    NETCDF_OR_SKIP(tmp);
    const std::string nc = tmp / "ocean.nc";
    REQUIRE(run("import " + q(nc) + ":/temperature " + q(tmp / "t.b2nd")).status == 0);
    // The import keeps the dimensions' names and the file's global attributes.
    const auto meta = run("meta " + q(tmp / "t.b2nd"));
    CHECK_THAT(meta.output, Contains("_ARRAY_DIMENSIONS = [\"time\", \"lat\", \"lon\"]") &&
                                Contains("\"Conventions\": \"CF-1.8\""));
    const auto r = run("export " + q(tmp / "t.b2nd") + " " + q(tmp / "back.nc") + ":/temperature");
    INFO(r.output);
    REQUIRE(r.status == 0);
    const std::string was = describe(nc, "temperature");
    const std::string now = describe(tmp / "back.nc", "temperature");
    // Named dimensions (not phony_dim_0), _FillValue as float32 (was float64), int8 and float32
    // attributes (were int64 and float64), text as netCDF's (fixed-length), the dataset's fill
    // value (was 0), the global attributes (were dropped), the values.
    for (const char* fact :
         {"dimensions time,lat,lon", "attribute _FillValue float32 1.0000000200408773e+20",
          "attribute flag_values int8 [1, 2, 3]", "attribute scale_factor float32 0.5",
          "text units fixed", "fillvalue 1e+20", "globals Conventions=CF-1.8,title=ocean run",
          "values [0.0, 1.0, 2.0, 3.0"}) {
        INFO(fact << "\nwas:\n" << was << "now:\n" << now);
        CHECK_THAT(was, Contains(fact));
        CHECK_THAT(now, Contains(fact));
    }
    // A second variable exported to the same file takes the dimensions it made.
    REQUIRE(run("import " + q(nc) + ":/salt " + q(tmp / "s.b2nd")).status == 0);
    REQUIRE(run("export " + q(tmp / "s.b2nd") + " " + q(tmp / "back.nc") + ":/salt").status == 0);
    const std::string salt = describe(tmp / "back.nc", "salt");
    CHECK_THAT(salt, Contains("dimensions lat,lon") && Contains("fillvalue nan") &&
                         Contains("values [1.0, 1.0, 1.0, 1.0, -1.0"));
}

TEST_CASE("cli netcdf: a variable replaced in its file keeps its dimensions and fill value",
          "[cli][bridges][netcdf]") {
    b2nd::test::TempDir tmp;
    NETCDF_OR_SKIP(tmp);
    const std::string nc = tmp / "ocean.nc";
    REQUIRE(run("import " + q(nc) + ":/temperature " + q(tmp / "t.b2nd")).status == 0);
    const auto r = run("export " + q(tmp / "t.b2nd") + " " + q(nc) + ":/temperature --overwrite");
    INFO(r.output);
    REQUIRE(r.status == 0);
    const std::string now = describe(nc, "temperature");
    CHECK_THAT(now, Contains("dimensions time,lat,lon") && Contains("unlimited time") &&
                        Contains("maxshape (None, 5, 4)") && Contains("fillvalue 1e+20") &&
                        Contains("coordinate time [0.0, 1.0, 2.0]"));
    // The other variables still have their dimensions.
    CHECK_THAT(describe(nc, "salt"), Contains("dimensions lat,lon"));
}

TEST_CASE("cli netcdf: a dimension's variable replaced stays the dimension of its users",
          "[cli][bridges][netcdf]") {
    b2nd::test::TempDir tmp;
    NETCDF_OR_SKIP(tmp);
    const std::string nc = tmp / "ocean.nc";
    // time: a coordinate variable; lat: a dimension without a variable, given values here.
    REQUIRE(run("import " + q(nc) + ":/time " + q(tmp / "time.b2nd")).status == 0);
    b2nd::test::write_file(
        tmp / "lat.npy",
        b2nd::test::npy_bytes("<f8", "(5,)", payload<double>({10, 20, 30, 40, 50})));
    REQUIRE(run("import " + q(tmp / "lat.npy") + " " + q(tmp / "lat.b2nd")).status == 0);
    REQUIRE(run("export " + q(tmp / "time.b2nd") + " " + q(nc) + ":/time --overwrite").status == 0);
    const auto r = run("export " + q(tmp / "lat.b2nd") + " " + q(nc) + ":/lat --overwrite");
    INFO(r.output);
    REQUIRE(r.status == 0);
    const std::string t = describe(nc, "temperature");
    CHECK_THAT(t, Contains("dimensions time,lat,lon") &&
                      Contains("coordinate time [0.0, 1.0, 2.0]") &&
                      Contains("coordinate lat [10.0, 20.0, 30.0, 40.0, 50.0]"));
    CHECK_THAT(describe(nc, "salt"), Contains("coordinate lat [10.0, 20.0, 30.0, 40.0, 50.0]"));
}

TEST_CASE("cli netcdf: an array that does not fit a variable's dimensions is refused",
          "[cli][bridges][netcdf]") {
    b2nd::test::TempDir tmp;
    NETCDF_OR_SKIP(tmp);
    const std::string nc = tmp / "ocean.nc";
    const auto before = b2nd::test::read_file(nc);
    b2nd::test::write_file(
        tmp / "small.npy",
        b2nd::test::npy_bytes("<f4", "(3, 3)", payload<float>({1, 2, 3, 4, 5, 6, 7, 8, 9})));
    REQUIRE(run("import " + q(tmp / "small.npy") + " " + q(tmp / "small.b2nd")).status == 0);
    const auto r = run("export " + q(tmp / "small.b2nd") + " " + q(nc) + ":/salt --overwrite");
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("/salt") && Contains("(3, 3) does not fit"));
    CHECK(b2nd::test::read_file(nc) == before);
}

TEST_CASE("cli netcdf: an HDF5 dataset's own fill value survives import and export",
          "[cli][bridges][netcdf]") {
    b2nd::test::TempDir tmp;
    NETCDF_OR_SKIP(tmp);
    REQUIRE(run("import " + q(tmp / "plain.h5") + ":/x " + q(tmp / "x.b2nd")).status == 0);
    REQUIRE(run("export " + q(tmp / "x.b2nd") + " " + q(tmp / "out.h5") + ":/x").status == 0);
    const std::string cmd = b2nd::test::python3() + " -c \"import h5py; print('fill', h5py.File('" +
                            tmp / "out.h5" + "')['x'].fillvalue)\" 2>&1";
    CHECK_THAT(b2nd::test::command_text(cmd), Contains("fill 1e+20"));
}

TEST_CASE("cli netcdf: a variable exported to Zarr keeps its dimension names and fill value",
          "[cli][bridges][netcdf][zarr]") {
    b2nd::test::TempDir tmp;
    NETCDF_OR_SKIP(tmp);
    const std::string var = q(tmp / "ocean.nc") + ":/temperature ";
    REQUIRE(run("export " + var + q(tmp / "v3.zarr")).status == 0);
    REQUIRE(run("export " + var + q(tmp / "v2.zarr") + " --zarr-format 2").status == 0);
    // Read by Python's json and zarr-python, not by b2nd.
    const std::string check =
        "import json, sys, zarr\n"
        "d = sys.argv[1]\n"
        "z3 = json.load(open(d + '/v3.zarr/zarr.json'))\n"
        "print('v3 names', z3.get('dimension_names'), 'fill', z3['fill_value'])\n"
        "print('v3 attributes', sorted(z3['attributes']))\n"
        "a = zarr.open(d + '/v2.zarr', mode='r')\n"
        "print('v2 names', a.attrs['_ARRAY_DIMENSIONS'], 'fill', a.fill_value)\n"
        "print('v2 attributes', sorted(a.attrs))\n";
    std::ofstream(tmp / "check.py") << check;
    const std::string out = b2nd::test::command_text(
        b2nd::test::python3() + " " + q(tmp / "check.py") + " " + q(tmp.path()) + " 2>&1");
    INFO(out);
    CHECK_THAT(out, Contains("v3 names ['time', 'lat', 'lon'] fill 1.0000000200408773e+20") &&
                        Contains("v2 names ['time', 'lat', 'lon'] fill 1e+20"));
    // _FillValue became the fill value; the dtypes recorded for HDF5 are not Zarr's business.
    CHECK_THAT(out, Contains("v3 attributes ['_global_attributes', 'flag_values', "
                             "'scale_factor', 'units']") &&
                        Contains("v2 attributes ['_ARRAY_DIMENSIONS', '_global_attributes', "
                                 "'flag_values', 'scale_factor', 'units']"));
    // And back: the Zarr array's names and fill value come in as the HDF5 ones did.
    REQUIRE(run("import " + q(tmp / "v3.zarr") + " " + q(tmp / "t.b2nd")).status == 0);
    const auto meta = run("meta " + q(tmp / "t.b2nd"));
    CHECK_THAT(meta.output, Contains("_ARRAY_DIMENSIONS = [\"time\", \"lat\", \"lon\"]") &&
                                Contains("_FillValue = 1.0000000200408773e+20"));
}
