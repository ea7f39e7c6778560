#!/usr/bin/python3
"""Small FITS fixtures for wtheta's tests, made by an independent writer
(Debian's python3-astropy), with the expected values written beside them
by this script from the same numpy arrays (never by wtheta):

    /usr/bin/python3 tools/make-fits-fixtures.py   (Debian's python3, where astropy is) [tests/testthat/fixtures]

Each expected-values file is CSV with Python's repr() of every float, which
reads back to the same double. Deterministic (fixed seed); the tests do not
run this script, they read what it wrote (committed).
"""
import gzip
import os
import shutil
import sys

import numpy as np
from astropy.io import fits

out = sys.argv[1] if len(sys.argv) > 1 else "tests/testthat/fixtures"
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(19)
p = lambda name: os.path.join(out, name)


def write_csv(name, cols):
    """cols: list of (name, 1-d array); floats as repr, NaN as NA"""
    n = len(cols[0][1])
    with open(p(name), "w") as f:
        f.write(",".join(c for c, _ in cols) + "\n")
        for i in range(n):
            row = []
            for _, a in cols:
                v = a[i]
                if isinstance(v, (float, np.floating)):
                    row.append("NA" if np.isnan(v) else repr(float(v)))
                elif isinstance(v, (bool, np.bool_)):
                    row.append("TRUE" if v else "FALSE")
                else:
                    row.append(str(v))
            f.write(",".join(row) + "\n")


# 1. degrees, float64 positions, every column type, nulls in other columns
n = 24
ra = rng.uniform(0, 360, n)
dec = np.degrees(np.arcsin(rng.uniform(-1, 1, n)))
w = rng.uniform(0.5, 2, n).astype(np.float32)
z = rng.uniform(0, 1.5, n)
z[5] = np.nan                                  # a null in a double column
ident = np.arange(n, dtype=np.int64) * 10**12  # K: beyond 32 bits
flag = rng.uniform(size=n) > 0.5
names = np.array(["gal%d" % i for i in range(n)])
vec = rng.normal(size=(n, 4))                  # a vector column, 4D
small = rng.integers(-100, 100, n).astype(np.int16)
small[7] = -999                                # TNULL below
cols = [
    fits.Column(name="RA", format="D", unit="deg", array=ra),
    fits.Column(name="DEC", format="D", unit="deg", array=dec),
    fits.Column(name="W", format="E", array=w),
    fits.Column(name="Z_PHOT", format="D", array=z),
    fits.Column(name="ID", format="K", array=ident),
    fits.Column(name="FLAG", format="L", array=flag),
    fits.Column(name="NAME", format="8A", array=names),
    fits.Column(name="SHAPE", format="4D", array=vec),
    fits.Column(name="SMALL", format="I", null=-999, array=small),
]
t = fits.BinTableHDU.from_columns(cols, name="GALAXIES")
fits.HDUList([fits.PrimaryHDU(), t]).writeto(p("galaxies.fits"), overwrite=True)
with open(p("galaxies.fits"), "rb") as src, gzip.open(p("galaxies.fits.gz"), "wb") as dst:
    shutil.copyfileobj(src, dst)
write_csv("galaxies.csv", [("ra", ra), ("dec", dec), ("w", w.astype(np.float64)),
                           ("z_phot", z), ("id", ident), ("flag", flag),
                           ("name", names),
                           ("small", np.where(small == -999, "NA", small.astype(str)))]
          + [("shape%d" % k, vec[:, k]) for k in range(4)])

# 2. minutes of arc (TUNIT arcmin), float32 positions, SExtractor names; the same positions as
# text in arcmin (float32 values printed exactly as doubles)
n = 40
ra32 = (rng.uniform(0, 60, n) * 60).astype(np.float32)
dec32 = (rng.uniform(-30, 30, n) * 60).astype(np.float32)
cols = [fits.Column(name="ALPHA_J2000", format="E", unit="arcmin", array=ra32),
        fits.Column(name="DELTA_J2000", format="E", unit="arcmin", array=dec32)]
fits.BinTableHDU.from_columns(cols).writeto(p("minutes-f32.fits"), overwrite=True)
with open(p("minutes-f32.txt"), "w") as f:
    for a, b in zip(ra32, dec32):
        f.write("%r %r\n" % (float(a), float(b)))

# 3. a text catalog in minutes of arc and its FITS copy (float64): counts must agree
n = 300
ra = rng.uniform(0, 20 * 60, n)
dec = rng.uniform(-10 * 60, 10 * 60, n)
with open(p("minutes.txt"), "w") as f:
    for a, b in zip(ra, dec):
        f.write("%r %r\n" % (a, b))
cols = [fits.Column(name="RA", format="D", unit="arcmin", array=ra),
        fits.Column(name="DEC", format="D", unit="arcmin", array=dec)]
fits.BinTableHDU.from_columns(cols).writeto(p("minutes.fits"), overwrite=True)

# 4. scaled integers: positions as J with TSCAL/TZERO, unsigned 16 and 32
n = 10
ra_int = rng.integers(0, 3_600_000, n).astype(np.int32)
dec_int = rng.integers(-900_000, 900_000, n).astype(np.int32)
u16 = np.array([0, 1, 40000, 65535, 32768, 7, 8, 9, 10, 11], dtype=np.uint16)
u32 = np.array([0, 1, 4_000_000_000, 4_294_967_295, 2**31, 5, 6, 7, 8, 9],
               dtype=np.uint32)
cols = [fits.Column(name="RA", format="J", unit="deg", array=ra_int),
        fits.Column(name="DEC", format="J", unit="deg", array=dec_int),
        # the unsigned convention: stored value = value - TZERO, added below
        fits.Column(name="U16", format="I",
                    array=(u16.astype(np.int32) - 32768).astype(np.int16)),
        fits.Column(name="U32", format="J",
                    array=(u32.astype(np.int64) - 2**31).astype(np.int32))]
fits.BinTableHDU.from_columns(cols).writeto(p("scaled.fits"), overwrite=True)
# positions scaled by TSCAL1/2 = 1e-4 and TZERO1/2 = 0.5, unsigned
# integers by TZERO3/4, added to the
# header as raw cards (the stored integers stay as they are)
data = open(p("scaled.fits"), "rb").read()
ext = data.find(b"XTENSION", 2880)
hdr = data[ext:]
cards = [hdr[i:i + 80] for i in range(0, len(hdr), 80)]
end = next(i for i, c in enumerate(cards) if c.startswith(b"END "))
extra = [("TSCAL1  = %20s" % "1.0E-4").ljust(80).encode(),
         ("TZERO1  = %20s" % "0.5").ljust(80).encode(),
         ("TSCAL2  = %20s" % "1.0E-4").ljust(80).encode(),
         ("TZERO2  = %20s" % "0.5").ljust(80).encode(),
         ("TZERO3  = %20s" % "32768").ljust(80).encode(),
         ("TZERO4  = %20s" % "2147483648").ljust(80).encode()]
new = cards[:end] + extra + [cards[end]]
body = b"".join(new)
body += b" " * (-len(body) % 2880)
old_len = (end + 1) * 80
old_len += -old_len % 2880
open(p("scaled.fits"), "wb").write(data[:ext] + body + hdr[old_len:])
# expected: raw * TSCAL + TZERO in double (as the FITS standard says)
write_csv("scaled.csv", [("ra", ra_int.astype(np.float64) * 1e-4 + 0.5),
                         ("dec", dec_int.astype(np.float64) * 1e-4 + 0.5),
                         ("u16", u16.astype(np.int64)), ("u32", u32.astype(np.int64))])
# astropy agrees with the expected values
with fits.open(p("scaled.fits")) as h:
    assert np.array_equal(h[1].data["RA"], ra_int.astype(np.float64) * 1e-4 + 0.5)
    assert np.array_equal(h[1].data["U32"], u32)

# 5. the table in the second extension, after an image, named RANDOMS
n = 12
ra = rng.uniform(0, 360, n)
dec = rng.uniform(-60, 60, n)
cols = [fits.Column(name="ra", format="D", array=ra),
        fits.Column(name="dec", format="D", array=dec)]
fits.HDUList([fits.PrimaryHDU(),
              fits.ImageHDU(np.zeros((3, 3), dtype=np.float32), name="MASK"),
              fits.BinTableHDU.from_columns(cols, name="RANDOMS")]).writeto(
    p("second-ext.fits"), overwrite=True)
write_csv("second-ext.csv", [("ra", ra), ("dec", dec)])

# 6. a null (NaN) in dec, row 3; a variable-length array column
ra = np.array([10.0, 20.0, 30.0, 40.0])
dec = np.array([1.0, 2.0, np.nan, 4.0])
fits.BinTableHDU.from_columns([
    fits.Column(name="RA", format="D", array=ra),
    fits.Column(name="DEC", format="D", array=dec),
    fits.Column(name="SPEC", format="PD()",
                array=np.array([np.arange(k + 1, dtype=np.float64) for k in range(4)],
                               dtype=object))]).writeto(p("null-dec.fits"), overwrite=True)

# 7. hostile files, made from a good one
good = open(p("galaxies.fits"), "rb").read()
open(p("bad-truncated.fits"), "wb").write(good[: 2880 * 2 + 500])
open(p("bad-magic.fits"), "wb").write(b"SIMPLX" + good[6:])
hdr = bytearray(good[:2880])
k = hdr.find(b"END" + b" " * 77)
hdr[k:k + 80] = b" " * 80
open(p("bad-no-end.fits"), "wb").write(bytes(hdr))
data = bytearray(good)
i = data.find(b"NAXIS2  =", 2880)
card = ("NAXIS2  = %20d" % 100000).ljust(80).encode()
data[i:i + 80] = card
open(p("bad-naxis2.fits"), "wb").write(bytes(data))
fits.PrimaryHDU(np.arange(12, dtype=np.float64).reshape(3, 4)).writeto(
    p("image-only.fits"), overwrite=True)

# 8. w(theta) results written by another tool (no R_OBJECT), read back by
# read_wtheta(); an rng of their own, so the fixtures above do not change
rw = np.random.default_rng(1919)
nb = 4
edges = np.logspace(-1, 1, nb + 1)
lo, hi = edges[:-1], edges[1:]
mid = np.sqrt(lo * hi)
dd = rw.integers(1000, 5000, nb).astype(np.float64)
dr = rw.integers(5000, 20000, nb).astype(np.float64)
rr = rw.integers(20000, 90000, nb).astype(np.float64)
wv = rw.normal(0, 0.1, nb)
werr = rw.uniform(0.01, 0.05, nb)
# variances on the diagonal; not symmetric on purpose, so that the test
# sees that [i, j] stays [i, j]
cov = np.diag(werr ** 2) + rw.normal(0, 1e-5, (nb, nb)) * (1 - np.eye(nb))
cols = [fits.Column(name="THETA_LO", format="D", unit="deg", array=lo),
        fits.Column(name="THETA_HI", format="D", unit="deg", array=hi),
        fits.Column(name="THETA", format="D", unit="deg", array=mid),
        fits.Column(name="DD", format="D", array=dd),
        fits.Column(name="DR", format="D", array=dr),
        fits.Column(name="RR", format="D", array=rr),
        fits.Column(name="W", format="D", array=wv),
        fits.Column(name="W_ERR", format="D", array=werr)]
t = fits.BinTableHDU.from_columns(cols, name="WTHETA")
for k, v in [("ESTIMATR", "LS"), ("COUNTING", "auto"), ("SELFPAIR", False),
             ("WEIGHTED", False), ("N_DATA", 1000), ("N_RANDOM", 5000),
             ("ERRMETH", "jackknife"), ("NPATCHES", 10)]:
    t.header[k] = v
fits.HDUList([fits.PrimaryHDU(), t, fits.ImageHDU(cov, name="COV")]).writeto(
    p("foreign-wtheta.fits"), overwrite=True)
write_csv("foreign-wtheta.csv", [("theta_lo", lo), ("theta_hi", hi),
                                 ("theta", mid), ("DD", dd), ("DR", dr),
                                 ("RR", rr), ("w", wv), ("w_err", werr)])
write_csv("foreign-wtheta-cov.csv", [("V%d" % (j + 1), cov[:, j]) for j in range(nb)])
# the second: single precision, no keywords, no w_err, the table not named
# WTHETA, the covariance a table with one vector column (a row per bin)
cols = [fits.Column(name=c, format="E", array=a.astype(np.float32))
        for c, a in [("theta_lo", lo), ("theta_hi", hi), ("theta", mid),
                     ("DD", dd), ("DR", dr), ("RR", rr), ("w", wv)]]
fits.HDUList([fits.PrimaryHDU(),
              fits.BinTableHDU.from_columns(cols, name="RESULT"),
              fits.BinTableHDU.from_columns(
                  [fits.Column(name="COV", format="%dD" % nb, array=cov)],
                  name="COV")]).writeto(p("foreign-wtheta-f32.fits"), overwrite=True)
# columns whose names differ only in case (RA, DEC, ra, dec): which pair
# `columns = c("ra", "dec")` means cannot be known (issue 31). Its own
# generator, so that its values do not move the fixtures above.
rng_case = np.random.default_rng(31)
up = rng_case.uniform(10, 20, 5)
low = rng_case.uniform(100, 110, 5)
fits.BinTableHDU.from_columns([
    fits.Column(name="RA", format="D", array=up),
    fits.Column(name="DEC", format="D", array=up - 15),
    fits.Column(name="ra", format="D", array=low),
    fits.Column(name="dec", format="D", array=low - 105),
    fits.Column(name="W", format="D", array=np.ones(5))]).writeto(
        p("case-dup.fits"), overwrite=True)
write_csv("case-dup.csv", [("RA", up), ("DEC", up - 15), ("ra", low),
                           ("dec", low - 105)])
print("fixtures written to", out)
