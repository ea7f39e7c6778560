# wtheta_from_counts(): counts kept give the w(theta) of wtheta(). The
# set-up is that of test-prepared.R (helper-prepared.R).

fx <- prepared_setup()
gal <- fx$gal
ran <- fx$ran
b <- fx$b

test_that("wtheta_from_counts() gives wtheta()'s result from its counts", {
  g2 <- random_sky(300, ra = c(0, 30), dec = c(-15, 15))
  r2 <- random_sky(700, ra = c(0, 30), dec = c(-15, 15))
  for (est in c("LS", "natural", "DP", "Hamilton")) {
    for (err in c("poisson", "jackknife", "bootstrap", "none")) {
      w <- untrusted_cov_ok(
        wtheta(gal, ran, b, estimator = est, error = err, weights = "w",
               n_patches = 5, seed = 3, n_boot = 30, threads = 1,
               backend = "cpu", check_footprint = FALSE))
      p <- attr(w, "pair_counts")
      f <- untrusted_cov_ok(
        wtheta_from_counts(p$DD, p$DR, p$RR, estimator = est, error = err,
                           n_boot = 30, seed = 3))
      expect_identical(strip_time(f), strip_time(w))
      wc <- untrusted_cov_ok(
        wtheta(gal, ran, b, data2 = g2, random2 = r2, estimator = est,
               error = err, n_patches = 5, seed = 3, n_boot = 30,
               threads = 1, backend = "cpu", check_footprint = FALSE))
      p <- attr(wc, "pair_counts")
      f <- untrusted_cov_ok(
        wtheta_from_counts(p$D1D2, p$D1R2, p$R1R2, p$R1D2, estimator = est,
                           error = err, n_boot = 30, seed = 3))
      expect_identical(strip_time(f), strip_time(wc))
    }
  }
  # the natural estimator from DD and RR alone
  w <- wtheta(gal, ran, b, estimator = "natural", threads = 1,
              check_footprint = FALSE)
  p <- attr(w, "pair_counts")
  f <- wtheta_from_counts(p$DD, rr = p$RR, estimator = "natural")
  expect_identical(f$w, w$w)
  expect_identical(f$w, (p$DD$counts / p$DD$n_pairs) /
                     (p$RR$counts / p$RR$n_pairs) - 1)
  expect_false("DR" %in% names(f))
  # patches give jackknife errors by default; pair_counts() keeps the
  # patch arrays, wtheta()'s jackknife only their margins, which give the
  # same replicates bit for bit
  rp <- prepare_catalog(ran, n_patches = 5, seed = 1, threads = 1)
  gp <- prepare_catalog(gal, patches = rp$patches, threads = 1)
  full <- list(DD = pair_counts(gp, bins = b, threads = 1),
               DR = pair_counts(gp, rp, bins = b, threads = 1),
               RR = pair_counts(rp, bins = b, threads = 1))
  f <- untrusted_cov_ok(wtheta_from_counts(full$DD, full$DR, full$RR))
  w <- untrusted_cov_ok(wtheta(gp, rp, b, error = "jackknife", threads = 1,
                               check_footprint = FALSE))
  no_counts <- function(x) {
    attr(x, "pair_counts") <- NULL
    strip_time(x)
  }
  expect_identical(no_counts(f), no_counts(w))
  pm <- attr(w, "pair_counts")
  for (k in names(full)) {
    S <- full[[k]]$patch_counts
    m <- pm[[k]]$patch_margins
    expect_null(pm[[k]]$patch_counts)
    expect_identical(m$rows, apply(S, c(1, 3), sum))
    expect_identical(m$cols, apply(S, c(2, 3), sum))
    expect_identical(m$diag, t(vapply(seq_len(5), function(r) S[r, r, ],
                                      numeric(dim(S)[3]))))
    expect_identical(m$total, apply(S, 3, sum))
    # the other fields are those of pair_counts()'s count, but its times
    same <- setdiff(names(full[[k]]), c("patch_counts", "elapsed",
                                        "grid_plan_s", "gpu_ms",
                                        "gpu_idle_s", "patches"))
    expect_identical(pm[[k]][same], full[[k]][same])
  }
  # margins make no bootstrap, and say why
  expect_error(wtheta_from_counts(pm$DD, pm$DR, pm$RR, error = "bootstrap"),
               "`dd` keeps only their margins", fixed = TRUE)
  expect_error(wtheta_from_counts(full$DD, pm$DR, full$RR,
                                  error = "bootstrap"),
               "`dr` keeps only their margins", fixed = TRUE)
  # a jackknife from both forms together is the same again
  expect_identical(
    no_counts(untrusted_cov_ok(wtheta_from_counts(full$DD, pm$DR, pm$RR))),
    no_counts(w))
})

test_that("wtheta_from_counts() refuses counts that do not agree", {
  dd <- pair_counts(gal, bins = b, threads = 1)
  dr <- pair_counts(gal, ran, bins = b, threads = 1)
  rr <- pair_counts(ran, bins = b, threads = 1)
  expect_error(wtheta_from_counts(dd, dr), "`rr` \\(RR\\) is needed by the LS")
  expect_error(wtheta_from_counts(dd, dr, pair_counts(ran, bins = b[-1],
                                                      threads = 1)),
               "`rr` has other bins than `dd`")
  expect_error(wtheta_from_counts(dd, dr, pair_counts(ran, bins = b,
                                                      self_pairs = TRUE,
                                                      threads = 1)),
               "different `self_pairs`")
  expect_error(wtheta_from_counts(pair_counts(gal, bins = b, weights = "w",
                                              threads = 1), dr, rr),
               "`dr` is unweighted but `dd` is weighted")
  expect_error(wtheta_from_counts(dd, dr, pair_counts(ran[-1, ], bins = b,
                                                      threads = 1)),
               "do not count the same random catalog")
  expect_error(wtheta_from_counts(dd, rr, rr), "`dr` \\(DR\\) must count cross")
  expect_error(wtheta_from_counts(dd, dr, pair_counts(ran, bins = b,
                                                      patches = "lab",
                                                      threads = 1)),
               "`rr` has other patches")
  expect_error(wtheta_from_counts(dd, dr, rr, error = "jackknife"),
               "needs counts with patches")
  expect_error(wtheta_from_counts(dd, dr, list()), "pair_counts object")
})

test_that("counts saved in one session give the same w(theta) in another", {
  w <- untrusted_cov_ok(
    wtheta(gal, ran, b, error = "jackknife", weights = "w", n_patches = 5,
           seed = 2, threads = 1, backend = "cpu",
           check_footprint = FALSE))
  f_in <- tempfile(fileext = ".rds")
  f_out <- tempfile(fileext = ".rds")
  on.exit(unlink(c(f_in, f_out)))
  saveRDS(attr(w, "pair_counts"), f_in)
  res <- run_in_child_io(c(
    "library(wtheta)",
    sprintf("p <- readRDS(%s)", deparse(f_in)),
    sprintf("saveRDS(wtheta_from_counts(p$DD, p$DR, p$RR), %s)",
            deparse(f_out))))
  expect_identical(res$status, 0L)
  expect_identical(strip_time(readRDS(f_out)), strip_time(w))
})

# ---- issue 31, round three: impossible or mismatched counts --------------

fc31 <- function() {
  sim <- simulate_catalog(400, seed = 31)
  ran <- random_catalog(800, like = sim, seed = 32)
  b <- theta_bins(0.2, 4, n = 4)
  list(sim = sim, ran = ran, b = b,
       dd = pair_counts(sim, bins = b, threads = 1),
       dr = pair_counts(sim, ran, bins = b, threads = 1),
       rr = pair_counts(ran, bins = b, threads = 1))
}

test_that("wtheta_from_counts() refuses negative or non-finite counts, naming count and bin", {
  k <- fc31()
  dd <- k$dd
  dd$counts[2L] <- -3
  expect_error(wtheta_from_counts(dd, k$dr, k$rr),
               "`dd$counts` has -3 in bin 2 (1.15 to 2.1 degrees): a count must be finite and not negative",
               fixed = TRUE)
  rr <- k$rr
  rr$counts[4L] <- NaN
  expect_error(wtheta_from_counts(k$dd, k$dr, rr),
               "`rr$counts` has NaN in bin 4 ", fixed = TRUE)
  dr <- k$dr
  dr$counts[1L] <- Inf
  expect_error(wtheta_from_counts(k$dd, dr, k$rr), "`dr$counts` has Inf in bin 1",
               fixed = TRUE)
  # hand-built objects: the field named, not "values must be length 1"
  hb <- k$dd
  hb$self_pairs <- NULL
  expect_error(wtheta_from_counts(hb, k$dr, k$rr),
               "`dd$self_pairs` must be TRUE or FALSE, not NULL", fixed = TRUE)
  hb <- k$rr
  hb$counts <- hb$counts[-1L]
  expect_error(wtheta_from_counts(k$dd, k$dr, hb),
               "`rr$counts` must be 4 numbers (one per bin)", fixed = TRUE)
  hb <- k$dr
  hb$n1 <- c(1, 2)
  expect_error(wtheta_from_counts(k$dd, hb, k$rr), "`dr$n1` must be a number of points",
               fixed = TRUE)
  hb <- k$dd
  hb$type <- "both"
  expect_error(wtheta_from_counts(hb, k$dr, k$rr),
               "`dd$type` must be \"auto\" or \"cross\"", fixed = TRUE)
  expect_silent(w <- wtheta_from_counts(k$dd, k$dr, k$rr, error = "none"))
  expect_equal(w$w, wtheta(k$sim, k$ran, k$b, threads = 1, error = "none")$w)
})

test_that("wtheta_from_counts() refuses a DR of other catalogs of the same size", {
  k <- fc31()
  # another random catalog of the same size, elsewhere on the sky: same n,
  # no weights, so only the fingerprint tells it apart
  far <- k$ran
  far$ra <- (far$ra + 120) %% 360
  dr2 <- pair_counts(k$sim, far, bins = k$b, threads = 1)
  expect_error(wtheta_from_counts(k$dd, dr2, k$rr),
               "`dr` and `rr` do not count the same random catalog: both have 800 points, but at other positions",
               fixed = TRUE)
  sim2 <- k$sim
  sim2$dec <- -sim2$dec
  dr3 <- pair_counts(sim2, k$ran, bins = k$b, threads = 1)
  expect_error(wtheta_from_counts(k$dd, dr3, k$rr),
               "`dd` and `dr` do not count the same data catalog", fixed = TRUE)
  # the same catalog in another order, prepared: accepted
  rp <- prepare_catalog(k$ran[rev(seq_len(nrow(k$ran))), ])
  rr2 <- pair_counts(rp, bins = k$b, threads = 1)
  w <- wtheta_from_counts(k$dd, k$dr, rr2, error = "poisson")
  expect_equal(w$w, wtheta_from_counts(k$dd, k$dr, k$rr)$w)
  # counts without fingerprints (made before them) combine as before
  old <- lapply(list(k$dd, dr2, k$rr), function(pc) {
    pc$fingerprint1 <- pc$fingerprint2 <- NULL
    pc
  })
  expect_silent(do.call(wtheta_from_counts, old))
  expect_true(all(abs(wtheta_from_counts(k$dd, dr2, k$rr |> (\(p) {
    p$fingerprint1 <- p$fingerprint2 <- NULL; p })())$w) > 0.5))
})

test_that("fingerprints: kept by write and read, cross counts transposed", {
  k <- fc31()
  expect_identical(k$dd$fingerprint1, k$dd$fingerprint2)
  expect_identical(k$dr$fingerprint1, k$dd$fingerprint1)
  expect_true(wtheta:::same_fingerprint(k$dr$fingerprint2, k$rr$fingerprint1))
  t <- wtheta:::transpose_counts(k$dr)
  expect_identical(t$fingerprint1, k$dr$fingerprint2)
  f <- tempfile(fileext = ".csv")
  on.exit(unlink(c(f, sub("\\.csv$", "-attributes.rds", f))), add = TRUE)
  write_pair_counts(k$dr, f)
  expect_identical(read_pair_counts(f)$fingerprint2, k$dr$fingerprint2)
})

test_that("a fingerprint is the documented integer sums, on any number of threads", {
  set.seed(8)
  cat <- random_catalog(5000, seed = 8)
  xyz <- wtheta:::unit_vectors(cat, 1)
  # xyz rounded half to even to 2^-16 (R's round()), shifted by 65536
  q <- round(xyz * 65536) + 65536
  h1 <- (q[, 1] * 1048573 + q[, 2] * 1048571 + q[, 3] * 1048559) %% 1048549
  h2 <- (q[, 1] * 999983 + q[, 2] * 1000003 + q[, 3] * 999979) %% 1048343
  want <- list(n = 5000, sums = c(sum(q[, 1]), sum(q[, 2]), sum(q[, 3]),
                                  sum(h1), sum(h2)))
  expect_identical(wtheta:::catalog_fingerprint(xyz), want)
  expect_identical(wtheta:::catalog_fingerprint(xyz, threads = 2L), want)
  # a component on an exact half of 2^-16 rounds to even, as round() does
  half <- xyz
  half[1, ] <- c(0.5 + 0.5 / 65536, 0, 0)
  qh <- round(half * 65536) + 65536
  expect_identical(wtheta:::catalog_fingerprint(half)$sums[1:3],
                   colSums(qh))
  # the order of the points does not matter; one point moved does
  expect_identical(wtheta:::catalog_fingerprint(xyz[5000:1, ]), want)
  moved <- xyz
  moved[17, ] <- c(0, 0, 1)
  expect_false(identical(wtheta:::catalog_fingerprint(moved), want))
})

test_that("wtheta_from_counts() warns of a singular covariance", {
  set.seed(44)
  ran <- random_sky(800, ra = c(0, 30), dec = c(-15, 15))
  gal <- random_sky(400, ra = c(0, 30), dec = c(-15, 15))
  rp <- prepare_catalog(ran, n_patches = 4, seed = 1, threads = 1)
  gp <- prepare_catalog(gal, patches = rp$patches, threads = 1)
  b <- theta_bins(0.5, 5, n = 6, log = TRUE)
  counts <- list(pair_counts(gp, bins = b, threads = 1),
                 pair_counts(gp, rp, bins = b, threads = 1),
                 pair_counts(rp, bins = b, threads = 1))
  expect_warning(do.call(wtheta_from_counts, counts),
                 "jackknife covariance of 6 bins from 4 patches is singular")
  b3 <- theta_bins(0.5, 5, n = 3, log = TRUE)
  counts <- list(pair_counts(gp, bins = b3, threads = 1),
                 pair_counts(gp, rp, bins = b3, threads = 1),
                 pair_counts(rp, bins = b3, threads = 1))
  expect_no_warning(do.call(wtheta_from_counts, counts))
})
