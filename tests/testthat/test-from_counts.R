# wtheta_from_counts(): counts kept give the w(theta) of wtheta(). The
# set-up is that of test-prepared.R (helper-prepared.R).

fx <- prepared_setup()
gal <- fx$gal
ran <- fx$ran
b <- fx$b

test_that("wtheta_from_counts() gives wtheta()'s result from its counts", {
  g2 <- random_sky(300, ra = c(0, 30), dec = c(-15, 15))
  r2 <- random_sky(700, ra = c(0, 30), dec = c(-15, 15))
  for (est in c("LS", "natural", "DP", "Hamilton")) {
    for (err in c("poisson", "jackknife", "bootstrap", "none")) {
      w <- wtheta(gal, ran, b, estimator = est, error = err, weights = "w",
                  n_patches = 5, seed = 3, n_boot = 30, threads = 1,
                  backend = "cpu", check_footprint = FALSE)
      p <- attr(w, "pair_counts")
      f <- wtheta_from_counts(p$DD, p$DR, p$RR, estimator = est,
                              error = err, n_boot = 30, seed = 3)
      expect_identical(strip_time(f), strip_time(w))
      wc <- wtheta(gal, ran, b, data2 = g2, random2 = r2, estimator = est,
                   error = err, n_patches = 5, seed = 3, n_boot = 30,
                   threads = 1, backend = "cpu", check_footprint = FALSE)
      p <- attr(wc, "pair_counts")
      f <- wtheta_from_counts(p$D1D2, p$D1R2, p$R1R2, p$R1D2,
                              estimator = est, error = err, n_boot = 30,
                              seed = 3)
      expect_identical(strip_time(f), strip_time(wc))
    }
  }
  # the natural estimator from DD and RR alone
  w <- wtheta(gal, ran, b, estimator = "natural", threads = 1,
              check_footprint = FALSE)
  p <- attr(w, "pair_counts")
  f <- wtheta_from_counts(p$DD, rr = p$RR, estimator = "natural")
  expect_identical(f$w, w$w)
  expect_identical(f$w, (p$DD$counts / p$DD$n_pairs) /
                     (p$RR$counts / p$RR$n_pairs) - 1)
  expect_false("DR" %in% names(f))
  # patches give jackknife errors by default
  rp <- prepare_catalog(ran, n_patches = 5, seed = 1, threads = 1)
  gp <- prepare_catalog(gal, patches = rp$patches, threads = 1)
  f <- wtheta_from_counts(pair_counts(gp, bins = b, threads = 1),
                          pair_counts(gp, rp, bins = b, threads = 1),
                          pair_counts(rp, bins = b, threads = 1))
  expect_identical(strip_time(f),
                   strip_time(wtheta(gp, rp, b, error = "jackknife",
                                     threads = 1, check_footprint = FALSE)))
})

test_that("wtheta_from_counts() refuses counts that do not agree", {
  dd <- pair_counts(gal, bins = b, threads = 1)
  dr <- pair_counts(gal, ran, bins = b, threads = 1)
  rr <- pair_counts(ran, bins = b, threads = 1)
  expect_error(wtheta_from_counts(dd, dr), "`rr` \\(RR\\) is needed by the LS")
  expect_error(wtheta_from_counts(dd, dr, pair_counts(ran, bins = b[-1],
                                                      threads = 1)),
               "`rr` has other bins than `dd`")
  expect_error(wtheta_from_counts(dd, dr, pair_counts(ran, bins = b,
                                                      self_pairs = TRUE,
                                                      threads = 1)),
               "different `self_pairs`")
  expect_error(wtheta_from_counts(pair_counts(gal, bins = b, weights = "w",
                                              threads = 1), dr, rr),
               "`dr` is unweighted but `dd` is weighted")
  expect_error(wtheta_from_counts(dd, dr, pair_counts(ran[-1, ], bins = b,
                                                      threads = 1)),
               "do not count the same random catalog")
  expect_error(wtheta_from_counts(dd, rr, rr), "`dr` \\(DR\\) must count cross")
  expect_error(wtheta_from_counts(dd, dr, pair_counts(ran, bins = b,
                                                      patches = "lab",
                                                      threads = 1)),
               "`rr` has other patches")
  expect_error(wtheta_from_counts(dd, dr, rr, error = "jackknife"),
               "needs counts with patches")
  expect_error(wtheta_from_counts(dd, dr, list()), "pair_counts object")
})

test_that("counts saved in one session give the same w(theta) in another", {
  w <- wtheta(gal, ran, b, error = "jackknife", weights = "w", n_patches = 5,
              seed = 2, threads = 1, backend = "cpu",
              check_footprint = FALSE)
  f_in <- tempfile(fileext = ".rds")
  f_out <- tempfile(fileext = ".rds")
  on.exit(unlink(c(f_in, f_out)))
  saveRDS(attr(w, "pair_counts"), f_in)
  res <- run_in_child_io(c(
    "library(wtheta)",
    sprintf("p <- readRDS(%s)", deparse(f_in)),
    sprintf("saveRDS(wtheta_from_counts(p$DD, p$DR, p$RR), %s)",
            deparse(f_out))))
  expect_identical(res$status, 0L)
  expect_identical(strip_time(readRDS(f_out)), strip_time(w))
})
