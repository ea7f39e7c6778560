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
                   expression(bold("Landy-Szalay" ~ "estimate of" ~
                                     w(theta))))
  expect_identical(wtheta:::plot_subtitle(fake_cross()),
                   paste0("cross-correlation; 100 x 120 data, 300 x 310 ",
                          "random points; jackknife errors (16 patches); ",
                          "weighted counts"))
  expect_identical(wtheta:::plot_subtitle(small_result()),
                   "auto-correlation; 600 data, 900 random points; no errors")
  skip_if_not_installed("ggplot2")
  p <- ggplot2::autoplot(fake_cross())
  expect_identical(p$labels$title, wtheta:::plot_title(fake_cross()))
  expect_match(p$labels$subtitle, "100 x 120 data", fixed = TRUE)
})

# a cross result with long sizes: the subtitle that overflowed 480 px
long_cross <- function() {
  f <- fake_cross()
  attr(f, "n_data") <- c(1234567, 2345678)
  attr(f, "n_random") <- c(31234567, 32345678)
  attr(f, "error") <- "bootstrap"
  attr(f, "n_patches") <- 160
  f
}

# the width of a reference line on a png() device: 4.71 inches with the
# sans-serif fonts of a Debian desktop (fontconfig's default), 6.67 on a
# machine with no fonts at all, where Cairo falls back to wider metrics
sans_width <- function() {
  png(tempfile(fileext = ".png"), width = 480, height = 360)
  on.exit(dev.off())
  strwidth("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ 0123456789", units = "inches")
}

test_that("titles and subtitles fit the device at 480 and 1200 pixels", {
  skip_if(abs(sans_width() - 4.71) > 0.3,
          "this machine's fonts are not the sans-serif ones the widths assume")
  f <- long_cross()
  one <- wtheta:::plot_subtitle(f)
  for (px in c(480, 1200)) {
    png(tempfile(fileext = ".png"), width = px, height = px * 0.75)
    plot(f)
    pin <- par("pin")[1L]
    sub <- wtheta:::subtitle_lines(f, pin)
    # every line of the subtitle fits the plot region's width; the lines
    # hold the whole subtitle
    expect_true(all(strwidth(sub, units = "inches", cex = 0.8) <= pin))
    expect_identical(paste(sub, collapse = " "), one)
    expect_true(strwidth(wtheta:::plot_title(f), units = "inches",
                         cex = par("cex.main")) <= pin)
    if (px == 480) {
      # one line would run past the edge of a 480-pixel device
      expect_gt(strwidth(one, units = "inches", cex = 0.8), pin)
      expect_gt(length(sub), 1L)
    } else {
      expect_length(sub, 1L)
    }
    dev.off()
  }
  # autoplot(): lines of at most 50 characters, which fit at 480 pixels
  # in ggplot2's 11-point subtitle (6.67 inches less the margins)
  gs <- strsplit(wtheta:::gg_subtitle(f), "\n")[[1L]]
  expect_true(all(nchar(gs) <= 50))
  expect_identical(paste(gs, collapse = " "), one)
  expect_gt(length(gs), 1L)
  png(tempfile(fileext = ".png"), width = 480, height = 360)
  expect_true(all(strwidth(gs, units = "inches", cex = 11 / 12) <
                    480 / 72 - 0.5))
  dev.off()
})

test_that("the asinh axis has ticks near its ends and below 0", {
  # w from -0.006 to 6.5, s = 0.001: a tick above 1 and one below 0
  t <- wtheta:::asinh_ticks(0.001, c(-0.006, 6.5))
  expect_identical(t, c(-0.005, 0, 0.01, 0.1, 1, 5))
  # ticks are at least an eighth of the axis apart in asinh units
  a <- asinh(t / 0.001)
  expect_true(all(diff(a) >= diff(range(asinh(c(-0.006, 6.5) / 0.001))) / 8))
  # a side with values but no 1-2-5 tick far enough from 0 gets the round
  # number inside its end
  expect_identical(wtheta:::asinh_ticks(0.01, c(-0.009, 0.8)),
                   c(-0.009, 0, 0.01, 0.1, 0.5))
  f <- fake_cross()
  f$w <- c(6.5, 0.002, -0.006)
  f$w_err <- c(0.5, 0.001, 0.001)
  pd <- wtheta:::plot_data(f, NULL, NULL, TRUE, NULL)
  expect_identical(pd$lay$y, "asinh")
  expect_true(any(pd$ticks < 0))
  expect_true(any(pd$ticks >= 1))
  expect_identical(wtheta:::format_ticks(c(-0.005, 0, 0.1, 20)),
                   c("-0.005", "0", "0.1", "20"))
})

test_that("log = \"xy\" draws negative w as open symbols at |w|", {
  f <- fake_cross()
  f$w <- c(0.4, -0.05, 0.02)
  f$theta <- c(0.5, 1.5, 2.5)
  pd <- wtheta:::plot_data(f, NULL, "xy", TRUE, NULL)
  # every bin is drawn; the negative one at |w|, open
  expect_identical(pd$d$theta, f$theta)
  expect_identical(pd$d$w, c(0.4, 0.05, 0.02))
  expect_identical(pd$d$open, c(FALSE, TRUE, FALSE))
  # the line joins filled points only, never across the open one
  path <- wtheta:::line_path(pd$d)
  expect_identical(path$x, c(0.5, NA, 2.5))
  # a bin without w breaks the line too, and the theta range is every
  # bin's
  g <- fake_cross()
  g$w <- c(0.4, NA, 0.02)
  pg <- wtheta:::plot_data(g, NULL, "xy", TRUE, NULL)
  expect_identical(wtheta:::line_path(pg$d)$x, c(0.5, NA, 2.5))
  h <- fake_cross()
  h$w <- c(0.4, 0.05, -0.02)
  expect_identical(wtheta:::plot_data(h, NULL, "xy", TRUE, NULL)$xlim,
                   c(0.5, 2.5))
  # the error of an open point is about |w|; a lower end <= 0 is NA
  expect_equal(c(pd$d$lo[2L], pd$d$hi[2L]), c(0.05 - 0.04, 0.05 + 0.04))
  expect_true(is.na(pd$d$lo[3L]))
  pdf(NULL)
  on.exit(dev.off())
  plot(f, log = "xy")
  expect_true(par("ylog"))
  expect_equal(10^par("usr")[1:2], c(0.5, 2.5) * exp(c(-1, 1) * 0.04 *
                                                       log(5)), tolerance = 1e-6)
  skip_if_not_installed("ggplot2")
  p <- ggplot2::autoplot(f, log = "xy")
  b <- ggplot2::ggplot_build(p)
  shapes <- unlist(lapply(b$data, function(l) l$shape))
  expect_identical(sort(unique(shapes)), c(19, 21))
  expect_identical(sum(shapes == 21), 1L)
})

test_that("theta = \"theta_mean\" draws the pairs' mean separation", {
  f <- fake_cross()
  expect_error(plot(f, theta = "theta_mean"), "mean_theta = TRUE")
  expect_error(plot(f, theta = "mean"), "`theta` must be")
  f$theta_mean <- c(0.6, 1.4, 2.7)
  pd <- wtheta:::plot_data(f, NULL, NULL, TRUE, NULL, theta = "theta_mean")
  expect_identical(pd$d$theta, c(0.6, 1.4, 2.7))
  expect_identical(pd$xlim, c(0.6, 2.7))
  expect_match(as.character(wtheta:::theta_axis_label(f, "theta_mean")),
               "mean")
  skip_if_not_installed("ggplot2")
  p <- ggplot2::autoplot(f, theta = "theta_mean")
  expect_identical(ggplot2::ggplot_build(p)$data[[1L]]$x,
                   log10(c(0.6, 1.4, 2.7)))
})

test_that("labels say w(theta) with the theta symbol", {
  f <- fake_cross()
  expect_identical(wtheta:::w_axis_label(wtheta:::plot_layout(f)),
                   expression(w(theta)))
  skip_if_not_installed("ggplot2")
  expect_identical(ggplot2::autoplot(f)$labels$y, expression(w(theta)))
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

# a hand-made two-sample result: a, b and their cross-correlation
fake_multi <- function() {
  th <- c(0.2, 0.6, 2)
  d <- data.frame(i = factor(rep(c("a", "a", "b"), each = 3)),
                  j = factor(rep(c("a", "b", "b"), each = 3)),
                  theta_lo = th / 1.5, theta_hi = th * 1.5, theta = th,
                  w = c(5, 1, 0.2, 0.3, -0.05, 0.01, 8, 2, -0.1),
                  w_err = 0.04)
  structure(d, class = c("wtheta_multi", "data.frame"),
            samples = c("a", "b"), estimator = "LS", error = "none",
            edges = c(th / 1.5, 3))
}

test_that("tomography panels: one y-scale choice, log xy, open symbols", {
  m <- fake_multi()
  # "fixed" (the default): every row shares one range, in plot() and
  # autoplot() alike; "free_y": each row (sample i) its own
  fixed <- wtheta:::multi_plot_data(m, NULL, TRUE)
  expect_identical(fixed$ylim$a, fixed$ylim$b)
  expect_equal(fixed$ylim$a, c(-0.14, 8.04))
  free <- wtheta:::multi_plot_data(m, NULL, TRUE, "free_y")
  expect_equal(free$ylim$a, c(-0.09, 5.04))
  expect_equal(free$ylim$b, c(-0.14, 8.04))
  expect_error(wtheta:::multi_plot_data(m, NULL, TRUE, "free"),
               "`scales` must be")
  # log = "xy": the negative w at |w|, open, and the line of each panel
  # joins its filled points only
  xy <- wtheta:::multi_plot_data(m, "xy", TRUE)
  expect_true(xy$log_y)
  expect_identical(xy$d$open, m$w < 0)
  expect_identical(xy$d$w, abs(m$w))
  expect_identical(wtheta:::line_path(xy$d[xy$d$i == "a" & xy$d$j == "b", ])$x,
                   c(0.2, NA, 2))
  expect_error(plot(m, log = "z"), "`log` must be")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_identical(plot(m, log = "xy"), m)
  skip_if_not_installed("ggplot2")
  g <- ggplot2::autoplot(m, log = "xy", scales = "free_y")
  expect_identical(g$facet$params$free, list(x = FALSE, y = TRUE))
  expect_identical(ggplot2::autoplot(m)$facet$params$free,
                   list(x = FALSE, y = FALSE))
  expect_identical(g$labels$y, expression(w(theta)))
  b <- ggplot2::ggplot_build(g)
  shapes <- unlist(lapply(b$data, function(l) l$shape))
  expect_identical(sum(shapes == 21), 2L)
})
