# wtheta_fit() against known truths: the coverage of its intervals, the
# integral constraint against a quadrature over a spherical cap, and the
# GLS minimum against an independent minimiser on the reference catalogs.

test_that("68% intervals cover the truth in 68% of mock measurements", {
  # mock w vectors drawn from a known multivariate normal around a power
  # law, with the correlated covariance of log bins; fitted with that
  # covariance, the intervals must cover at their nominal rate
  theta <- exp(seq(log(0.05), log(3), length.out = 10))
  truth <- c(A = 0.4, gamma = 1.75)
  mu <- truth[["A"]] * theta^(1 - truth[["gamma"]])
  sd <- 0.15 * mu
  rho <- 0.6^abs(outer(seq_along(theta), seq_along(theta), "-"))
  C <- rho * outer(sd, sd)
  L <- t(chol(C))
  template <- structure(data.frame(theta = theta, w = mu),
                        class = c("wtheta", "data.frame"), cov = C,
                        error = "jackknife", theta_units = "deg")
  n_mock <- 400
  set.seed(2024)
  hits <- matrix(NA, n_mock, 2, dimnames = list(NULL, names(truth)))
  chi2 <- numeric(n_mock)
  for (k in seq_len(n_mock)) {
    m <- template
    m$w <- mu + drop(L %*% rnorm(length(theta)))
    f <- wtheta_fit(m, "power_law", hartlap = FALSE)
    ci <- confint(f, level = 0.68)
    hits[k, ] <- ci[, 1] <= truth & truth <= ci[, 2]
    chi2[k] <- f$chi2
  }
  # binomial standard error of a 68% rate over 400 draws: 0.023
  cover <- colMeans(hits)
  expect_true(all(abs(cover - 0.68) < 0.07), info = paste(cover,
                                                          collapse = " "))
  # chi2 follows its distribution on 8 degrees of freedom (mean 8, sd 4)
  expect_lt(abs(mean(chi2) - 8), 3 * 4 / sqrt(n_mock))
})

test_that("a simulated Thomas catalog's fit covers its true model", {
  # one catalog end to end: jackknife w, the randoms' RR for the IC, and
  # the Thomas model of the catalog; a stationary process (fixed_n =
  # FALSE), whose jackknife errors match its scatter
  sim <- simulate_catalog(3000, ra_range = c(0, 30), dec_range = c(-15, 15),
                          n_clusters = 60, sigma = 0.3, fixed_n = FALSE,
                          seed = 7)
  ran <- random_catalog(6000, like = sim, seed = 8)
  w <- wtheta(sim, ran, theta_bins(0.05, 2, n = 9, log = TRUE), threads = 1,
              error = "jackknife", n_patches = 25, seed = 9, progress = FALSE)
  f <- wtheta_fit(w, sim, ic = ic_counts(ran, threads = 1))
  m <- attr(sim, "model")
  truth <- c(A = m$cluster_fraction^2 /
               (4 * pi * m$sigma^2 * m$parent_density), sigma = m$sigma)
  z <- (coef(f) - truth) / sqrt(diag(vcov(f)))
  expect_true(all(abs(z) < 3), info = paste(format(z), collapse = " "))
  expect_gt(f$p_value, 0.001)
  # the IC of the true model on these randoms is the first-order one
  # model_wtheta() subtracts, f^2 / (n_p A), less a few percent (the
  # clusters' pairs that the footprint's edges cut)
  ic_true <- integral_constraint(ic_counts(ran, threads = 1), "thomas",
                                 A = truth[["A"]], sigma = truth[["sigma"]])
  ic_first <- m$cluster_fraction^2 /
    (m$parent_density * attr(sim, "footprint")$area)
  expect_lt(ic_true, ic_first)
  expect_gt(ic_true, 0.95 * ic_first)
  # the IC at the fit, within its parameters' errors of the true one
  expect_equal(f$ic, ic_true, tolerance = 0.3)
})

test_that("over 100 simulated Thomas catalogs 68% intervals cover the truth", {
  # a fast version of bench/fit-coverage.R (its second configuration):
  # stationary Thomas catalogs of 1500 points in 160 clusters (6 a patch),
  # each fitted with its own 25-patch jackknife covariance, the IC and the
  # model averaged over the bins; and with the covariance of w over the
  # catalogs, as from mocks. (bench/fit-coverage.R, 400 catalogs: 68.5%
  # and 69.8% with the jackknife, 67.0% and 67.5% with the mocks'.)
  bins <- theta_bins(0.1, 2, n = 8, log = TRUE)
  ic <- ic_counts(random_catalog(20000, ra_range = c(0, 30),
                                 dec_range = c(-15, 15), seed = 1),
                  threads = 1)
  runs <- lapply(1:100, function(i) {
    s <- simulate_catalog(1500, ra_range = c(0, 30), dec_range = c(-15, 15),
                          n_clusters = 160, sigma = 0.4, fixed_n = FALSE,
                          seed = 300 + i)
    r <- random_catalog(3000, like = s, seed = 600 + i)
    list(s = s, w = wtheta(s, r, bins, error = "jackknife", n_patches = 25,
                           seed = i, threads = 1, progress = FALSE))
  })
  m <- attr(runs[[1]]$s, "model")
  truth <- c(A = m$cluster_fraction^2 /
               (4 * pi * m$sigma^2 * m$parent_density), sigma = m$sigma)
  mocks <- stats::cov(t(vapply(runs, function(r) r$w$w, numeric(8))))
  z_of <- function(...) t(vapply(runs, function(r) {
    f <- wtheta_fit(r$w, r$s, ic = ic, bin_average = TRUE, ...)
    (coef(f) - truth) / sqrt(diag(vcov(f)))
  }, numeric(2)))
  z <- list(jackknife = z_of(), mocks = z_of(cov = mocks, hartlap = 100),
            no_hartlap = z_of(hartlap = FALSE))
  cover <- sapply(z, function(x) colMeans(abs(x) <= stats::qnorm(0.84)))
  # the binomial standard error of a 68% rate over 100 catalogs: 0.047
  expect_true(all(abs(cover[, c("jackknife", "mocks")] - 0.68) < 0.12),
              info = paste(format(cover), collapse = " "))
  # the standard error of a mean z: 0.1
  zbar <- sapply(z, colMeans)
  expect_true(all(abs(zbar[, c("jackknife", "mocks")]) < 0.35),
              info = paste(format(zbar), collapse = " "))
  expect_true(all(abs(apply(z$mocks, 2, stats::sd) - 1) < 0.2))
  # without the Hartlap (and so Percival) factors the errors are too small
  expect_true(all(cover[, "no_hartlap"] < cover[, "jackknife"] - 0.05),
              info = paste(format(cover), collapse = " "))
})

test_that("bin_average fits the model averaged over the bins' pairs", {
  # w exactly the Thomas model averaged over each bin with the pairs'
  # density sin(theta) (by integrate(), not the fit's quadrature): the fit
  # with bin_average = TRUE finds the truth; at the bins' centres sigma is
  # off by far more than the quadrature's error
  truth <- c(A = 0.7, sigma = 0.3)
  edges <- theta_bins(0.05, 2, n = 6, log = TRUE)
  f <- function(t) truth[["A"]] * exp(-t^2 / (4 * truth[["sigma"]]^2))
  avg <- vapply(1:6, function(k) {
    num <- stats::integrate(function(t) f(t) * sinpi(t / 180), edges[k],
                            edges[k + 1], rel.tol = 1e-12)$value
    num / stats::integrate(function(t) sinpi(t / 180), edges[k],
                           edges[k + 1], rel.tol = 1e-12)$value
  }, 0)
  theta <- sqrt(edges[-1] * edges[-7])
  C <- diag((0.05 * avg + 1e-3)^2)
  exact <- structure(data.frame(theta_lo = edges[-7], theta_hi = edges[-1],
                                theta = theta, w = avg),
                     class = c("wtheta", "data.frame"), cov = C,
                     error = "jackknife", theta_units = "deg")
  fa <- wtheta_fit(exact, "thomas", hartlap = FALSE, bin_average = TRUE,
                   start = c(A = 1, sigma = 0.2))
  expect_equal(coef(fa), truth, tolerance = 1e-7)
  expect_lt(fa$chi2, 1e-10)
  expect_equal(fitted(fa), avg, tolerance = 1e-9)
  expect_true(fa$bin_average)
  # predict() stays the model at the angles given
  expect_equal(predict(fa, c(0.1, 0.5)), f(c(0.1, 0.5)), tolerance = 1e-7)
  fc <- wtheta_fit(exact, "thomas", hartlap = FALSE,
                   start = c(A = 1, sigma = 0.2))
  expect_gt(abs(coef(fc)[["sigma"]] / truth[["sigma"]] - 1), 0.01)
  expect_gt(fc$chi2, 1)
  # the power law over bins from 0: the singular end is integrable
  pl <- exact
  e0 <- c(0, edges[-1])
  pl$theta_lo <- e0[-7]
  pl$w <- vapply(1:6, function(k) {
    stats::integrate(function(t) 0.4 * t^-0.8 * sinpi(t / 180), e0[k],
                     e0[k + 1], rel.tol = 1e-12)$value /
      stats::integrate(function(t) sinpi(t / 180), e0[k], e0[k + 1],
                       rel.tol = 1e-12)$value
  }, 0)
  attr(pl, "cov") <- diag((0.05 * pl$w)^2)
  fp <- wtheta_fit(pl, "power_law", hartlap = FALSE, bin_average = TRUE)
  expect_equal(unname(coef(fp)), c(0.4, 1.8), tolerance = 1e-4)
  # a result without the bins' edges
  bare <- exact[, c("theta", "w")]
  attributes(bare)[c("cov", "error", "theta_units")] <-
    attributes(exact)[c("cov", "error", "theta_units")]
  class(bare) <- class(exact)
  expect_error(wtheta_fit(bare, "thomas", bin_average = TRUE,
                          hartlap = FALSE),
               "`bin_average = TRUE` needs the bins' edges")
  expect_error(wtheta_fit(exact, bin_average = NA), "bin_average")
})

# the pair-separation density of points uniform on a cap of radius R
# (radians) at separation t: sin(t) times the share of the circle of radius
# t around a point at r from the centre that lies inside the cap, averaged
# over the cap (unnormalised)
cap_pair_density <- function(t, R) {
  vapply(t, function(tt) {
    inner <- function(r) {
      x <- (cos(R) - cos(r) * cos(tt)) / (sin(r) * sin(tt))
      sin(r) * acos(pmin(1, pmax(-1, x))) / pi
    }
    sin(tt) * stats::integrate(inner, 0, R, rel.tol = 1e-10,
                               subdivisions = 1000L)$value
  }, 0)
}

test_that("the integral constraint matches a quadrature over a spherical cap", {
  # the cap of radius 10 degrees around the pole is the box dec 80..90
  R <- 10 * pi / 180
  ran <- random_catalog(20000, ra_range = c(0, 360), dec_range = c(80, 90),
                        seed = 77)
  rr <- ic_counts(ran, n_bins = 60, threads = test_threads())
  expect_identical(rr$n_outside, 0)
  expect_equal(max(rr$edges), 20, tolerance = 0.01)
  # the same bins holding the exact pair density instead of counts: the
  # sum's own (midpoint rule) error, without Monte Carlo noise
  e <- rr$edges * pi / 180
  exact <- rr
  exact$counts <- vapply(seq_len(60), function(k) {
    stats::integrate(function(t) cap_pair_density(t, R), e[k], e[k + 1],
                     rel.tol = 1e-8)$value
  }, 0)
  den <- sum(exact$counts)
  for (gamma in c(1.5, 1.8, 2.2)) {
    num <- stats::integrate(function(t) cap_pair_density(t, R) *
                              (t * 180 / pi)^(1 - gamma), 0, 2 * R,
                            rel.tol = 1e-8)$value
    # a midpoint rule: 0.04% and 0.08% off for gamma 1.5 and 1.8, 0.7% for
    # 2.2, whose integrand near theta = 0 goes as theta^(2 - gamma)
    expect_equal(integral_constraint(exact, "power_law", gamma = gamma),
                 num / den, tolerance = if (gamma < 2) 0.002 else 0.01,
                 info = paste("gamma", gamma))
    # the counts of 20,000 random points: a Monte Carlo error of about
    # 0.3% besides
    expect_equal(integral_constraint(rr, "power_law", gamma = gamma),
                 num / den, tolerance = 0.015, info = paste("gamma", gamma))
  }
  # the mean separation of the pairs
  mean_t <- stats::integrate(function(t) cap_pair_density(t, R) * t * 180 / pi,
                             0, 2 * R)$value / den
  expect_equal(integral_constraint(exact, function(t) t), mean_t,
               tolerance = 1e-4)
  expect_equal(integral_constraint(rr, function(t) t), mean_t,
               tolerance = 0.005)
})

test_that("the GLS minimum agrees with an independent minimiser on real data", {
  D <- read_catalog(shared_data("data_100k_arcmin.txt"), units = "arcmin")
  R <- read_catalog(shared_data("flat_100k_arcmin.txt"), units = "arcmin")
  # a fifth of each catalog keeps the test to a few seconds
  D <- D[seq(1, nrow(D), by = 5), ]
  R <- R[seq(1, nrow(R), by = 5), ]
  w <- wtheta(D, R, theta_bins(0.05, 5, n = 10, log = TRUE),
              threads = test_threads(), error = "jackknife", n_patches = 30,
              seed = 1, check_footprint = FALSE, progress = FALSE)
  f <- wtheta_fit(w, "power_law")
  # chi2 written directly, minimised by optim from another start, then
  # polished by nlm
  C <- attr(w, "cov")
  h <- (30 - 10 - 2) / (30 - 1)
  Psi <- h * solve(C)
  chi2 <- function(p) {
    r <- w$w - p[1] * w$theta^(1 - p[2])
    drop(t(r) %*% Psi %*% r)
  }
  o <- stats::optim(c(1, 1.5), chi2, method = "BFGS",
                    control = list(reltol = 1e-15, maxit = 10000))
  o <- stats::optim(o$par, chi2, method = "Nelder-Mead",
                    control = list(reltol = 1e-15, maxit = 10000))
  n <- stats::nlm(chi2, o$par, gradtol = 1e-12, steptol = 1e-14,
                  typsize = abs(o$par))
  expect_equal(unname(coef(f)), n$estimate, tolerance = 1e-6)
  expect_equal(f$chi2, n$minimum, tolerance = 1e-9)
  expect_lte(f$chi2, n$minimum * (1 + 1e-12))
})
