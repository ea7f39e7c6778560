test_that("wtheta_cov is a classed matrix that plots its correlations", {
  sim <- simulate_catalog(600, n_clusters = 10, sigma = 0.3, seed = 21)
  ran <- random_catalog(900, like = sim, seed = 22)
  w <- wtheta(sim, ran, theta_bins(0.05, 5, n = 6, log = TRUE), threads = 1,
              error = "jackknife", n_patches = 8, seed = 1, progress = FALSE)
  cv <- wtheta_cov(w)
  expect_s3_class(cv, "wtheta_cov")
  expect_true(is.matrix(cv))
  expect_identical(attr(cv, "edges"), attr(w, "edges"))
  expect_identical(attr(cv, "error"), "jackknife")
  expect_identical(as.matrix(cv), attr(w, "cov"))
  expect_identical(cv[2:3, 2:3], attr(w, "cov")[2:3, 2:3])
  expect_match(capture.output(print(cv))[1], "6 x 6 covariance", fixed = TRUE)
  pdf(NULL)
  on.exit(dev.off())
  r <- plot(cv)
  expect_equal(unname(r), unname(stats::cov2cor(attr(w, "cov"))))
  # a bin without variance is grey, not an error
  attr(w, "cov")[1, ] <- attr(w, "cov")[, 1] <- 0
  r <- plot(wtheta_cov(w))
  expect_true(all(is.na(r[1, ])))
})
