# PIP weights (issue 37): what a count weighted by bitwise weights costs
# against the same count unweighted and with individual weights.
#
#   Rscript bench/pip.R [N ...] [--backend=cpu] [--devices=0,1]
#     [--threads=2] [--reps=3] [--words=2] [--csv=FILE]
#
# N: points of each catalog, e.g. 1e5 (the default) 1e6; each size in turn.
# The workload:
#   - a DES-like footprint, the box ra 0..100, dec -60..5 degrees;
#   - catalog A: simulate_catalog(N, ra_range = c(0, 100), dec_range =
#     c(-60, 5), sigma = 0.1, seed = 1); catalog B: random_catalog(N) on
#     the same box, seed = 2;
#   - 20 log bins from 2.5 to 250 arcmin;
#   - bitwise weights: --words 32-bit words a point (default 2: 64
#     realisations, the issue's case), uniform random bits (seed 3): the
#     cost of a pair does not depend on which bits are set;
#   - individual weights: uniform in [0.5, 1.5] (seed 4).
# The counts, each as pair_counts() of data frames (the unit vectors and
# the grid are made in every call, as a user's call makes them):
#   auto   pair_counts(A, bins)            A's pairs
#   cross  pair_counts(A, bins, y = B)     A x B, both with bits
# each three ways:
#   plain     no weights
#   weighted  weights = "w" (both catalogs)
#   pip       bitwise = c("bits1", ..., "bitsK") (both catalogs), default
#             nrealizations (32 K + 1), noffset 1
# --backend: cpu (default), cuda or auto; --devices: the GPUs (default the
# package's choice); --threads: CPU threads (options(wtheta.threads);
# default wtheta_threads()); --reps: timed runs of each count (default 3),
# after one small untimed warm-up count of each kind (thread pool, GPU
# context, kernels loaded).
#
# Prints the machine, then for each size, count and weighting the minimum
# and median wall-clock seconds of the whole call, the count's own
# `elapsed` and, on the GPU, its kernel time `gpu_ms` (fastest run), and
# the ratio of pip to plain and of weighted to plain (min to min, median to
# median). The issue's targets: pip at most 3x plain on the CPU, 2x on the
# GPU; the last lines say whether each size met its target.
#
# Every run is checked, so that a broken engine cannot pass for a fast
# one: every run's raw `counts` equal the plain run's in every bin (the
# weights change the weighted sums only); the pip runs' `weighted` equal
# the first pip run's bit for bit on the CPU (the counts are exact and the
# same on any run), and to 1e-12 relative on the GPU (whose weight sums
# follow the order of its atomic adds, which differs from run to run, as
# the GPU tests allow); and, once per size, untimed, a pip count with every bit set
# (each pair weight 65 / (1 + 64) = 1 exactly, with 2 words) must give
# `weighted` equal to the raw counts in every bin. A failed check stops
# the script (exit status 1).
#
# Writes bench/results/pip-BACKEND.csv (or --csv): one row per size, count
# and weighting. Quick run on a small machine:
#   Rscript bench/pip.R 2e4 --threads=2 --reps=1
library(wtheta)
options(width = 200)
args <- commandArgs(trailingOnly = TRUE)
source(file.path("bench", "machine.R"))
opt <- function(name, default) bench_opt(args, name, default)
known <- c("backend", "devices", "threads", "reps", "words", "csv")
flags <- grep("^--", args, value = TRUE)
bad <- flags[!sub("^--([^=]*).*", "\\1", flags) %in% known]
if (length(bad)) {
  stop("unknown option ", bad[1], "; known: ",
       paste0("--", known, collapse = ", "), call. = FALSE)
}
whole <- function(x, what) {
  v <- suppressWarnings(as.numeric(x))
  if (!length(v) || anyNA(v) || any(v < 0) || any(v != round(v))) {
    stop(what, " takes whole numbers, not '", paste(x, collapse = ","), "'",
         call. = FALSE)
  }
  v
}
sizes <- grep("^--", args, value = TRUE, invert = TRUE)
if (!length(sizes)) sizes <- "1e5"
sizes <- whole(sizes, "a size (points per catalog)")
if (any(sizes < 2)) stop("a size is at least 2 points", call. = FALSE)
backend <- opt("backend", "cpu")
if (!backend %in% c("cpu", "cuda", "auto")) {
  stop("--backend is cpu, cuda or auto, not '", backend, "'", call. = FALSE)
}
devices <- opt("devices", NULL)
if (!is.null(devices)) {
  devices <- as.integer(whole(strsplit(devices, ",")[[1]], "--devices"))
}
threads <- as.integer(whole(opt("threads", wtheta_threads()), "--threads"))
if (threads < 1) stop("--threads is at least 1, not 0", call. = FALSE)
options(wtheta.threads = threads, wtheta.progress = FALSE)
reps <- as.integer(whole(opt("reps", 3), "--reps"))
if (reps < 1) stop("--reps is at least 1, not 0", call. = FALSE)
words <- as.integer(whole(opt("words", 2), "--words"))
if (words < 1) stop("--words is at least 1, not 0", call. = FALSE)
csv <- opt("csv", file.path("bench", "results",
                            paste0("pip-", backend, ".csv")))

# the machine
cat(bench_machine(backend, devices),
    sprintf(", %d threads, %d runs each, %d words (%d realisations)\n",
            threads, reps, words, 32L * words), sep = "")

bins <- theta_bins(2.5, 250, n = 20, log = TRUE, units = "arcmin")
box <- list(ra_range = c(0, 100), dec_range = c(-60, 5))
bit_names <- paste0("bits", seq_len(words))
add_weights <- function(x, seed) {
  x <- as.data.frame(x)
  set.seed(seed)
  for (nm in bit_names) x[[nm]] <- floor(stats::runif(nrow(x)) * 2^32)
  x$w <- stats::runif(nrow(x), 0.5, 1.5)
  x
}
count <- function(a, b, how) {
  args <- list(a, y = b, bins = bins, backend = backend, devices = devices,
               threads = threads, progress = FALSE)
  if (how == "weighted") args$weights <- "w"
  if (how == "pip") args$bitwise <- bit_names
  do.call(pair_counts, args)
}
fail <- function(...) stop(..., call. = FALSE)
same <- function(a, b) length(a) == length(b) && all(a == b)
# the GPU's weight sums follow the order of its atomic adds
sums_tol <- if (backend == "cpu") 0 else 1e-12
near <- function(a, b) {
  length(a) == length(b) && all(abs(a - b) <= sums_tol * pmax(abs(a), abs(b)))
}

# warm-up: one small count of each kind
small <- add_weights(simulate_catalog(2000, ra_range = box$ra_range,
                                      dec_range = box$dec_range, seed = 9), 9)
for (how in c("plain", "weighted", "pip")) invisible(count(small, NULL, how))

rows <- list()
verdicts <- character()
for (n in sizes) {
  A <- add_weights(simulate_catalog(n, ra_range = box$ra_range,
                                    dec_range = box$dec_range, sigma = 0.1,
                                    seed = 1), 3)
  B <- add_weights(random_catalog(n, ra_range = box$ra_range,
                                  dec_range = box$dec_range, seed = 2), 4)
  # every bit set: each pair weight is 1 exactly (untimed)
  ones <- A
  for (nm in bit_names) ones[[nm]] <- 2^32 - 1
  o <- count(ones, NULL, "pip")
  if (!same(o$weighted, o$counts)) {
    fail("n = ", n, ": with every bit set the PIP weighted counts differ ",
         "from the raw counts in bins ",
         paste(which(o$weighted != o$counts), collapse = ", "))
  }
  cat(sprintf("\nN = %s points a catalog\n", format(n, scientific = TRUE)))
  for (what in c("auto", "cross")) {
    b <- if (what == "cross") B
    ref <- NULL
    pip_ref <- NULL
    times <- list()
    for (how in c("plain", "weighted", "pip")) {
      secs <- numeric(reps)
      best <- NULL
      for (k in seq_len(reps)) {
        gc()
        t0 <- proc.time()[["elapsed"]]
        x <- count(A, b, how)
        secs[k] <- proc.time()[["elapsed"]] - t0
        label <- sprintf("%s %s (n = %g, run %d)", what, how, n, k)
        if (is.null(ref)) ref <- x
        if (!same(x$counts, ref$counts)) {
          fail(label, ": raw counts differ from the plain run's in bins ",
               paste(which(x$counts != ref$counts), collapse = ", "))
        }
        if (how == "pip") {
          if (is.null(pip_ref)) pip_ref <- x
          if (!near(x$weighted, pip_ref$weighted)) {
            fail(label, ": PIP weighted counts differ from the first run's")
          }
        }
        if (secs[k] == min(secs[seq_len(k)])) best <- x
      }
      tm <- c(min = min(secs), median = stats::median(secs))
      times[[how]] <- tm
      ratio <- tm / times$plain
      cat(sprintf(paste0("  %-5s %-8s min %8.3f s  median %8.3f s  count %8.3f",
                         " s  gpu %8.1f ms  %5.2fx plain (median %5.2fx)\n"),
                  what, how, tm[["min"]], tm[["median"]], best$elapsed,
                  if (is.null(best$gpu_ms)) NA_real_ else sum(best$gpu_ms),
                  ratio[["min"]], ratio[["median"]]))
      rows[[length(rows) + 1]] <- data.frame(
        n = n, count = what, weights = how, words = words,
        backend = best$backend[1], threads = threads, reps = reps,
        min_s = tm[["min"]], median_s = tm[["median"]],
        count_s = best$elapsed,
        gpu_ms = if (is.null(best$gpu_ms)) NA_real_ else sum(best$gpu_ms),
        ratio_min = ratio[["min"]], ratio_median = ratio[["median"]])
    }
    target <- if (identical(ref$backend[1], "cuda")) 2 else 3
    r <- times$pip[["min"]] / times$plain[["min"]]
    verdicts <- c(verdicts, sprintf(
      "N = %g, %s: pip %.2fx plain (min), target at most %gx on %s: %s",
      n, what, r, target, ref$backend[1], if (r <= target) "met" else
        "NOT met"))
  }
}
res <- do.call(rbind, rows)
cat("\n")
print(res, row.names = FALSE, digits = 3)
cat("\nchecks passed: raw counts equal the plain run's, PIP sums equal from",
    "run to run, every bit set gives weight 1 a pair\n")
cat(verdicts, sep = "\n")
dir.create(dirname(csv), showWarnings = FALSE, recursive = TRUE)
utils::write.csv(res, csv, row.names = FALSE)
cat("written:", csv, "\n")
