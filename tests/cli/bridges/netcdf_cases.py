"""netCDF-4 files for the round-trip tests (tests/cli/test_cli_netcdf.cpp), made and described by
the netCDF library (python3-netcdf4) and h5py, never by b2nd.

    netcdf_cases.py make DIR            ocean.nc (netCDF-4) and plain.h5 (h5py) in DIR
    netcdf_cases.py describe FILE VAR   one line per fact about VAR, as netCDF and h5py see it

Exits 77 when netCDF4, h5py or numpy is missing.
"""
import sys

try:
    import h5py
    import netCDF4
    import numpy as np
except ImportError:
    sys.exit(77)


def make(d):
    with netCDF4.Dataset(d + "/ocean.nc", "w") as ds:
        ds.Conventions = "CF-1.8"
        ds.title = "ocean run"
        ds.createDimension("time", None)
        ds.createDimension("lat", 5)
        ds.createDimension("lon", 4)
        t = ds.createVariable("time", "f8", ("time",))
        t.units = "days"
        t[:] = np.arange(3.0)
        v = ds.createVariable("temperature", "f4", ("time", "lat", "lon"),
                              fill_value=np.float32(1e20), zlib=True)
        v.units = "K"
        v.flag_values = np.array([1, 2, 3], dtype="i1")
        v.scale_factor = np.float32(0.5)
        v[:] = np.arange(60, dtype="f4").reshape(3, 5, 4)
        s = ds.createVariable("salt", "f4", ("lat", "lon"), fill_value=np.float32(np.nan))
        s[0, :] = 1
    with h5py.File(d + "/plain.h5", "w") as f:
        f.create_dataset("x", data=np.arange(6.0).reshape(2, 3), fillvalue=1e20)


def describe(path, var):
    with netCDF4.Dataset(path) as ds:
        v = ds[var]
        print("dimensions", ",".join(v.dimensions))
        print("unlimited", ",".join(n for n, d in ds.dimensions.items() if d.isunlimited()))
        for n in v.ncattrs():
            a = v.getncattr(n)
            print("attribute", n, np.asarray(a).dtype, np.asarray(a).tolist())
        print("globals", ",".join("%s=%s" % (n, ds.getncattr(n)) for n in ds.ncattrs()))
        print("values", np.ma.filled(v[:], -1).ravel().tolist()[:8])
        for n in v.dimensions:
            if n in ds.variables and n != var:
                print("coordinate", n, ds[n][:].tolist())
    with h5py.File(path, "r") as f:
        ds = f[var]
        print("fillvalue", ds.fillvalue)
        print("maxshape", ds.maxshape)
        for n, a in ds.attrs.items():
            t = h5py.check_string_dtype(ds.attrs.get_id(n).dtype)
            if t is not None:
                print("text", n, "fixed" if t.length is not None else "variable")


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        describe(sys.argv[2], sys.argv[3])
