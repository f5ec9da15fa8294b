#!/usr/bin/python3
"""Writes HDF5 and Zarr v2 sources of any size with the programs scientists use, and the values
each holds as .npy, for the bridges tests:

    make_sources.py DIR EDGE

DIR/h5.h5 (h5py): /gzip/f4 (EDGE, EDGE, 40) float32, chunks (16, 32, 40), shuffle + gzip 3;
/blosc/i2 (EDGE, 3 * EDGE) int16 through the Blosc filter plugin (32001, lz4, bitshuffle) when
h5py has it; /fill/u8 (EDGE * 50,) uint8, chunks (1000,), fill value 9, only its first chunk
written. DIR/v2.zarr (zarr-python 2.13): (EDGE, EDGE, 40) float64, chunks (10, 20, 40), Blosc
zstd 3 + shuffle, order F, fill value -2.5, its first chunk missing. DIR/NAME.npy: the values.
Prints the datasets written, one per line. Exits 77 without h5py, zarr or numpy.
"""
import os
import sys

try:
    import h5py
    import numpy as np
    import zarr
    from numcodecs import Blosc
except ImportError:
    sys.exit(77)

d, edge = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(40)
written = []

f4 = (np.sin(np.arange(edge * edge * 40).reshape(edge, edge, 40) / 97.0) * 100).astype("<f4")
i2 = rng.integers(-3000, 3000, size=(edge, 3 * edge)).astype("<i2")
u8 = np.full(edge * 50, 9, dtype="u1")
u8[:1000] = np.arange(1000) % 251
with h5py.File(os.path.join(d, "h5.h5"), "w") as h:
    h.create_dataset("gzip/f4", data=f4, chunks=(16, 32, 40), shuffle=True, compression="gzip",
                     compression_opts=3)
    written.append(("h5.h5:/gzip/f4", "h5_gzip_f4", f4))
    if h5py.h5z.filter_avail(32001):
        # hdf5-blosc's cd_values: revision, version, typesize, size, clevel, shuffle (2: bit),
        # compressor (1: lz4)
        h.create_dataset("blosc/i2", data=i2, chunks=(8, 64), compression=32001,
                         compression_opts=(2, 2, 2, 0, 5, 2, 1))
        written.append(("h5.h5:/blosc/i2", "h5_blosc_i2", i2))
    ds = h.create_dataset("fill/u8", shape=u8.shape, dtype="u1", chunks=(1000,), fillvalue=9)
    ds[:1000] = u8[:1000]
    written.append(("h5.h5:/fill/u8", "h5_fill_u8", u8))

f8 = np.cos(np.arange(edge * edge * 40).reshape(edge, edge, 40) / 31.0)
z = zarr.open_array(os.path.join(d, "v2.zarr"), mode="w", shape=f8.shape, chunks=(10, 20, 40),
                    dtype="<f8", order="F", fill_value=-2.5,
                    compressor=Blosc(cname="zstd", clevel=3, shuffle=Blosc.SHUFFLE))
z[...] = f8
os.remove(os.path.join(d, "v2.zarr", "0.0.0"))
f8[:10, :20, :] = -2.5
written.append(("v2.zarr", "zarr_v2_f8", f8))

for src, name, values in written:
    np.save(os.path.join(d, name + ".npy"), values)
    print(src, name)
