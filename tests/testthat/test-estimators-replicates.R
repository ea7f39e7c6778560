# Jackknife and bootstrap replicates are computed from per-patch counts;
# these tests recompute them directly from the catalogs.

direct_w <- function(d, r, e, sp = FALSE, estimator = "LS") {
  suppressWarnings(wtheta(d, r, e, self_pairs = sp, estimator = estimator,
                          threads = test_threads(), backend = "cpu",
                          error = "none")$w)
}

test_that("jackknife replicates equal w recomputed without each patch", {
  set.seed(3)
  d <- random_sky(400, ra = c(0, 30), dec = c(-15, 15))
  r <- random_sky(700, ra = c(0, 30), dec = c(-15, 15))
  e <- c(0.5, 2, 5, 10, 20)
  d$p <- (d$ra %/% 6) + 1
  r$p <- (r$ra %/% 6) + 1
  for (est in c("LS", "natural", "DP", "Hamilton")) {
    wj <- wtheta(d, r, e, estimator = est, threads = test_threads(),
                 backend = "cpu", error = "jackknife", patches = "p")
    reps <- attr(wj, "replicates")
    expect_equal(dim(reps), c(4L, 5L))
    for (k in 1:5) {
      expect_equal(reps[, k], direct_w(d[d$p != k, ], r[r$p != k, ], e,
                                       estimator = est),
                   tolerance = 1e-12, info = paste(est, k))
    }
    mean_w <- rowMeans(reps)
    want <- 4 / 5 * rowSums((reps - mean_w)^2)
    expect_equal(wj$w_err, sqrt(want))
    expect_equal(unname(diag(wtheta_cov(wj))), want)
    expect_equal(wj$w, direct_w(d, r, e, estimator = est))
  }
})

test_that("bootstrap replicates equal w of catalogs with patches repeated", {
  set.seed(4)
  d <- random_sky(200, ra = c(0, 30), dec = c(-15, 15))
  r <- random_sky(300, ra = c(0, 30), dec = c(-15, 15))
  e <- c(0, 2, 5, 10, 20)
  d$p <- (d$ra %/% 10) + 1
  r$p <- (r$ra %/% 10) + 1
  # with self pairs (ordered pairs), copies of a patch are exactly the
  # multiplicities of the bootstrap
  wb <- wtheta(d, r, e, self_pairs = TRUE, threads = test_threads(),
               backend = "cpu", error = "bootstrap", patches = "p",
               n_boot = 5, seed = 9)
  m <- wtheta:::patch_multiplicities("bootstrap", 3, 5, 9)
  reps <- attr(wb, "replicates")
  for (k in 1:5) {
    dk <- d[rep(seq_len(nrow(d)), m[d$p, k]), ]
    rk <- r[rep(seq_len(nrow(r)), m[r$p, k]), ]
    expect_equal(reps[, k], direct_w(dk, rk, e, sp = TRUE), tolerance = 1e-12,
                 info = k)
  }
  expect_equal(wb$w_err, apply(reps, 1, stats::sd))
  expect_identical(wb$w_err, wtheta(d, r, e, self_pairs = TRUE,
                                    threads = test_threads(), backend = "cpu",
                                    error = "bootstrap", patches = "p",
                                    n_boot = 5, seed = 9)$w_err)
})

test_that("poisson errors and error arguments", {
  set.seed(5)
  d <- random_sky(300, ra = c(0, 30), dec = c(-15, 15))
  r <- random_sky(400, ra = c(0, 30), dec = c(-15, 15))
  e <- c(1, 3, 10)
  w <- wtheta(d, r, e, threads = test_threads(), backend = "cpu")
  expect_equal(attr(w, "error"), "poisson")
  expect_equal(w$w_err, (1 + w$w) / sqrt(w$DD))
  # an error is never negative: data that are their own randoms give
  # w < -1 in the first bin (DR holds the zero-distance self pairs)
  ws <- wtheta(d, d, c(0, e), threads = test_threads(), backend = "cpu")
  expect_lt(ws$w[1], -1)
  expect_equal(ws$w_err, abs(1 + ws$w) / sqrt(ws$DD))
  expect_true(all(ws$w_err > 0))
  expect_equal(unname(as.matrix(wtheta_cov(w))), diag(w$w_err^2))
  wn <- wtheta(d, r, e, threads = test_threads(), backend = "cpu",
               error = "none")
  expect_null(wn$w_err)
  expect_null(wtheta_cov(wn))
  expect_error(wtheta(d, r, e, error = "sd"), "`error` must be one of")
  expect_error(wtheta(d, r, e, patches = "p"), "`patches` is used by error")
  expect_error(wtheta(d, r, e, error = "jackknife", n_patches = 0),
               "`n_patches` must be a whole number")
  r$p <- ifelse(r$ra < 15, 1, 2)
  d$p <- ifelse(d$ra < 15, 1, 3)
  expect_error(wtheta(d, r, e, error = "jackknife", patches = "p",
                      backend = "cpu"), "patch \"3\" holds no random point")
  expect_error(wtheta_cov(1), "must be a result of wtheta")
})

test_that("k-means patches by default, reproducible with a seed", {
  d <- simulate_catalog(1500, seed = 1)
  r <- random_catalog(3000, like = d, seed = 2)
  e <- theta_bins(0.1, 3, n = 5, log = TRUE)
  a <- wtheta(d, r, e, threads = test_threads(), backend = "cpu",
              error = "jackknife", n_patches = 8, seed = 7)
  b <- wtheta(d, r, e, threads = test_threads(), backend = "cpu",
              error = "jackknife", n_patches = 8, seed = 7)
  expect_identical(a$w_err, b$w_err)
  expect_equal(attr(a, "n_patches"), 8L)
  expect_s3_class(attr(a, "patches"), "wtheta_patches")
  expect_true(all(a$w_err > 0))
})

test_that("cross-correlation combines the four cross counts", {
  set.seed(6)
  d1 <- random_sky(200, ra = c(0, 30), dec = c(-15, 15))
  d2 <- random_sky(250, ra = c(0, 30), dec = c(-15, 15))
  r1 <- random_sky(300, ra = c(0, 30), dec = c(-15, 15))
  r2 <- random_sky(350, ra = c(0, 30), dec = c(-15, 15))
  e <- c(1, 4, 10, 20)
  w <- wtheta(d1, r1, e, data2 = d2, random2 = r2, threads = test_threads(),
              backend = "cpu")
  expect_equal(attr(w, "type"), "cross")
  n <- function(x, y) ref_slots(x, y, e)[2:4] / (nrow(x) * nrow(y))
  d1d2 <- n(d1, d2); d1r2 <- n(d1, r2); r1d2 <- n(r1, d2); r1r2 <- n(r1, r2)
  expect_equal(w$w, (d1d2 - d1r2 - r1d2 + r1r2) / r1r2)
  expect_equal(w$D1D2, ref_slots(d1, d2, e)[2:4])
  expect_equal(w$R1R2, ref_slots(r1, r2, e)[2:4])
  wh <- wtheta(d1, r1, e, data2 = d2, random2 = r2, estimator = "Hamilton",
               threads = test_threads(), backend = "cpu")
  expect_equal(wh$w, d1d2 * r1r2 / (d1r2 * r1d2) - 1)
  # one shared random catalog: R1R2 is its auto count, pairs i != j
  ws <- wtheta(d1, r1, e, data2 = d2, threads = test_threads(),
               backend = "cpu", estimator = "natural")
  expect_equal(ws$w, d1d2 / (ref_slots(r1, NULL, e)[2:4] /
                               choose(nrow(r1), 2)) - 1)
  # jackknife on a cross-correlation: leave-one-out recomputed directly
  for (x in c("d1", "d2", "r1", "r2")) {
    v <- get(x)
    v$p <- (v$ra %/% 10) + 1
    assign(x, v)
  }
  wj <- untrusted_cov_ok(
    wtheta(d1, r1, e, data2 = d2, random2 = r2, threads = test_threads(),
           backend = "cpu", error = "jackknife", patches = "p"))
  reps <- attr(wj, "replicates")
  for (k in 1:3) {
    direct <- wtheta(d1[d1$p != k, ], r1[r1$p != k, ], e,
                     data2 = d2[d2$p != k, ], random2 = r2[r2$p != k, ],
                     threads = test_threads(), backend = "cpu", error = "none")
    expect_equal(reps[, k], direct$w, tolerance = 1e-12)
  }
  expect_error(wtheta(d1, r1, e, random2 = r2), "needs `data2`")
  expect_error(wtheta(d1, r1, e, data2 = d2, self_pairs = TRUE),
               "applies to auto-correlations")
})

test_that("jackknife replicate counts divided in C equal R's division", {
  set.seed(5)
  P <- 6L
  nb <- 7L
  for (auto in c(TRUE, FALSE)) {
    S <- array(as.double(rpois(P * P * nb, 50)), c(P, P, nb))
    if (auto) S <- S + aperm(S, c(2L, 1L, 3L))
    total <- runif(P, 1e3, 1e4)
    raw <- .Call(wtheta:::C_jackknife_counts, S, auto, NULL)
    # leave-one-out sums, recomputed here
    want <- vapply(seq_len(P), function(r) vapply(seq_len(nb), function(k) {
      s <- S[-r, -r, k]
      if (auto) (sum(s) + sum(diag(s))) / 2 else sum(s)
    }, 0), numeric(nb))
    expect_equal(raw, want, tolerance = 1e-14)
    expect_identical(.Call(wtheta:::C_jackknife_counts, S, auto, total),
                     raw / rep(total, each = nb))
  }
})
