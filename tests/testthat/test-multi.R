# wtheta_multi(): every auto and cross correlation, each identical to the
# separate wtheta() call, and their joint covariance

strip_time <- function(x) {
  attr(x, "elapsed") <- NULL
  attr(x, "footprint_check") <- NULL
  pcs <- attr(x, "pair_counts")
  if (!is.null(pcs)) {
    attr(x, "pair_counts") <- lapply(pcs, function(pc) {
      pc$elapsed <- NULL
      pc$grid_plan_s <- NULL
      pc
    })
  }
  x
}

set.seed(21)
sky <- function(n) random_sky(n, ra = c(0, 30), dec = c(-15, 15))
z <- list(a = sky(300), b = sky(250), c = sky(200))
for (k in names(z)) z[[k]]$w <- runif(nrow(z[[k]]), 0.5, 2)
ran <- sky(800)
bins <- theta_bins(0.5, 20, n = 5, log = TRUE)

test_that("each entry is the separate wtheta() call, errors included", {
  # a count each, bit for bit as wtheta()'s; test-multi-labels.R compares
  # the labelled counts (the CPU's default) with these
  old <- options(wtheta.labels = FALSE)
  on.exit(options(old), add = TRUE)
  for (err in c("jackknife", "bootstrap", "poisson")) {
    for (wt in list(NULL, "w")) {
      m <- untrusted_cov_ok(
        wtheta_multi(z, ran, bins, error = err, weights = wt,
                     n_patches = 6, seed = 5, n_boot = 25, threads = 1,
                     backend = "cpu", check_footprint = FALSE))
      e <- attr(m, "entries")
      expect_named(e, c("a-a", "a-b", "a-c", "b-b", "b-c", "c-c"))
      for (i in names(z)) {
        for (j in names(z)) {
          if (match(j, names(z)) < match(i, names(z))) next
          sep <- if (i == j) {
            untrusted_cov_ok(
              wtheta(z[[i]], ran, bins, error = err, weights = wt,
                     n_patches = 6, seed = 5, n_boot = 25, threads = 1,
                     backend = "cpu", check_footprint = FALSE))
          } else {
            untrusted_cov_ok(
              wtheta(z[[i]], ran, bins, data2 = z[[j]], error = err,
                     weights = wt, n_patches = 6, seed = 5, n_boot = 25,
                     threads = 1, backend = "cpu", check_footprint = FALSE))
          }
          expect_identical(strip_time(e[[paste0(i, "-", j)]]),
                           strip_time(sep))
        }
      }
      # RR once, each sample against the randoms once, each pair once
      expect_length(attr(m, "pair_counts"), 1 + 3 + 6)
    }
  }
})

test_that("the counts are brute-force counts", {
  m <- wtheta_multi(z, ran, bins, threads = 1, backend = "cpu",
                    check_footprint = FALSE)
  p <- attr(attr(m, "entries")[["a-c"]], "pair_counts")
  expect_equal(p$D1D2$counts, ref_slots(z$a, z$c, bins)[2:6])
  expect_equal(p$D1R2$counts, ref_slots(z$a, ran, bins)[2:6])
  expect_equal(p$R1D2$counts, ref_slots(ran, z$c, bins)[2:6])
  expect_equal(p$R1R2$counts, ref_slots(ran, NULL, bins)[2:6])
  d <- as.data.frame(m)
  expect_identical(names(d), c("i", "j", "theta_lo", "theta_hi", "theta",
                               "w", "w_err"))
  expect_identical(levels(d$i), c("a", "b", "c"))
  expect_identical(nrow(d), 6L * 5L)
  ac <- d[d$i == "a" & d$j == "c", ]
  n <- function(pc) pc$counts / pc$n_pairs
  expect_equal(ac$w, (n(p$D1D2) - n(p$D1R2) - n(p$R1D2) + n(p$R1R2)) /
                 n(p$R1R2))
})

test_that("per-sample randoms and self pairs follow wtheta()", {
  old <- options(wtheta.labels = FALSE)   # as above
  on.exit(options(old), add = TRUE)
  rs <- list(a = sky(700), b = sky(600), c = sky(650))
  pt <- sky_patches(rs$a, n_patches = 5, seed = 2, threads = 1)
  m <- untrusted_cov_ok(
    wtheta_multi(z, rs[c("c", "a", "b")], bins, error = "jackknife",
                 patches = pt, threads = 1, backend = "cpu",
                 check_footprint = FALSE))
  e <- attr(m, "entries")
  expect_identical(strip_time(e[["a-b"]]),
                   strip_time(untrusted_cov_ok(
                     wtheta(z$a, rs$a, bins, data2 = z$b,
                            random2 = rs$b, error = "jackknife",
                            patches = pt, threads = 1,
                            backend = "cpu",
                            check_footprint = FALSE))))
  expect_identical(strip_time(e[["c-c"]]),
                   strip_time(untrusted_cov_ok(
                     wtheta(z$c, rs$c, bins, error = "jackknife",
                            patches = pt, threads = 1,
                            backend = "cpu",
                            check_footprint = FALSE))))
  # K^2 data-random counts, K(K + 1) / 2 random-random, 6 data-data
  expect_length(attr(m, "pair_counts"), 9 + 6 + 6)

  s <- wtheta_multi(z, ran, bins, self_pairs = TRUE, threads = 1,
                    backend = "cpu", check_footprint = FALSE)
  e <- attr(s, "entries")
  expect_identical(strip_time(e[["b-b"]]),
                   strip_time(wtheta(z$b, ran, bins, self_pairs = TRUE,
                                     threads = 1, backend = "cpu",
                                     check_footprint = FALSE)))
  expect_identical(strip_time(e[["a-b"]]),
                   strip_time(wtheta(z$a, ran, bins, data2 = z$b,
                                     threads = 1, backend = "cpu",
                                     check_footprint = FALSE)))
})

test_that("wtheta_cov() is the joint covariance of the stacked replicates", {
  m <- untrusted_cov_ok(
    wtheta_multi(z, prepare_catalog(ran, n_patches = 6, seed = 3), bins,
                 error = "jackknife", threads = 1, backend = "cpu",
                 check_footprint = FALSE))
  e <- attr(m, "entries")
  reps <- do.call(rbind, lapply(e, attr, "replicates"))
  expect_identical(dim(reps), c(30L, 6L))
  d <- reps - rowMeans(reps)
  manual <- 5 / 6 * d %*% t(d)
  cv <- wtheta_cov(m)
  expect_s3_class(cv, "wtheta_cov")
  expect_equal(unname(as.matrix(cv)), unname(manual), tolerance = 1e-12)
  # diagonal blocks are each correlation's own covariance
  expect_equal(unname(as.matrix(cv)[6:10, 6:10]),
               unname(attr(e[["a-b"]], "cov")), tolerance = 1e-12)
  expect_equal(m$w_err, unname(sqrt(diag(as.matrix(cv)))), tolerance = 1e-12)
  expect_identical(rownames(as.matrix(cv))[6], paste("a b",
                                                     format(m$theta)[6]))
  # bootstrap: one draw of patches for all correlations
  mb <- untrusted_cov_ok(
    wtheta_multi(z, ran, bins, error = "bootstrap", n_patches = 6,
                 n_boot = 40, seed = 8, threads = 1, backend = "cpu",
                 check_footprint = FALSE))
  rb <- do.call(rbind, lapply(attr(mb, "entries"), attr, "replicates"))
  expect_equal(unname(as.matrix(wtheta_cov(mb))), unname(stats::cov(t(rb))),
               tolerance = 1e-12)
  mp <- wtheta_multi(z, ran, bins, threads = 1, check_footprint = FALSE)
  expect_equal(unname(diag(as.matrix(wtheta_cov(mp)))), mp$w_err^2)
})

test_that("print, plot and autoplot draw every correlation", {
  m <- wtheta_multi(z[1:2], ran, bins, threads = 1, check_footprint = FALSE)
  expect_output(print(m), "2 samples \\(a, b\\): 3 correlations, 5 bins")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_identical(plot(m), m)
  r <- plot(wtheta_cov(m))
  cv <- as.matrix(wtheta_cov(m))
  expect_equal(r, cv / sqrt(outer(diag(cv), diag(cv))))
  expect_identical(attr(wtheta_cov(m), "blocks"), c("a-a", "a-b", "b-b"))
  skip_if_not_installed("ggplot2")
  g <- ggplot2::autoplot(m)
  expect_s3_class(g, "ggplot")
  expect_identical(nrow(g$data), 15L)
  # whole correlations stay a wtheta_multi result (test-multi_io.R)
  expect_s3_class(m[m$i == "a", ], "wtheta_multi")
  expect_identical(nrow(m[m$i == "a", ]), 10L)
  expect_false(inherits(m[m$w > 0, c("i", "w")], "wtheta_multi"))
})

test_that("wtheta_multi() refuses bad input, naming the argument", {
  expect_error(wtheta_multi(z$a, ran, bins), "`data` must be a named list")
  expect_error(wtheta_multi(unname(z), ran, bins), "every sample needs a name")
  expect_error(wtheta_multi(list(a = z$a, a = z$b), ran, bins),
               "two samples named")
  expect_error(wtheta_multi(z, list(ran, ran), bins),
               "list of one per sample \\(3\\), not a list of 2")
  expect_error(wtheta_multi(z, list(x = ran, y = ran, a = ran), bins),
               "not by the samples")
  expect_error(wtheta_multi(z, ran, bins, weights = list(a = "w")),
               "`weights` must be NULL, the name of a column, or a list")
  expect_error(wtheta_multi(z, ran, bins, weights = list(data = list(q = 1))),
               "`weights$data` must be a list named by sample (a, b, c)",
               fixed = TRUE)
  expect_error(wtheta_multi(list(a = z$a, b = data.frame(x = 1)), ran, bins),
               "`data\\$b` has no column")
  expect_error(wtheta_multi(z, ran, bins, error = "jackknife",
                            patches = "lab"),
               "`patches$data$a` names column \"lab\", which `data$a`",
               fixed = TRUE)
})

# ---- issue 35: weights as vectors and patches as labels, as wtheta() ----

test_that("wtheta_multi() takes weights as vectors and patches as labels", {
  s1 <- simulate_catalog(300, seed = 11)
  s2 <- simulate_catalog(250, seed = 12)
  r <- random_catalog(500, like = s1, seed = 13)
  w1 <- seq(0.5, 1.5, length.out = 300)
  wr <- seq(2, 1, length.out = 500)
  b <- theta_bins(0.1, 5, n = 5, log = TRUE)
  lab <- function(x) as.integer(x$ra %/% 4)
  tomo <- untrusted_cov_ok(
    wtheta_multi(list(a = s1, b = s2), r, b,
                 weights = list(data = list(a = w1), random = wr),
                 error = "jackknife",
                 patches = list(data = list(a = lab(s1), b = lab(s2)),
                                random = lab(r)),
                 threads = 1, progress = FALSE))
  # each correlation as wtheta() gives it with the same vectors and labels
  aa <- untrusted_cov_ok(
    wtheta(s1, r, b, weights = list(data = w1, random = wr),
           error = "jackknife",
           patches = list(data = lab(s1), random = lab(r)), threads = 1,
           progress = FALSE))
  ab <- untrusted_cov_ok(
    wtheta(s1, r, b, data2 = s2,
           weights = list(data = w1, random = wr),
           error = "jackknife",
           patches = list(data = lab(s1), data2 = lab(s2),
                          random = lab(r)),
           threads = 1, progress = FALSE))
  e <- attr(tomo, "entries")
  # weighted sums: on the CPU counted with labels (the samples together),
  # on a GPU (backend "auto") in the order of its atomic adds: to about
  # 1e-15
  expect_equal(e[["a-a"]]$DD, aa$DD, tolerance = 1e-12)
  expect_equal(e[["a-a"]]$DR, aa$DR, tolerance = 1e-12)
  expect_equal(e[["a-a"]]$w_err, aa$w_err, tolerance = 1e-12)
  expect_equal(e[["a-b"]]$D1D2, ab$D1D2, tolerance = 1e-12)
  expect_equal(e[["a-b"]]$w, ab$w, tolerance = 1e-12)
  expect_equal(e[["a-b"]]$w_err, ab$w_err, tolerance = 1e-12)
  expect_true(isTRUE(attr(tomo, "weighted")))
  expect_false(all(e[["a-a"]]$DD == round(e[["a-a"]]$DD)))
  # b has unit weights: its auto-correlation is the unweighted one
  bb <- wtheta(s2, r, b, weights = list(random = wr), threads = 1,
               progress = FALSE, error = "none")
  expect_identical(e[["b-b"]]$DD, bb$DD)
  # randoms per sample take a list named by sample
  t2 <- wtheta_multi(list(a = s1, b = s2), list(a = r, b = r), b,
                     weights = list(random = list(b = wr)), error = "none",
                     threads = 1, progress = FALSE)
  expect_equal(attr(t2, "entries")[["b-b"]]$DR, bb$DR, tolerance = 1e-12)
  expect_identical(attr(t2, "entries")[["a-a"]]$DR,
                   wtheta(s1, r, b, error = "none", threads = 1,
                          progress = FALSE)$DR)
  # errors name the element
  expect_error(wtheta_multi(list(a = s1, b = s2), r, b,
                            weights = list(data = list(a = w1[-1]))),
               "`weights$data$a` must hold one value per row of `data$a` (300), not 299",
               fixed = TRUE)
  expect_error(wtheta_multi(list(a = s1, b = s2), r, b, error = "jackknife",
                            patches = list(data = list(a = lab(s1)),
                                           random = lab(r))),
               "`patches` gives no patch labels for `data$b`", fixed = TRUE)
  expect_error(wtheta_multi(list(a = s1, b = s2), list(a = r, b = r), b,
                            weights = list(random = wr)),
               "`weights$random` must be a list named by sample (a, b)",
               fixed = TRUE)
})

test_that("wtheta_multi() records the seed and warns as wtheta() does", {
  s <- list(a = z$a, b = z$b)
  wide <- theta_bins(0.5, 5, n = 3, log = TRUE)
  run <- function(...) {
    wtheta_multi(s, ran, threads = 1, backend = "cpu",
                 check_footprint = FALSE, progress = FALSE, ...)
  }
  # 3 correlations x 3 bins = 9 values from 10 patches: no warning; the
  # seed (1 by default) recorded as in each entry and printed
  m <- expect_no_warning(run(wide, error = "jackknife", n_patches = 10))
  expect_identical(attr(m, "seed"), 1L)
  expect_identical(attr(m, "seed"),
                   attr(attr(m, "entries")[["a-b"]], "seed"))
  expect_match(capture.output(print(m))[2],
               "jackknife errors (10 patches, seed 1, joint covariance)",
               fixed = TRUE)
  expect_identical(attr(run(wide, error = "bootstrap", n_patches = 10,
                            n_boot = 20, seed = 6), "seed"), 6L)
  expect_null(attr(run(wide, error = "poisson"), "seed"))
  # the joint covariance: 9 values from 9 patches is singular, though each
  # correlation's 3 bins are not
  expect_warning(run(wide, error = "jackknife", n_patches = 9),
                 paste0("the jackknife covariance of 9 values \\(3 ",
                        "correlations x 3 bins\\) from 9 patches is singular ",
                        "\\(rank at most 8\\).*`n_patches` > 9"))
  expect_warning(run(wide, error = "bootstrap", n_patches = 10, n_boot = 8),
                 paste0("of 9 values .* from 8 bootstrap draws is ",
                        "singular.*`n_boot` > 9"))
  # patches (about 10 degrees across on this 30 x 30 degree sky) smaller
  # than the largest angle, 20 degrees
  expect_warning(run(theta_bins(1, 20, n = 2, log = TRUE),
                     error = "jackknife", n_patches = 10),
                 "patches are about .* less than the largest angle \\(20")
})
