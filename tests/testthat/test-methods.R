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

test_that("plot draws results, error bars and models", {
  w <- small_result()
  sim <- simulate_catalog(600, n_clusters = 10, sigma = 0.3, seed = 21)
  pdf(NULL)
  on.exit(dev.off())
  expect_identical(plot(w), w)
  expect_no_error(plot(w, model = sim))
  expect_no_error(plot(w, model = function(t) 0.1 * exp(-t), log = "x"))
  expect_no_error(plot(fake_cross()))
  expect_no_error(plot(fake_cross(), errors = FALSE, main = "x"))
  expect_error(plot(w, model = 3), "`model` must be a function")
  # log-spaced bins give a log angle axis
  plot(w, model = sim)
  expect_true(par("xlog"))
  plot(fake_cross())
  expect_false(par("xlog"))
  expect_false(par("ylog"))
})

test_that("autoplot draws with ggplot2", {
  skip_if_not_installed("ggplot2")
  w <- small_result()
  sim <- simulate_catalog(600, n_clusters = 10, sigma = 0.3, seed = 21)
  p <- ggplot2::autoplot(w, model = sim)
  expect_s3_class(p, "ggplot")
  geoms <- vapply(p$layers, function(l) class(l$geom)[1], "")
  expect_identical(sum(geoms == "GeomLine"), 2L)     # measured and model
  expect_false("GeomErrorbar" %in% geoms)
  b <- ggplot2::ggplot_build(p)
  expect_identical(nrow(b$data[[2]]), sum(is.finite(w$w) & (w$w > 0 |
    !all(w$w[is.finite(w$w)] > 0))))
  p <- ggplot2::autoplot(fake_cross())
  geoms <- vapply(p$layers, function(l) class(l$geom)[1], "")
  expect_true("GeomErrorbar" %in% geoms)
  expect_true("GeomHline" %in% geoms)
  pdf(NULL)
  on.exit(dev.off())
  expect_no_error(print(p))
})
