#!/bin/sh
# wtheta against TreeCorr on the same machine, threads, catalogs and bins
# (issue 33): DD + DR + RR of the two reference catalogs, 20 log bins from
# 0.01 to 10 degrees; TreeCorr's default (approximate), arc metric, exact
# (bin_slop = 0) and jackknife with 20 patches (approximate and exact), and
# wtheta's plain and jackknife calls; counts compared bin by bin.
#
#   sh bench/peers.sh [DATA_DIR] [THREADS] [REPS] [N]
#
# DATA_DIR defaults to ../shared/data, THREADS to 2, REPS to 3, N (the first
# N rows of each catalog) to all. TREECORR_SITE (default /tmp/tc/site) is
# where ../shared/peers/treecorr-build.sh installed TreeCorr. Runs
# `Rscript bench/peers.R` (wtheta's times, counts and patch centres, into a
# temporary folder), then bench/treecorr.py with Debian's /usr/bin/python3,
# which prints both tools' times side by side, compares the counts and
# writes bench/results/peers.csv. Exits 1 when exact TreeCorr differs from
# wtheta in any bin. OMP_NUM_THREADS is set to THREADS for both.
set -eu
cd "$(dirname "$0")/.."
data=${1:-../shared/data}
threads=${2:-2}
reps=${3:-3}
n=${4:-}
site=${TREECORR_SITE:-/tmp/tc/site}
if ! PYTHONPATH=$site /usr/bin/python3 -c 'import treecorr' 2>/dev/null; then
  echo "no TreeCorr in $site: build it with ../shared/peers/treecorr-build.sh" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "== wtheta (bench/peers.R, $threads threads)"
OMP_NUM_THREADS=$threads Rscript bench/peers.R "$work" "$data" "$threads" \
  "$reps" ${n:+"$n"}
echo "== TreeCorr (bench/treecorr.py, $threads threads)"
OMP_NUM_THREADS=$threads PYTHONPATH=$site /usr/bin/python3 bench/treecorr.py \
  "$work" --data "$data" --threads "$threads" --reps "$reps" ${n:+--n "$n"} \
  ${PEERS_CSV:+--csv "$PEERS_CSV"}
