# Is a call on more GPUs ever slower than on fewer (issue 34)? Warm
# pair_counts() of prepared catalogs by size and number of devices, and
# the classic warm wtheta() on each device set.
#   Rscript bench/devices.R [DATA_DIR] [SIZES]
# DATA_DIR (default ../shared/data) holds the two reference catalogs;
# SIZES (default "1e3,1e4,1e5,1e6,1e7") the points of each auto count:
# full sky ("auto-sky", seed 3) and the classic quarter-sphere footprint
# ra, dec in [0, 90] ("auto-classic", seed 4), 20 log bins 0.01-10
# degrees. Device sets: the first device, the first two, the first four
# (as many as there are). Each row: minimum and median milliseconds of
# 5 warm calls (3 from 3 x 10^6 points), kernel milliseconds per device
# (gpu_ms / devices) and grid planning milliseconds. Then the classic
# warm wtheta() (the reference catalogs, 360 bins of 0.25 degree, self
# pairs, prepared catalogs, no footprint check), min and median of 9.
library(wtheta)
options(wtheta.progress = FALSE)
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args) >= 1) args[1] else file.path("..", "shared", "data")
sizes <- if (length(args) >= 2) as.numeric(strsplit(args[2], ",")[[1]]) else
  c(1e3, 1e4, 1e5, 1e6, 1e7)
be <- wtheta_backends()
gpu <- be$device[be$backend == "cuda" & be$available]
if (!length(gpu)) stop("this benchmark needs a usable CUDA GPU")
devsets <- unique(lapply(c(1, 2, 4), function(k) gpu[seq_len(min(k, length(gpu)))]))
bins <- theta_bins(0.01, 10, n = 20, log = TRUE)
timed <- function(f, n) {
  f()
  x <- vapply(seq_len(n), function(i) system.time(f())[["elapsed"]], 0)
  c(min(x), stats::median(x))
}
res <- list()
for (n in sizes) {
  X <- prepare_catalog(random_catalog(n, ra_range = c(0, 360),
                                      dec_range = c(-90, 90), seed = 3))
  Y <- prepare_catalog(random_catalog(n, ra_range = c(0, 90),
                                      dec_range = c(0, 90), seed = 4))
  for (case in c("auto-sky", "auto-classic")) for (d in devsets) {
    cat0 <- if (case == "auto-sky") X else Y
    f <- function() pair_counts(cat0, bins = bins, backend = "cuda",
                                devices = d)
    tt <- timed(f, if (n >= 3e6) 3 else 5)
    p <- f()
    res[[length(res) + 1]] <- data.frame(
      n = n, case = case, devices = length(d), min_ms = 1000 * tt[1],
      median_ms = 1000 * tt[2], gpu_ms_per_device = p$gpu_ms / length(d),
      plan_ms = 1000 * p$grid_plan_s)
  }
}
print(do.call(rbind, res), row.names = FALSE, digits = 4)
D <- read_catalog(file.path(dir, "data_100k_arcmin.txt"), units = "arcmin")
R <- read_catalog(file.path(dir, "flat_100k_arcmin.txt"), units = "arcmin")
b2 <- theta_bins(0, 90, width = 0.25)
pD <- prepare_catalog(D)
pR <- prepare_catalog(R)
for (d in devsets) {
  tt <- timed(function() wtheta(pD, pR, b2, self_pairs = TRUE,
                                backend = "cuda", devices = d,
                                error = "none", check_footprint = FALSE), 9)
  cat(sprintf("classic warm wtheta(), %d device(s): min %.1f ms, median %.1f ms\n",
              length(d), 1000 * tt[1], 1000 * tt[2]))
}
