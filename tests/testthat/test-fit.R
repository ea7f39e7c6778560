# wtheta_fit(): GLS, the Hartlap factor, units, the integral constraint,
# tomography and the methods. Validation against known truths (coverage,
# the IC on a cap, an independent minimiser) is in test-fit-validation.R.

fit_fixture <- local({
  cache <- NULL
  function() {
    if (is.null(cache)) {
      sim <- simulate_catalog(2500, ra_range = c(0, 30), dec_range = c(-15, 15),
                              n_clusters = 50, sigma = 0.3, seed = 11)
      ran <- random_catalog(5000, like = sim, seed = 12)
      w <- wtheta(sim, ran, theta_bins(0.05, 4, n = 10, log = TRUE),
                  threads = 1, error = "jackknife", n_patches = 24, seed = 1,
                  progress = FALSE)
      cache <<- list(sim = sim, ran = ran, w = w)
    }
    cache
  }
})

# the result `w` with its w replaced by `values` (the covariance kept)
with_w <- function(w, values) {
  w$w <- values
  w
}

test_that("a noiseless power law is recovered exactly, in any unit", {
  w <- fit_fixture()$w
  th <- w$theta
  exact <- with_w(w, 0.7 * th^(1 - 1.75))
  f <- wtheta_fit(exact, "power_law", hartlap = FALSE)
  expect_s3_class(f, "wtheta_fit")
  expect_equal(coef(f), c(A = 0.7, gamma = 1.75), tolerance = 1e-8)
  expect_lt(f$chi2, 1e-12)
  expect_identical(f$dof, nrow(w) - 2L)
  expect_true(f$converged)
  # the same bins in arcmin: theta in the model stays in degrees
  sim <- fit_fixture()$sim
  ran <- fit_fixture()$ran
  wa <- wtheta(sim, ran, theta_bins(3, 240, n = 10, log = TRUE,
                                    units = "arcmin"),
               threads = 1, error = "jackknife", n_patches = 24, seed = 1,
               progress = FALSE)
  expect_identical(attr(wa, "theta_units"), "arcmin")
  fa <- wtheta_fit(with_w(wa, 0.7 * (wa$theta / 60)^(1 - 1.75)), "power_law",
                   hartlap = FALSE)
  expect_equal(coef(fa), c(A = 0.7, gamma = 1.75), tolerance = 1e-8)
  expect_equal(fa$data$theta, wa$theta / 60)
  expect_identical(fa$theta_units, "arcmin")
  # theta_range is in degrees whatever the unit
  fr <- wtheta_fit(wa, "power_law", theta_range = c(0.1, 1))
  expect_equal(fr$data$theta, wa$theta[wa$theta / 60 >= 0.1 &
                                         wa$theta / 60 <= 1] / 60)
})

test_that("the GLS minimum, chi2 and parameters' covariance are textbook", {
  w <- fit_fixture()$w
  keep <- w$theta >= 0.08 & w$theta <= 2
  f <- wtheta_fit(w, "power_law", theta_range = c(0.08, 2))
  C <- attr(w, "cov")[keep, keep]
  n <- 24
  p <- sum(keep)
  h <- (n - p - 2) / (n - 1)
  expect_equal(f$hartlap, h)
  expect_identical(f$hartlap_n, 24L)
  expect_identical(f$n_bins, p)
  cf <- coef(f)
  r <- w$w[keep] - cf[["A"]] * w$theta[keep]^(1 - cf[["gamma"]])
  Psi <- h * solve(C)
  expect_equal(f$chi2, drop(t(r) %*% Psi %*% r), tolerance = 1e-10)
  expect_equal(f$p_value, pchisq(f$chi2, p - 2, lower.tail = FALSE))
  # the gradient of chi2 vanishes at the minimum
  J <- cbind(w$theta[keep]^(1 - cf[["gamma"]]),
             -cf[["A"]] * log(w$theta[keep]) *
               w$theta[keep]^(1 - cf[["gamma"]]))
  grad <- -2 * t(J) %*% Psi %*% r
  expect_lt(max(abs(grad * cf)), 1e-6 * max(1, f$chi2))
  # Percival et al. (2014), eq. 18, for n = 24 and 2 parameters
  a <- 2 / ((n - p - 1) * (n - p - 4))
  b <- (n - p - 2) / ((n - p - 1) * (n - p - 4))
  m1 <- (1 + b * (p - 2)) / (1 + a + b * 3)
  expect_equal(f$percival, m1)
  expect_equal(unname(vcov(f)), m1 * unname(solve(t(J) %*% Psi %*% J)),
               tolerance = 1e-6)
  fp <- wtheta_fit(w, "power_law", theta_range = c(0.08, 2),
                   percival = FALSE)
  expect_identical(fp$percival, 1)
  expect_equal(coef(fp), coef(f), tolerance = 1e-12)
  expect_equal(fp$chi2, f$chi2, tolerance = 1e-12)
  expect_equal(vcov(fp), vcov(f) / m1, tolerance = 1e-10)
  # Hartlap scales chi2 by h and the parameters' covariance by 1 / h
  f0 <- wtheta_fit(w, "power_law", theta_range = c(0.08, 2), hartlap = FALSE)
  expect_equal(coef(f0), coef(f), tolerance = 1e-7)
  expect_equal(f$chi2, h * f0$chi2, tolerance = 1e-9)
  expect_equal(vcov(fp), vcov(f0) / h, tolerance = 1e-6)
  expect_identical(f0$hartlap, 1)
  expect_identical(f0$hartlap_n, NA_integer_)
  expect_identical(f0$percival, 1)
  # a number of realisations given with a covariance of one's own
  fn <- wtheta_fit(w, "power_law", theta_range = c(0.08, 2),
                   cov = attr(w, "cov"), hartlap = 24)
  expect_equal(coef(fn), coef(f), tolerance = 1e-10)
  expect_equal(fn$chi2, f$chi2, tolerance = 1e-10)
  expect_identical(fn$error, "given")
})

test_that("the Hartlap factor is refused where it is not positive", {
  w <- fit_fixture()$w
  expect_error(wtheta_fit(w, hartlap = 12),
               "(12 - 10 - 2) / (12 - 1) is not positive: 10 bins fitted",
               fixed = TRUE)
  expect_error(wtheta_fit(w, hartlap = 12), "realisations")
  expect_error(wtheta_fit(w, cov = attr(w, "cov")),
               "`hartlap = TRUE` takes the number of realisations")
  expect_error(wtheta_fit(w, hartlap = 2.5), "`hartlap` must be TRUE, FALSE")
  # the Percival factor needs n > p + 4
  expect_error(wtheta_fit(w, hartlap = 14),
               "the Percival factor needs n > p + 4 (p bins fitted, n realisations behind the covariance), not n = 14 with p = 10",
               fixed = TRUE)
  f14 <- wtheta_fit(w, hartlap = 14, percival = FALSE)
  expect_equal(f14$hartlap, 2 / 13)
  expect_identical(f14$percival, 1)
  expect_error(wtheta_fit(w, percival = "yes"), "percival")
  # bootstrap: n is the number of draws
  sim <- fit_fixture()$sim
  ran <- fit_fixture()$ran
  wb <- wtheta(sim, ran, theta_bins(0.05, 4, n = 10, log = TRUE),
               threads = 1, error = "bootstrap", n_patches = 10, n_boot = 11,
               seed = 1, progress = FALSE)
  expect_error(wtheta_fit(wb), "(11 - 10 - 2) / (11 - 1) is not positive",
               fixed = TRUE)
  expect_error(wtheta_fit(wb), "11 bootstrap draws")
  fb <- wtheta_fit(wb, theta_range = c(0.05, 0.6))
  expect_identical(fb$hartlap_n, 11L)
  expect_equal(fb$hartlap, (11 - fb$n_bins - 2) / 10)
  # Poisson errors are not estimated from realisations
  wp <- wtheta(sim, ran, theta_bins(0.05, 4, n = 10, log = TRUE),
               threads = 1, progress = FALSE)
  expect_identical(wtheta_fit(wp)$hartlap, 1)
})

test_that("wtheta_fit() checks what it is given", {
  w <- fit_fixture()$w
  expect_error(wtheta_fit(data.frame(w = 1)), "`w` must be a result of")
  expect_error(wtheta_fit(w, "exponential"), "`model` must be \"power_law\"")
  expect_error(wtheta_fit(w, theta_range = c(2, 1)), "`theta_range` must be")
  expect_error(wtheta_fit(w, theta_range = c(0.05, 0.07)),
               "1 bin\\(s\\) for 2 parameters")
  expect_error(wtheta_fit(w, cov = diag(3), hartlap = FALSE),
               "`cov` must be a 10 x 10 numeric matrix")
  expect_error(wtheta_fit(w, function(theta, p) p[1] * theta),
               "a model function needs `start`")
  expect_error(wtheta_fit(w, start = c(A = 1)), "`start` must be a named")
  expect_error(wtheta_fit(w, ic = attr(w, "pair_counts")$DR),
               "auto pairs of the randoms")
  # RR of the result stops at 4 degrees: pairs beyond are missing
  expect_error(wtheta_fit(w, ic = attr(w, "pair_counts")$RR),
               "pair\\(s\\) outside its bins")
  bad <- w
  bad$w[3] <- NA
  expect_error(wtheta_fit(bad), "w is NA in row\\(s\\) 3")
  expect_error(wtheta_fit(w, tomography = "bias"),
               "`tomography` is for wtheta_multi\\(\\) results")
})

test_that("a model function, and the Thomas model of a simulated catalog", {
  fx <- fit_fixture()
  w <- fx$w
  th <- w$theta
  truth <- c(a = 2, s = 0.4)
  fun <- function(theta, p) p[["a"]] * exp(-theta / p[["s"]])
  f <- wtheta_fit(with_w(w, fun(th, truth)), fun, start = c(a = 1, s = 1),
                  hartlap = FALSE)
  expect_equal(coef(f), truth, tolerance = 1e-8)
  # the catalog's model: the start is its truth, the shape model_wtheta()'s
  m <- attr(fx$sim, "model")
  a_true <- m$cluster_fraction^2 / (4 * pi * m$sigma^2 * m$parent_density)
  exact <- with_w(w, model_wtheta(fx$sim, th))
  ft <- wtheta_fit(exact, fx$sim)
  expect_equal(coef(ft), c(A = a_true, sigma = m$sigma), tolerance = 1e-8)
  expect_equal(wtheta_fit(exact, "thomas")$coefficients, coef(ft),
               tolerance = 1e-6)
})

mid_of <- function(pc) (pc$edges[-1] + pc$edges[-length(pc$edges)]) / 2

test_that("the integral constraint is the RR-weighted mean of the model", {
  fx <- fit_fixture()
  rr <- ic_counts(fx$ran, n_bins = 40, threads = 1)
  expect_identical(rr$n_outside, 0)
  expect_equal(sum(rr$counts), choose(5000, 2))
  expect_identical(rr$ic_subset, list(n = 5000L, n_total = 5000L))
  expect_equal(max(rr$edges), wtheta:::max_separation_bound(fx$ran$ra,
                                                           fx$ran$dec))
  # the box's diagonal is about 42 degrees; the bound twice the farthest
  # point from the mean direction, just above it
  expect_gt(max(rr$edges), 41.5)
  expect_lt(max(rr$edges), 43)
  mid <- (rr$edges[-1] + rr$edges[-41]) / 2
  C18 <- sum(rr$counts * mid^(1 - 1.8)) / sum(rr$counts)
  expect_equal(integral_constraint(rr, "power_law", gamma = 1.8), C18)
  expect_equal(integral_constraint(rr, "power_law", gamma = 1.8, A = 3),
               3 * C18)
  expect_equal(integral_constraint(rr, function(t, k) t^k, k = -0.8), C18)
  expect_equal(integral_constraint(rr, "thomas", A = 2, sigma = 0.5),
               sum(rr$counts * 2 * exp(-mid^2 / 1)) / sum(rr$counts))
  expect_error(integral_constraint(rr, "power_law"), "`gamma`")
  expect_error(integral_constraint(rr, "power_law", gamma = 1.8, s = 1),
               "`s`, which `power_law` does not take")
  # log-spaced RR bins (none of these 200 points is within 1e-4 degree
  # of another): geometric centres
  lb <- theta_bins(1e-4, 60, n = 30, log = TRUE)
  rlog <- pair_counts(fx$ran[1:200, ], bins = lb, threads = 1)
  expect_identical(rlog$n_outside, 0)
  geo <- sqrt(lb[-1] * lb[-31])
  expect_equal(integral_constraint(rlog, "power_law", gamma = 1.8),
               sum(rlog$counts * geo^-0.8) / sum(rlog$counts))
  rcut <- pair_counts(fx$ran[1:200, ], bins = theta_bins(0.5, 60, n = 30),
                      threads = 1)
  expect_error(integral_constraint(rcut, "power_law", gamma = 1.8),
               "below the first edge")
  # a subset when there are more randoms than n_max, seeded
  s1 <- ic_counts(fx$ran, n_max = 1000, seed = 5, threads = 1)
  s2 <- ic_counts(fx$ran, n_max = 1000, seed = 5, threads = 1)
  expect_identical(s1$counts, s2$counts)
  expect_identical(s1$ic_subset, list(n = 1000L, n_total = 5000L))
  expect_equal(sum(s1$counts), choose(1000, 2))
  # weights: the weighted counts
  wt <- runif(5000, 0.5, 1.5)
  sw <- ic_counts(fx$ran, weights = wt, threads = 1)
  expect_equal(integral_constraint(sw, function(t) t),
               sum(sw$weighted * mid_of(sw)) / sum(sw$weighted))
})

test_that("the fit with an IC subtracts C[m] at the fitted parameters", {
  fx <- fit_fixture()
  w <- fx$w
  rr <- ic_counts(fx$ran, threads = 1)
  C <- integral_constraint(rr, "power_law", gamma = 1.7)
  exact <- with_w(w, 0.9 * (w$theta^(1 - 1.7) - C))
  f <- wtheta_fit(exact, "power_law", ic = rr, hartlap = FALSE)
  expect_equal(coef(f), c(A = 0.9, gamma = 1.7), tolerance = 1e-8)
  expect_equal(f$ic, 0.9 * C, tolerance = 1e-8)
  expect_equal(predict(f, 1, ic = FALSE), 0.9, tolerance = 1e-8)
  expect_equal(predict(f, 1), 0.9 * (1 - C), tolerance = 1e-8)
  # without the IC the same data give another (biased) amplitude
  f0 <- wtheta_fit(exact, "power_law", hartlap = FALSE)
  expect_gt(abs(coef(f0)[["A"]] - 0.9), 1e-3)
})

test_that("the methods follow lm and nls conventions", {
  w <- fit_fixture()$w
  f <- wtheta_fit(w, "thomas", theta_range = c(0.05, 2))
  cf <- coef(f)
  se <- sqrt(diag(vcov(f)))
  ci <- confint(f, level = 0.68)
  expect_identical(colnames(ci), c("16 %", "84 %"))
  expect_equal(ci[, 1], cf - qnorm(0.84) * se)
  expect_equal(ci[, 2], cf + qnorm(0.84) * se)
  expect_equal(confint(f, "sigma"), confint(f)[2, , drop = FALSE])
  expect_error(confint(f, "gamma"), "`parm` must name")
  expect_equal(predict(f), fitted(f))
  expect_equal(predict(f, c(0.1, 0.5)),
               cf[["A"]] * exp(-c(0.1, 0.5)^2 / (4 * cf[["sigma"]]^2)))
  expect_equal(predict(f, data.frame(theta = 0.2)), predict(f, 0.2))
  expect_equal(residuals(f), f$data$w - fitted(f))
  # the Gaussian log-likelihood written out
  C <- f$cov / f$hartlap
  r <- residuals(f)
  ll <- -0.5 * (length(r) * log(2 * pi) + log(det(C)) +
                  drop(t(r) %*% solve(C) %*% r))
  expect_equal(as.numeric(logLik(f)), ll, tolerance = 1e-8)
  expect_identical(attr(logLik(f), "df"), 2L)
  expect_identical(nobs(f), f$n_bins)
  expect_equal(AIC(f), -2 * ll + 4, tolerance = 1e-8)
  s <- summary(f)
  expect_equal(s$coefficients[, "Std. Error"], se)
  expect_equal(s$coefficients[, "z value"], cf / se)
  out <- capture.output(print(f))
  expect_match(out[1], "thomas: w = A exp(-theta^2 / (4 sigma^2))",
               fixed = TRUE)
  expect_match(out[2], "jackknife covariance, Hartlap factor")
  expect_match(out[length(out)], "^chi2 = .* on 6 degrees of freedom")
  expect_output(print(s), "Correlation of the coefficients")
  pdf(NULL)
  on.exit(dev.off())
  expect_identical(plot(f), f)
})

test_that("a wtheta_multi result is fitted per correlation or with biases", {
  ran <- random_catalog(4000, ra_range = c(0, 30), dec_range = c(-15, 15),
                        seed = 31)
  z <- list(z1 = simulate_catalog(1500, ra_range = c(0, 30),
                                  dec_range = c(-15, 15), n_clusters = 40,
                                  seed = 32),
            z2 = simulate_catalog(1500, ra_range = c(0, 30),
                                  dec_range = c(-15, 15), n_clusters = 40,
                                  seed = 33))
  tomo <- wtheta_multi(z, ran, theta_bins(0.05, 4, n = 6, log = TRUE),
                       error = "jackknife", n_patches = 30, seed = 1,
                       threads = 1, progress = FALSE)
  each <- wtheta_fit(tomo, "power_law")
  expect_s3_class(each, "wtheta_fit_list")
  expect_identical(names(each), c("z1-z1", "z1-z2", "z2-z2"))
  one <- wtheta_fit(attr(tomo, "entries")[["z1-z2"]], "power_law")
  expect_equal(coef(each[["z1-z2"]]), coef(one))
  expect_equal(each[["z1-z2"]]$chi2, one$chi2)
  expect_identical(dim(coef(each)), c(3L, 2L))
  expect_output(print(each), "3 fits, one per correlation")
  # biases: w_ij = b_i b_j theta^(1 - gamma), exactly
  b <- c(z1 = 1.3, z2 = 0.8)
  exact <- tomo
  exact$w <- b[as.character(tomo$i)] * b[as.character(tomo$j)] *
    tomo$theta^(1 - 1.8)
  fb <- wtheta_fit(exact, "power_law", tomography = "bias", hartlap = FALSE)
  expect_equal(coef(fb), c(b_z1 = 1.3, b_z2 = 0.8, gamma = 1.8),
               tolerance = 1e-8)
  expect_identical(fb$n_bins, 18L)
  expect_identical(fb$dof, 15L)
  # the same with the shape averaged over each bin's pairs (integrate())
  avg <- vapply(seq_len(nrow(tomo)), function(k) {
    lo <- tomo$theta_lo[k]
    hi <- tomo$theta_hi[k]
    stats::integrate(function(t) t^(1 - 1.8) * sinpi(t / 180), lo, hi,
                     rel.tol = 1e-12)$value /
      stats::integrate(function(t) sinpi(t / 180), lo, hi,
                       rel.tol = 1e-12)$value
  }, 0)
  exact_avg <- exact
  exact_avg$w <- b[as.character(tomo$i)] * b[as.character(tomo$j)] * avg
  fa <- wtheta_fit(exact_avg, "power_law", tomography = "bias",
                   hartlap = FALSE, bin_average = TRUE)
  expect_equal(coef(fa), c(b_z1 = 1.3, b_z2 = 0.8, gamma = 1.8),
               tolerance = 1e-7)
  ea <- wtheta_fit(exact_avg, "power_law", hartlap = FALSE,
                   bin_average = TRUE)
  expect_true(all(vapply(ea, function(f) f$bin_average, NA)))
  expect_equal(unname(coef(ea)[, "gamma"]), rep(1.8, 3), tolerance = 1e-7)
  # the joint covariance, with the Hartlap factor of all 18 rows
  fj <- wtheta_fit(tomo, "power_law", tomography = "bias")
  expect_equal(fj$hartlap, (30 - 18 - 2) / 29)
  expect_equal(fj$cov, unname(attr(tomo, "cov")))
  expect_identical(levels(fj$data$i), c("z1", "z2"))
  expect_output(print(fj), "bias per sample")
  pdf(NULL)
  on.exit(dev.off())
  expect_identical(plot(fj), fj)
  expect_error(wtheta_fit(tomo, tomography = "both"), "`tomography` must be")
})
