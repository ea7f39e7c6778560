rel_close <- function(got, want, tol = 1e-12) {
  expect_true(all(abs(got - want) <= tol * pmax(abs(want), 1e-300)),
              info = paste(format(max(abs(got - want) / pmax(abs(want), 1e-300))),
                           "relative"))
}

test_that("weighted counts equal a brute-force double sum, raw counts stay", {
  set.seed(21)
  x <- random_sky(400, ra = c(0, 50), dec = c(-25, 25))
  y <- random_sky(300, ra = c(0, 50), dec = c(-25, 25))
  wx <- runif(400, 0.2, 3)
  wy <- rexp(300)
  e <- c(0, 1, 3, 7, 15, 30, 60)
  for (sp in c(FALSE, TRUE)) {
    pc <- pair_counts(x, bins = e, self_pairs = sp, weights = list(x = wx),
                      threads = test_threads(), backend = "cpu")
    ref <- ref_weighted(x, NULL, e, wx, self_pairs = sp)
    rel_close(pc$weighted, ref[2:7])
    rel_close(pc$weighted_below, ref[1])
    rel_close(pc$weighted_above, ref[8])
    expect_equal(slots_of(pc), ref_slots(x, NULL, e, self_pairs = sp))
    expect_equal(pc$weighted_pairs,
                 if (sp) sum(wx)^2 else (sum(wx)^2 - sum(wx^2)) / 2)
    rel_close(sum(ref), pc$weighted_pairs)
  }
  x$w <- wx
  y$w <- wy
  pc <- pair_counts(x, y, bins = e, weights = "w", threads = test_threads(),
                    backend = "cpu")
  rel_close(pc$weighted, ref_weighted(x, y, e, wx, wy)[2:7])
  expect_equal(pc$weighted_pairs, sum(wx) * sum(wy))
  expect_equal(slots_of(pc), ref_slots(x, y, e))
  # threads do not change the sums beyond rounding
  p1 <- pair_counts(x, y, bins = e, weights = "w", threads = 1,
                    backend = "cpu")
  rel_close(p1$weighted, pc$weighted)
})

test_that("unit weights reproduce the unweighted estimate", {
  d <- simulate_catalog(800, seed = 3)
  r <- random_catalog(1200, like = d, seed = 4)
  e <- theta_bins(0.1, 4, n = 6, log = TRUE)
  a <- wtheta(d, r, e, threads = test_threads(), backend = "cpu")
  d$w <- 1
  r$w <- 1
  b <- wtheta(d, r, e, threads = test_threads(), backend = "cpu",
              weights = "w")
  expect_true(attr(b, "weighted"))
  expect_equal(b$w, a$w, tolerance = 1e-12)
  expect_equal(b$DD, a$DD)
  # the raw counts stay available
  expect_equal(attr(b, "pair_counts")$DD$counts, a$DD)
})

test_that("weighted w and jackknife follow the weighted normalisers", {
  set.seed(22)
  d <- random_sky(250, ra = c(0, 30), dec = c(-15, 15))
  r <- random_sky(350, ra = c(0, 30), dec = c(-15, 15))
  d$w <- runif(250, 0.5, 2)
  r$w <- runif(350, 0.5, 2)
  d$p <- (d$ra %/% 10) + 1
  r$p <- (r$ra %/% 10) + 1
  e <- c(0.5, 3, 8, 20)
  wj <- untrusted_cov_ok(
    wtheta(d, r, e, weights = "w", error = "jackknife", patches = "p",
           threads = test_threads(), backend = "cpu"))
  direct <- function(d, r) {
    dd <- ref_weighted(d, NULL, e, d$w)[2:4] / ((sum(d$w)^2 - sum(d$w^2)) / 2)
    dr <- ref_weighted(d, r, e, d$w, r$w)[2:4] / (sum(d$w) * sum(r$w))
    rr <- ref_weighted(r, NULL, e, r$w)[2:4] / ((sum(r$w)^2 - sum(r$w^2)) / 2)
    (dd - 2 * dr + rr) / rr
  }
  expect_equal(wj$w, direct(d, r), tolerance = 1e-12)
  reps <- attr(wj, "replicates")
  for (k in 1:3) {
    expect_equal(reps[, k], direct(d[d$p != k, ], r[r$p != k, ]),
                 tolerance = 1e-12)
  }
})

test_that("weights are checked", {
  x <- random_sky(10)
  e <- c(0, 90, 180)
  expect_error(pair_counts(x, bins = e, weights = list(x = c(1:9, NA))),
               "non-finite weight \\(NA\\) in row 10")
  expect_error(pair_counts(x, bins = e, weights = list(x = letters[1:10])),
               "must be numeric weights")
  expect_error(pair_counts(x, bins = e, weights = "w"),
               "names column \"w\", which `x` does not have")
  expect_error(pair_counts(x, bins = e, weights = 1:10),
               "`weights` must be NULL, the name of a column")
})
