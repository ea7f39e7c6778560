# what test-prepared.R and test-from_counts.R share: results without what
# depends on the clock, and the catalogs and bins both count

# a result without what depends on the clock
strip_time <- function(x) {
  attr(x, "elapsed") <- NULL
  attr(x, "footprint_check") <- NULL
  pcs <- attr(x, "pair_counts")
  if (!is.null(pcs)) {
    attr(x, "pair_counts") <- lapply(pcs, strip_count)
  }
  x
}
# times: elapsed, grid planning, and GPU kernels (NA on the CPU, measured
# by CUDA events on a GPU)
strip_count <- function(pc) {
  pc$elapsed <- NULL
  pc$grid_plan_s <- NULL
  pc$gpu_ms <- NULL
  pc$gpu_idle_s <- NULL
  pc
}

# the catalogs and bins of both files: weighted galaxies with patch labels,
# randoms with labels (one more than the galaxies have), six log bins
prepared_setup <- function() {
  set.seed(11)
  gal <- random_sky(400, ra = c(0, 30), dec = c(-15, 15))
  gal$w <- runif(400, 0.5, 2)
  gal$lab <- sample(c(3, 7, 9), 400, replace = TRUE)
  ran <- random_sky(900, ra = c(0, 30), dec = c(-15, 15))
  ran$lab <- sample(c(3, 5, 7, 9), 900, replace = TRUE)
  b <- theta_bins(0.5, 20, n = 6, log = TRUE)
  list(gal = gal, ran = ran, b = b)
}
