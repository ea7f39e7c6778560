#!/usr/bin/python3
"""Reads a SACC or DES twopoint FITS file with its reference package and
writes what that package read as JSON, for wtheta's tests to compare with
what wtheta wrote:

    PYTHONPATH=<sacc source> /usr/bin/python3 tools/read-pipeline-files.py sacc FILE OUT.csv
    PYTHONPATH=<2point source> /usr/bin/python3 tools/read-pipeline-files.py twopoint FILE OUT.csv

The packages are LSST DESC's sacc (Sacc.load_fits) and joezuntz's 2point
(TwoPointFile.from_fits), from their sources on PYTHONPATH, with Debian's
python3-numpy, python3-scipy and python3-astropy. The output is a long CSV
(field,i,j,value: one row per element, i and j from 1, j empty for a
vector) holding, per data point in the covariance's order, the tracer (or
bin) names, value, theta, theta_min, theta_max (arcmin) and npair; the
covariance (cov, i and j); the tracer names and, for n(z) tracers or
kernels, their z and n(z) (nz:<name>:z, nz:<name>:nz or nz:<name>:bin<k>).
Floats are written with repr(), which reads back to the same double.
"""
import csv
import sys

import numpy as np


def floats(a):
    return [float(v) for v in np.asarray(a, dtype=float).ravel()]


def read_sacc(path):
    import sacc
    s = sacc.Sacc.load_fits(path)
    pts = [d for d in s.data if d.data_type == "galaxy_density_xi"]
    out = {
        "reader": "sacc " + getattr(sacc, "__version__", "?"),
        "data_types": s.get_data_types(),
        "tracer1": [d.tracers[0] for d in pts],
        "tracer2": [d.tracers[1] for d in pts],
        "value": [float(d.value) for d in pts],
        "theta": [float(d.get_tag("theta")) for d in pts],
        "theta_min": [float(d.get_tag("theta_min", np.nan)) for d in pts],
        "theta_max": [float(d.get_tag("theta_max", np.nan)) for d in pts],
        "npair": [float(d.get_tag("npair", np.nan)) for d in pts],
        "tracers": list(s.tracers.keys()),
        "tracer_class": [type(t).__name__ for t in s.tracers.values()],
    }
    for n, t in s.tracers.items():
        if hasattr(t, "nz"):
            out["nz:%s:z" % n] = floats(t.z)
            out["nz:%s:nz" % n] = floats(t.nz)
    if s.has_covariance():
        ind = s.indices("galaxy_density_xi")
        out["cov"] = [floats(r) for r in s.covariance.get_block(ind)]
    return out


def read_twopoint(path):
    import twopoint
    t = twopoint.TwoPointFile.from_fits(path)
    spec = [s for s in t.spectra
            if s.type1.value == "GPR" and s.type2.value == "GPR"][0]
    md = spec.metadata or {}
    name = lambda b: str(md.get("BIN%d" % b, "bin%d" % b))
    out = {
        "reader": "twopoint",
        "spectrum": spec.name,
        "kernel1": spec.kernel1,
        "angle_unit": spec.angle_unit,
        "bin1": [int(b) for b in spec.bin1],
        "bin2": [int(b) for b in spec.bin2],
        "angbin": [int(b) for b in spec.angular_bin],
        "tracer1": [name(b) for b in spec.bin1],
        "tracer2": [name(b) for b in spec.bin2],
        "value": floats(spec.value),
        "theta": floats(spec.angle),
        "theta_min": floats(spec.angle_min),
        "theta_max": floats(spec.angle_max),
        "npair": floats(spec.npairs) if spec.npairs is not None else [],
        "kernels": [k.name for k in t.kernels],
    }
    for k in t.kernels:
        out["nz:%s:z" % k.name] = floats(k.z)
        for b, n in enumerate(k.nzs):
            out["nz:%s:bin%d" % (k.name, b + 1)] = floats(n)
    if t.covmat is not None:
        i = spec.dv_index
        out["cov"] = [floats(r) for r in t.covmat[np.ix_(i, i)]]
    return out


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("sacc", "twopoint"):
        sys.exit(__doc__)
    kind, path, dest = sys.argv[1:]
    out = read_sacc(path) if kind == "sacc" else read_twopoint(path)
    text = lambda v: repr(float(v)) if isinstance(v, float) else str(v)
    with open(dest, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["field", "i", "j", "value"])
        for field, v in out.items():
            if field == "cov":
                for a, row in enumerate(v):
                    for b, x in enumerate(row):
                        w.writerow([field, a + 1, b + 1, text(x)])
            elif isinstance(v, list):
                for a, x in enumerate(v):
                    w.writerow([field, a + 1, "", text(x)])
            else:
                w.writerow([field, 1, "", text(v)])


if __name__ == "__main__":
    main()
