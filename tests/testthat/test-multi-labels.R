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
            "patch_weighted")
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

test_that("labelled_part() splits a labelled count into the separate counts", {
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
      split <- function(raw, La, Lb, s, t, kind, y) {
        part <- wtheta:::labelled_part(raw, nb, P, La, Lb, s - 1L, t - 1L,
                                       kind)
        wtheta:::labelled_pair_counts(part, d[[s]], y, edges, run, 1L,
                                      proc.time()[["elapsed"]])
      }
      auto <- brute_labelled(u, NULL, edges, 3L, P)
      for (s in 1:3) {
        for (t in s:3) {
          got <- if (s == t) split(auto, 3L, 3L, s, s, "auto", NULL) else
            split(auto, 3L, 3L, s, t, "pair", d[[t]])
          expect_true(got$labelled)
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

test_that("labelled_part() refuses a result of another shape", {
  raw <- list(slots = matrix(0, 6, 8), wsum = NULL)
  expect_error(wtheta:::labelled_part(raw, 4L, 0L, 3L, 3L, 0L, 0L, "auto"),
               "8 histograms of 6 slots, not 9 of 6", fixed = TRUE)
  expect_error(wtheta:::labelled_part(list(slots = matrix(0, 6, 9)), 4L, 0L,
                                      3L, 3L, 1L, 0L, "pair"),
               "s < t", fixed = TRUE)
})
