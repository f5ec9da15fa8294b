#!/usr/bin/python3
"""bench_bridged_reads' sources and peers (issue 58).

    bridged_reads_peers.py make DIR     writes DIR/cube.npy (256x512x512 float32), DIR/src.zarr
                                        (Zarr v2, Blosc lz4 5 + shuffle, chunks 64x128x128) and
                                        DIR/src.h5 (dataset "c", gzip 1 + shuffle, same chunks)
    bridged_reads_peers.py time DIR     times zarr-python (numcodecs' Blosc on 2 threads) and
                                        h5py on the workloads, each run on a fresh handle,
                                        best of 3: prints "PEER WORKLOAD SECONDS" lines

Workloads: whole (the array read whole), planes0 (8 planes along axis 0), plane2 (one plane
along the last axis), box (a 64^3 box), sweep (planes 0-63 along axis 0 on one handle).
Exits 77 without numpy, zarr, numcodecs or h5py.
"""
import os
import sys
import time

try:
    import h5py
    import numcodecs
    import numpy as np
    import zarr
    from numcodecs import Blosc
except ImportError:
    sys.exit(77)

SHAPE = (256, 512, 512)
CHUNKS = (64, 128, 128)


def cube():
    i = np.arange(SHAPE[0], dtype=np.float64)[:, None, None]
    j = np.arange(SHAPE[1], dtype=np.float64)[None, :, None]
    k = np.arange(SHAPE[2], dtype=np.float64)[None, None, :]
    a = 20 * np.sin(2 * np.pi * i / 256) * np.cos(2 * np.pi * j / 300) + 0.05 * (j - 256) / 256
    v = a + 10 * np.sin(2 * np.pi * (i + k) / 200)
    rng = np.random.default_rng(12345)
    v = v + 0.01 * (rng.random(SHAPE) - 0.5)
    return v.astype("<f4")


def make(d):
    c = cube()
    np.save(os.path.join(d, "cube.npy"), c)
    z = zarr.open_array(os.path.join(d, "src.zarr"), mode="w", shape=SHAPE, chunks=CHUNKS,
                        dtype="<f4",
                        compressor=Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE))
    z[...] = c
    with h5py.File(os.path.join(d, "src.h5"), "w") as f:
        f.create_dataset("c", data=c, chunks=CHUNKS, shuffle=True, compression="gzip",
                         compression_opts=1)


def workloads(open_fn):
    def whole():
        open_fn()[...]

    def planes0():
        a = open_fn()
        for p in range(8):
            a[(2 * p + 1) * SHAPE[0] // 16]

    def plane2():
        open_fn()[:, :, 100]

    def box():
        open_fn()[100:164, 200:264, 300:364]

    def sweep():
        a = open_fn()
        for i in range(64):
            a[i]

    return (("whole", whole), ("planes0", planes0), ("plane2", plane2), ("box", box),
            ("sweep", sweep))


def best(fn, reps=3):
    t = 1e300
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def time_peers(d):
    numcodecs.blosc.set_nthreads(2)
    zpath = os.path.join(d, "src.zarr")
    for name, fn in workloads(lambda: zarr.open_array(zpath, mode="r")):
        print("zarr-python %s %.6f" % (name, best(fn)), flush=True)
    files = []

    def h5_open():
        f = h5py.File(os.path.join(d, "src.h5"), "r")
        files.append(f)  # closed after the run: a dataset needs its file open
        return f["c"]

    for name, fn in workloads(h5_open):
        print("h5py %s %.6f" % (name, best(fn)), flush=True)
        for f in files:
            f.close()
        files.clear()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("make", "time"):
        sys.stderr.write(__doc__)
        sys.exit(2)
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        time_peers(sys.argv[2])
