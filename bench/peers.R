# wtheta's side of bench/peers.sh (the TreeCorr side-by-side of issue 33).
#   Rscript bench/peers.R OUT_DIR [DATA_DIR] [THREADS] [REPS] [N]
# The two reference catalogs (data_100k_arcmin.txt, flat_100k_arcmin.txt in
# DATA_DIR, default ../shared/data; their first N rows each, default all),
# 20 log bins from 0.01 to 10 degrees, DD + DR + RR, on THREADS threads
# (default 2; options(wtheta.threads) too, so the footprint check and the
# patches' labels use them), REPS timed runs of each call (default 3) after
# one untimed warm-up. The calls, made as a user makes them on data frames:
#   plain          wtheta(D, R, bins, error = "none")
#   plain_nocheck  the same with check_footprint = FALSE (TreeCorr checks
#                  nothing of the kind)
#   jk20           wtheta(..., error = "jackknife", patches = P)
#   jk20_nocheck   the same with check_footprint = FALSE
# P = sky_patches(R, n_patches = 20, seed = 1), made once beforehand (not
# timed). Every run's DD, DR and RR must equal the first plain run's in
# every bin (the script stops otherwise). Writes to OUT_DIR:
#   wtheta-times.csv   call, min_s, median_s, and the fastest run's counts'
#                      own seconds (the sum of the pair_counts' elapsed)
#   wtheta-counts.csv  theta_lo, theta_hi (degrees), DD, DR, RR
#   centres.txt        the 20 patch centres as unit vectors "x y z", which
#                      bench/treecorr.py gives TreeCorr as patch_centers
#                      (nearest by chord = largest dot product, as here)
#   machine.txt        the machine line
library(wtheta)
args <- commandArgs(trailingOnly = TRUE)
arg <- function(k, default) if (length(args) >= k) args[k] else default
out <- arg(1, NA)
if (is.na(out)) stop("usage: Rscript bench/peers.R OUT_DIR [DATA_DIR] ",
                     "[THREADS] [REPS] [N]", call. = FALSE)
dir <- arg(2, file.path("..", "shared", "data"))
threads <- as.integer(arg(3, 2))
reps <- as.integer(arg(4, 3))
n <- as.numeric(arg(5, Inf))
options(wtheta.threads = threads, wtheta.progress = FALSE)
dir.create(out, showWarnings = FALSE, recursive = TRUE)

D <- read_catalog(file.path(dir, "data_100k_arcmin.txt"), units = "arcmin")
R <- read_catalog(file.path(dir, "flat_100k_arcmin.txt"), units = "arcmin")
D <- D[seq_len(min(n, nrow(D))), ]
R <- R[seq_len(min(n, nrow(R))), ]
bins <- theta_bins(0.01, 10, n = 20, log = TRUE)
P <- sky_patches(R, n_patches = 20, seed = 1)
cpu <- sub(".*: ", "", grep("^model name", readLines("/proc/cpuinfo"),
                            value = TRUE)[1])
load <- tryCatch(paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3],
                       collapse = " "), error = function(e) "?")
machine <- sprintf(paste0("host: %s (%d cores), load %s; wtheta %s, %s; ",
                          "%d threads; %s data x %s randoms; %d runs each"),
                   cpu, parallel::detectCores(), load,
                   packageVersion("wtheta"), R.version.string, threads,
                   format(nrow(D), big.mark = ","),
                   format(nrow(R), big.mark = ","), reps)
cat(machine, "\n")
writeLines(machine, file.path(out, "machine.txt"))
writeLines(sprintf("%.17g %.17g %.17g", attr(P, "centres")[, 1],
                   attr(P, "centres")[, 2], attr(P, "centres")[, 3]),
           file.path(out, "centres.txt"))

call <- function(...) suppressWarnings(
  wtheta(D, R, bins, backend = "cpu", threads = threads, progress = FALSE,
         ...))
calls <- list(
  plain = function() call(error = "none"),
  plain_nocheck = function() call(error = "none", check_footprint = FALSE),
  jk20 = function() call(error = "jackknife", patches = P),
  jk20_nocheck = function() call(error = "jackknife", patches = P,
                                 check_footprint = FALSE))
invisible(call(error = "none"))                 # warm-up: the thread pool
ref <- NULL
rows <- list()
for (nm in names(calls)) {
  secs <- numeric(reps)
  best <- NULL
  for (k in seq_len(reps)) {
    gc()
    t0 <- proc.time()[["elapsed"]]
    x <- calls[[nm]]()
    secs[k] <- proc.time()[["elapsed"]] - t0
    if (is.null(ref)) ref <- x
    for (cn in c("DD", "DR", "RR")) if (!all(x[[cn]] == ref[[cn]])) {
      stop(nm, " run ", k, ": ", cn, " differs from the plain call's in ",
           "bins ", paste(which(x[[cn]] != ref[[cn]]), collapse = ", "),
           call. = FALSE)
    }
    if (secs[k] == min(secs[seq_len(k)])) best <- x
  }
  counts_s <- sum(vapply(attr(best, "pair_counts"), `[[`, 0, "elapsed"))
  rows[[nm]] <- data.frame(call = nm, min_s = min(secs),
                           median_s = stats::median(secs),
                           counts_s = counts_s)
}
times <- do.call(rbind, rows)
print(times, row.names = FALSE, digits = 3)
utils::write.csv(times, file.path(out, "wtheta-times.csv"), row.names = FALSE)
utils::write.csv(data.frame(theta_lo = ref$theta_lo, theta_hi = ref$theta_hi,
                            DD = ref$DD, DR = ref$DR, RR = ref$RR),
                 file.path(out, "wtheta-counts.csv"), row.names = FALSE)
