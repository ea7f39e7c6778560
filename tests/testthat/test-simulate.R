test_that("simulations are reproducible and stay on the footprint", {
  a <- simulate_catalog(500, ra_range = c(10, 30), dec_range = c(-5, 5),
                        seed = 9)
  b <- simulate_catalog(500, ra_range = c(10, 30), dec_range = c(-5, 5),
                        seed = 9)
  expect_identical(a, b)
  expect_identical(nrow(a), 500L)
  expect_true(all(a$ra >= 10 & a$ra <= 30 & a$dec >= -5 & a$dec <= 5))
  r <- random_catalog(300, like = a, seed = 1)
  expect_true(all(r$ra >= min(a$ra) & r$ra <= max(a$ra)))
  # uniform in area: sin(dec) is uniform
  big <- random_catalog(20000, dec_range = c(0, 90), seed = 2)
  expect_equal(mean(sinpi(big$dec / 180)), 0.5, tolerance = 0.02)
  expect_error(simulate_catalog(0), "`n` must be a whole number >= 1")
  expect_error(random_catalog(5, dec_range = c(0, 100)), "`dec_range`")
})

test_that("a seed leaves the session's random state alone", {
  set.seed(1)
  x <- runif(1)
  set.seed(1)
  simulate_catalog(10, seed = 5)
  expect_identical(runif(1), x)
})
