# The host (R-side) work of a PIP count in C (issue 37, src/r/pip.c and
# C_weight_sums in src/r/patches.c) against plain R computations on small
# random inputs: popcounts from 0/1 bit matrices (pip_bits01(),
# helper-pip.R), sums by tapply(), and the errors they raise.

pip_ns <- asNamespace("wtheta")
pip_call <- function(name, ...) .Call(get(paste0("C_", name), pip_ns), ...)

# the words matrix of a catalog made by pip_catalog() (k words) and its
# popcounts in plain R
pip_words_of <- function(x, k) {
  cols <- lapply(seq_len(k), function(j) x[[paste0("b", j)]])
  bits <- as.matrix(x[, paste0("b", seq_len(k))])
  list(words = pip_ns$bitwise_words(cols, paste("column", seq_len(k))),
       pop = as.integer(rowSums(pip_bits01(bits))))
}

# sums of v by popcount (bins 0..K-1) and, with patches, by patch x popcount
by_pop <- function(v, pop, K) {
  out <- numeric(K)
  s <- tapply(v, pop, sum)
  out[as.integer(names(s)) + 1L] <- s
  out
}
by_patch_pop <- function(v, p, pop, P, K) {
  out <- matrix(0, P, K)
  for (a in seq_len(P)) out[a, ] <- by_pop(v[p == a], pop[p == a], K)
  out
}

test_that("pip_bins bins weights and squares by popcount and patch as R does", {
  for (k in 1:3) for (weighted in c(TRUE, FALSE)) {
    x <- pip_catalog(150 + 10 * k, k = k, fill = 0.3 + 0.1 * k, seed = k)
    wp <- pip_words_of(x, k)
    w <- if (weighted) x$w else rep(1, nrow(x))
    K <- 32L * k + 1L
    P <- 5L
    # patch 4 empty: its rows stay zero
    p <- sample(c(1L, 2L, 3L, 5L), nrow(x), replace = TRUE)
    s <- pip_call("pip_bins", wp$words, if (weighted) w, p, P, K)
    expect_identical(s$max, max(wp$pop))
    expect_equal(s$w, by_pop(w, wp$pop, K), tolerance = 1e-13)
    expect_equal(s$w2, by_pop(w^2, wp$pop, K), tolerance = 1e-13)
    expect_equal(s$patch_w, by_patch_pop(w, p, wp$pop, P, K),
                 tolerance = 1e-13)
    expect_equal(s$patch_w2, by_patch_pop(w^2, p, wp$pop, P, K),
                 tolerance = 1e-13)
    expect_identical(s$patch_w[4, ], numeric(K))
    expect_equal(sum(s$w), sum(w), tolerance = 1e-13)
    # patch numbers as doubles, and none
    sd <- pip_call("pip_bins", wp$words, w, as.double(p), P, K)
    expect_identical(sd$patch_w, s$patch_w)
    s0 <- pip_call("pip_bins", wp$words, w, NULL, 0L, K)
    expect_identical(s0$w, s$w)
    expect_null(s0$patch_w)
    # more bits than bins: the largest popcount, and no sums
    short <- pip_call("pip_bins", wp$words, w, NULL, 0L, max(wp$pop))
    expect_identical(short$max, max(wp$pop))
    expect_null(short$w)
  }
})

test_that("pip_bins and pip_fold read integer64 words as two 32-bit words", {
  skip_if_not_installed("bit64")
  x <- pip_catalog(120, k = 2, fill = 0.6, seed = 11)
  v <- pip_integer64(x$b1, x$b2)
  words <- pip_ns$bitwise_words(list(v, x$b1), c("a", "b"))
  expect_identical(ncol(words), 3L)
  pop <- as.integer(rowSums(pip_bits01(cbind(x$b1, x$b2, x$b1))))
  s <- pip_call("pip_bins", words, x$w, NULL, 0L, 97L)
  expect_identical(s$max, max(pop))
  expect_equal(s$w, by_pop(x$w, pop, 97L), tolerance = 1e-13)
  f <- 97 / (1 + 0:96)
  expect_identical(pip_call("pip_fold", words, x$w, f), x$w * f[pop + 1L])
})

test_that("pip_fold multiplies each weight by its own inverse probability", {
  for (k in 1:3) {
    x <- pip_catalog(90, k = k, fill = 0.2 * k, seed = 20 + k)
    wp <- pip_words_of(x, k)
    f <- pip_ns$pip_by_count(32 * k, 32 * k + 1, 1, 0)
    expect_identical(pip_call("pip_fold", wp$words, x$w, f),
                     x$w * f[wp$pop + 1L])
    expect_identical(pip_call("pip_fold", wp$words, NULL, f), f[wp$pop + 1L])
    # noffset 0: popcount 0 takes default_value
    f0 <- pip_ns$pip_by_count(32 * k, 7, 0, 0.25)
    expect_identical(f0[1L], 0.25)
    zero <- wp$words
    zero[1:3, ] <- 0L
    expect_identical(pip_call("pip_fold", zero, x$w, f0)[1:3], x$w[1:3] * 0.25)
  }
})

test_that("bitwise_bad finds the first value that is not a word", {
  good <- c(0, 1, 2^32 - 1, 12345)
  expect_identical(pip_call("bitwise_bad", good, FALSE), 0L)
  for (bad in list(NA_real_, NaN, -1, 2^32, 1.5, Inf, -Inf)) {
    expect_identical(pip_call("bitwise_bad", c(good, bad, -2), FALSE), 5L)
  }
  skip_if_not_installed("bit64")
  v <- bit64::as.integer64(c(1, -5, 7, NA, 3))
  expect_identical(pip_call("bitwise_bad", unclass(v), TRUE), 4L)
  expect_identical(pip_call("bitwise_bad", unclass(v[-4]), TRUE), 0L)
})

test_that("bad bitwise columns and too many bits name the row and the count", {
  x <- pip_catalog(40, k = 2, seed = 3)
  y <- x
  y$b2[17] <- 2^32
  expect_error(pair_counts(y, bins = c(0, 1), bitwise = c("b1", "b2")),
               paste0("column \"b2\" of `x` must hold whole numbers from 0 ",
                      "to 2\\^32 - 1 \\(32-bit words\\); row 17 is ",
                      "4294967296"))
  y$b2[17] <- NA
  expect_error(pair_counts(y, bins = c(0, 1), bitwise = c("b1", "b2")),
               "row 17 is NA")
  skip_if_not_installed("bit64")
  z <- x
  z$b1 <- bit64::as.integer64(round(x$b1 / 2))
  z$b1[9] <- NA
  expect_error(pair_counts(z, bins = c(0, 1), bitwise = "b1"),
               "column \"b1\" of `x` holds NA at row 9; bitwise weights")
  # an object with more bits than nrealizations - noffset (5 - 1)
  n_max <- max(rowSums(pip_bits01(as.matrix(x[, c("b1", "b2")]))))
  expect_error(pair_counts(x, bins = c(0, 1), bitwise = c("b1", "b2"),
                           nrealizations = 5),
               paste0("an object has ", n_max, " bits set, more than ",
                      "`nrealizations` - `noffset` \\(5 - 1\\)"))
})

test_that("weight_sums gives sum(), sum of squares and rowsum() exactly", {
  set.seed(5)
  w <- runif(333, 0.1, 3)
  p <- sample(c(1L, 3L, 4L), 333, replace = TRUE)
  s <- pip_call("weight_sums", w, p, 4L)
  expect_identical(s$sum, sum(w))
  expect_identical(s$sum_sq, sum(w^2))
  ref <- numeric(4)
  r <- rowsum(w, p)
  ref[as.integer(rownames(r))] <- r[, 1L]
  expect_identical(s$patch, ref)
  ref2 <- numeric(4)
  r2 <- rowsum(w^2, p)
  ref2[as.integer(rownames(r2))] <- r2[, 1L]
  expect_identical(s$patch_sq, ref2)
  expect_identical(s$patch[2L], 0)
  s0 <- pip_call("weight_sums", w, NULL, 0L)
  expect_identical(s0$sum, sum(w))
  expect_null(s0$patch)
})
