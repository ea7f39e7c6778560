# Overlapped counts (run_counts(), r/pending.c wt_r_count_start): each count of
# a wtheta() call in a thread of its own, started before the first is
# collected. R overlaps GPU counts only; the machinery is the same for
# either engine, so these tests drive it with CPU counts (the GPU's are in
# test-cuda-engine.R).

overlap_data <- function() {
  set.seed(31)
  list(
    d = data.frame(ra = runif(2500, 0, 25), dec = runif(2500, -12, 12),
                   w = runif(2500, 0.5, 2)),
    r = data.frame(ra = runif(3500, 0, 25), dec = runif(3500, -12, 12),
                   w = runif(3500, 0.5, 2)),
    b = theta_bins(0.05, 8, n = 12, log = TRUE)
  )
}

# the pending count (external pointer) of a deferred count, NULL when it
# was counted at once
pending_of <- function(d) environment(d$cancel)$pending

# expr with every count of run_counts() started in a thread of its own
# (overlap_counts() mocked: on the CPU too), recording in seen$pending for
# each count whether it did start so (a pending count) or was counted at
# once. Plain namespace assignment: testthat 3.1 has no mocking helper.
with_overlap <- function(expr, seen) {
  ns <- asNamespace("wtheta")
  real <- list(overlap_counts = ns$overlap_counts,
               count_catalogs = ns$count_catalogs)
  put <- function(name, value) {
    unlockBinding(name, ns)
    assign(name, value, envir = ns)
    lockBinding(name, ns)
  }
  on.exit(for (nm in names(real)) put(nm, real[[nm]]), add = TRUE)
  put("overlap_counts", function(how, counts) length(counts) > 1L)
  put("count_catalogs", function(...) {
    d <- real$count_catalogs(...)
    if (is.list(d) && is.function(d$finish)) {
      seen$pending <- c(seen$pending, typeof(pending_of(d)) == "externalptr")
    }
    d
  })
  expr
}

new_seen <- function() {
  seen <- new.env()
  seen$pending <- logical(0)
  seen
}

cols <- c("DD", "DR", "RR", "w", "w_err")

test_that("overlapped counts equal counts one after the other", {
  x <- overlap_data()
  P <- sky_patches(x$r, 5, seed = 2)
  run <- function(...) {
    untrusted_cov_ok(wtheta(x$d, x$r, bins = x$b, backend = "cpu",
                            threads = test_threads(), ...))
  }
  want <- list(
    plain = run(),
    self = run(self_pairs = TRUE),
    jack = run(patches = P, error = "jackknife"),
    weighted = run(weights = "w", estimator = "hamilton"),
    mean = run(mean_theta = TRUE)
  )
  seen <- new_seen()
  got <- with_overlap(list(
    plain = run(),
    self = run(self_pairs = TRUE),
    jack = run(patches = P, error = "jackknife"),
    weighted = run(weights = "w", estimator = "hamilton"),
    mean = run(mean_theta = TRUE)
  ), seen)
  # every count of every call started in a thread of its own
  expect_length(seen$pending, 15L)
  expect_true(all(seen$pending))
  for (k in names(want)) {
    have <- intersect(c(cols, "theta_mean"), names(want[[k]]))
    expect_identical(as.data.frame(got[[k]])[have],
                     as.data.frame(want[[k]])[have], info = k)
  }
  expect_identical(attr(got$jack, "cov"), attr(want$jack, "cov"))
})

test_that("overlapped counts of wtheta_multi() equal those one after the other", {
  x <- overlap_data()
  cats <- list(a = x$d[1:1200, ], b = x$d[1201:2500, ])
  # its counts one by one (on the CPU they are counted with labels by
  # default, two counts in all, which the GPU's overlap never meets)
  old <- options(wtheta.labels = FALSE)
  on.exit(options(old), add = TRUE)
  run <- function() wtheta_multi(cats, x$r, bins = x$b, backend = "cpu",
                                 threads = test_threads())
  want <- run()
  seen <- new_seen()
  got <- with_overlap(run(), seen)
  expect_gt(length(seen$pending), 3L)
  expect_true(all(seen$pending))
  expect_identical(got$w, want$w)
})

test_that("overlapped counts share a catalog's grid, built once", {
  x <- overlap_data()
  want <- wtheta(x$d, x$r, bins = x$b, backend = "cpu", self_pairs = TRUE)
  old <- options(wtheta.grid = TRUE)
  on.exit(options(old), add = TRUE)
  seen <- new_seen()
  before <- wtheta:::grid_builds()
  got <- with_overlap(wtheta(x$d, x$r, bins = x$b, backend = "cpu",
                             self_pairs = TRUE, threads = test_threads()),
                      seen)
  # DD and DR both use D's grid, DR and RR R's: two catalogs, two builds
  expect_identical(wtheta:::grid_builds() - before, 2)
  expect_true(all(seen$pending))
  expect_identical(got[cols[1:4]], want[cols[1:4]])
  expect_gt(sum(attr(got, "pair_counts")$DR$pairs_skipped), 0)
})

test_that("a started count is collected once, cancelled, or dropped safely", {
  x <- overlap_data()
  dp <- prepare_catalog(x$d)
  rp <- prepare_catalog(x$r)
  how <- wtheta:::plan_counting("cpu", NULL, test_threads(), FALSE)
  edges <- wtheta:::bins_edges(x$b)
  start <- function() {
    wtheta:::count_catalogs(how, dp, rp, edges, FALSE, test_threads(),
                            FALSE, defer = TRUE)
  }
  want <- pair_counts(x$d, x$r, bins = x$b, backend = "cpu")
  d <- start()
  expect_identical(typeof(pending_of(d)), "externalptr")
  pc <- d$finish()
  expect_s3_class(pc, "pair_counts")
  expect_identical(pc$counts, want$counts)
  expect_identical(pc$n_pairs, want$n_pairs)
  # once collected: a second collection is an error, a cancel does nothing
  expect_error(d$finish(), "collected already")
  expect_null(d$cancel())
  # cancelled before it was collected
  d2 <- start()
  expect_null(d2$cancel())
  expect_error(d2$finish(), "collected already")
  # dropped while it may still run: the garbage collector stops and frees
  # it, and the catalogs count on
  d3 <- start()
  rm(d3)
  gc()
  again <- start()$finish()
  expect_identical(again$counts, want$counts)
})

test_that("a count that fails in its thread fails in R when collected", {
  skip_if(has_cuda(), "a GPU is present: the count would succeed")
  x <- overlap_data()
  dp <- prepare_catalog(x$d)
  h <- wtheta:::catalog_handle(dp$handle, dp$xyz)
  p <- .Call(wtheta:::C_count_start, h, NULL, wtheta:::bins_edges(x$b),
             FALSE, wtheta:::wt_constant("backend", "cuda"), 1L, 0L, NULL,
             1L, wtheta:::grid_mode(), FALSE, NULL, 0L)
  expect_error(.Call(wtheta:::C_count_wait, p, FALSE, 0L), "CUDA")
  # and it is freed: nothing left to collect
  expect_error(.Call(wtheta:::C_count_wait, p, FALSE, 0L),
               "collected already")
})

test_that("options(wtheta.overlap) is TRUE or FALSE", {
  x <- overlap_data()
  old <- options(wtheta.overlap = "yes")
  on.exit(options(old), add = TRUE)
  expect_error(wtheta(x$d, x$r, bins = x$b, backend = "cpu"),
               "option `wtheta.overlap` must be TRUE or FALSE, not \"yes\"",
               fixed = TRUE)
  options(wtheta.overlap = FALSE)
  expect_s3_class(wtheta(x$d, x$r, bins = x$b, backend = "cpu"), "wtheta")
})
