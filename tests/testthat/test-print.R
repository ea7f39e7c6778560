test_that("print shows sizes, estimator, convention, backend and bins", {
  w <- small_result()
  out <- capture.output(res <- print(w, n = 4))
  expect_identical(res, w)
  expect_match(out[1], "auto-correlation, Landy-Szalay; 12 bins from 0.05 to 5 deg, log-spaced",
               fixed = TRUE)
  expect_match(out[2], "data 600, randoms 900 points", fixed = TRUE)
  expect_match(out[3], "unordered pairs, no self pairs", fixed = TRUE)
  expect_match(out[3], "errors: none", fixed = TRUE)
  expect_match(out[4], "backend: cpu (1 thread)", fixed = TRUE)
  expect_true(any(grepl("theta_lo theta_hi", out)))
  expect_match(out[length(out)], "8 more bins", fixed = TRUE)
  # the first bin's values are shown
  expect_true(any(grepl(format(w$DD[1]), out, fixed = TRUE)))
  expect_length(grep("^ +[0-9]", out), 4L)

  f <- fake_cross()
  out <- capture.output(print(f))
  expect_match(out[1], "cross-correlation", fixed = TRUE)
  expect_match(out[2], "data 100 and 120, randoms 300 and 310", fixed = TRUE)
  expect_match(out[3], "errors: jackknife (16 patches); weighted pairs",
               fixed = TRUE)
  expect_match(out[4], "backend not recorded", fixed = TRUE)
  expect_true(any(grepl("D1D2", out)) && any(grepl("w_err", out)))
})

test_that("summary gives the headline numbers", {
  w <- small_result()
  s <- summary(w)
  expect_s3_class(s, "summary.wtheta")
  expect_identical(s$n_bins, 12L)
  expect_equal(s$pairs, c(DD = sum(w$DD), DR = sum(w$DR), RR = sum(w$RR)))
  ok <- is.finite(w$w)
  expect_identical(s$w_max, max(w$w[ok]))
  expect_identical(s$theta_at_max, w$theta[ok][which.max(w$w[ok])])
  expect_identical(s$w_first, w$w[which(ok)[1]])
  expect_true(is.na(s$median_rel_err))
  out <- capture.output(print(s))
  expect_match(out[1], "Angular auto-correlation, Landy-Szalay", fixed = TRUE)
  expect_true(any(grepl("backend: cpu", out, fixed = TRUE)))

  s <- summary(fake_cross())
  expect_identical(s$type, "cross")
  expect_identical(s$theta_zero, 2.5)
  expect_equal(s$median_rel_err, median(c(0.1 / 0.4, 0.04 / 0.05, 0.03 / 0.02)))
  expect_identical(names(s$pairs), c("D1D2", "D1R2", "R1D2", "R1R2"))
  expect_no_error(capture.output(print(s)))
})

test_that("as.data.frame keeps every column and drops the rest", {
  f <- fake_cross()
  d <- as.data.frame(f)
  expect_identical(class(d), "data.frame")
  expect_identical(names(d), names(f))
  expect_null(attr(d, "cov"))
  expect_identical(d$w_err, f$w_err)
  expect_identical(dim(as.data.frame(small_result())), c(12L, 7L))
})

