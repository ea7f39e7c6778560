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
  # enough points that the sort and the search for the cells' runs split
  # into stripes (65536 per thread), on two and on three
  set.seed(33)
  x <- random_sky(2.7e5)
  e <- c(0, 0.05, 0.2, 0.5)
  one <- with_grid("prune", pair_counts(x, bins = e, backend = "cpu",
                                        threads = 1, progress = FALSE))
  two <- with_grid("prune", pair_counts(x, bins = e, backend = "cpu",
                                        threads = 2, progress = FALSE))
  three <- with_grid("prune", pair_counts(x, bins = e, backend = "cpu",
                                          threads = 3, progress = FALSE))
  expect_identical(slots_of(one), slots_of(three))
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

test_that("window cells are passed over by the cap of their cell id exactly", {
  # k-means patches a few cells wide split most cells between the trees of
  # two or more patches; the grouped walk passes over a window cell whose
  # trees' common cap lies beyond the last edge once, not per tree
  # (id_beyond() in grid_groups.c). Counts by pair of patches as brute
  # force's, on one and two threads, unweighted (each item's counts added
  # straight into its histogram by its thread, driver.c) and weighted
  set.seed(37)
  x <- random_sky(6000, ra = c(0, 60), dec = c(-20, 20))
  y <- random_sky(5000, ra = c(0, 60), dec = c(-20, 20))
  y$w <- runif(5000, 0.5, 2)
  pat <- sky_patches(x, n_patches = 40, seed = 2)
  e <- theta_bins(0.1, 2.5, n = 10, log = TRUE)
  for (yy in list(NULL, y)) for (w in list(NULL, "w")) {
    if (is.null(yy) && !is.null(w)) next
    run <- function(grid, threads) {
      with_grid(grid, pair_counts(x, yy, e, patches = pat, weights = if
                                    (!is.null(w)) list(x = rep(1, 6000),
                                                       y = yy$w),
                                  backend = "cpu", threads = threads,
                                  progress = FALSE))
    }
    b <- run(FALSE, 1L)
    for (th in 1:2) {
      g <- run(TRUE, th)
      expect_identical(g$patch_counts, b$patch_counts)
      expect_identical(g$counts, b$counts)
      expect_identical(g$n_above, b$n_above)
      if (!is.null(w))
        expect_equal(g$patch_weighted, b$patch_weighted, tolerance = 1e-12)
      expect_gt(g$pairs_skipped, 0)
    }
  }
})

test_that("a call's cells widen as far as its catalogs hold few points per cell", {
  # grid_scale() (wt_grid_call_scale(), src/core/grid_policy.c): cells a
  # quarter of the last edge, widened by sqrt(80 / occupancy) within
  # [1, 2], where occupancy is all the catalogs' points over the non-empty
  # cells of the catalog that fills most. The cells recomputed here in R
  # from the grid's definition (grid_build.c: declination bands of height
  # h, each cut into floor(360 cos(dmin) / h) cells in right ascension)
  cells_of <- function(x, h) {
    nb <- ceiling(180 / h)
    b <- pmin(pmax(floor((x$dec + 90) / h), 0), nb - 1)
    d0 <- -90 + (seq_len(nb) - 1) * h
    d1 <- pmin(d0 + h, 90)
    dmin <- ifelse(d0 <= 0 & d1 >= 0, 0, pmin(abs(d0), abs(d1)))
    nra <- pmax(floor(360 * cos(dmin * pi / 180) / h), 1)[b + 1]
    k <- pmin(pmax(floor((x$ra %% 360) / 360 * nra), 0), nra - 1)
    length(unique(paste(b, k)))
  }
  xyz <- function(x) list(xyz = wtheta:::unit_vectors(
    wtheta:::check_catalog(x, "x"), 1L))
  expected <- function(cats, last) {
    h <- last / 4
    occ <- sum(vapply(cats, nrow, 0)) / max(vapply(cats, cells_of, 0, h))
    s <- sqrt(80 / occ)
    # in steps of 2^(1/4)
    if (s <= 1) 1 else min(max(2^(round(4 * log2(s)) / 4), 1), 2)
  }
  set.seed(37)
  x <- random_sky(2000, ra = c(0, 60), dec = c(-30, 30))
  y <- random_sky(6000, ra = c(0, 60), dec = c(-30, 30))
  for (last in c(8, 12, 20)) {
    s <- wtheta:::grid_scale(list(xyz(x), xyz(y)), c(0, 1, last))
    expect_equal(s, expected(list(x, y), last), tolerance = 1e-14)
  }
  # 8,000 points in about 230 cells of 4 degrees: about 35 a cell, so
  # cells about 1.5 times as wide, the step 2^(2/4) below the cap
  s8 <- wtheta:::grid_scale(list(xyz(x), xyz(y)), c(0, 1, 16))
  expect_equal(s8, sqrt(2), tolerance = 1e-14)
  # sparse: at most twice as wide; dense: the policy's quarter
  expect_identical(wtheta:::grid_scale(list(xyz(x)), c(0, 1, 2)), 2)
  dense <- random_sky(20000, ra = c(10, 12), dec = c(0, 2))
  expect_identical(wtheta:::grid_scale(list(xyz(dense)), c(0, 0.5, 2)), 1)
  # the grid off, or the option set: no reading of the points
  expect_identical(with_grid(FALSE, wtheta:::grid_scale(list(xyz(x)),
                                                        c(0, 1, 2))), 1)
  # nor where no count of the call takes the grid in auto mode: bins
  # beyond 60 degrees, or too few pairs for the GPU; a grid forced on
  # widens the same cells
  # (1,500 points on the whole sky: enough pairs for the CPU's grid, about
  # 11 a cell of 17.5 degrees)
  wide <- c(0, 1, 70)
  sky <- list(xyz(random_sky(1500)))
  expect_identical(wtheta:::grid_scale(sky, wide), 1)
  expect_identical(with_grid(TRUE, wtheta:::grid_scale(sky, wide)), 2)
  expect_identical(wtheta:::grid_scale(sky, c(0, 1, 50)), 2)
  expect_identical(wtheta:::grid_scale(list(xyz(x)), c(0, 1, 2),
                                       backend = "cuda"), 1)
  expect_identical(with_grid(TRUE, wtheta:::grid_scale(
    list(xyz(x)), c(0, 1, 2), backend = "cuda")), 2)
  # distributed counts (no backend here): the policy's cells
  expect_identical(wtheta:::grid_scale(list(xyz(x)), c(0, 1, 2),
                                       backend = NULL), 1)
  old <- options(wtheta.grid_scale = 1.25)
  on.exit(options(old))
  expect_identical(wtheta:::grid_scale(list(xyz(x)), c(0, 1, 2)), 1.25)
  for (bad in list(0.5, 3, NA_real_, "2", c(1, 2))) {
    options(wtheta.grid_scale = bad)
    expect_error(pair_counts(x, bins = c(0, 1)),
                 "option `wtheta.grid_scale` must be one number from 1 to 2")
  }
})

test_that("a prepared catalog's grid serves the next call with other partners", {
  # the widening comes from all of a call's catalogs, so calls that pair
  # one prepared catalog with others of other sizes would choose other
  # cells and build its grid again; a call keeps the widening of a grid a
  # catalog already has, when it is one of this edge's (1 to 2)
  set.seed(39)
  # a 10 x 10 degree box in cells of 2 degrees (a quarter of 8): about 25
  # cells, 56 points a cell with d1 (cells 2^(1/4) times as wide), 88 with
  # d2 (the quarter)
  box <- function(n) random_sky(n, ra = c(0, 10), dec = c(-5, 5))
  r <- prepare_catalog(box(1200))
  d1 <- box(200)
  d2 <- box(1000)
  e <- c(0.5, 2, 8)
  run <- function(d) with_grid(TRUE, wtheta(d, r, bins = e, backend = "cpu",
                                            threads = test_threads(),
                                            check_footprint = FALSE,
                                            progress = FALSE))
  xyz <- function(x) list(xyz = wtheta:::unit_vectors(
    wtheta:::check_catalog(x, "x"), 1L))
  # without the cache the two calls would widen differently
  s1 <- wtheta:::grid_scale(list(xyz(d1), list(xyz = r$xyz)), e)
  s2 <- wtheta:::grid_scale(list(xyz(d2), list(xyz = r$xyz)), e)
  expect_false(identical(s1, s2))
  run(d1)
  b0 <- wtheta:::grid_builds()
  w2 <- run(d2)
  # d2's grid only: r's is kept
  expect_identical(wtheta:::grid_builds() - b0, 1)
  old <- options(wtheta.grid_scale = s2)
  on.exit(options(old))
  expect_identical(w2$DD, wtheta(d2, r, bins = e, backend = "cpu",
                                 check_footprint = FALSE,
                                 progress = FALSE)$DD)
})

test_that("counts are the same at any width of the cells", {
  # the widening changes which cell pairs the walk tests, never a count:
  # counts, patch arrays and labelled parts identical to brute force at
  # widths 1, 1.37 and 2; weight sums to rounding (order of summation)
  set.seed(38)
  x <- random_sky(2500, ra = c(0, 50), dec = c(-25, 25))
  y <- random_sky(4000, ra = c(0, 50), dec = c(-25, 25))
  x$w <- runif(nrow(x), 0.5, 2)
  y$w <- runif(nrow(y), 0.5, 2)
  x$p <- sample(1:6, nrow(x), replace = TRUE)
  y$p <- sample(1:6, nrow(y), replace = TRUE)
  e <- theta_bins(0.3, 8, n = 7, log = TRUE)
  old <- options(wtheta.grid_scale = NULL)
  on.exit(options(old))
  run <- function(grid, scale, yy) {
    options(wtheta.grid_scale = scale)
    with_grid(grid, pair_counts(x, yy, e, weights = "w", patches = "p",
                                backend = "cpu", threads = test_threads(),
                                progress = FALSE))
  }
  for (yy in list(NULL, y)) {
    b <- run(FALSE, 1, yy)
    for (s in c(1, 1.37, 2)) {
      g <- run(TRUE, s, yy)
      expect_identical(slots_of(g), slots_of(b))
      expect_identical(g$patch_counts, b$patch_counts)
      expect_equal(g$patch_weighted, b$patch_weighted, tolerance = 1e-12)
      expect_equal(g$weighted, b$weighted, tolerance = 1e-12)
      expect_gt(g$pairs_skipped, 0)
    }
  }
  # wtheta_multi(): the labelled counts of its samples, and the jackknife
  S <- split(x[, c("ra", "dec")], rep(1:3, length.out = nrow(x)))
  m <- lapply(c(1, 2), function(s) {
    options(wtheta.grid_scale = s)
    with_grid(TRUE, suppressWarnings(
      wtheta_multi(S, y[, c("ra", "dec")], e, error = "jackknife",
                   patches = sky_patches(y, n_patches = 8, seed = 1),
                   threads = test_threads(), progress = FALSE)))
  })
  pm <- lapply(m, attr, "pair_counts")
  expect_identical(lapply(pm[[1]], `[[`, "counts"),
                   lapply(pm[[2]], `[[`, "counts"))
  expect_identical(lapply(pm[[1]], `[[`, "patch_margins"),
                   lapply(pm[[2]], `[[`, "patch_margins"))
  expect_identical(m[[1]]$w, m[[2]]$w)
  expect_identical(attr(m[[1]], "cov"), attr(m[[2]], "cov"))
})

test_that("the walk fed to a sink in rounds lists the tasks of the walk that keeps them", {
  # On the GPU the walk feeds the engine as it goes (src/core/grid.h,
  # wt_task_sink): its parallel loop runs in about 32 rounds, each round's
  # tasks joined in order and fed before the next round. What is fed, in
  # order, and the bulk sums must be those of the walk that keeps its task
  # list (wt_plan_sink_check(), src/core/count.c), for one task
  # (refine_task()) and for patch pairs (walk_groups()), on 1 and 2
  # threads, counting in bulk and pruning only.
  ns <- asNamespace("wtheta")
  set.seed(71)
  x <- random_sky(4e4, ra = c(0, 120), dec = c(-40, 40))
  edges <- as.numeric(theta_bins(0.05, 8, n = 12, log = TRUE))
  cpu <- ns$wt_constant("backend", "cpu")
  check <- function(cat, tasks = NULL, n_out = 1L) {
    for (g in list(TRUE, "prune")) for (th in 1:2) {
      old <- options(wtheta.grid = g)
      r <- .Call(ns$C_plan_catalogs, cat, NULL, edges, cpu, th,
                 ns$grid_mode(), tasks, n_out, TRUE)
      options(old)
      info <- paste("grid", g, "threads", th, "tasks", !is.null(tasks))
      expect_identical(r[["same"]], 1, info = info)
      expect_gt(r[["feeds"]], 4)
      expect_gt(r[["tasks"]], 1000)
    }
  }
  xyz <- ns$unit_vectors(ns$check_catalog(x, "x"), 2L)
  whole <- .Call(ns$C_catalog_new, xyz, NULL, NULL, NULL, NULL)
  check(whole)
  .Call(ns$C_catalog_release, whole)
  # 9 patches: a task per pair of patches within reach
  P <- 9L
  lab <- ns$nearest_centre(xyz, attr(sky_patches(x, n_patches = P, seed = 1),
                                     "centres"))
  o <- order(lab, method = "radix")
  ranges <- attr(ns$with_ranges(list(labels = lab[o],
                                     counts = tabulate(lab, P)))$labels,
                 "ranges")
  h <- which(upper.tri(diag(P), diag = TRUE)) - 1
  grouped <- .Call(ns$C_catalog_new, xyz[o, , drop = FALSE], NULL,
                   matrix(as.double(ranges), ncol = 2L), NULL, NULL)
  # every pair of patches within 180 degrees: the tasks of all P (P + 1) / 2
  plan <- .Call(ns$C_patch_plan, xyz[o, , drop = FALSE],
                matrix(as.double(ranges), ncol = 2L), NULL, NULL, 180, 1L)
  expect_identical(plan$map, as.integer(h))
  check(grouped, plan$tasks, P^2)
  .Call(ns$C_catalog_release, grouped)
})

test_that("the grouped walk's task sort by histogram first gives the comparison sort's order", {
  # Each unit of the grouped walk (src/core/grid_groups.c, order_tasks())
  # puts its tasks in task_before() order: histogram, rows, columns, stably.
  # It sorts by histogram first (the grid build's radix sort: insertion
  # up to 32 tasks, 8-bit passes above) and then each histogram's run
  # where it is out of order. wt_walk_sort_check() sorts the same
  # pseudo-random tasks (ties in every key, some runs in order already)
  # both ways.
  ns <- asNamespace("wtheta")
  for (n in c(1, 2, 15, 16, 17, 32, 33, 100, 2047, 2048, 5000)) {
    for (n_out in c(1L, 3L, 17L, 300L, 70000L)) {
      for (seed in 1:2) {
        expect_true(.Call(ns$C_walk_sort_check, n, seed, n_out),
                    info = paste("tasks", n, "histograms", n_out, "seed",
                                 seed))
      }
    }
  }
})

test_that("the grid's keys by AVX2 polynomials equal the C library's keys", {
  # On CPUs with AVX2 the grid build (src/core/grid_keys.c) takes each
  # point's declination and right ascension from polynomials, four points
  # at a time, and gives a point to wt_grid_key_of() (asin(), atan2())
  # when its band, cell or Morton digit is within reach of an edge, where
  # the two could differ. wt_grid_keys_check() compares every key of both
  # paths: uniform points, points within a few units in the last place of
  # an edge, points a little further out, the poles and the seam at 180
  # degrees. Without the set-aside the keys differed at 10,639-17,457 of
  # these 3e5 points.
  ns <- asNamespace("wtheta")
  for (h in c(0.003, 0.01, 0.3, 2, 10, 45, 180)) {
    for (seed in 1:2) {
      r <- .Call(ns$C_grid_keys_check, 3e5, seed, h)
      info <- paste("band height", h, "seed", seed)
      expect_equal(r[[1]], 0, info = info)
      if (r[[3]] == 1) {
        # the near-edge points are set aside; the uniform ones are not
        expect_gt(r[[2]], 1e5, label = paste("set aside,", info))
        expect_lt(r[[2]], 2e5 + 50, label = paste("set aside,", info))
      } else {
        expect_equal(r[[2]], 0, info = info)
      }
    }
  }
})

test_that("small last edges: the walk's band window finds every close pair, poles included", {
  # window_cells() (grid_walk.c) visits only the declination bands within
  # reach of a cell, not all of them; with a last edge of 0.05 degree the
  # cells are 0.02 degree (the floor), 9,000 bands. Two catalogs of groups
  # of points within about 0.03 degree of 3,000 centres, some of them at
  # the poles and on the ra = 0 seam, counted (auto and cross: an auto walk
  # looks only at cells after its own) with the grid and without
  set.seed(72)
  k <- 3000
  ra0 <- c(runif(k - 40, 0, 360), rep(c(0, 359.999), 10), runif(20, 0, 360))
  dec0 <- c(asin(runif(k - 40, -1, 1)) * 180 / pi, runif(20, -60, 60),
            rep(c(89.995, -89.995), 10))
  g <- rep(seq_len(k), each = 4)
  near <- function() {
    data.frame(ra = (ra0[g] + rnorm(4 * k, 0, 0.01)) %% 360,
               dec = pmax(pmin(dec0[g] + rnorm(4 * k, 0, 0.01), 90), -90))
  }
  x <- near()
  y <- near()
  e <- theta_bins(0.002, 0.05, n = 6, log = TRUE)
  for (yy in list(NULL, y)) {
    count <- function(mode) {
      with_grid(mode, pair_counts(x, yy, bins = e, backend = "cpu",
                                  threads = 2L, progress = FALSE))
    }
    brute <- count(FALSE)
    for (mode in list(TRUE, "prune")) {
      grid <- count(mode)
      expect_identical(c(grid$n_below, grid$counts, grid$n_above),
                       c(brute$n_below, brute$counts, brute$n_above),
                       info = paste("grid", mode, "cross", !is.null(yy)))
      expect_gt(grid$pairs_skipped, 0)
    }
    expect_gt(sum(brute$counts), 10000)
  }
})
