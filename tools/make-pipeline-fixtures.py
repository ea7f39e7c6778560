#!/usr/bin/python3
"""Small SACC and DES twopoint fixtures for wtheta's tests, written by the
reference packages themselves (LSST DESC's sacc and joezuntz's 2point,
from their sources), with the expected values written beside them by this
script from the same numpy arrays (never by wtheta):

    PYTHONPATH=<sacc source>:<2point source> /usr/bin/python3 tools/make-pipeline-fixtures.py [tests/testthat/fixtures]

Both files hold a w(theta) of two samples (three correlations, four angular
bins in arcmin) among other statistics, so that a reader must pick the
w(theta) points and their block of the covariance:
* pipeline-sacc.fits: NZ tracers lens0 and lens1, the galaxy_density_xi
  points (tags theta, theta_min, theta_max, npair) added after two
  galaxy_density_cl points, one full covariance of all 14 points;
* pipeline-twopoint.fits: a gammat spectrum before the wtheta one (QUANT
  GPR, sample names as metadata MD_BIN1, MD_BIN2), an n(z) extension
  nz_lens, COVMAT of all 16 points.
Expected values: pipeline-*-expected.csv (per w(theta) point: tracer1,
tracer2, value, theta_arcmin, theta_min_arcmin, theta_max_arcmin, npair)
and pipeline-*-cov.csv (the w(theta) block), floats as repr(), which reads
back to the same double. Deterministic (fixed seed); the tests do not run
this script, they read what it wrote (committed).
"""
import os
import sys

import numpy as np
import sacc
import twopoint

out = sys.argv[1] if len(sys.argv) > 1 else "tests/testthat/fixtures"
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(32)
p = lambda name: os.path.join(out, name)

names = ["lens0", "lens1"]
pairs = [(0, 0), (0, 1), (1, 1)]
edges = np.geomspace(2.5, 250.0, 5)              # arcmin
theta = np.sqrt(edges[:-1] * edges[1:])
nb = len(theta)
n_w = len(pairs) * nb
w = rng.normal(0.05, 0.02, n_w) * np.tile(theta ** -0.8, len(pairs))
npair = np.round(rng.uniform(1e3, 1e6, n_w))
z = np.linspace(0.0, 1.5, 31)
nzs = [np.exp(-0.5 * ((z - m) / 0.1) ** 2) for m in (0.4, 0.7)]


def covariance(n):
    a = rng.normal(size=(n, n))
    return a @ a.T * 1e-6 + np.eye(n) * 1e-6


def write_expected(stem, t1, t2, cov):
    with open(p(stem + "-expected.csv"), "w") as f:
        f.write("tracer1,tracer2,value,theta_arcmin,theta_min_arcmin,"
                "theta_max_arcmin,npair\n")
        for k in range(n_w):
            b = k % nb
            f.write(",".join([t1[k], t2[k], repr(float(w[k])),
                              repr(float(theta[b])), repr(float(edges[b])),
                              repr(float(edges[b + 1])),
                              repr(float(npair[k]))]) + "\n")
    with open(p(stem + "-cov.csv"), "w") as f:
        f.write(",".join("V%d" % (k + 1) for k in range(n_w)) + "\n")
        for row in cov:
            f.write(",".join(repr(float(v)) for v in row) + "\n")


# ---- SACC -------------------------------------------------------------------
s = sacc.Sacc()
for n, nz in zip(names, nzs):
    s.add_tracer("NZ", n, z, nz, quantity="galaxy_density")
for ell, cl in ((100.0, 1e-5), (200.0, 5e-6)):   # another statistic first
    s.add_data_point("galaxy_density_cl", ("lens0", "lens0"), cl, ell=ell)
t1, t2 = [], []
for k, (a, b) in enumerate(pairs):
    for j in range(nb):
        i = k * nb + j
        s.add_data_point("galaxy_density_xi", (names[a], names[b]), w[i],
                         theta=theta[j], theta_min=edges[j],
                         theta_max=edges[j + 1], npair=npair[i])
        t1.append(names[a])
        t2.append(names[b])
full = covariance(2 + n_w)
s.add_covariance(full)
s.save_fits(p("pipeline-sacc.fits"), overwrite=True)
write_expected("pipeline-sacc", t1, t2, full[2:, 2:])

# ---- twopoint ---------------------------------------------------------------
T = twopoint.Types
dz = z[1] - z[0]
kernel = twopoint.NumberDensity("nz_lens", z - dz / 2, z, z + dz / 2, nzs)
gt_n = 4
gammat = twopoint.SpectrumMeasurement(
    "gammat", (np.ones(gt_n, dtype=int), np.ones(gt_n, dtype=int)),
    (T.galaxy_position_real, T.galaxy_shear_plus_real),
    ("nz_lens", "nz_source"), "SAMPLE", np.arange(1, gt_n + 1),
    rng.normal(0, 1e-3, gt_n), angle=theta, angle_unit="arcmin")
b1 = np.repeat([a + 1 for a, _ in pairs], nb)
b2 = np.repeat([b + 1 for _, b in pairs], nb)
wtheta = twopoint.SpectrumMeasurement(
    "wtheta", (b1, b2), (T.galaxy_position_real, T.galaxy_position_real),
    ("nz_lens", "nz_lens"), "SAMPLE", np.tile(np.arange(1, nb + 1),
                                              len(pairs)),
    w, angle=np.tile(theta, len(pairs)),
    angle_min=np.tile(edges[:-1], len(pairs)),
    angle_max=np.tile(edges[1:], len(pairs)), angle_unit="arcmin",
    npairs=npair, metadata={"BIN1": names[0], "BIN2": names[1]})
full = covariance(gt_n + n_w)
info = twopoint.CovarianceMatrixInfo("COVMAT", ["gammat", "wtheta"],
                                     [gt_n, n_w], full)
tp = twopoint.TwoPointFile([gammat, wtheta], [kernel], None, info)
tp.to_fits(p("pipeline-twopoint.fits"), overwrite=True)
write_expected("pipeline-twopoint", [names[a - 1] for a in b1],
               [names[b - 1] for b in b2], full[gt_n:, gt_n:])
