test_that("each estimator matches its formula on the normalised counts", {
  set.seed(21)
  d <- simulate_catalog(400, seed = 3)
  r <- random_catalog(500, seed = 4)
  b <- theta_bins(0.2, 8, n = 6, log = TRUE)
  for (self in c(FALSE, TRUE)) {
    ls <- wtheta(d, r, b, self_pairs = self, backend = "cpu", threads = 1)
    nd <- 400
    nr <- 500
    norm <- if (self) c(nd^2, nd * nr, nr^2) else
      c(nd * (nd - 1) / 2, nd * nr, nr * (nr - 1) / 2)
    dd <- ls$DD / norm[1]
    dr <- ls$DR / norm[2]
    rr <- ls$RR / norm[3]
    expect_identical(ls$DD, pair_counts(d, bins = b, self_pairs = self,
                                        backend = "cpu")$counts)
    expect_identical(ls$DR, pair_counts(d, r, bins = b, backend = "cpu")$counts)
    expect_equal(ls$w, (dd - 2 * dr + rr) / rr, tolerance = 1e-14)
    expect_equal(wtheta(d, r, b, "natural", self, "cpu")$w, dd / rr - 1,
                 tolerance = 1e-14)
    expect_equal(wtheta(d, r, b, "DP", self, "cpu")$w, dd / dr - 1,
                 tolerance = 1e-14)
    expect_equal(wtheta(d, r, b, "Hamilton", self, "cpu")$w,
                 dd * rr / dr^2 - 1, tolerance = 1e-14)
  }
  # the clustered catalog is clustered at small separations
  expect_true(all(ls$w[1:3] > 0.5))
})

test_that("self_pairs = TRUE with equal sizes is the classic raw-count formula", {
  d <- simulate_catalog(300, seed = 5)
  r <- random_catalog(300, seed = 6)
  w <- wtheta(d, r, theta_bins(0, 10, width = 1), self_pairs = TRUE,
              backend = "cpu")
  expect_equal(w$w, (w$DD - 2 * w$DR + w$RR) / w$RR, tolerance = 1e-14)
  expect_identical(sum(w$DD) + attr(w, "n_outside")[["DD"]], 300^2)
})

test_that("the result is a data frame that says how it was made", {
  d <- simulate_catalog(100, seed = 1)
  r <- random_catalog(150, seed = 2)
  w <- wtheta(d, r, theta_bins(0, 5, width = 1), backend = "cpu", threads = 1)
  expect_s3_class(w, c("wtheta", "data.frame"), exact = TRUE)
  expect_named(w, c("theta_lo", "theta_hi", "theta", "DD", "DR", "RR", "w",
                    "w_err"))
  expect_identical(attr(w, "error"), "poisson")
  expect_identical(attr(w, "type"), "auto")
  expect_identical(attr(w, "weighted"), FALSE)
  expect_identical(w$theta, c(0.5, 1.5, 2.5, 3.5, 4.5))
  expect_identical(attr(w, "bin_centres"), "midpoint")
  expect_identical(attr(w, "n_data"), 100L)
  expect_identical(attr(w, "n_random"), 150L)
  expect_identical(attr(w, "estimator"), "LS")
  expect_identical(attr(w, "self_pairs"), FALSE)
  expect_identical(attr(w, "backend"), "cpu")
  expect_identical(attr(w, "threads"), 1L)
  expect_true(attr(w, "elapsed") >= 0)
  df <- as.data.frame(w)
  expect_identical(class(df), "data.frame")
  expect_identical(df$w, w$w)
  expect_output(print(w), "auto-correlation, Landy-Szalay; 5 bins from 0 to 5 deg")
  expect_output(print(w), "unordered pairs, no self pairs")
  png(tf <- tempfile(fileext = ".png"))
  expect_identical(plot(w), w)
  dev.off()
  expect_gt(file.size(tf), 0)
  unlink(tf)
})

test_that("empty random bins give NA with a warning, never a silent Inf", {
  d <- data.frame(ra = c(0, 0.1, 0.2), dec = 0)
  r <- data.frame(ra = c(0, 0.1, 0.12), dec = 0)
  b <- c(0, 0.15, 0.25, 1)
  expect_warning(w <- wtheta(d, r, b, backend = "cpu"),
                 "w is NA in 2 bin\\(s\\) where RR is zero")
  expect_identical(is.na(w$w), c(FALSE, TRUE, TRUE))
})

test_that("bad input to wtheta is refused", {
  d <- data.frame(ra = c(1, 2), dec = c(3, 4))
  expect_error(wtheta(d, d, c(0, 1), estimator = "LZ"),
               "`estimator` must be one of \"LS\", \"natural\", \"DP\", \"Hamilton\", not \"LZ\"")
  expect_error(wtheta(d, data.frame(ra = 1), c(0, 1)),
               "`random` has no column \"dec\"")
  expect_error(wtheta(d[1, ], d, c(0, 1)), "`data` has 1 point")
  expect_error(wtheta(d, d), "`bins` is needed")
  expect_error(wtheta(d, d, c(0, 1), threads = -1), "`threads` must be")
})

test_that("the classic catalogs give the published w(theta)", {
  dpath <- shared_data("data_100k_arcmin.txt")
  rpath <- shared_data("flat_100k_arcmin.txt")
  D <- read_catalog(dpath, units = "arcmin")
  R <- read_catalog(rpath, units = "arcmin")
  b <- theta_bins(0, 90, width = 0.25)
  # totals on subsets, every backend convention
  pc <- pair_counts(D[1:3000, ], R[5001:7500, ], bins = b,
                    threads = test_threads())
  expect_identical(sum(pc$counts) + pc$n_outside, 3000 * 2500)
  expect_identical(pc$n_outside, 0)   # all pairs are under 90 degrees
  expect_identical(slots_of(pc),
                   as.double(ref_slots(D[1:3000, ], R[5001:7500, ], b)))
  # the whole classic computation; its randoms are uniform in ra and dec,
  # not in area, and the footprint check says so
  expect_warning(w <- wtheta(D, R, b, self_pairs = TRUE,
                             threads = test_threads()),
                 "do not seem to share a footprint")
  expect_identical(sum(w$DD), 1e10)
  expect_identical(sum(w$RR), 1e10)
  expect_identical(sum(w$DR), 1e10)
  published <- c(2.338, 1.736, 1.415, 1.214, 1.086)
  expect_lt(abs(w$w[1] - published[1]), 0.03)
  expect_true(all(abs(w$w[2:5] - published[2:5]) < 0.01))
})

test_that("choice arguments ignore case and accept unique prefixes", {
  d <- data.frame(ra = c(1, 2, 3, 4), dec = c(3, 4, 5, 6))
  r <- data.frame(ra = c(1.5, 2.5, 3.5, 4.5), dec = c(3, 4, 5, 6))
  ref <- wtheta(d, r, c(0.5, 2, 5), estimator = "LS", threads = 1)
  for (e in c("ls", "Ls", "l")) {
    w <- wtheta(d, r, c(0.5, 2, 5), estimator = e, threads = 1)
    expect_identical(attr(w, "estimator"), "LS")
    expect_identical(w$w, ref$w)
  }
  expect_identical(attr(wtheta(d, r, c(0.5, 2, 5), estimator = "ham",
                               threads = 1), "estimator"), "Hamilton")
  expect_identical(attr(wtheta(d, r, c(0.5, 2, 5), error = "NO",
                               threads = 1), "error"), "none")
  expect_identical(pair_counts(d, bins = c(0.5, 2, 5), backend = "CPU",
                               threads = 1)$backend, "cpu")
  # "" and ambiguous prefixes fail
  expect_error(wtheta(d, r, c(0.5, 2, 5), estimator = ""),
               "`estimator` must be one of")
  expect_error(pair_counts(d, bins = c(0.5, 2, 5), backend = "c"),
               "could be any of \"cpu\", \"cuda\"", fixed = TRUE)
})

test_that("log bins are centred geometrically, other bins at the midpoint", {
  d <- simulate_catalog(300, seed = 3)
  r <- random_catalog(600, seed = 4)
  run <- function(b) wtheta(d, r, b, backend = "cpu", threads = 1,
                            check_footprint = FALSE, error = "none")
  b <- theta_bins(0.1, 10, n = 4, log = TRUE)
  w <- run(b)
  expect_identical(attr(w, "bin_centres"), "geometric")
  expect_identical(w$theta, sqrt(b[-5] * b[-1]))
  expect_equal(w$theta, 10^c(-0.75, -0.25, 0.25, 0.75), tolerance = 1e-12)
  # log edges given by hand count as log bins too
  w2 <- run(10^seq(-1, 1, by = 0.5))
  expect_identical(attr(w2, "bin_centres"), "geometric")
  expect_equal(w2$theta, w$theta, tolerance = 1e-12)
  # linear bins that do not start at 0, uneven bins, and a single bin:
  # the midpoint
  for (e in list(theta_bins(1, 5, width = 1), c(0.1, 0.2, 0.5, 3),
                 c(0.1, 10))) {
    we <- run(e)
    expect_identical(attr(we, "bin_centres"), "midpoint")
    expect_identical(we$theta, (e[-length(e)] + e[-1]) / 2)
  }
  # the counts do not change, and wtheta_from_counts() centres the same
  p <- attr(w, "pair_counts")
  f <- wtheta_from_counts(p$DD, p$DR, p$RR, error = "none")
  expect_identical(f$theta, w$theta)
  expect_identical(attr(f, "bin_centres"), "geometric")
})
