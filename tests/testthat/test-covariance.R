test_that("wtheta_cov is a classed matrix that plots its correlations", {
  sim <- simulate_catalog(600, n_clusters = 10, sigma = 0.3, seed = 21)
  ran <- random_catalog(900, like = sim, seed = 22)
  w <- wtheta(sim, ran, theta_bins(0.05, 5, n = 6, log = TRUE), threads = 1,
              error = "jackknife", n_patches = 8, seed = 1, progress = FALSE)
  cv <- wtheta_cov(w)
  expect_s3_class(cv, "wtheta_cov")
  expect_true(is.matrix(cv))
  expect_identical(attr(cv, "edges"), attr(w, "edges"))
  expect_identical(attr(cv, "error"), "jackknife")
  expect_identical(as.matrix(cv), attr(w, "cov"))
  expect_identical(cv[2:3, 2:3], attr(w, "cov")[2:3, 2:3])
  expect_match(capture.output(print(cv))[1], "6 x 6 covariance", fixed = TRUE)
  pdf(NULL)
  on.exit(dev.off())
  r <- plot(cv)
  expect_equal(unname(r), unname(stats::cov2cor(attr(w, "cov"))))
  # a bin without variance is grey, not an error
  attr(w, "cov")[1, ] <- attr(w, "cov")[, 1] <- 0
  r <- plot(wtheta_cov(w))
  expect_true(all(is.na(r[1, ])))
})

test_that("jackknife and bootstrap errors are reproducible by default", {
  sim <- simulate_catalog(600, n_clusters = 10, sigma = 0.3, seed = 21)
  ran <- random_catalog(1500, like = sim, seed = 22)
  bins <- theta_bins(0.05, 1, n = 4, log = TRUE)
  run <- function(...) {
    wtheta(sim, ran, bins, threads = 1, progress = FALSE,
           check_footprint = FALSE, ...)
  }
  set.seed(99)
  before <- .Random.seed
  a <- run(error = "jackknife", n_patches = 8)
  b <- run(error = "jackknife", n_patches = 8)
  # no seed: the documented default, recorded, and the session's random
  # state untouched
  expect_identical(.Random.seed, before)
  expect_identical(a$w_err, b$w_err)
  expect_identical(attr(a, "seed"), 1L)
  expect_identical(attr(attr(a, "patches"), "seed"), 1L)
  expect_identical(a$w_err, run(error = "jackknife", n_patches = 8,
                                seed = 1)$w_err)
  # another seed: other patches, other errors, recorded
  c5 <- run(error = "jackknife", n_patches = 8, seed = 5)
  expect_identical(attr(c5, "seed"), 5L)
  expect_false(identical(c5$w_err, a$w_err))
  # bootstrap draws too
  bt <- run(error = "bootstrap", n_patches = 8, n_boot = 20)
  expect_identical(bt$w_err, run(error = "bootstrap", n_patches = 8,
                                 n_boot = 20)$w_err)
  expect_identical(attr(bt, "seed"), 1L)
  # patches given as labels: no seed was used
  lab <- list(data = rep(1:5, length.out = 600),
              random = rep(1:5, length.out = 1500))
  expect_null(attr(run(error = "jackknife", patches = lab), "seed"))
  expect_null(attr(run(error = "poisson"), "seed"))
})

test_that("wtheta() warns when its covariance cannot be trusted", {
  sim <- simulate_catalog(600, n_clusters = 10, sigma = 0.3, seed = 21)
  ran <- random_catalog(1500, like = sim, seed = 22)
  run <- function(bins, ...) {
    wtheta(sim, ran, bins, threads = 1, progress = FALSE,
           check_footprint = FALSE, error = "jackknife", ...)
  }
  small <- theta_bins(0.05, 1, n = 6, log = TRUE)
  # 6 bins from 6 patches: rank at most 5, singular
  expect_warning(run(small, n_patches = 6),
                 "covariance of 6 bins from 6 patches is singular")
  expect_no_warning(run(small, n_patches = 7))
  expect_warning(wtheta(sim, ran, small, threads = 1, progress = FALSE,
                        check_footprint = FALSE, error = "bootstrap",
                        n_patches = 8, n_boot = 5),
                 "from 5 bootstrap draws is singular.*`n_boot` > 6")
  # patches smaller than the largest angle
  big <- theta_bins(0.05, 30, n = 4, log = TRUE)
  expect_warning(run(big, n_patches = 8),
                 "patches are about .* less than the largest angle \\(30")
})

test_that("patch_size() gives the diameter of disc-shaped patches", {
  # two uniform discs of radius 5 degrees, one at each pole
  n <- 4000
  cap <- function(sgn) {
    d <- asin(stats::runif(n, sin(85 * pi / 180), 1)) * 180 / pi
    data.frame(ra = stats::runif(n, 0, 360), dec = sgn * d)
  }
  set.seed(3)
  pts <- rbind(cap(1), cap(-1))
  p <- prepare_catalog(pts, patches = rep(c("n", "s"), each = n))
  expect_equal(wtheta:::patch_size(p), 10, tolerance = 0.03)
})

test_that("patch_size() follows its definition, patch by patch", {
  # the median over patches of 2 sqrt(2) times the rms angle from the
  # normalised mean of at most 400 points spread over each patch's range,
  # recomputed here in R; a patch of one point has none
  set.seed(4)
  n <- 3001
  x <- random_sky(n, ra = c(0, 40), dec = c(-20, 20))
  lab <- c(sample(1:7, n - 1, replace = TRUE), 8)
  p <- prepare_catalog(x, patches = lab)
  r <- attr(p$patch, "ranges")
  d <- vapply(seq_len(nrow(r)), function(k) {
    m <- r[k, 2L] - r[k, 1L]
    if (m < 2) return(NA_real_)
    i <- round(seq(r[k, 1L] + 1, r[k, 2L], length.out = min(m, 400)))
    u <- p$xyz[i, , drop = FALSE]
    c0 <- colMeans(u)
    a <- acos(pmin(1, pmax(-1, u %*% (c0 / sqrt(sum(c0^2))))))
    2 * sqrt(2) * sqrt(mean(a^2)) * 180 / pi
  }, 0)
  expect_identical(sum(is.na(d)), 1L)
  expect_equal(wtheta:::patch_size(p), stats::median(d, na.rm = TRUE),
               tolerance = 1e-12)
})

test_that("?wtheta_cov documents the Hartlap factor", {
  rd <- tools::Rd_db("wtheta")[["wtheta_cov.Rd"]]
  txt <- paste(capture.output(tools::Rd2txt(rd, options = list(
    underline_titles = FALSE))), collapse = " ")
  expect_match(txt, "Hartlap", fixed = TRUE)
  expect_match(txt, "(P - p - 2) / (P - 1)", fixed = TRUE)
})

test_that("the jackknife's sums and covariance in C are R's, bit for bit", {
  # each replicate's sum of per-patch values (finite: points and weight
  # sums) leaving its patch out, as colSums() of (1 - diag(P)) * s adds
  # them (long double, in order); whole numbers below 2^53 by difference
  set.seed(3)
  P <- 37
  m <- 1 - diag(P)
  for (s in list(as.double(rpois(P, 300)), runif(P) * 10^runif(P, -8, 8),
                 c(1, 1e-16, 1e-16, -1), 5, c(2^52, 2^52, 3, 1),
                 c(7, 2.5, 1e20, 4))) {
    m <- 1 - diag(length(s))
    expect_identical(.Call(wtheta:::C_jackknife_sums, s), colSums(m * s))
  }
  # the jackknife covariance: scale d d^T with each entry summed over the
  # replicates in order, as the reference BLAS does; a block of rows gives
  # the block of the whole, so a joint covariance's diagonal blocks are
  # each correlation's own
  for (dims in list(c(420, 100), c(7, 13), c(1, 5), c(30, 3))) {
    x <- matrix(rnorm(prod(dims)), dims[1])
    d <- x - rowMeans(x)
    got <- .Call(wtheta:::C_row_products, d, 0.75, 2L)
    expect_equal(got, 0.75 * tcrossprod(d), tolerance = 1e-14)
    expect_identical(got, t(got))
    k <- seq_len(min(5, dims[1]))
    expect_identical(got[k, k, drop = FALSE],
                     .Call(wtheta:::C_row_products, d[k, , drop = FALSE],
                           0.75, 1L))
  }
  # a replicate with no value (NA) spreads to its row and column only
  d <- matrix(c(1, NA, 3, 4, 5, 6), 2)
  got <- .Call(wtheta:::C_row_products, d, 1, 1L)
  expect_equal(got[1, 1], 1 + 9 + 25)
  expect_true(all(is.na(got[2, ])) && all(is.na(got[, 2])))
})
