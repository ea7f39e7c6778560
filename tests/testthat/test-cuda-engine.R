# GPU tests: skipped where no usable CUDA GPU is present (as on CI).

gpu_vs_cpu <- function(x, y = NULL, bins, self_pairs = FALSE) {
  g <- pair_counts(x, y, bins = bins, self_pairs = self_pairs,
                   backend = "cuda")
  c <- pair_counts(x, y, bins = bins, self_pairs = self_pairs,
                   backend = "cpu", threads = test_threads())
  expect_identical(g$backend, "cuda")
  expect_identical(slots_of(g), slots_of(c))
  expect_true(is.finite(g$gpu_ms) && g$gpu_ms >= 0)
  # the idle share: the call's seconds without a kernel running
  expect_true(is.finite(g$gpu_idle_s) && g$gpu_idle_s >= 0)
  expect_equal(g$gpu_idle_s, max(0, g$elapsed - g$gpu_ms / 1000 /
                                   length(g$devices)), tolerance = 1e-12)
  expect_identical(c$gpu_idle_s, NA_real_)
  invisible(g)
}

test_that("GPU counts equal CPU counts bin by bin", {
  skip_if_no_cuda()
  set.seed(31)
  x <- random_sky(3001)
  y <- random_sky(2999, ra = c(20, 140), dec = c(-30, 60))
  binnings <- list(
    theta_bins(0, 180, width = 0.25),
    theta_bins(0.01, 10, n = 20, log = TRUE),
    theta_bins(edges = c(0.3, 1, 2.5, 7, 30, 31, 179)),
    theta_bins(1e-4, 180, n = 4096, log = TRUE),
    theta_bins(0, 180, n = 70000)
  )
  for (b in binnings) {
    gpu_vs_cpu(x, NULL, b)
    gpu_vs_cpu(x, y, b)
    gpu_vs_cpu(y, NULL, b, self_pairs = TRUE)
  }
  # clustered data and exact coincidences
  d <- simulate_catalog(4000, sigma = 0.01, seed = 8)
  d <- rbind(d, d[1:50, ], data.frame(ra = c(0, 180, 7), dec = c(90, -90, 0)))
  gpu_vs_cpu(d, NULL, theta_bins(0, 30, width = 0.01))
  gpu_vs_cpu(d, NULL, theta_bins(0, 30, width = 0.01), self_pairs = TRUE)
})

test_that("odd sizes count the same on GPU and CPU", {
  skip_if_no_cuda()
  set.seed(32)
  b <- theta_bins(0, 180, width = 1)
  for (n in c(1, 2, 31, 33, 1000)) {
    x <- random_sky(n)
    gpu_vs_cpu(x, NULL, b)
    gpu_vs_cpu(x, random_sky(7), b)
  }
  big <- random_sky(1000003)
  gpu_vs_cpu(big, random_sky(33), b)
  gpu_vs_cpu(random_sky(31), big, b)
})

test_that("the reference catalogs count the same on GPU and CPU", {
  skip_if_no_cuda()
  D <- read_catalog(shared_data("data_100k_arcmin.txt"), units = "arcmin")
  R <- read_catalog(shared_data("flat_100k_arcmin.txt"), units = "arcmin")
  b <- theta_bins(0, 90, width = 0.25)
  gpu_vs_cpu(D[1:20000, ], NULL, b)
  gpu_vs_cpu(D[1:20000, ], R[1:20000, ], b)
  gpu_vs_cpu(R[50001:70000, ], NULL, theta_bins(0.01, 10, n = 20, log = TRUE))
  # the course randoms are uniform in (ra, dec), not in area: the footprint
  # check warns, as test-footprint_check.R asserts; here only the counts matter
  expect_warning(w <- wtheta(D, R, b, self_pairs = TRUE, backend = "cuda"),
                 "do not seem to share a footprint")
  expect_identical(attr(w, "backend"), "cuda")
  expect_identical(sum(w$DD), 1e10)
  expect_lt(abs(w$w[1] - 2.338), 0.03)
})

test_that("several GPUs give the same histogram as one", {
  skip_if_no_cuda()
  b <- wtheta_backends()
  devs <- b$device[b$backend == "cuda" & b$available]
  skip_if(length(devs) < 2, "fewer than two GPUs")
  x <- random_sky(50000)
  one <- pair_counts(x, bins = theta_bins(0, 180, width = 1), devices = devs[1])
  all <- pair_counts(x, bins = theta_bins(0, 180, width = 1), devices = devs)
  expect_identical(all$counts, one$counts)
  expect_identical(all$devices, as.integer(devs))
})

test_that("GPU errors are clear and leave the session usable", {
  skip_if_no_cuda()
  x <- random_sky(10)
  n_dev <- sum(wtheta_backends()$backend == "cuda")
  expect_error(pair_counts(x, bins = c(0, 1), devices = n_dev),
               "`devices` must be distinct CUDA device indices")
  expect_error(pair_counts(x, bins = c(0, 1), devices = c(0, 0)),
               "`devices` must be distinct")
  pc <- pair_counts(x, bins = c(0, 180), backend = "cuda")
  expect_identical(pc$counts, 45)
  expect_identical(pair_counts(x, bins = c(0, 180))$backend, "cuda")
})

# ---- task lists, weights and faults through the core's entry point ----

# one call of the core: backend 1 = CPU, 2 = CUDA; tasks a k x 5 matrix
# (a0, a1, b0, b1, out; zero based) or NULL
core_counts <- function(a, b, edges, backend, w1 = NULL, w2 = NULL,
                        tasks = NULL, n_out = 1L, self_pairs = FALSE) {
  .Call(wtheta:::C_pair_counts, a, b, as.double(edges), self_pairs,
        as.integer(backend), test_threads(), 0L, w1, w2,
        if (is.null(tasks)) NULL else {
          storage.mode(tasks) <- "double"
          tasks
        }, as.integer(n_out), FALSE, 0L, 0L)
}

# a catalog sorted by patch (RA slices), with the patch ranges
patched <- function(cat, n_patch) {
  lab <- cut(cat$ra, quantile(cat$ra, seq(0, 1, length.out = n_patch + 1)),
             include.lowest = TRUE, labels = FALSE)
  o <- order(lab)
  cat <- cat[o, ]
  lab <- lab[o]
  end <- cumsum(tabulate(lab, n_patch))
  list(cat = cat, xyz = wtheta:::unit_vectors(cat, 1L),
       start = c(0, end[-n_patch]), end = end)
}

# jackknife-style tasks: diagonal per patch and one per pair of patches
auto_tasks <- function(p) {
  k <- length(p$start)
  pq <- which(upper.tri(diag(k), diag = TRUE), arr.ind = TRUE)
  pq <- pq[order(pq[, 1], pq[, 2]), , drop = FALSE]
  cbind(p$start[pq[, 1]], p$end[pq[, 1]], p$start[pq[, 2]], p$end[pq[, 2]],
        seq_len(nrow(pq)) - 1)
}

cross_tasks <- function(p, q) {
  g <- expand.grid(i = seq_along(p$start), j = seq_along(q$start))
  cbind(p$start[g$i], p$end[g$i], q$start[g$j], q$end[g$j],
        seq_len(nrow(g)) - 1)
}

test_that("task lists count the same on GPU and CPU", {
  skip_if_no_cuda()
  set.seed(41)
  p <- patched(random_sky(9000), 4)       # patches of 2250: several rows
  q <- patched(random_sky(3000, ra = c(10, 200), dec = c(-40, 50)), 3)
  for (edges in list(seq(0, 180, by = 0.25),
                     10^seq(-2, 1, length.out = 21),
                     c(0, 1e-3, 0.5, 2, 30, 179.9, 180))) {
    ta <- auto_tasks(p)
    g <- core_counts(p$xyz, NULL, edges, 2, tasks = ta, n_out = nrow(ta))
    c <- core_counts(p$xyz, NULL, edges, 1, tasks = ta, n_out = nrow(ta))
    expect_identical(g$slots, c$slots)
    expect_true(all(g$slots[, ta[, 1] == ta[, 3]] >= 0))
    # all tasks into one histogram: the whole auto count
    one <- core_counts(p$xyz, NULL, edges, 2, tasks = cbind(ta[, 1:4], 0),
                       n_out = 1L)
    whole <- core_counts(p$xyz, NULL, edges, 1)
    expect_identical(one$slots, whole$slots)
    expect_identical(rowSums(g$slots), whole$slots[, 1])
    # self pairs with tasks
    gs <- core_counts(p$xyz, NULL, edges, 2, tasks = ta, n_out = nrow(ta),
                      self_pairs = TRUE)
    cs <- core_counts(p$xyz, NULL, edges, 1, tasks = ta, n_out = nrow(ta),
                      self_pairs = TRUE)
    expect_identical(gs$slots, cs$slots)
    # cross job, patches of both catalogs
    tc <- cross_tasks(p, q)
    g <- core_counts(p$xyz, q$xyz, edges, 2, tasks = tc, n_out = nrow(tc))
    c <- core_counts(p$xyz, q$xyz, edges, 1, tasks = tc, n_out = nrow(tc))
    expect_identical(g$slots, c$slots)
    expect_identical(rowSums(g$slots),
                     core_counts(p$xyz, q$xyz, edges, 1)$slots[, 1])
  }
})

test_that("odd task lists: empty, partial, repeated, disjoint in one range", {
  skip_if_no_cuda()
  set.seed(42)
  x <- wtheta:::unit_vectors(random_sky(5000), 1L)
  y <- wtheta:::unit_vectors(random_sky(777), 1L)
  edges <- seq(0, 180, by = 2)
  tasks <- rbind(c(0, 0, 0, 0, 0),          # empty diagonal
                 c(10, 10, 20, 30, 1),      # empty a range
                 c(0, 1, 0, 1, 1),          # one point: no pair
                 c(5, 4000, 5, 4000, 2),    # diagonal over most points
                 c(5, 4000, 5, 4000, 2),    # the same again
                 c(0, 5, 4000, 5000, 3),    # disjoint
                 c(4000, 4001, 4001, 5000, 3),
                 c(17, 2117, 2117, 4999, 0),
                 c(4999, 5000, 4999, 5000, 4))
  g <- core_counts(x, NULL, edges, 2, tasks = tasks, n_out = 5L)
  c <- core_counts(x, NULL, edges, 1, tasks = tasks, n_out = 5L)
  expect_identical(g$slots, c$slots)
  expect_identical(sum(g$slots[, 3]), 2 * 3995 * 3994 / 2)
  expect_identical(sum(g$slots[, 5]), 0)
  tc <- rbind(c(0, 5000, 0, 777, 0), c(100, 100, 0, 777, 1),
              c(3, 2900, 700, 701, 1), c(0, 5000, 0, 777, 2))
  g <- core_counts(x, y, edges, 2, tasks = tc, n_out = 3L)
  c <- core_counts(x, y, edges, 1, tasks = tc, n_out = 3L)
  expect_identical(g$slots, c$slots)
  expect_identical(g$slots[, 1], g$slots[, 3])
  # no tasks at all
  g <- core_counts(x, NULL, edges, 2, tasks = matrix(0, 0, 5), n_out = 2L)
  expect_identical(sum(g$slots), 0)
})

# brute-force weighted sums per slot, in double (the exactness contract's
# separation, so the bins are those of the counts)
ref_wsum <- function(x, y, wx, wy, edges) {
  a <- ref_unit(x)
  b <- if (is.null(y)) a else ref_unit(y)
  d2 <- outer(a$x, b$x, "-")^2 + outer(a$y, b$y, "-")^2
  d2 <- d2 + outer(a$z, b$z, "-")^2
  ww <- outer(wx, if (is.null(y)) wx else wy)
  if (is.null(y)) {
    keep <- upper.tri(d2)
    d2 <- d2[keep]
    ww <- ww[keep]
  }
  slot <- findInterval(as.vector(d2), ref_c2(edges)) + 1L
  s <- numeric(length(edges) + 1L)
  r <- rowsum(as.vector(ww), slot, reorder = TRUE)
  s[as.integer(rownames(r))] <- r[, 1]
  list(w = s, n = tabulate(slot, nbins = length(edges) + 1L))
}

expect_close <- function(got, want, tol = 1e-12) {
  scale <- pmax(abs(want), 1e-300)
  expect_true(all(abs(got - want) <= tol * scale),
              info = paste("max relative difference",
                           max(abs(got - want) / scale)))
}

test_that("weighted GPU sums match a brute-force double reference", {
  skip_if_no_cuda()
  set.seed(43)
  x <- random_sky(1500)
  y <- random_sky(1100, ra = c(0, 90))
  wx <- runif(nrow(x), 0.5, 2)
  wy <- rexp(nrow(y))
  xa <- wtheta:::unit_vectors(x, 1L)
  ya <- wtheta:::unit_vectors(y, 1L)
  for (edges in list(seq(0, 180, by = 0.5), 10^seq(-1, 2, length.out = 21))) {
    g <- core_counts(xa, NULL, edges, 2, w1 = wx)
    r <- ref_wsum(x, NULL, wx, NULL, edges)
    expect_identical(g$slots[, 1], as.double(r$n))
    expect_close(g$wsum[, 1], r$w)
    g <- core_counts(xa, ya, edges, 2, w1 = wx, w2 = wy)
    r <- ref_wsum(x, y, wx, wy, edges)
    expect_identical(g$slots[, 1], as.double(r$n))
    expect_close(g$wsum[, 1], r$w)
    # unit weights: the sums are the counts
    g <- core_counts(xa, ya, edges, 2, w1 = rep(1, nrow(x)),
                     w2 = rep(1, nrow(y)))
    expect_identical(g$wsum, g$slots)
    # self pairs add w_i^2 at zero separation
    g <- core_counts(xa, NULL, edges, 2, w1 = wx, self_pairs = TRUE)
    r <- ref_wsum(x, NULL, wx, NULL, edges)
    want <- 2 * r$w
    zero <- findInterval(0, ref_c2(edges)) + 1L
    want[zero] <- want[zero] + sum(wx^2)
    expect_close(g$wsum[, 1], want)
  }
})

test_that("weighted task lists match per-task references", {
  skip_if_no_cuda()
  set.seed(44)
  p <- patched(random_sky(2400), 3)
  w <- runif(nrow(p$cat), 0, 3)
  edges <- seq(0, 180, by = 1)
  ta <- auto_tasks(p)
  g <- core_counts(p$xyz, NULL, edges, 2, w1 = w, tasks = ta,
                   n_out = nrow(ta))
  c <- core_counts(p$xyz, NULL, edges, 1, tasks = ta, n_out = nrow(ta))
  expect_identical(g$slots, c$slots)
  for (k in seq_len(nrow(ta))) {
    ia <- seq(ta[k, 1] + 1, ta[k, 2])
    ib <- seq(ta[k, 3] + 1, ta[k, 4])
    r <- if (ta[k, 1] == ta[k, 3]) {
      ref_wsum(p$cat[ia, ], NULL, w[ia], NULL, edges)
    } else {
      ref_wsum(p$cat[ia, ], p$cat[ib, ], w[ia], w[ib], edges)
    }
    expect_identical(g$slots[, k], as.double(r$n))
    expect_close(g$wsum[, k], r$w)
  }
})

test_that("injected GPU faults give clear errors and the next call works", {
  skip_if_no_cuda()
  on.exit(Sys.unsetenv("WTHETA_TEST_FAULT"), add = TRUE)
  set.seed(45)
  x <- wtheta:::unit_vectors(random_sky(3000), 1L)
  edges <- seq(0, 180, by = 0.25)
  want <- core_counts(x, NULL, edges, 1)$slots
  w <- runif(nrow(x))
  wwant <- core_counts(x, NULL, edges, 2, w1 = w)$wsum
  msgs <- c(alloc = "CUDA error: cudaMalloc \\(fault injected by WTHETA_TEST_FAULT=alloc\\)",
            launch = "CUDA error: kernel launch \\(fault injected by WTHETA_TEST_FAULT=launch\\)",
            copy = "CUDA error: cudaMemcpy of counts \\(fault injected by WTHETA_TEST_FAULT=copy\\)",
            thread = "counting thread failed: .*WTHETA_TEST_FAULT=thread")
  for (f in names(msgs)) {
    Sys.setenv(WTHETA_TEST_FAULT = f)
    expect_error(core_counts(x, NULL, edges, 2), msgs[[f]])
    expect_error(core_counts(x, NULL, edges, 2, w1 = w), msgs[[f]])
    Sys.unsetenv("WTHETA_TEST_FAULT")
    expect_identical(core_counts(x, NULL, edges, 2)$slots, want)
    expect_close(core_counts(x, NULL, edges, 2, w1 = w)$wsum, wwant)
  }
})

test_that("progress polling does not change the counts", {
  skip_if_no_cuda()
  x <- wtheta:::unit_vectors(random_sky(20000), 1L)
  edges <- seq(0, 180, by = 1)
  a <- .Call(wtheta:::C_pair_counts, x, NULL, edges, FALSE, 2L, 1L, 0L,
             NULL, NULL, NULL, 1L, TRUE, 0L, 0L)
  expect_identical(a$slots, core_counts(x, NULL, edges, 1)$slots)
})

test_that("several GPUs split task lists and weights like one", {
  skip_if_no_cuda()
  b <- wtheta_backends()
  devs <- b$device[b$backend == "cuda" & b$available]
  skip_if(length(devs) < 2, "fewer than two GPUs")
  set.seed(46)
  p <- patched(random_sky(60000), 5)
  ta <- auto_tasks(p)
  edges <- seq(0, 180, by = 0.5)
  run <- function(d, w = NULL) {
    .Call(wtheta:::C_pair_counts, p$xyz, NULL, edges, FALSE, 2L, 1L,
          as.integer(d), w, NULL, ta, nrow(ta), FALSE, 0L, 0L)
  }
  expect_identical(run(devs)$slots, run(devs[1])$slots)
  expect_identical(run(devs)$slots,
                   core_counts(p$xyz, NULL, edges, 1, tasks = ta,
                               n_out = nrow(ta))$slots)
  w <- runif(nrow(p$cat))
  expect_close(run(devs, w)$wsum, run(devs[1], w)$wsum)
})

test_that("weighted GPU sums equal the CPU engine's within 1e-12", {
  skip_if_no_cuda()
  set.seed(47)
  p <- patched(random_sky(20000, ra = c(0, 120), dec = c(-30, 60)), 4)
  q <- patched(random_sky(7000, ra = c(30, 150), dec = c(-20, 70)), 3)
  wp <- rexp(nrow(p$cat)) + 0.1
  wq <- runif(nrow(q$cat), 0.2, 5)
  for (edges in list(seq(0, 180, by = 0.25), 10^seq(-2, 1.5, length.out = 21))) {
    ta <- auto_tasks(p)
    for (self in c(FALSE, TRUE)) {
      g <- core_counts(p$xyz, NULL, edges, 2, w1 = wp, tasks = ta,
                       n_out = nrow(ta), self_pairs = self)
      c <- core_counts(p$xyz, NULL, edges, 1, w1 = wp, tasks = ta,
                       n_out = nrow(ta), self_pairs = self)
      expect_identical(g$slots, c$slots)
      expect_close(g$wsum, c$wsum)
    }
    tc <- cross_tasks(p, q)
    g <- core_counts(p$xyz, q$xyz, edges, 2, w1 = wp, w2 = wq, tasks = tc,
                     n_out = nrow(tc))
    c <- core_counts(p$xyz, q$xyz, edges, 1, w1 = wp, w2 = wq, tasks = tc,
                     n_out = nrow(tc))
    expect_identical(g$slots, c$slots)
    expect_close(g$wsum, c$wsum)
    g <- core_counts(p$xyz, q$xyz, edges, 2, w1 = wp, w2 = wq)
    c <- core_counts(p$xyz, q$xyz, edges, 1, w1 = wp, w2 = wq)
    expect_identical(g$slots, c$slots)
    expect_close(g$wsum, c$wsum)
  }
})

# points whose separations are exact multiples of `step` degrees (on the
# equator and on a meridian), and random ones: with edges at multiples of
# step, thousands of pairs lie within rounding of an edge
edge_sky <- function(step = 0.25, n_random = 2000) {
  k <- 0:999
  rbind(data.frame(ra = k * step, dec = 0),
        data.frame(ra = 5, dec = seq(-80, 80, by = step)),
        random_sky(n_random, ra = c(0, 60), dec = c(-40, 40)))
}

test_that("weighted GPU counts of pairs on the edges equal the CPU's", {
  skip_if_no_cuda()
  set.seed(51)
  x <- edge_sky()
  y <- edge_sky(n_random = 1500)
  wx <- runif(nrow(x), 0.5, 2)
  wy <- rexp(nrow(y)) + 0.1
  xa <- wtheta:::unit_vectors(x, 1L)
  ya <- wtheta:::unit_vectors(y, 1L)
  # log-spaced edges on multiples of the step (one edge a cell of the
  # float table), and dense linear ones
  for (edges in list(0.25 * 2^(0:9), seq(0, 180, by = 0.5),
                     c(0.25, 0.5, 0.75, 1, 2, 3, 5, 8, 13, 21, 34))) {
    # the pairs of the equator's points within rounding of an edge: many
    e <- xa[1:1000, ]
    d <- 2 * asin(sqrt(outer(e[, 1], e[, 1], "-")^2 +
                       outer(e[, 2], e[, 2], "-")^2 +
                       outer(e[, 3], e[, 3], "-")^2) / 2) * 180 / pi
    d <- d[upper.tri(d)]
    expect_gt(sum(vapply(edges, function(b) sum(abs(d - b) < 1e-9), 0)),
              1000)
    g <- core_counts(xa, NULL, edges, 2, w1 = wx)
    c <- core_counts(xa, NULL, edges, 1, w1 = wx)
    expect_identical(g$slots, c$slots)
    expect_close(g$wsum, c$wsum)
    g <- core_counts(xa, ya, edges, 2, w1 = wx, w2 = wy)
    c <- core_counts(xa, ya, edges, 1, w1 = wx, w2 = wy)
    expect_identical(g$slots, c$slots)
    expect_close(g$wsum, c$wsum)
    # unit weights: the sums are the counts
    g <- core_counts(xa, ya, edges, 2, w1 = rep(1, nrow(x)),
                     w2 = rep(1, nrow(y)))
    expect_identical(g$wsum, g$slots)
  }
})

test_that("PIP-weighted GPU counts of pairs on the edges equal the CPU's", {
  skip_if_no_cuda()
  set.seed(52)
  words <- function(cat, k) {
    for (j in seq_len(k)) cat[[paste0("b", j)]] <- floor(runif(nrow(cat)) * 2^32)
    cat$w <- runif(nrow(cat), 0.5, 2)
    cat
  }
  x <- words(edge_sky(), 5)
  y <- words(edge_sky(n_random = 1500), 5)
  bins <- theta_bins(edges = 0.25 * 2^(0:9))
  # 1 to 4 words take the weighted kernel (words padded to 2 or 4), 5 the
  # exact one; with and without individual weights; noffset 0 with a
  # default value (pairs with no common bit)
  for (k in 1:5) {
    for (w in list(NULL, "w")) {
      args <- list(bins = bins, weights = w, bitwise = paste0("b", 1:k),
                   noffset = if (k == 2) 0 else 1, default_value = 2)
      for (yy in list(NULL, y)) {
        g <- do.call(pair_counts, c(list(x, yy, backend = "cuda"), args))
        c <- do.call(pair_counts, c(list(x, yy, backend = "cpu",
                                         threads = test_threads()), args))
        expect_identical(g$backend, "cuda")
        expect_identical(c(g$n_below, g$counts, g$n_above),
                         c(c$n_below, c$counts, c$n_above))
        expect_close(g$weighted, c$weighted)
      }
    }
  }
  # every bit set: each pair weight is 1 exactly, so the sums are the
  # counts
  ones <- x
  for (j in 1:2) ones[[paste0("b", j)]] <- 2^32 - 1
  g <- pair_counts(ones, bins = bins, bitwise = c("b1", "b2"),
                   backend = "cuda")
  expect_identical(g$weighted, g$counts)
})

test_that("wtheta_free_gpu frees the cached buffers and counting goes on", {
  if (!has_cuda()) expect_identical(wtheta_free_gpu(), 0L)
  skip_if_no_cuda()
  x <- random_sky(3000)
  e <- seq(0, 180, by = 5)
  a <- pair_counts(x, bins = e, backend = "cuda")
  expect_gte(wtheta_free_gpu(), 1L)
  expect_identical(wtheta_free_gpu(), 0L)
  b <- pair_counts(x, bins = e, backend = "cuda")
  expect_identical(a$counts, b$counts)
})

test_that("GPU theta_mean equals the CPU engine's within 1e-12", {
  skip_if_no_cuda()
  D <- read_catalog(shared_data("data_100k_arcmin.txt"), units = "arcmin")
  R <- read_catalog(shared_data("flat_100k_arcmin.txt"), units = "arcmin")
  d <- D[1:20000, ]
  r <- R[50001:70000, ]
  set.seed(49)
  d$w <- runif(nrow(d), 0.5, 2)
  r$w <- rexp(nrow(r)) + 0.1
  same <- function(g, c) {
    expect_identical(c(g$n_below, g$counts, g$n_above),
                     c(c$n_below, c$counts, c$n_above))
    expect_identical(is.na(g$theta_mean), is.na(c$theta_mean))
    ok <- !is.na(c$theta_mean)
    expect_close(g$theta_mean[ok], c$theta_mean[ok])
    expect_close(g$theta_sum, c$theta_sum)
    if (!is.null(c$weighted)) expect_close(g$weighted, c$weighted)
  }
  for (b in list(theta_bins(0, 90, width = 0.25),
                 theta_bins(0.01, 10, n = 20, log = TRUE))) {
    for (w in list(NULL, "w")) {
      for (y in list(NULL, r)) {
        g <- pair_counts(d, y, bins = b, weights = w, backend = "cuda",
                         mean_theta = TRUE)
        c <- pair_counts(d, y, bins = b, weights = w, backend = "cpu",
                         threads = test_threads(), mean_theta = TRUE)
        same(g, c)
        # the counts are those of a count without mean_theta
        g0 <- pair_counts(d, y, bins = b, weights = w, backend = "cuda")
        expect_identical(g0$counts, g$counts)
      }
    }
    g <- pair_counts(d, bins = b, weights = "w", self_pairs = TRUE,
                     backend = "cuda", mean_theta = TRUE)
    c <- pair_counts(d, bins = b, weights = "w", self_pairs = TRUE,
                     backend = "cpu", threads = test_threads(),
                     mean_theta = TRUE)
    same(g, c)
  }
})

test_that("overlapped GPU counts equal GPU counts one after the other", {
  skip_if_no_cuda()
  D <- read_catalog(shared_data("data_100k_arcmin.txt"), units = "arcmin")
  R <- read_catalog(shared_data("flat_100k_arcmin.txt"), units = "arcmin")
  set.seed(53)
  D$w <- runif(nrow(D), 0.5, 2)
  P <- sky_patches(R, 8, seed = 3)
  b <- theta_bins(0, 90, width = 0.25)
  run <- function(...) wtheta(D, R, bins = b, backend = "cuda",
                              self_pairs = TRUE, check_footprint = FALSE,
                              ...)
  calls <- list(
    plain = function() run(),
    jack = function() run(patches = P, error = "jackknife"),
    weighted = function() run(weights = "w"),
    mean = function() run(mean_theta = TRUE),
    log_grid = function() {
      old <- options(wtheta.grid = TRUE)
      on.exit(options(old))
      wtheta(D, R, bins = theta_bins(0.01, 10, n = 20, log = TRUE),
             backend = "cuda", check_footprint = FALSE)
    }
  )
  cols <- c("DD", "DR", "RR", "w", "w_err", "theta_mean")
  for (k in names(calls)) {
    old <- options(wtheta.overlap = FALSE)
    # 8 patches for 360 bins: the covariance warnings are expected here
    one <- untrusted_cov_ok(calls[[k]]())
    options(wtheta.overlap = TRUE)
    two <- untrusted_cov_ok(calls[[k]]())
    options(old)
    have <- intersect(cols, names(one))
    if (k %in% c("weighted", "mean")) {
      # the GPU adds weights and angles with atomics, in no fixed order:
      # two runs one after the other differ in the last bits too
      expect_equal(as.data.frame(two)[have], as.data.frame(one)[have],
                   tolerance = 1e-12, info = k)
      raw <- function(x) vapply(attr(x, "pair_counts"), function(pc)
        sum(pc$counts), 0)
      expect_identical(raw(two), raw(one), info = k)
    } else {
      expect_identical(as.data.frame(two)[have], as.data.frame(one)[have],
                       info = k)
    }
    pcs <- attr(two, "pair_counts")
    expect_true(all(vapply(pcs, `[[`, "", "backend") == "cuda"), info = k)
  }
})

test_that("a fault in one of several overlapped GPU counts stops the call cleanly", {
  skip_if_no_cuda()
  on.exit(Sys.unsetenv("WTHETA_TEST_FAULT"), add = TRUE)
  set.seed(57)
  d <- random_sky(4000)
  r <- random_sky(5000)
  b <- theta_bins(0, 180, width = 1)
  want <- wtheta(d, r, bins = b, backend = "cpu", threads = test_threads(),
                 check_footprint = FALSE)
  for (f in c("alloc", "launch", "copy", "thread")) {
    Sys.setenv(WTHETA_TEST_FAULT = f)
    expect_error(wtheta(d, r, bins = b, backend = "cuda",
                        check_footprint = FALSE),
                 paste0("WTHETA_TEST_FAULT=", f), info = f)
    Sys.unsetenv("WTHETA_TEST_FAULT")
    # every count of the failed call was stopped and freed: the next call
    # counts right
    got <- wtheta(d, r, bins = b, backend = "cuda", check_footprint = FALSE)
    expect_identical(got[c("DD", "DR", "RR", "w")],
                     want[c("DD", "DR", "RR", "w")], info = f)
  }
})

test_that("a fault on one of several GPUs stops the call cleanly", {
  skip_if_no_cuda()
  b <- wtheta_backends()
  devs <- b$device[b$backend == "cuda" & b$available]
  skip_if(length(devs) < 2, "fewer than two GPUs")
  on.exit(Sys.unsetenv("WTHETA_TEST_FAULT"), add = TRUE)
  set.seed(58)
  # devices pull launches as they go, and a launch holds at least 2^28
  # pairs, so a device is only sure to launch (and the launch fault to
  # strike) when each count has many launches: RR's 2 x 10^10 pairs make
  # 4 a device on four GPUs (30,000 randoms made 2 launches in all, and
  # on four GPUs the last device counted none)
  d <- random_sky(20000)
  r <- random_sky(200000)
  bins <- theta_bins(0.01, 10, n = 20, log = TRUE)
  want <- wtheta(d, r, bins = bins, backend = "cpu", threads = test_threads(),
                 check_footprint = FALSE)
  last <- devs[length(devs)]
  for (f in c("alloc", "launch", "copy", "thread")) {
    Sys.setenv(WTHETA_TEST_FAULT = paste0(f, "@", last))
    expect_error(wtheta(d, r, bins = bins, backend = "cuda", devices = devs,
                        check_footprint = FALSE),
                 paste0("device ", last, "( failed)?.*WTHETA_TEST_FAULT=", f,
                        "|WTHETA_TEST_FAULT=", f, ".*device ", last),
                 info = f)
    # a device outside the call is never struck
    Sys.setenv(WTHETA_TEST_FAULT = paste0(f, "@", max(devs) + 1L))
    got <- wtheta(d, r, bins = bins, backend = "cuda", devices = devs,
                  check_footprint = FALSE)
    expect_identical(got[c("DD", "DR", "RR")], want[c("DD", "DR", "RR")],
                     info = f)
    Sys.unsetenv("WTHETA_TEST_FAULT")
    # the failed call freed every device's work: the next call counts right
    got <- wtheta(d, r, bins = bins, backend = "cuda", devices = devs,
                  check_footprint = FALSE)
    expect_identical(got[c("DD", "DR", "RR", "w")],
                     want[c("DD", "DR", "RR", "w")], info = f)
  }
})

test_that("counts over many device chunks equal the CPU's", {
  skip_if_no_cuda()
  # 2^21 points make a device chunk: 5.5 and 3.2 million points are 3 and
  # 2 chunks, 5 in all for the cross count, more than the 2 slots of a
  # context: the whole catalogs stay on the device, each chunk loaded once,
  # or (WTHETA_TEST_FAULT=slots) chunks are loaded again into the slots
  # between launches. The grid's points come ordered; without the grid the
  # device orders each chunk inside the task ranges.
  set.seed(61)
  a <- random_sky(5.5e6)
  b <- random_sky(3.2e6)
  bins <- theta_bins(0.05, 1, n = 8, log = TRUE)
  old <- options(wtheta.grid = "prune")
  on.exit(options(old), add = TRUE)
  on.exit(Sys.unsetenv("WTHETA_TEST_FAULT"), add = TRUE)
  # the GPU's counts of x and y both ways, each against the CPU's `want`;
  # the last of them
  both_ways <- function(x, y, want) {
    for (way in c("resident", "slots")) {
      if (way == "slots") Sys.setenv(WTHETA_TEST_FAULT = "slots")
      g <- pair_counts(x, y, bins = bins, backend = "cuda")
      Sys.unsetenv("WTHETA_TEST_FAULT")
      expect_identical(c(g$n_below, g$counts, g$n_above),
                       c(want$n_below, want$counts, want$n_above),
                       info = way)
    }
    g
  }
  for (y in list(NULL, b)) {
    c <- pair_counts(a, y, bins = bins, backend = "cpu",
                     threads = wtheta_threads())
    g <- both_ways(a, y, c)
    expect_gt(sum(g$counts), 1e6)
  }
  # no grid on the GPU: every pair through the kernels, chunks ordered on
  # the device (4.3 x 10^6 points, 3 chunks, against 10^5, resident and in
  # slots); the CPU's counts through its grid are the same
  x <- a[1:4.3e6, ]
  y <- b[1:1e5, ]
  c <- pair_counts(x, y, bins = bins, backend = "cpu",
                   threads = wtheta_threads())
  options(wtheta.grid = FALSE)
  g <- both_ways(x, y, c)
  # nearly every pair lies beyond the last edge: the kernels count most
  # of them in bulk, runs of points at a time
  n <- as.numeric(nrow(x)) * nrow(y)
  expect_gt(g$pairs_skipped, 0.5 * n)
  expect_lte(g$pairs_skipped, n)
  options(wtheta.grid = "prune")
  # weighted: the exact kernel, the same loads
  w <- runif(nrow(b), 0.5, 2)
  b$w <- w
  a2 <- a[1:2.3e6, ]
  a2$w <- runif(nrow(a2), 0.5, 2)
  g <- pair_counts(a2, b, bins = bins, weights = "w", backend = "cuda")
  c <- pair_counts(a2, b, bins = bins, weights = "w", backend = "cpu",
                   threads = wtheta_threads())
  expect_identical(g$counts, c$counts)
  expect_equal(g$weighted, c$weighted, tolerance = 1e-12)
})

test_that("the kernels' bulk counting of runs of points is exact", {
  skip_if_no_cuda()
  # Without the grid every pair goes to the kernels. Clustered points and
  # wide bins put many runs of a tile's j points, with the item's i points,
  # inside one bin or beyond the last edge: the fast kernel counts those in
  # bulk (pairs_skipped says how many pairs), the others pair by pair; a
  # bin edge at zero and at exact coincidences keeps some runs straddling.
  # Every count equals the CPU's.
  x <- simulate_catalog(1e5, ra_range = c(0, 60), dec_range = c(-30, 30),
                        sigma = 0.05, seed = 9)
  x <- rbind(x, x[1:300, ])
  set.seed(71)
  y <- random_sky(8e4, ra = c(0, 60), dec = c(-30, 30))
  binnings <- list(theta_bins(0.5, 40, n = 6, log = TRUE),
                   theta_bins(0, 20, width = 5))
  for (b in binnings) {
    for (yy in list(NULL, y)) {
      g <- with_grid(FALSE, pair_counts(x, yy, bins = b, backend = "cuda"))
      c <- pair_counts(x, yy, bins = b, backend = "cpu",
                       threads = wtheta_threads())
      expect_identical(slots_of(g), slots_of(c))
      nx <- as.numeric(nrow(x))
      n <- if (is.null(yy)) nx * (nx - 1) / 2 else nx * nrow(yy)
      expect_identical(sum(slots_of(g)), n)
      expect_gt(g$pairs_skipped, 0.2 * n)
      expect_lt(g$pairs_skipped, n)
    }
  }
  # self pairs: the diagonal's tiles are counted pair by pair
  g <- with_grid(FALSE, pair_counts(x, bins = binnings[[2]],
                                    self_pairs = TRUE, backend = "cuda"))
  c <- pair_counts(x, bins = binnings[[2]], self_pairs = TRUE,
                   backend = "cpu", threads = wtheta_threads())
  expect_identical(slots_of(g), slots_of(c))
})

test_that("a cross count counts the same with the larger catalog first", {
  # A cross count on the GPU runs with its larger catalog first
  # (gpu_larger_first() in src/core/count.c): pair_counts(x, y) with x the
  # smaller takes the swap, pair_counts(y, x) does not. Both must give the
  # CPU's counts (and, transposed, each other's patch arrays), and its
  # weighted and angle sums within 1e-12.
  skip_if_no_cuda()
  set.seed(53)
  x <- simulate_catalog(600, ra_range = c(10, 50), dec_range = c(-20, 20),
                        sigma = 0.3, seed = 4)
  y <- random_sky(20000, ra = c(0, 60), dec = c(-30, 30))
  x$w <- runif(nrow(x), 0.5, 2)
  y$w <- rexp(nrow(y)) + 0.1
  for (k in 1:2) {
    x[[paste0("b", k)]] <- floor(runif(nrow(x)) * 2^32)
    y[[paste0("b", k)]] <- floor(runif(nrow(y)) * 2^32)
  }
  P <- sky_patches(y, n_patches = 6, seed = 1)
  b <- theta_bins(0.05, 10, n = 16, log = TRUE)
  runs <- list(
    plain = list(),
    weighted = list(weights = "w", mean_theta = TRUE),
    patches = list(patches = P),
    weighted_patches = list(weights = "w", patches = P),
    pip = list(weights = "w", bitwise = c("b1", "b2"))
  )
  for (nm in names(runs)) {
    a <- runs[[nm]]
    one <- function(p, q, backend) {
      do.call(pair_counts, c(list(p, q, bins = b, backend = backend,
                                  threads = test_threads()), a))
    }
    c_xy <- one(x, y, "cpu")
    c_yx <- one(y, x, "cpu")
    for (g in list(xy = one(x, y, "cuda"), yx = one(y, x, "cuda"))) {
      expect_identical(g$backend, "cuda")
      ref <- if (identical(g$n1, c_xy$n1)) c_xy else c_yx
      expect_identical(c(g$n_below, g$counts, g$n_above),
                       c(ref$n_below, ref$counts, ref$n_above))
      expect_true(sum(g$counts) > 1e5)
      if (!is.null(ref$weighted)) expect_close(g$weighted, ref$weighted)
      if (!is.null(ref$theta_sum)) expect_close(g$theta_sum, ref$theta_sum)
      if (!is.null(ref$patch_counts)) {
        expect_identical(g$patch_counts, ref$patch_counts)
      }
      if (!is.null(ref$patch_weighted)) {
        expect_close(g$patch_weighted, ref$patch_weighted)
      }
    }
    if (!is.null(c_xy$patch_counts)) {
      expect_identical(c_xy$patch_counts,
                       aperm(c_yx$patch_counts, c(2, 1, 3)))
    }
  }
})
