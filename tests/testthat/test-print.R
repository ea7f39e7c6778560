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
  # the angle axis is logarithmic; w has a value <= 0: linear w axis
  plot(w, model = sim)
  expect_true(par("xlog"))
  expect_false(par("ylog"))
  plot(fake_cross())
  expect_true(par("xlog"))
  expect_false(par("ylog"))
  plot(fake_cross(), log = "")
  expect_false(par("xlog"))
  expect_error(plot(w, log = "z"), "`log` must be")
  # an all-NA w gives an empty frame, not "need finite 'xlim' values"
  na <- w
  na$w <- NA_real_
  expect_identical(plot(na), na)
  na2 <- fake_cross()
  na2$w <- NA_real_
  expect_no_error(plot(na2))
  if (requireNamespace("ggplot2", quietly = TRUE)) {
    expect_no_error(print(ggplot2::autoplot(na2)))
  }
})

test_that("axes and style come from w, never from the errors", {
  f <- fake_cross()
  lay <- wtheta:::plot_layout(f)
  expect_identical(lay[c("x", "y", "style")],
                   list(x = "log", y = "linear", style = "points"))
  # every w > 0: log-log, whatever the errors (w - w_err < 0 here)
  pos <- f
  pos$w <- c(0.4, 0.05, 0.02)
  pos$w_err <- c(1, 1, 1)
  expect_identical(wtheta:::plot_layout(pos)$y, "log")
  pos$w_err <- c(0.001, 0.001, 0.001)
  expect_identical(wtheta:::plot_layout(pos)$y, "log")
  # w <= 0 somewhere and |w| over more than two decades: asinh, scale a
  # power of ten near the small |w|
  wide <- f
  wide$w <- c(20, 0.05, -0.02)
  lay <- wtheta:::plot_layout(wide)
  expect_identical(lay$y, "asinh")
  expect_identical(lay$asinh_scale, 0.01)
  expect_equal(wtheta:::y_transform(lay)(c(-0.02, 0, 20)),
               asinh(c(-2, 0, 2000)))
  expect_identical(wtheta:::plot_layout(wide, log = "y")$y, "log")
  expect_identical(wtheta:::plot_layout(wide, log = "x")$y, "asinh")
  # many bins: a line with a band, unless asked otherwise
  many <- structure(data.frame(theta_lo = 0:99 / 10, theta_hi = 1:100 / 10,
                               theta = (0:99 + 0.5) / 10, w = 1 / (1:100),
                               w_err = 0.01),
                    class = c("wtheta", "data.frame"))
  expect_identical(wtheta:::plot_layout(many)$style, "band")
  expect_identical(wtheta:::plot_layout(many, band = FALSE)$style, "points")
  expect_identical(wtheta:::plot_layout(f, band = TRUE)$style, "band")
  expect_identical(wtheta:::plot_layout(many)$y, "log")
  allna <- f
  allna$w <- NA_real_
  expect_identical(wtheta:::plot_layout(allna)$y, "linear")
  pdf(NULL)
  on.exit(dev.off())
  expect_no_error(plot(many))
  expect_no_error(plot(many, model = function(t) 1 / (10 * t)))
})

test_that("the title says estimator, auto/cross, sizes and errors", {
  expect_identical(wtheta:::plot_title(fake_cross()),
                   "Landy-Szalay estimate of w(theta)")
  expect_identical(wtheta:::plot_subtitle(fake_cross()),
                   paste0("cross-correlation; N_data = 100 x 120, ",
                          "N_random = 300 x 310; errors: jackknife ",
                          "(16 patches); weighted pairs"))
  expect_identical(wtheta:::plot_subtitle(small_result()),
                   "auto-correlation; N_data = 600, N_random = 900; errors: none")
  skip_if_not_installed("ggplot2")
  p <- ggplot2::autoplot(fake_cross())
  expect_identical(p$labels$title, "Landy-Szalay estimate of w(theta)")
  expect_match(p$labels$subtitle, "N_data = 100 x 120", fixed = TRUE)
})

test_that("[ keeps the covariance and bins that remain", {
  f <- fake_cross()
  attr(f, "cov") <- matrix(1:9, 3, 3)
  attr(f, "replicates") <- matrix(1:6, 3, 2)
  attr(f, "n_outside") <- c(D1D2 = 5)
  s <- f[2:3, ]
  expect_s3_class(s, "wtheta")
  expect_identical(nrow(s), 2L)
  expect_identical(attr(s, "cov"), matrix(1:9, 3, 3)[2:3, 2:3])
  expect_identical(attr(s, "replicates"), matrix(1:6, 3, 2)[2:3, ])
  expect_identical(attr(s, "edges"), c(1, 2, 3))
  expect_null(attr(s, "n_outside"))
  expect_identical(attr(s, "estimator"), "LS")
  expect_identical(s$w, f$w[2:3])
  expect_match(capture.output(print(s))[1],
               "2 bins from 1 to 3 deg, width 1", fixed = TRUE)
  expect_identical(dim(wtheta_cov(s)), c(2L, 2L))
  # logical rows, and bins that are no longer adjacent
  s <- f[c(TRUE, FALSE, TRUE), ]
  expect_identical(attr(s, "cov"), matrix(1:9, 3, 3)[c(1, 3), c(1, 3)])
  expect_null(attr(s, "edges"))
  expect_match(capture.output(print(s))[1], "2 bins, not adjacent, from 0 to 3",
               fixed = TRUE)
  # columns only: everything stays
  s <- f[, c("theta_lo", "theta_hi", "theta", "w")]
  expect_s3_class(s, "wtheta")
  expect_identical(attr(s, "cov"), matrix(1:9, 3, 3))
  expect_identical(attr(s, "n_outside"), c(D1D2 = 5))
  # reordered, repeated or without w: a plain data frame
  expect_identical(class(f[c(3, 1), ]), "data.frame")
  expect_identical(class(f[c(1, 1), ]), "data.frame")
  expect_identical(class(f[c("theta", "w_err")]), "data.frame")
  expect_identical(f[["w"]], c(0.4, 0.05, -0.02))
  expect_identical(f[, "w"], c(0.4, 0.05, -0.02))
  # a real result: the summary of the subset is that of its bins
  w <- small_result()
  s <- w[3:5, ]
  expect_equal(summary(s)$pairs, c(DD = sum(w$DD[3:5]), DR = sum(w$DR[3:5]),
                                   RR = sum(w$RR[3:5])))
})

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

test_that("[ on a simulated catalog keeps only what is still true", {
  sim <- simulate_catalog(300, seed = 4)
  expect_s3_class(sim, "wtheta_catalog")
  whole <- sim[, c("ra", "dec")]
  expect_identical(attr(whole, "footprint"), attr(sim, "footprint"))
  expect_identical(attr(whole, "model"), attr(sim, "model"))
  part <- sim[sim$ra < 5, ]
  expect_identical(class(part), "data.frame")
  expect_null(attr(part, "footprint"))
  expect_null(attr(part, "model"))
  expect_identical(part$ra, sim$ra[sim$ra < 5])
  expect_null(attr(sim["ra"], "footprint"))
  expect_identical(sim$ra[1:3], sim[1:3, "ra"])
  ran <- random_catalog(100, like = sim, seed = 5)
  expect_null(attr(ran[1:10, ], "footprint"))
  expect_identical(attr(ran[, c("ra", "dec")], "footprint"),
                   attr(sim, "footprint"))
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
