"""The peers of bench_append: FRAMES frames of 1024 x 1024 uint16 appended one at a time, chunks
of 16 frames, Blosc LZ4 5 + shuffle, by h5py (resize + write per frame; Debian's Blosc filter
plugin) and by zarr-python 2 (append). Prints GB/s of uncompressed data, best of 3.

    append_peers.py FRAMES DIR
"""
import os
import sys
import time

os.environ.setdefault("HDF5_PLUGIN_PATH", "/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins")
try:
    import h5py
    import numpy as np
    import numcodecs
    import zarr
except ImportError:
    sys.exit(1)

frames, work = int(sys.argv[1]), sys.argv[2]
side = 1024
gb = frames * side * side * 2 / 1e9
rng = np.random.default_rng(1)
base = (100 + (np.add.outer(np.arange(side), np.arange(side)) // 16)).astype("u2")
imgs = [base + rng.integers(0, 8, (side, side), dtype="u2") for _ in range(8)]


def best(fn):
    t = []
    for _ in range(3):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t), max(t)


def h5():
    with h5py.File(os.path.join(work, "peer.h5"), "w") as f:
        d = f.create_dataset("f", (0, side, side), maxshape=(None, side, side), dtype="u2",
                             chunks=(16, side, side), compression=32001,
                             compression_opts=(0, 0, 0, 0, 5, 1, 1))
        for k in range(frames):
            d.resize(k + 1, axis=0)
            d[k] = imgs[k % 8]
        f.flush()
        os.fsync(f.id.get_vfd_handle())


def z():
    c = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)
    a = zarr.open(os.path.join(work, "peer.zarr"), mode="w", shape=(0, side, side),
                  chunks=(16, side, side), dtype="u2", compressor=c)
    for k in range(frames):
        a.append(imgs[k % 8][None])


for name, fn in (("h5py resize + write per frame, Blosc lz4 5", h5), ("zarr-python append", z)):
    try:
        lo, hi = best(fn)
        print("peer %-42s %.2f GB/s [%.2f-%.2f]" % (name, gb / lo, gb / hi, gb / lo))
    except Exception as e:  # a missing filter plugin, a zarr without append
        print("peer %-42s not run: %s" % (name, e))
