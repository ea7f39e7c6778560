#!/usr/bin/python3
"""Small HDF5 fixtures for wtheta's tests, made by an independent writer
(Debian's python3-h5py), in the layout of LSST DESC's TXPipe (groups such as
/lens/bin_1 and /randoms/bin_1 holding one-dimensional datasets ra, dec,
weight), with text and FITS copies (python3-astropy) and the expected
values written beside them by this script from the same numpy arrays (never
by wtheta):

    /usr/bin/python3 tools/make-hdf5-fixtures.py   (Debian's python3, where h5py is) [tests/testthat/fixtures]

Each expected-values file is CSV with Python's repr() of every float, which
reads back to the same double. Deterministic (fixed seed); the tests do not
run this script, they read what it wrote (committed).
"""
import os
import sys

import h5py
import numpy as np
from astropy.io import fits

out = sys.argv[1] if len(sys.argv) > 1 else "tests/testthat/fixtures"
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(32)
p = lambda name: os.path.join(out, name)


def write_csv(name, cols):
    """cols: list of (name, 1-d array); floats as repr, integers as str"""
    n = len(cols[0][1])
    with open(p(name), "w") as f:
        f.write(",".join(c for c, _ in cols) + "\n")
        for i in range(n):
            row = []
            for _, a in cols:
                v = a[i]
                if isinstance(v, (float, np.floating)):
                    row.append("NA" if np.isnan(v) else repr(float(v)))
                else:
                    row.append(str(int(v)))
            f.write(",".join(row) + "\n")


def new_file(name, **kw):
    # the oldest file format, which every HDF5 library reads; the values are
    # the same on every run, the bytes are not (HDF5 stamps object times)
    return h5py.File(p(name), "w", libver="earliest", **kw)


# 1. TXPipe's layout: lens galaxies in two tomographic bins (ra, dec,
# weight, and in bin 1 a bit-mask flag), randoms in one (no weights);
# a text and a FITS copy of lens bin 1 and a text copy of the randoms
def sky(n):
    ra = rng.uniform(0, 20, n)
    dec = np.degrees(np.arcsin(rng.uniform(np.sin(np.radians(-10)),
                                           np.sin(np.radians(10)), n)))
    return ra, dec


n1, n2, nr = 240, 150, 400
ra1, dec1 = sky(n1)
w1 = rng.uniform(0.5, 2.0, n1)
# bits 0, 1, 3 (1, 2, 8) set at random, about half the rows clean
flag1 = (rng.uniform(size=n1) < 0.2) * 1 + (rng.uniform(size=n1) < 0.15) * 2 + \
    (rng.uniform(size=n1) < 0.1) * 8
flag1 = flag1.astype(np.int32)
ra2, dec2 = sky(n2)
w2 = rng.uniform(0.5, 2.0, n2)
rar, decr = sky(nr)
with new_file("txpipe.h5") as f:
    g = f.create_group("lens/bin_1")
    g["ra"], g["dec"], g["weight"], g["flag"] = ra1, dec1, w1, flag1
    g = f.create_group("lens/bin_2")
    g["ra"], g["dec"], g["weight"] = ra2, dec2, w2
    g = f.create_group("randoms/bin_1")
    g["ra"], g["dec"] = rar, decr
    f["provenance/config"] = np.bytes_("wtheta test fixture")
write_csv("txpipe-lens1.csv", [("ra", ra1), ("dec", dec1), ("weight", w1),
                               ("flag", flag1)])
write_csv("txpipe-randoms1.csv", [("ra", rar), ("dec", decr)])
fits.BinTableHDU.from_columns([
    fits.Column(name="RA", format="D", unit="deg", array=ra1),
    fits.Column(name="DEC", format="D", unit="deg", array=dec1),
    fits.Column(name="WEIGHT", format="D", array=w1),
    fits.Column(name="FLAG", format="J", array=flag1)],
    name="LENS").writeto(p("txpipe-lens1.fits"), overwrite=True)
# rows kept under TreeCorr's rule (flag & ~ok == 0), for a few masks
oks = np.array([0, 1, 2, 3, 8, 11], dtype=np.int64)
write_csv("txpipe-lens1-kept.csv",
          [("ok", oks),
           ("n_kept", np.array([np.sum((flag1 & ~ok) == 0) for ok in oks]))])

# 2. every numeric type HDF5 has, each dataset holding the extremes wtheta
# reads exactly (64-bit integers up to 2^53 - 1 in magnitude)
n = 6
types = {
    "i8": np.array([-128, 127, 0, 1, -1, 5], dtype=np.int8),
    "i16": np.array([-32768, 32767, 0, 1, -1, 5], dtype=np.int16),
    "i32": np.array([-2**31, 2**31 - 1, 0, 1, -1, 5], dtype=np.int32),
    "i64": np.array([-(2**53 - 1), 2**53 - 1, 0, 1, -1, 5], dtype=np.int64),
    "u8": np.array([0, 255, 1, 2, 3, 5], dtype=np.uint8),
    "u16": np.array([0, 65535, 1, 2, 3, 5], dtype=np.uint16),
    "u32": np.array([0, 2**32 - 1, 2**31, 2, 3, 5], dtype=np.uint32),
    "u64": np.array([0, 2**53 - 1, 2**32, 2, 3, 5], dtype=np.uint64),
    "f32": np.array([1.5, -2.25, 3.4028234663852886e38, 1e-30, np.nan, 0.1],
                    dtype=np.float32),
    "f64": np.array([1.5, -2.25, 1.7976931348623157e308, 5e-324, np.nan, 0.1]),
}
ra, dec = sky(n)
with new_file("types.h5") as f:
    g = f.create_group("types")
    # positions as float32 and as integers of every width
    g["ra"] = ra.astype(np.float32)
    g["dec"] = dec.astype(np.float32)
    for k, v in types.items():
        g[k] = v
    g["ra_i16"] = np.array([0, 10, 359, 180, 45, 90], dtype=np.int16)
    g["dec_u64"] = np.array([0, 10, 89, 80, 45, 90], dtype=np.uint64)
write_csv("types.csv", [("ra", ra.astype(np.float32)),
                        ("dec", dec.astype(np.float32))] +
          [(k, v.astype(np.float64) if v.dtype.kind == "f" else v)
           for k, v in types.items()])

# 3. hostile files: each group a case the reader must refuse by name
with new_file("hostile.h5") as f:
    g = f.create_group("big")                  # 64-bit integers beyond 2^53
    g["ra"], g["dec"] = np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 2.0])
    g["id"] = np.array([1, 2**53 + 1, 3], dtype=np.int64)
    g["uid"] = np.array([1, 2**64 - 1, 3], dtype=np.uint64)
    g["ra64"] = np.array([1, 2, 2**53 + 2], dtype=np.int64)
    g = f.create_group("short")                # lengths differ
    g["ra"], g["dec"] = np.arange(10.0), np.arange(9.0)
    g = f.create_group("nested")               # ra is a group
    g["ra/values"] = np.arange(4.0)
    g["dec"] = np.arange(4.0)
    g = f.create_group("matrix")               # a 2-d position dataset
    g["ra"], g["dec"] = np.zeros((4, 2)), np.arange(4.0)
    g = f.create_group("strings")              # text where numbers belong
    g["ra"], g["dec"] = np.array([b"a", b"b", b"c"]), np.arange(3.0)
    g = f.create_group("nan")                  # NaN in dec, row 3
    g["ra"], g["dec"] = np.arange(4.0), np.array([1.0, 2.0, np.nan, 4.0])
    g["z"] = np.array([0.1, np.nan, 0.3, 0.4])
    g = f.create_group("compound")             # a compound weight
    g["ra"], g["dec"] = np.arange(3.0), np.arange(3.0)
    g["weight"] = np.array([(1, 2.0)] * 3, dtype=[("a", "i4"), ("b", "f8")])
    g = f.create_group("flags")                # flags of several types
    g["ra"], g["dec"] = np.arange(5.0), np.arange(5.0)
    g["bool"] = np.array([True, False, False, True, False])
    g["frac"] = np.array([0.0, 0.5, 0.0, 0.0, 1.0])
    g["whole"] = np.array([0.0, 2.0, 0.0, 4.0, 1.0])
    g["i64"] = np.array([0, 2**40, 1, 2**40 + 1, 0], dtype=np.int64)
    g["neg"] = np.array([0, -1, 2, 0, 0], dtype=np.int16)
    g["all"] = np.array([1, 1, 1, 1, 1], dtype=np.uint8)
    g = f.create_group("scalar")               # a scalar, not a column
    g["ra"], g["dec"] = 5.0, np.arange(3.0)
    g = f.create_group("empty")                # no rows
    g["ra"], g["dec"] = np.zeros(0), np.zeros(0)
    g = f.create_group("nopos")                # no usual names
    g["x"], g["y"] = np.arange(3.0), np.arange(3.0)

# 4. a user block of 1024 bytes (text that looks like a catalog) before the
# HDF5 superblock: still HDF5, found by its signature at offset 1024
with new_file("userblock.h5", userblock_size=1024) as f:
    g = f.create_group("lens/bin_1")
    g["ra"], g["dec"] = ra2[:20], dec2[:20]
with open(p("userblock.h5"), "r+b") as f:
    f.write(b"ra dec\n1 2\n3 4\n")
write_csv("userblock.csv", [("ra", ra2[:20]), ("dec", dec2[:20])])
print("fixtures written to", out)
