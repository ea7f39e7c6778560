# The CPU engine's narrow kernel (src/cpu/kernels_avx512.c, wt_cpu_f32_narrow):
# grid tasks whose pairs span at most WTHETA_CPU_NARROW slots are counted by
# float comparisons with the edges inside their range, with margins, and the
# undecided pairs are redone in double. Every count must stay that of the
# grid-off engine (itself checked against brute force in test-cpu-engine.R).

narrow_counts <- function(x, y, e, grid = TRUE, sp = FALSE, threads = 1L,
                          env = c(WTHETA_CPU_NARROW = "")) {
  old <- options(wtheta.grid = grid, wtheta.progress = FALSE)
  on.exit(options(old))
  with_env(env, slots_of(pair_counts(x, y, e, self_pairs = sp,
                                     backend = "cpu", threads = threads)))
}

# the narrow kernel runs only with the AVX-512 float kernel
skip_if_no_narrow <- function() {
  skip_if(!"avx512" %in% machine_isas(), "no AVX-512: no narrow kernel")
}

# 20000 points in a 30 x 30 degree field, log bins out to 12 degrees: most
# pairs the grid visits lie in node pairs that span 2 to 4 bins
narrow_field <- function() {
  set.seed(71)
  list(x = random_sky(20000, ra = c(10, 40), dec = c(-15, 15)),
       y = random_sky(15000, ra = c(12, 42), dec = c(-12, 18)),
       e = theta_bins(0.05, 12, n = 20, log = TRUE))
}

test_that("the narrow kernel is reached by log-binned grid counts (canary)", {
  skip_if_no_narrow()
  f <- narrow_field()
  ref <- narrow_counts(f$x, NULL, f$e, grid = FALSE)
  # the canary adds one false pair per call of the narrow kernel: the counts
  # change when it runs, and not when it is off
  bad <- narrow_counts(f$x, NULL, f$e,
                       env = c(WTHETA_TEST_FAULT = "narrow",
                               WTHETA_CPU_ISA = "avx512"))
  expect_gt(sum(bad), sum(ref))
  off <- narrow_counts(f$x, NULL, f$e,
                       env = c(WTHETA_TEST_FAULT = "narrow",
                               WTHETA_CPU_NARROW = "0"))
  expect_identical(off, ref)
  # AVX2 has a narrow kernel in double
  if ("avx2" %in% machine_isas())
    expect_gt(sum(narrow_counts(f$x, NULL, f$e,
                                env = c(WTHETA_TEST_FAULT = "narrow",
                                        WTHETA_CPU_ISA = "avx2"))),
              sum(ref))
  crossed <- narrow_counts(f$x, f$y, f$e,
                           env = c(WTHETA_TEST_FAULT = "narrow"))
  expect_gt(sum(crossed), length(f$x$ra) * length(f$y$ra))
})

test_that("narrow tasks count exactly: auto, self pairs, cross, threads", {
  f <- narrow_field()
  for (sp in c(FALSE, TRUE)) {
    ref <- narrow_counts(f$x, NULL, f$e, grid = FALSE, sp = sp)
    for (th in unique(c(1L, test_threads())))
      for (g in list(TRUE, "prune"))
        expect_identical(narrow_counts(f$x, NULL, f$e, grid = g, sp = sp,
                                       threads = th), ref)
  }
  ref <- narrow_counts(f$x, f$y, f$e, grid = FALSE)
  for (th in unique(c(1L, test_threads())))
    expect_identical(narrow_counts(f$x, f$y, f$e, threads = th), ref)
})

test_that("every width of the narrow kernel and every instruction set agree", {
  f <- narrow_field()
  ref <- narrow_counts(f$x, f$y, f$e, grid = FALSE)
  for (w in 0:8)
    expect_identical(narrow_counts(f$x, f$y, f$e,
                                   env = c(WTHETA_CPU_NARROW = w)), ref)
  for (isa in machine_isas())
    expect_identical(narrow_counts(f$x, f$y, f$e,
                                   env = c(WTHETA_CPU_ISA = isa)), ref)
})

test_that("pairs exactly at the edges are decided in double", {
  skip_if_no_narrow()
  # a lattice every 0.25 degrees: the pairs that share a right ascension
  # are separated by exact multiples of 0.25 degrees, on edges 0.5 .. 8
  e <- c(0.5, 1, 2, 4, 8)
  small <- expand.grid(ra = seq(0, 12, by = 0.25), dec = seq(0, 12, by = 0.25))
  expect_equal(narrow_counts(small, NULL, e, grid = FALSE),
               ref_slots(small, NULL, e))
  # enough pairs for the float kernels
  lat <- expand.grid(ra = seq(0, 24, by = 0.25), dec = seq(0, 24, by = 0.25))
  ref <- narrow_counts(lat, NULL, e, grid = FALSE)
  for (isa in intersect(c("avx512", "avx2"), machine_isas()))
    for (w in c(2, 4, 8))
      expect_identical(narrow_counts(lat, NULL, e, threads = test_threads(),
                                     env = c(WTHETA_CPU_NARROW = w,
                                             WTHETA_CPU_ISA = isa)), ref)
  # and the narrow kernel did count this workload
  bad <- narrow_counts(lat, NULL, e, env = c(WTHETA_TEST_FAULT = "narrow"))
  expect_gt(sum(bad), sum(ref))
  x2 <- transform(lat, dec = dec + 0.125)
  expect_identical(narrow_counts(lat, x2, e),
                   narrow_counts(lat, x2, e, grid = FALSE))
})

test_that("a bad WTHETA_CPU_NARROW is refused clearly", {
  x <- random_sky(50)
  expect_error(narrow_counts(x, NULL, c(1, 2, 4), grid = FALSE,
                             env = c(WTHETA_CPU_NARROW = "9")),
               "WTHETA_CPU_NARROW must be a digit from 0 to 8 or empty, not \"9\"",
               fixed = TRUE)
})
