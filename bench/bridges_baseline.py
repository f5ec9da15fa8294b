#!/usr/bin/python3
"""bench_bridges' baselines: h5py and zarr-python doing the same conversions from memory.

    bridges_baseline.py CUBE.npy DIR

Loads the cube (not timed), then times, each best of 3: h5py writing it as a dataset of
(128,128,128) chunks with shuffle + gzip 4 and reading it back whole; zarr-python 2.13 writing a
v2 array of (128,128,128) chunks with Blosc lz4 5 + shuffle and reading it back whole (zarr-python
2.13 has no v3 sharding). Prints one line per figure: NAME SECONDS. Exits 77 without the modules.
"""
import sys
import time

try:
    import h5py
    import numpy as np
    import zarr
    from numcodecs import Blosc
except ImportError:
    sys.exit(77)


def best(fn, reps=3):
    t = 1e300
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


cube = np.load(sys.argv[1])
d = sys.argv[2]
chunks = (128, 128, 128)


def h5_write():
    with h5py.File(d + "/base.h5", "w") as f:
        f.create_dataset("c", data=cube, chunks=chunks, shuffle=True, compression="gzip",
                         compression_opts=4)


def h5_read():
    with h5py.File(d + "/base.h5", "r") as f:
        f["c"][...]


def zarr_write():
    zarr.save_array(d + "/base.zarr", cube, chunks=chunks,
                    compressor=Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE))


def zarr_read():
    zarr.open_array(d + "/base.zarr", "r")[...]


print("h5py_write %.4f" % best(h5_write))
print("h5py_read %.4f" % best(h5_read))
print("zarr_write %.4f" % best(zarr_write))
print("zarr_read %.4f" % best(zarr_read))
