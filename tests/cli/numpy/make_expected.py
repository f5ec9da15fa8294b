#!/usr/bin/env python3
"""Writes what NumPy prints and counts for the shared corpus, as the expected text of the b2nd
tool's tests (tests/cli/test_cli_numpy.cpp): `b2nd show` must print str(numpy_array), and
`b2nd diff` must count what numpy.isclose counts.

Run it where NumPy 1.24 is installed (Debian bookworm: apt-get install python3-numpy), from the
repository root, with the corpus at ../shared/corpus (or give its path):

    python3 tests/cli/numpy/make_expected.py [CORPUS] > tests/cli/numpy/expected.txt

The output is committed; the tests read it and never run NumPy. Each record starts with a line
"@@ KIND ARGS"; for `show` the lines up to the next record are the text, for `diff` the record
is one line: the array, its .npy, rtol, atol, equal_nan (0/1), the count of elements that are
not close, and the element count. The second operand of each diff is the array reversed in C
order (numpy.flip over every axis), which the test makes from the .npy; `<special:DTYPE>` names
the pair of SPECIAL_A and SPECIAL_B in that dtype, which the test writes itself.
"""
import json
import os
import sys
import warnings

import numpy as np

# The tolerance settings each numeric array is compared with.
TOLERANCES = [(0.0, 0.0, False), (1e-5, 1e-8, False), (1e-3, 0.0, True), (0.0, 0.5, False)]

# The values the issue found wrong (1 vs inf, -inf vs +inf, 5 vs -inf, NaN), as a pair of
# arrays the test writes itself (tests/cli/test_cli_numpy.cpp, kSpecialA/kSpecialB).
SPECIAL_A = [1.0, -np.inf, 5.0, np.nan, np.nan, 0.0, np.inf, 2.5]
SPECIAL_B = [np.inf, np.inf, -np.inf, np.nan, 1.0, -0.0, np.inf, 2.5000001]


def cases(corpus):
    """(relative path of the array, relative path of its .npy) of every array whose .npy holds
    its own dtype, in the manifests' order: c-blosc2's arrays, the plugin arrays, and the
    records' arrays of one .npy (strings, datetimes). legacy-2x/ (more of the same kinds, from
    older c-blosc2 releases; 0.5 MB of text more) prints as NumPy too, but is left out here, and
    so is upstream/, whose two arrays store a dtype that is not their items'."""
    for manifest in ["manifest.json", "plugins/manifest.json", "records/manifest.json"]:
        base = os.path.dirname(manifest)
        with open(os.path.join(corpus, manifest)) as f:
            m = json.load(f)
        for c in m["cases"]:
            if c.get("dtype") is None or c.get("dtype_note") or not isinstance(c.get("npy"), str):
                continue  # legacy caterva arrays: the .npy holds another dtype
            yield os.path.join(base, c["file"]), os.path.join(base, c["npy"])


def main():
    warnings.simplefilter("ignore")  # inf * 0 inside numpy.isclose
    corpus = sys.argv[1] if len(sys.argv) > 1 else "../shared/corpus"
    out = sys.stdout
    out.write("# NumPy %s: str() of each array, and numpy.isclose counts "
              "(tests/cli/numpy/make_expected.py)\n" % np.__version__)
    for path, npy in cases(corpus):
        a = np.load(os.path.join(corpus, npy))
        if a.dtype.names is not None:
            continue  # structured arrays: b2nd show prints records its own way
        out.write("@@ show %s\n%s\n" % (path, str(a)))
        if a.dtype.kind not in "biufc":
            continue
        write_diffs(out, path + " " + npy, a, np.flip(a))
    for dt in ["<f8", "<f4", "<f2"]:
        name = "<special:%s> -" % dt
        write_diffs(out, name, np.array(SPECIAL_A, dtype=dt), np.array(SPECIAL_B, dtype=dt))


def write_diffs(out, name, a, b):
    for rtol, atol, equal_nan in TOLERANCES:
        close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
        out.write("@@ diff %s %r %r %d %d %d\n" % (name, rtol, atol, int(equal_nan),
                                                   int(close.size - np.count_nonzero(close)),
                                                   close.size))


if __name__ == "__main__":
    main()
