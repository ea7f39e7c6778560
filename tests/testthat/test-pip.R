# PIP weights in pair_counts() (issue 37) against the brute-force
# reference of helper-pip.R: counts exactly, weighted sums to 1e-12
# relative.

pip_edges <- c(0, 0.5, 1, 2, 3, 5, 8, 12)
pip_bins <- function() pip_edges
bw2 <- c("b1", "b2")

expect_pip <- function(pc, ref, tol = 1e-12) {
  expect_identical(as.double(pc$counts), as.double(ref$counts))
  expect_equal(pc$weighted, ref$weighted, tolerance = tol)
  expect_gt(sum(pc$weighted), 0)
}

test_that("auto PIP counts match brute force on every grid mode, thread count and ISA", {
  x <- pip_catalog(260, k = 2)
  ref <- pip_brute_counts(x, edges = pip_edges, wx = x$w,
                          bx = as.matrix(x[, bw2]))
  # the PIP factor changes the sums: not those of w_i w_j alone
  plain <- pip_brute_counts(x, edges = pip_edges, wx = x$w)
  expect_gt(max(abs(ref$weighted / plain$weighted - 1)), 0.1)
  for (isa in machine_isas()) for (g in list(FALSE, "auto", TRUE, "prune"))
    for (th in c(1L, 2L)) {
      pc <- with_grid(g, with_cpu_isa(isa, pair_counts(
        x, bins = pip_bins(), backend = "cpu", threads = th,
        weights = "w", bitwise = bw2)))
      expect_pip(pc, ref)
      expect_identical(pc$pip$bitwise, "pairs")
      expect_identical(pc$pip$nrealizations, 65)
    }
})

test_that("PIP on fine log bins and a long angular table, every ISA", {
  # many bins: the lookup table's slow path (steps > 1); a 40-row angular
  # table: a deep search; 3 words: an odd word in the vector kernel's lanes
  x <- pip_catalog(230, k = 3, seed = 19)
  y <- pip_catalog(170, k = 3, seed = 20)
  e <- 10^seq(-2, log10(12), length.out = 301)
  ang <- data.frame(theta = 10^seq(-2.2, 1, length.out = 40),
                    weight = 1 + 2 * exp(-(1:40) / 9))
  cols <- c("b1", "b2", "b3")
  ref_a <- pip_brute_counts(x, edges = e, wx = x$w,
                            bx = as.matrix(x[, cols]), angular = ang)
  ref_c <- pip_brute_counts(x, y, edges = e, wx = x$w, wy = y$w,
                            bx = as.matrix(x[, cols]),
                            by = as.matrix(y[, cols]), angular = ang)
  for (isa in machine_isas()) {
    pa <- with_cpu_isa(isa, pair_counts(x, bins = e, backend = "cpu",
                                        threads = 2, weights = "w",
                                        bitwise = cols, angular = ang))
    expect_pip(pa, ref_a)
    pc <- with_cpu_isa(isa, pair_counts(x, y, bins = e, backend = "cpu",
                                        threads = 2, weights = "w",
                                        bitwise = cols, angular = ang))
    expect_pip(pc, ref_c)
  }
})

test_that("cross PIP with noffset 0, default_value and angular upweights", {
  # sparse bits: pairs whose AND is empty have a zero denominator
  x <- pip_catalog(200, k = 1, fill = 0.04, seed = 3)
  y <- pip_catalog(180, k = 1, fill = 0.04, seed = 4)
  bx <- as.matrix(x["b1"])
  by <- as.matrix(y["b1"])
  zero <- sum(pip_bits01(bx) %*% t(pip_bits01(by)) == 0)
  expect_gt(zero, 1000)
  ang <- data.frame(theta = c(0.2, 1, 2.5, 4, 7), weight = c(3, 2, 1.4, 1.2, 1.05))
  for (g in list(FALSE, TRUE)) {
    pc <- with_grid(g, pair_counts(x, y, bins = pip_bins(), backend = "cpu",
                                   threads = 2, bitwise = "b1", noffset = 0,
                                   default_value = 7.5, angular = ang))
    ref <- pip_brute_counts(x, y, edges = pip_edges, bx = bx, by = by,
                            noffset = 0, default_value = 7.5, angular = ang)
    expect_pip(pc, ref)
    expect_identical(pc$pip$noffset, 0)
    expect_identical(pc$pip$default_value, 7.5)
    expect_identical(pc$pip$angular$theta, ang$theta)
  }
  # the default value matters: another one gives other sums
  pc0 <- pair_counts(x, y, bins = pip_bins(), backend = "cpu", threads = 1,
                     bitwise = "b1", noffset = 0, angular = ang)
  expect_true(all(pc0$weighted < ref$weighted))
  # weighted, noffset 1, nrealizations given
  pc <- pair_counts(x, y, bins = pip_bins(), backend = "cpu", threads = 1,
                    weights = "w", bitwise = "b1", nrealizations = 40)
  ref <- pip_brute_counts(x, y, edges = pip_edges, wx = x$w, wy = y$w,
                          bx = bx, by = by, nrealizations = 40)
  expect_pip(pc, ref)
})

test_that("angular upweights alone, and bitwise weights on one side only", {
  x <- pip_catalog(220, k = 2, seed = 5)
  y <- pip_catalog(150, k = 2, seed = 6)
  y$b1 <- y$b2 <- NULL
  ang <- data.frame(theta = c(0, 3, 9), weight = c(2.5, 1.5, 1.2))
  pc <- pair_counts(x, y, bins = pip_bins(), backend = "cpu", threads = 2,
                    weights = "w", angular = ang)
  expect_pip(pc, pip_brute_counts(x, y, edges = pip_edges, wx = x$w,
                                  wy = y$w, angular = ang))
  expect_identical(pc$pip$bitwise, "none")
  # x has words, y has none: x's own inverse probabilities (pycorr)
  for (xy in list(list(x, y), list(y, x))) {
    pc <- pair_counts(xy[[1]], xy[[2]], bins = pip_bins(), backend = "cpu",
                      threads = 2, weights = "w", bitwise = bw2,
                      angular = ang)
    b1 <- if (!is.null(xy[[1]]$b1)) as.matrix(xy[[1]][, bw2])
    b2 <- if (!is.null(xy[[2]]$b1)) as.matrix(xy[[2]][, bw2])
    ref <- pip_brute_counts(xy[[1]], xy[[2]], edges = pip_edges,
                            wx = xy[[1]]$w, wy = xy[[2]]$w, bx = b1, by = b2,
                            angular = ang)
    expect_pip(pc, ref)
    expect_identical(pc$pip$bitwise, "individual")
  }
})

test_that("1, 3 words and bit64::integer64 words", {
  x <- pip_catalog(150, k = 3, seed = 7)
  for (cols in list("b1", c("b1", "b2", "b3"))) {
    pc <- pair_counts(x, bins = pip_bins(), backend = "cpu", threads = 2,
                      bitwise = cols)
    ref <- pip_brute_counts(x, edges = pip_edges, bx = as.matrix(x[, cols]))
    expect_pip(pc, ref)
    expect_identical(pc$pip$nrealizations, 32 * length(cols) + 1)
  }
  # a matrix of words works as columns do
  pcm <- pair_counts(x, bins = pip_bins(), backend = "cpu", threads = 1,
                     bitwise = as.matrix(x[, c("b1", "b2")]))
  expect_pip(pcm, pip_brute_counts(x, edges = pip_edges,
                                   bx = as.matrix(x[, c("b1", "b2")])))
  skip_if_not_installed("bit64")
  # one 64-bit word = b1 (low) and b2 (high), with the top bit set in some
  x64 <- x
  x64$b <- pip_integer64(x$b1, x$b2)
  expect_true(any(x$b2 >= 2^31))   # some words have the top bit set
  pc64 <- pair_counts(x64, bins = pip_bins(), backend = "cpu", threads = 2,
                      bitwise = "b")
  ref <- pip_brute_counts(x, edges = pip_edges,
                          bx = as.matrix(x[, c("b1", "b2")]))
  expect_pip(pc64, ref)
  expect_identical(pc64$pip$nrealizations, 65)
})

test_that("PIP with patches matches brute force per patch pair", {
  x <- pip_catalog(200, k = 2, seed = 8)
  y <- pip_catalog(160, k = 2, seed = 9)
  x$p <- 1 + (x$ra > 17) + 2 * (x$dec > 0)
  y$p <- 1 + (y$ra > 17) + 2 * (y$dec > 0)
  for (g in list(FALSE, "auto")) {
    pc <- with_grid(g, pair_counts(x, bins = pip_bins(), backend = "cpu",
                                   threads = 2, weights = "w", bitwise = bw2,
                                   patches = "p"))
    ref <- pip_brute_counts(x, edges = pip_edges, wx = x$w,
                            bx = as.matrix(x[, bw2]), px = x$p, P = 4)
    expect_pip(pc, ref)
    expect_identical(unclass(pc$patch_counts) + 0, ref$patch_counts)
    expect_equal(unclass(pc$patch_weighted) + 0, ref$patch_weighted,
                 tolerance = 1e-12)
    pc <- with_grid(g, pair_counts(x, y, bins = pip_bins(), backend = "cpu",
                                   threads = 2, bitwise = bw2, patches = "p"))
    ref <- pip_brute_counts(x, y, edges = pip_edges,
                            bx = as.matrix(x[, bw2]), by = as.matrix(y[, bw2]),
                            px = x$p, py = y$p, P = 4)
    expect_pip(pc, ref)
    expect_identical(unclass(pc$patch_counts) + 0, ref$patch_counts)
    expect_equal(unclass(pc$patch_weighted) + 0, ref$patch_weighted,
                 tolerance = 1e-12)
  }
})

test_that("PIP mean_theta sums angles times the full pair weight", {
  x <- pip_catalog(180, k = 2, seed = 10)
  ang <- data.frame(theta = c(0.5, 4), weight = c(2, 1.2))
  pc <- pair_counts(x, bins = pip_bins(), backend = "cpu", threads = 2,
                    weights = "w", bitwise = bw2, angular = ang,
                    mean_theta = TRUE)
  ref <- pip_brute_counts(x, edges = pip_edges, wx = x$w,
                          bx = as.matrix(x[, bw2]), angular = ang)
  expect_pip(pc, ref)
  expect_equal(pc$theta_sum, ref$theta_sum, tolerance = 1e-12)
  expect_equal(pc$theta_mean, ref$theta_sum / ref$weighted,
               tolerance = 1e-12)
})

test_that("PIP self pairs add w_i^2 times the object's own factor", {
  x <- pip_catalog(120, k = 1, seed = 11)
  pc <- pair_counts(x, bins = c(0, 1, 5), backend = "cpu", threads = 1,
                    weights = "w", bitwise = "b1", self_pairs = TRUE)
  ref <- pip_brute_counts(x, edges = c(0, 1, 5), wx = x$w,
                          bx = as.matrix(x["b1"]))
  own <- sum(x$w^2 * 33 / (1 + rowSums(pip_bits01(as.matrix(x["b1"])))))
  expect_equal(pc$weighted, 2 * ref$weighted + c(own, 0), tolerance = 1e-12)
  # the normalisation: ordered pairs i != j, plus the self pairs' own
  expect_equal(pc$weighted_pairs,
               2 * pip_brute_norm(x$w, as.matrix(x["b1"]),
                                  nrealizations = 33) + own,
               tolerance = 1e-10)
})

test_that("weighted_pairs is pycorr's PIP normalisation", {
  x <- pip_catalog(60, k = 1, seed = 12)
  y <- pip_catalog(50, k = 1, seed = 13)
  bx <- as.matrix(x["b1"])
  by <- as.matrix(y["b1"])
  for (o in c(1, 0)) {
    pc <- pair_counts(x, bins = pip_bins(), backend = "cpu", threads = 1,
                      weights = "w", bitwise = "b1", noffset = o,
                      default_value = 2)
    expect_equal(pc$weighted_pairs,
                 pip_brute_norm(x$w, bx, nrealizations = 33, noffset = o,
                                default_value = 2), tolerance = 1e-10)
    pc <- pair_counts(x, y, bins = pip_bins(), backend = "cpu", threads = 1,
                      weights = "w", bitwise = "b1", noffset = o)
    expect_equal(pc$weighted_pairs,
                 pip_brute_norm(x$w, bx, y$w, by, nrealizations = 33,
                                noffset = o), tolerance = 1e-10)
  }
  # one side with words: products of weight sums, the words folded in
  y$b1 <- NULL
  pc <- pair_counts(x, y, bins = pip_bins(), backend = "cpu", threads = 1,
                    weights = "w", bitwise = "b1")
  iip <- 33 / (1 + rowSums(pip_bits01(bx)))
  expect_equal(pc$weighted_pairs, sum(x$w * iip) * sum(y$w),
               tolerance = 1e-12)
})

test_that("patch_pip_norm splits the PIP normalisation by pair of patches", {
  x <- pip_catalog(70, k = 1, seed = 21)
  y <- pip_catalog(60, k = 1, seed = 22)
  x$p <- 1 + (x$ra > 17) + (x$dec > 2)
  y$p <- 1 + (y$ra > 15) + (y$dec > -3)
  bx <- as.matrix(x["b1"])
  by <- as.matrix(y["b1"])
  pc <- pair_counts(x, bins = pip_bins(), backend = "cpu", threads = 1,
                    weights = "w", bitwise = "b1", patches = "p")
  N <- pc$patch_pip_norm
  expect_equal(dim(N), c(3L, 3L))
  expect_equal(sum(N) / 2, pc$weighted_pairs, tolerance = 1e-12)
  for (r in 1:3) {
    keep <- x$p != r
    expect_equal(sum(N[-r, -r]) / 2,
                 pip_brute_norm(x$w[keep], bx[keep, , drop = FALSE],
                                nrealizations = 33), tolerance = 1e-10)
  }
  pc <- pair_counts(x, y, bins = pip_bins(), backend = "cpu", threads = 1,
                    weights = "w", bitwise = "b1", patches = "p")
  N <- pc$patch_pip_norm
  expect_equal(sum(N), pc$weighted_pairs, tolerance = 1e-12)
  expect_equal(sum(N[-2, -2]),
               pip_brute_norm(x$w[x$p != 2], bx[x$p != 2, , drop = FALSE],
                              y$w[y$p != 2], by[y$p != 2, , drop = FALSE],
                              nrealizations = 33), tolerance = 1e-10)
})

test_that("PIP counts ship their words in distributed counts", {
  skip_if_not_installed("future")
  x <- pip_catalog(150, k = 2, seed = 14)
  x$p <- 1 + (x$ra > 17)
  future::plan("sequential")
  pc <- pair_counts(x, bins = pip_bins(), backend = "cpu", threads = 1,
                    weights = "w", bitwise = bw2, patches = "p",
                    distribute = 3)
  ref <- pip_brute_counts(x, edges = pip_edges, wx = x$w,
                          bx = as.matrix(x[, bw2]), px = x$p, P = 2)
  expect_pip(pc, ref)
  expect_equal(unclass(pc$patch_weighted) + 0, ref$patch_weighted,
               tolerance = 1e-12)
  expect_equal(pc$weighted_pairs,
               pip_brute_norm(x$w, as.matrix(x[, bw2]), nrealizations = 65),
               tolerance = 1e-10)
})

test_that("PIP arguments are checked, naming the argument and the value", {
  x <- pip_catalog(30, k = 1, seed = 15)
  b <- pip_bins()
  pcx <- function(...) pair_counts(x, bins = b, backend = "cpu", threads = 1,
                                   ...)
  expect_error(pcx(bitwise = "zz"), "zz")
  expect_error(pcx(bitwise = c("b1", "zz")), "zz")
  x$bad <- x$b1 + 0.5
  expect_error(pcx(bitwise = "bad"), "row 1 is")
  x$bad <- x$b1
  x$bad[3] <- -1
  expect_error(pcx(bitwise = "bad"), "row 3 is -1")
  x$bad[3] <- 2^32
  expect_error(pcx(bitwise = "bad"), "row 3 is 4294967296")
  x$bad[3] <- NA
  expect_error(pcx(bitwise = "bad"), "row 3 is NA")
  x$bad <- as.character(x$b1)
  expect_error(pcx(bitwise = "bad"), "whole numbers")
  expect_error(pcx(bitwise = "b1", noffset = 0.5), "`noffset`.*0.5")
  expect_error(pcx(bitwise = "b1", noffset = -1), "`noffset`.*-1")
  expect_error(pcx(bitwise = "b1", nrealizations = NA), "`nrealizations`")
  expect_error(pcx(nrealizations = 10), "`nrealizations`.*10")
  expect_error(pcx(bitwise = "b1", default_value = Inf), "`default_value`")
  expect_error(pcx(angular = data.frame(theta = c(2, 1), weight = 1:2)),
               "strictly increasing.*value 2")
  expect_error(pcx(angular = data.frame(theta = c(1, 200), weight = 1:2)),
               "value 2 is 200")
  expect_error(pcx(angular = data.frame(theta = 1:2, weight = c(1, NA))),
               "`angular\\$weight`.*value 2")
  expect_error(pcx(angular = list(sep = 1:2)), "`angular`")
  y <- pip_catalog(30, k = 2, seed = 16)
  expect_error(pair_counts(x, y, bins = b, backend = "cpu", threads = 1,
                           bitwise = list(x = "b1", y = c("b1", "b2"))),
               "1 32-bit words.*2")
  expect_error(pcx(bitwise = matrix(1, 3, 1)), "one row per object \\(30\\)")
  expect_error(pair_counts(prepare_catalog(x), bins = b, backend = "cpu",
                           threads = 1, bitwise = "b1"), "prepare_catalog")
  expect_error(prepare_catalog(x, bitwise = "zz"), "zz")
})

test_that("prepared catalogs carry their bitwise words", {
  x <- pip_catalog(180, k = 2, seed = 23)
  y <- pip_catalog(140, k = 2, seed = 24)
  x$p <- 1 + (x$ra > 17) + 2 * (x$dec > 0)
  y$p <- 1 + (y$ra > 17) + 2 * (y$dec > 0)
  ref <- pip_brute_counts(x, y, edges = pip_edges, wx = x$w, wy = y$w,
                          bx = as.matrix(x[, bw2]), by = as.matrix(y[, bw2]),
                          noffset = 0, px = x$p, py = y$p, P = 4)
  xp <- prepare_catalog(x, weights = "w", bitwise = bw2, patches = "p")
  yp <- prepare_catalog(y, weights = "w", bitwise = bw2, patches = "p")
  expect_identical(dim(xp$bits), c(180L, 2L))
  expect_output(print(xp), "weighted, 64 bitwise realisations, 4 labelled")

  # prepared with words and labelled patches: the words travel with the
  # points grouped by patch
  pc <- pair_counts(xp, yp, bins = pip_bins(), backend = "cpu", threads = 2,
                    noffset = 0)
  expect_pip(pc, ref)
  expect_equal(unclass(pc$patch_weighted) + 0, ref$patch_weighted,
               tolerance = 1e-12)
  expect_identical(pc$pip$noffset, 0)
  # a copy of xp with other words (its first word all ones) is another C
  # catalog than the one xp's handle holds now
  xe <- xp
  xe$bits[, 1] <- -1L
  expect_true(wtheta:::stale_handle(xe))
  xo <- x
  xo$b1 <- 2^32 - 1
  pe <- pair_counts(xe, yp, bins = pip_bins(), backend = "cpu", threads = 2,
                    noffset = 0)
  expect_pip(pe, pip_brute_counts(xo, y, edges = pip_edges, wx = x$w,
                                  wy = y$w, bx = as.matrix(xo[, bw2]),
                                  by = as.matrix(y[, bw2]), noffset = 0))
  # both prepared, and k-means patches (words grouped by nearest centre)
  sp <- sky_patches(x, 3, seed = 1)
  xk <- prepare_catalog(x, weights = "w", bitwise = bw2, patches = sp)
  yk <- prepare_catalog(y, weights = "w", bitwise = bw2, patches = sp)
  pk <- pair_counts(xk, yk, bins = pip_bins(), backend = "cpu", threads = 2,
                    noffset = 0)
  expect_pip(pk, ref)
  # one prepared, one given as a data frame with its words named
  pm <- pair_counts(prepare_catalog(x, weights = "w", bitwise = bw2), y,
                    bins = pip_bins(), backend = "cpu", threads = 2,
                    weights = list(y = "w"), bitwise = list(y = bw2),
                    noffset = 0)
  expect_pip(pm, ref)
  # a prepared catalog's words make its counts PIP-weighted without
  # `bitwise`
  pa <- pair_counts(prepare_catalog(x, weights = "w", bitwise = bw2),
                    bins = pip_bins(), backend = "cpu", threads = 1)
  expect_pip(pa, pip_brute_counts(x, edges = pip_edges, wx = x$w,
                                  bx = as.matrix(x[, bw2])))
})

test_that("GPU PIP counts equal CPU PIP counts and brute force", {
  skip_if_no_cuda()
  x <- pip_catalog(240, k = 2, seed = 17)
  ang <- data.frame(theta = c(0.3, 2, 6), weight = c(2.2, 1.3, 1.05))
  g <- pair_counts(x, bins = pip_bins(), backend = "cuda", weights = "w",
                   bitwise = bw2, angular = ang, mean_theta = TRUE)
  ref <- pip_brute_counts(x, edges = pip_edges, wx = x$w,
                          bx = as.matrix(x[, bw2]), angular = ang)
  expect_identical(g$backend, "cuda")
  expect_pip(g, ref)
  expect_equal(g$theta_sum, ref$theta_sum, tolerance = 1e-12)
  # larger catalogs (the device's ordering of a chunk, and two resident
  # chunks in cross counts), 1, 2 and 4 words, auto and cross, patches,
  # noffset 0
  set.seed(18)
  big <- function(n, k) {
    cat <- data.frame(ra = runif(n, 0, 60), dec = runif(n, -30, 30),
                      w = runif(n, 0.5, 2), p = sample(1:5, n, TRUE))
    for (j in seq_len(k)) {
      cat[[paste0("b", j)]] <- floor(runif(n, 0, 2^32))
    }
    cat
  }
  xb <- big(30000, 4)
  yb <- big(20000, 4)
  bins <- theta_bins(0.01, 20, n = 15, log = TRUE)
  for (cols in list("b1", bw2, paste0("b", 1:4))) {
    for (o in c(1, 0)) {
      args <- list(bins = bins, weights = "w", bitwise = cols, noffset = o,
                   default_value = 3, angular = ang, patches = "p")
      gc <- do.call(pair_counts, c(list(xb, backend = "cuda"), args))
      cc <- do.call(pair_counts, c(list(xb, backend = "cpu"), args))
      expect_identical(gc$counts, cc$counts)
      expect_equal(gc$weighted, cc$weighted, tolerance = 1e-12)
      expect_equal(unclass(gc$patch_weighted), unclass(cc$patch_weighted),
                   tolerance = 1e-12)
      gx <- do.call(pair_counts, c(list(xb, yb, backend = "cuda"), args))
      cx <- do.call(pair_counts, c(list(xb, yb, backend = "cpu"), args))
      expect_identical(gx$counts, cx$counts)
      expect_equal(gx$weighted, cx$weighted, tolerance = 1e-12)
    }
  }
})

test_that("a count spec with angular = FALSE drops the angular upweights", {
  x <- pip_catalog(120, k = 2, seed = 25)
  ang <- data.frame(theta = c(0.5, 6), weight = c(2, 1.2))
  call <- wtheta:::new_call(
    "pair_counts", list(x = x), pip_bins(), c("ra", "dec"), FALSE, FALSE,
    FALSE, "w", NULL, "cpu", 1L, NULL, FALSE, NULL, 1, NULL,
    pip = wtheta:::pip_settings(bw2, NULL, 1, 0, ang))
  specs <- list(list(x = "x", y = NULL, self_pairs = FALSE),
                list(x = "x", y = NULL, self_pairs = FALSE, angular = FALSE))
  done <- wtheta:::run_counts(call$how, call$cats, specs, call$edges, 1L,
                              FALSE)
  bx <- as.matrix(x[, bw2])
  expect_pip(done[[1]], pip_brute_counts(x, edges = pip_edges, wx = x$w,
                                         bx = bx, angular = ang))
  expect_pip(done[[2]], pip_brute_counts(x, edges = pip_edges, wx = x$w,
                                         bx = bx))
  expect_null(done[[2]]$pip$angular)
  wtheta:::release_catalogs(call$cats)
})

# Tasks of one slot (issue 37's CPU speed): with bulk counting (the grid
# TRUE, or "auto" on the CPU) the walk splits a PIP job's node pairs as for
# bulk counting and hands each node pair proved inside one bin to the CPU
# engine as a task of that slot, whose pairs a kernel of their own sums
# without a d2 or a slot lookup (src/cpu/driver.c, do_fixed()). A dense
# field and a wide middle bin make many such tasks; WTHETA_TEST_FAULT=fixed
# (one false pair per such task) shows that they occur.

# n points in a 1 x 1 degree field, k words
pip_dense <- function(n, k, seed) {
  x <- pip_catalog(n, k = k, seed = seed)
  set.seed(seed + 100)
  x$ra <- runif(n, 10, 11)
  x$dec <- runif(n, -0.5, 0.5)
  x$p <- 1 + (x$ra > 10.5) + 2 * (x$dec > 0)
  x
}
fixed_edges <- c(0.005, 0.03, 0.5)

# the CPU instruction sets, and AVX-512 without VPOPCNTDQ (the nibble
# popcount) as a fifth: list(WTHETA_CPU_ISA, WTHETA_CPU_VPOPCNT)
fixed_isas <- function() {
  out <- lapply(machine_isas(), function(i) c(WTHETA_CPU_ISA = i,
                                              WTHETA_CPU_VPOPCNT = ""))
  if ("avx512" %in% machine_isas())
    out <- c(out, list(c(WTHETA_CPU_ISA = "avx512", WTHETA_CPU_VPOPCNT = "0")))
  out
}

fixed_counts <- function(x, y = NULL, words, weights = "w", grid = TRUE,
                         env = c(WTHETA_TEST_FAULT = ""), threads = 2L,
                         ...) {
  with_grid(grid, with_env(env, pair_counts(
    x, y, bins = fixed_edges, backend = "cpu", threads = threads,
    weights = weights, bitwise = words, ...)))
}

test_that("PIP tasks of one slot occur with bulk counting, on every ISA (canary)", {
  # the cells of the policy's quarter of the last edge: wider cells (these
  # catalogs are sparse enough to be widened) make fewer tasks than the
  # canary's threshold counts on
  old <- options(wtheta.grid_scale = 1)
  on.exit(options(old))
  x <- pip_dense(2500, 2, 41)
  y <- pip_dense(2000, 2, 42)
  ref <- fixed_counts(x, words = bw2, grid = FALSE)
  ref_c <- fixed_counts(x, y, words = bw2, grid = FALSE)
  for (env in fixed_isas()) {
    env <- c(env, WTHETA_TEST_FAULT = "fixed")
    # one false pair per task of one slot: many of them, in bins 1 and 2
    bad <- fixed_counts(x, words = bw2, env = env)
    expect_gt(sum(bad$counts) - sum(ref$counts), 100)
    expect_identical(bad$counts[3], ref$counts[3])  # nothing is that wide
    expect_gt(sum(fixed_counts(x, y, words = bw2, env = env)$counts) -
                sum(ref_c$counts), 100)
    # and with patches (the grouped walk)
    expect_gt(sum(fixed_counts(x, words = bw2, env = env,
                               patches = "p")$counts) - sum(ref$counts), 100)
    # not without the grid; nor with an angular table (a weight that
    # varies inside a bin), here one of weight 1 that leaves the sums
    expect_identical(fixed_counts(x, words = bw2, env = env,
                                  grid = FALSE)$counts, ref$counts)
    flat <- fixed_counts(x, words = bw2, env = env,
                         angular = data.frame(theta = c(0.001, 1),
                                              weight = c(1, 1)))
    expect_identical(flat$counts, ref$counts)
    expect_equal(flat$weighted, ref$weighted, tolerance = 1e-12)
  }
})

test_that("PIP tasks of one slot count exactly: auto, cross, words, weights, ISAs, threads", {
  x <- pip_dense(2500, 3, 43)
  y <- pip_dense(2000, 3, 44)
  for (words in list("b1", bw2, c("b1", "b2", "b3"))) {
    bx <- as.matrix(x[, words])
    by <- as.matrix(y[, words])
    refs <- list(
      a_w = pip_brute_counts(x, edges = fixed_edges, wx = x$w, bx = bx),
      a_1 = pip_brute_counts(x, edges = fixed_edges, bx = bx),
      c_w = pip_brute_counts(x, y, edges = fixed_edges, wx = x$w, wy = y$w,
                             bx = bx, by = by),
      c_1 = pip_brute_counts(x, y, edges = fixed_edges, bx = bx, by = by))
    for (env in fixed_isas()) for (th in c(1L, 2L)) {
      got <- list(
        a_w = fixed_counts(x, words = words, env = env, threads = th),
        a_1 = fixed_counts(x, words = words, weights = NULL, env = env,
                           threads = th),
        c_w = fixed_counts(x, y, words = words, env = env, threads = th),
        c_1 = fixed_counts(x, y, words = words, weights = NULL, env = env,
                           threads = th))
      for (k in names(refs)) expect_pip(got[[k]], refs[[k]])
      # the same sums, bit for bit, on 1 and 2 threads
      if (th == 2L)
        for (k in names(refs))
          expect_identical(got[[k]]$weighted, fixed_counts(
            x, if (startsWith(k, "c")) y, words = words,
            weights = if (endsWith(k, "w")) "w", env = env,
            threads = 1L)$weighted)
    }
  }
})

test_that("PIP tasks of one slot with patches match brute force per patch pair", {
  x <- pip_dense(2500, 2, 45)
  y <- pip_dense(2000, 2, 46)
  bx <- as.matrix(x[, bw2])
  by <- as.matrix(y[, bw2])
  ref_a <- pip_brute_counts(x, edges = fixed_edges, wx = x$w, bx = bx,
                            px = x$p, P = 4)
  ref_c <- pip_brute_counts(x, y, edges = fixed_edges, bx = bx, by = by,
                            px = x$p, py = y$p, P = 4)
  for (env in fixed_isas()) for (th in c(1L, 2L)) {
    pa <- fixed_counts(x, words = bw2, env = env, threads = th,
                       patches = "p")
    pc <- fixed_counts(x, y, words = bw2, weights = NULL, env = env,
                       threads = th, patches = "p")
    for (r in list(list(pa, ref_a), list(pc, ref_c))) {
      expect_pip(r[[1]], r[[2]])
      expect_identical(unclass(r[[1]]$patch_counts) + 0, r[[2]]$patch_counts)
      expect_equal(unclass(r[[1]]$patch_weighted) + 0,
                   r[[2]]$patch_weighted, tolerance = 1e-12)
    }
  }
})

# The count form (issue 37's CPU speed): a PIP job whose individual
# weights are all 1 (none given, or all 1), with words, no angular table
# and no mean_theta counts pairs by slot and popcount in the CPU kernels
# and makes its weight sums sum_c n[c] by_count[c] when the counters are
# flushed (src/cpu/driver.c, flush_count()). WTHETA_TEST_FAULT=pipcount
# adds one false pair per call of its kernels: it shows which jobs take
# it.

# pair_counts() on the CPU with the environment variables env set
count_form <- function(x, y = NULL, words, bins = pip_bins(),
                       weights = NULL, grid = FALSE, threads = 2L,
                       env = c(WTHETA_TEST_FAULT = ""), ...) {
  with_grid(grid, with_env(env, pair_counts(
    x, y, bins = bins, backend = "cpu", threads = threads,
    weights = weights, bitwise = words, ...)))
}

test_that("the PIP count form matches brute force: auto, cross, 1 to 4 words, noffset, grid, ISAs, threads", {
  x <- pip_catalog(230, k = 4, seed = 51)
  y <- pip_catalog(170, k = 4, seed = 52)
  for (nw in 1:4) {
    words <- paste0("b", seq_len(nw))
    bx <- as.matrix(x[, words])
    by <- as.matrix(y[, words])
    for (o in c(1, 0)) {
      refs <- list(
        a = pip_brute_counts(x, edges = pip_edges, bx = bx, noffset = o,
                             default_value = 2.5),
        c = pip_brute_counts(x, y, edges = pip_edges, bx = bx, by = by,
                             noffset = o, default_value = 2.5))
      for (env in fixed_isas()) for (g in list(FALSE, TRUE))
        for (th in c(1L, 2L)) {
          got <- list(
            a = count_form(x, words = words, grid = g, threads = th,
                           env = env, noffset = o, default_value = 2.5),
            c = count_form(x, y, words = words, grid = g, threads = th,
                           env = env, noffset = o, default_value = 2.5))
          for (k in names(refs)) expect_pip(got[[k]], refs[[k]])
        }
    }
  }
})

test_that("the PIP count form runs for unit weights only (canary), on every ISA", {
  x <- pip_catalog(240, k = 2, seed = 53)
  y <- pip_catalog(160, k = 2, seed = 54)
  bx <- as.matrix(x[, bw2])
  by <- as.matrix(y[, bw2])
  ref_a <- pip_brute_counts(x, edges = pip_edges, bx = bx)
  ref_c <- pip_brute_counts(x, y, edges = pip_edges, bx = bx, by = by)
  x1 <- x
  x1$w <- 1
  y1 <- y
  y1$w <- 1
  # w differs from 1 in one object of y only
  y2 <- y1
  y2$w[77] <- 1.5
  ref_c2 <- pip_brute_counts(x, y, edges = pip_edges, wx = x1$w, wy = y2$w,
                             bx = bx, by = by)
  ang <- data.frame(theta = c(0.001, 20), weight = c(1, 1))
  for (env in fixed_isas()) for (g in list(FALSE, TRUE)) {
    bad <- c(env, WTHETA_TEST_FAULT = "pipcount")
    # no weights, or weights all 1: the count form, one false pair in the
    # first bin per call of its kernels
    for (r in list(
      list(count_form(x, words = bw2, grid = g, env = bad), ref_a),
      list(count_form(x1, words = bw2, weights = "w", grid = g, env = bad),
           ref_a),
      list(count_form(x, y, words = bw2, grid = g, env = bad), ref_c),
      list(count_form(x1, y1, words = bw2, weights = "w", grid = g,
                      env = bad), ref_c))) {
      expect_gt(r[[1]]$counts[1], r[[2]]$counts[1])
      expect_identical(as.double(r[[1]]$counts[-1]),
                       as.double(r[[2]]$counts[-1]))
    }
    # other weights (one of them on one side), an angular table (of
    # weight 1, which leaves the sums) or mean_theta: not the count form,
    # and the sums those weights give
    expect_pip(count_form(x1, y2, words = bw2, weights = "w", grid = g,
                          env = bad), ref_c2)
    expect_pip(count_form(x, words = bw2, weights = "w", grid = g,
                          env = bad),
               pip_brute_counts(x, edges = pip_edges, wx = x$w, bx = bx))
    expect_pip(count_form(x, y, words = bw2, grid = g, env = bad,
                          angular = ang), ref_c)
    mt <- count_form(x, words = bw2, grid = g, env = bad, mean_theta = TRUE)
    expect_pip(mt, ref_a)
    expect_equal(mt$theta_sum, ref_a$theta_sum, tolerance = 1e-12)
  }
})

test_that("the PIP count form with patches and tasks of one slot, deterministic", {
  x <- pip_dense(2500, 3, 55)
  y <- pip_dense(2000, 3, 56)
  for (words in list("b1", c("b1", "b2", "b3"))) {
    bx <- as.matrix(x[, words])
    by <- as.matrix(y[, words])
    ref_a <- pip_brute_counts(x, edges = fixed_edges, bx = bx, noffset = 0,
                              default_value = 4, px = x$p, P = 4)
    ref_c <- pip_brute_counts(x, y, edges = fixed_edges, bx = bx, by = by,
                              px = x$p, py = y$p, P = 4)
    for (env in fixed_isas()) for (g in list(FALSE, TRUE)) {
      got <- list()
      for (th in c(1L, 2L)) {
        pa <- count_form(x, words = words, bins = fixed_edges, grid = g,
                         threads = th, env = env, patches = "p",
                         noffset = 0, default_value = 4)
        pc <- count_form(x, y, words = words, bins = fixed_edges, grid = g,
                         threads = th, env = env, patches = "p")
        for (r in list(list(pa, ref_a), list(pc, ref_c))) {
          expect_pip(r[[1]], r[[2]])
          expect_identical(unclass(r[[1]]$patch_counts) + 0,
                           r[[2]]$patch_counts)
          expect_equal(unclass(r[[1]]$patch_weighted) + 0,
                       r[[2]]$patch_weighted, tolerance = 1e-12)
        }
        got[[th]] <- list(pa$weighted, pc$weighted,
                          unclass(pa$patch_weighted))
      }
      # the same sums, bit for bit, on 1 and 2 threads
      expect_identical(got[[1]], got[[2]])
    }
  }
})

test_that("the PIP count form of large jobs (AVX-512's float kernel) matches brute force and the weighted kernel", {
  # above 4194304 pairs the CPU builds its float table, and AVX-512 counts
  # the count form with the float prefilter (wt_cpu_f32_pip); the weighted
  # PIP kernel (an angular table of weight 1 takes it) gives the same
  # counts and, to 1e-12, the same sums
  x <- pip_catalog(3100, k = 4, seed = 57)
  y <- pip_catalog(2900, k = 4, seed = 58)
  x$ra <- x$ra / 3
  y$ra <- y$ra / 3
  e <- c(0.01, 0.05, 0.2, 0.5, 1, 2, 4, 20)
  ang <- data.frame(theta = c(0.001, 20), weight = c(1, 1))
  ref <- pip_brute_counts(x, edges = e, bx = as.matrix(x[, bw2]))
  for (env in fixed_isas()) {
    expect_pip(count_form(x, words = bw2, bins = e, env = env), ref)
    for (nw in c(1, 3, 4)) for (g in list(FALSE, TRUE)) {
      words <- paste0("b", seq_len(nw))
      for (yy in list(NULL, y)) for (th in c(1L, 2L)) {
        got <- count_form(x, yy, words = words, bins = e, grid = g,
                          threads = th, env = env, noffset = 0,
                          default_value = 3)
        w <- count_form(x, yy, words = words, bins = e, grid = g,
                        threads = th, env = env, noffset = 0,
                        default_value = 3, angular = ang)
        expect_identical(got$counts, w$counts)
        expect_equal(got$weighted, w$weighted, tolerance = 1e-12)
        expect_gt(sum(got$counts), 4194304 / 20)
      }
    }
  }
})

test_that("32 words: the count form up to 65536 counters a histogram copy", {
  # 32 words: 1025 counters a slot; 7 bins (9 slots) take the count form,
  # 70 bins (72 slots, 73800 counters) the weighted kernels; both exact
  x <- pip_catalog(110, k = 32, seed = 59)
  words <- paste0("b", 1:32)
  bx <- as.matrix(x[, words])
  e70 <- seq(0.1, 12, length.out = 71)
  ref7 <- pip_brute_counts(x, edges = pip_edges, bx = bx)
  ref70 <- pip_brute_counts(x, edges = e70, bx = bx)
  for (env in fixed_isas()) {
    expect_pip(count_form(x, words = words, env = env), ref7)
    expect_pip(count_form(x, words = words, bins = e70, env = env), ref70)
    bad <- c(env, WTHETA_TEST_FAULT = "pipcount")
    expect_gt(count_form(x, words = words, env = bad)$counts[1],
              ref7$counts[1])
    expect_pip(count_form(x, words = words, bins = e70, env = bad), ref70)
  }
})
