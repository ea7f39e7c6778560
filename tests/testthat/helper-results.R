# results for the tests of the methods (print, plot, `[`): a small real
# wtheta() result and a hand-made cross result
small_result <- function() {
  sim <- simulate_catalog(600, n_clusters = 10, sigma = 0.3, seed = 21)
  ran <- random_catalog(900, like = sim, seed = 22)
  wtheta(sim, ran, theta_bins(0.05, 5, n = 12, log = TRUE), threads = 1,
         backend = "cpu", progress = FALSE, error = "none")
}

# a result as the coming wtheta() variants make them: cross counts, w_err,
# some attributes missing
fake_cross <- function() {
  th <- c(0.5, 1.5, 2.5)
  structure(data.frame(theta_lo = th - 0.5, theta_hi = th + 0.5, theta = th,
                       D1D2 = c(10, 20, 30), D1R2 = c(8, 19, 31),
                       R1D2 = c(9, 21, 29), R1R2 = c(7, 20, 30),
                       w = c(0.4, 0.05, -0.02), w_err = c(0.1, 0.04, 0.03)),
            class = c("wtheta", "data.frame"), n_data = c(100, 120),
            n_random = c(300, 310), estimator = "LS", type = "cross",
            error = "jackknife", n_patches = 16, cov = diag(3) * 0.01,
            weighted = TRUE, edges = 0:3)
}
