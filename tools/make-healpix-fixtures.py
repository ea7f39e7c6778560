#!/usr/bin/python3
"""Small HEALPix map fixtures for wtheta's tests, written by an independent
tool (Debian's python3-healpy, hostile headers by python3-astropy), with the
pixel of a set of test points computed by healpy's own ang2pix beside them:

    /usr/bin/python3 tools/make-healpix-fixtures.py [tests/testthat/fixtures/healpix]

Deterministic (fixed seed); the tests read what it wrote (committed).
Maps:
  ring.fits      nside 16, RING, implicit, 0 outside (vector column 1024E)
  nested.fits    nside 16, NESTED, implicit, UNSEEN outside (1024D)
  partial.fits   nside 16, RING, explicit (PIXEL, SIGNAL), values 0.25..1
  galactic.fits  nside 8, RING, COORDSYS G: 1 where galactic b > 30 deg
  scalar.fits    nside 4, NESTED, implicit with a scalar column (192 rows)
  bad-nside.fits, bad-count.fits, bad-ordering.fits, all-zero.fits: hostile
points.csv: ra, dec (degrees, equatorial) and, from healpy, ring16 and
  nest16 (ang2pix at nside 16) and gal8 (RING pixel at nside 8 of the point
  rotated to galactic by healpy's Rotator(coord=['C', 'G'])).
"""
import os
import sys
import warnings

import healpy as hp
import numpy as np
from astropy.io import fits

warnings.simplefilter("ignore")
out = sys.argv[1] if len(sys.argv) > 1 else "tests/testthat/fixtures/healpix"
os.makedirs(out, exist_ok=True)
p = lambda name: os.path.join(out, name)
rng = np.random.default_rng(20)

# a region in equatorial coordinates: 20 < ra < 100, -20 < dec < 40
nside = 16
theta, phi = hp.pix2ang(nside, np.arange(hp.nside2npix(nside)))
ra, dec = np.degrees(phi), 90 - np.degrees(theta)
inside = (ra > 20) & (ra < 100) & (dec > -20) & (dec < 40)
ring = inside.astype(np.float32)
hp.write_map(p("ring.fits"), ring, nest=False, coord="C", overwrite=True,
             dtype=np.float32)
# the same region, NESTED, UNSEEN outside, float64
nest_vals = np.where(inside, 1.0, hp.UNSEEN)[hp.nest2ring(nside, np.arange(hp.nside2npix(nside)))]
hp.write_map(p("nested.fits"), nest_vals, nest=True, coord="C",
             overwrite=True, dtype=np.float64)
# explicit partial map (RING) with values 0.25 .. 1 inside the region
vals = np.where(inside, 0.25 + 0.75 * (ra - 20) / 80, hp.UNSEEN)
hp.write_map(p("partial.fits"), vals, nest=False, coord="C", partial=True,
             overwrite=True, dtype=np.float64)
# galactic map, nside 8: 1 where b > 30
gt, gp = hp.pix2ang(8, np.arange(hp.nside2npix(8)))
gal = (90 - np.degrees(gt) > 30).astype(np.float64)
hp.write_map(p("galactic.fits"), gal, nest=False, coord="G", overwrite=True)
# scalar column (npix < 1024): nside 4, NESTED, the northern cap
st, sp = hp.pix2ang(4, np.arange(192), nest=True)
hp.write_map(p("scalar.fits"), (90 - np.degrees(st) > 40).astype(np.float64),
             nest=True, overwrite=True)


def hostile(name, n, nside, ordering, value=1.0):
    col = fits.Column(name="SIGNAL", format="D", array=np.full(n, value))
    h = fits.BinTableHDU.from_columns([col])
    h.header["PIXTYPE"] = "HEALPIX"
    h.header["ORDERING"] = ordering
    h.header["NSIDE"] = nside
    h.header["INDXSCHM"] = "IMPLICIT"
    h.writeto(p(name), overwrite=True)


hostile("bad-nside.fits", 12 * 12 * 12, 12, "RING")
hostile("bad-count.fits", 3000, 16, "RING")
hostile("bad-ordering.fits", 3072, 16, "SPIRAL")
hostile("all-zero.fits", 3072, 16, "NESTED", 0.0)

# test points: uniform on the sphere
n = 1000
pra = rng.uniform(0, 360, n)
pdec = np.degrees(np.arcsin(rng.uniform(-1, 1, n)))
ring16 = hp.ang2pix(16, pra, pdec, lonlat=True)
nest16 = hp.ang2pix(16, pra, pdec, lonlat=True, nest=True)
gth, gph = hp.Rotator(coord=["C", "G"])(np.radians(90 - pdec), np.radians(pra))
gal8 = hp.ang2pix(8, gth, gph)
with open(p("points.csv"), "w") as f:
    f.write("ra,dec,ring16,nest16,gal8\n")
    for i in range(n):
        f.write("%r,%r,%d,%d,%d\n" % (float(pra[i]), float(pdec[i]),
                                      ring16[i], nest16[i], gal8[i]))
