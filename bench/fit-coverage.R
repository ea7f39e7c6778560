# The coverage of wtheta_fit()'s intervals on simulated Thomas catalogs
# (issue 36's validation): over many seeds, how often the 68% intervals
# (confint(fit, level = 0.68)) hold the true A and sigma of the catalogs'
# Thomas model, and how far the fits fall from it (z = (fit - truth) /
# std. error), with the binomial error of each coverage.
#
#   Rscript bench/fit-coverage.R [SEEDS] [N] [CLUSTERS] [PATCHES] [CSV]
#
# SEEDS catalogs (default 400) of N points expected (1500), a stationary
# Thomas process (fixed_n = FALSE) with CLUSTERS clusters (40) of sigma
# 0.4 degrees and half the points in clusters, on a 30 x 30 degree box;
# 2 N randoms each; w in 8 log bins from 0.1 to 2 degrees with a
# jackknife of PATCHES patches (25). The fits, all with the Thomas model
# and the integral constraint (ic_counts() of 20,000 randoms on the box):
#
#   default       the catalog's own jackknife covariance, bin_average = TRUE,
#                 Hartlap and Percival factors (wtheta_fit()'s defaults
#                 but bin_average)
#   centres       the same, the model at the bins' centres (bin_average =
#                 FALSE)
#   no_ic         the same as default, without the integral constraint
#   no_percival   the same as default, percival = FALSE
#   no_hartlap    the same as default, hartlap = FALSE (no factor at all)
#   other_jk      the jackknife covariance of the next catalog (as noisy as
#                 the catalog's own, but independent of its w)
#   mock_cov      the covariance of w over all SEEDS catalogs (the
#                 covariance of mocks), hartlap = SEEDS
#
# It prints, first, the mean w over the catalogs against the true model
# less its IC, averaged over each bin (z in units of the standard error of
# the mean), then per fit the coverage of A and sigma (and its binomial
# standard error), the mean z (and its standard error) and the standard
# deviation of z. With CSV, the table is written there too. Everything
# runs on one thread; 400 catalogs of 1500 points take well under a
# minute, 200 of 24,000 a few minutes. The figures are coverages, not
# timings: any machine gives the same (the catalogs are seeded).

suppressPackageStartupMessages(library(wtheta))
args <- commandArgs(trailingOnly = TRUE)
arg <- function(k, default) if (length(args) >= k) args[[k]] else default
n_seeds <- as.integer(arg(1, 400))
n_pts <- as.numeric(arg(2, 1500))
n_cl <- as.numeric(arg(3, 40))
n_patch <- as.integer(arg(4, 25))
csv <- arg(5, "")

box_ra <- c(0, 30)
box_dec <- c(-15, 15)
sigma <- 0.4
bins <- theta_bins(0.1, 2, n = 8, log = TRUE)
ic <- ic_counts(random_catalog(20000, ra_range = box_ra, dec_range = box_dec,
                               seed = 1), threads = 1)

runs <- lapply(seq_len(n_seeds), function(i) {
  s <- simulate_catalog(n_pts, ra_range = box_ra, dec_range = box_dec,
                        n_clusters = n_cl, sigma = sigma, fixed_n = FALSE,
                        seed = 1000 + i)
  r <- random_catalog(2 * n_pts, like = s, seed = 50000 + i)
  w <- wtheta(s, r, bins, error = "jackknife", n_patches = n_patch, seed = i,
              threads = 1, progress = FALSE)
  list(model = attr(s, "model"), w = w)
})
m <- runs[[1]]$model
truth <- c(A = m$cluster_fraction^2 / (4 * pi * m$sigma^2 * m$parent_density),
           sigma = m$sigma)
W <- t(vapply(runs, function(r) r$w$w, numeric(nrow(runs[[1]]$w))))
mock_cov <- stats::cov(W)

# the mean w against the truth: the true model less its IC, averaged over
# each bin (a fit at the truth evaluates it so)
# (bins in degrees; the quadrature of wtheta_fit(bin_average = TRUE))
w1 <- runs[[1]]$w
at <- wtheta:::model_at_rows(list(theta = w1$theta, lo = w1$theta_lo,
                                  hi = w1$theta_hi), TRUE)
ic_true <- integral_constraint(ic, "thomas", A = truth[["A"]],
                               sigma = truth[["sigma"]])
model_avg <- at(function(t) truth[["A"]] * exp(-t^2 / (4 * sigma^2))) -
  ic_true
cat(sprintf("%d catalogs of %g points, %g clusters, %d patches; truth A = %.4g, sigma = %g, IC = %.3g\n",
            n_seeds, n_pts, n_cl, n_patch, truth[["A"]], truth[["sigma"]],
            ic_true))
print(data.frame(theta = w1$theta, mean_w = colMeans(W),
                 model_less_ic = model_avg,
                 z = (colMeans(W) - model_avg) /
                   sqrt(diag(mock_cov) / n_seeds),
                 sd_mocks = sqrt(diag(mock_cov)),
                 sd_jackknife = sqrt(colMeans(t(vapply(runs, function(r)
                   diag(attr(r$w, "cov")), numeric(ncol(W))))))),
      digits = 4, row.names = FALSE)

fits <- list(
  default = function(w, k) wtheta_fit(w, "thomas", ic = ic, start = truth,
                                      bin_average = TRUE),
  centres = function(w, k) wtheta_fit(w, "thomas", ic = ic, start = truth),
  no_ic = function(w, k) wtheta_fit(w, "thomas", start = truth,
                                    bin_average = TRUE),
  no_percival = function(w, k) wtheta_fit(w, "thomas", ic = ic,
                                          start = truth, bin_average = TRUE,
                                          percival = FALSE),
  no_hartlap = function(w, k) wtheta_fit(w, "thomas", ic = ic, start = truth,
                                         bin_average = TRUE, hartlap = FALSE),
  other_jk = function(w, k) {
    other <- runs[[k %% n_seeds + 1L]]$w
    wtheta_fit(w, "thomas", ic = ic, start = truth, bin_average = TRUE,
               cov = attr(other, "cov"), hartlap = n_patch)
  },
  mock_cov = function(w, k) wtheta_fit(w, "thomas", ic = ic, start = truth,
                                       bin_average = TRUE, cov = mock_cov,
                                       hartlap = n_seeds))

rows <- lapply(names(fits), function(nm) {
  z <- t(vapply(seq_len(n_seeds), function(k) {
    f <- tryCatch(fits[[nm]](runs[[k]]$w, k), error = function(e) NULL,
                  warning = function(e) NULL)
    if (is.null(f)) return(c(NA_real_, NA_real_))
    (coef(f) - truth) / sqrt(diag(vcov(f)))
  }, numeric(2)))
  ok <- stats::complete.cases(z)
  z <- z[ok, , drop = FALSE]
  n <- nrow(z)
  cover <- colMeans(abs(z) <= stats::qnorm(0.84))
  data.frame(fit = nm, n = n, failed = sum(!ok),
             cover_A = cover[[1]], cover_sigma = cover[[2]],
             se_cover = sqrt(0.68 * 0.32 / n),
             z_A = mean(z[, 1]), z_sigma = mean(z[, 2]),
             se_z_A = stats::sd(z[, 1]) / sqrt(n),
             se_z_sigma = stats::sd(z[, 2]) / sqrt(n),
             sd_z_A = stats::sd(z[, 1]), sd_z_sigma = stats::sd(z[, 2]))
})
tab <- do.call(rbind, rows)
print(tab, digits = 3, row.names = FALSE)
if (nzchar(csv)) utils::write.csv(tab, csv, row.names = FALSE)
