# wtheta_multi()'s labelled counts (issue 33): the samples' pairs counted
# in one labelled count of their union, split into the separate counts

# every field of a count as the separate count's: counts and everything
# made of the points themselves identical, the engine's weight sums
# within 1e-12 relative; not what describes the shared count (its times,
# pairs_skipped) nor the unit (set later, by call_counts())
expect_same_count <- function(got, ref) {
  shared <- c("elapsed", "grid_plan_s", "pairs_skipped", "gpu_ms",
              "gpu_idle_s", "labelled", "theta_units")
  sums <- c("weighted", "weighted_below", "weighted_above",
            "patch_weighted", "patch_margins_weighted")
  expect_setequal(setdiff(names(got), shared), setdiff(names(ref), shared))
  for (k in setdiff(names(ref), c(shared, sums))) {
    expect_identical(got[[k]], ref[[k]], label = paste0("got$", k))
  }
  for (k in intersect(names(ref), sums)) {
    expect_equal(got[[k]], ref[[k]], tolerance = 1e-12,
                 label = paste0("got$", k))
  }
  expect_identical(class(got), class(ref))
}

# The raw C result of a labelled count by brute force: the union `u`
# (labelled_union(): grouped by patch) with itself (r NULL) or with `r`
# (labelled when r$lab is given), every pair's angle binned, its
# histogram (out La + s) Lb + t with out = (p - 1) + (q - 1) P, the pairs
# (s, t) and (t, s) of an auto count within one patch in (min, max)
brute_labelled <- function(u, r, edges, S, P) {
  auto <- is.null(r)
  b <- if (auto) u else r
  La <- S
  Lb <- if (auto || !is.null(r$lab)) S else 1L
  Pn <- max(P, 1L)
  nb <- length(edges) - 1L
  n_row <- nb + 2L
  ij <- expand.grid(i = seq_len(nrow(u$xyz)), j = seq_len(nrow(b$xyz)))
  if (auto) ij <- ij[ij$i < ij$j, ]
  d <- u$xyz[ij$i, , drop = FALSE] - b$xyz[ij$j, , drop = FALSE]
  ang <- 2 * asin(sqrt(rowSums(d^2)) / 2) * (180 / pi)
  slot <- findInterval(ang, edges) + 1L
  p <- if (P > 0L) u$patch[ij$i] else rep(1L, nrow(ij))
  q <- if (P > 0L) b$patch[ij$j] else rep(1L, nrow(ij))
  stopifnot(!auto || all(p <= q))          # the union is grouped by patch
  s <- u$lab[ij$i] - 1L
  t <- if (Lb == 1L) rep(0L, nrow(ij)) else b$lab[ij$j] - 1L
  if (auto) {
    swap <- p == q & s > t
    tmp <- s[swap]
    s[swap] <- t[swap]
    t[swap] <- tmp
  }
  col <- (((p - 1) + (q - 1) * Pn) * La + s) * Lb + t + 1
  at <- (col - 1) * n_row + slot
  len <- n_row * Pn^2 * La * Lb
  slots <- matrix(as.double(tabulate(at, len)), n_row)
  wsum <- NULL
  if (!is.null(u$weights)) {
    wp <- u$weights[ij$i] * b$weights[ij$j]
    agg <- rowsum(wp, at)
    wsum <- numeric(len)
    wsum[as.integer(rownames(agg))] <- agg[, 1L]
    wsum <- matrix(wsum, n_row)
  }
  list(slots = slots, wsum = wsum, gpu_ms = NA_real_, pairs_skipped = 0,
       plan_s = 0)
}

# three small samples (the third repeats points of the first: the union is
# a concatenation), randoms; patch labels 1..3 in every catalog
labels_setup <- function(seed) {
  set.seed(seed)
  mk <- function(n) {
    x <- random_sky(n, ra = c(0, 12), dec = c(-6, 6))
    x$w <- runif(n, 0.5, 2)
    x$lab <- sample(rep_len(1:3, n))
    x
  }
  d <- list(mk(40), mk(30), mk(25))
  d[[3]][1:8, ] <- d[[1]][1:8, ]
  list(d = d, ran = list(mk(50), mk(45), mk(35)),
       edges = c(0.5, 1, 2, 4, 7))
}

test_that("label_parts() and labelled_part() split a labelled count into the separate counts", {
  st <- labels_setup(33)
  edges <- st$edges
  nb <- length(edges) - 1L
  run <- wtheta:::choose_backend("cpu", NULL)
  for (weighted in c(FALSE, TRUE)) {
    for (patched in c(FALSE, TRUE)) {
      prep <- function(x) {
        prepare_catalog(x, weights = if (weighted) "w",
                        patches = if (patched) "lab", threads = 1)
      }
      d <- lapply(st$d, prep)
      r <- lapply(st$ran, prep)
      P <- if (patched) 3L else 0L
      u <- wtheta:::labelled_union(d)
      expect_identical(nrow(u$xyz), 95L)
      expect_identical(tabulate(u$lab), c(40L, 30L, 25L))
      sep <- function(x, y) {
        pair_counts(x, y, bins = edges, backend = "cpu", threads = 1)
      }
      # the raw histograms split in C (label_parts(), as a labelled count
      # returns them), one part picked
      split <- function(raw, La, Lb, s, t, kind, y) {
        parts <- .Call(wtheta:::C_label_parts, raw$slots, raw$wsum, nb, La,
                       Lb, kind != "cross", P)
        part <- wtheta:::labelled_part(parts, La, Lb, s - 1L, t - 1L, kind)
        wtheta:::labelled_pair_counts(part, d[[s]], y, edges, run, 1L,
                                      0.25)
      }
      auto <- brute_labelled(u, NULL, edges, 3L, P)
      for (s in 1:3) {
        for (t in s:3) {
          got <- if (s == t) split(auto, 3L, 3L, s, s, "auto", NULL) else
            split(auto, 3L, 3L, s, t, "pair", d[[t]])
          expect_true(got$labelled)
          expect_identical(got$elapsed, 0.25)   # the labelled count's
          expect_same_count(got, sep(d[[s]], if (t != s) d[[t]]))
          expect_gt(sum(got$counts), 0)
        }
      }
      # one randoms catalog, unlabelled; the randoms of each, labelled
      cross <- brute_labelled(u, list(xyz = r[[1L]]$xyz,
                                      weights = r[[1L]]$weights,
                                      patch = r[[1L]]$patch), edges, 3L, P)
      for (s in 1:3) {
        expect_same_count(split(cross, 3L, 1L, s, 1L, "cross", r[[1L]]),
                          sep(d[[s]], r[[1L]]))
      }
      ru <- wtheta:::labelled_union(r)
      cross <- brute_labelled(u, ru, edges, 3L, P)
      for (s in 1:3) {
        for (t in 1:3) {
          expect_same_count(split(cross, 3L, 3L, s, t, "cross", r[[t]]),
                            sep(d[[s]], r[[t]]))
        }
      }
    }
  }
})

test_that("label_parts() and labelled_part() refuse a result of another shape", {
  # 8 histograms of 6 slots (4 bins) are not 3 x 3 labels without patches
  expect_error(.Call(wtheta:::C_label_parts, matrix(0, 6, 8), NULL, 4L, 3L,
                     3L, TRUE, 0L),
               "labelled count of 8 histograms, not 1 x 3 x 3", fixed = TRUE)
  parts <- .Call(wtheta:::C_label_parts, matrix(0, 6, 9), NULL, 4L, 3L, 3L,
                 TRUE, 0L)
  expect_length(parts, 6L)
  expect_error(wtheta:::labelled_part(parts, 3L, 3L, 1L, 0L, "pair"),
               "s < t", fixed = TRUE)
  expect_error(wtheta:::labelled_part(parts, 3L, 3L, 0L, 0L, "cross"),
               "no part (0, 0) in a labelled count of 6 parts", fixed = TRUE)
})

# wtheta_multi() with labelled counts (options(wtheta.labels = TRUE), the
# default) and with a count each (FALSE): the same pair counts, w,
# replicates and covariance
multi_both <- function(...) {
  run <- function(lab) {
    old <- options(wtheta.labels = lab)
    on.exit(options(old))
    untrusted_cov_ok(wtheta_multi(..., threads = 1, backend = "cpu",
                                  check_footprint = FALSE))
  }
  list(lab = run(TRUE), sep = run(FALSE))
}

expect_same_multi <- function(lab, sep, n_labelled) {
  pl <- attr(lab, "pair_counts")
  ps <- attr(sep, "pair_counts")
  expect_identical(names(pl), names(ps))
  # the samples' counts came from the labelled counts, the randoms' pairs
  # from counts of their own; the other call counted each alone
  expect_identical(sum(vapply(pl, function(pc) isTRUE(pc$labelled), TRUE)),
                   n_labelled)
  expect_false(any(vapply(ps, function(pc) isTRUE(pc$labelled), TRUE)))
  for (k in names(ps)) expect_same_count(pl[[k]], ps[[k]])
  el <- attr(lab, "entries")
  es <- attr(sep, "entries")
  expect_identical(names(el), names(es))
  for (k in names(es)) {
    cl <- attr(el[[k]], "pair_counts")
    cs <- attr(es[[k]], "pair_counts")
    expect_identical(names(cl), names(cs))
    for (col in names(cs)) expect_same_count(cl[[col]], cs[[col]])
    expect_equal(el[[k]]$w, es[[k]]$w, tolerance = 1e-12)
    expect_equal(attr(el[[k]], "replicates"), attr(es[[k]], "replicates"),
                 tolerance = 1e-12)
  }
  expect_equal(lab$w, sep$w, tolerance = 1e-12)
  expect_equal(lab$w_err, sep$w_err, tolerance = 1e-12)
  expect_equal(attr(lab, "replicates"), attr(sep, "replicates"),
               tolerance = 1e-12)
  expect_equal(attr(lab, "cov"), attr(sep, "cov"), tolerance = 1e-12)
  expect_true(all(is.finite(lab$w)))
}

multi_setup <- function() {
  set.seed(51)
  sky <- function(n) random_sky(n, ra = c(0, 25), dec = c(-12, 12))
  z <- list(a = sky(300), b = sky(250), c = sky(200))
  z$c[1:40, ] <- z$a[1:40, ]             # shared points
  for (k in names(z)) z[[k]]$w <- runif(nrow(z[[k]]), 0.5, 2)
  ran <- sky(800)
  ran$w <- runif(800, 0.5, 2)
  list(z = z, ran = ran, rs = list(a = sky(600), b = sky(700), c = sky(500)),
       bins = theta_bins(0.3, 15, n = 6, log = TRUE))
}

test_that("labelled counts give wtheta_multi() the separate counts' results", {
  st <- multi_setup()
  for (grid in list("prune", FALSE)) {
    with_grid(grid, {
      for (err in c("jackknife", "bootstrap", "poisson")) {
        for (wt in list(NULL, "w")) {
          r <- multi_both(st$z, st$ran, st$bins, error = err, weights = wt,
                          n_patches = 6, seed = 5, n_boot = 30)
          # D_s D_t (6) and D_s R (3) labelled, RR on its own
          expect_same_multi(r$lab, r$sep, 9L)
        }
      }
      # randoms per sample: D_s R_t (9) labelled; R_s R_t on their own
      r <- multi_both(st$z, st$rs, st$bins, error = "jackknife",
                      weights = "w", n_patches = 5, seed = 2)
      expect_same_multi(r$lab, r$sep, 15L)
    })
  }
})

test_that("labelled counts take prepared catalogs and patch labels", {
  st <- multi_setup()
  for (k in names(st$z)) st$z[[k]]$lab <- sample(1:4, nrow(st$z[[k]]), TRUE)
  st$ran$lab <- rep_len(1:4, nrow(st$ran))
  zp <- lapply(st$z, prepare_catalog, weights = "w", patches = "lab",
               threads = 1)
  rp <- prepare_catalog(st$ran, weights = "w", patches = "lab", threads = 1)
  r <- multi_both(zp, rp, st$bins, error = "jackknife")
  expect_same_multi(r$lab, r$sep, 9L)
  r <- multi_both(st$z, st$ran, st$bins, error = "bootstrap",
                  patches = "lab", n_boot = 20, seed = 3)
  expect_same_multi(r$lab, r$sep, 9L)
})

test_that("the counts it cannot label are counted one by one", {
  st <- multi_setup()
  plain <- function(m) {
    !any(vapply(attr(m, "pair_counts"), function(pc) isTRUE(pc$labelled),
                TRUE))
  }
  # self pairs, mean_theta, one sample
  m <- wtheta_multi(st$z, st$ran, st$bins, self_pairs = TRUE, threads = 1,
                    backend = "cpu", check_footprint = FALSE)
  expect_true(plain(m))
  m <- wtheta_multi(st$z, st$ran, st$bins, mean_theta = TRUE, threads = 1,
                    backend = "cpu", check_footprint = FALSE)
  expect_true(plain(m))
  m <- wtheta_multi(st$z["a"], st$ran, st$bins, threads = 1,
                    backend = "cpu", check_footprint = FALSE)
  expect_true(plain(m))
  m <- wtheta_multi(st$z, st$ran, st$bins, threads = 1, backend = "cpu",
                    check_footprint = FALSE)
  expect_false(plain(m))
  old <- options(wtheta.labels = "yes")
  on.exit(options(old))
  expect_error(wtheta_multi(st$z, st$ran, st$bins, threads = 1,
                            backend = "cpu", check_footprint = FALSE),
               "option `wtheta.labels` must be TRUE or FALSE, not",
               fixed = TRUE)
})

test_that("labelled counts need a quarter of the memory available", {
  st <- labels_setup(7)
  d <- lapply(st$d, prepare_catalog, weights = "w", patches = "lab",
              threads = 1)
  cats <- stats::setNames(d, c("data$a", "data$b", "data$c"))
  how <- list(run = list(backend = "cpu"), pip = NULL, mean_theta = FALSE)
  # 3^2 patch pairs x 3^2 sample pairs x 6 slots x 32 bytes, weighted
  need <- wtheta:::labelled_bytes(3L, 3L, 4L, TRUE)
  expect_identical(need, 81 * 6 * 32)
  use <- function(available) {
    wtheta:::use_labels(how, cats, names(cats), character(), FALSE, 4L,
                        available)
  }
  expect_true(use(4 * need))
  expect_false(use(4 * need - 1))
  expect_true(use(NA_real_))
  expect_identical(wtheta:::labelled_bytes(2L, 0L, 4L, FALSE), 4 * 6 * 16)
})

# Survey-like sizes, where the engine's own forms for labelled counts come
# in: node pairs inside one bin as tasks of one slot, added by the tally
# of their columns' labels (do_labelled_fixed(), src/cpu/driver.c), and,
# on AVX-512, the rows of a count labelled on its rows only counted in
# runs of one label by the sliced form (wt_ctx.sorted_rows). The same
# counts as the separate counts, and the forms are reached: a false pair
# per task of one slot (WTHETA_TEST_FAULT=fixed) or per call of the sliced
# form (WTHETA_CPU_SLICED=canary) shows in the labelled counts.
# A dense square degree (as test-pip.R's tasks of one slot), in cells of
# the policy's quarter of the last edge (options(wtheta.grid_scale = 1)),
# with bins wide enough for node pairs inside one
labels_field <- function() {
  set.seed(57)
  sky <- function(n) random_sky(n, ra = c(10, 11), dec = c(-0.5, 0.5))
  z <- list(a = sky(2500), b = sky(2100), c = sky(1800))
  for (k in names(z)) z[[k]]$w <- runif(nrow(z[[k]]), 0.5, 2)
  ran <- sky(6000)
  ran$w <- runif(6000, 0.5, 2)
  list(z = z, ran = ran, bins = theta_bins(0.005, 0.5, n = 6, log = TRUE))
}

labelled_under <- function(env, f, ...) {
  prev <- Sys.getenv(names(env), unset = NA, names = TRUE)
  do.call(Sys.setenv, as.list(env))
  on.exit(for (v in names(prev)) {
    if (is.na(prev[[v]])) Sys.unsetenv(v) else
      do.call(Sys.setenv, as.list(prev[v]))
  })
  old <- options(wtheta.labels = TRUE)
  on.exit(options(old), add = TRUE)
  untrusted_cov_ok(wtheta_multi(f$z, f$ran, f$bins, threads = 1,
                                backend = "cpu", check_footprint = FALSE,
                                ...))
}

test_that("labelled counts of survey size: tasks of one slot and rows by label", {
  old <- options(wtheta.grid_scale = 1)
  on.exit(options(old))
  f <- labels_field()
  for (args in list(list(error = "none"),
                    list(error = "jackknife", n_patches = 4, seed = 3),
                    list(error = "jackknife", n_patches = 4, seed = 3,
                         weights = "w"))) {
    r <- do.call(multi_both, c(list(f$z, f$ran, f$bins), args))
    expect_same_multi(r$lab, r$sep, 9L)
    # walked with pruning only (every pair visited): the same counts (the
    # weight sums to 1e-12)
    off <- do.call(labelled_under, c(list(c(WTHETA_LABELS_BULK = "0"), f),
                                     args))
    for (k in names(attr(off, "pair_counts"))) {
      expect_same_count(attr(r$lab, "pair_counts")[[k]],
                        attr(off, "pair_counts")[[k]])
    }
  }
  # the tally of tasks of one slot is reached, in the samples' pairs
  # (labelled) only; here with patches (the grouped walk splits node pairs
  # of this field into tasks of one slot)
  lab <- function(m, key) attr(m, "pair_counts")[[key]]$counts
  jk <- list(error = "jackknife", n_patches = 4, seed = 3)
  ref <- do.call(labelled_under, c(list(c(WTHETA_TEST_FAULT = ""), f), jk))
  bad <- do.call(labelled_under, c(list(c(WTHETA_TEST_FAULT = "fixed"), f),
                                   jk))
  expect_false(identical(lab(bad, "data$a-data$b-FALSE"),
                         lab(ref, "data$a-data$b-FALSE")))
  expect_false(identical(lab(bad, "data$a-random-FALSE"),
                         lab(ref, "data$a-random-FALSE")))
  expect_identical(lab(bad, "random-random-FALSE"),
                   lab(ref, "random-random-FALSE"))
  # the sliced form takes the rows of the samples against the randoms:
  # its false pairs lie below the first edge
  skip_if(!"avx512" %in% machine_isas(), "no AVX-512: no sliced form")
  canary <- labelled_under(c(WTHETA_CPU_SLICED = "canary"), f)
  below <- function(m, key) attr(m, "pair_counts")[[key]]$n_below
  for (s in c("a", "b", "c")) {
    key <- paste0("data$", s, "-random-FALSE")
    expect_gt(below(canary, key) - below(ref, key), 10)
    expect_identical(lab(canary, key), lab(ref, key))
  }
})
