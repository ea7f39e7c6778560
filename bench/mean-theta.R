# The cost of mean_theta = TRUE (issue 21): the same calls with and without.
#   Rscript bench/mean-theta.R [BACKEND] [DATA_DIR] [REPS] [N_CLASSIC] [N_GRID]
# BACKEND: cpu (default) or cuda. Cases:
#  - classic: the reference catalogs (N_CLASSIC points of each, default all
#    100k), 360 bins of 0.25 degree to 90, self_pairs = TRUE: the DD count
#    alone (pair_counts(), where mean_theta costs most) and the whole
#    wtheta() call (DD + DR + RR, of which only DD sums angles);
#  - grid: N_GRID (default 10^6) uniform points and as many randoms on the
#    classic footprint (ra, dec in [0, 90]), 20 log bins from 0.01 to 10
#    degrees, wtheta() with the grid as it chooses (pruning, and on the CPU
#    bulk counting, which mean_theta turns off).
# Each timed REPS times (default 3) after one warm-up run, wall clock of the
# whole call; prints the minimum and median seconds and the ratio of the
# minima, with and without mean_theta, and writes
# bench/results/mean-theta-<BACKEND>.csv. CPU threads: wtheta_threads().
library(wtheta)
args <- commandArgs(trailingOnly = TRUE)
backend <- if (length(args) >= 1) args[1] else "cpu"
dir <- if (length(args) >= 2) args[2] else file.path("..", "shared", "data")
reps <- if (length(args) >= 3) as.integer(args[3]) else 3L
n_classic <- if (length(args) >= 4) as.numeric(args[4]) else 1e5
n_grid <- if (length(args) >= 5) as.numeric(args[5]) else 1e6
options(wtheta.progress = FALSE)

machine <- if (backend == "cuda") {
  be <- wtheta_backends()
  gpu <- be[be$backend == "cuda" & be$available, ]
  if (!nrow(gpu)) stop("no usable CUDA GPU")
  sprintf("GPU %s", gpu$name[1])
} else {
  cpu <- grep("^model name", readLines("/proc/cpuinfo"), value = TRUE)[1]
  sprintf("CPU %s, %d threads (%s kernels)", sub(".*: ", "", cpu),
          wtheta_threads(), attr(wtheta_backends(), "cpu_isa"))
}
cat(sprintf("%s; R %s; %d runs each after a warm-up\n", machine,
            getRversion(), reps))

D <- read_catalog(file.path(dir, "data_100k_arcmin.txt"), units = "arcmin")
R <- read_catalog(file.path(dir, "flat_100k_arcmin.txt"), units = "arcmin")
D <- D[seq_len(min(n_classic, nrow(D))), ]
R <- R[seq_len(min(n_classic, nrow(R))), ]
D6 <- random_catalog(n_grid, ra_range = c(0, 90), dec_range = c(0, 90),
                     seed = 1)
R6 <- random_catalog(n_grid, ra_range = c(0, 90), dec_range = c(0, 90),
                     seed = 2)
linear <- theta_bins(0, 90, width = 0.25)
logb <- theta_bins(0.01, 10, n = 20, log = TRUE)

cases <- list(
  "classic DD" = list(n = nrow(D), run = function(mt)
    pair_counts(D, bins = linear, self_pairs = TRUE, backend = backend,
                mean_theta = mt)),
  "classic wtheta" = list(n = nrow(D), run = function(mt)
    wtheta(D, R, linear, self_pairs = TRUE, backend = backend,
           check_footprint = FALSE, mean_theta = mt)),
  "grid wtheta" = list(n = n_grid, run = function(mt)
    wtheta(D6, R6, logb, backend = backend, check_footprint = FALSE,
           mean_theta = mt)))

secs <- function(f) {
  t0 <- proc.time()[["elapsed"]]
  f()
  proc.time()[["elapsed"]] - t0
}
rows <- list()
for (name in names(cases)) {
  cs <- cases[[name]]
  t <- list()
  for (mt in c(FALSE, TRUE)) {
    cs$run(mt)                                   # warm-up
    t[[as.character(mt)]] <- vapply(seq_len(reps),
                                    function(i) secs(function() cs$run(mt)),
                                    0)
  }
  rows[[length(rows) + 1L]] <- data.frame(
    case = name, backend = backend, n = cs$n,
    min_s = min(t[["FALSE"]]), median_s = stats::median(t[["FALSE"]]),
    mean_theta_min_s = min(t[["TRUE"]]),
    mean_theta_median_s = stats::median(t[["TRUE"]]),
    ratio = min(t[["TRUE"]]) / min(t[["FALSE"]]))
  print(rows[[length(rows)]], row.names = FALSE, digits = 4)
}
res <- do.call(rbind, rows)
cat("\n")
print(res, row.names = FALSE, digits = 4)
utils::write.csv(res, file.path("bench", "results",
                                 paste0("mean-theta-", backend, ".csv")),
                 row.names = FALSE)
