# One GPU against all of them on brute-force counts (no grid) that take
# seconds: wtheta() of N x N uniform points on the classic footprint (ra,
# dec in [0, 90]), 360 bins of 0.25 degree, DD + DR + RR, error = "none".
#   Rscript bench/multi-gpu.R [N ...]        # default 1e6 2e6
# Reports the whole call (minimum and median of 3 warm runs) and the GPU
# kernel time per device, and checks that the histograms are identical.
# Writes bench/results/multi-gpu.csv.
library(wtheta)
args <- commandArgs(trailingOnly = TRUE)
sizes <- if (length(args)) as.numeric(args) else c(1e6, 2e6)
be <- wtheta_backends()
gpu <- be[be$backend == "cuda" & be$available, ]
if (nrow(gpu) < 2) stop("this benchmark needs at least two usable GPUs")
bins <- theta_bins(0, 90, width = 0.25)
res <- list()
for (n in sizes) {
  D <- random_catalog(n, ra_range = c(0, 90), dec_range = c(0, 90), seed = 1)
  R <- random_catalog(n, ra_range = c(0, 90), dec_range = c(0, 90), seed = 2)
  ref <- NULL
  for (dev in list(gpu$device[1], gpu$device)) {
    one <- function() {
      t0 <- proc.time()[["elapsed"]]
      w <- wtheta(D, R, bins, backend = "cuda", devices = dev, error = "none",
                  progress = FALSE)
      list(s = proc.time()[["elapsed"]] - t0, w = w)
    }
    one()                                                # warm-up
    runs <- lapply(1:3, function(i) one())
    s <- vapply(runs, `[[`, 0, "s")
    w <- runs[[1]]$w
    kern <- sum(vapply(attr(w, "pair_counts"), `[[`, 0, "gpu_ms")) /
      length(dev) / 1000
    if (is.null(ref)) ref <- w else
      stopifnot(identical(ref$DD, w$DD), identical(ref$DR, w$DR),
                identical(ref$RR, w$RR))
    res[[length(res) + 1]] <- data.frame(n = n, gpus = length(dev),
                                         call_s_min = min(s),
                                         call_s_median = stats::median(s),
                                         kernel_s_per_gpu = kern)
  }
}
res <- do.call(rbind, res)
res$speedup <- ave(res$call_s_median, res$n, FUN = function(x) x[1] / x)
cat(sprintf("%s; %d GPUs\n", gpu$name[1], nrow(gpu)))
print(res, row.names = FALSE, digits = 4)
utils::write.csv(res, file.path("bench", "results", "multi-gpu.csv"),
                 row.names = FALSE)
