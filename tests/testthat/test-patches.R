test_that("per-patch counts match brute force on each pair of patches", {
  set.seed(11)
  x <- random_sky(300, ra = c(0, 40), dec = c(-20, 20))
  y <- random_sky(200, ra = c(0, 40), dec = c(-20, 20))
  lx <- sample(c("a", "b", "c"), 300, replace = TRUE)
  ly <- sample(c("a", "b", "c"), 200, replace = TRUE)
  e <- c(0, 2, 5, 10, 20, 40)
  for (sp in c(FALSE, TRUE)) {
    pc <- pair_counts(x, bins = e, threads = test_threads(), self_pairs = sp,
                      patches = list(x = lx), backend = "cpu")
    expect_equal(pc$patches, c("a", "b", "c"))
    expect_equal(slots_of(pc), ref_slots(x, NULL, e, self_pairs = sp))
    for (i in 1:3) for (j in 1:3) {
      si <- x[lx == pc$patches[i], ]
      sj <- x[lx == pc$patches[j], ]
      want <- if (i == j) ref_slots(si, NULL, e, self_pairs = sp) else
        ref_slots(si, sj, e) * (if (sp) 2 else 1)
      expect_equal(pc$patch_counts[i, j, ], want[2:6], info = paste(sp, i, j))
    }
    expect_equal(pc$patch_n1, as.vector(table(lx)))
  }
  pc <- pair_counts(x, y, bins = e, threads = test_threads(),
                    patches = list(x = lx, y = ly), backend = "cpu")
  expect_equal(slots_of(pc), ref_slots(x, y, e))
  for (i in 1:3) for (j in 1:3) {
    want <- ref_slots(x[lx == pc$patches[i], ], y[ly == pc$patches[j], ], e)
    expect_equal(pc$patch_counts[i, j, ], want[2:6])
  }
  expect_equal(pc$patch_n2, as.vector(table(ly)))
})

test_that("patch labels are checked", {
  x <- random_sky(10)
  e <- c(0, 90, 180)
  expect_error(pair_counts(x, bins = e, patches = list(x = rep(1, 10))),
               "at least two distinct labels")
  expect_error(pair_counts(x, bins = e, patches = list(x = c(NA, rep(1:3, 3)))),
               "missing patch label in row 1")
  expect_error(pair_counts(x, bins = e, patches = list(x = 1:3)),
               "one value per row of `x` \\(10\\), not 3")
  expect_error(pair_counts(x, bins = e, patches = "p"),
               "names column \"p\", which `x` does not have")
  expect_error(pair_counts(x, bins = e, patches = list(z = 1:10)),
               "\"z\" is not one of them")
  expect_error(pair_counts(x, bins = e, patches = list(x = as.list(1:10))),
               "must be patch labels")
})

test_that("sky_patches makes compact, reproducible patches", {
  ran <- random_catalog(4000, ra_range = c(0, 60), dec_range = c(-20, 20),
                        seed = 5)
  p1 <- sky_patches(ran, n_patches = 6, seed = 2)
  p2 <- sky_patches(ran, n_patches = 6, seed = 2)
  expect_identical(p1, p2)
  expect_s3_class(p1, "wtheta_patches")
  lab <- patch_labels(p1, ran)
  expect_equal(tabulate(lab, 6), p1$n)
  # equal-area-ish patches on a uniform catalog
  expect_true(min(p1$n) > 4000 / 6 / 2.5)
  # each point lies nearest its own centre
  u <- wtheta:::unit_vectors(ran, 1L)
  cen <- attr(p1, "centres")
  dots <- sapply(1:6, function(k) (u[, 1] * cen[k, 1] + u[, 2] * cen[k, 2]) +
                   u[, 3] * cen[k, 3])
  expect_equal(lab, max.col(dots, ties.method = "first"))
  expect_error(sky_patches(ran, n_patches = 1), "at least 2")
  expect_error(sky_patches(ran[1:3, ], n_patches = 5), "exceeds the number")
  expect_error(patch_labels(data.frame(ra = 1, dec = 2), ran),
               "must come from sky_patches")
})

test_that("the k-means of sky_patches converges to centres that are the mean of their points, on any number of threads", {
  ran <- random_catalog(6000, ra_range = c(0, 60), dec_range = c(-20, 20),
                        seed = 7)
  old <- options(wtheta.threads = 1L)
  on.exit(options(old))
  p1 <- sky_patches(ran, n_patches = 6, seed = 3, iter = 1000)
  options(wtheta.threads = 2L)
  p2 <- sky_patches(ran, n_patches = 6, seed = 3, iter = 1000)
  expect_identical(p1, p2)
  # converged: each centre is the normalised sum of the points nearest it
  u <- wtheta:::unit_vectors(ran, 1L)
  lab <- patch_labels(p1, ran)
  cen <- attr(p1, "centres")
  for (k in 1:6) {
    s <- colSums(u[lab == k, , drop = FALSE])
    expect_equal(cen[k, ], s / sqrt(sum(s^2)), tolerance = 1e-10)
  }
  # fewer rounds than it needs: a different (unconverged) division
  p3 <- sky_patches(ran, n_patches = 6, seed = 3, iter = 1)
  expect_false(isTRUE(all.equal(attr(p3, "centres"), cen)))
})

test_that("sky_patches fits at most max_points points and labels the rest", {
  ran <- random_catalog(3000, ra_range = c(0, 60), dec_range = c(-20, 20),
                        seed = 8)
  p <- sky_patches(ran, n_patches = 5, seed = 1, max_points = 1000)
  expect_equal(sum(p$n), 1000)
  expect_length(patch_labels(p, ran), 3000)
  expect_true(all(tabulate(patch_labels(p, ran), 5) > 0))
})

test_that("unit vectors grouped by nearest centre in one C call equal the step-by-step result", {
  ran <- random_catalog(3000, ra_range = c(0, 60), dec_range = c(-20, 20),
                        seed = 9)
  p <- sky_patches(ran, n_patches = 7, seed = 2)
  cat <- wtheta:::as_catalog(ran, "x")
  cen <- attr(p, "centres")
  w <- runif(nrow(ran))
  one <- wtheta:::patch_vectors(cat, cen, w, 2L)
  u <- wtheta:::unit_vectors(cat, 1L)
  lab <- wtheta:::nearest_centre(u, cen)
  steps <- wtheta:::group_patches(u, lab, 7L, w)
  expect_identical(one, steps)
  # grouped: labels non-decreasing, ranges match the counts
  expect_false(is.unsorted(one$labels))
  expect_identical(one$counts, tabulate(lab, 7))
  r <- attr(one$labels, "ranges")
  expect_equal(r[, "end"] - r[, "start"], tabulate(lab, 7))
  # a stable sort: within a patch the catalog order is kept
  k <- which(lab == 3)
  expect_identical(one$xyz[one$labels == 3, ], u[k, ])
  expect_identical(one$weights[one$labels == 3], w[k])
})

test_that("grouping by patch on several threads keeps the order of R's stable sort", {
  # 2 x 10^5 points: patch_vectors() groups them on 4 threads (at most one
  # per 25,000 points), each placing a block of the points
  ran <- random_catalog(2e5, seed = 11)
  p <- sky_patches(ran, n_patches = 13, seed = 3)
  cat <- wtheta:::as_catalog(ran, "x")
  w <- runif(nrow(ran))
  got <- wtheta:::patch_vectors(cat, attr(p, "centres"), w, 4L)
  u <- wtheta:::unit_vectors(cat, 1L)
  lab <- wtheta:::nearest_centre(u, attr(p, "centres"), 1L)
  o <- order(lab)                       # stable: ties keep catalog order
  expect_identical(got$labels[seq_along(o)], lab[o])
  expect_identical(got$xyz, u[o, ])
  expect_identical(got$weights, w[o])
  expect_identical(got$counts, tabulate(lab, 13))
  expect_identical(got, wtheta:::patch_vectors(cat, attr(p, "centres"), w,
                                               1L))
  # an empty patch on 4 threads: centre 3 repeats centre 1, and ties go
  # to the first, so its range is empty and the labels after it move up
  cen <- attr(p, "centres")
  twin <- rbind(cen[1:2, ], cen[1L, ], cen[-(1:2), ])
  lab2 <- wtheta:::nearest_centre(u, twin, 1L)
  expect_identical(tabulate(lab2, 14)[3], 0L)
  got2 <- wtheta:::patch_vectors(cat, twin, w, 4L)
  o2 <- order(lab2)
  expect_identical(as.vector(got2$labels), lab2[o2])
  expect_identical(got2$xyz, u[o2, ])
  expect_identical(got2$counts, tabulate(lab2, 14))
  expect_identical(got2$labels[got2$labels != 3L],
                   c(rep(1:2, got$counts[1:2]), rep(4:14, got$counts[3:13])))
  # unweighted: the same order, no weights
  plain <- wtheta:::patch_vectors(cat, attr(p, "centres"), NULL, 4L)
  expect_null(plain$weights)
  expect_identical(plain[c("xyz", "labels", "counts")],
                   got[c("xyz", "labels", "counts")])
})

test_that("grouping by patch keeps empty patches, numbered in order", {
  ran <- random_catalog(500, ra_range = c(0, 30), dec_range = c(0, 30),
                        seed = 4)
  cat <- wtheta:::as_catalog(ran, "x")
  u <- wtheta:::unit_vectors(cat, 1L)
  # centre 2 on the far side of the sphere: no point is nearest to it;
  # centres 3 and 4 equal: ties go to the first
  cen <- rbind(u[1, ], -u[1, ], u[250, ], u[250, ], u[400, ])
  got <- wtheta:::patch_vectors(cat, cen, seq_len(500) / 7, 1L)
  dots <- vapply(1:5, function(k) (u[, 1] * cen[k, 1] + u[, 2] * cen[k, 2]) +
                   u[, 3] * cen[k, 3], numeric(500))
  lab <- max.col(dots, ties.method = "first")
  expect_identical(got$counts, tabulate(lab, 5))
  expect_identical(got$counts[c(2L, 4L)], c(0L, 0L))
  o <- order(lab)
  expect_identical(got$labels[seq_along(o)], lab[o])
  expect_identical(got$xyz, u[o, ])
  expect_identical(got$weights, (seq_len(500) / 7)[o])
  expect_identical(unname(attr(got$labels, "ranges")[, "end"]),
                   as.numeric(cumsum(tabulate(lab, 5))))
})

test_that("nearest centres are the same on every instruction set, ties to the first", {
  ran <- random_catalog(5003, seed = 12)          # not a multiple of 8
  u <- wtheta:::unit_vectors(wtheta:::as_catalog(ran, "x"), 1L)
  p <- sky_patches(ran, n_patches = 11, seed = 5)
  cen <- attr(p, "centres")
  # duplicated centres (ties: the first wins) and centres at points
  cen <- rbind(cen, cen[3, ], u[17, ], u[17, ], -u[17, ])
  dots <- vapply(seq_len(nrow(cen)), function(k) (u[, 1] * cen[k, 1] +
    u[, 2] * cen[k, 2]) + u[, 3] * cen[k, 3], numeric(nrow(u)))
  want <- max.col(dots, ties.method = "first")
  # ties go to the first: the copies 12 and 14 are never nearest
  expect_identical(want[17], 13L)
  expect_false(any(want %in% c(12L, 14L)))
  expect_true(any(want == 3L))
  for (isa in machine_isas()) {
    with_cpu_isa(isa, {
      expect_identical(wtheta:::nearest_centre(u, cen, 1L), want,
                       info = isa)
      expect_identical(wtheta:::nearest_centre(u, cen, 2L), want,
                       info = isa)
      expect_identical(patch_labels(p, ran, threads = 2L),
                       max.col(dots[, 1:11], ties.method = "first"),
                       info = isa)
    })
  }
  # k-means runs the same labels: the same patches on every instruction set
  fits <- lapply(machine_isas(), function(isa)
    with_cpu_isa(isa, sky_patches(ran, n_patches = 9, seed = 2)))
  for (f in fits[-1L]) expect_identical(f, fits[[1L]])
})

test_that("pairs of patches beyond the last edge get no task, and their pairs are still counted", {
  set.seed(12)
  # patches a, b side by side, c far from both, d empty
  x <- rbind(random_sky(150, ra = c(0, 6), dec = c(0, 6)),
             random_sky(150, ra = c(7, 13), dec = c(0, 6)),
             random_sky(120, ra = c(100, 106), dec = c(40, 46)))
  x$w <- stats::runif(nrow(x), 0.5, 2)
  lx <- factor(rep(c("a", "b", "c"), c(150, 150, 120)),
               levels = c("a", "b", "c", "d"))
  y <- rbind(random_sky(100, ra = c(0, 13), dec = c(0, 6)),
             random_sky(80, ra = c(100, 106), dec = c(40, 46)))
  ly <- factor(rep(c("b", "c"), c(100, 80)), levels = c("a", "b", "c", "d"))
  e <- c(0.5, 1, 2, 4)
  # which pairs of patches can hold a pair within the last edge: every
  # pair that does (by brute force) is kept, the far ones are not
  g <- wtheta:::group_patches(wtheta:::unit_vectors(x, 1L), as.integer(lx), 4L)
  near <- .Call(wtheta:::C_patch_reach, g$xyz, attr(g$labels, "ranges"),
                NULL, NULL, 4, 1L)
  ang <- function(i, j) {
    d <- outer(i, j, function(a, b) rowSums((g$xyz[a, , drop = FALSE] -
                                               g$xyz[b, , drop = FALSE])^2))
    2 * asin(sqrt(d) / 2) * 180 / pi
  }
  r <- attr(g$labels, "ranges")
  for (p in 1:4) for (q in 1:4) {
    ip <- seq_len(r[p, 2] - r[p, 1]) + r[p, 1]
    iq <- seq_len(r[q, 2] - r[q, 1]) + r[q, 1]
    if (!length(ip) || !length(iq)) {
      expect_false(near[p, q])
    } else if (min(ang(ip, iq)) <= 4) {
      expect_true(near[p, q], info = paste(p, q))
    }
  }
  expect_false(near[1, 3])
  expect_true(near[1, 2])
  # the tasks made from it (wt_r_patch_plan()): the pairs within reach
  # (a <= b in an auto count) numbered a + b P in column-major order, the
  # far ones, and each task's ranges and histogram, as R made them from
  # `near` before; the first pair alone when none is within reach
  plan_ref <- function(near, ra, rb, auto) {
    pairs <- if (auto) upper.tri(near, diag = TRUE) else
      matrix(TRUE, nrow(near), ncol(near))
    task <- near & pairs
    if (!any(task)) task[1L] <- TRUE
    h <- which(task) - 1L
    a <- h %% nrow(ra) + 1L
    b <- h %/% nrow(ra) + 1L
    list(map = h, far = which(pairs & !task) - 1L,
         tasks = cbind(ra[, 1L][a], ra[, 2L][a], rb[, 1L][b], rb[, 2L][b],
                       seq_along(h) - 1))
  }
  gy <- wtheta:::group_patches(wtheta:::unit_vectors(y, 1L), as.integer(ly),
                               4L)
  ry <- attr(gy$labels, "ranges")
  for (reach in c(4, 0.001, 180)) {
    auto <- .Call(wtheta:::C_patch_plan, g$xyz, r, NULL, NULL, reach, 1L)
    n_a <- .Call(wtheta:::C_patch_reach, g$xyz, r, NULL, NULL, reach, 1L)
    expect_identical(auto, plan_ref(n_a, r, r, TRUE), info = reach)
    cross <- .Call(wtheta:::C_patch_plan, g$xyz, r, gy$xyz, ry, reach, 1L)
    n_c <- .Call(wtheta:::C_patch_reach, g$xyz, r, gy$xyz, ry, reach, 1L)
    expect_identical(cross, plan_ref(n_c, r, ry, FALSE), info = reach)
  }
  # by hand at 4 degrees: patches a, b, c of x near themselves and a-b
  # (patch d is empty); c-d and the other pairs far
  auto <- .Call(wtheta:::C_patch_plan, g$xyz, r, NULL, NULL, 4, 1L)
  expect_identical(auto$map, c(0L, 4L, 5L, 10L))
  expect_identical(auto$far, c(8L, 9L, 12L, 13L, 14L, 15L))
  expect_identical(auto$tasks[, 5], c(0, 1, 2, 3))
  expect_identical(auto$tasks[2, 1:4], unname(c(r[1, ], r[2, ])))
  # the counts, per pair of patches and in all, are brute force's, pairs
  # beyond the last edge included; weighted sums to rounding
  pc <- pair_counts(x, bins = e, threads = test_threads(),
                    patches = list(x = lx), weights = "w", backend = "cpu")
  expect_equal(slots_of(pc), ref_slots(x, NULL, e))
  expect_identical(pc$patches, c("a", "b", "c"))   # labels as counted
  for (i in 1:3) for (j in 1:3) {
    si <- x[as.integer(lx) == i, ]
    sj <- x[as.integer(lx) == j, ]
    want <- if (i == j) ref_slots(si, NULL, e) else ref_slots(si, sj, e)
    expect_equal(pc$patch_counts[i, j, ], want[2:4], info = paste(i, j))
  }
  pxy <- pair_counts(x, y, bins = e, threads = test_threads(),
                     patches = list(x = lx, y = ly), backend = "cpu")
  expect_equal(slots_of(pxy), ref_slots(x, y, e))
  expect_equal(pxy$n_above + sum(pxy$counts) + pxy$n_below,
               nrow(x) * nrow(y))
  # weighted: every pair's weight is somewhere, the far ones beyond the
  # last edge
  expect_equal(pc$weighted_below + sum(pc$weighted) + pc$weighted_above,
               (sum(x$w)^2 - sum(x$w^2)) / 2, tolerance = 1e-13)
})

test_that("the pairs of far pairs of patches are R's sums, bit for bit", {
  # per patch (rows) and label (columns): counts, and weight sums whose
  # order of summation shows in the last bits
  set.seed(11)
  P <- 9
  far <- sort(sample(P * P, 50)) - 1
  p <- far %% P + 1
  q <- far %/% P + 1
  for (x in list(matrix(as.double(rpois(P * 3, 40)), P),
                 matrix(runif(P * 3) * 10^runif(P * 3, -6, 6), P))) {
    y <- x[, c(2, 1), drop = FALSE] * 1.5
    got <- .Call(wtheta:::C_far_pairs, x, y, as.integer(p), as.integer(q))
    want <- outer(1:3, 1:2, Vectorize(function(s, t) sum(x[p, s] * y[q, t])))
    expect_identical(got, want)
  }
  expect_identical(.Call(wtheta:::C_far_pairs, x, y, integer(), integer()),
                   matrix(0, 3, 2))
  expect_error(.Call(wtheta:::C_far_pairs, x, y, 10L, 1L), "outside 1..9")
})
