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

test_that("over 60 simulated Thomas catalogs the fits are as ?wtheta_fit says", {
  # the numbers quoted in ?wtheta_fit (Validation): with a jackknife
  # covariance from the same catalog the fits fall a little low and their
  # 68% intervals cover the truth in 62% (A) and 53% (sigma) of catalogs
  vb <- theta_bins(0.1, 2, n = 8, log = TRUE)
  # the Thomas model averaged over each bin's pairs (density sin theta)
  x <- vapply(1:8, function(k) seq(vb[k], vb[k + 1], length.out = 41),
              numeric(41))
  pw <- sin(x * pi / 180)
  # (at the bins' centres `centres`; the plain model elsewhere, for the IC)
  averaged <- function(centres) function(theta, p) {
    k <- match(theta, centres)
    out <- p[["A"]] * exp(-theta^2 / (4 * p[["sigma"]]^2))
    inside <- !is.na(k)
    if (any(inside)) {
      mx <- p[["A"]] * exp(-x^2 / (4 * p[["sigma"]]^2))
      out[inside] <- (colSums(mx * pw) / colSums(pw))[k[inside]]
    }
    out
  }
  res <- t(vapply(1:60, function(i) {
    s <- simulate_catalog(1500, ra_range = c(0, 30), dec_range = c(-15, 15),
                          n_clusters = 40, sigma = 0.4, fixed_n = FALSE,
                          seed = 100 + i)
    r <- random_catalog(3000, like = s, seed = 200 + i)
    w <- wtheta(s, r, vb, error = "jackknife", n_patches = 25, seed = i,
                threads = 1, progress = FALSE)
    f <- wtheta_fit(w, s, ic = ic_counts(r, threads = 1))
    m <- attr(s, "model")
    truth <- c(A = m$cluster_fraction^2 /
                 (4 * pi * m$sigma^2 * m$parent_density), sigma = m$sigma)
    ci <- confint(f, level = 0.68)
    fa <- wtheta_fit(w, averaged(w$theta), ic = ic_counts(r, threads = 1),
                     start = coef(f))
    c(ci[, 1] <= truth & truth <= ci[, 2],
      (coef(f) - truth) / sqrt(diag(vcov(f))),
      (coef(fa) - truth) / sqrt(diag(vcov(fa))))
  }, numeric(6)))
  cover <- colMeans(res[, 1:2])
  z <- res[, 3:4]
  expect_equal(unname(cover), c(0.62, 0.53), tolerance = 0.15)
  expect_equal(unname(colMeans(z)), c(-0.5, -0.9), tolerance = 0.3)
  expect_true(all(apply(z, 2, sd) > 0.9 & apply(z, 2, sd) < 1.7))
  # averaged over the bins: less far below, sigma most of all
  za <- colMeans(res[, 5:6])
  expect_equal(unname(za), c(-0.4, -0.5), tolerance = 0.3)
  expect_gt(za[2], colMeans(z)[2] + 0.2)
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
