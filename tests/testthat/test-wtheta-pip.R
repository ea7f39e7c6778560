# wtheta() and wtheta_multi() with PIP weights and angular upweights
# (issue 37), against the brute force of helper-pip.R: DD weighted by the
# pairs' bits and normalised by pycorr's "total" sum, DR by the data's
# individual inverse probabilities, RR plain; angular upweights on DD and
# DR only.

pip_words <- function(x) as.matrix(x[, c("b1", "b2")])

# the randoms: no bits, on the data's box
pip_randoms <- function(n, seed) {
  set.seed(seed)
  data.frame(ra = runif(n, 10, 25), dec = runif(n, -8, 8))
}

pip_edges <- c(0.5, 1, 2, 4, 8, 14)
pip_ang <- data.frame(theta = c(0.7, 3, 10), weight = c(1.6, 1.2, 1.05))
pip_ang_dr <- data.frame(theta = c(0.6, 2, 12), weight = c(1.3, 0.9, 1.1))

# the expected auto-correlation: normalised DD, DR, RR and LS w
pip_expected_auto <- function(d, r, edges, noffset = 1, nreal = 65,
                              ang_dd = NULL, ang_dr = NULL) {
  b <- pip_words(d)
  dd <- pip_brute_counts(d, NULL, edges, wx = d$w, bx = b,
                         nrealizations = nreal, noffset = noffset,
                         angular = ang_dd)$weighted
  ndd <- pip_brute_norm(d$w, b, nrealizations = nreal, noffset = noffset)
  dr <- pip_brute_counts(d, r, edges, wx = d$w, bx = b,
                         nrealizations = nreal, noffset = noffset,
                         angular = ang_dr)$weighted
  iip <- nreal / (noffset + rowSums(pip_bits01(b)))
  ndr <- sum(d$w * iip) * nrow(r)
  rr <- pip_brute_counts(r, NULL, edges)$counts
  nrr <- nrow(r) * (nrow(r) - 1) / 2
  list(DD = dd, DR = dr, RR = rr,
       w = (dd / ndd - 2 * dr / ndr + rr / nrr) / (rr / nrr))
}

test_that("wtheta() with PIP and angular upweights matches the brute force", {
  d <- pip_catalog(70, seed = 1)
  r <- pip_randoms(90, seed = 2)
  for (noffset in c(1, 0)) {
    nreal <- if (noffset == 1) 65 else 64
    got <- wtheta(d, r, pip_edges, weights = list(data = "w"),
                  bitwise = c("b1", "b2"), noffset = noffset,
                  nrealizations = if (noffset == 0) 64,
                  angular = pip_ang, error = "none", threads = 1,
                  check_footprint = FALSE)
    want <- pip_expected_auto(d, r, pip_edges, noffset, nreal,
                              ang_dd = pip_ang, ang_dr = pip_ang)
    expect_equal(got$DD, want$DD, tolerance = 1e-12)
    expect_equal(got$DR, want$DR, tolerance = 1e-12)
    expect_identical(got$RR, as.double(want$RR))
    expect_equal(got$w, want$w, tolerance = 1e-12)
    p <- attr(got, "pip")
    expect_identical(p$bitwise, c(DD = "pairs", DR = "individual",
                                  RR = "none"))
    expect_equal(p$nrealizations, nreal)
    expect_equal(p$noffset, noffset)
    expect_equal(p$angular$DD$weight, pip_ang$weight)
  }
  # one table each: DD and DR take their own, RR none
  got <- wtheta(d, r, pip_edges, bitwise = c("b1", "b2"),
                angular = list(DD = pip_ang, DR = pip_ang_dr),
                error = "none", threads = 1, check_footprint = FALSE)
  d1 <- d
  d1$w <- 1
  want <- pip_expected_auto(d1, r, pip_edges, ang_dd = pip_ang,
                            ang_dr = pip_ang_dr)
  expect_equal(got$DD, want$DD, tolerance = 1e-12)
  expect_equal(got$DR, want$DR, tolerance = 1e-12)
  expect_equal(got$w, want$w, tolerance = 1e-12)
  # without the upweights the counts differ (the tables matter)
  plain <- wtheta(d, r, pip_edges, bitwise = c("b1", "b2"), error = "none",
                  threads = 1, check_footprint = FALSE)
  expect_true(all(plain$DD < got$DD))
  expect_identical(plain$RR, got$RR)
  # only the DR table: DD is not upweighted
  only_dr <- wtheta(d, r, pip_edges, bitwise = c("b1", "b2"),
                    angular = list(DR = pip_ang_dr), error = "none",
                    threads = 1, check_footprint = FALSE)
  expect_identical(only_dr$DD, plain$DD)
  expect_identical(only_dr$DR, got$DR)
  out <- capture.output(print(got))
  expect_true(any(grepl("PIP weights: 64 bits, nrealizations 65, noffset 1",
                        out, fixed = TRUE)))
  expect_true(any(grepl("angular upweights: DD, DR", out, fixed = TRUE)))
  expect_null(attr(wtheta(d, r, pip_edges, error = "none", threads = 1,
                          check_footprint = FALSE), "pip"))
})

test_that("PIP cross-correlations weigh D1D2 by pairs, D1R2, R1D2 by objects", {
  d1 <- pip_catalog(50, seed = 3)
  d2 <- pip_catalog(40, seed = 4)
  r <- pip_randoms(60, seed = 5)
  got <- wtheta(d1, r, pip_edges, data2 = d2, bitwise = c("b1", "b2"),
                angular = pip_ang, error = "none", threads = 1,
                check_footprint = FALSE)
  b1 <- pip_words(d1)
  b2 <- pip_words(d2)
  iip <- function(b) 65 / (1 + rowSums(pip_bits01(b)))
  d1d2 <- pip_brute_counts(d1, d2, pip_edges, bx = b1, by = b2,
                           angular = pip_ang)$weighted
  n12 <- pip_brute_norm(rep(1, 50), b1, rep(1, 40), b2, nrealizations = 65)
  d1r <- pip_brute_counts(d1, r, pip_edges, bx = b1, angular = pip_ang)$weighted
  rd2 <- pip_brute_counts(d2, r, pip_edges, bx = b2, angular = pip_ang)$weighted
  rr <- pip_brute_counts(r, NULL, pip_edges)$counts
  n1r <- sum(iip(b1)) * 60
  n2r <- sum(iip(b2)) * 60
  nrr <- 60 * 59 / 2
  expect_equal(got$D1D2, d1d2, tolerance = 1e-12)
  expect_equal(got$D1R2, d1r, tolerance = 1e-12)
  expect_equal(got$R1D2, rd2, tolerance = 1e-12)
  w <- (d1d2 / n12 - d1r / n1r - rd2 / n2r + rr / nrr) / (rr / nrr)
  expect_equal(got$w, w, tolerance = 1e-12)
})

test_that("PIP jackknife replicates are w of the sample less each patch", {
  d <- pip_catalog(80, seed = 6)
  r <- pip_randoms(100, seed = 7)
  # four patches by quadrant of the box, as labels
  lab <- function(x) 1 + (x$ra > 17.5) + 2 * (x$dec > 0)
  d$p <- lab(d)
  r$p <- lab(r)
  # (4 patches for 5 bins: the warnings of a singular covariance and of
  # patches smaller than the largest angle are expected)
  got <- suppressWarnings(
    wtheta(d, r, pip_edges, weights = list(data = "w"),
           bitwise = c("b1", "b2"), angular = pip_ang, error = "jackknife",
           patches = "p", threads = 1, check_footprint = FALSE))
  reps <- attr(got, "replicates")
  # the whole sample's normaliser from the patches' parts is the count's
  pc <- attr(got, "pair_counts")$DD
  expect_equal(wtheta:::pip_replicate_norm(pc$patch_pip_norm,
                                           matrix(1, 4, 1), TRUE),
               pc$weighted_pairs, tolerance = 1e-13)
  for (k in 1:4) {
    dk <- d[d$p != k, ]
    rk <- r[r$p != k, ]
    want <- pip_expected_auto(dk, rk, pip_edges, ang_dd = pip_ang,
                              ang_dr = pip_ang)$w
    expect_equal(unname(reps[, k]), want, tolerance = 1e-10)
  }
})

test_that("wtheta_multi() with PIP equals wtheta() of each sample and pair", {
  z1 <- pip_catalog(50, seed = 8)
  z2 <- pip_catalog(45, seed = 9)
  r <- pip_randoms(70, seed = 10)
  m <- wtheta_multi(list(z1 = z1, z2 = z2), r, pip_edges,
                    bitwise = c("b1", "b2"),
                    angular = list(DD = pip_ang, DR = pip_ang_dr),
                    weights = list(data = list(z1 = "w", z2 = "w")),
                    error = "none", threads = 1, check_footprint = FALSE)
  e <- attr(m, "entries")
  args <- list(bins = pip_edges, bitwise = c("b1", "b2"),
               angular = list(DD = pip_ang, DR = pip_ang_dr),
               error = "none", threads = 1, check_footprint = FALSE)
  one <- do.call(wtheta, c(list(z1, r, weights = list(data = "w")), args))
  two <- do.call(wtheta, c(list(z2, r, weights = list(data = "w")), args))
  x12 <- do.call(wtheta, c(list(z1, r, data2 = z2, weights = "w"), args))
  for (k in c("DD", "DR", "RR", "w")) {
    expect_equal(e[["z1-z1"]][[k]], one[[k]], tolerance = 1e-12)
    expect_equal(e[["z2-z2"]][[k]], two[[k]], tolerance = 1e-12)
  }
  for (k in c("D1D2", "D1R2", "R1D2", "R1R2", "w")) {
    expect_equal(e[["z1-z2"]][[k]], x12[[k]], tolerance = 1e-12)
  }
  expect_identical(attr(e[["z1-z2"]], "pip")$bitwise,
                   c(D1D2 = "pairs", D1R2 = "individual",
                     R1D2 = "individual", R1R2 = "none"))
  expect_false(is.null(attr(m, "pip")))
  out <- capture.output(print(m))
  expect_true(any(out == paste0("PIP weights: 64 bits, nrealizations 65, ",
                                "noffset 1; angular upweights: DD, DR")))
})

test_that("wtheta() names a malformed `angular`", {
  d <- pip_catalog(20, seed = 11)
  r <- pip_randoms(30, seed = 12)
  expect_error(wtheta(d, r, pip_edges, bitwise = c("b1", "b2"),
                      angular = list(DD = pip_ang, RR = pip_ang),
                      error = "none", threads = 1),
               "`angular` must be NULL, a data frame.*elements `DD` and `DR`")
  expect_error(wtheta(d, r, pip_edges, angular = list(DR = data.frame(
    theta = c(2, 1), weight = c(1, 1))), error = "none", threads = 1),
    "`angular\\$theta` must be strictly increasing")
  expect_error(wtheta(d, r, pip_edges, bitwise = "nope", error = "none",
                      threads = 1), "nope")
})

test_that("bitwise column names leave prepared randoms without bits", {
  d <- pip_catalog(40, seed = 13)
  r <- pip_randoms(50, seed = 14)
  pr <- prepare_catalog(r, threads = 1)
  args <- list(bins = pip_edges, bitwise = c("b1", "b2"), angular = pip_ang,
               error = "none", threads = 1, check_footprint = FALSE)
  a <- do.call(wtheta, c(list(d, r), args))
  b <- do.call(wtheta, c(list(d, pr), args))
  for (k in c("DD", "DR", "RR", "w")) expect_identical(b[[k]], a[[k]])
  m <- do.call(wtheta_multi, c(list(list(z = d), pr), args))
  expect_identical(attr(m, "entries")[["z-z"]]$w, a$w)
  # data prepared with their words need no `bitwise`
  pd <- prepare_catalog(d, bitwise = c("b1", "b2"), threads = 1)
  args$bitwise <- NULL
  p <- do.call(wtheta, c(list(pd, pr), args))
  for (k in c("DD", "DR", "RR", "w")) expect_equal(p[[k]], a[[k]],
                                                   tolerance = 1e-12)
  expect_identical(attr(p, "pip")$bitwise, attr(a, "pip")$bitwise)
  mp <- do.call(wtheta_multi, c(list(list(z = pd), pr), args))
  expect_equal(attr(mp, "entries")[["z-z"]]$w, a$w, tolerance = 1e-12)
  args$bitwise <- c("b1", "b2")
  # a prepared catalog named explicitly is refused
  expect_error(do.call(wtheta, c(list(d, pr), modifyList(args, list(
    bitwise = list(data = c("b1", "b2"), random = c("b1", "b2")))))),
    "`random` is a prepared catalog")
})

test_that("wtheta_from_counts() takes PIP counts and their replicates", {
  d <- pip_catalog(50, seed = 15)
  r <- pip_randoms(60, seed = 16)
  d$p <- 1 + (d$ra > 17.5)
  r$p <- 1 + (r$ra > 17.5)
  pc <- function(x, y = NULL) {
    pair_counts(x, y, bins = pip_edges, bitwise = c("b1", "b2"),
                angular = pip_ang, patches = "p", threads = 1)
  }
  dd <- pc(d)
  dr <- pc(d, r)
  # (all three weighted, as wtheta_from_counts() asks: unit weights)
  rr <- pair_counts(r, bins = pip_edges, patches = "p", threads = 1,
                    weights = list(x = rep(1, 60)))
  w <- wtheta(d, r, pip_edges, bitwise = c("b1", "b2"), angular = pip_ang,
              error = "none", threads = 1, check_footprint = FALSE)
  expect_equal(wtheta_from_counts(dd, dr, rr, error = "none")$w, w$w,
               tolerance = 1e-12)
  # the replicates from pair_counts()'s patch normalisations are those of
  # wtheta()
  wj <- suppressWarnings(
    wtheta(d, r, pip_edges, bitwise = c("b1", "b2"), angular = pip_ang,
           error = "jackknife", patches = "p", threads = 1,
           check_footprint = FALSE))
  fj <- suppressWarnings(wtheta_from_counts(dd, dr, rr, error = "jackknife"))
  expect_equal(attr(fj, "replicates"), attr(wj, "replicates"),
               tolerance = 1e-12)
  # without them (a count edited by hand), or with self pairs, an error
  dd$patch_pip_norm <- NULL
  expect_error(wtheta_from_counts(dd, dr, rr, error = "jackknife"),
               "need its normalisation by pair of patches")
  expect_error(suppressWarnings(
    wtheta(d, r, pip_edges, bitwise = c("b1", "b2"), self_pairs = TRUE,
           error = "jackknife", patches = "p", threads = 1,
           check_footprint = FALSE)),
    "counts with self pairs do not have yet")
})

test_that("wtheta() with PIP on the GPU equals the CPU, counts overlapped", {
  skip_if_no_cuda()
  d <- pip_catalog(300, seed = 17)
  r <- pip_randoms(400, seed = 18)
  d$p <- 1 + (d$ra > 17.5) + 2 * (d$dec > 0)
  r$p <- 1 + (r$ra > 17.5) + 2 * (r$dec > 0)
  run <- function(backend) {
    suppressWarnings(wtheta(d, r, pip_edges, bitwise = c("b1", "b2"),
                            weights = list(data = "w"),
                            angular = list(DD = pip_ang, DR = pip_ang_dr),
                            error = "jackknife", patches = "p",
                            backend = backend, threads = 1,
                            check_footprint = FALSE))
  }
  old <- options(wtheta.overlap = TRUE)
  on.exit(options(old))
  g <- run("cuda")
  cp <- run("cpu")
  expect_identical(attr(g, "backend"), "cuda")
  for (k in c("DD", "DR", "RR", "w")) {
    expect_equal(g[[k]], cp[[k]], tolerance = 1e-12)
  }
  expect_equal(attr(g, "replicates"), attr(cp, "replicates"),
               tolerance = 1e-12)
})
