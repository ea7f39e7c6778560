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
  expect_match(out[3], "errors: jackknife (16 patches); weighted counts",
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


# ---- issue 35: prints that say everything ----

test_that("a cross-correlation prints and summarises both samples' sizes", {
  sim <- simulate_catalog(300, seed = 1)
  ran <- random_catalog(400, like = sim, seed = 2)
  sim2 <- simulate_catalog(200, seed = 3)
  ran2 <- random_catalog(500, like = sim, seed = 4)
  w <- wtheta(sim, ran, theta_bins(0.1, 5, n = 5, log = TRUE), data2 = sim2,
              random2 = ran2, threads = 1, progress = FALSE)
  out <- capture.output(print(w))
  expect_identical(out[2], "  data 300 and 200, randoms 400 and 500 points")
  s <- summary(w)
  expect_identical(s$n_data, c(300L, 200L))
  expect_identical(s$n_random, c(400L, 500L))
  expect_true(any(grepl("data:     300 x 200 points; randoms: 400 x 500",
                        capture.output(print(s)), fixed = TRUE)))
  # a cross-correlation read from a file without the second sizes
  a <- w
  attr(a, "n_data2") <- NULL
  expect_match(capture.output(print(a))[2], "data 300 and ?, randoms",
               fixed = TRUE)
})

test_that("weighted counts print with their fractions, and are not called pairs", {
  sim <- simulate_catalog(300, seed = 1)
  ran <- random_catalog(400, like = sim, seed = 2)
  sim$wt <- seq(0.25, 1.75, length.out = 300)
  w <- wtheta(sim, ran, theta_bins(0.1, 5, n = 5, log = TRUE), weights = "wt",
              threads = 1, progress = FALSE)
  out <- capture.output(print(w))
  # the table read back: every weighted sum to 7 significant digits, not
  # rounded to whole numbers
  head <- grep("theta_lo theta_hi", out, fixed = TRUE)
  tab <- utils::read.table(text = out[head:(head + 5L)], header = TRUE)
  expect_false(any(w$DD == round(w$DD)))
  expect_equal(tab$DD, w$DD, tolerance = 5e-7)
  expect_equal(tab$DR, w$DR, tolerance = 5e-7)
  expect_true(all(abs(tab$DD - round(tab$DD)) > 0))
  s <- summary(w)
  expect_true(s$weighted)
  so <- capture.output(print(s))
  expect_false(any(grepl("pairs:", so, fixed = TRUE)))
  expect_true(any(grepl(paste0("weighted: DD ", format(sum(w$DD), big.mark = ",")),
                        so, fixed = TRUE)))
  expect_true(any(grepl("(sums of w_i w_j in the bins)", so, fixed = TRUE)))
  # unweighted: pairs, integers
  u <- summary(small_result())
  expect_false(u$weighted)
  expect_true(any(grepl("^  pairs:    DD ", capture.output(print(u)))))
})

test_that("print(tomo) says it is weighted and never 'none errors'; summary()", {
  sim <- simulate_catalog(300, seed = 1)
  sim2 <- simulate_catalog(200, seed = 3)
  ran <- random_catalog(400, like = sim, seed = 2)
  sim$wt <- seq(0.25, 1.75, length.out = 300)
  b <- theta_bins(0.1, 5, n = 5, log = TRUE)
  tomo <- wtheta_multi(list(a = sim, b = sim2), ran, b, weights = "wt",
                       error = "none", threads = 1, progress = FALSE)
  out <- capture.output(print(tomo))
  expect_match(out[2], "^Landy-Szalay; no errors; weighted counts; 6 counts")
  expect_false(any(grepl("none errors", out)))
  # so does the title of its plots
  expect_match(deparse1(wtheta:::multi_title(tomo)[[1L]]),
               "no errors; weighted counts", fixed = TRUE)
  s <- summary(tomo)
  expect_s3_class(s, "summary.wtheta_multi")
  expect_identical(s$samples, c("a", "b"))
  expect_identical(s$n_correlations, 3L)
  expect_identical(s$n_bins, 5L)
  expect_true(s$weighted)
  e <- attr(tomo, "entries")
  expect_identical(s$correlations$correlation, c("a-a", "a-b", "b-b"))
  expect_identical(s$correlations$n_data, c("300", "300 x 200", "200"))
  expect_identical(s$correlations$w_first, vapply(e, function(x) x$w[1], 0),
                   ignore_attr = TRUE)
  expect_identical(s$correlations$w_max, vapply(e, function(x) max(x$w), 0),
                   ignore_attr = TRUE)
  expect_true(all(is.na(s$correlations$median_rel_err)))
  so <- capture.output(print(s))
  expect_identical(so[1], paste0("Angular correlations of 2 samples (a, b), ",
                                 "Landy-Szalay estimator"))
  expect_true(any(grepl("errors:   no errors", so, fixed = TRUE)))
  expect_true(any(grepl("counts:   weighted (sums of w_i w_j)", so,
                        fixed = TRUE)))
  # jackknife: the joint covariance's size and relative errors
  pj <- untrusted_cov_ok(
    wtheta_multi(list(a = sim, b = sim2), ran, b, error = "jackknife",
                 n_patches = 4, seed = 2, threads = 1, progress = FALSE))
  sj <- summary(pj)
  expect_identical(sj$cov_dim, c(15L, 15L))
  ej <- attr(pj, "entries")[["a-a"]]
  expect_equal(sj$correlations$median_rel_err[1],
               stats::median(ej$w_err / abs(ej$w)))
  expect_match(capture.output(print(pj))[2],
               "jackknife errors (4 patches, seed 2, joint covariance)",
               fixed = TRUE)
  # read from a SACC file, which records neither sizes nor weighting
  skip_if_no_fits()
  f <- paste0(withr_tempfile(), ".fits")
  on.exit(unlink(f), add = TRUE)
  expect_message(write_wtheta(pj, f, format = "sacc"), "no `nz` given")
  sr <- summary(read_wtheta(f, format = "sacc"))
  expect_null(sr$weighted)
  expect_identical(sr$correlations$n_data, c("?", "?", "?"))
  expect_equal(sr$correlations$w_max, sj$correlations$w_max,
               tolerance = 1e-15)
  so <- capture.output(print(sr))
  expect_identical(so[1], "Angular correlations of 2 samples (a, b), unknown estimator")
  expect_true(any(grepl("counts:   weighting not recorded", so, fixed = TRUE)))
})

test_that("print() gives the seed of the patches or draws when recorded", {
  sim <- simulate_catalog(300, seed = 1)
  ran <- random_catalog(600, like = sim, seed = 2)
  b <- theta_bins(0.1, 2, n = 3, log = TRUE)
  run <- function(...) {
    wtheta(sim, ran, b, threads = 1, progress = FALSE,
           check_footprint = FALSE, ...)
  }
  # the end of the third line (the errors)
  ends <- function(w, text) {
    expect_true(endsWith(capture.output(print(w))[3], text))
  }
  ends(run(error = "jackknife", n_patches = 5),
       "errors: jackknife (5 patches, seed 1)")
  ends(run(error = "bootstrap", n_patches = 5, n_boot = 10, seed = 12),
       "errors: bootstrap (5 patches, seed 12)")
  # patches from sky_patches(): its seed; labels: none to give
  p <- sky_patches(ran, 5, seed = 9, threads = 1)
  ends(run(error = "jackknife", patches = p),
       "errors: jackknife (5 patches, seed 9)")
  lab <- list(data = rep(1:5, length.out = 300),
              random = rep(1:5, length.out = 600))
  ends(run(error = "jackknife", patches = lab),
       "errors: jackknife (5 patches)")
  # a result without n_patches still gives its seed
  f <- fake_cross()
  attr(f, "n_patches") <- NULL
  attr(f, "seed") <- 3L
  expect_match(capture.output(print(f))[3],
               "errors: jackknife (seed 3); weighted counts", fixed = TRUE)
})
