# The CPU engine through the core's own entry point: task lists, weights,
# thread counts and injected faults, against brute-force R computations.

# one .Call of the core on the CPU; tasks: NULL or a k x 5 matrix
# (a0, a1, b0, b1, out), zero-based, end exclusive
cpu_counts <- function(x, y = NULL, edges, tasks = NULL, n_out = 1L,
                       wx = NULL, wy = NULL, threads = 1L,
                       self_pairs = FALSE) {
  xyz1 <- wtheta:::unit_vectors(x, 1L)
  xyz2 <- if (!is.null(y)) wtheta:::unit_vectors(y, 1L)
  .Call(wtheta:::C_pair_counts, xyz1, xyz2, as.double(edges), self_pairs,
        wtheta:::wt_constant("backend", "cpu"), as.integer(threads), 0L, wx,
        wy, if (!is.null(tasks)) matrix(as.double(tasks), ncol = 5L),
        as.integer(n_out), FALSE, wtheta:::wt_constant("grid", "never"), 0L)
}

# brute force, in double as the exactness contract says: each pair's slot
# and weight product, of rows ia of x against rows ib of y (x again when
# y is NULL); diagonal: only the pairs i < j of ia
ref_pairs <- function(x, y, ia, ib, edges, wx = NULL, wy = NULL,
                      diagonal = FALSE) {
  a <- ref_unit(x[ia, , drop = FALSE])
  b <- ref_unit((if (is.null(y)) x else y)[ib, , drop = FALSE])
  d2 <- outer(a$x, b$x, "-")^2 + outer(a$y, b$y, "-")^2
  d2 <- d2 + outer(a$z, b$z, "-")^2
  w <- if (!is.null(wx)) outer(wx[ia], (if (is.null(y)) wx else wy)[ib])
  keep <- if (diagonal) upper.tri(d2) else matrix(TRUE, nrow(d2), ncol(d2))
  list(slot = findInterval(d2[keep], ref_c2(edges)) + 1L,
       w = if (!is.null(w)) w[keep])
}

# slots (and weight sums) of a task list by brute force
ref_tasks <- function(x, y, edges, tasks, n_out, wx = NULL, wy = NULL) {
  ns <- length(edges) + 1L
  slots <- matrix(0, ns, n_out)
  wsum <- matrix(0, ns, n_out)
  for (k in seq_len(nrow(tasks))) {
    t <- tasks[k, ]
    ia <- seq_len(t[2] - t[1]) + t[1]
    ib <- seq_len(t[4] - t[3]) + t[3]
    if (!length(ia) || !length(ib)) next
    p <- ref_pairs(x, y, ia, ib, edges, wx, wy,
                   diagonal = is.null(y) && t[1] == t[3])
    out <- t[5] + 1L
    slots[, out] <- slots[, out] + tabulate(p$slot, nbins = ns)
    if (!is.null(wx)) {
      s <- vapply(split(p$w, factor(p$slot, levels = seq_len(ns))), sum, 0)
      wsum[, out] <- wsum[, out] + s
    }
  }
  list(slots = slots, wsum = if (!is.null(wx)) wsum)
}

# the largest relative difference between weight sums (absolute below 1)
rel_diff <- function(a, b) max(abs(a - b) / pmax(abs(b), 1))

binnings <- list(
  theta_bins(0, 180, width = 7.5),
  theta_bins(0.5, 60, n = 17, log = TRUE),
  theta_bins(1e-6, 180, n = 4000, log = TRUE)
)

# the exactness tests, once per instruction set this machine runs
for (isa in machine_isas()) with_cpu_isa(isa, {
  on_isa <- function(what) paste0(what, " (", isa, " kernels)")
  test_that(on_isa("auto task lists count as the brute-force reference"), {
    set.seed(21)
    x <- random_sky(400)
    # diagonal tasks, off-diagonal tasks, empty ranges, several tasks into
    # one histogram, and a histogram no task fills
    tasks <- rbind(
      c(0, 150, 0, 150, 0),
      c(150, 151, 150, 151, 1),        # one point: no pair
      c(0, 150, 150, 400, 1),
      c(150, 400, 150, 400, 1),
      c(20, 20, 20, 20, 2),            # empty diagonal
      c(10, 10, 50, 70, 2),            # empty off-diagonal
      c(0, 37, 37, 38, 3),
      c(5, 5, 5, 5, 3),
      c(300, 399, 399, 400, 3),
      c(37, 299, 299, 400, 3),
      c(0, 300, 300, 400, 5)
    )
    for (b in binnings) {
      ref <- ref_tasks(x, NULL, b, tasks, 6L)
      for (threads in 1:test_threads()) {
        res <- cpu_counts(x, NULL, b, tasks, 6L, threads = threads)
        expect_identical(res$slots, ref$slots)
        expect_null(res$wsum)
      }
    }
    # a full diagonal plus the rest equals the whole catalog as one task
    b <- binnings[[2]]
    whole <- cpu_counts(x, NULL, b)$slots[, 1]
    split3 <- rbind(c(0, 100, 0, 100, 0), c(100, 400, 100, 400, 0),
                    c(0, 100, 100, 400, 0))
    expect_identical(cpu_counts(x, NULL, b, split3)$slots[, 1], whole)
    expect_identical(whole, as.double(ref_slots(x, NULL, b)))
  })

  test_that(on_isa("cross task lists count as the brute-force reference"), {
    set.seed(22)
    x <- random_sky(300)
    y <- random_sky(250, ra = c(0, 90))
    tasks <- rbind(
      c(0, 100, 0, 250, 0),
      c(100, 300, 0, 100, 0),
      c(100, 300, 100, 250, 1),
      c(7, 7, 0, 250, 2),              # empty
      c(0, 300, 30, 30, 2),            # empty
      c(299, 300, 249, 250, 2),        # one pair
      c(0, 300, 0, 250, 3)             # overlapping the others: all pairs
    )
    for (b in binnings) {
      ref <- ref_tasks(x, y, b, tasks, 4L)
      for (threads in 1:test_threads()) {
        res <- cpu_counts(x, y, b, tasks, 4L, threads = threads)
        expect_identical(res$slots, ref$slots)
      }
    }
    expect_identical(ref$slots[, 4], ref$slots[, 1] + ref$slots[, 2])
  })

  test_that(on_isa("weighted sums equal a brute-force double sum"), {
    set.seed(23)
    x <- random_sky(350)
    y <- random_sky(200, dec = c(-30, 30))
    wx <- runif(350, 0.1, 3)
    wy <- rexp(200)
    ta <- rbind(c(0, 120, 0, 120, 0), c(120, 350, 120, 350, 1),
                c(0, 120, 120, 350, 2), c(0, 0, 0, 0, 2))
    tc <- rbind(c(0, 350, 0, 150, 0), c(0, 350, 150, 200, 1),
                c(40, 41, 0, 200, 1))
    for (b in binnings) {
      ref <- ref_tasks(x, NULL, b, ta, 3L, wx)
      ref_c <- ref_tasks(x, y, b, tc, 2L, wx, wy)
      res1 <- NULL
      res1_c <- NULL
      for (threads in 1:test_threads()) {
        res <- cpu_counts(x, NULL, b, ta, 3L, wx, threads = threads)
        expect_identical(res$slots, ref$slots)
        expect_lt(rel_diff(res$wsum, ref$wsum), 1e-12)
        expect_true(all(res$wsum[ref$slots == 0] == 0))
        res_c <- cpu_counts(x, y, b, tc, 2L, wx, wy, threads = threads)
        expect_identical(res_c$slots, ref_c$slots)
        expect_lt(rel_diff(res_c$wsum, ref_c$wsum), 1e-12)
        # the same sums, to the bit, on any number of threads
        if (threads == 1L) {
          res1 <- res
          res1_c <- res_c
        } else {
          expect_identical(res$wsum, res1$wsum)
          expect_identical(res_c$wsum, res1_c$wsum)
        }
      }
      # the whole catalog as one task, and unit weights give the counts
      whole <- cpu_counts(x, NULL, b, wx = wx)
      expect_equal(whole$wsum[, 1], rowSums(ref$wsum), tolerance = 1e-12)
      ones <- cpu_counts(x, y, b, wx = rep(1, 350), wy = rep(1, 200))
      expect_identical(ones$wsum, ones$slots)
    }
  })

  test_that(on_isa("binnings too fine for the lookup table weigh pairs exactly"), {
    set.seed(27)
    x <- random_sky(130)
    w <- runif(130, 0.5, 2)
    b <- theta_bins(0, 180, n = 70000)
    tasks <- rbind(c(0, 60, 0, 60, 0), c(60, 130, 60, 130, 0),
                   c(0, 60, 60, 130, 1))
    ref <- ref_tasks(x, NULL, b, tasks, 2L, w)
    res <- cpu_counts(x, NULL, b, tasks, 2L, w, threads = test_threads())
    expect_identical(res$slots, ref$slots)
    expect_lt(rel_diff(res$wsum, ref$wsum), 1e-12)
  })

  test_that(on_isa("large weighted jobs (float prefilter) match the reference"), {
    # over 4 million pairs: the float kernel on CPUs with AVX-512
    set.seed(24)
    x <- random_sky(2100)
    y <- random_sky(2000)
    wx <- runif(2100, 0.5, 1.5)
    wy <- runif(2000, 0.5, 1.5)
    b <- theta_bins(0, 180, width = 0.5)
    tasks <- rbind(c(0, 700, 0, 2000, 0), c(700, 2100, 0, 1000, 1),
                   c(700, 2100, 1000, 2000, 2))
    ref <- ref_tasks(x, y, b, tasks, 3L, wx, wy)
    r1 <- cpu_counts(x, y, b, tasks, 3L, wx, wy, threads = 1L)
    r2 <- cpu_counts(x, y, b, tasks, 3L, wx, wy, threads = test_threads())
    expect_identical(r1$slots, ref$slots)
    expect_lt(rel_diff(r1$wsum, ref$wsum), 1e-12)
    expect_identical(r2$slots, r1$slots)
    expect_identical(r2$wsum, r1$wsum)
    whole <- cpu_counts(x, y, b, wx = wx, wy = wy, threads = test_threads())
    expect_identical(whole$slots[, 1], rowSums(ref$slots))
    expect_lt(rel_diff(whole$wsum[, 1], rowSums(ref$wsum)), 1e-12)
    # auto, as patches: 3 diagonal and 3 off-diagonal tasks
    cut <- c(0, 600, 1500, 2100)
    ta <- do.call(rbind, lapply(1:3, function(p) do.call(rbind, lapply(p:3,
      function(q) c(cut[p], cut[p + 1], cut[q], cut[q + 1], 0)))))
    auto <- cpu_counts(x, NULL, b, ta, 1L, wx, threads = test_threads())
    whole <- cpu_counts(x, NULL, b, wx = wx, threads = 1L)
    expect_identical(auto$slots, whole$slots)
    expect_lt(rel_diff(auto$wsum, whole$wsum), 1e-12)
    p <- ref_pairs(x, NULL, seq_len(2100), seq_len(2100), b, wx,
                   diagonal = TRUE)
    ns <- length(b) + 1L
    expect_identical(whole$slots[, 1], as.double(tabulate(p$slot, ns)))
    s <- vapply(split(p$w, factor(p$slot, levels = seq_len(ns))), sum, 0)
    expect_lt(rel_diff(whole$wsum[, 1], unname(s)), 1e-12)
  })

  test_that(on_isa("tasks of a few columns in a large job count as the reference"), {
    # a large job (the float kernel on CPUs with AVX-512) whose other tasks
    # have 1 to 40 columns and 1 to 9 rows: kernel calls of no whole group
    # of columns, one, two and more, with ragged ends, as a jackknife's
    # small tasks make them (the kernels' ring counts a group two groups
    # later, and the rest at the end of the call)
    set.seed(27)
    x <- random_sky(2100, ra = c(0, 60), dec = c(-30, 30))
    y <- random_sky(2000, ra = c(0, 60), dec = c(-30, 30))
    wx <- runif(2100, 0.5, 1.5)
    wy <- runif(2000, 0.5, 1.5)
    b <- theta_bins(0.5, 40, n = 20, log = TRUE)
    cols <- c(1, 3, 8, 15, 16, 17, 20, 31, 32, 33, 40)
    small <- do.call(rbind, lapply(seq_along(cols), function(k) {
      r0 <- 10 * k
      c0 <- 100 + 50 * k
      c(r0, r0 + (k %% 9) + 1, c0, c0 + cols[k], k)
    }))
    tasks <- rbind(c(0, 2100, 0, 2000, 0), small)
    n_out <- length(cols) + 1L
    ref <- ref_tasks(x, y, b, small, n_out, wx, wy)
    res <- cpu_counts(x, y, b, tasks, n_out, threads = test_threads())
    expect_identical(res$slots[, -1], ref$slots[, -1])
    expect_identical(res$slots[, 1], as.double(ref_slots(x, y, b)))
    resw <- cpu_counts(x, y, b, tasks, n_out, wx, wy,
                       threads = test_threads())
    expect_identical(resw$slots, res$slots)
    expect_lt(rel_diff(resw$wsum[, -1], ref$wsum[, -1]), 1e-12)
  })

  test_that(on_isa("self pairs in task lists add each diagonal task's points"), {
    set.seed(25)
    x <- random_sky(90)
    w <- runif(90)
    b <- theta_bins(0, 30, width = 3)
    tasks <- rbind(c(0, 40, 0, 40, 0), c(40, 90, 40, 90, 1),
                   c(0, 40, 40, 90, 1))
    plain <- cpu_counts(x, NULL, b, tasks, 2L, w)
    self <- cpu_counts(x, NULL, b, tasks, 2L, w, self_pairs = TRUE)
    add <- matrix(0, length(b) + 1, 2)
    add[2, ] <- c(40, 50)
    expect_identical(self$slots, 2 * plain$slots + add)
    addw <- matrix(0, length(b) + 1, 2)
    addw[2, ] <- c(sum(w[1:40]^2), sum(w[41:90]^2))
    expect_equal(self$wsum, 2 * plain$wsum + addw, tolerance = 1e-14)
  })
})

test_that("injected faults give clear errors and leave the engine usable", {
  set.seed(26)
  x <- random_sky(500)
  w <- runif(500)
  b <- theta_bins(0, 20, width = 1)
  tasks <- rbind(c(0, 250, 0, 250, 0), c(250, 500, 250, 500, 1),
                 c(0, 250, 250, 500, 2))
  good <- cpu_counts(x, NULL, b, tasks, 3L, w, threads = test_threads())
  on.exit(Sys.unsetenv("WTHETA_TEST_FAULT"), add = TRUE)
  Sys.setenv(WTHETA_TEST_FAULT = "thread")
  for (threads in 1:test_threads()) {
    expect_error(cpu_counts(x, NULL, b, tasks, 3L, threads = threads),
                 "a counting thread failed: injected fault in a CPU worker thread")
    expect_error(cpu_counts(x, NULL, b, tasks, 3L, w, threads = threads),
                 "a counting thread failed: injected fault in a CPU worker thread")
  }
  expect_error(pair_counts(x, bins = b, backend = "cpu", threads = 1),
               "counting thread failed")
  Sys.setenv(WTHETA_TEST_FAULT = "alloc")
  expect_error(cpu_counts(x, NULL, b, tasks, 3L, w, threads = test_threads()),
               "not enough memory")
  expect_error(cpu_counts(x, x, b), "not enough memory")
  # a device named after "@" is for the GPU: the CPU engine fails anyway
  Sys.setenv(WTHETA_TEST_FAULT = "alloc@1")
  expect_error(cpu_counts(x, x, b), "not enough memory")
  Sys.unsetenv("WTHETA_TEST_FAULT")
  again <- cpu_counts(x, NULL, b, tasks, 3L, w, threads = test_threads())
  expect_identical(again, good)
  expect_identical(slots_of(pair_counts(x, bins = b, backend = "cpu",
                                        threads = 1)),
                   as.double(ref_slots(x, NULL, b)))
})
