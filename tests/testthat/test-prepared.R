# prepare_catalog(): prepared catalogs give the results of unprepared ones

fx <- prepared_setup()
gal <- fx$gal
ran <- fx$ran
b <- fx$b

test_that("a prepared catalog holds unit vectors, weights and patches", {
  gp <- prepare_catalog(gal, weights = "w", threads = 1)
  expect_s3_class(gp, "wtheta_prepared")
  expect_identical(gp$n, 400L)
  u <- ref_unit(gal)
  expect_equal(unname(gp$xyz), cbind(u$x, u$y, u$z), tolerance = 1e-15)
  expect_identical(gp$weights, gal$w)
  expect_null(gp$patch)
  expect_true(is.environment(gp$handle))
  # copies share the handle
  gp2 <- gp
  assign("x", 1, envir = gp$handle)
  expect_identical(get("x", envir = gp2$handle), 1)
  expect_output(print(gp), "400 points, weighted, no patches")

  p <- sky_patches(ran, n_patches = 4, seed = 1, threads = 1)
  gq <- prepare_catalog(gal, weights = "w", patches = p, threads = 1)
  lab <- patch_labels(p, gal, threads = 1)
  ord <- order(lab)
  # grouped by patch, stably, with the weights alongside
  expect_equal(unname(gq$xyz), cbind(u$x, u$y, u$z)[ord, ], tolerance = 1e-15)
  expect_identical(gq$weights, gal$w[ord])
  expect_identical(as.vector(gq$patch), sort(lab))
  expect_identical(unname(attr(gq$patch, "ranges")[, "end"]),
                   as.double(cumsum(tabulate(lab, 4))))
  expect_output(print(gq), "4 k-means patches")

  gl <- prepare_catalog(gal, patches = "lab", threads = 1)
  expect_identical(gl$patches, c(3, 7, 9))
  expect_identical(as.vector(gl$patch), sort(match(gal$lab, c(3, 7, 9))))

  expect_error(prepare_catalog(gal, weights = "nope"), "nope")
  expect_error(prepare_catalog(gp), "prepared catalog already")
  expect_error(prepare_catalog(gal, patches = p, n_patches = 3),
               "not both")
})

test_that("pair_counts() of prepared catalogs are those of the catalogs", {
  gp <- prepare_catalog(gal, weights = "w", threads = 1)
  rp <- prepare_catalog(ran, threads = 1)
  dd <- pair_counts(gp, bins = b, threads = 1, backend = "cpu")
  expect_equal(slots_of(dd), ref_slots(gal, NULL, b))
  expect_equal(c(dd$weighted_below, dd$weighted, dd$weighted_above),
               ref_weighted(gal, NULL, b, gal$w), tolerance = 1e-12)
  expect_identical(strip_count(dd),
                   strip_count(pair_counts(gal, bins = b, weights = "w",
                                           threads = 1, backend = "cpu")))
  # a weighted prepared catalog against an unprepared one: unit weights
  dr <- pair_counts(gp, ran, bins = b, threads = 1, backend = "cpu")
  expect_identical(strip_count(dr),
                   strip_count(pair_counts(gal, ran, bins = b, weights = "w",
                                           threads = 1, backend = "cpu")))
  expect_equal(dr$weighted, ref_weighted(gal, ran, b, gal$w,
                                         rep(1, 900))[2:7],
               tolerance = 1e-12)
  # labels: the union of the catalogs' labels numbers the patches
  gl <- prepare_catalog(gal, patches = "lab", threads = 1)
  rl <- prepare_catalog(ran, patches = "lab", threads = 1)
  pl <- pair_counts(gl, rl, bins = b, threads = 1, backend = "cpu")
  ref <- pair_counts(gal, ran, bins = b, patches = "lab", threads = 1,
                     backend = "cpu")
  expect_identical(strip_count(pl), strip_count(ref))
  expect_identical(pl$patches, c(3, 5, 7, 9))
  expect_equal(sum(pl$patch_counts[1, 2, ]),
                   sum(ref_slots(gal[gal$lab == 3, ], ran[ran$lab == 5, ],
                                 b)[2:7]))
})

test_that("wtheta() of prepared catalogs is that of the catalogs", {
  for (err in c("poisson", "jackknife", "bootstrap")) {
    args <- list(bins = b, error = err, n_patches = 5, seed = 4,
                 n_boot = 20, threads = 1, backend = "cpu",
                 check_footprint = FALSE)
    plain <- untrusted_cov_ok(
      do.call(wtheta, c(list(gal, ran, weights = "w"), args)))
    prep <- untrusted_cov_ok(
      do.call(wtheta, c(list(prepare_catalog(gal, weights = "w"),
                             prepare_catalog(ran)), args)))
    expect_identical(strip_time(prep), strip_time(plain))
  }
  # a prepared random with patches: its patches are used
  rp <- prepare_catalog(ran, n_patches = 5, seed = 9, threads = 1)
  w1 <- untrusted_cov_ok(
    wtheta(gal, rp, b, error = "jackknife", threads = 1,
           backend = "cpu"))
  w2 <- untrusted_cov_ok(
    wtheta(gal, ran, b, error = "jackknife", patches = rp$patches,
           threads = 1, backend = "cpu"))
  expect_identical(strip_time(w1), strip_time(w2))
  expect_identical(attr(w1, "n_patches"), 5L)
  # other patches are refused
  gp <- prepare_catalog(gal, n_patches = 5, seed = 1, threads = 1)
  expect_error(wtheta(gp, rp, b, error = "jackknife", threads = 1),
               "other patches")
  expect_error(wtheta(gal, rp, b, error = "jackknife", threads = 1,
                      patches = sky_patches(ran, 5, seed = 2)),
               "other patches")
  expect_error(wtheta(prepare_catalog(gal, patches = "lab"), rp, b,
                      error = "jackknife", threads = 1),
               "different patches")
  expect_error(wtheta(prepare_catalog(gal, patches = "lab"), ran, b,
                      error = "jackknife", threads = 1),
               "has no patch labels")
  expect_error(wtheta(gal, prepare_catalog(ran), b, threads = 1,
                      weights = list(random = "w")),
               "prepared catalog")
  # labels with different sets per catalog: numbered by their union, as
  # wtheta() numbers them
  wl <- untrusted_cov_ok(
    wtheta(prepare_catalog(gal, patches = "lab"),
           prepare_catalog(ran, patches = "lab"), b, error = "jackknife",
           threads = 1, backend = "cpu", check_footprint = FALSE))
  wr <- untrusted_cov_ok(
    wtheta(gal, ran, b, error = "jackknife", patches = "lab",
           threads = 1, backend = "cpu", check_footprint = FALSE))
  expect_identical(strip_time(wl), strip_time(wr))
})


# ---- issue 31, round three: a copy of a prepared catalog, edited ------------

test_that("an edited copy of a prepared catalog counts as edited, or is refused by name", {
  ran <- random_catalog(1500, seed = 312)
  b <- theta_bins(0.5, 5, n = 4)
  rp <- prepare_catalog(ran, n_patches = 4, seed = 1)
  r1 <- pair_counts(rp, bins = b, threads = 1)
  # weights set on a copy: its own C catalog, weighted counts of 2 x 2
  p2 <- rp
  p2$weights <- rep(2, p2$n)
  r2 <- pair_counts(p2, bins = b, threads = 1)
  expect_identical(r2$weighted, 4 * r1$counts)
  # a point moved: the counts of the moved catalog, as brute force says
  p3 <- rp
  p3$xyz[1L, ] <- c(0, 0, 1)
  r3 <- pair_counts(p3, bins = b, threads = 1)
  radec <- rp$radec
  k <- which(rowSums(abs(wtheta:::unit_vectors(radec, 1L) -
                           matrix(rp$xyz[1L, ], nrow(radec), 3L, byrow = TRUE))) == 0)
  radec[k[1L], ] <- list(0, 90)
  expect_identical(r3$counts, pair_counts(radec, bins = b, threads = 1)$counts)
  # the original is untouched by its copies
  expect_identical(pair_counts(rp, bins = b, threads = 1)$counts, r1$counts)
  # parts of other sizes: an error naming the argument
  p4 <- rp
  p4$xyz <- p4$xyz[-1L, ]
  expect_error(pair_counts(p4, bins = b, threads = 1),
               "`x` is a prepared catalog whose `n` (1500) is not the 1499 rows of `xyz`: it was edited after prepare_catalog()",
               fixed = TRUE)
  p5 <- rp
  p5$weights <- c(1, 2)
  expect_error(wtheta(random_catalog(300, seed = 1), p5, b, threads = 1),
               "`random` is a prepared catalog whose `weights` are not 1500 finite numbers",
               fixed = TRUE)
  p6 <- rp
  p6$xyz <- "no"
  expect_error(pair_counts(p6, bins = b, threads = 1),
               "`x` is a prepared catalog whose `xyz` is not a matrix of finite unit vectors",
               fixed = TRUE)
})
