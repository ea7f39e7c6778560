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

test_that("ra and dec columns are matched ignoring case, as read_catalog() does", {
  sim <- simulate_catalog(200, seed = 5)
  ran <- random_catalog(300, like = sim, seed = 6)
  b <- theta_bins(0.1, 5, n = 4, log = TRUE)
  want <- wtheta(sim, ran, b, threads = 1, progress = FALSE)
  up <- sim
  names(up) <- c("RA", "Dec")
  got <- wtheta(up, ran, b, threads = 1, progress = FALSE)
  expect_identical(got$DD, want$DD)
  expect_identical(got$w, want$w)
  expect_identical(pair_counts(up, bins = b, threads = 1,
                               progress = FALSE)$counts,
                   pair_counts(sim, bins = b, threads = 1,
                               progress = FALSE)$counts)
  # columns = given in another case
  expect_identical(wtheta(sim, ran, b, columns = c("RA", "DEC"), threads = 1,
                          progress = FALSE)$DD, want$DD)
  # a matrix too
  expect_identical(wtheta(as.matrix(up), ran, b, threads = 1,
                          progress = FALSE)$DD, want$DD)
  # ra and RA both: which one is meant cannot be known
  both <- cbind(up, ra = sim$ra + 1)
  expect_error(wtheta(both, ran, b),
               "`data` has 2 columns named \"ra\", ignoring case (columns 1 and 3: RA, ra)",
               fixed = TRUE)
  expect_error(wtheta(data.frame(x = 1, y = 2), ran, b),
               "`data` has no column \"ra\" (its columns: x, y; names are matched ignoring case)",
               fixed = TRUE)
  expect_error(wtheta(sim, ran, b, columns = c("ra", "RA")),
               "`columns` must be two distinct column names")
})
