#!/usr/bin/python3
"""Reads back what `b2nd export` wrote, with an independent reader, and checks it.

    read_back.py KIND PATH EXPECT.npy CHUNKS ATTRS_JSON

KIND hdf5: PATH is FILE:/dataset, read with h5py; zarr2: PATH is a Zarr v2 array, read with
zarr-python 2. Each also checks the export's default compression (gzip; blosc), unless KIND
ends in "-coded" (an export told how to compress: its test checks that). CHUNKS is "a,b,c" (the HDF5 chunks, or the Zarr chunks). ATTRS_JSON holds the
attributes the output must carry. Prints "ok"; exit 1 with the reason on stderr on a mismatch,
77 when the reader is not installed.
"""
import json
import sys

try:
    import numpy as np
except ImportError:
    sys.exit(77)


def fail(why):
    print(why, file=sys.stderr)
    sys.exit(1)


def same_values(got, want):
    if got.dtype != want.dtype:
        fail("dtype %s, expected %s" % (got.dtype, want.dtype))
    if got.shape != want.shape:
        fail("shape %s, expected %s" % (got.shape, want.shape))
    if got.tobytes() != want.tobytes():
        fail("values differ")


def same_attrs(got, want):
    for k, v in want.items():
        if k not in got:
            fail("attribute %r missing" % k)
        g = got[k]
        if isinstance(g, bytes):
            g = g.decode()
        if isinstance(g, np.ndarray):
            g = g.tolist()
        elif isinstance(g, np.generic):
            g = g.item()
        if g != v:
            fail("attribute %r is %r, expected %r" % (k, g, v))


def main():
    kind, path, expect, chunks, attrs = sys.argv[1:6]
    want = np.load(expect)
    chunks = tuple(int(c) for c in chunks.split(",")) if chunks else ()
    attrs = json.loads(attrs)
    coded = kind.endswith("-coded")
    kind = kind[: -len("-coded")] if coded else kind
    if kind == "hdf5":
        try:
            import h5py
        except ImportError:
            sys.exit(77)
        file, dataset = path.rsplit(":", 1)
        with h5py.File(file, "r") as f:
            d = f[dataset]
            same_values(d[()], want)
            if chunks and d.chunks != chunks:
                fail("chunks %s, expected %s" % (d.chunks, chunks))
            if want.ndim > 0 and not coded and d.compression != "gzip":
                fail("compression %s, expected gzip" % d.compression)
            same_attrs(dict(d.attrs), attrs)
    elif kind == "zarr2":
        try:
            import zarr
        except ImportError:
            sys.exit(77)
        z = zarr.open_array(path, mode="r")
        if z._version != 2 if hasattr(z, "_version") else False:
            fail("not a v2 array")
        same_values(z[...], want)
        if chunks and tuple(z.chunks) != chunks:
            fail("chunks %s, expected %s" % (z.chunks, chunks))
        if not coded and (z.compressor is None or z.compressor.codec_id != "blosc"):
            fail("compressor %s, expected blosc" % z.compressor)
        same_attrs(z.attrs.asdict(), attrs)
    else:
        fail("unknown kind " + kind)
    print("ok")


main()
