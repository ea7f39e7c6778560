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
