# The package's own thread teams (src/core/team.c), which run every
# parallel pass of the core and the CPU engine in place of OpenMP regions.

test_that("teams visit every iteration once, nest on one thread and start again at once", {
  n <- 100003
  teams <- 3000
  for (nt in c(1L, 2L, 3L, 5L)) {
    r <- wtheta:::team_check(nt, n = n, teams = teams)
    info <- paste("threads:", nt)
    # static blocks and dynamic runs of 7: each iteration exactly once
    expect_identical(r[1:2], c(n, n), info = info)
    # the static loop ran on the team asked for
    expect_identical(r[3], as.double(nt), info = info)
    # a team started inside a team runs on its caller alone
    expect_identical(r[4], 1, info = info)
    # many teams in a row, from R's thread and from a thread of its own
    # (whose workers stop when it ends): every thread of every team ran
    expect_identical(r[5:6], c(nt * teams, nt * teams), info = info)
  }
})

test_that("counts are the same on any number of threads, more than the cores too", {
  set.seed(7)
  x <- data.frame(ra = runif(20000, 0, 40), dec = runif(20000, -20, 20))
  y <- data.frame(ra = runif(30000, 0, 40), dec = runif(30000, -20, 20))
  b <- theta_bins(0.01, 5, n = 12, log = TRUE)
  one <- pair_counts(x, y, bins = b, backend = "cpu", threads = 1)
  for (nt in c(2L, 3L, 7L)) {
    many <- pair_counts(x, y, bins = b, backend = "cpu", threads = nt)
    expect_identical(many$counts, one$counts, info = paste("threads:", nt))
    expect_identical(many$threads, nt)
  }
})
