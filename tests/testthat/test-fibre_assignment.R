# simulate_fibre_assignment(): the collision rule, the bits, the checks

# the bit b (0 = least significant) of 32-bit words held as doubles
word_bit <- function(w, b) floor(w / 2^b) %% 2 == 1

# every pair i < j closer than r degrees, by the haversine formula
brute_close <- function(ra, dec, r) {
  d2r <- pi / 180
  n <- length(ra)
  ij <- which(upper.tri(matrix(0, n, n)), arr.ind = TRUE)
  a <- ra[ij[, 1]] * d2r
  b <- ra[ij[, 2]] * d2r
  da <- dec[ij[, 1]] * d2r
  db <- dec[ij[, 2]] * d2r
  h <- sin((db - da) / 2)^2 + cos(da) * cos(db) * sin((b - a) / 2)^2
  sep <- 2 * asin(sqrt(pmin(1, h))) / d2r
  ij <- ij[sep < r, , drop = FALSE]
  ij[order(ij[, 1], ij[, 2]), , drop = FALSE]
}

test_that("close_pairs() finds exactly the pairs within the radius", {
  set.seed(11)
  # a patch across ra = 0 and one near the pole, crowded enough for
  # neighbours in every direction
  ra <- c(runif(300, -1, 1) %% 360, runif(200, 0, 360))
  dec <- c(runif(300, -1, 1), runif(200, 88.5, 90))
  got <- wtheta:::close_pairs(ra, dec, 0.15)
  got <- got[order(got[, 1], got[, 2]), , drop = FALSE]
  want <- brute_close(ra, dec, 0.15)
  expect_gt(nrow(want), 100)
  expect_equal(unname(got), unname(want))
  expect_true(all(got[, 1] < got[, 2]))
})

test_that("one pass never observes a close pair and leaves no gap", {
  sim <- simulate_catalog(1500, ra_range = c(0, 3), dec_range = c(0, 3),
                          sigma = 0.05, seed = 3)
  r <- 0.04
  fa <- simulate_fibre_assignment(sim, radius = r, realizations = 32,
                                  seed = 4)
  close <- brute_close(sim$ra, sim$dec, r)
  expect_equal(attr(fa, "fibre_assignment")$n_close, nrow(close))
  expect_gt(nrow(close), 100)
  # the observed realisation and each realisation in the bits: no kept
  # pair closer than r, and every target left out has a kept neighbour
  # (the assignment is maximal)
  kept_in <- c(list(fa$observed),
               lapply(0:31, function(b) word_bit(fa$bits1, b)))
  for (kept in kept_in) {
    expect_false(any(kept[close[, 1]] & kept[close[, 2]]))
    out <- which(!kept)
    covered <- unique(c(close[kept[close[, 1]], 2], close[kept[close[, 2]], 1]))
    expect_true(all(out %in% covered))
  }
  # targets with no neighbour always have a fibre
  lonely <- setdiff(seq_len(nrow(sim)), c(close))
  expect_true(all(fa$observed[lonely]))
  expect_true(all(fa$bits1[lonely] == 2^32 - 1))
  # and the crowded ones not always: the bits differ between targets
  expect_gt(length(unique(fa$bits1)), 50)
})

test_that("two passes observe close pairs; passes can vary by target", {
  sim <- simulate_catalog(1500, ra_range = c(0, 3), dec_range = c(0, 3),
                          sigma = 0.05, seed = 3)
  r <- 0.04
  close <- brute_close(sim$ra, sim$dec, r)
  fa <- simulate_fibre_assignment(sim, radius = r, passes = 2, seed = 4)
  both <- fa$observed[close[, 1]] & fa$observed[close[, 2]]
  expect_gt(sum(both), 10)
  expect_equal(attr(fa, "fibre_assignment")$bitwise, c("bits1", "bits2"))
  expect_identical(attr(fa, "fibre_assignment")$nrealizations, 65L)
  # two passes keep more targets than one, in every realisation
  one <- simulate_fibre_assignment(sim, radius = r, seed = 4)
  pc <- function(w) rowSums(sapply(0:31, function(b) word_bit(w, b)))
  expect_gt(mean(pc(fa$bits1)), mean(pc(one$bits1)))
  # one pass on the west half: no close pair observed there
  west <- sim$ra < 1.5
  fv <- simulate_fibre_assignment(sim, radius = r,
                                  passes = ifelse(west, 1, 2), seed = 4)
  bw <- fv$observed[close[, 1]] & fv$observed[close[, 2]]
  expect_false(any(bw & west[close[, 1]] & west[close[, 2]]))
  expect_gt(sum(bw & !west[close[, 1]] & !west[close[, 2]]), 5)
})

test_that("the seed reproduces the draw and leaves the random state", {
  sim <- simulate_catalog(500, ra_range = c(0, 2), dec_range = c(0, 2),
                          seed = 5)
  set.seed(99)
  before <- .Random.seed
  a <- simulate_fibre_assignment(sim, radius = 0.05, seed = 6)
  expect_identical(.Random.seed, before)
  b <- simulate_fibre_assignment(sim, radius = 0.05, seed = 6)
  expect_identical(a, b)
  c2 <- simulate_fibre_assignment(sim, radius = 0.05, seed = 7)
  expect_false(identical(a$bits1, c2$bits1))
  # the catalog's own columns and attributes stay
  expect_identical(a$ra, sim$ra)
  expect_identical(attr(a, "footprint"), attr(sim, "footprint"))
  expect_true(all(a$bits1 >= 0 & a$bits1 <= 2^32 - 1 &
                    a$bits1 == round(a$bits1)))
})

test_that("simulate_fibre_assignment() names the argument it refuses", {
  sim <- data.frame(ra = c(1, 1.01, 2), dec = c(0, 0, 1))
  expect_error(simulate_fibre_assignment(sim, radius = 0),
               "`radius` must lie in \\(0, 10\\] degrees, not 0")
  expect_error(simulate_fibre_assignment(sim, radius = 0.1,
                                         realizations = 40),
               "`realizations` must be a multiple of 32.*not 40")
  expect_error(simulate_fibre_assignment(sim, radius = 0.1,
                                         realizations = 2048),
               "`realizations` must be at most 1,024")
  expect_error(simulate_fibre_assignment(sim, radius = 0.1, passes = 1:2),
               paste0("`passes` must be a whole number from 1 to 10.*",
                      "as long as `x` \\(3\\)"))
  expect_error(simulate_fibre_assignment(sim, radius = 0.1, passes = 0),
               "`passes`")
  sim$bits2 <- 1
  expect_error(simulate_fibre_assignment(sim, radius = 0.1),
               "`x` already has a column \"bits2\"")
  expect_error(simulate_fibre_assignment(list(1), radius = 0.1), "`x`")
})

# angular_upweights(): the ratio of the parent's normalised counts to the
# PIP-weighted ones, against the brute force of helper-pip.R

test_that("angular_upweights() is the parent's DD over the PIP DD", {
  fib <- pip_catalog(60, seed = 21)
  set.seed(22)
  parent <- rbind(fib[, c("ra", "dec")],
                  data.frame(ra = runif(30, 10, 25), dec = runif(30, -8, 8)))
  edges <- c(0.5, 1, 2, 4, 8, 14)
  b <- as.matrix(fib[, c("b1", "b2")])
  up <- angular_upweights(parent, fib, edges, bitwise = c("b1", "b2"),
                          threads = 1)
  np <- nrow(parent)
  par_dd <- pip_brute_counts(parent, NULL, edges)$counts / (np * (np - 1) / 2)
  fib_dd <- pip_brute_counts(fib, NULL, edges, bx = b)$weighted /
    pip_brute_norm(rep(1, 60), b, nrealizations = 65)
  expect_equal(up$weight, par_dd / fib_dd, tolerance = 1e-12)
  expect_equal(up$parent, par_dd, tolerance = 1e-12)
  expect_equal(up$fibered, fib_dd, tolerance = 1e-12)
  # the edges are not log-spaced: the centres are midpoints
  expect_equal(up$theta, (edges[-6] + edges[-1]) / 2)
  expect_equal(angular_upweights(parent, fib, c(0.5, 1, 2, 4),
                                 bitwise = c("b1", "b2"), threads = 1)$theta,
               sqrt(c(0.5, 2, 8)))
  expect_identical(attr(up, "count"), "DD")
  # individual weights enter both samples that have them
  parent$w <- c(fib$w, rep(1, 30))
  upw <- angular_upweights(parent, fib, edges, bitwise = c("b1", "b2"),
                           weights = "w", threads = 1)
  ww <- pip_brute_counts(parent, NULL, edges, wx = parent$w)$weighted /
    ((sum(parent$w)^2 - sum(parent$w^2)) / 2)
  fw <- pip_brute_counts(fib, NULL, edges, wx = fib$w, bx = b)$weighted /
    pip_brute_norm(fib$w, b, nrealizations = 65)
  expect_equal(upw$weight, ww / fw, tolerance = 1e-12)
  # the result is what wtheta()'s `angular` takes
  r <- data.frame(ra = runif(50, 10, 25), dec = runif(50, -8, 8))
  expect_no_error(wtheta(fib, r, edges, bitwise = c("b1", "b2"),
                         angular = up, error = "none", threads = 1,
                         check_footprint = FALSE))
})

test_that("angular_upweights() with randoms is the D-R ratio, IIP-weighted", {
  fib <- pip_catalog(50, seed = 23)
  set.seed(24)
  parent <- rbind(fib[, c("ra", "dec")],
                  data.frame(ra = runif(20, 10, 25), dec = runif(20, -8, 8)))
  r <- data.frame(ra = runif(70, 10, 25), dec = runif(70, -8, 8))
  edges <- c(0.5, 2, 6, 14)
  b <- as.matrix(fib[, c("b1", "b2")])
  up <- angular_upweights(parent, fib, edges, bitwise = c("b1", "b2"),
                          random = r, noffset = 0, nrealizations = 64,
                          threads = 1)
  iip <- 64 / rowSums(pip_bits01(b))
  par_dr <- pip_brute_counts(parent, r, edges)$counts / (70 * 70)
  fib_dr <- pip_brute_counts(fib, r, edges, bx = b, noffset = 0,
                             nrealizations = 64)$weighted / (sum(iip) * 70)
  expect_equal(up$weight, par_dr / fib_dr, tolerance = 1e-12)
  expect_identical(attr(up, "count"), "DR")
})

test_that("angular_upweights() refuses bins the fibre-assigned sample misses", {
  # two targets 0.1 degree apart, one observed: no fibered pair there
  parent <- data.frame(ra = c(10, 10.1, 12, 14), dec = c(0, 0, 0, 0))
  fib <- parent[c(1, 3, 4), ]
  fib$b1 <- 2^32 - 1
  expect_error(angular_upweights(parent, fib, c(0.05, 0.5, 3, 5),
                                 bitwise = "b1", threads = 1),
               paste0("zero in 1 bin\\(s\\) where the parent's is not ",
                      "\\(bin 1, from 0.05 degrees\\)"))
  # where neither has pairs the upweight is 1
  up <- angular_upweights(parent, fib, c(0.5, 1, 3, 5), bitwise = "b1",
                          threads = 1)
  expect_equal(up$weight[1], 1)
  expect_equal(up$parent[1], 0)
  expect_error(angular_upweights(parent, fib, c(0.5, 1)),
               "`bitwise` is needed")
  # a fibre-assigned sample prepared with its words needs no `bitwise`; a
  # parent prepared with words is refused
  pf <- prepare_catalog(fib, bitwise = "b1", threads = 1)
  expect_equal(angular_upweights(parent, pf, c(0.5, 1, 3, 5),
                                 threads = 1)$weight, up$weight)
  fa <- parent
  fa$b1 <- 2^32 - 1
  expect_error(angular_upweights(prepare_catalog(fa, bitwise = "b1",
                                                 threads = 1), fib,
                                 c(0.5, 1, 3, 5), bitwise = "b1"),
               "`parent` is a catalog prepared with bitwise words")
})
