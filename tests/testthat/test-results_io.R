# Results written and read back: write_wtheta() and read_wtheta(), CSV and
# FITS.

test_that("write_wtheta() and read_wtheta() round-trip exactly, CSV and FITS", {
  set.seed(3)
  x <- random_catalog(250)
  y <- random_catalog(400)
  w <- wtheta(x, y, theta_bins(1, 20, n = 4), error = "jackknife",
              n_patches = 4, threads = 1)
  d <- tempfile()
  dir.create(d)
  on.exit(unlink(d, recursive = TRUE), add = TRUE)
  f <- file.path(d, "w.csv")
  expect_identical(write_wtheta(w, f), f)
  expect_identical(read_wtheta(f), w)
  expect_true(all.equal(read_wtheta(f), w))
  expect_true(file.exists(file.path(d, "w-cov.csv")))
  lines <- readLines(f)
  expect_true("# cov: w-cov.csv" %in% lines)
  expect_true("# ESTIMATR: LS" %in% lines)
  cov <- utils::read.csv(file.path(d, "w-cov.csv"))
  expect_equal(unname(as.matrix(cov)), unname(attr(w, "cov")), tolerance = 1e-15)
  expect_error(write_wtheta(w, f), "exists; use `overwrite = TRUE`")
  expect_error(write_wtheta(w, file.path(d, "w.txt")), "must end in .fits")
  expect_error(write_wtheta(data.frame(), file.path(d, "x.csv")),
               "`x` must be a result of wtheta()", fixed = TRUE)
  pc <- pair_counts(x, y, bins = theta_bins(1, 20, n = 4), threads = 1)
  write_pair_counts(pc, file.path(d, "pc.csv"))
  expect_identical(read_pair_counts(file.path(d, "pc.csv")), pc)
  pp <- attr(w, "pair_counts")$DR                  # with patch arrays
  write_pair_counts(pp, file.path(d, "pp.csv"))
  expect_identical(read_pair_counts(file.path(d, "pp.csv")), pp)
  expect_true(file.exists(file.path(d, "pp-patches.csv")))

  skip_if_no_fits()
  f <- file.path(d, "w.fits")
  write_wtheta(w, f)
  expect_identical(read_wtheta(f), w)
  tab <- wtheta:::fits_read_table(f, hdu = "WTHETA")
  expect_identical(tab$columns$w, w$w)
  kw <- tab$keywords
  expect_identical(kw$value[kw$name == "ESTIMATR"], "'LS      '")
  expect_identical(kw$value[kw$name == "N_RANDOM"], "400")
  expect_identical(kw$comment[kw$name == "N_RANDOM"],
                   "points in the random catalog")
  cv <- wtheta:::fits_read_image(f, "COV")
  expect_identical(cv, unname(attr(w, "cov")))
  expect_error(write_wtheta(w, f), "exists; use `overwrite = TRUE`")
  w2 <- w
  attr(w2, "n_random") <- 401L
  write_wtheta(w2, f, overwrite = TRUE)
  expect_identical(read_wtheta(f), w2)
  expect_identical(sort(list.files(d, all.files = TRUE, no.. = TRUE)),
                   sort(c("w.csv", "w-cov.csv", "w-attributes.rds",
                          "pc.csv", "pc-attributes.rds", "pp.csv",
                          "pp-patches.csv", "pp-attributes.rds", "w.fits")))
  write_pair_counts(pp, file.path(d, "pp.fits"))
  expect_identical(read_pair_counts(file.path(d, "pp.fits")), pp)
  pa <- wtheta:::fits_read_table(file.path(d, "pp.fits"), hdu = "PATCHES")
  expect_identical(as.vector(t(pa$columns$COUNTS)), as.vector(pp$patch_counts))
  expect_error(read_wtheta(fixture("galaxies.fits")),
               "has no R_OBJECT extension and its table (HDU 1) lacks the column(s) theta_lo, theta_hi, theta, DD, DR, RR of a w(theta) result",
               fixed = TRUE)
  expect_error(read_pair_counts(fixture("galaxies.fits")),
               "has no R_OBJECT extension: it was not written by wtheta")
})

test_that("astropy reads what write_wtheta() writes (when present)", {
  skip_if_no_fits()
  py <- "/usr/bin/python3"
  if (!file.exists(py) ||
      system2(py, c("-c", shQuote("import astropy")), stdout = FALSE,
              stderr = FALSE) != 0) skip("no python3-astropy")
  set.seed(5)
  w <- wtheta(random_catalog(200), random_catalog(300),
              theta_bins(1, 20, n = 3), threads = 1, error = "jackknife",
              n_patches = 3)
  f <- paste0(withr_tempfile(), ".fits")
  on.exit(unlink(f), add = TRUE)
  write_wtheta(w, f)
  out <- system2(py, c("-c", shQuote(paste0(
    "from astropy.io import fits; ",
    "h = fits.open('", f, "', checksum=True); ",
    "h.verify('exception'); t = h['WTHETA']; ",
    "print(t.header['ESTIMATR'], t.header['N_DATA'], h[0].header['ERRMETH'], ",
    "t.columns['theta'].unit, ",
    "' '.join(repr(float(v)) for v in t.data['w']), ",
    "' '.join(repr(float(v)) for v in h['COV'].data.ravel()))"))),
    stdout = TRUE, stderr = TRUE)
  expect_null(attr(out, "status"))     # no checksum or verify failure
  got <- strsplit(out, " ")[[1]]
  expect_identical(got[1:4], c("LS", "200", "jackknife", "deg"))
  expect_identical(as.numeric(got[5:7]), w$w)
  # row-major: [i, j] of astropy's array is cov[i, j] of R's
  expect_identical(as.numeric(got[-(1:7)]),
                   as.vector(t(unname(attr(w, "cov")))))
})

test_that("a FITS write that cannot be made is a clear error and leaves no file", {
  skip_if_no_fits()
  set.seed(2)
  w <- wtheta(random_catalog(100), random_catalog(150),
              theta_bins(1, 20, n = 3), threads = 1)
  d <- tempfile()
  dir.create(d)
  on.exit(unlink(d, recursive = TRUE), add = TRUE)
  expect_error(write_wtheta(w, file.path(d, "no", "w.fits")),
               paste0("cannot be written: its directory \"",
                      file.path(d, "no"), "\" does not exist."), fixed = TRUE)
  expect_error(write_wtheta(w, file.path(d, "no", "w.csv")),
               "does not exist.", fixed = TRUE)
  expect_identical(list.files(d, recursive = TRUE, all.files = TRUE), character())
  if (.Platform$OS.type == "unix") {
    ro <- file.path(d, "ro")
    dir.create(ro)
    Sys.chmod(ro, "0555")
    on.exit(Sys.chmod(ro, "0755"), add = TRUE, after = FALSE)
    if (file.access(ro, 2L) == 0L) {
      # root writes anywhere; /sys refuses even root, past the R checks:
      # cfitsio's failure, then no file
      if (dir.exists("/sys/kernel")) {
        expect_error(write_wtheta(w, "/sys/w.fits"),
                     "`file` \"/sys/w.fits\": cannot create the file (as \"/sys/.w.fits-",
                     fixed = TRUE)
        expect_false(any(grepl("w.fits", list.files("/sys", all.files = TRUE))))
      }
    } else {
      expect_error(write_wtheta(w, file.path(ro, "w.fits")),
                   "\" is not writable.", fixed = TRUE)
    }
    expect_identical(list.files(ro, all.files = TRUE, no.. = TRUE), character())
  }
  # an existing file is kept as it was when the write is refused
  f <- file.path(d, "w.fits")
  write_wtheta(w, f)
  before <- readBin(f, "raw", file.size(f))
  expect_error(write_wtheta(w, f), "exists")
  expect_identical(readBin(f, "raw", file.size(f)), before)
  expect_identical(list.files(d, all.files = TRUE, no.. = TRUE), c("ro", "w.fits")[
    c(dir.exists(file.path(d, "ro")), TRUE)])
})

test_that("without cfitsio, writing FITS is an error that says what to install", {
  if (wtheta:::fits_available()) skip("built with cfitsio")
  w <- wtheta(random_catalog(50, seed = 1), random_catalog(80, seed = 2),
              theta_bins(1, 20, n = 2), threads = 1)
  f <- paste0(tempfile(), ".fits")
  expect_error(write_wtheta(w, f),
               "writing FITS needs wtheta built with cfitsio. Install it (Debian/Ubuntu: apt-get install libcfitsio-dev pkg-config) and reinstall wtheta, or write a .csv file.",
               fixed = TRUE)
  expect_false(file.exists(f))
})

test_that("read_wtheta() rebuilds a result from a FITS table another tool wrote", {
  skip_if_no_fits()
  # made by astropy (tools/make-fits-fixtures.py); expected values beside
  want <- utils::read.csv(fixture("foreign-wtheta.csv"))
  cov <- unname(as.matrix(utils::read.csv(fixture("foreign-wtheta-cov.csv"))))
  w <- read_wtheta(fixture("foreign-wtheta.fits"))
  expect_s3_class(w, "wtheta")
  expect_named(w, c("theta_lo", "theta_hi", "theta", "DD", "DR", "RR", "w",
                    "w_err"))
  for (nm in names(want)) expect_identical(w[[nm]], want[[nm]])
  expect_identical(unname(attr(w, "cov")), cov)     # [i, j] kept, not transposed
  expect_identical(rownames(attr(w, "cov")), format(want$theta))
  expect_identical(unname(as.matrix(wtheta_cov(w))), cov)
  expect_identical(attr(w, "estimator"), "LS")
  expect_identical(attr(w, "type"), "auto")
  expect_identical(attr(w, "n_data"), 1000L)
  expect_identical(attr(w, "n_random"), 5000L)
  expect_identical(attr(w, "error"), "jackknife")
  expect_identical(attr(w, "n_patches"), 10L)
  expect_false(attr(w, "self_pairs"))
  expect_identical(attr(w, "edges"), c(want$theta_lo, want$theta_hi[4]))
  expect_match(attr(w, "source"), "FITS table without R_OBJECT (HDU 1)",
               fixed = TRUE)
  expect_null(attr(w, "pair_counts"))               # not in the file: absent
  expect_output(print(w), "Landy-Szalay")
  # single precision, no keywords, another EXTNAME, COV as a table
  w32 <- read_wtheta(fixture("foreign-wtheta-f32.fits"))
  expect_named(w32, c("theta_lo", "theta_hi", "theta", "DD", "DR", "RR", "w"))
  expect_identical(w32$w, as.double(as.vector(
    readBin(writeBin(want$w, raw(), size = 4), "double", 4, size = 4))))
  expect_identical(unname(attr(w32, "cov")), cov)
  expect_identical(attr(w32, "type"), "auto")
  expect_null(attr(w32, "estimator"))
  expect_identical(attr(w32, "error"), "unknown")   # a COV, no ERRMETH
  expect_null(attr(w32, "n_data"))
  expect_output(print(summary(w32)),
                "unknown estimator\n  data:     ? points; randoms: ? points",
                fixed = TRUE)
  # written again by wtheta, it comes back identical
  f <- paste0(tempfile(), ".fits")
  on.exit(unlink(f), add = TRUE)
  write_wtheta(w, f)
  expect_identical(read_wtheta(f), w)
})
