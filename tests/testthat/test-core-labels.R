# Labelled counts (issue 33; R/labelled.R, src/core/labels.c): one count of
# a catalog whose points carry sample labels equals, histogram by
# histogram, the separate counts of each pair of samples.

lab_run <- list(backend = "cpu", devices = integer())

# a box of sky with n points, labels in 1..n_lab, weights, patches 1..n_p
lab_data <- function(n, n_lab, n_p, seed) {
  set.seed(seed)
  x <- random_sky(n, ra = c(0, 20), dec = c(-10, 10))
  list(xyz = wtheta:::unit_vectors(x, 1L),
       lab = sample.int(n_lab, n, replace = TRUE),
       w = runif(n, 0.5, 2), p = sample.int(n_p, n, replace = TRUE))
}

lab_edges <- c(0.3, 1, 2, 3.5)

# the separate count of points i of a against j of b (j NULL: the auto
# pairs of i): its n_bins + 2 slots and, weighted, their weight sums
sep_count <- function(a, i, j, w) {
  nb <- length(lab_edges) - 1L
  na <- length(i)
  if (na == 0L || (!is.null(j) && length(j) == 0L) ||
      (is.null(j) && na < 2L))
    return(list(n = numeric(nb + 2L), w = numeric(nb + 2L)))
  pc <- with_grid(FALSE, wtheta:::count_pairs(
    a$xyz[i, , drop = FALSE], if (!is.null(j)) a$b[j, , drop = FALSE],
    lab_edges, FALSE, lab_run, test_threads(),
    wa = if (w) a$w[i], wb = if (w && !is.null(j)) a$wb[j]))
  list(n = slots_of(pc),
       w = if (w) c(pc$weighted_below, pc$weighted, pc$weighted_above))
}

# checks the labelled count k (count_labelled()) of d against separate
# counts; cross: d$b (unit vectors), d$wb, d$lb (NULL: b unlabelled), d$pb.
# k$res holds a part per label pair (s, t), s outer (s <= t in an auto
# count): what a separate count of D_s with D_t returns, its totals over
# every slot and, with patches, its in-range bins by pair of patches (an
# auto part's [p, q] and [q, p] both the pairs between p and q)
check_labelled <- function(k, d, n_lab, w, patches) {
  res <- k$res
  auto <- k$is_auto
  nb <- length(lab_edges) - 1L
  la <- d$lab
  lb <- if (auto) la else d$lb
  n_lb <- if (auto || !is.null(lb)) n_lab else 1L
  pa <- if (patches) d$p else rep(1L, length(la))
  pb <- if (auto) pa else if (patches) d$pb else rep(1L, nrow(d$b))
  n_p <- if (patches) k$n_patches else 1L
  ref <- d
  if (auto) {
    ref$b <- d$xyz
    ref$wb <- d$w
  }
  expect_length(res, if (auto) n_lab * (n_lab + 1L) / 2L else n_lab * n_lb)
  at <- 0L
  for (s in seq_len(n_lab)) for (t in (if (auto) s else 1L):n_lb) {
    at <- at + 1L
    part <- res[[at]]
    self <- auto && s == t
    tot_n <- tot_w <- numeric(nb + 2L)
    arr_n <- arr_w <- array(0, c(n_p, n_p, nb))
    for (q in seq_len(n_p)) for (p in seq_len(n_p)) {
      if (self && p > q) next
      i <- which(la == s & pa == p)
      j <- which((if (is.null(lb)) TRUE else lb == t) & pb == q)
      e <- if (self && p == q) sep_count(ref, i, NULL, w) else
        sep_count(ref, i, j, w)
      tot_n <- tot_n + e$n
      arr_n[p, q, ] <- arr_n[p, q, ] + e$n[seq_len(nb) + 1L]
      if (self && p != q) arr_n[q, p, ] <- arr_n[q, p, ] + e$n[seq_len(nb) + 1L]
      if (w) {
        tot_w <- tot_w + e$w
        arr_w[p, q, ] <- arr_w[p, q, ] + e$w[seq_len(nb) + 1L]
        if (self && p != q)
          arr_w[q, p, ] <- arr_w[q, p, ] + e$w[seq_len(nb) + 1L]
      }
    }
    info <- sprintf("labels %d,%d", s, t)
    expect_identical(part$total, tot_n, info = info)
    expect_gt(sum(part$total), 0)
    if (patches) {
      expect_identical(part$patch_counts, arr_n, info = info)
      expect_null(part$slots)
    } else {
      expect_identical(part$slots, matrix(tot_n), info = info)
    }
    if (w) {
      expect_equal(part$wtotal, tot_w, tolerance = 1e-12, info = info)
      if (patches)
        expect_equal(part$patch_weighted, arr_w, tolerance = 1e-12,
                     info = info)
    } else {
      expect_null(part$wtotal)
    }
  }
}

labelled <- function(d, n_lab, w, patches, cross, lb = cross) {
  wtheta:::count_pairs(
    d$xyz, if (cross) d$b, lab_edges, FALSE, lab_run, test_threads(),
    wa = if (w) d$w, wb = if (w && cross) d$wb,
    pa = if (patches) d$p, pb = if (patches && cross) d$pb,
    n_patches = if (patches) max(d$p, if (cross) d$pb) else 0L,
    la = d$lab, lb = if (cross && lb) d$lb, n_lab = n_lab)
}

test_that("labelled counts refuse self pairs, angle sums, PIP and the GPU", {
  d <- lab_data(200, 2L, 1L, 1)
  count <- function(...) {
    wtheta:::count_pairs(d$xyz, NULL, lab_edges, FALSE, lab_run, 1L,
                         la = d$lab, n_lab = 2L, ...)
  }
  expect_error(wtheta:::count_pairs(d$xyz, NULL, lab_edges, TRUE, lab_run,
                                    1L, la = d$lab, n_lab = 2L),
               "labelled counts \\(n_lab = 2\\) cannot add self pairs")
  expect_error(count(mean_theta = TRUE),
               "labelled counts \\(n_lab = 2\\) cannot sum angles")
  pip <- list(c = list(0L, numeric(0), c(0, 10), c(1, 2)))
  expect_error(count(wa = d$w, pip = pip),
               "labelled counts \\(n_lab = 2\\) cannot carry PIP")
  cuda <- list(backend = "cuda", devices = 0L)
  expect_error(wtheta:::count_pairs(d$xyz, NULL, lab_edges, FALSE, cuda, 1L,
                                    la = d$lab, n_lab = 2L),
               "run on the CPU engine only")
  # a label beyond n_lab, a catalog a without labels
  expect_error(wtheta:::count_pairs(d$xyz, NULL, lab_edges, FALSE, lab_run,
                                    1L, la = d$lab + 1L, n_lab = 2L),
               "point [0-9]+ \\(from 1\\) has label 2, outside \\[0, 2\\)")
  h <- wtheta:::new_catalog_handle()
  ca <- wtheta:::catalog_handle(h, d$xyz)
  expect_error(.Call(wtheta:::C_pair_counts_catalogs, ca, NULL, lab_edges,
                     FALSE, wtheta:::wt_constant("backend", "cpu"), 1L,
                     integer(), NULL, 4L, FALSE, wtheta:::grid_mode(), 0L,
                     FALSE, NULL, 2L),
               "need labels on catalog a")
  # labels on b of a cross count, when given, are checked too
  hb <- wtheta:::new_catalog_handle()
  cb <- wtheta:::catalog_handle(hb, d$xyz, lab = rep(5L, 200))
  ca2 <- wtheta:::catalog_handle(wtheta:::new_catalog_handle(), d$xyz,
                                 lab = d$lab - 1L)
  expect_error(.Call(wtheta:::C_pair_counts_catalogs, ca2, cb, lab_edges,
                     FALSE, wtheta:::wt_constant("backend", "cpu"), 1L,
                     integer(), NULL, 4L, FALSE, wtheta:::grid_mode(), 0L,
                     FALSE, NULL, 2L),
               paste0("catalog b's point 1 \\(from 1\\) has label 5, ",
                      "outside \\[0, 2\\)"))
  # n_out must be the task histograms times La Lb
  expect_error(.Call(wtheta:::C_pair_counts_catalogs, ca2, NULL, lab_edges,
                     FALSE, wtheta:::wt_constant("backend", "cpu"), 1L,
                     integer(), NULL, 3L, FALSE, wtheta:::grid_mode(), 0L,
                     FALSE, NULL, 2L),
               "n_out = 3 is not the tasks' histograms times La Lb = 2 x 2")
  # the catalog's own check of labels, and the handle's identity
  expect_error(wtheta:::catalog_handle(wtheta:::new_catalog_handle(), d$xyz,
                                       lab = c(-1L, integer(199))),
               "label -1 of point 1 lies outside \\[0, 2\\^20\\)")
  expect_error(wtheta:::catalog_handle(wtheta:::new_catalog_handle(), d$xyz,
                                       lab = 1:3),
               "labels must be 200 integers")
  expect_error(wtheta:::catalog_handle(h, d$xyz, lab = d$lab - 1L),
               "other points, weights, patches or labels")
})

for (grid in list(FALSE, "prune", TRUE)) {
  test_that(paste("a labelled auto count equals the separate counts, grid",
                  grid), {
    for (patches in c(FALSE, TRUE)) for (w in c(FALSE, TRUE)) {
      d <- lab_data(700, 3L, 3L, 7)
      k <- with_grid(grid, labelled(d, 3L, w, patches, cross = FALSE))
      check_labelled(k, d, 3L, w, patches)
      # the grid pruned pairs, whose slot the label totals filled
      if (!isFALSE(grid)) expect_gt(k$pairs_skipped, 0)
    }
  })

  test_that(paste("a labelled cross count equals the separate counts, grid",
                  grid), {
    for (patches in c(FALSE, TRUE)) for (w in c(FALSE, TRUE))
      for (lb in c(TRUE, FALSE)) {
        d <- lab_data(500, 2L, 3L, 8)
        e <- lab_data(400, 2L, 3L, 9)
        d$b <- e$xyz
        d$wb <- e$w
        d$lb <- if (lb) e$lab
        d$pb <- e$p
        k <- with_grid(grid, labelled(d, 2L, w, patches, cross = TRUE,
                                      lb = lb))
        check_labelled(k, d, 2L, w, patches)
        if (!isFALSE(grid)) expect_gt(k$pairs_skipped, 0)
      }
  })
}

test_that("labels follow the points when the grid sorts them", {
  # the grid's sorted copies carry labels: a count through the grid and one
  # without agree slot for slot, and a label's auto pairs are its own
  d <- lab_data(900, 2L, 1L, 11)
  a <- with_grid("prune", labelled(d, 2L, FALSE, FALSE, cross = FALSE))
  b <- with_grid(FALSE, labelled(d, 2L, FALSE, FALSE, cross = FALSE))
  counts <- function(k) lapply(k$res, `[`, c("slots", "total"))
  expect_identical(counts(a), counts(b))
  expect_gt(a$pairs_skipped, 0)
  n1 <- sum(d$lab == 1L)
  # parts (1, 1), (1, 2), (2, 2): each sums to all its pairs
  expect_length(a$res, 3L)
  expect_identical(sum(a$res[[1L]]$total), choose(n1, 2))
  expect_identical(sum(a$res[[2L]]$total), n1 * (900 - n1))
  expect_identical(sum(a$res[[3L]]$total), choose(900 - n1, 2))
  expect_gt(sum(a$res[[2L]]$total[2:4]), 0)
})

test_that("every instruction set routes labels alike", {
  d <- lab_data(600, 3L, 3L, 13)
  for (isa in machine_isas()) for (grid in list(FALSE, "prune")) {
    k <- with_cpu_isa(isa, with_grid(grid, labelled(d, 3L, TRUE, TRUE,
                                                    cross = FALSE)))
    check_labelled(k, d, 3L, TRUE, TRUE)
  }
})

test_that("a count labelled on its rows only takes the narrow kernel", {
  # the narrow kernel's canary (WTHETA_TEST_FAULT=narrow) adds one false
  # pair per call: a labelled cross count whose b has no labels, through
  # the grid and unweighted, changes under it; with labels on both sides
  # (no narrow kernel) it does not
  d <- lab_data(3000, 2L, 1L, 21)
  e <- lab_data(2500, 2L, 1L, 22)
  d$b <- e$xyz
  d$lb <- e$lab
  # pairs in the bins (the slot beyond the last edge is filled from the
  # label totals: the canary's false pairs come off it)
  nb <- length(lab_edges) - 1L
  total <- function(k) {
    sum(vapply(k$res, function(p) sum(p$total[seq_len(nb) + 1L]), 0))
  }
  run <- function(lb, fault) {
    old <- Sys.getenv("WTHETA_TEST_FAULT", unset = NA)
    Sys.setenv(WTHETA_TEST_FAULT = fault)
    on.exit(if (is.na(old)) Sys.unsetenv("WTHETA_TEST_FAULT") else
      Sys.setenv(WTHETA_TEST_FAULT = old))
    total(with_grid("prune", labelled(d, 2L, FALSE, FALSE, cross = TRUE,
                                      lb = lb)))
  }
  pairs <- run(FALSE, "")
  expect_gt(pairs, 0)
  expect_identical(run(TRUE, ""), pairs)
  if (any(c("avx2", "avx512") %in% machine_isas())) {
    expect_gt(run(FALSE, "narrow"), pairs)
  }
  expect_identical(run(TRUE, "narrow"), pairs)
})
