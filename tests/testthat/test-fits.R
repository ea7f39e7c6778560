# FITS tables written by astropy (tools/make-fits-fixtures.py) against the
# values the same script wrote beside them as CSV.

expected <- function(name) {
  utils::read.csv(fixture(name), stringsAsFactors = FALSE)
}

test_that("every column type of an astropy table reads as written", {
  skip_if_no_fits()
  want <- expected("galaxies.csv")
  g <- read_catalog(fixture("galaxies.fits"),
                    columns = c("RA", "DEC", w = "W", "Z_PHOT", id = "ID",
                                "FLAG", "NAME", "SHAPE", "SMALL"))
  expect_named(g, c("ra", "dec", "w", "Z_PHOT", "id", "FLAG", "NAME", "SHAPE",
                    "SMALL"))
  expect_equal(g$ra, want$ra, tolerance = 1e-15)
  expect_equal(g$dec, want$dec, tolerance = 1e-15)
  expect_equal(g$w, want$w, tolerance = 1e-15)          # float32 as double
  expect_identical(is.na(g$Z_PHOT), is.na(want$z_phot)) # NaN is NA
  expect_identical(which(is.na(g$Z_PHOT)), 6L)
  expect_equal(g$Z_PHOT, want$z_phot, tolerance = 1e-15)
  # K: 64-bit integers, exact: integer64 where bit64 is installed
  if (requireNamespace("bit64", quietly = TRUE)) {
    expect_s3_class(g$id, "integer64")
    expect_identical(as.double(g$id), as.double(want$id))
  } else {
    expect_identical(g$id, as.double(want$id))          # within 2^53
  }
  expect_identical(g$FLAG, want$flag)
  expect_identical(g$NAME, want$name)
  expect_identical(g$SMALL, want$small)                 # TNULL is NA
  expect_true(is.matrix(g$SHAPE))                       # 4D: a matrix column
  expect_identical(dim(g$SHAPE), c(24L, 4L))
  expect_equal(unname(g$SHAPE),
               unname(as.matrix(want[, paste0("shape", 0:3)])),
               tolerance = 1e-15)
  # the default: RA/DEC found by name, nothing else
  expect_identical(read_catalog(fixture("galaxies.fits")), g[, 1:2])
  # gzip-compressed FITS gives the same
  expect_identical(read_catalog(fixture("galaxies.fits.gz")), g[, 1:2])
})

test_that("scaled and unsigned integer columns are applied", {
  skip_if_no_fits()
  want <- expected("scaled.csv")
  s <- read_catalog(fixture("scaled.fits"),
                    columns = c("ra", "dec", "u16", "u32"))
  expect_equal(s$ra, want$ra, tolerance = 1e-15)
  expect_equal(s$dec, want$dec, tolerance = 1e-15)
  expect_identical(s$U16, as.integer(want$u16))
  expect_identical(s$U32, as.double(want$u32))
})

test_that("units come from TUNIT; float32 arcmin equals the text copy", {
  skip_if_no_fits()
  f <- read_catalog(fixture("minutes-f32.fits"))          # ALPHA_J2000...
  t <- read_catalog(fixture("minutes-f32.txt"), units = "arcmin")
  expect_identical(f, t)
  expect_identical(read_catalog(fixture("minutes-f32.fits"), units = "arcmin"),
                   t)
  expect_error(read_catalog(fixture("minutes-f32.fits"), units = "deg"),
               "`units` is \"deg\" but column \"ALPHA_J2000\" of `file` .* has TUNIT \"arcmin\"")
})

test_that("counts from a FITS copy equal counts from the text catalog", {
  skip_if_no_fits()
  f <- read_catalog(fixture("minutes.fits"))
  t <- read_catalog(fixture("minutes.txt"), units = "arcmin")
  expect_identical(f, t)
  b <- theta_bins(0.05, 10, n = 12, log = TRUE)
  expect_identical(pair_counts(f, bins = b, threads = 1)$counts,
                   pair_counts(t, bins = b, threads = 1)$counts)
})

test_that("the table is found by number, by EXTNAME, or as the first table", {
  skip_if_no_fits()
  want <- expected("second-ext.csv")
  r <- read_catalog(fixture("second-ext.fits"))
  expect_equal(r$dec, want$dec, tolerance = 1e-15)
  expect_identical(read_catalog(fixture("second-ext.fits"), hdu = 2), r)
  expect_identical(read_catalog(fixture("second-ext.fits"), hdu = "RANDOMS"), r)
  expect_error(read_catalog(fixture("second-ext.fits"), hdu = 1),
               "HDU 1 (MASK) is an image, not a table", fixed = TRUE)
  expect_error(read_catalog(fixture("second-ext.fits"), hdu = 3),
               "has 3 HDU(s), numbered 0 to 2; there is no HDU 3", fixed = TRUE)
  expect_error(read_catalog(fixture("second-ext.fits"), hdu = "NOPE"),
               "no HDU with EXTNAME \"NOPE\"", fixed = TRUE)
  expect_error(read_catalog(fixture("second-ext.fits"), hdu = -1),
               "`hdu` must be NULL, an HDU number")
  expect_error(read_catalog(fixture("second-ext.fits"), columns = c("ALPHA", "DELTA")),
               "`columns` names \"ALPHA\", which is not among the columns of `file`: ra, dec.",
               fixed = TRUE)
})

test_that("nulls in positions, variable-length arrays and images are refused", {
  skip_if_no_fits()
  expect_error(read_catalog(fixture("null-dec.fits")),
               "`file` column \"DEC\" has a non-finite value (NA) in row 3.",
               fixed = TRUE)
  expect_error(read_catalog(fixture("null-dec.fits"),
                            columns = c("RA", "DEC", "SPEC")),
               "column \"SPEC\" (TFORM PD(4)) is a variable-length array",
               fixed = TRUE)
  expect_error(read_catalog(fixture("image-only.fits")),
               "holds no table extension (1 HDU(s), all images)", fixed = TRUE)
  expect_error(read_catalog(fixture("galaxies.fits"), columns = c("RA", "NAME")),
               "column \"NAME\" (TFORM 8A) must hold one number per row to be dec",
               fixed = TRUE)
})

test_that("hostile FITS files give clear errors, never a crash (child process)", {
  skip_if_no_fits()
  code <- sprintf('
    library(wtheta)
    for (f in c(%s)) {
      r <- tryCatch(read_catalog(f), error = function(e) conditionMessage(e))
      cat(basename(f), ":", if (is.character(r)) r else "READ", "\n")
    }', paste0('"', normalizePath(fixture(c("bad-truncated.fits",
      "bad-magic.fits", "bad-no-end.fits", "bad-naxis2.fits"))), '"',
      collapse = ", "))
  res <- run_in_child_io(code)
  expect_identical(res$status, 0L)
  out <- res$output
  # the rows the header claims are not in the file: refused on opening
  expect_match(out, "bad-truncated.fits : `file` .*: HDU 1's header claims NAXIS2 = 24 rows of NAXIS1 = 79 bytes \\(1896 bytes\\), but the file holds only 500 bytes")
  expect_match(out, "bad-magic.fits : `file` .* is not a text file: line 1 holds a NUL byte")
  expect_match(out, "bad-no-end.fits : `file` .*: cannot open the file: .*END")
  expect_match(out, "bad-naxis2.fits : `file` .*: HDU 1's header claims NAXIS2 = 100000 rows")
})

test_that("weights read from a FITS column reach wtheta()", {
  skip_if_no_fits()
  G <- read_catalog(fixture("galaxies.fits"), columns = c("RA", "DEC", weight = "W"))
  set.seed(4)
  R <- random_catalog(300, ra_range = c(0, 360), dec_range = c(-90, 90))
  b <- theta_bins(20, 120, n = 3)
  w1 <- wtheta(G, R, bins = b, weights = "weight", threads = 1)
  w2 <- wtheta(G[, c("ra", "dec")], R, bins = b,
               weights = list(data = G$weight), threads = 1)
  # bit for bit on the CPU; on a GPU (backend "auto") weighted sums follow
  # the order of its atomic adds
  expect_equal(w1$DD, w2$DD, tolerance = 1e-12)
  expect_equal(w1$w, w2$w, tolerance = 1e-12)
  expect_true(attr(w1, "weighted"))
})

test_that("the reference catalogs give the same counts from a FITS copy", {
  path <- shared_data("data_100k_arcmin.txt")
  skip_if_no_fits()
  t <- read_catalog(path, units = "arcmin")[1:5000, ]
  rownames(t) <- NULL
  f <- withr_tempfile()
  f <- paste0(f, ".fits")
  wtheta:::write_fits_result(f, "CAT", list(RA = t$ra, DEC = t$dec),
                              list(), NULL, NULL, "catalog")
  on.exit(unlink(f), add = TRUE)
  back <- read_catalog(f)
  expect_identical(back, t)
  b <- theta_bins(0.01, 5, n = 10, log = TRUE)
  expect_identical(pair_counts(back, bins = b, threads = 1)$counts,
                   pair_counts(t, bins = b, threads = 1)$counts)
})

test_that("fits_read_table() reads any table for other readers", {
  skip_if_no_fits()
  tab <- wtheta:::fits_read_table(fixture("galaxies.fits"), hdu = "GALAXIES",
                                  columns = c("ra", "shape"))
  expect_named(tab$columns, c("RA", "SHAPE"))
  expect_identical(tab$units, c(RA = "deg", SHAPE = ""))
  expect_identical(tab$n_rows, 24)
  expect_identical(tab$hdu, 1L)
  expect_true("TFIELDS" %in% tab$keywords$name)
})

test_that("without cfitsio, FITS is an error that says what to install", {
  if (wtheta:::fits_available()) skip("built with cfitsio")
  expect_error(read_catalog(fixture("galaxies.fits")),
               "is FITS, but wtheta was built without cfitsio. Install it (Debian/Ubuntu: apt-get install libcfitsio-dev pkg-config) and reinstall wtheta.",
               fixed = TRUE)
})
