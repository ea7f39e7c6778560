# Validation by simulation: many realisations of a stationary Thomas
# process whose w(theta) is known (model_wtheta()). The mean estimate must
# match the model, and the jackknife errors the scatter between
# realisations.

bin_model <- function(sim, lo, hi) {
  # the model averaged over the pairs of each bin (pairs ~ theta d theta)
  vapply(seq_along(lo), function(k) {
    t <- seq(lo[k], hi[k], length.out = 201)
    m <- model_wtheta(sim, t, integral_constraint = TRUE)
    sum(m * t) / sum(t)
  }, 0)
}

test_that("jackknife errors match the scatter of realisations, mean w the model", {
  n_real <- 30
  e <- theta_bins(0.15, 3, n = 6, log = TRUE)
  res <- lapply(seq_len(n_real), function(i) {
    sim <- simulate_catalog(1500, ra_range = c(0, 30), dec_range = c(-15, 15),
                            n_clusters = 40, cluster_fraction = 0.5,
                            sigma = 0.4, fixed_n = FALSE, seed = 1000 + i)
    ran <- random_catalog(3000, like = sim, seed = 2000 + i)
    w <- wtheta(sim, ran, e, threads = test_threads(), backend = "cpu",
                error = "jackknife", n_patches = 9, seed = i)
    list(w = w$w, err = w$w_err,
         model = bin_model(sim, w$theta_lo, w$theta_hi))
  })
  w <- sapply(res, `[[`, "w")
  err <- sapply(res, `[[`, "err")
  model <- res[[1L]]$model
  scatter <- apply(w, 1, stats::sd)
  # the mean estimate agrees with the model within its own uncertainty
  z <- (rowMeans(w) - model) / (scatter / sqrt(n_real))
  expect_true(all(abs(z) < 4), info = paste(round(z, 2), collapse = " "))
  # the signal is real: w is well above zero at small angles
  expect_true(rowMeans(w)[1] > 10 * scatter[1] / sqrt(n_real))
  # the mean jackknife error matches the scatter: the scatter's own
  # standard error is about 13% for 30 realisations, the jackknife's bias
  # with 9 patches a little more
  ratio <- rowMeans(err) / scatter
  expect_true(all(ratio > 0.6 & ratio < 1.6),
              info = paste(round(ratio, 2), collapse = " "))
})
