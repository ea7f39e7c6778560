# Pruning by the last edge (src/core/grid_build.c, grid_walk.c) must not
# change a single count.

grid_vs_brute <- function(x, y, e, sp = FALSE, patches = NULL) {
  a <- with_grid(TRUE, pair_counts(x, y, e, self_pairs = sp, backend = "cpu",
                                   threads = test_threads(),
                                   patches = patches))
  expect_equal(slots_of(a), ref_slots(x, y, e, self_pairs = sp))
  b <- with_grid(FALSE, pair_counts(x, y, e, self_pairs = sp,
                                    backend = "cpu",
                                    threads = test_threads(),
                                    patches = patches))
  expect_identical(slots_of(a), slots_of(b))
  expect_identical(a$patch_counts, b$patch_counts)
  expect_identical(b$pairs_skipped, 0)
  a
}

test_that("the grid skips far pairs and counts exactly what brute force does", {
  set.seed(31)
  x <- random_sky(1500)
  y <- random_sky(1200)
  a <- grid_vs_brute(x, NULL, c(0, 0.5, 2, 5))
  # pairs closer than 5 degrees are under 0.2% of the sky's pairs; with
  # cells of 5/3 degree the grid visits a small share of the rest
  expect_gt(a$pairs_skipped, 0.9 * a$n_pairs)
  expect_equal(a$n_above, a$n_pairs - sum(a$counts) - a$n_below)
  grid_vs_brute(x, y, c(0.1, 1, 3, 10))
  grid_vs_brute(x, NULL, c(0, 1, 10, 40), sp = TRUE)
})

test_that("the grid is exact at the poles, across ra = 0 and at tiny scales", {
  set.seed(32)
  p <- rbind(random_sky(600, dec = c(80, 90)), random_sky(600, ra = c(355, 360)),
             random_sky(600, ra = c(0, 5)),
             data.frame(ra = c(0, 180, 90, 270), dec = c(90, 90, -90, -89.9)))
  grid_vs_brute(p, NULL, c(0, 1, 3, 8))
  grid_vs_brute(p, random_sky(500, dec = c(85, 90)), c(0, 2, 6, 12))
  small <- random_sky(500, ra = c(10, 10.5), dec = c(-0.2, 0.3))
  grid_vs_brute(small, NULL, c(0, 0.001, 0.01, 0.03))
  # identical points and a single point per cell
  grid_vs_brute(data.frame(ra = rep(c(1, 50), 20), dec = 0), NULL,
                c(0, 1e-9, 1, 2))
})

test_that("the grid refines patch tasks exactly", {
  set.seed(33)
  x <- random_sky(1200, ra = c(0, 60), dec = c(-30, 30))
  y <- random_sky(900, ra = c(0, 60), dec = c(-30, 30))
  lx <- sample(1:4, 1200, replace = TRUE)
  ly <- sample(1:4, 900, replace = TRUE)
  grid_vs_brute(x, NULL, c(0, 1, 4, 9), patches = list(x = lx))
  grid_vs_brute(x, y, c(0, 1, 4, 9), patches = list(x = lx, y = ly))
})

test_that("the grid option is checked", {
  x <- random_sky(10)
  expect_error(with_grid("yes", pair_counts(x, bins = c(0, 1))),
               "option `wtheta.grid` must be \"auto\", TRUE, \"prune\" or FALSE")
})

test_that("whole cell pairs inside one bin are counted in bulk, exactly", {
  set.seed(34)
  x <- random_sky(30000, ra = c(20, 23), dec = c(-1.5, 1.5))
  e <- c(0, 0.5, 1.5, 3)
  brute <- with_grid(FALSE, pair_counts(x, bins = e, backend = "cpu",
                                        threads = test_threads(),
                                        progress = FALSE))
  bulk <- with_grid(TRUE, pair_counts(x, bins = e, backend = "cpu",
                                      threads = test_threads(),
                                      progress = FALSE))
  prune <- with_grid("prune", pair_counts(x, bins = e, backend = "cpu",
                                          threads = test_threads(),
                                          progress = FALSE))
  expect_identical(slots_of(bulk), slots_of(brute))
  expect_identical(slots_of(prune), slots_of(brute))
  # every pair is within 3 * sqrt(2) degrees: nothing to prune beyond the
  # last edge but the corners, while bulk counting skips many pairs
  expect_gt(bulk$pairs_skipped, 0.2 * bulk$n_pairs)
  expect_lt(prune$pairs_skipped, bulk$pairs_skipped)
})

test_that("the grid's task lists count the same on the GPU", {
  skip_if_no_cuda()
  set.seed(35)
  x <- random_sky(40000, ra = c(0, 40), dec = c(-20, 20))
  y <- random_sky(30000, ra = c(0, 40), dec = c(-20, 20))
  x$p <- sample(1:4, 40000, replace = TRUE)
  y$p <- sample(1:4, 30000, replace = TRUE)
  e <- theta_bins(0.01, 5, n = 12, log = TRUE)
  for (g in list("prune", TRUE)) {
    gpu <- with_grid(g, pair_counts(x, y, bins = e, backend = "cuda",
                                    patches = "p", progress = FALSE))
    cpu <- with_grid(FALSE, pair_counts(x, y, bins = e, backend = "cpu",
                                        threads = test_threads(),
                                        patches = "p", progress = FALSE))
    expect_identical(slots_of(gpu), slots_of(cpu))
    expect_identical(gpu$patch_counts, cpu$patch_counts)
    expect_gt(gpu$pairs_skipped, 0)
    ga <- with_grid(g, pair_counts(x, bins = e, backend = "cuda",
                                   self_pairs = TRUE, progress = FALSE))
    ca <- with_grid(FALSE, pair_counts(x, bins = e, backend = "cpu",
                                       self_pairs = TRUE,
                                       threads = test_threads(),
                                       progress = FALSE))
    expect_identical(slots_of(ga), slots_of(ca))
  }
})

test_that("the grid's parallel sort and tree build count the same on any number of threads", {
  # enough points that the sort splits into stripes (65536 per thread)
  set.seed(33)
  x <- random_sky(2.7e5)
  e <- c(0, 0.05, 0.2, 0.5)
  one <- with_grid("prune", pair_counts(x, bins = e, backend = "cpu",
                                        threads = 1, progress = FALSE))
  two <- with_grid("prune", pair_counts(x, bins = e, backend = "cpu",
                                        threads = 2, progress = FALSE))
  shuffled <- with_grid(TRUE, pair_counts(x[sample.int(nrow(x)), ], bins = e,
                                          backend = "cpu", threads = 2,
                                          progress = FALSE))
  expect_identical(slots_of(one), slots_of(two))
  expect_identical(slots_of(one), slots_of(shuffled))
  expect_equal(sum(slots_of(one)), nrow(x) * (nrow(x) - 1) / 2)
  expect_gt(one$pairs_skipped, 0.999 * one$n_pairs)
  expect_gt(sum(one$counts), 0)
  expect_gt(one$grid_plan_s, 0)
})

test_that("the grid's sort by the top digit, then by bucket, is the full radix sort's order", {
  # from 65536 points the keys are sorted by one pass on their top digit
  # and then bucket by bucket (sort_keys_msd() in grid_build.c); a stable
  # sort by key has one order, so the trees, the tasks and the weight sums
  # of the bulk counts must be those of the passes over all the points
  # (WTHETA_GRID_SORT=lsd), bit for bit; repeated points make equal keys,
  # whose order only stability fixes
  set.seed(37)
  x <- random_sky(1.2e5, ra = c(0, 60), dec = c(-30, 30))
  # repeats in the dense region (large buckets) and thin points over the
  # rest of the sky, each twice (small buckets, sorted by insertion)
  thin <- random_sky(2000)
  x <- rbind(x, x[seq_len(2e4), ], thin, thin)
  x$w <- runif(nrow(x), 0.5, 2)
  e <- c(0, 0.1, 0.3, 0.6, 1)
  count <- function(threads, sort) {
    old <- Sys.getenv("WTHETA_GRID_SORT", unset = NA)
    if (is.na(sort)) Sys.unsetenv("WTHETA_GRID_SORT") else
      Sys.setenv(WTHETA_GRID_SORT = sort)
    on.exit(if (is.na(old)) Sys.unsetenv("WTHETA_GRID_SORT") else
      Sys.setenv(WTHETA_GRID_SORT = old))
    with_grid(TRUE, pair_counts(x, bins = e, weights = "w", backend = "cpu",
                                threads = threads, progress = FALSE))
  }
  for (th in unique(c(1L, test_threads()))) {
    msd <- count(th, NA)
    lsd <- count(th, "lsd")
    expect_identical(slots_of(msd), slots_of(lsd))
    expect_identical(msd$weighted, lsd$weighted)
    expect_identical(msd$weighted_above, lsd$weighted_above)
    expect_gt(msd$pairs_skipped, 0)
  }
  expect_equal(sum(slots_of(msd)), nrow(x) * (nrow(x) - 1) / 2)
})

test_that("the grouped walk of patch pairs sums weights as brute force does", {
  # patch jobs walk every cell once for all patch pairs (grid_walk.c,
  # walk_groups()); weight sums change summation order only, and stay the
  # same on any number of threads
  set.seed(36)
  x <- random_sky(3000, ra = c(0, 40), dec = c(-20, 20))
  y <- random_sky(2500, ra = c(0, 40), dec = c(-20, 20))
  x$w <- runif(3000, 0.5, 2)
  y$w <- runif(2500, 0.5, 2)
  x$p <- sample(1:9, 3000, replace = TRUE)
  y$p <- sample(1:9, 2500, replace = TRUE)
  e <- theta_bins(0.2, 6, n = 8, log = TRUE)
  for (yy in list(NULL, y)) {
    run <- function(grid, threads) {
      with_grid(grid, pair_counts(x, yy, e, weights = "w", patches = "p",
                                  backend = "cpu", threads = threads,
                                  progress = FALSE))
    }
    g1 <- run(TRUE, 1L)
    g2 <- run(TRUE, 2L)
    b <- run(FALSE, 1L)
    expect_identical(g1$patch_counts, b$patch_counts)
    expect_equal(g1$patch_weighted, b$patch_weighted, tolerance = 1e-12)
    expect_equal(g1$weighted, b$weighted, tolerance = 1e-12)
    expect_identical(g2$patch_weighted, g1$patch_weighted)
    expect_gt(g1$pairs_skipped, 0)
  }
})
