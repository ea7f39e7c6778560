# Kernel time of one cross count in either order of its catalogs (issue
# 34): D x R and R x D, 10^7 randoms R against galaxies D of several sizes,
# on the survey workload's box (bench/survey.R: ra 0..100, dec -60..5
# degrees; Thomas galaxies, sigma 0.1; 20 log bins 2.5-250 arcmin). Since
# 6bd39aa the dispatcher counts a GPU cross count with its larger catalog
# first (gpu_larger_first() in src/core/count.c), so both orders take the
# same kernel time; before, D x R took up to 8.6x R x D's.
#
#   Rscript bench/orientation.R [--randoms=1e7] [--sizes=1e6,1.67e5,3e4]
#     [--backend=cuda] [--reps=2]
#
# Prints, for each size, the GPU kernel time (gpu_ms, the last of --reps
# runs of each order after the first) and the whole count's seconds of
# both orders, and whether their counts are identical (they must be: the
# script exits 1 otherwise). On the CPU gpu_ms is NA and only the seconds
# compare.
suppressPackageStartupMessages(library(wtheta))
options(wtheta.progress = FALSE)
`%||%` <- function(a, b) if (is.null(a)) b else a
arg <- function(name, default) {
  a <- grep(paste0("^--", name, "="), commandArgs(TRUE), value = TRUE)
  if (length(a)) sub(paste0("^--", name, "="), "", a[length(a)]) else default
}
M <- as.numeric(arg("randoms", "1e7"))
sizes <- as.numeric(strsplit(arg("sizes", "1e6,1.67e5,3e4"), ",")[[1]])
backend <- arg("backend", "cuda")
reps <- as.integer(arg("reps", "2"))
bins <- theta_bins(2.5, 250, n = 20, log = TRUE, units = "arcmin")
R <- random_catalog(M, ra_range = c(0, 100), dec_range = c(-60, 5), seed = 2)
ok <- TRUE
for (n in sizes) {
  D <- simulate_catalog(n, ra_range = c(0, 100), dec_range = c(-60, 5),
                        sigma = 0.1, seed = 1)
  for (i in seq_len(reps)) {
    a <- pair_counts(D, R, bins, backend = backend)
    b <- pair_counts(R, D, bins, backend = backend)
  }
  same <- identical(a$counts, b$counts)
  ok <- ok && same
  cat(sprintf(paste0("D = %-8g D x R: gpu_ms %7.1f, %.3f s  |  R x D: ",
                     "gpu_ms %7.1f, %.3f s  |  counts identical: %s\n"),
              n, a$gpu_ms %||% NA_real_, a$elapsed,
              b$gpu_ms %||% NA_real_, b$elapsed, same))
}
if (!ok) quit(status = 1)
