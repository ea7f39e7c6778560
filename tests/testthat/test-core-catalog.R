# A prepared catalog (src/core/catalog.c) keeps its grid (points sorted by
# cell, trees): wtheta() builds each catalog's grid once for DD, DR and RR,
# and the counts are those without a grid.

builds <- function() wtheta:::grid_builds()

# the grid builds a call makes, and its value
counting_builds <- function(mode, code) {
  old <- options(wtheta.grid = mode)
  on.exit(options(old))
  b0 <- builds()
  value <- code
  list(builds = builds() - b0, value = value)
}

# everything a wtheta() result holds but the times
counts_of <- function(w) {
  pcs <- lapply(attr(w, "pair_counts"), function(pc) {
    pc$elapsed <- NULL
    pc$grid_plan_s <- NULL
    pc$pairs_skipped <- NULL
    unclass(pc)
  })
  list(table = as.data.frame(w), pcs = pcs, cov = attr(w, "cov"))
}

sky_box <- function(n) random_sky(n, ra = c(0, 30), dec = c(-15, 15))

test_that("wtheta() builds each catalog's grid once, and counts as without", {
  set.seed(41)
  d <- sky_box(3000)
  r <- sky_box(5000)
  e <- c(0.05, 0.3, 0.8, 2)
  run <- function(...) wtheta(d, r, bins = e, backend = "cpu",
                              threads = test_threads(),
                              check_footprint = FALSE, progress = FALSE, ...)
  grid <- counting_builds(TRUE, run())
  none <- counting_builds(FALSE, run())
  expect_identical(grid$builds, 2)            # data and random, once each
  expect_identical(none$builds, 0)
  expect_identical(counts_of(grid$value), counts_of(none$value))
  skipped <- vapply(attr(grid$value, "pair_counts"), `[[`, 0, "pairs_skipped")
  expect_true(all(skipped > 0))               # every count used the grid
  # the same with pruning only, and in auto mode (these counts are too
  # small for it to pay: no grid)
  prune <- counting_builds("prune", run())
  expect_identical(prune$builds, 2)
  expect_identical(counts_of(prune$value), counts_of(none$value))
  auto <- counting_builds("auto", run())
  expect_identical(auto$builds, 0)
  expect_identical(counts_of(auto$value), counts_of(none$value))
})

test_that("wtheta() with jackknife patches and weights builds each grid once", {
  set.seed(42)
  d <- sky_box(2500)
  r <- sky_box(4000)
  d$w <- runif(2500, 0.5, 1.5)
  r$w <- runif(4000, 0.5, 1.5)
  run <- function() wtheta(d, r, bins = c(0.1, 0.5, 1, 2.5), backend = "cpu",
                           threads = test_threads(), error = "jackknife",
                           n_patches = 6, seed = 3, weights = "w",
                           check_footprint = FALSE, progress = FALSE)
  grid <- counting_builds(TRUE, run())
  none <- counting_builds(FALSE, run())
  expect_identical(grid$builds, 2)
  # pair counts are identical; weighted sums agree to rounding (the grid
  # adds whole node pairs' W_a W_b, so they are summed in another order)
  for (nm in c("DD", "DR", "RR")) {
    g <- attr(grid$value, "pair_counts")[[nm]]
    n <- attr(none$value, "pair_counts")[[nm]]
    expect_gt(g$pairs_skipped, 0)
    expect_identical(slots_of(g), slots_of(n))
    expect_identical(g$patch_counts, n$patch_counts)
    expect_equal(g$weighted, n$weighted, tolerance = 1e-12)
    expect_equal(g$patch_weighted, n$patch_weighted, tolerance = 1e-12)
  }
  expect_equal(grid$value$w, none$value$w, tolerance = 1e-10)
  expect_equal(grid$value$w_err, none$value$w_err, tolerance = 1e-10)
})

test_that("a cross-correlation builds one grid per catalog", {
  set.seed(43)
  d1 <- sky_box(1500)
  d2 <- sky_box(1800)
  r <- sky_box(2500)
  run <- function() wtheta(d1, r, data2 = d2, bins = c(0.1, 1, 2),
                           backend = "cpu", threads = test_threads(),
                           check_footprint = FALSE, progress = FALSE)
  grid <- counting_builds(TRUE, run())
  expect_identical(grid$builds, 3)            # data, data2, random
  expect_identical(counts_of(grid$value),
                   counts_of(counting_builds(FALSE, run())$value))
})

test_that("pair_counts() builds one grid per catalog", {
  set.seed(44)
  x <- sky_box(2000)
  y <- sky_box(2500)
  e <- c(0, 0.5, 1, 3)
  auto <- counting_builds(TRUE, pair_counts(x, bins = e, backend = "cpu",
                                            threads = test_threads()))
  expect_identical(auto$builds, 1)
  expect_equal(slots_of(auto$value), ref_slots(x, NULL, e))
  cross <- counting_builds(TRUE, pair_counts(x, y, bins = e, backend = "cpu",
                                             threads = test_threads()))
  expect_identical(cross$builds, 2)
  expect_equal(slots_of(cross$value), ref_slots(x, y, e))
})

test_that("a catalog handle keeps its grid for counts with the same cells", {
  set.seed(45)
  x <- sky_box(2000)
  y <- sky_box(1500)
  ux <- wtheta:::unit_vectors(x, 1L)
  uy <- wtheta:::unit_vectors(y, 1L)
  run <- list(backend = "cpu", devices = integer())
  hx <- wtheta:::new_catalog_handle()
  hy <- wtheta:::new_catalog_handle()
  count <- function(a, b, e, ha, hb) {
    wtheta:::count_pairs(a, b, e, FALSE, run, test_threads(), ha = ha,
                         hb = hb)
  }
  e1 <- c(0, 0.5, 2)
  e2 <- c(0, 1, 4)                            # another last edge: other cells
  first <- counting_builds(TRUE, count(ux, NULL, e1, hx, NULL))
  again <- counting_builds(TRUE, count(ux, uy, e1, hx, hy))
  expect_identical(c(first$builds, again$builds), c(1, 1))   # only y's
  expect_equal(slots_of(first$value), ref_slots(x, NULL, e1))
  expect_equal(slots_of(again$value), ref_slots(x, y, e1))
  other <- counting_builds(TRUE, count(ux, uy, e2, hx, hy))
  expect_identical(other$builds, 2)           # both again, for other cells
  expect_equal(slots_of(other$value), ref_slots(x, y, e2))
  # released, the grid is built again when a count needs it
  wtheta:::catalog_release(hx)
  after <- counting_builds(TRUE, count(ux, NULL, e2, hx, NULL))
  expect_identical(after$builds, 1)
  expect_equal(slots_of(after$value), ref_slots(x, NULL, e2))
  # read back from a saved session, a handle makes its C catalog again
  f <- withr_tempfile()
  saveRDS(hx, f)
  back <- readRDS(f)
  again <- counting_builds(TRUE, count(ux, NULL, e2, back, NULL))
  expect_identical(again$builds, 1)
  expect_identical(slots_of(again$value), slots_of(after$value))
  # a handle belongs to one set of points
  expect_error(count(uy, NULL, e1, hx, NULL),
               "a catalog handle used for other points")
})

test_that("a prepared catalog keeps its grid from one call to the next", {
  set.seed(43)
  d <- sky_box(2000)
  r <- sky_box(4000)
  r$w <- runif(4000, 0.5, 1.5)
  e <- c(0.05, 0.3, 0.8, 2)
  P <- sky_patches(r, 6, seed = 1, threads = 1)
  rp <- prepare_catalog(r, weights = "w", patches = P, threads = 1)
  run <- function(rand, ...) wtheta(d, rand, bins = e, backend = "cpu",
                                    threads = test_threads(), weights = "w",
                                    check_footprint = FALSE,
                                    progress = FALSE, ...)
  first <- counting_builds(TRUE, run(rp, error = "jackknife", patches = P))
  # the data's grid is the call's own, the randoms' is the prepared one's
  expect_identical(first$builds, 2)
  again <- counting_builds(TRUE, run(rp, error = "jackknife", patches = P))
  expect_identical(again$builds, 1)           # the data's only
  # the same as unprepared (with the grid: its bulk sums of weights add in
  # another order than pair by pair)
  plain <- counting_builds(TRUE, run(r, error = "jackknife", patches = P))
  expect_identical(plain$builds, 2)
  expect_identical(counts_of(again$value), counts_of(plain$value))
  # without resampling the call drops the patches: another C catalog (one
  # range), the call's own, and the prepared one's grid is left as it was
  nopatch <- counting_builds(TRUE, run(rp, error = "poisson"))
  expect_identical(nopatch$builds, 2)
  expect_identical(counts_of(nopatch$value),
                   counts_of(counting_builds(TRUE, run(r))$value))
  expect_identical(counting_builds(TRUE, run(rp, error = "jackknife",
                                             patches = P))$builds, 1)
  # an unweighted prepared catalog in a weighted call gets unit weights: a
  # catalog of the call's own too
  d$w <- runif(2000, 0.5, 1.5)
  ru <- prepare_catalog(r[c("ra", "dec")], threads = 1)
  pc1 <- counting_builds(TRUE, run(ru))
  expect_identical(pc1$builds, 2)
  expect_identical(counts_of(pc1$value),
                   counts_of(counting_builds(TRUE,
                                             run(r[c("ra", "dec")]))$value))
})
