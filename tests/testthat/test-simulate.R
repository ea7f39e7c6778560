test_that("simulations are reproducible and stay on the footprint", {
  a <- simulate_catalog(500, ra_range = c(10, 30), dec_range = c(-5, 5),
                        seed = 9)
  b <- simulate_catalog(500, ra_range = c(10, 30), dec_range = c(-5, 5),
                        seed = 9)
  expect_identical(a, b)
  expect_identical(nrow(a), 500L)
  expect_true(all(a$ra >= 10 & a$ra <= 30 & a$dec >= -5 & a$dec <= 5))
  r <- random_catalog(300, like = a, seed = 1)
  expect_true(all(r$ra >= 10 & r$ra <= 30 & r$dec >= -5 & r$dec <= 5))
  expect_identical(attr(r, "footprint"), attr(a, "footprint"))
  # uniform in area: sin(dec) is uniform
  big <- random_catalog(20000, dec_range = c(0, 90), seed = 2)
  expect_equal(mean(sinpi(big$dec / 180)), 0.5, tolerance = 0.02)
  expect_error(simulate_catalog(0), "`n` must be a whole number >= 1")
  expect_error(random_catalog(5, dec_range = c(0, 100)), "`dec_range`")
  expect_error(simulate_catalog(10, sigma = 0), "`sigma`")
  expect_error(simulate_catalog(10, mask = 3), "`mask` must be NULL")
})

test_that("a seed leaves the session's random state alone", {
  set.seed(1)
  x <- runif(1)
  set.seed(1)
  simulate_catalog(10, seed = 5)
  expect_identical(runif(1), x)
})

test_that("footprints cross ra = 0 and masks cut holes", {
  hole <- function(ra, dec) ((ra + 180) %% 360 - 180)^2 + dec^2 > 4^2
  sim <- simulate_catalog(3000, ra_range = c(350, 10), dec_range = c(-10, 10),
                          n_clusters = 30, mask = hole, seed = 3)
  ran <- random_catalog(5000, like = sim, seed = 4)
  for (cat in list(sim, ran)) {
    lon <- (cat$ra + 180) %% 360 - 180
    expect_true(all(lon >= -10 & lon <= 10))
    expect_true(all(cat$ra >= 0 & cat$ra < 360))
    expect_true(all(hole(cat$ra, cat$dec)))
    # both sides of ra = 0 are filled
    expect_gt(mean(lon < 0), 0.35)
    expect_gt(mean(lon > 0), 0.35)
  }
  fp <- attr(sim, "footprint")
  box <- 20 * (180 / pi) * 2 * sinpi(10 / 180)
  expect_equal(fp$box_area, box)
  # the hole is a disc of 4 degrees radius (flat enough at the equator)
  expect_equal(fp$area, box - pi * 16, tolerance = 0.01)
  # randoms: uniform density on the footprint (share left of ra = 0)
  lon <- (ran$ra + 180) %% 360 - 180
  expect_equal(mean(lon < 0), 0.5, tolerance = 0.05)
  # a mask given without `like`
  r2 <- random_catalog(1000, ra_range = c(350, 10), mask = hole, seed = 5)
  expect_true(all(hole(r2$ra, r2$dec)))
  expect_error(random_catalog(10, mask = function(ra, dec) rep(FALSE,
                                                              length(ra))),
               "removes the whole box")
  expect_error(random_catalog(10, mask = function(ra, dec) 1),
               "must return a logical vector")
})

test_that("model_wtheta is the Thomas-process formula", {
  sim <- simulate_catalog(4000, n_clusters = 50, cluster_fraction = 0.4,
                          sigma = 0.3, seed = 11)
  m <- attr(sim, "model")
  fp <- attr(sim, "footprint")
  expect_equal(m$parent_density, 50 / fp$box_area)
  expect_equal(m$cluster_fraction, 0.4)
  th <- c(0, 0.3, 0.6, 2)
  w0 <- 0.4^2 / (4 * pi * 0.3^2 * m$parent_density)
  expect_equal(model_wtheta(sim, th), w0 * exp(-th^2 / (4 * 0.09)))
  expect_equal(model_wtheta(sim, th, integral_constraint = TRUE),
               model_wtheta(sim, th) - 0.4^2 / 50)
  expect_error(model_wtheta(data.frame(ra = 1, dec = 1), 1),
               "simulate_catalog")
  expect_error(model_wtheta(sim, -1), "`theta`")
})

test_that("measured w(theta) of simulations agrees with model_wtheta", {
  # Scatter from 30 realisations of this set-up (8000 points, 100 clusters
  # on a 20 x 20 degree box, 16000 randoms): between 11% and 15% of the
  # model in each bin below 0.5 degree, and 0.02 to 0.03 in absolute terms
  # above 1 degree. The mean of 3 realisations therefore scatters by at most
  # 9% (0.017) of the model: the tolerances below are more than 3.5 of those.
  b <- theta_bins(0.02, 2, n = 10, log = TRUE)
  ws <- sapply(1:3, function(s) {
    sim <- simulate_catalog(8000, n_clusters = 100, sigma = 0.2, seed = s)
    ran <- random_catalog(16000, like = sim, seed = 100 + s)
    wtheta(sim, ran, b, backend = "cpu", threads = test_threads(),
           progress = FALSE)$w
  })
  sim <- simulate_catalog(8000, n_clusters = 100, sigma = 0.2, seed = 1)
  theta <- sqrt(b[-1] * b[-length(b)])
  model <- model_wtheta(sim, theta, integral_constraint = TRUE)
  mean_w <- rowMeans(ws)
  near <- theta < 0.5
  expect_equal(mean_w[near], model[near], tolerance = 0.3)
  expect_true(all(abs(mean_w[theta > 0.9] - model[theta > 0.9]) < 0.07))
  # and the amplitude is told apart: a model with twice the parent density
  # (half the amplitude) is far off
  expect_true(all(mean_w[near] > 1.5 * model[near] / 2))
})

test_that("fixed_n = FALSE draws a stationary Thomas process of n expected points", {
  sizes <- vapply(1:20, function(i) {
    s <- simulate_catalog(2000, n_clusters = 30, fixed_n = FALSE, seed = i)
    expect_false(attr(s, "model")$fixed_n)
    expect_identical(attr(s, "model")$cluster_fraction, 0.5)
    nrow(s)
  }, 0)
  # Poisson uniform points plus Poisson-many clusters of ~33 children:
  # the mean over 20 draws lies within a few hundred of 2000
  expect_lt(abs(mean(sizes) - 2000), 4 * sd(sizes) / sqrt(20) + 50)
  expect_gt(sd(sizes), 50)           # the size varies, unlike fixed_n
  expect_error(simulate_catalog(10, fixed_n = NA), "`fixed_n` must be TRUE or FALSE")
  a <- simulate_catalog(500, fixed_n = FALSE, seed = 3)
  expect_identical(a, simulate_catalog(500, fixed_n = FALSE, seed = 3))
})
