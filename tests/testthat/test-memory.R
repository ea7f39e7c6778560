# The memory a count needs (check_memory(), memory_needed()), checked before
# it starts.

test_that("a count that cannot fit in memory stops before it starts", {
  expect_error(wtheta:::check_memory(1e9, available = 8e9),
               "counting 1,000,000,000 points needs about 64.0 GB of memory, but only 8.0 GB are available")
  expect_invisible(wtheta:::check_memory(1e6, available = 8e9))
  expect_equal(wtheta:::memory_needed(1e6, TRUE, TRUE), 1e6 * 116)
  expect_equal(wtheta:::check_memory(10, available = NA), 640)
})

test_that("the memory estimate counts patch arrays, replicates and buffers", {
  # 3 counts of 10 bins between 100 patches: slot counts (12 slots, 64-bit)
  # and R's copy (10 bins, double) per patch pair, 100 replicates per bin
  # and count, and the CPU engine's buffers of one thread
  need <- wtheta:::memory_needed(0, FALSE, TRUE, n_bins = 10,
                                 n_patches = 100, n_replicates = 100,
                                 n_counts = 3)
  expect_equal(need, 3 * 100^2 * (12 * 8 + 10 * 8) + 3 * 100 * 10 * 8 +
                 8 * 12 * 4 + 2^24)
  # weights double the arrays and widen the buffers
  needw <- wtheta:::memory_needed(0, TRUE, TRUE, n_bins = 10,
                                  n_patches = 100, n_replicates = 100,
                                  n_counts = 3)
  expect_equal(needw, 2 * 3 * 100^2 * (12 * 8 + 10 * 8) + 3 * 100 * 10 * 8 +
                 8 * 12 * 12 + 2^24)
  # few points but a huge patch array: refused, with the estimate
  expect_error(wtheta:::check_memory(1000, FALSE, TRUE, available = 8e9,
                                     n_bins = 1000, n_patches = 1000,
                                     n_counts = 3),
               "counting 1,000 points needs about 48.1 GB of memory, but only 8.0 GB are available",
               fixed = TRUE)
})

test_that("the memory estimate counts the CPU engine's columns as floats", {
  # 12 bytes a point, for at most 2^23 points (beyond, tiles per item)
  base <- 8 * 12 * 4 + 2^24
  expect_equal(wtheta:::memory_needed(1e6, FALSE, FALSE, n_bins = 10) -
                 wtheta:::memory_needed(1e6, FALSE, FALSE), base + 12e6)
  expect_equal(wtheta:::memory_needed(1e8, FALSE, FALSE, n_bins = 10) -
                 wtheta:::memory_needed(1e8, FALSE, FALSE), base + 12 * 2^23)
})

test_that("the memory estimate counts PIP words", {
  # two copies (sorted by the grid and by patch) of 4 bytes a word
  expect_equal(wtheta:::memory_needed(1e6, TRUE, FALSE, word_points = 2e6) -
                 wtheta:::memory_needed(1e6, TRUE, FALSE), 8 * 2e6)
  # a call's words: every catalog's, as converted (call_bitwise())
  cats <- list(x = data.frame(ra = numeric(1e5), dec = numeric(1e5)),
               y = data.frame(ra = numeric(2e5), dec = numeric(2e5)))
  bits <- list(x = matrix(0L, 1e5, 2), y = matrix(0L, 2e5, 2))
  w <- list(x = rep(1, 1e5), y = rep(1, 2e5))
  plain <- wtheta:::check_call_memory(cats, w, 10, 1)
  pip <- wtheta:::check_call_memory(cats, w, 10, 1, bits = bits)
  expect_equal(pip - plain, 8 * 2 * 3e5)
})
