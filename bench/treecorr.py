"""TreeCorr's side of bench/peers.sh (the TreeCorr side-by-side of issue 33).

    PYTHONPATH=/tmp/tc/site /usr/bin/python3 bench/treecorr.py OUT_DIR \
        [--data DATA_DIR] [--threads 2] [--reps 3] [--n N] [--csv FILE]

OUT_DIR holds what `Rscript bench/peers.R OUT_DIR ...` wrote (wtheta's
times, counts and patch centres, run with the same DATA_DIR, threads and
N). TreeCorr is built from its sources by ../shared/peers/treecorr-build.sh
(for benchmarks only; it is no part of wtheta, its tests or run time).

The workload: the two reference catalogs (data_100k_arcmin.txt and
flat_100k_arcmin.txt in DATA_DIR, default ../shared/data; their first N rows
each, default all), 20 log bins from 0.01 to 10 degrees, DD + DR + RR, with
NNCorrelation on THREADS threads (num_threads). The calls:

  default     TreeCorr's defaults: bin_slop chosen by TreeCorr, metric
              'Euclidean' (chord distances against edges in radians), so
              approximate
  arc         metric 'Arc' (great-circle angles), default bin_slop
  exact       metric 'Arc', bin_slop = 0: must equal wtheta in every bin
  jk20        as default, with var_method 'jackknife' over 20 patches
  jk20_exact  as exact, with var_method 'jackknife' over 20 patches

Each timed run builds the three Catalogs from arrays in memory (degrees;
with the patches' centres for jk20*), runs process() for DD, DR and RR, and
calculateXi(rr=, dr=) (Landy-Szalay; for jk20* that computes the jackknife
covariance): as wtheta's calls do from data frames. The patches are
wtheta's own (sky_patches(R, 20, seed = 1), the unit-vector centres in
OUT_DIR/centres.txt, given as patch_centers), so both tools resample the
same patches; TreeCorr's k-means is not timed, as sky_patches() is not.
REPS timed runs each (default 3) after one untimed warm-up; minimum and
median wall clock seconds.

Prints each call's time and its ratio to wtheta's plain call, and compares
TreeCorr's npairs with wtheta's counts bin by bin: for each count the most
relative difference over bins with pairs, and the bins that differ. The
exact calls must equal wtheta's in all 60 bins: if not, the script exits
with status 1 after printing everything. Writes bench/results/peers.csv (or
--csv): both tools' rows.
"""
import argparse
import csv
import os
import sys
import time
import warnings

import numpy as np

# this file's folder comes first on sys.path, and its name would shadow the
# treecorr package: import the package from the others
here = os.path.dirname(os.path.abspath(__file__))
sys.path = [q for q in sys.path if os.path.abspath(q or os.curdir) != here]
import treecorr  # noqa: E402

# TreeCorr's mean separations take arcsin of chords a little over 2 in
# empty or far bins (metric 'Euclidean'): noise here, the counts are what
# is compared
warnings.filterwarnings("ignore", category=RuntimeWarning, module="treecorr")

p = argparse.ArgumentParser()
p.add_argument("out_dir")
p.add_argument("--data", default=os.path.join("..", "shared", "data"))
p.add_argument("--threads", type=int, default=2)
p.add_argument("--reps", type=int, default=3)
p.add_argument("--n", type=int, default=None)
p.add_argument("--csv", default=os.path.join("bench", "results", "peers.csv"))
p.add_argument("--calls", default="default,arc,exact,jk20,jk20_exact")
a = p.parse_args()
calls = a.calls.split(",")
known = ["default", "arc", "exact", "jk20", "jk20_exact"]
for c in calls:
    if c not in known:
        sys.exit("--calls names calls among %s, not '%s'" % (", ".join(known), c))
if a.reps < 1:
    sys.exit("--reps is a positive whole number, not %d" % a.reps)


def read(name):
    x = np.loadtxt(os.path.join(a.data, name), ndmin=2)
    if x.shape[1] == 1:  # a first line holding the row count
        x = np.loadtxt(os.path.join(a.data, name), skiprows=1, ndmin=2)
    if a.n is not None:
        x = x[: a.n]
    return x[:, 0] / 60, x[:, 1] / 60  # arcminutes to degrees


D = read("data_100k_arcmin.txt")
R = read("flat_100k_arcmin.txt")
centres = np.loadtxt(os.path.join(a.out_dir, "centres.txt"), ndmin=2)
with open(os.path.join(a.out_dir, "wtheta-counts.csv")) as f:
    wc = list(csv.DictReader(f))
ours = {k: np.array([float(r[k]) for r in wc]) for k in ("DD", "DR", "RR")}
with open(os.path.join(a.out_dir, "wtheta-times.csv")) as f:
    wt = {r["call"]: r for r in csv.DictReader(f)}
with open(os.path.join(a.out_dir, "machine.txt")) as f:
    print(f.read().strip())
print("TreeCorr %s (%s), numpy %s, Python %s; %d threads; %d data x %d "
      "randoms; %d runs each" % (treecorr.__version__,
                                 os.path.dirname(treecorr.__file__),
                                 np.__version__, sys.version.split()[0],
                                 a.threads, len(D[0]), len(R[0]), a.reps))

base = dict(min_sep=0.01, max_sep=10, nbins=20, sep_units="deg",
            num_threads=a.threads)
config = {
    "default": dict(base),
    "arc": dict(base, metric="Arc"),
    "exact": dict(base, metric="Arc", bin_slop=0),
    # cross_patch_weight 'simple' is TreeCorr 5.1's default, named so that
    # it does not print its advice on every run
    "jk20": dict(base, var_method="jackknife", cross_patch_weight="simple"),
    "jk20_exact": dict(base, metric="Arc", bin_slop=0, var_method="jackknife",
                       cross_patch_weight="simple"),
}


def run(name):
    cfg = config[name]
    kw = dict(ra_units="deg", dec_units="deg")
    if name.startswith("jk"):
        kw["patch_centers"] = centres
    d = treecorr.Catalog(ra=D[0], dec=D[1], **kw)
    r = treecorr.Catalog(ra=R[0], dec=R[1], **kw)
    dd = treecorr.NNCorrelation(**cfg)
    dr = treecorr.NNCorrelation(**cfg)
    rr = treecorr.NNCorrelation(**cfg)
    dd.process(d)
    dr.process(d, r)
    rr.process(r)
    dd.calculateXi(rr=rr, dr=dr)
    return dd, dr, rr


# warm-up: module, OpenMP pool
w = treecorr.Catalog(ra=D[0][:2000], dec=D[1][:2000], ra_units="deg",
                     dec_units="deg")
treecorr.NNCorrelation(**base).process(w)

plain = float(wt["plain"]["min_s"]) if "plain" in wt else float("nan")
rows = []
for name, r in wt.items():
    rows.append(dict(tool="wtheta", call=name, min_s=float(r["min_s"]),
                     median_s=float(r["median_s"]),
                     ratio_to_wtheta=float(r["min_s"]) / plain,
                     bin_slop="exact", max_rel_diff=0.0, bins_differing=0))
failed = []
for name in calls:
    secs = []
    for k in range(a.reps):
        t0 = time.perf_counter()
        dd, dr, rr = run(name)
        secs.append(time.perf_counter() - t0)
    worst, ndiff, where = 0.0, 0, []
    for label, c in (("DD", dd), ("DR", dr), ("RR", rr)):
        tc = np.asarray(c.npairs, dtype=float)
        w = ours[label]
        if tc.shape != w.shape:
            sys.exit("%s %s: %d bins, wtheta has %d" % (name, label, len(tc), len(w)))
        d = np.abs(tc - w)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(w > 0, d / w, np.where(d > 0, np.inf, 0.0))
        worst = max(worst, float(rel.max()))
        bad = np.nonzero(d)[0]
        ndiff += len(bad)
        if len(bad):
            where.append("%s bins %s" % (label, ",".join(str(i + 1) for i in bad)))
    if name in ("exact", "jk20_exact") and ndiff:
        failed.append("%s: %s" % (name, "; ".join(where)))
    rows.append(dict(tool="TreeCorr", call=name, min_s=min(secs),
                     median_s=float(np.median(secs)),
                     ratio_to_wtheta=min(secs) / plain,
                     bin_slop="%.4g" % dd.bin_slop, max_rel_diff=worst,
                     bins_differing=ndiff))
    print("%-10s %-14s min %8.3f s  median %8.3f s  %6.2fx wtheta's plain "
          "call; bin_slop %s, %s; counts vs wtheta: %d of 60 bins differ, "
          "most by %.3g relative" %
          ("TreeCorr", name, min(secs), np.median(secs), min(secs) / plain,
           rows[-1]["bin_slop"], config[name].get("metric", "Euclidean"),
           ndiff, worst))

print("\n%-9s %-14s %9s %9s %8s %9s %12s %6s" %
      ("tool", "call", "min_s", "median_s", "x_plain", "bin_slop",
       "max_rel_diff", "n_diff"))
for r in rows:
    print("%-9s %-14s %9.3f %9.3f %8.2f %9s %12.3g %6d" %
          (r["tool"], r["call"], r["min_s"], r["median_s"],
           r["ratio_to_wtheta"], r["bin_slop"], r["max_rel_diff"],
           r["bins_differing"]))
print("(x_plain: the call's minimum over wtheta's plain call's minimum; "
      "wtheta's rows are its own calls, see bench/peers.R)")
os.makedirs(os.path.dirname(a.csv) or ".", exist_ok=True)
with open(a.csv, "w", newline="") as f:
    wr = csv.DictWriter(f, fieldnames=list(rows[0]))
    wr.writeheader()
    wr.writerows(rows)
print("written:", a.csv)
if failed:
    print("FAILED: exact TreeCorr counts differ from wtheta's: " + " | ".join(failed))
    sys.exit(1)
