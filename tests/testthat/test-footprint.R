# HEALPix maps written by healpy (tools/make-healpix-fixtures.py), with
# healpy's own ang2pix of test points stored beside them.
skip_if_no_healpix <- function() {
  if (!wtheta:::healpix_available()) skip("built without chealpix")
  if (!wtheta:::fits_available()) skip("built without cfitsio")
}
hp_fixture <- function(name) test_path("fixtures", "healpix", name)
withr_options <- function(opts, code) {
  old <- options(opts)
  on.exit(options(old))
  code
}
hp_points <- function() utils::read.csv(hp_fixture("points.csv"))

# galactic latitude from the north galactic pole alone (not the matrix)
galactic_b <- function(ra, dec) {
  a <- 192.85948 * pi / 180
  d <- 27.12825 * pi / 180
  r <- ra * pi / 180
  s <- dec * pi / 180
  asin(sin(s) * sin(d) + cos(s) * cos(d) * cos(r - a)) * 180 / pi
}

test_that("maps in every layout read to the same footprint", {
  skip_if_no_healpix()
  ring <- read_healpix_map(hp_fixture("ring.fits"))
  nest <- read_healpix_map(hp_fixture("nested.fits"))
  part <- read_healpix_map(hp_fixture("partial.fits"))
  expect_s3_class(ring, "healpix_map")
  expect_identical(c(ring$nside, nest$nside), c(16, 16))
  expect_identical(c(ring$ordering, nest$ordering, part$ordering),
                   c("RING", "NESTED", "RING"))
  expect_identical(length(ring$pixel), 336L)
  expect_identical(ring$pixel, part$pixel)
  # the same pixels, renumbered by chealpix
  expect_identical(sort(wtheta:::map_nested_pixels(ring)), nest$pixel)
  expect_equal(ring$area, 336 * 41252.96124941928 / 3072)
  expect_true(all(part$value >= 0.25 & part$value <= 1))
  sc <- read_healpix_map(hp_fixture("scalar.fits"))
  expect_identical(c(sc$nside, length(sc$pixel)), c(4, 40L))
  expect_output(print(ring), "nside 16, RING, equatorial")
})

test_that("pixel lookups agree with healpy's ang2pix in every ordering", {
  skip_if_no_healpix()
  p <- hp_points()
  pix <- function(nside, nest, rot = NULL) {
    .Call(wtheta:::C_healpix_pixels, nside, nest, p$ra, p$dec, rot, 1L)
  }
  expect_identical(pix(16, FALSE), as.numeric(p$ring16))
  expect_identical(pix(16, TRUE), as.numeric(p$nest16))
  rot <- as.vector(t(wtheta:::equatorial_to_galactic))
  expect_identical(pix(8, FALSE, rot), as.numeric(p$gal8))
  # membership through the maps
  ring <- read_healpix_map(hp_fixture("ring.fits"))
  expect_identical(in_footprint(p, ring), p$ring16 %in% ring$pixel)
  nest <- read_healpix_map(hp_fixture("nested.fits"))
  expect_identical(in_footprint(p, nest), p$nest16 %in% nest$pixel)
  gal <- read_healpix_map(hp_fixture("galactic.fits"))
  expect_identical(gal$coordsys, "G")
  expect_identical(in_footprint(p, gal), p$gal8 %in% gal$pixel)
})

test_that("hostile maps are clear errors", {
  skip_if_no_healpix()
  expect_error(read_healpix_map(hp_fixture("bad-nside.fits")),
               "NSIDE 12.*power of two")
  expect_error(read_healpix_map(hp_fixture("bad-count.fits")),
               "3,000 pixel values, but NSIDE 16 has 3,072")
  expect_error(read_healpix_map(hp_fixture("bad-ordering.fits")),
               "ORDERING \"SPIRAL\"")
  expect_error(read_healpix_map(hp_fixture("all-zero.fits")),
               "no pixel with a value above 0")
  expect_error(read_healpix_map(hp_fixture("ring.fits"), column = "X"),
               "`column` \"X\"")
})

test_that("randoms from a map: exactly n, on the map, uniform in area", {
  skip_if_no_healpix()
  ring <- read_healpix_map(hp_fixture("ring.fits"))
  n <- 50000
  r <- random_catalog(n, mask = ring, seed = 3)
  expect_identical(nrow(r), as.integer(n))
  expect_true(all(in_footprint(r, ring)))
  # same pixels healpy would give: our lookup matches ang2pix (above)
  pix <- .Call(wtheta:::C_healpix_pixels, 16, FALSE, r$ra, r$dec, NULL, 1L)
  expect_setequal(unique(pix), ring$pixel)
  # uniform over pixels: chi-squared of counts in the 336 pixels
  k <- tabulate(match(pix, ring$pixel), length(ring$pixel))
  e <- n / length(ring$pixel)
  expect_gt(stats::pchisq(sum((k - e)^2 / e), length(k) - 1,
                          lower.tail = FALSE), 1e-3)
  # uniform inside pixels: counts at nside 64 (16 sub-pixels each)
  fine <- .Call(wtheta:::C_healpix_pixels, 64, TRUE, r$ra, r$dec, NULL, 1L)
  sub <- as.vector(outer(0:15, 16 * wtheta:::map_nested_pixels(ring), `+`))
  expect_true(all(fine %in% sub))
  kf <- tabulate(match(fine, sub), length(sub))
  ef <- n / (336 * 16)
  expect_gt(stats::pchisq(sum((kf - ef)^2 / ef), length(kf) - 1,
                          lower.tail = FALSE), 1e-3)
})

test_that("weighted randoms follow the map's values", {
  skip_if_no_healpix()
  part <- read_healpix_map(hp_fixture("partial.fits"))
  n <- 40000
  r <- random_catalog(n, mask = part, weighted = TRUE, seed = 5)
  pix <- .Call(wtheta:::C_healpix_pixels, 16, FALSE, r$ra, r$dec, NULL, 1L)
  k <- tabulate(match(pix, part$pixel), length(part$pixel))
  e <- n * part$value / sum(part$value)
  expect_gt(stats::pchisq(sum((k - e)^2 / e), length(k) - 1,
                          lower.tail = FALSE), 1e-3)
  # and unweighted draws do not
  u <- random_catalog(n, mask = part, seed = 5)
  pu <- .Call(wtheta:::C_healpix_pixels, 16, FALSE, u$ra, u$dec, NULL, 1L)
  ku <- tabulate(match(pu, part$pixel), length(part$pixel))
  expect_lt(stats::pchisq(sum((ku - e)^2 / e), length(ku) - 1,
                          lower.tail = FALSE), 1e-10)
  expect_error(random_catalog(10, weighted = TRUE), "needs `mask`")
})

test_that("draws are reproducible with seed on any number of threads", {
  skip_if_no_healpix()
  nest <- read_healpix_map(hp_fixture("nested.fits"))
  # 2e5 points: enough for 2 threads (below 25,000 points a thread, fewer
  # threads run); weighted draws too
  for (weighted in c(FALSE, TRUE)) {
    one <- withr_options(list(wtheta.threads = 1L),
                         random_catalog(2e5, mask = nest, seed = 9,
                                        weighted = weighted))
    two <- withr_options(list(wtheta.threads = 2L),
                         random_catalog(2e5, mask = nest, seed = 9,
                                        weighted = weighted))
    expect_identical(one, two)
  }
  set.seed(9)
  a <- random_catalog(100, mask = nest)
  set.seed(9)
  b <- random_catalog(100, mask = nest)
  expect_identical(a, b)
  expect_false(identical(a$ra, random_catalog(100, mask = nest)$ra))
})

test_that("a galactic map is rotated to equatorial", {
  skip_if_no_healpix()
  gal <- read_healpix_map(hp_fixture("galactic.fits"))
  r <- random_catalog(20000, mask = gal, seed = 1)
  b <- galactic_b(r$ra, r$dec)
  # the map holds the pixels with centres above b = 30 (nside 8 pixels
  # reach about 4 degrees from their centres)
  expect_gt(min(b), 30 - 5)
  expect_gt(mean(b > 30), 0.9)
  expect_true(all(in_footprint(r, gal)))
})

test_that("simulate_catalog() takes a map, and randoms follow it", {
  skip_if_no_healpix()
  ring <- read_healpix_map(hp_fixture("ring.fits"))
  sim <- simulate_catalog(3000, mask = ring, n_clusters = 100, seed = 2)
  expect_identical(nrow(sim), 3000L)
  expect_true(all(in_footprint(sim, ring)))
  expect_identical(attr(sim, "footprint")$healpix, ring)
  expect_equal(attr(sim, "footprint")$area, ring$area)
  ran <- random_catalog(5000, like = sim, seed = 3)
  expect_true(all(in_footprint(ran, ring)))
  # a subset of rows carries no stale footprint
  expect_null(attr(sim[1:10, ], "footprint"))
})

test_that("healpix_map() counts points per pixel", {
  skip_if_no_healpix()
  p <- hp_points()
  m <- healpix_map(p, nside = 16, ordering = "RING")
  expect_identical(m$pixel, as.numeric(sort(unique(p$ring16))))
  expect_identical(m$value, as.numeric(table(p$ring16)))
  # RING by default, as healpy's
  expect_identical(healpix_map(p, nside = 16), m)
  mn <- healpix_map(p, nside = 16, ordering = "NESTED")
  expect_identical(mn$ordering, "NESTED")
  expect_identical(mn$pixel, as.numeric(sort(unique(p$nest16))))
  expect_identical(mn$value, as.numeric(table(p$nest16)))
  expect_identical(sum(mn$value), nrow(p) + 0)
  expect_error(healpix_map(p, nside = 3), "power of two")
})

test_that("drawn points are the centres of order-29 sub-pixels, as chealpix puts them", {
  if (!wtheta:::healpix_available()) skip("built without chealpix")
  # the draw computes z and phi of a sub-pixel's centre itself; chealpix's
  # pix2vec of that sub-pixel (found by its own vec2pix) must agree, over
  # the whole sky (both polar caps and the equatorial belt) and through the
  # galactic rotation
  whole <- wtheta:::make_healpix_map(2, "RING", "C", as.double(0:47),
                                     rep(1, 48), "test", "test")
  gal <- wtheta:::make_healpix_map(4, "NESTED", "G", as.double(0:191),
                                   rep(1, 192), "test", "test")
  # at order 29 (what random_catalog() uses) pixel numbers pass 2^53, so
  # the comparison takes sub-pixels of order 24 (and 12), whose numbers are
  # exact in doubles: the same code with a smaller fine order
  for (m in list(whole, gal)) {
    for (fine_order in c(24L, 12L)) {
      set.seed(4)
      r <- wtheta:::draw_map(20000, m, FALSE, fine_order)
      expect_gt(max(r$dec), 80)
      expect_lt(min(r$dec), -80)
      fine <- 2^fine_order
      p <- .Call(wtheta:::C_healpix_pixels, fine, TRUE, r$ra, r$dec,
                 wtheta:::rot_to_map(m), 1L)
      cen <- .Call(wtheta:::C_healpix_centres, fine, TRUE, p,
                   wtheta:::rot_from_map(m), 1L)
      # angular distance in degrees (haversine): order-24 sub-pixels are
      # 12.6 mas (3.5e-6 degrees) wide, rounding below 1e-12 degrees
      h <- sinpi((r$dec - cen[[2L]]) / 360)^2 + cospi(r$dec / 180) *
        cospi(cen[[2L]] / 180) * sinpi((r$ra - cen[[1L]]) / 360)^2
      expect_lt(max(2 * asin(sqrt(h)) * 180 / pi), 1e-11)
      # each sub-pixel lies in its map pixel
      coarse <- floor(p / 4^(fine_order - log2(m$nside)))
      expect_true(all(coarse %in% wtheta:::map_nested_pixels(m)))
    }
  }
})

test_that("lookups and draws on maps of uneven runs of pixels", {
  if (!wtheta:::healpix_available()) skip("built without chealpix")
  # single pixels, a long run, pixels 0 and the last, pairs: the run
  # tables' buckets then hold many runs or parts of one
  nside <- 32
  npix <- 12 * nside^2
  set.seed(11)
  pix <- sort(unique(c(0, 1, npix - 1, 100:3000, sample(npix, 800) - 1,
                       seq(5000, 9000, by = 7))))
  for (ordering in c("NESTED", "RING")) {
    m <- wtheta:::make_healpix_map(nside, ordering, "C", as.double(pix),
                                   rep(1, length(pix)), "test", "test")
    # lookups against %in% on chealpix's own pixel numbers
    u <- random_catalog(50000, ra_range = c(0, 360), dec_range = c(-90, 90),
                        seed = 2)
    p <- .Call(wtheta:::C_healpix_pixels, nside, ordering == "NESTED",
               u$ra, u$dec, NULL, 1L)
    expect_identical(in_footprint(u, m), p %in% pix)
    # draws: every pixel reached, counts uniform (chi-squared)
    n <- 2e5
    r <- random_catalog(n, mask = m, seed = 6)
    q <- .Call(wtheta:::C_healpix_pixels, nside, ordering == "NESTED",
               r$ra, r$dec, NULL, 2L)
    k <- tabulate(match(q, pix), length(pix))
    expect_false(anyNA(match(q, pix)))
    e <- n / length(pix)
    expect_gt(stats::pchisq(sum((k - e)^2 / e), length(k) - 1,
                            lower.tail = FALSE), 1e-3)
    expect_true(all(in_footprint(r, m)))
  }
})

test_that("without chealpix, HEALPix functions say what to install", {
  if (wtheta:::healpix_available()) skip("built with chealpix")
  expect_error(healpix_map(data.frame(ra = 1, dec = 1), nside = 4),
               "libchealpix-dev")
  m <- structure(list(), class = "healpix_map")
  expect_error(random_catalog(10, mask = m), "libchealpix-dev")
})


test_that("a healpix_map built or edited by hand is checked in R, naming the field", {
  skip_if_not(wtheta:::healpix_available(), "built without chealpix")
  sim <- simulate_catalog(300, seed = 31)
  m <- healpix_map(sim, nside = 16)
  expect_identical(sum(in_footprint(sim, m)), 300L)
  bad <- m
  bad$nside <- 12
  expect_error(in_footprint(sim, bad),
               "`mask$nside` is 12 (numeric); it must be a power of two from 1 to 8192.",
               fixed = TRUE)
  hand <- structure(list(nside = 3, ordering = "NESTED", coordsys = "C",
                         pixel = 1, value = 1), class = "healpix_map")
  expect_error(random_catalog(10, mask = hand, seed = 1),
               "`mask$nside` is 3 (numeric); it must be a power of two", fixed = TRUE)
  bad <- m
  bad$ordering <- "nest"
  expect_error(in_footprint(sim, bad), "`mask$ordering` must be \"NESTED\" or \"RING\"",
               fixed = TRUE)
  bad <- m
  bad$pixel[1L] <- 12 * 16^2
  expect_error(in_footprint(sim, bad),
               "`mask$pixel` must be pixel numbers from 0 to 3,071 (nside 16), increasing",
               fixed = TRUE)
  bad <- m
  bad$value <- bad$value[-1L]
  expect_error(random_catalog(10, mask = bad, seed = 1),
               "`mask$value` must be", fixed = TRUE)
  bad <- m
  bad$coordsys <- NULL
  expect_error(in_footprint(sim, bad), "`mask$coordsys` must be \"C\"", fixed = TRUE)
})

# ---- issue 35: maps written for other tools ----

test_that("write_healpix_map() writes maps that read_healpix_map() and healpy read", {
  skip_if_no_healpix()
  skip_if_no_fits()
  p <- hp_points()
  m <- healpix_map(p, nside = 16)                 # RING
  mn <- healpix_map(p, nside = 16, ordering = "NESTED")
  keep <- c("nside", "ordering", "coordsys", "pixel", "value")
  for (map in list(m, mn)) {
    for (partial in c(FALSE, TRUE)) {
      f <- paste0(withr_tempfile(), ".fits")
      write_healpix_map(map, f, partial = partial)
      expect_identical(read_healpix_map(f)[keep], map[keep],
                       info = paste(map$ordering, partial))
      unlink(f)
    }
  }
  # a map read from a galactic file keeps its frame
  g <- read_healpix_map(hp_fixture("galactic.fits"))
  f <- paste0(withr_tempfile(), ".fits")
  on.exit(unlink(f), add = TRUE)
  write_healpix_map(g, f)
  expect_identical(read_healpix_map(f)[keep], g[keep])
  expect_error(write_healpix_map(m, f), "exists; use `overwrite = TRUE`")
  expect_error(write_healpix_map(p, f), "`m` must be a healpix_map")
  expect_error(write_healpix_map(m, sub("fits$", "csv", f)),
               "must end in .fits")
  # healpy reads both forms: pixels, values and ordering as written
  py <- "/usr/bin/python3"
  if (!file.exists(py) ||
      system2(py, c("-c", shQuote("import healpy")), stdout = FALSE,
              stderr = FALSE) != 0) skip("no python3-healpy")
  run <- function(code) {
    out <- system2(py, c("-c", shQuote(code)), stdout = TRUE, stderr = TRUE)
    expect_null(attr(out, "status"))
    out
  }
  write_healpix_map(mn, f, overwrite = TRUE)
  out <- run(paste0(
    "import healpy as hp, numpy as np; ",
    "m, h = hp.read_map('", f, "', h=True, nest=None); h = dict(h); ",
    "k = np.nonzero(m)[0]; ",
    "print(h['ORDERING'], hp.get_nside(m), len(m), ",
    "' '.join(str(int(i)) for i in k), '|', ",
    "' '.join(repr(float(v)) for v in m[k]))"))
  parts <- strsplit(out[length(out)], " | ", fixed = TRUE)[[1]]
  head <- strsplit(parts[1], " ")[[1]]
  expect_identical(head[1:3], c("NESTED", "16", "3072"))
  expect_identical(as.numeric(head[-(1:3)]), mn$pixel)
  expect_identical(as.numeric(strsplit(parts[2], " ")[[1]]), mn$value)
  # healpy's RING read of the NESTED file reorders: the same pixels as m's
  out <- run(paste0("import healpy as hp, numpy as np; ",
                    "m = hp.read_map('", f, "'); ",
                    "print(' '.join(str(int(i)) for i in np.nonzero(m)[0]))"))
  expect_identical(as.numeric(strsplit(out[length(out)], " ")[[1]]), m$pixel)
  write_healpix_map(m, f, partial = TRUE, overwrite = TRUE)
  out <- run(paste0(
    "import healpy as hp, numpy as np; ",
    "m = hp.read_map('", f, "', partial=True); k = np.nonzero(m != hp.UNSEEN)[0]; ",
    "print(' '.join(str(int(i)) for i in k), '|', ",
    "' '.join(repr(float(v)) for v in m[k]))"))
  parts <- strsplit(out[length(out)], " | ", fixed = TRUE)[[1]]
  expect_identical(as.numeric(strsplit(parts[1], " ")[[1]]), m$pixel)
  expect_identical(as.numeric(strsplit(parts[2], " ")[[1]]), m$value)
})
