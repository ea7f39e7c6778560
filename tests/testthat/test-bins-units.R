# theta_bins(units = ): edges made in arcmin, arcsec or radians, counted as
# their degree values (each converted once), and results that keep the unit

unit_bins <- function() theta_bins(2.5, 250, n = 20, log = TRUE,
                                   units = "arcmin")

test_that("edges are made in the unit and converted once to degrees", {
  b <- unit_bins()
  ue <- attr(b, "unit_edges")
  expect_identical(attr(b, "theta_units"), "arcmin")
  # made in arcmin by the same arithmetic as degree bins
  e <- exp(seq(log(2.5), log(250), length.out = 21))
  expect_identical(ue, c(2.5, e[2:20], 250))
  expect_identical(ue[c(1, 21)], c(2.5, 250))
  # the degree edges: each edge / 60, one correctly rounded division
  expect_identical(as.vector(b), ue / 60)
  # arcsec and radians
  s <- theta_bins(edges = c(1, 36, 3600, 7200), units = "arcsec")
  expect_identical(as.vector(s), c(1 / 3600, 0.01, 1, 2))
  r <- theta_bins(0, pi, n = 4, units = "rad")
  expect_identical(as.vector(r)[2:4], attr(r, "unit_edges")[2:4] * (180 / pi))
  expect_identical(as.vector(r)[c(1, 5)], c(0, 180))   # pi is 180 degrees
  # linear bins by width, in the unit
  l <- theta_bins(0, 600, width = 30, units = "arcmin")
  expect_identical(attr(l, "unit_edges"), seq(0, 600, by = 30))
  expect_identical(as.vector(l), seq(0, 600, by = 30) / 60)
  # degrees: the plain vector as before
  expect_identical(theta_bins(0, 10, width = 1, units = "deg"),
                   theta_bins(0, 10, width = 1))
  expect_null(attributes(theta_bins(0, 10, width = 1)))
})

test_that("an edge that is a whole number of degrees is exactly that", {
  b <- theta_bins(edges = c(6, 30, 60, 120, 180, 600, 5400, 10800),
                  units = "arcmin")
  expect_identical(as.vector(b), c(0.1, 0.5, 1, 2, 3, 10, 90, 180))
  b <- theta_bins(0, 240, width = 60, units = "arcmin")
  expect_identical(as.vector(b), c(0, 1, 2, 3, 4))
  b <- theta_bins(edges = c(3600, 7200, 36000), units = "arcsec")
  expect_identical(as.vector(b), c(1, 2, 10))
})

test_that("units and edges out of range are refused with their values", {
  expect_error(theta_bins(1, 2, n = 2, units = "arcmins"),
               paste0("`units` must be one of \"deg\", \"arcmin\", ",
                      "\"arcsec\", \"rad\", not \"arcmins\""), fixed = TRUE)
  expect_error(theta_bins(1, 2, n = 2, units = NA), "`units` must be one of")
  expect_error(theta_bins(1, 2, n = 2, units = c("deg", "rad")),
               "`units` must be one of")
  expect_error(theta_bins(0, 20000, width = 1000, units = "arcmin"),
               "edges must lie in [0, 10800] arcmin; edge 12 is 11000",
               fixed = TRUE)
  expect_error(theta_bins(edges = c(0, 4), units = "rad"),
               "`edges` edges must lie in [0, 3.14159265358979] radians",
               fixed = TRUE)
  expect_error(theta_bins(edges = "a", units = "arcsec"),
               "numeric vector of edges in arcsec")
  b <- unit_bins()
  attr(b, "theta_units") <- "furlong"
  expect_error(pair_counts(data.frame(ra = 0:1, dec = 0), bins = b),
               "must be one of .* not \"furlong\"")
})

test_that("pairs at and an ulp off edges count as with the degree edges", {
  b <- unit_bins()
  deg <- as.vector(b)
  # pairs along the equator whose separation is each degree edge, and the
  # doubles just below and above it
  sep <- c(deg, deg * (1 - .Machine$double.eps / 2),
           deg * (1 + .Machine$double.eps))
  x <- data.frame(ra = 0, dec = 0)
  y <- data.frame(ra = sep, dec = 0)
  # and along a meridian
  ym <- data.frame(ra = 30, dec = -45 + sep)
  xm <- data.frame(ra = 30, dec = -45)
  for (bins in list(b, theta_bins(5, 300, width = 5, units = "arcmin"),
                    theta_bins(edges = c(1, 36, 60, 3600, 7200, 36000),
                               units = "arcsec"),
                    theta_bins(0.001, 0.2, n = 9, log = TRUE,
                               units = "rad"))) {
    plain <- theta_bins(edges = as.vector(bins))
    d <- as.vector(bins)
    s <- c(d, d * (1 - .Machine$double.eps / 2), d * (1 + .Machine$double.eps))
    for (p in list(list(x, data.frame(ra = s, dec = 0)),
                   list(xm, data.frame(ra = 30, dec = -45 + s)))) {
      got <- pair_counts(p[[1]], p[[2]], bins = bins, threads = 1,
                         backend = "cpu", progress = FALSE)
      want <- pair_counts(p[[1]], p[[2]], bins = plain, threads = 1,
                          backend = "cpu", progress = FALSE)
      expect_identical(slots_of(got), slots_of(want))
      expect_identical(slots_of(got),
                       as.double(ref_slots(p[[1]], p[[2]], d)))
    }
  }
  # and as a wtheta() of random points
  set.seed(7)
  d <- random_sky(400, ra = c(0, 8), dec = c(0, 8))
  r <- random_sky(600, ra = c(0, 8), dec = c(0, 8))
  got <- wtheta(d, r, b, threads = 1, backend = "cpu", progress = FALSE)
  want <- wtheta(d, r, theta_bins(edges = as.vector(b)), threads = 1,
                 backend = "cpu", progress = FALSE)
  for (k in c("DD", "DR", "RR", "w", "w_err")) {
    expect_identical(got[[k]], want[[k]], info = k)
  }
})

test_that("the classic catalogs count alike in arcmin and degree bins", {
  D <- read_catalog(shared_data("data_100k_arcmin.txt"), units = "arcmin")
  b <- unit_bins()
  got <- pair_counts(D, bins = b, threads = test_threads(), progress = FALSE)
  want <- pair_counts(D, bins = theta_bins(edges = as.vector(b)),
                      threads = test_threads(), progress = FALSE)
  expect_identical(slots_of(got), slots_of(want))
  # whole degrees in arcmin are the degree edges exactly
  got <- pair_counts(D, bins = theta_bins(0, 600, width = 60,
                                          units = "arcmin"),
                     threads = test_threads(), progress = FALSE)
  want <- pair_counts(D, bins = theta_bins(0, 10, width = 1),
                      threads = test_threads(), progress = FALSE)
  expect_identical(slots_of(got), slots_of(want))
  expect_identical(got$theta_hi, seq(60, 600, by = 60))
})

units_result <- function(...) {
  sim <- simulate_catalog(1500, n_clusters = 8, sigma = 0.3, seed = 41)
  ran <- random_catalog(3000, like = sim, seed = 42)
  wtheta(sim, ran, unit_bins(), threads = 1, backend = "cpu",
         progress = FALSE, ...)
}

test_that("results keep the unit: columns, attributes, pair counts", {
  b <- unit_bins()
  sim <- simulate_catalog(500, n_clusters = 8, sigma = 0.3, seed = 41)
  ran <- random_catalog(800, like = sim, seed = 42)
  w <- wtheta(sim, ran, b, threads = 1, backend = "cpu", progress = FALSE,
              mean_theta = TRUE)
  wd <- wtheta(sim, ran, theta_bins(edges = as.vector(b)), threads = 1,
               backend = "cpu", progress = FALSE, mean_theta = TRUE)
  ue <- attr(b, "unit_edges")
  expect_identical(attr(w, "theta_units"), "arcmin")
  expect_identical(attr(wd, "theta_units"), "deg")
  expect_identical(w$theta_lo, ue[-21])
  expect_identical(w$theta_hi, ue[-1])
  expect_identical(attr(w, "edges"), ue)
  expect_identical(w$theta, sqrt(ue[-21] * ue[-1]))
  expect_identical(attr(w, "bin_centres"), "geometric")
  # the mean separation: degrees * 60
  expect_identical(w$theta_mean, wd$theta_mean * 60)
  expect_true(all(w$theta_mean >= w$theta_lo & w$theta_mean < w$theta_hi,
                  na.rm = TRUE))
  pcs <- attr(w, "pair_counts")
  expect_identical(pcs$DD$theta_units, "arcmin")
  expect_identical(pcs$DD$edges, ue)
  expect_identical(pcs$DD$theta_sum, attr(wd, "pair_counts")$DD$theta_sum * 60)
  # pair_counts() alone
  pc <- pair_counts(sim, bins = b, threads = 1, backend = "cpu",
                    progress = FALSE, mean_theta = TRUE)
  expect_identical(pc$theta_units, "arcmin")
  expect_identical(pc$theta_lo, ue[-21])
  expect_identical(pc$theta_mean, pcs$DD$theta_mean)
  expect_identical(pair_counts(sim, bins = theta_bins(0, 1, n = 2),
                               threads = 1, progress = FALSE)$theta_units,
                   "deg")
  # wtheta_from_counts() from the stored counts gives the same result
  f <- wtheta_from_counts(pcs$DD, pcs$DR, pcs$RR)
  expect_identical(attr(f, "theta_units"), "arcmin")
  for (k in names(w)) expect_identical(f[[k]], w[[k]], info = k)
  # and refuses counts in another unit
  dd_deg <- attr(wd, "pair_counts")$DD
  expect_error(wtheta_from_counts(dd_deg, pcs$DR, pcs$RR),
               "`dr` has its angles in arcmin but `dd` in deg")
  # radians: the mean separation converted by pi / 180
  rb <- theta_bins(edges = as.vector(b) * (pi / 180), units = "rad")
  pr <- pair_counts(sim, bins = rb, threads = 1, progress = FALSE,
                    mean_theta = TRUE)
  ok <- !is.na(pr$theta_mean)
  expect_equal(pr$theta_mean[ok], pc$theta_mean[ok] / 60 * (pi / 180),
               tolerance = 1e-12)
})

test_that("wtheta_multi results, [ and as.data.frame keep the unit", {
  ran <- random_catalog(800, seed = 51, ra_range = c(0, 10),
                        dec_range = c(0, 10))
  z <- list(a = random_catalog(300, seed = 52, ra_range = c(0, 10),
                               dec_range = c(0, 10)),
            b = random_catalog(300, seed = 53, ra_range = c(0, 10),
                               dec_range = c(0, 10)))
  b <- unit_bins()
  m <- wtheta_multi(z, ran, b, threads = 1, backend = "cpu",
                    progress = FALSE, check_footprint = FALSE)
  expect_identical(attr(m, "theta_units"), "arcmin")
  expect_identical(m$theta_lo[1:20], attr(b, "unit_edges")[-21])
  expect_identical(attr(attr(m, "entries")[["a-b"]], "theta_units"), "arcmin")
  expect_identical(attr(m[m$i == "a" & m$j == "a", ], "theta_units"),
                   "arcmin")
  expect_identical(attr(m[1:3, ], "theta_units"), "arcmin")
  expect_identical(attr(as.data.frame(m), "theta_units"), "arcmin")
  w <- units_result()
  expect_s3_class(w[2:5, ], "wtheta")
  expect_identical(attr(w[2:5, ], "theta_units"), "arcmin")
  expect_identical(attr(w[2:5, ], "edges"),
                   attr(unit_bins(), "unit_edges")[2:6])
  expect_identical(attr(as.data.frame(w), "theta_units"), "arcmin")
  expect_identical(attr(w[, c("theta", "w")], "theta_units"), "arcmin")
  expect_null(attr(w[, c("DD", "w")], "theta_units"))
  expect_identical(attr(wtheta_cov(w), "theta_units"), "arcmin")
})

test_that("print, summary and plots name the unit", {
  w <- units_result(mean_theta = TRUE)
  out <- capture.output(print(w, n = 3))
  expect_match(out[1], "20 bins from 2.5 to 250 arcmin, log-spaced",
               fixed = TRUE)
  expect_true(any(grepl("theta_lo[arcmin] theta_hi[arcmin] theta[arcmin]",
                        out, fixed = TRUE)))
  expect_true(any(grepl("theta_mean[arcmin]", out, fixed = TRUE)))
  s <- summary(w)
  expect_identical(s$theta_units, "arcmin")
  expect_identical(s$theta_range, c(2.5, 250))
  out <- capture.output(print(s))
  expect_true(any(grepl("20 from 2.5 to 250 arcmin", out, fixed = TRUE)))
  pc <- attr(w, "pair_counts")$DD
  out <- capture.output(print(pc))
  expect_true(any(grepl("20 bins from 2.5 to 250 arcmin;", out,
                        fixed = TRUE)))
  expect_true(any(grepl("theta_lo[arcmin]", out, fixed = TRUE)))
  # degrees print as before: no unit in the headers
  out <- capture.output(print(small_result(), n = 2))
  expect_true(any(grepl("theta_lo theta_hi", out, fixed = TRUE)))
  # axis labels
  expect_identical(theta_axis_label(w), expression(theta ~ "(arcmin)"))
  expect_identical(theta_axis_label(small_result()),
                   expression(theta ~ "(degrees)"))
  pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  # a model from a simulated catalog is given degrees, drawn in arcmin
  sim <- simulate_catalog(1500, n_clusters = 8, sigma = 0.3, seed = 41)
  pd <- plot_data(w, sim, NULL, TRUE, NULL)
  expect_equal(pd$model_w, model_wtheta(sim, pd$grid / 60))
  expect_no_error(plot(w, model = sim))
  expect_no_error(plot(wtheta_cov(w)))
  skip_if_not_installed("ggplot2")
  p <- ggplot2::autoplot(w)
  expect_identical(p$labels$x, expression(theta ~ "(arcmin)"))
})

test_that("FITS and CSV files keep the unit and read back identical", {
  w <- untrusted_cov_ok(
    units_result(mean_theta = TRUE, error = "jackknife", n_patches = 4,
                 seed = 1))
  pc <- attr(w, "pair_counts")$DD
  csv <- withr_tempfile()
  csv <- paste0(csv, ".csv")
  on.exit(unlink(list.files(dirname(csv), basename(sub("\\.csv$", "", csv)),
                            full.names = TRUE)), add = TRUE)
  write_wtheta(w, csv)
  expect_identical(read_wtheta(csv), w)
  expect_true("# THUNIT: arcmin" %in% readLines(csv, 20))
  pcsv <- sub("\\.csv$", "-pc.csv", csv)
  write_pair_counts(pc, pcsv)
  expect_identical(read_pair_counts(pcsv), pc)
  skip_if_not(fits_available(), "no cfitsio")
  f <- paste0(withr_tempfile(), ".fits")
  on.exit(unlink(f), add = TRUE)
  write_wtheta(w, f)
  expect_identical(read_wtheta(f), w)
  info <- .Call(C_fits_info, path.expand(f), -1L, "WTHETA")
  th <- grepl("^theta", info$columns$name)
  expect_identical(unique(info$columns$unit[th]), "arcmin")
  expect_identical(unique(info$columns$unit[!th]), "")
  tab <- fits_read_table(f, hdu = "WTHETA")
  expect_identical(keyword_value(tab$keywords$value[
    tab$keywords$name == "THUNIT"]), "arcmin")
  fp <- paste0(withr_tempfile(), ".fits")
  on.exit(unlink(fp), add = TRUE)
  write_pair_counts(pc, fp)
  expect_identical(read_pair_counts(fp), pc)
  info <- .Call(C_fits_info, path.expand(fp), -1L, "PAIR_COUNTS")
  expect_identical(info$columns$unit[info$columns$name == "theta_sum"],
                   "arcmin")
  # a wtheta_multi result
  box <- function(n, seed) random_catalog(n, seed = seed, ra_range = c(0, 5),
                                         dec_range = c(0, 5))
  m <- wtheta_multi(list(a = box(1000, 3)), box(2000, 4), unit_bins(),
                    threads = 1, progress = FALSE, check_footprint = FALSE)
  fm <- paste0(withr_tempfile(), ".fits")
  on.exit(unlink(fm), add = TRUE)
  write_wtheta(m, fm)
  expect_identical(read_wtheta(fm), m)
})

test_that("a FITS table from another tool gives its unit", {
  skip_if_not(fits_available(), "no cfitsio")
  w <- units_result()
  f <- paste0(withr_tempfile(), ".fits")
  on.exit(unlink(f), add = TRUE)
  # the table alone, as another tool writes it: TUNIT arcmin, no THUNIT
  cols <- lapply(unclass(w)[names(w)], as.double)
  hdu <- c(fits_columns(cols, "WTHETA", "arcmin"),
           list(keys = fits_keys(list())))
  .Call(C_fits_write, path.expand(paste0(f, ".part")), path.expand(f),
        fits_keys(list()), list(hdu))
  got <- read_wtheta(f)
  expect_identical(attr(got, "theta_units"), "arcmin")
  expect_identical(got$theta_lo, w$theta_lo)
  # an older file (TUNIT deg, no THUNIT) reads as degrees
  hdu <- c(fits_columns(cols, "WTHETA"), list(keys = fits_keys(list())))
  .Call(C_fits_write, path.expand(paste0(f, ".part")), path.expand(f),
        fits_keys(list()), list(hdu))
  expect_identical(attr(read_wtheta(f), "theta_units"), "deg")
})

test_that("SACC and twopoint files get arcmin from any unit", {
  skip_if_not(fits_available(), "no cfitsio")
  w <- units_result()
  sim <- simulate_catalog(1500, n_clusters = 8, sigma = 0.3, seed = 41)
  wd <- wtheta(sim, random_catalog(3000, like = sim, seed = 42),
               theta_bins(edges = as.vector(unit_bins())), threads = 1,
               backend = "cpu", progress = FALSE)
  for (fmt in c("sacc", "twopoint")) {
    f <- paste0(withr_tempfile(), ".fits")
    suppressMessages(write_wtheta(w, f, format = fmt))
    got <- read_wtheta(f)
    # read back in degrees, from arcmin: the arcmin edges / 60
    expect_identical(got$theta_lo, w$theta_lo / 60, info = fmt)
    expect_identical(got$theta_hi, w$theta_hi / 60, info = fmt)
    expect_equal(got$w, w$w, tolerance = 1e-15, info = fmt)
    # a degree result of the same bins writes the same angles to 1e-15
    fd <- paste0(withr_tempfile(), ".fits")
    suppressMessages(write_wtheta(wd, fd, format = fmt))
    expect_equal(read_wtheta(fd)$theta_lo, got$theta_lo, tolerance = 1e-15,
                 info = fmt)
    unlink(c(f, fd))
  }
  # radians and arcsec go to arcmin too
  v <- w
  attr(v, "theta_units") <- "arcsec"
  expect_identical(pipeline_vector(v)$theta_lo, w$theta_lo / 60)
  attr(v, "theta_units") <- "rad"
  expect_identical(pipeline_vector(v)$theta_lo,
                   w$theta_lo * (180 / pi) * 60)
})
