# mean_theta: the pair-weighted mean separation per bin (issue 21).

# Brute force in R: unit vectors from the package (so that both sides see
# the same points), each pair's angle from its chord, 2 asin(|a - b| / 2),
# as the engines compute it, and per bin sum(w theta) / sum(w) in degrees.
ref_mean_theta <- function(x, y = NULL, edges, wx = NULL, wy = NULL,
                           self_pairs = FALSE) {
  a <- wtheta:::unit_vectors(x, 1L)
  b <- if (is.null(y)) a else wtheta:::unit_vectors(y, 1L)
  d2 <- outer(a[, 1], b[, 1], "-")^2 + outer(a[, 2], b[, 2], "-")^2
  d2 <- d2 + outer(a[, 3], b[, 3], "-")^2
  th <- 2 * asin(pmin(sqrt(d2) / 2, 1)) * (180 / pi)
  if (is.null(wx)) wx <- rep(1, nrow(a))
  if (is.null(wy)) wy <- if (is.null(y)) wx else rep(1, nrow(b))
  ww <- outer(wx, wy)
  keep <- if (!is.null(y) || self_pairs) TRUE else upper.tri(d2)
  d2 <- d2[keep]
  th <- th[keep]
  ww <- ww[keep]
  bin <- findInterval(d2, ref_c2(edges))
  vapply(seq_len(length(edges) - 1L), function(k) {
    i <- bin == k
    if (!any(i)) NA_real_ else sum(ww[i] * th[i]) / sum(ww[i])
  }, 0)
}

expect_rel <- function(got, want, tol = 1e-12) {
  expect_identical(is.na(got), is.na(want))
  ok <- !is.na(want)
  rel <- abs(got[ok] - want[ok]) / pmax(abs(want[ok]), 1e-300)
  expect_true(all(rel <= tol), info = paste("max relative difference",
                                            max(rel)))
}

mt_cases <- function() {
  set.seed(71)
  x <- random_sky(900, ra = c(0, 40), dec = c(-20, 20))
  y <- random_sky(700, ra = c(10, 50), dec = c(-15, 25))
  x$w <- runif(nrow(x), 0.2, 3)
  y$w <- rexp(nrow(y)) + 0.1
  # log bins from 0.05 degrees, and a last bin beyond every pair (NA)
  e <- c(theta_bins(0.05, 20, n = 8, log = TRUE), 170, 179)
  list(x = x, y = y, e = e)
}

test_that("theta_mean is the brute-force mean of the chord angles", {
  cs <- mt_cases()
  x <- cs$x
  y <- cs$y
  e <- cs$e
  for (mode in list(FALSE, "prune", TRUE)) {
    old <- options(wtheta.grid = mode)
    for (w in list(NULL, "w")) {
      wx <- if (!is.null(w)) x$w
      wy <- if (!is.null(w)) y$w
      for (sp in c(FALSE, TRUE)) {
        p <- pair_counts(x, bins = e, self_pairs = sp, weights = w,
                         backend = "cpu", threads = test_threads(),
                         mean_theta = TRUE)
        expect_rel(p$theta_mean, ref_mean_theta(x, NULL, e, wx,
                                                self_pairs = sp))
        expect_true(is.na(p$theta_mean[length(p$theta_mean)]))
        q <- pair_counts(x, bins = e, self_pairs = sp, weights = w,
                         backend = "cpu", threads = test_threads())
        expect_identical(p$counts, q$counts)
        expect_identical(p$n_above, q$n_above)
        expect_null(q$theta_mean)
        expect_false(q$mean_theta)
        expect_true(p$mean_theta)
        # theta_sum / counts (or weighted counts) is theta_mean
        expect_equal(p$theta_sum / (p$weighted %||% p$counts), p$theta_mean)
        expect_true(any(grepl("theta_mean", capture.output(print(p)))))
        if (!is.null(w)) expect_equal(p$weighted, q$weighted,
                                      tolerance = 1e-13)
      }
      p <- pair_counts(x, y, bins = e, weights = w, backend = "cpu",
                       threads = test_threads(), mean_theta = TRUE)
      expect_rel(p$theta_mean, ref_mean_theta(x, y, e, wx, wy))
    }
    options(old)
  }
})

test_that("with mean_theta the grid prunes but counts no cell pair in bulk", {
  set.seed(72)
  x <- random_sky(3000)
  e <- c(0.5, 1, 2, 4)
  old <- options(wtheta.grid = TRUE)
  on.exit(options(old))
  bulk <- pair_counts(x, bins = e, backend = "cpu", threads = 1)
  mean <- pair_counts(x, bins = e, backend = "cpu", threads = 1,
                      mean_theta = TRUE)
  expect_identical(mean$counts, bulk$counts)
  # without mean_theta whole cell pairs inside one bin are counted unvisited
  expect_gt(bulk$pairs_skipped, bulk$n_above)
  # with it only the pairs beyond the last edge are, most of them
  expect_lte(mean$pairs_skipped, mean$n_above)
  expect_gt(mean$pairs_skipped, 0.9 * mean$n_above)
  expect_rel(mean$theta_mean, ref_mean_theta(x, NULL, e))
})

test_that("angle sums are the same bits on 1 and 2 threads", {
  set.seed(73)
  x <- random_sky(4000, ra = c(0, 60), dec = c(-30, 30))
  x$w <- runif(nrow(x))
  x$p <- sample(1:4, nrow(x), replace = TRUE)
  e <- theta_bins(0.1, 30, n = 12, log = TRUE)
  for (w in list(NULL, "w")) {
    for (pt in list(NULL, "p")) {
      one <- pair_counts(x, bins = e, weights = w, patches = pt,
                         backend = "cpu", threads = 1, mean_theta = TRUE)
      two <- pair_counts(x, bins = e, weights = w, patches = pt,
                         backend = "cpu", threads = 2, mean_theta = TRUE)
      expect_identical(one$theta_sum, two$theta_sum)
      expect_identical(one$theta_mean, two$theta_mean)
    }
  }
})

test_that("wtheta() and wtheta_multi() carry theta_mean of DD", {
  set.seed(74)
  d <- random_sky(600, ra = c(0, 30), dec = c(-15, 15))
  d2 <- random_sky(500, ra = c(0, 30), dec = c(-15, 15))
  r <- random_sky(1200, ra = c(0, 30), dec = c(-15, 15))
  e <- theta_bins(0.2, 10, n = 6, log = TRUE)
  w <- wtheta(d, r, e, backend = "cpu", threads = 1, mean_theta = TRUE,
              check_footprint = FALSE)
  expect_identical(names(w)[1:4], c("theta_lo", "theta_hi", "theta",
                                    "theta_mean"))
  expect_rel(w$theta_mean, ref_mean_theta(d, NULL, e))
  pcs <- attr(w, "pair_counts")
  expect_identical(w$theta_mean, pcs$DD$theta_mean)
  expect_null(pcs$DR$theta_mean)
  expect_null(pcs$RR$theta_mean)
  # everything else as without it
  w0 <- wtheta(d, r, e, backend = "cpu", threads = 1, check_footprint = FALSE)
  expect_identical(w$w, w0$w)
  expect_false("theta_mean" %in% names(w0))
  expect_true("theta_mean" %in% names(as.data.frame(w)))
  expect_true(any(grepl("theta_mean", capture.output(print(w)))))
  # from stored counts
  wf <- wtheta_from_counts(pcs$DD, pcs$DR, pcs$RR)
  expect_identical(wf$theta_mean, w$theta_mean)
  # cross: of the D1D2 pairs; jackknife keeps the full sample's mean
  wc <- untrusted_cov_ok(
    wtheta(d, r, e, data2 = d2, backend = "cpu", threads = 1,
           mean_theta = TRUE, error = "jackknife", n_patches = 4,
           seed = 1L, check_footprint = FALSE))
  expect_rel(wc$theta_mean, ref_mean_theta(d, d2, e))
  # tomography: every entry's DD (D1D2)
  m <- wtheta_multi(list(a = d, b = d2), r, e, backend = "cpu", threads = 1,
                    mean_theta = TRUE, check_footprint = FALSE)
  ent <- attr(m, "entries")
  expect_rel(ent[["a-a"]]$theta_mean, ref_mean_theta(d, NULL, e))
  expect_rel(ent[["b-b"]]$theta_mean, ref_mean_theta(d2, NULL, e))
  expect_rel(ent[["a-b"]]$theta_mean, ref_mean_theta(d, d2, e))
  expect_identical(m$theta_mean[m$i == "a" & m$j == "b"],
                   ent[["a-b"]]$theta_mean)
})

test_that("saved counts and results keep theta_mean", {
  cs <- mt_cases()
  p <- pair_counts(cs$x, bins = cs$e, weights = "w", backend = "cpu",
                   threads = 1, mean_theta = TRUE)
  formats <- c(".csv", if (wtheta:::fits_available()) ".fits")
  for (ext in formats) {
    f <- tempfile(fileext = ext)
    write_pair_counts(p, f)
    expect_identical(read_pair_counts(f), p)
  }
  f <- tempfile(fileext = ".csv")
  write_pair_counts(p, f)
  tab <- utils::read.csv(f, comment.char = "#")
  expect_identical(names(tab), c("theta_lo", "theta_hi", "counts",
                                 "theta_mean", "theta_sum"))
  expect_equal(tab$theta_mean, p$theta_mean)
  r <- random_sky(800, ra = c(0, 40), dec = c(-20, 20))
  w <- wtheta(cs$x, r, cs$e[1:9], backend = "cpu", threads = 1,
              mean_theta = TRUE, check_footprint = FALSE)
  for (ext in formats) {
    f <- tempfile(fileext = ext)
    write_wtheta(w, f)
    expect_identical(read_wtheta(f), w)
  }
})

test_that("distributed counts add their angle sums up to one call's", {
  skip_if_not_installed("future")
  old <- future::plan("sequential")
  on.exit(future::plan(old), add = TRUE)
  cs <- mt_cases()
  for (sp in c(FALSE, TRUE)) {
    one <- pair_counts(cs$x, bins = cs$e, self_pairs = sp, weights = "w",
                       backend = "cpu", threads = 1, mean_theta = TRUE)
    dist <- pair_counts(cs$x, bins = cs$e, self_pairs = sp, weights = "w",
                        backend = "cpu", threads = 1, mean_theta = TRUE,
                        distribute = 3)
    expect_identical(dist$counts, one$counts)
    expect_true(dist$mean_theta)
    # the same terms, summed in another order
    expect_rel(dist$theta_sum, one$theta_sum, 1e-13)
    expect_rel(dist$theta_mean, one$theta_mean, 1e-13)
  }
  one <- pair_counts(cs$x, cs$y, bins = cs$e, backend = "cpu", threads = 1,
                     mean_theta = TRUE)
  dist <- pair_counts(cs$x, cs$y, bins = cs$e, backend = "cpu", threads = 1,
                      mean_theta = TRUE, distribute = 2)
  expect_rel(dist$theta_mean, one$theta_mean, 1e-13)
  # a checkpoint of a count without mean_theta is not reused for one with
  dir <- tempfile("wt-ckpt-")
  pair_counts(cs$x, bins = cs$e, backend = "cpu", threads = 1,
              distribute = 2, checkpoint = dir)
  expect_error(pair_counts(cs$x, bins = cs$e, backend = "cpu", threads = 1,
                           distribute = 2, checkpoint = dir,
                           mean_theta = TRUE),
               "holds blocks of another count")
})

test_that("mean_theta must be TRUE or FALSE", {
  x <- random_sky(50)
  e <- c(1, 2, 5)
  for (bad in list(NA, "yes", c(TRUE, TRUE), 1, NULL)) {
    expect_error(pair_counts(x, bins = e, threads = 1, mean_theta = bad),
                 "`mean_theta` must be TRUE or FALSE, not", fixed = TRUE)
  }
  expect_error(wtheta(x, x, e, threads = 1, mean_theta = NA),
               "`mean_theta` must be TRUE or FALSE, not NA", fixed = TRUE)
  expect_error(wtheta_multi(list(a = x), x, e, threads = 1,
                            mean_theta = "no"),
               "`mean_theta` must be TRUE or FALSE, not \"no\"",
               fixed = TRUE)
})
