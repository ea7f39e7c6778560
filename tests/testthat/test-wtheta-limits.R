# Hostile input, round two: bounds on every count argument, thread bombs,
# huge right ascensions, overflowing weights, labels matched by value. The
# cases that could crash or hang the R process run in a child process
# (run_child(), helper-hard.R), so that they fail a test instead.

test_that("thread bombs are refused, and a team that cannot start is an R error", {
  skip_on_os("windows")
  code <- c(
    "x <- data.frame(ra = c(1, 2, 3, 50), dec = c(0, 0, 1, -30))",
    "b <- c(0, 0.5, 10, 180)",
    "msg <- function(expr) tryCatch({ expr; 'no error' },",
    "  error = function(e) conditionMessage(e))",
    "cat('1e5:', msg(pair_counts(x, bins = b, threads = 1e5)), '\\n')",
    "cat('3e9:', msg(pair_counts(x, bins = b, threads = 3e9)), '\\n')",
    "cat('wtheta:', msg(wtheta(x, x, b[-1], threads = 20000)), '\\n')",
    "cat('patches:', msg(sky_patches(x, 2, threads = 1e5)), '\\n')",
    "options(wtheta.threads = 1e5)",
    "cat('option:', msg(pair_counts(x, bins = b)), '\\n')",
    "options(wtheta.threads = NULL)",
    # OMP_NUM_THREADS = 100000 only ever lowers the default
    "cat('default:', wtheta_threads() <= parallel::detectCores(), '\\n')",
    "cat('counts:', pair_counts(x, bins = b)$counts, '\\n')")
  res <- run_child(code, env = "OMP_NUM_THREADS=100000")
  expect_identical(res$status, 0L, info = paste(res$out, collapse = "\n"))
  ceiling_msg <- function(arg, value) {
    paste0("`", arg, "` must be at most [0-9,]+ \\(4 per processor of the ",
           "[0-9]+ here, at least 16\\), not ", value, " \\(numeric\\)\\.")
  }
  expect_match(child_says(res, "1e5"), ceiling_msg("threads", "1e\\+05"))
  expect_match(child_says(res, "3e9"), ceiling_msg("threads", "3e\\+09"))
  expect_match(child_says(res, "wtheta"), ceiling_msg("threads", "20000"))
  expect_match(child_says(res, "patches"), ceiling_msg("threads", "1e\\+05"))
  expect_match(child_says(res, "option"),
               ceiling_msg("options\\(wtheta.threads\\)", "1e\\+05"))
  expect_identical(child_says(res, "default"), "TRUE ")
  expect_identical(child_says(res, "counts"), "0 3 3 ")

  # a thread stack no system can map: wtheta checks that the threads can
  # start, and says so, rather than count on fewer than asked
  code <- c(
    "set.seed(1)",
    "x <- data.frame(ra = runif(3000, 0, 20), dec = runif(3000, -10, 10))",
    "b <- c(0, 1, 2)",
    "r <- tryCatch(pair_counts(x, bins = b, threads = 4)$counts,",
    "  error = function(e) conditionMessage(e))",
    "cat('four:', r, '\\n')",
    "cat('one:', pair_counts(x, bins = b, threads = 1)$counts, '\\n')")
  res <- run_child(code, env = "OMP_STACKSIZE=1000000G")
  expect_identical(res$status, 0L, info = paste(res$out, collapse = "\n"))
  expect_match(child_says(res, "four"), paste0(
    "^wtheta: cannot start 4 CPU threads: only [1-3] of 4 threads could be ",
    "started \\(.+\\); ask for fewer with `threads` or ",
    "options\\(wtheta.threads\\) $"))
  set.seed(1)
  x <- data.frame(ra = runif(3000, 0, 20), dec = runif(3000, -10, 10))
  want <- ref_slots(x, NULL, c(0, 1, 2))[2:3]
  expect_identical(child_says(res, "one"), paste(c(want, ""), collapse = " "))
})

test_that("count arguments beyond the integer range are refused before coercion", {
  x <- random_sky(50, ra = c(0, 20), dec = c(-10, 10))
  expect_error(sky_patches(x, iter = 1e10),
               "`iter` must be at most 2,147,483,647, not 1e+10 (numeric).",
               fixed = TRUE)
  expect_error(sky_patches(x, max_points = 3e9),
               "`max_points` must be at most 2,147,483,647, not 3e+09",
               fixed = TRUE)
  expect_error(sky_patches(x, n_patches = 1e5),
               "`n_patches` must be at most 46,340 (n_patches^2 histograms",
               fixed = TRUE)
  expect_error(wtheta(x, x, c(1, 2), error = "jackknife", n_patches = 3e9),
               "`n_patches` must be at most 46,340", fixed = TRUE)
  expect_error(wtheta(x, x, c(1, 2), error = "bootstrap", n_boot = 3e9),
               "`n_boot` must be at most 2,147,483,647, not 3e+09", fixed = TRUE)
  expect_error(theta_bins(0, 10, n = 1e10),
               "`n` must be at most 1,000,000, not 1e+10 (numeric).",
               fixed = TRUE)
  expect_error(theta_bins(0, 10, width = 1e-7),
               "`width` (1e-07) makes 100,000,000 bins; at most 1,000,000",
               fixed = TRUE)
  expect_error(pair_counts(x, bins = seq(0, 1, length.out = 1e6 + 2)),
               "`bins` must hold at most 1,000,001 edges, not 1,000,002.",
               fixed = TRUE)
  expect_error(simulate_catalog(3e9),
               "`n` must be at most 2,147,483,647, not 3e+09", fixed = TRUE)
  expect_error(random_catalog(1e10),
               "`n` must be at most 2,147,483,647", fixed = TRUE)
  expect_error(simulate_catalog(100, n_clusters = 1e12), paste0(
    "`n_clusters` must be at most the larger of `n` and 10^6 (1,000,000), ",
    "not 1e+12 (numeric)."), fixed = TRUE)
  skip_if_not_installed("future")
  expect_error(pair_counts(x, bins = c(0, 1), distribute = 1e10),
               "`distribute` must be at most 2,147,483,647, not 1e+10",
               fixed = TRUE)
})

test_that("sky_patches() checks n_patches against max_points; messages name `random`", {
  set.seed(3)
  r <- random_sky(1500, ra = c(0, 20), dec = c(-10, 10))
  expect_error(sky_patches(r, n_patches = 1500, max_points = 1000), paste0(
    "`n_patches` (1500) exceeds `max_points` (1000), the points the ",
    "k-means fits; raise `max_points` or ask for fewer patches."),
    fixed = TRUE)
  # the largest allowed: as many patches as fitted points
  p <- sky_patches(r, n_patches = 40, max_points = 40, seed = 1, threads = 1)
  expect_identical(c(nrow(p), sum(p$n)), c(40L, 40L))
  expect_identical(patch_labels(p, r, threads = 1),
                   patch_labels(p, r, threads = 2))
  d <- r[1:100, ]
  expect_error(wtheta(d, r[1:5, ], c(1, 2), error = "jackknife",
                      n_patches = 10),
               "`n_patches` (10) exceeds the number of points of `random` (5).",
               fixed = TRUE)
})

test_that("seeds are R integers; the largest one works for the bootstrap", {
  ns <- asNamespace("wtheta")
  big <- .Machine$integer.max
  set.seed(-big)
  want <- vapply(1:5, function(i) tabulate(sample.int(6, 6, replace = TRUE), 6),
                 numeric(6))
  expect_identical(ns$patch_multiplicities("bootstrap", 6, 5, big), want)
  set.seed(8)
  want <- vapply(1:5, function(i) tabulate(sample.int(6, 6, replace = TRUE), 6),
                 numeric(6))
  expect_identical(ns$patch_multiplicities("bootstrap", 6, 5, 7), want)
  set.seed(4)
  d <- random_sky(300, ra = c(0, 20), dec = c(-10, 10))
  r <- random_sky(600, ra = c(0, 20), dec = c(-10, 10))
  b <- theta_bins(0.5, 5, n = 3, log = TRUE)
  w1 <- wtheta(d, r, b, error = "bootstrap", n_patches = 4, n_boot = 20,
               seed = big, threads = 1)
  w2 <- wtheta(d, r, b, error = "bootstrap", n_patches = 4, n_boot = 20,
               seed = big, threads = 1)
  expect_identical(w1$w_err, w2$w_err)
  expect_true(all(is.finite(w1$w_err)))
  for (bad in list(1.5, 3e9, -3e9, NA_real_)) {
    expect_error(wtheta(d, r, b, error = "bootstrap", n_patches = 4,
                        seed = bad), "`seed` must be")
    expect_error(sky_patches(r, 4, seed = bad), "`seed` must be")
  }
  expect_error(simulate_catalog(10, seed = 1.5), paste0(
    "`seed` must be NULL or a whole number from -2147483647 to 2147483647, ",
    "not 1.5 (numeric)."), fixed = TRUE)
})

test_that("right ascensions far outside [0, 360) are reduced exactly", {
  # 1e308, -1e308, 3 * 2^60, -.Machine$double.xmax, 2^53 + 2, 1e20, written
  # in hexadecimal: exact even where decimal parsing is not (R under
  # valgrind reads 1e308 as another double)
  ra <- c("0x1.1ccf385ebc8ap+1023", "-0x1.1ccf385ebc8ap+1023", "0x1.8p+61",
          "-0x1.fffffffffffffp+1023", "0x1.0000000000001p+53",
          "0x1.5af1d78b58c4p+66")
  # the exact remainders, from Python's integers:
  # int(float.fromhex(h)) % 360
  want <- c(296, 64, 48, 232, 34, 280)
  # in a child: a warning or a crash fails the test, not the suite
  code <- c(
    sprintf("ra <- c(%s)", paste(ra, collapse = ", ")),
    "d <- data.frame(ra = ra, dec = seq(-50, 50, length.out = length(ra)))",
    "options(warn = 2)",
    "f <- tempfile()",
    "writeLines(sprintf('%.17g %g', d$ra, d$dec), f)",
    "cat('read:', sprintf('%a', read_catalog(f)$ra), '\\n')",
    "near <- data.frame(ra = c(%s), dec = d$dec)",
    "pc <- pair_counts(d, near, bins = c(0, 1e-9, 180))",
    "cat('counts:', pc$n_below, pc$counts, pc$n_above, '\\n')")
  code[7] <- sprintf(code[7], paste(sprintf("%a", want), collapse = ", "))
  res <- run_child(code)
  expect_identical(res$status, 0L, info = paste(res$out, collapse = "\n"))
  expect_identical(as.numeric(strsplit(trimws(child_says(res, "read")), " ")[[1]]),
                   want)
  # each point lies on its exactly reduced twin (first bin: 6 pairs), and
  # all 30 other pairs are apart
  expect_identical(child_says(res, "counts"), "0 6 30 0 ")
})

test_that("numeric patch labels are matched by value", {
  set.seed(5)
  x <- random_sky(60, ra = c(0, 20), dec = c(-10, 10))
  y <- random_sky(40, ra = c(0, 20), dec = c(-10, 10))
  lx <- rep(c(1e15, 1e15 + 1, 2^53), 20)
  ly <- rep(c(2^53, 1e15 + 1), 20)
  b <- c(0, 2, 5, 30)
  pc <- pair_counts(x, y, bins = b, patches = list(x = lx, y = ly),
                    backend = "cpu", threads = 1)
  expect_identical(pc$patches, c(1e15, 1e15 + 1, 2^53))
  expect_identical(pc$patch_n1, c(20L, 20L, 20L))
  expect_identical(pc$patch_n2, c(0L, 20L, 20L))
  for (a in 1:3) for (k in 2:3) {
    want <- ref_slots(x[lx == pc$patches[a], ], y[ly == pc$patches[k], ], b)
    expect_identical(pc$patch_counts[a, k, ], as.double(want[2:4]))
  }
  expect_identical(sum(pc$patch_counts[, 1, ]), 0)
  # numbers as numbers and strings as strings: mixing them is refused
  expect_error(pair_counts(x, y, bins = b,
                           patches = list(x = lx, y = as.character(ly))),
               paste0("`patches` gives numeric labels for `x` but character ",
                      "or factor labels for `y`"), fixed = TRUE)
  # wtheta() names such a label in full
  d <- x
  d$p <- lx
  r <- y
  r$p <- rep(c(1e15, 2^53), 20)
  expect_error(wtheta(d, r, b, error = "jackknife", patches = "p"),
               "patch \"1000000000000001\" holds no random point", fixed = TRUE)
})

test_that("weights that overflow or zero a normaliser are refused", {
  set.seed(6)
  d <- random_sky(50, ra = c(0, 20), dec = c(-10, 10))
  r <- random_sky(80, ra = c(0, 20), dec = c(-10, 10))
  b <- c(0.5, 2, 5)
  code <- c(
    "set.seed(6)",
    "d <- data.frame(ra = runif(50, 0, 20), dec = runif(50, -10, 10))",
    "msg <- function(expr) tryCatch({ expr; 'no error' },",
    "  error = function(e) conditionMessage(e), warning = function(w)",
    "  paste('warning:', conditionMessage(w)))",
    "d$w <- 1e200",
    "cat('pc:', msg(pair_counts(d, bins = c(0, 1, 5), weights = 'w')), '\\n')",
    "cat('w:', msg(wtheta(d, d, c(1, 5), weights = list(random = d$w))), '\\n')",
    "d$w <- 1e150",
    "cat('ok:', is.finite(sum(pair_counts(d, bins = c(0, 1, 5), weights = 'w')$weighted)), '\\n')")
  res <- run_child(code)
  expect_identical(res$status, 0L, info = paste(res$out, collapse = "\n"))
  expect_identical(child_says(res, "pc"), paste0(
    "`weights` are too large: the largest, 1e+200 (of `x`), squared and ",
    "summed over up to 2500 pairs overflows a double; divide each catalog's ",
    "weights by a common factor (w(theta) does not change). "))
  expect_match(child_says(res, "w"), "the largest, 1e\\+200 \\(of `random`\\)")
  expect_identical(child_says(res, "ok"), "TRUE ")
  # zero totals: all zero, summing to zero, a single non-zero weight (no
  # pair i < j has weight)
  expect_error(wtheta(d, r, b, weights = list(data = rep(0, 50))), paste0(
    "`weights` make the weighted total of all DD pairs 0, so DD cannot be ",
    "normalised (weight sums: data 0, random 80)"), fixed = TRUE)
  expect_error(wtheta(d, r, b, weights = list(random = rep(c(1, -1), 40))),
               "weighted total of all DR pairs 0", fixed = TRUE)
  expect_error(wtheta(d, r, b, weights = list(data = c(2, rep(0, 49)))),
               "weighted total of all DD pairs 0", fixed = TRUE)
  expect_error(wtheta(d, r, b, self_pairs = TRUE,
                      weights = list(data = c(2, rep(0, 49)))), NA)
  # a bin without random pairs: NA and a warning that names it
  expect_warning(w <- wtheta(d, r, c(0.001, 0.002, 2), threads = 1),
                 "w is NA in 1 bin(s) where RR is zero: bin 1;", fixed = TRUE)
  expect_identical(is.na(w$w), c(TRUE, FALSE))
})

test_that("duplicate column names are refused, not resolved to the first", {
  d <- data.frame(ra = c(1, 2), dec = c(0, 1), ra = c(5, 6),
                  check.names = FALSE)
  expect_error(pair_counts(d, bins = c(0, 1)),
               "`x` has 2 columns named \"ra\", ignoring case (columns 1 and 3: ra, ra); rename all but one.",
               fixed = TRUE)
  m <- cbind(ra = 1:2, dec = 0:1, dec = 3:4)
  expect_error(wtheta(m, m, c(0, 1)),
               "`data` has 2 columns named \"dec\", ignoring case (columns 2 and 3",
               fixed = TRUE)
  ok <- data.frame(ra = c(1, 2, 3), dec = c(0, 1, 2), w = 1, w = 2,
                   check.names = FALSE)
  expect_error(pair_counts(ok, bins = c(0, 1), weights = "w"), paste0(
    "`weights$x` names column \"w\", but `x` has 2 columns of that name ",
    "(columns 3 and 4); rename all but one."), fixed = TRUE)
})

test_that("replicates without random pairs in a bin give a warning naming it", {
  # randoms 2 degrees apart, but for one close pair in patch 1: leaving
  # patch 1 out leaves no RR pair in the first bin
  r <- data.frame(ra = c(0, 0.01, seq(2, 20, by = 2)), dec = 0)
  r$p <- c(1, 1, rep(1:3, length.out = 10))
  d <- data.frame(ra = c(0.005, 0.02, 7, 13), dec = 0.002, p = c(1, 1, 2, 3))
  expect_warning(w <- wtheta(d, r, c(0, 0.1, 5), error = "jackknife",
                             patches = "p", threads = 1),
                 paste0("w_err is NA in 1 bin(s) where a jackknife ",
                        "replicate of w has a zero denominator: bin 1;"),
                 fixed = TRUE)
  expect_identical(is.na(w$w_err), c(TRUE, FALSE))
  expect_identical(w$RR[1], 1)
  expect_false(is.na(w$w[1]))
})
