test_that("auto and cross counts equal a brute-force double computation", {
  set.seed(11)
  x <- random_sky(300)
  y <- random_sky(170, ra = c(10, 80), dec = c(-20, 40))
  binnings <- list(
    theta_bins(0, 180, width = 7.5),
    theta_bins(0.5, 60, n = 17, log = TRUE),
    theta_bins(edges = c(2, 3.5, 10, 44.4, 90, 91)),
    theta_bins(1e-6, 180, n = 4000, log = TRUE)
  )
  for (b in binnings) {
    for (threads in 1:test_threads()) {
      pc <- pair_counts(x, bins = b, backend = "cpu", threads = threads)
      expect_identical(slots_of(pc), as.double(ref_slots(x, NULL, b)))
      expect_identical(pc$n_pairs, 300 * 299 / 2)
      expect_identical(sum(pc$counts) + pc$n_outside, pc$n_pairs)
      pc <- pair_counts(x, y, bins = b, backend = "cpu", threads = threads)
      expect_identical(slots_of(pc), as.double(ref_slots(x, y, b)))
      expect_identical(pc$n_pairs, 300 * 170)
    }
  }
})

test_that("more bins than the lookup table holds use the exact search", {
  set.seed(12)
  x <- random_sky(120)
  b <- theta_bins(0, 180, n = 70000)
  pc <- pair_counts(x, bins = b, backend = "cpu", threads = 1)
  expect_identical(slots_of(pc), as.double(ref_slots(x, NULL, b)))
})

test_that("self pairs give ordered counts that sum to n^2", {
  set.seed(13)
  x <- random_sky(101)
  b <- theta_bins(0, 100, width = 5)
  pc <- pair_counts(x, bins = b, self_pairs = TRUE, backend = "cpu",
                    threads = 1)
  expect_identical(slots_of(pc), as.double(ref_slots(x, NULL, b, TRUE)))
  expect_identical(sum(pc$counts) + pc$n_outside, 101^2)
  # cross of a catalog with itself is the same set of ordered pairs
  cross <- pair_counts(x, x, bins = b, backend = "cpu", threads = 1)
  expect_identical(cross$counts, pc$counts)
  # with a first edge above zero the self pairs fall below it
  b2 <- theta_bins(1, 100, width = 1)
  pc2 <- pair_counts(x, bins = b2, self_pairs = TRUE, backend = "cpu")
  expect_identical(pc2$n_below,
                   2 * pair_counts(x, bins = b2, backend = "cpu")$n_below + 101)
})

test_that("special geometry: duplicates, antipodes, poles, wrap, edges", {
  pts <- data.frame(
    ra = c(10, 10, 0, 180, 0, 123, 359.9, 0.1, 0, 90, 45, 45, 200, 20),
    dec = c(5, 5, 0, 0, 90, 90, 0, 0, -90, 0, 30, 30.25, -60, -60)
  )
  b <- theta_bins(0, 180, width = 0.25)
  pc <- pair_counts(pts, bins = b, backend = "cpu", threads = 1)
  expect_identical(slots_of(pc), as.double(ref_slots(pts, NULL, b)))
  # identical points: separation 0, in the first bin [0, 0.25)
  pair <- pair_counts(pts[1:2, ], bins = b, backend = "cpu")
  expect_identical(pair$counts[1], 1)
  # antipodal points: 180 degrees, in the last bin (an edge of 180 closes it)
  anti <- pair_counts(pts[3:4, ], bins = b, backend = "cpu")
  expect_identical(anti$counts[720], 1)
  expect_identical(anti$n_outside, 0)
  # two points at the north pole with different ra coincide
  pole <- pair_counts(pts[5:6, ], bins = b, backend = "cpu")
  expect_identical(pole$counts[1], 1)
  # ra wraps: 359.9 and 0.1 are 0.2 degrees apart
  wrap <- pair_counts(pts[7:8, ], bins = b, backend = "cpu")
  expect_identical(wrap$counts[1], 1)
  # negative and > 360 right ascensions are taken modulo 360
  shifted <- transform(pts, ra = ifelse(seq_along(ra) %% 2 == 0, ra - 360,
                                        ra + 360))
  expect_identical(pair_counts(shifted, bins = b, backend = "cpu")$counts,
                   pc$counts)
  # north pole to south pole: 180 degrees
  np_sp <- pair_counts(pts[c(5, 9), ], bins = b, backend = "cpu")
  expect_identical(np_sp$counts[720], 1)
  # a pair beyond the last edge is counted outside, above
  far <- pair_counts(pts[3:4, ], bins = theta_bins(0, 90, width = 1),
                     backend = "cpu")
  expect_identical(c(far$n_below, sum(far$counts), far$n_above), c(0, 0, 1))
})

test_that("pairs exactly on an edge follow the double-precision contract", {
  # pairs along the equator whose true separation is exactly an edge
  edges <- c(0, 0.25, 1, 15, 30, 45, 60, 89.75, 90, 120, 179.75, 180)
  on_edge <- data.frame(ra = c(0, edges[-1]), dec = 0)
  pc <- pair_counts(on_edge[1, ], on_edge[-1, ], bins = theta_bins(edges = edges),
                    backend = "cpu")
  expect_identical(slots_of(pc),
                   as.double(ref_slots(on_edge[1, ], on_edge[-1, ], edges)))
  # and along a meridian
  mer <- data.frame(ra = 30, dec = c(-45, -45 + edges[2:9]))
  pc <- pair_counts(mer[1, ], mer[-1, ], bins = theta_bins(edges = edges),
                    backend = "cpu")
  expect_identical(slots_of(pc),
                   as.double(ref_slots(mer[1, ], mer[-1, ], edges)))
  # an identical pair sits on the edge 0 and belongs to [0, hi)
  expect_identical(pair_counts(on_edge[c(1, 1), ], bins = c(0, 1))$counts, 1)
})

test_that("one point and tiny catalogs", {
  b <- theta_bins(0, 10, width = 1)
  one <- data.frame(ra = 1, dec = 1)
  pc <- pair_counts(one, bins = b, backend = "cpu")
  expect_identical(pc$counts, rep(0, 10))
  expect_identical(pc$n_pairs, 0)
  pc <- pair_counts(one, bins = b, self_pairs = TRUE, backend = "cpu")
  expect_identical(pc$counts, c(1, rep(0, 9)))
  # (1, 1) to itself: 0 degrees; to (2, 1): 0.99985 degrees; to (1, 3): 2
  two <- data.frame(ra = c(1, 2, 1), dec = c(1, 1, 3))
  expect_identical(pair_counts(one, two, bins = b, backend = "cpu")$counts,
                   c(2, 0, 1, rep(0, 7)))
})

test_that("the result records how it was made", {
  x <- data.frame(ra = c(1, 2, 3), dec = c(0, 0, 0))
  pc <- pair_counts(x, bins = c(0, 1.5, 3), backend = "cpu", threads = 1)
  expect_s3_class(pc, "pair_counts")
  expect_identical(pc$backend, "cpu")
  expect_identical(pc$threads, 1L)
  expect_identical(pc$type, "auto")
  expect_identical(c(pc$n1, pc$n2), c(3, 3))
  expect_identical(pc$counts, c(2, 1))
  expect_identical(pc$theta_lo, c(0, 1.5))
  expect_identical(pc$theta_hi, c(1.5, 3))
  expect_true(pc$elapsed >= 0)
  expect_identical(pc$gpu_idle_s, NA_real_)     # no GPU ran
  expect_output(print(pc), "auto: 3 points, unordered pairs i < j")
  expect_output(print(pc), "backend: cpu \\(1 thread\\)")
})

test_that("other column names are accepted", {
  x <- data.frame(RA = c(1, 2), DEC = c(0, 0), z = 3)
  pc <- pair_counts(x, bins = c(0, 2), columns = c("RA", "DEC"),
                    backend = "cpu")
  expect_identical(pc$counts, 1)
})

test_that("the coordinate check finds the first bad row in any thread's block", {
  # check_catalog()'s pass (src/r/catalog.c) runs on up to `threads`
  # threads, a block each, then looks for the first bad row serially:
  # a bad row in a late block is found, the first of two in different
  # blocks is the one named, and an ra to reduce in the last block only
  # is reduced
  ns <- asNamespace("wtheta")
  n <- 2e5
  x <- data.frame(ra = seq(0, 359, length.out = n), dec = rep(c(-30, 30), n / 2))
  y <- x
  y$ra[n - 1] <- NaN
  expect_error(ns$as_catalog(y, "y", threads = 4L),
               "column \"ra\" has a non-finite value \\(NaN\\) in row 199999")
  y <- x
  y$dec[c(60000, 150001)] <- c(Inf, -Inf)
  expect_error(ns$as_catalog(y, "y", threads = 4L),
               "non-finite value \\(Inf\\) in row 60000")
  y <- x
  y$dec[n] <- -90.25
  expect_error(ns$as_catalog(y, "y", threads = 4L),
               "must lie in \\[-90, 90\\] degrees; row 200000 has -90.25")
  y <- x
  y$ra[n] <- 365
  out <- ns$as_catalog(y, "y", threads = 4L)
  expect_identical(out$ra[n], 5)
  expect_identical(out$ra[-n], x$ra[-n])
  expect_identical(ns$as_catalog(x, "x", threads = 4L)$ra, x$ra)
})

test_that("bad input is refused with messages naming the argument", {
  good <- data.frame(ra = c(1, 2), dec = c(3, 4))
  b <- c(0, 1, 2)
  expect_error(pair_counts(list(1), bins = b), "`x` must be a data frame")
  expect_error(pair_counts(data.frame(ra = 1), bins = b),
               "`x` has no column \"dec\"")
  expect_error(pair_counts(data.frame(ra = "a", dec = 1), bins = b),
               "`x` column \"ra\" must be numeric")
  expect_error(pair_counts(data.frame(ra = c(1, NA), dec = 1:2), bins = b),
               "`x` column \"ra\" has a non-finite value \\(NA\\) in row 2")
  expect_error(pair_counts(data.frame(ra = 1, dec = Inf), bins = b),
               "non-finite value \\(Inf\\) in row 1")
  expect_error(pair_counts(data.frame(ra = 1, dec = NaN), bins = b),
               "non-finite value \\(NaN\\)")
  expect_error(pair_counts(data.frame(ra = c(1, 2), dec = c(0, 90.5)),
                           bins = b),
               "must lie in \\[-90, 90\\] degrees; row 2 has 90.5")
  expect_error(pair_counts(good, data.frame(ra = numeric(), dec = numeric()),
                           bins = b), "`y` is empty")
  expect_error(pair_counts(good, bins = c(0, 2, 1)),
               "strictly increasing; edge 3 \\(1\\) does not exceed edge 2")
  expect_error(pair_counts(good, bins = c(-1, 1)),
               "edges must lie in \\[0, 180\\] degrees; edge 1 is -1")
  expect_error(pair_counts(good, bins = c(0, 181)), "edge 2 is 181")
  expect_error(pair_counts(good, bins = 1), "at least two edges, not 1")
  expect_error(pair_counts(good, bins = c(0, NA)), "non-finite edge")
  expect_error(pair_counts(good), "`bins` is needed")
  expect_error(pair_counts(good, bins = b, backend = "gpu"),
               "`backend` must be one of \"auto\", \"cpu\", \"cuda\", not \"gpu\"")
  expect_error(pair_counts(good, bins = b, threads = 0),
               "`threads` must be a whole number >= 1, not 0")
  expect_error(pair_counts(good, bins = b, threads = 1.5), "not 1.5")
  expect_error(pair_counts(good, good, bins = b, self_pairs = TRUE),
               "applies to auto pairs only")
  expect_error(pair_counts(good, bins = b, self_pairs = NA),
               "`self_pairs` must be TRUE or FALSE")
  expect_error(pair_counts(good, bins = b, backend = "cpu", devices = 0),
               "cannot be used with backend = \"cpu\"")
})

test_that("backend = 'cuda' without a usable GPU is a clear error", {
  skip_if(has_cuda(), "a GPU is present")
  good <- data.frame(ra = c(1, 2), dec = c(3, 4))
  expect_error(pair_counts(good, bins = c(0, 5), backend = "cuda"),
               "backend = \"cuda\" was requested, but")
  # auto falls back to the CPU and says so
  expect_identical(pair_counts(good, bins = c(0, 5))$backend, "cpu")
})
