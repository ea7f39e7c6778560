# The AVX-512 float kernel's forms (src/cpu/kernels_avx512.c): the float
# table in registers when it has at most 64 cells (wt_ctx.f32_small), the
# sliced form (one-hot words added in carry-save bit planes, no scalar
# increment per pair) for unweighted, unlabelled jobs of at most 32 slots,
# and every kernel's last vector of a tile masked to the columns left
# instead of padded. Every count must stay that of the grid-off engine in
# double (itself checked against brute force in test-cpu-engine.R) and of
# the plain C instruction set.

sliced_counts <- function(x, y, e, env = character(), grid = TRUE,
                          sp = FALSE, threads = 1L, w1 = NULL, w2 = NULL,
                          patches = NULL) {
  old <- options(wtheta.grid = grid, wtheta.progress = FALSE)
  on.exit(options(old))
  if (length(env)) {
    prev <- Sys.getenv(names(env), unset = NA, names = TRUE)
    do.call(Sys.setenv, as.list(env))
    on.exit(for (v in names(prev)) {
      if (is.na(prev[[v]])) Sys.unsetenv(v) else
        do.call(Sys.setenv, as.list(prev[v]))
    }, add = TRUE)
  }
  pair_counts(x, y, e, self_pairs = sp, backend = "cpu", threads = threads,
              weights = if (!is.null(w1)) list(x = w1, y = w2),
              patches = patches)
}

skip_if_no_sliced <- function() {
  skip_if(!"avx512" %in% machine_isas(), "no AVX-512: no float kernel")
}

# odd sizes, so that tasks end in ragged vectors of every length
sliced_field <- function() {
  set.seed(83)
  list(x = random_sky(20011, ra = c(10, 60), dec = c(-20, 25)),
       y = random_sky(14983, ra = c(15, 65), dec = c(-15, 30)))
}

test_that("the sliced form is reached by log-binned counts (canary)", {
  skip_if_no_sliced()
  f <- sliced_field()
  e <- theta_bins(0.02, 15, n = 20, log = TRUE)
  ref <- slots_of(sliced_counts(f$x, NULL, e))
  # the canary adds one false pair per call of the sliced form: it changes
  # the counts when the form runs, and not when the form is off
  bad <- slots_of(sliced_counts(f$x, NULL, e,
                                env = c(WTHETA_CPU_SLICED = "canary")))
  expect_gt(sum(bad), sum(ref))
  expect_identical(slots_of(sliced_counts(f$x, NULL, e,
                                          env = c(WTHETA_CPU_SLICED = "0"))),
                   ref)
  # not for more than 32 slots
  e40 <- theta_bins(0.02, 15, n = 40, log = TRUE)
  expect_identical(
    slots_of(sliced_counts(f$x, NULL, e40,
                           env = c(WTHETA_CPU_SLICED = "canary"))),
    slots_of(sliced_counts(f$x, NULL, e40)))
})

test_that("the float kernel's forms count as the double engine and plain C", {
  skip_if_no_sliced()
  f <- sliced_field()
  # 20 log bins (a float table of at most 64 cells, sliced form), 12 log
  # bins over a decade (few cells), 60 linear bins (the gathered table)
  for (e in list(theta_bins(0.02, 15, n = 20, log = TRUE),
                 theta_bins(0.5, 5, n = 12, log = TRUE),
                 theta_bins(0.1, 12, n = 60, log = FALSE))) {
    for (y in list(NULL, f$y)) {
      ref <- slots_of(sliced_counts(f$x, y, e, grid = FALSE,
                                    env = c(WTHETA_CPU_ISA = "plain")))
      expect_identical(slots_of(sliced_counts(f$x, y, e)), ref)
      expect_identical(slots_of(sliced_counts(f$x, y, e, threads = 3L)), ref)
      expect_identical(slots_of(sliced_counts(f$x, y, e, grid = FALSE)), ref)
      expect_identical(slots_of(sliced_counts(
        f$x, y, e, env = c(WTHETA_CPU_SLICED = "0", WTHETA_CPU_NARROW = "0"))),
        ref)
    }
  }
})

test_that("weighted counts through the masked ends match the double sums", {
  skip_if_no_sliced()
  f <- sliced_field()
  set.seed(84)
  w1 <- runif(length(f$x$ra), 0.5, 2)
  w2 <- runif(length(f$y$ra), 0.5, 2)
  e <- theta_bins(0.02, 15, n = 20, log = TRUE)
  ref <- sliced_counts(f$x, f$y, e, grid = FALSE, w1 = w1, w2 = w2,
                       env = c(WTHETA_CPU_ISA = "plain"))
  got <- sliced_counts(f$x, f$y, e, w1 = w1, w2 = w2)
  expect_identical(got$counts, ref$counts)
  expect_equal(got$weighted, ref$weighted, tolerance = 1e-12)
})

test_that("patch pairs' short tasks count as plain C through the sliced form", {
  skip_if_no_sliced()
  # 40 patches cut the grid's node pairs at patch boundaries: many tasks
  # of 32 to 127 columns, which the sliced form takes since it starts at
  # WT_SLICED_MIN = 32 columns (kernel notes, seventh session)
  f <- sliced_field()
  e <- theta_bins(0.02, 15, n = 20, log = TRUE)
  p <- sky_patches(f$y, n_patches = 40, seed = 3)
  count <- function(y, env = character()) {
    sliced_counts(f$x, y, e, env = env, threads = 2L, patches = p)
  }
  for (y in list(NULL, f$y)) {
    ref <- count(y, c(WTHETA_CPU_ISA = "plain"))
    got <- count(y)
    expect_identical(got$counts, ref$counts)
    expect_identical(got$patch_counts, ref$patch_counts)
    expect_gt(sum(ref$patch_counts), 1e6)
    # the form runs on these counts: its canary (a false pair below the
    # first edge per call) changes them
    bad <- count(y, c(WTHETA_CPU_SLICED = "canary"))
    expect_gt(bad$n_below, got$n_below)
  }
})

test_that("the float kernels count the same from each item's tile as from the count's copy", {
  # the columns as floats are made once per count (wt_ctx.fb), or for the
  # largest catalogs (and with WTHETA_CPU_FLOAT_COPY=0) per item: auto and
  # cross (weighted too), with patches (small tasks), on 1 and 3 threads
  skip_if_no_sliced()
  f <- sliced_field()
  set.seed(84)
  w1 <- runif(nrow(f$x), 0.5, 1.5)
  w2 <- runif(nrow(f$y), 0.5, 1.5)
  p <- sky_patches(f$y, n_patches = 12, seed = 2)
  tiles <- c(WTHETA_CPU_FLOAT_COPY = "0")
  for (e in list(theta_bins(0.02, 15, n = 20, log = TRUE),
                 theta_bins(0.1, 12, n = 60, log = FALSE))) {
    for (y in list(NULL, f$y)) {
      for (threads in c(1L, 3L)) {
        got <- sliced_counts(f$x, y, e, threads = threads)
        ref <- sliced_counts(f$x, y, e, threads = threads, env = tiles)
        expect_identical(slots_of(got), slots_of(ref))
      }
      if (!is.null(y)) {
        got <- sliced_counts(f$x, y, e, w1 = w1, w2 = w2)
        ref <- sliced_counts(f$x, y, e, w1 = w1, w2 = w2, env = tiles)
        expect_identical(got$weighted, ref$weighted)
      }
      got <- sliced_counts(f$x, y, e, patches = p)
      ref <- sliced_counts(f$x, y, e, patches = p, env = tiles)
      expect_identical(got$patch_counts, ref$patch_counts)
      expect_identical(slots_of(got), slots_of(ref))
    }
  }
})
