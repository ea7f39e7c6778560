# Counting through the future framework gives the same histograms whatever
# the plan: sequential, multisession, a PSOCK cluster.

same_counts <- function(a, b) {
  expect_identical(c(a$n_below, a$counts, a$n_above),
                   c(b$n_below, b$counts, b$n_above))
  expect_identical(a$patch_counts, b$patch_counts)
  expect_identical(a$n_pairs, b$n_pairs)
}

distribute_cases <- function() {
  set.seed(41)
  x <- random_sky(700, ra = c(0, 40), dec = c(-20, 20))
  y <- random_sky(500, ra = c(0, 40), dec = c(-20, 20))
  x$p <- sample(1:3, 700, replace = TRUE)
  y$p <- sample(1:3, 500, replace = TRUE)
  e <- c(0, 1, 3, 10, 30)
  local <- list(
    auto = pair_counts(x, bins = e, backend = "cpu", threads = 1),
    auto_sp = pair_counts(x, bins = e, self_pairs = TRUE, backend = "cpu",
                          threads = 1, patches = "p"),
    cross = pair_counts(x, y, bins = e, backend = "cpu", threads = 1,
                        patches = "p"))
  list(x = x, y = y, e = e, local = local)
}

check_plan <- function(k) {
  cs <- distribute_cases()
  d <- pair_counts(cs$x, bins = cs$e, backend = "cpu", threads = 1,
                   distribute = k)
  same_counts(d, cs$local$auto)
  expect_equal(d$distributed$tasks, k * (k + 1) / 2)
  d2 <- pair_counts(cs$x, bins = cs$e, self_pairs = TRUE, backend = "cpu",
                    threads = 1, patches = "p", distribute = k)
  same_counts(d2, cs$local$auto_sp)
  d3 <- pair_counts(cs$x, cs$y, bins = cs$e, backend = "cpu", threads = 1,
                    patches = "p", distribute = k)
  same_counts(d3, cs$local$cross)
  expect_equal(d3$distributed$tasks, k * k)
  d
}

test_that("sequential plan: block pairs add up to the whole count", {
  skip_if_not_installed("future")
  old <- future::plan("sequential")
  on.exit(future::plan(old), add = TRUE)
  d <- check_plan(3L)
  expect_equal(d$distributed$workers, 1L)
  expect_equal(d$distributed$plan, "sequential")
  # wtheta with jackknife errors through the plan equals the local call
  cs <- distribute_cases()
  a <- untrusted_cov_ok(
    wtheta(cs$x, cs$y, cs$e, backend = "cpu", threads = 1,
           error = "jackknife", patches = "p"))
  b <- untrusted_cov_ok(
    wtheta(cs$x, cs$y, cs$e, backend = "cpu", threads = 1,
           error = "jackknife", patches = "p", distribute = 2))
  expect_identical(a$w, b$w)
  expect_identical(a$w_err, b$w_err)
  # both keep the margins of their patch arrays, the same numbers
  for (k in c("DD", "DR", "RR")) {
    pa <- attr(a, "pair_counts")[[k]]
    pb <- attr(b, "pair_counts")[[k]]
    expect_null(pb$patch_counts)
    expect_identical(pb$patch_margins, pa$patch_margins)
    expect_true(sum(pa$patch_margins$total) > 0)
  }
  expect_error(pair_counts(cs$x, bins = cs$e, distribute = 0),
               "`distribute` must be a whole number >= 1")
  expect_error(pair_counts(cs$x, bins = cs$e, distribute = 2, devices = 0),
               "cannot be combined with `distribute`")
})

test_that("a multisession plan gives the same histograms", {
  skip_if_not_installed("future")
  old <- future::plan("multisession", workers = 2)
  on.exit(future::plan(old), add = TRUE)
  d <- check_plan(2L)
  expect_equal(d$distributed$plan, "multisession")
  expect_gte(d$distributed$workers, 1L)
})

test_that("a PSOCK cluster gives the same histograms", {
  skip_if_not_installed("future")
  cl <- parallel::makePSOCKcluster(2)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  old <- future::plan("cluster", workers = cl)
  on.exit(future::plan(old), add = TRUE)
  d <- check_plan(2L)
  expect_equal(d$distributed$plan, "cluster")
  expect_equal(d$distributed$workers, 2L)
})

