#!/usr/bin/python3
"""Hostile FITS fixtures for wtheta's tests (issue 31, round three), made
by an independent writer (Debian's python3-astropy) and then damaged card
by card, byte by byte, by this script:

    /usr/bin/python3 tools/make-hostile-fits-fixtures.py [tests/testthat/fixtures]

Deterministic; the tests read what it wrote (committed).
"""
import gzip
import os
import shutil
import sys

import numpy as np
from astropy.io import fits

out = sys.argv[1] if len(sys.argv) > 1 else "tests/testthat/fixtures"
os.makedirs(out, exist_ok=True)
p = lambda name: os.path.join(out, name)


def set_card(path, key, card, start=2880):
    """replace the card of keyword `key` (first after `start`) by `card`"""
    d = bytearray(open(path, "rb").read())
    i = d.find(key.ljust(8).encode() + b"=", start)
    assert i >= 0, key
    d[i:i + 80] = card.ljust(80).encode()
    open(path, "wb").write(bytes(d))


n = 20
ra = np.linspace(0, 10, n)
dec = np.linspace(-5, 5, n)
cols = [fits.Column(name="RA", format="D", array=ra),
        fits.Column(name="DEC", format="D", array=dec)]
fits.BinTableHDU.from_columns(cols).writeto(p("hostile-good.fits"), overwrite=True)

# broken headers: an overflowing TFORM repeat count, a garbled TFIELDS,
# a negative NAXIS2; a header claiming 2e9 rows of a 23 kB file
for name, key, card in [
        ("hostile-tform.fits", "TFORM1", "TFORM1  = '99999999999999999999D'"),
        ("hostile-tfields.fits", "TFIELDS", "TFIELDS = 2x"),
        ("hostile-naxis2.fits", "NAXIS2", "NAXIS2  =                   -5"),
        ("hostile-rows.fits", "NAXIS2", "NAXIS2  =           2000000000")]:
    shutil.copy(p("hostile-good.fits"), p(name))
    set_card(p(name), key, card)
os.remove(p("hostile-good.fits"))

# a HEALPix map (IMPLICIT, NESTED, nside 16: 3 rows of 1024 values) whose
# NAXIS2 claims 2e6 rows of 1024 values (8 GB as doubles)
vals = np.ones(12 * 16 ** 2, dtype=np.float32)
t = fits.BinTableHDU.from_columns(
    [fits.Column(name="T", format="1024E", array=vals.reshape(-1, 1024))])
for k, v in [("PIXTYPE", "HEALPIX"), ("ORDERING", "NESTED"), ("NSIDE", 16),
             ("INDXSCHM", "IMPLICIT"), ("COORDSYS", "C")]:
    t.header[k] = v
fits.HDUList([fits.PrimaryHDU(), t]).writeto(p("hostile-healpix.fits"), overwrite=True)
set_card(p("hostile-healpix.fits"), "NAXIS2", "NAXIS2  =              2000000")

# an ASCII table whose row 7 (of 20) holds "12.3x4" in RA
t = fits.TableHDU.from_columns([fits.Column(name="RA", format="F12.6", array=ra),
                                fits.Column(name="DEC", format="F12.6", array=dec)])
t.writeto(p("hostile-ascii.fits"), overwrite=True)
d = bytearray(open(p("hostile-ascii.fits"), "rb").read())
off = 2 * 2880 + 6 * t.header["NAXIS1"]
d[off:off + 12] = b"  12.3x4    "
open(p("hostile-ascii.fits"), "wb").write(bytes(d))

# 64-bit integers: 5000 IDs 2^62 + 0:4999 (as DESI's TARGETID), a K column
# within 2^53 with a null (TNULL), and unsigned 64-bit (TZERO = 2^63)
# columns: one below 2^63, one above; gzip compressed (they compress well)
m = 5000
ids = (2 ** 62 + np.arange(m)).astype(np.int64)
small = np.arange(m, dtype=np.int64) * 1000 - 2 ** 40
small[3] = -1
u_low = (np.arange(m, dtype=np.uint64) + np.uint64(2 ** 62))
u_high = (np.arange(m, dtype=np.uint64) + np.uint64(2 ** 63 + 5))
hdu = fits.BinTableHDU.from_columns([
    fits.Column(name="RA", format="D", array=np.zeros(m)),
    fits.Column(name="DEC", format="D", array=np.zeros(m)),
    fits.Column(name="TARGETID", format="K", array=ids),
    fits.Column(name="SMALL", format="K", null=-1, array=small),
    fits.Column(name="ULOW", format="K", bzero=2 ** 63, array=u_low),
    fits.Column(name="UHIGH", format="K", bzero=2 ** 63, array=u_high)])
hdu.writeto(p("int64.fits"), overwrite=True)
with fits.open(p("int64.fits")) as h:
    assert int(h[1].data["ULOW"][0]) == 2 ** 62
    assert int(h[1].data["UHIGH"][1]) == 2 ** 63 + 6
    assert int(h[1].data["TARGETID"][4999]) == 2 ** 62 + 4999
with open(p("int64.fits"), "rb") as src, gzip.open(p("int64.fits.gz"), "wb") as dst:
    shutil.copyfileobj(src, dst)
os.remove(p("int64.fits"))
print("hostile fixtures written to", out)
