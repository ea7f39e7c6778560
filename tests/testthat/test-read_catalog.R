test_that("whitespace files with and without a row count", {
  f <- withr_tempfile()
  writeLines(c("600 120", "  610.5\t121 ", "21599 -30"), f)
  cat <- read_catalog(f, units = "arcmin")
  expect_identical(cat$ra, c(600, 610.5, 21599) / 60)
  expect_identical(cat$dec, c(120, 121, -30) / 60)
  writeLines(c("3", "600 120", "610.5 121", "21599 -30"), f)
  expect_identical(read_catalog(f, units = "arcmin"), cat)
  writeLines(c("4", "600 120", "610.5 121", "21599 -30"), f)
  expect_error(read_catalog(f), "declares 4 rows on its first line but holds 3")
})

test_that("CSV with a header, column choice, comments and units", {
  f <- withr_tempfile()
  writeLines(c("# a comment", "id,dec,ra", "1,10,370", "", "2,-5,20"), f)
  cat <- read_catalog(f, columns = c("ra", "dec"))
  expect_identical(cat$ra, c(10, 20))
  expect_identical(cat$dec, c(10, -5))
  expect_identical(read_catalog(f, columns = c(3, 2)), cat)
  # names match case-insensitively
  expect_identical(read_catalog(f, columns = c("RA", "Dec")), cat)
  expect_error(read_catalog(f, columns = c("RA", "decl")),
               "`columns` names \"decl\", which is not among the columns of `file`: id, dec, ra.",
               fixed = TRUE)
  writeLines(c("0.5 0.25", "1 -0.5"), f)
  cat <- read_catalog(f, units = "rad")
  expect_equal(cat$dec, c(0.25, -0.5) * 180 / pi)
})

test_that("unreadable files name the line", {
  f <- withr_tempfile()
  writeLines(c("1 2", "3 4", "5 x", "7 8"), f)
  expect_error(read_catalog(f),
               "`file` line 3 has a value that is not a finite number in column 2: \"5 x\"")
  writeLines(c("1 2", "3"), f)
  expect_error(read_catalog(f), "`file` line 2 has 1 field\\(s\\)")
  writeLines(c("1 2", "3 95"), f)
  expect_error(read_catalog(f), "row 2 has 95")
  writeLines(character(), f)
  expect_error(read_catalog(f), "holds no data")
  expect_error(read_catalog(file.path(tempdir(), "no-such-file")),
               "does not exist")
  expect_error(read_catalog(f, units = "parsec"),
               "`units` must be NULL or one of \"deg\", \"arcmin\", \"arcsec\", \"rad\", not \"parsec\"",
               fixed = TRUE)
})

test_that("the reference catalogs read in both forms", {
  path <- shared_data("data_100k_arcmin.txt")
  cat <- read_catalog(path, units = "arcmin")
  expect_identical(nrow(cat), 100000L)
  expect_true(all(cat$ra >= 0 & cat$ra < 360 & abs(cat$dec) <= 90))
  f <- withr_tempfile()
  writeLines(c("100000", readLines(path)), f)
  expect_identical(read_catalog(f, units = "arcmin"), cat)
})

test_that("one named column besides the positions found by name", {
  f <- withr_tempfile()
  writeLines(c("RA,DEC,w", "10,20,1.5", "30,-40,0.5"), f)
  x <- read_catalog(f, columns = c(weight = "W"))
  expect_identical(x, data.frame(ra = c(10, 30), dec = c(20, -40),
                                 weight = c(1.5, 0.5)))
  g <- withr_tempfile()
  writeLines(c("10 20 1.5 a", "30 -40 0.5 b"), g)
  expect_identical(read_catalog(g, columns = c(weight = 3)), x)
  expect_error(read_catalog(g, columns = c(weight = 2)),
               "`columns` asks for a position column (1, 2) as weight.",
               fixed = TRUE)
  skip_if_no_fits()
  gal <- read_catalog(fixture("galaxies.fits"), columns = c(weight = "w"))
  ref <- utils::read.csv(fixture("galaxies.csv"))
  expect_identical(names(gal), c("ra", "dec", "weight"))
  expect_identical(gal$weight, ref$w)
})

# ---- issue 35: a TUNIT that units = cannot override ----

test_that("a FITS position column in hours is refused with what to do instead", {
  skip_if_no_fits()
  py <- astropy_python()
  f <- paste0(withr_tempfile(), ".fits")
  on.exit(unlink(f), add = TRUE)
  out <- system2(py, c("-c", shQuote(paste0(
    "from astropy.io import fits; import numpy as np; ",
    "c = [fits.Column(name='RA', format='D', unit='hourangle', ",
    "array=np.array([1.5, 2.0])), fits.Column(name='DEC', format='D', ",
    "unit='deg', array=np.array([10.0, 20.0]))]; ",
    "fits.BinTableHDU.from_columns(c).writeto('", f, "')"))),
    stdout = TRUE, stderr = TRUE)
  expect_null(attr(out, "status"))
  e <- tryCatch(read_catalog(f), error = conditionMessage)
  expect_match(e, "column \"RA\" has TUNIT \"hourangle\", which wtheta does not convert",
               fixed = TRUE)
  expect_match(e, "`units` cannot override a column's TUNIT", fixed = TRUE)
  expect_match(e, "(RA * 15 for hours)", fixed = TRUE)
  expect_false(grepl("give `units`", e, fixed = TRUE))
  # units = does not help, and says why
  expect_error(read_catalog(f, units = "deg"), "does not convert")
})
