#!/bin/sh
# wtheta against Corrfunc's DDtheta_mocks on the same machine, threads,
# catalogs and bins (the CPU workload of bench/scale.R: N data resampled from
# the classic galaxies x N randoms on their footprint, 20 log bins from 0.01
# to 10 degrees, DD + DR + RR).
#
#   sh bench/corrfunc.sh DDTHETA_MOCKS [N] [DATA_DIR] [THREADS]
#
# DDTHETA_MOCKS: Corrfunc's command-line DDtheta_mocks, built from its own
# sources (not part of wtheta). N defaults to 1e6, DATA_DIR to
# ../shared/data, THREADS to 2. First runs `Rscript bench/scale.R cpu N
# DATA_DIR` (wtheta's times, and the catalogs, bins and counts written to a
# temporary folder), then times DDtheta_mocks on DD, DR and RR (its own
# "pair-counting time", file reading excluded), then compares the counts
# bin by bin (Corrfunc counts each pair of an auto-correlation twice), and
# prints Corrfunc's total over each of wtheta's times (the whole wtheta()
# call, grid "prune" and TRUE: bulk counting, the default). The issue 33
# case, 3e5 x 3e5 on 2 threads:
#   sh bench/corrfunc.sh /tmp/corrfunc/bin/DDtheta_mocks 3e5 ../shared/data 2
# (bench/README.md says how DDtheta_mocks was built). scale.R's times go to
# the temporary folder, not to bench/results/scale-cpu.csv.
set -eu
cd "$(dirname "$0")/.."
cf=${1:?usage: sh bench/corrfunc.sh DDTHETA_MOCKS [N] [DATA_DIR] [THREADS]}
n=${2:-1e6}
data=${3:-../shared/data}
threads=${4:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "== wtheta (bench/scale.R cpu $n, $threads threads)"
OMP_NUM_THREADS=$threads WTHETA_CORRFUNC_DIR=$work \
  Rscript bench/scale.R cpu "$n" "$data"
echo "== Corrfunc DDtheta_mocks ($threads threads)"
total=0
for c in DD DR RR; do
  case $c in DD) a=D; b=D ;; DR) a=D; b=R ;; RR) a=R; b=R ;; esac
  OMP_NUM_THREADS=$threads "$cf" "$work/$a.txt" a "$work/$b.txt" a \
    "$work/bins.txt" "$threads" > "$work/cf-$c.txt" 2> "$work/cf-$c.err"
  s=$(grep -o 'pair-counting time = *[0-9.]*' "$work/cf-$c.err" | awk '{print $NF}')
  echo "$c: ${s:-?} s"
  total=$(awk -v t="$total" -v s="${s:-0}" 'BEGIN { print t + s }')
done
echo "Corrfunc DD + DR + RR: $total s"
Rscript -e '
  dir <- commandArgs(TRUE)[1]
  cf_s <- as.numeric(commandArgs(TRUE)[2])
  t <- read.csv(file.path(dir, "wtheta-times.csv"))
  for (i in seq_len(nrow(t))) {
    cat(sprintf(paste0("wtheta (grid %s) %.2f s, Corrfunc %.2f s: ",
                       "Corrfunc / wtheta = %.2f\n"),
                t$grid[i], t$seconds[i], cf_s, cf_s / t$seconds[i]))
  }
  w <- read.csv(file.path(dir, "wtheta-counts.csv"))
  for (k in c("DD", "DR", "RR")) {
    cf <- read.table(file.path(dir, paste0("cf-", k, ".txt")))$V4
    if (k != "DR") cf <- cf / 2
    cat(sprintf("%s: largest difference %g pairs in %d bins\n", k,
                max(abs(cf - w[[k]])), length(cf)))
  }' "$work" "$total"
