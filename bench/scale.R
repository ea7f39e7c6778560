# Survey scale: pruning by the last edge and bulk counting of cell pairs.
#   Rscript bench/scale.R cpu [N] [DATA_DIR]     # N data x N randoms, DD+DR+RR
#   Rscript bench/scale.R gpu [N] [DEVICES]      # N-point full-sky auto count
#                                                  # DEVICES: "0", "0,1", or
#                                                  # "0;0,1" for each in turn
#   a 4th argument "prune" leaves out the bulk-counting runs
# CPU: N (default 1e6) data points resampled from the classic galaxies
# (with a 1-arcminute Gaussian jitter, so that no two coincide) and N
# uniform randoms on the classic footprint (ra, dec in [0, 90]), 20 log
# bins from 0.01 to 10 degrees, wtheta() with self_pairs = FALSE, threads as
# wtheta_threads(). GPU: N (default 1e8) uniform points on the whole sky,
# the auto count in the same bins, on the devices given (default all, e.g.
# "0" or "0,1"). Each case runs with the grid off only where that is quick,
# pruning only, and pruning with bulk counting; times are wall clock of the
# whole call; on the GPU also the kernel time per device (CUDA events,
# summed over devices and divided by their number), the seconds spent
# planning the grid on the host, and gpu_idle_s: the seconds of the call in
# which the GPU ran no counting kernel (host work it waited on). Writes
# bench/results/scale-<mode>.csv.
# With WTHETA_CORRFUNC_DIR set, the CPU mode also writes its catalogs (ra dec
# in degrees), the bin edges (Corrfunc's "lower upper" lines) and its
# counts there, for bench/corrfunc.sh, and its times there too
# (wtheta-times.csv) instead of bench/results/scale-cpu.csv.
library(wtheta)
args <- commandArgs(trailingOnly = TRUE)
mode <- if (length(args) >= 1) args[1] else "cpu"
n <- if (length(args) >= 2) as.numeric(args[2]) else if (mode == "cpu") 1e6 else 1e8
bins <- theta_bins(0.01, 10, n = 20, log = TRUE)
host <- function() {
  cpu <- grep("^model name", readLines("/proc/cpuinfo"), value = TRUE)[1]
  sub(".*: ", "", cpu)
}
commas <- function(n) format(n, big.mark = ",", scientific = FALSE)
timed <- function(grid, expr) {
  old <- options(wtheta.grid = grid, wtheta.progress = FALSE)
  on.exit(options(old))
  t0 <- proc.time()[["elapsed"]]
  value <- force(expr)
  list(s = proc.time()[["elapsed"]] - t0, value = value)
}

if (mode == "cpu") {
  dir <- if (length(args) >= 3) args[3] else file.path("..", "shared", "data")
  D0 <- read_catalog(file.path(dir, "data_100k_arcmin.txt"), units = "arcmin")
  set.seed(1)
  pick <- sample.int(nrow(D0), n, replace = TRUE)
  D <- data.frame(ra = (D0$ra[pick] + rnorm(n, sd = 1 / 60)) %% 360,
                  dec = pmin(90, pmax(-90, D0$dec[pick] + rnorm(n, sd = 1 / 60))))
  R <- random_catalog(n, ra_range = c(0, 90), dec_range = c(0, 90), seed = 2)
  cfdir <- Sys.getenv("WTHETA_CORRFUNC_DIR")
  if (nzchar(cfdir)) {
    dir.create(cfdir, showWarnings = FALSE, recursive = TRUE)
    put <- function(x, f) writeLines(sprintf("%.17g %.17g", x$ra, x$dec),
                                     file.path(cfdir, f))
    put(D, "D.txt")
    put(R, "R.txt")
    b <- as.numeric(bins)
    writeLines(sprintf("%.17g %.17g", head(b, -1), tail(b, -1)),
               file.path(cfdir, "bins.txt"))
  }
  cat(sprintf("CPU: %s, %d threads; %s data x %s randoms, 20 log bins 0.01-10 deg\n",
              host(), wtheta_threads(), commas(n), commas(n)))
  res <- list()
  for (g in list("prune", TRUE)) {
    r <- timed(g, wtheta(D, R, bins, backend = "cpu", error = "none"))
    pcs <- attr(r$value, "pair_counts")
    visited <- sum(vapply(pcs, function(p) p$n_pairs - p$pairs_skipped, 0))
    res[[length(res) + 1]] <- data.frame(
      case = "DD+DR+RR", grid = format(g), seconds = r$s,
      pairs = sum(vapply(pcs, `[[`, 0, "n_pairs")), visited = visited)
    if (length(res) == 1) ref <- r$value
    else stopifnot(identical(ref$DD, r$value$DD), identical(ref$DR, r$value$DR),
                   identical(ref$RR, r$value$RR))
  }
  if (nzchar(cfdir)) {
    pcs <- attr(ref, "pair_counts")
    utils::write.csv(data.frame(DD = pcs$DD$counts, DR = pcs$DR$counts,
                                RR = pcs$RR$counts),
                     file.path(cfdir, "wtheta-counts.csv"), row.names = FALSE)
  }
} else {
  be <- wtheta_backends()
  gpu <- be[be$backend == "cuda" & be$available, ]
  if (!nrow(gpu)) stop("no usable CUDA GPU")
  sets <- if (length(args) >= 3) {
    lapply(strsplit(args[3], ";")[[1]], function(d)
      as.integer(strsplit(d, ",")[[1]]))
  } else list(gpu$device)
  cat(sprintf("GPU: %s; %s points, full sky, auto, 20 log bins 0.01-10 deg\n",
              gpu$name[1], commas(n)))
  t0 <- proc.time()[["elapsed"]]
  X <- random_catalog(n, ra_range = c(0, 360), dec_range = c(-90, 90), seed = 3)
  cat(sprintf("catalog drawn in %.1f s\n", proc.time()[["elapsed"]] - t0))
  res <- list()
  grids <- if (length(args) >= 4 && args[4] == "prune") list("prune") else
    list("prune", TRUE)
  for (devices in sets) for (g in grids) {
    r <- timed(g, pair_counts(X, bins = bins, backend = "cuda",
                              devices = devices))
    p <- r$value
    res[[length(res) + 1]] <- data.frame(
      case = "auto", grid = format(g), devices = length(devices),
      seconds = r$s, gpu_s = p$gpu_ms / 1000 / length(devices),
      grid_plan_s = p$grid_plan_s, gpu_idle_s = p$gpu_idle_s,
      pairs = p$n_pairs,
      visited = p$n_pairs - p$pairs_skipped)
    print(res[[length(res)]], row.names = FALSE, digits = 4)
    if (length(res) == 1) ref <- p$counts else stopifnot(identical(ref, p$counts))
  }
}
res <- do.call(rbind, res)
res$visited_share <- res$visited / res$pairs
print(res, row.names = FALSE, digits = 4)
# for bench/corrfunc.sh the times go with the counts, and the kept
# bench/results/scale-cpu.csv (the 10^6 run) stays as it is
out <- if (mode == "cpu" && nzchar(cfdir)) file.path(cfdir, "wtheta-times.csv") else
  file.path("bench", "results", paste0("scale-", mode, ".csv"))
utils::write.csv(res, out, row.names = FALSE)
