# footprint_check(): do the data and the randoms share a footprint? The
# two HEALPix helpers are those of test-footprint.R.
skip_if_no_healpix <- function() {
  if (!wtheta:::healpix_available()) skip("built without chealpix")
  if (!wtheta:::fits_available()) skip("built without cfitsio")
}
hp_fixture <- function(name) test_path("fixtures", "healpix", name)

classic <- function(which) {
  read_catalog(system.file("extdata", paste0("classic_", which,
                                             "_10k.txt.gz"),
                           package = "wtheta"), units = "arcmin")
}

# the cell search of footprint_check() written in R with tabulate(), as
# documented there: the level kept, its occupied cells and their counts
cells_in_r <- function(d, r, thin) {
  if (thin > 1) r <- r[seq(1L, nrow(r), by = thin), , drop = FALSE]
  top <- 11L
  fine <- function(x) {
    list(ia = pmin(floor(x$ra / 360 * 2^(top + 1)), 2^(top + 1) - 1),
         iz = pmin(floor((sinpi(x$dec / 180) + 1) / 2 * 2^top), 2^top - 1))
  }
  fd <- fine(d)
  fr <- fine(r)
  counts <- function(f, j) {
    s <- 2^(top - j)
    as.double(tabulate(floor(f$ia / s) + 2^(j + 1) * floor(f$iz / s) + 1,
                       2^(2 * j + 1)))
  }
  kept <- list(level = -1L)
  for (j in 0:top) {
    Dm <- counts(fd, j)
    Rm <- counts(fr, j)
    ids <- which(Dm > 0 | Rm > 0)
    R <- Rm[ids]
    E <- R * nrow(d) / nrow(r)
    well <- R > 0 & R >= 0.5 * median(R[R > 0])
    m <- sum(well)
    e_med <- median(E[well])
    if (m >= 12 && e_med >= 25) {
      kept <- list(level = j, id = ids - 1, d = Dm[ids], r = R)
    }
    if (m >= 256 || e_med < 25) break
  }
  kept
}

test_that("the check flags the classic galaxies against the course randoms", {
  g <- classic("galaxies")
  r <- classic("randoms")
  fc <- footprint_check(g, r)
  expect_s3_class(fc, "footprint_check")
  expect_identical(fc$verdict, "mismatch")
  expect_lt(fc$p_value, 1e-6)
  # the course randoms over-predict the north: the top band of declination
  expect_match(fc$trend_where, "^declination 69")
  expect_lt(fc$trend, 0.5)
  expect_output(print(fc), "mismatch")
  # randoms uniform in area on the same box pass
  ru <- random_catalog(10000, ra_range = range(r$ra),
                       dec_range = range(r$dec), seed = 1)
  expect_identical(footprint_check(g, ru)$verdict, "ok")
  # and wtheta() warns, naming where, unless told not to
  b <- theta_bins(0.5, 1, n = 2)
  expect_warning(w <- wtheta(g, r, b, threads = test_threads()),
                 "do not seem to share a footprint.*declination")
  expect_identical(attr(w, "footprint_check")[[1L]]$verdict, "mismatch")
  expect_silent(wtheta(g, r, b, threads = test_threads(),
                       check_footprint = FALSE))
  expect_error(wtheta(g, r, b, check_footprint = NA), "check_footprint")
})

test_that("the check flags the full classic catalogs", {
  g <- read_catalog(shared_data("data_100k_arcmin.txt"), units = "arcmin")
  r <- read_catalog(shared_data("flat_100k_arcmin.txt"), units = "arcmin")
  expect_identical(footprint_check(g, r)$verdict, "mismatch")
  ru <- random_catalog(1e5, ra_range = range(r$ra), dec_range = range(r$dec),
                       seed = 1)
  expect_identical(footprint_check(g, ru)$verdict, "ok")
})

test_that("the check's cells, counted in C, are those of R's tabulate()", {
  cells <- function(d, r, thin = 1) {
    d <- wtheta:::as_catalog(d, "d")
    r <- wtheta:::as_catalog(r, "r")
    .Call(wtheta:::C_footprint_cells, d$ra, d$dec, r$ra, r$dec, thin, 2L)
  }
  g <- classic("galaxies")
  r <- classic("randoms")
  sim <- simulate_catalog(3000, ra_range = c(350, 10), seed = 4)
  ran <- random_catalog(50000, like = sim, seed = 5)
  # points on cell edges: ra 0 and 180, dec -90, 0 and 90 exactly
  edge <- data.frame(ra = rep(c(0, 90, 180, 359.99999), 200),
                     dec = rep(c(-90, 0, 30, 90), each = 200))
  # a 3 x 3 degree field: cells finer than level 7, each counted in a
  # pass of its own (the coarser levels add up the cells of level 7)
  small <- simulate_catalog(20000, ra_range = c(0, 3), dec_range = c(0, 3),
                            seed = 4)
  small_r <- random_catalog(2e5, like = small, seed = 5)
  cases <- list(list(g, r, 1), list(sim, ran, 1), list(sim, ran, 7),
                list(g, r, 3), list(rbind(g, edge), rbind(r, edge), 1),
                list(small, small_r, 1))
  levels <- integer()
  for (k in seq_along(cases)) {
    cs <- cases[[k]]
    got <- cells(cs[[1]], cs[[2]], cs[[3]])
    want <- cells_in_r(wtheta:::as_catalog(cs[[1]], "d"),
                       wtheta:::as_catalog(cs[[2]], "r"), cs[[3]])
    expect_identical(got, want[names(got)], info = paste("case", k))
    levels <- c(levels, got$level)
  }
  expect_true(all(levels >= 2L))
  expect_gt(max(levels), 7L)
  # too few cells of 25: no level kept
  few <- cells(g[1:300, ], r[1:300, ])
  expect_identical(few$level, -1L)
  expect_length(few$id, 0L)
  # several data sets against one set of randoms, whose cells are made
  # once: each result is that of its own call, fine levels included
  many <- function(ds, r, thin = 1) {
    r <- wtheta:::as_catalog(r, "r")
    .Call(wtheta:::C_footprint_cells_many, lapply(ds, function(d) {
      d <- wtheta:::as_catalog(d, "d")
      list(d$ra, d$dec)
    }), r$ra, r$dec, thin, 2L)
  }
  ds <- list(sim, sim[1:1500, ], rbind(sim, edge), g[1:300, ])
  for (thin in c(1, 7)) {
    expect_identical(many(ds, ran, thin),
                     lapply(ds, function(d) cells(d, ran, thin)))
  }
  got <- many(list(small, small[1:5000, ]), small_r)
  expect_identical(got, list(cells(small, small_r),
                             cells(small[1:5000, ], small_r)))
  expect_gt(got[[1]]$level, 7L)
})

test_that("the footprint checks of several samples against one set of randoms are each its own check", {
  sim <- simulate_catalog(6000, ra_range = c(20, 60), dec_range = c(-10, 20),
                          seed = 8)
  ran <- random_catalog(40000, like = sim, seed = 9)
  bad <- random_catalog(40000, ra_range = c(20, 60), dec_range = c(-10, 10),
                        seed = 10)
  cats <- list(a = sim[1:2000, ], b = sim[2001:6000, ], c = sim[1:300, ],
               r = ran, s = bad)
  cats <- lapply(cats, wtheta:::as_catalog, arg = "x")
  pairs <- list(c("a", "r"), c("b", "r"), c("c", "r"), c("a", "s"),
                c("b", "s"))
  got <- suppressWarnings(wtheta:::footprint_checks(cats, pairs))
  expect_identical(names(got), c("a/r", "b/r", "c/r", "a/s", "b/s"))
  for (k in seq_along(pairs)) {
    want <- wtheta:::check_footprint_of(cats[[pairs[[k]][1]]],
                                        cats[[pairs[[k]][2]]])
    expect_identical(got[[k]], want, info = names(got)[k])
  }
  expect_identical(got[["c/r"]]$verdict, "too few points")
  expect_identical(got[["b/s"]]$verdict, "mismatch")
  expect_warning(wtheta:::footprint_checks(cats, pairs[5]),
                 "do not seem to share a footprint")
})

test_that("the check stays silent for simulations and their randoms", {
  for (s in 1:12) {
    n <- c(1000, 3000, 10000)[s %% 3 + 1]
    sim <- simulate_catalog(n, seed = s)
    ran <- random_catalog(2 * n, like = sim, seed = 100 + s)
    fc <- footprint_check(sim, ran)
    expect_identical(fc$verdict, "ok", info = paste("seed", s))
    if (fc$verdict != "too few points") expect_gt(fc$p_value, 1e-6)
  }
  # data where the randoms are not: flagged
  sim <- simulate_catalog(5000, seed = 1)
  half <- random_catalog(10000, ra_range = c(0, 10), seed = 2)
  fc <- footprint_check(sim, half)
  expect_identical(fc$verdict, "mismatch")
  expect_gt(fc$outside, 0.2)
  expect_identical(footprint_check(sim[1:100, ], half)$verdict,
                   "too few points")
})

test_that("the check stays silent for a catalog cut to a map", {
  skip_if_no_healpix()
  ring <- read_healpix_map(hp_fixture("ring.fits"))
  for (s in 1:4) {
    # a clustered catalog on a wider box, cut to the map
    sim <- simulate_catalog(40000, ra_range = c(10, 110),
                            dec_range = c(-30, 50), seed = s)
    cut <- sim[in_footprint(sim, ring), ]
    ran <- random_catalog(30000, mask = ring, seed = 10 + s)
    expect_identical(footprint_check(cut, ran)$verdict, "ok",
                     info = paste("seed", s))
  }
})

test_that("the check handles a footprint one band of declination tall", {
  # every cell in one band: the fit has no band effect to estimate (the
  # model.matrix() it used before refused a one-level factor, so a
  # default wtheta() call on such a strip stopped with an error)
  d <- random_catalog(5000, ra_range = c(0, 300), dec_range = c(0, 0.5),
                      seed = 1)
  r <- random_catalog(20000, ra_range = c(0, 300), dec_range = c(0, 0.5),
                      seed = 2)
  fc <- footprint_check(d, r)
  expect_identical(fc$verdict, "ok")
  expect_gt(fc$n_cells, 50L)
  expect_length(unique(fc$cells$dec), 1L)
  expect_silent(wtheta(d, r, theta_bins(0.1, 1, n = 3), threads = 1,
                       progress = FALSE))
})

test_that("the check's factors and group means are factor()'s and mean()'s, bit for bit", {
  set.seed(11)
  # cell rows or columns: whole numbers from 0, some values absent
  x <- as.numeric(sample(c(0:40, 97, 300), 500, replace = TRUE))
  f <- wtheta:::int_factor(x)
  expect_identical(f, factor(x))
  expect_identical(levels(f)[1:3], as.character(sort(unique(x))[1:3]))
  # fitted log ratios: mean() sums in long double and then corrects the
  # mean; values far from 0 with small differences show any other order
  v <- 1e8 + rnorm(500) * 1e-3
  m <- wtheta:::group_means(v, f)
  expect_identical(m, vapply(split(v, f), mean, 0))
  expect_identical(names(m), levels(f))
  v2 <- rnorm(500)
  expect_identical(wtheta:::group_means(v2, f), vapply(split(v2, f), mean, 0))
  # a sum that is not finite: R's own mean() of each level
  v2[3] <- Inf
  expect_identical(wtheta:::group_means(v2, f), vapply(split(v2, f), mean, 0))
  expect_true(is.infinite(wtheta:::group_means(v2, f)[[as.integer(f[3])]]))
  # codes outside the levels are refused, not read
  bad <- f
  attr(bad, "levels") <- levels(f)[-1]
  expect_error(wtheta:::group_means(v, bad), "group means")
})
