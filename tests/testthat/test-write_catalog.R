# write_catalog(): FITS tables and CSV files that read_catalog() and other
# tools (astropy, when present) read back identical

py_has <- function(module) {
  py <- "/usr/bin/python3"
  file.exists(py) && system2(py, c("-c", shQuote(paste("import", module))),
                             stdout = FALSE, stderr = FALSE) == 0
}

cat_with_columns <- function() {
  ran <- random_catalog(500, seed = 1)
  ran$w <- seq(0.1, 2, length.out = 500) / 3     # not short decimals
  ran$id <- 500:1
  ran$name <- paste0("gal", seq_len(500))
  ran$w[7] <- NA
  ran
}

test_that("write_catalog() writes FITS that read_catalog() reads back identical", {
  skip_if_no_fits()
  x <- cat_with_columns()
  f <- paste0(withr_tempfile(), ".fits")
  on.exit(unlink(f), add = TRUE)
  expect_identical(write_catalog(x, f), f)
  back <- read_catalog(f, columns = c("ra", "dec", "w", "id", "name"))
  expect_identical(back$ra, x$ra)
  expect_identical(back$dec, x$dec)
  expect_identical(back$w, x$w)
  expect_identical(back$id, x$id)
  expect_identical(back$name, x$name)
  info <- wtheta:::fits_read_table(f, hdu = "CATALOG")
  expect_identical(names(info$columns), c("ra", "dec", "w", "id", "name"))
  # a wtheta() count from the file is that of the data frame
  b <- theta_bins(1, 10, n = 3)
  expect_identical(pair_counts(back, bins = b, threads = 1,
                               progress = FALSE)$counts,
                   pair_counts(x, bins = b, threads = 1,
                               progress = FALSE)$counts)
  expect_error(write_catalog(x, f), "exists; use `overwrite = TRUE`")
  expect_silent(write_catalog(x[1:3, ], f, overwrite = TRUE))
  expect_identical(nrow(read_catalog(f)), 3L)
  skip_if_not(py_has("astropy"), "no python3-astropy")
  out <- system2("/usr/bin/python3", c("-c", shQuote(paste0(
    "from astropy.io import fits; h = fits.open('", f, "', checksum=True); ",
    "h.verify('exception'); t = h['CATALOG']; ",
    "print(t.columns['ra'].unit, t.columns['dec'].unit, t.columns['id'].format, ",
    "repr(float(t.data['ra'][1])), t.data['id'][2], t.data['name'][0])"))),
    stdout = TRUE, stderr = TRUE)
  expect_null(attr(out, "status"))
  got <- strsplit(out, " ")[[1]]
  expect_identical(got[1:3], c("deg", "deg", "1J"))
  expect_identical(as.numeric(got[4]), x$ra[2])
  expect_identical(got[5:6], c(as.character(x$id[3]), "gal1"))
})

test_that("write_catalog() writes CSV that read_catalog() reads back identical", {
  x <- cat_with_columns()
  f <- paste0(withr_tempfile(), ".csv")
  on.exit(unlink(f), add = TRUE)
  write_catalog(x, f)
  expect_identical(readLines(f, n = 1L), "ra,dec,w,id,name")
  back <- read_catalog(f, columns = c("ra", "dec", "w", "id", "name"))
  expect_identical(back$ra, x$ra)
  expect_identical(back$dec, x$dec)
  expect_identical(back$w, x$w)
  expect_identical(back$id, as.double(x$id))
  expect_identical(back$name, x$name)
  # utils::read.csv() reads it too
  r <- utils::read.csv(f)
  expect_identical(r$w, x$w)
  # format = overrides the extension
  g <- paste0(withr_tempfile(), ".txt")
  on.exit(unlink(g), add = TRUE)
  write_catalog(x, g, format = "csv")
  expect_identical(read_catalog(g)$ra, x$ra)
})

test_that("write_catalog() refuses what it cannot write, naming the column", {
  x <- cat_with_columns()
  f <- paste0(withr_tempfile(), ".csv")
  expect_error(write_catalog(x, paste0(withr_tempfile(), ".dat")),
               "must end in .fits (or .fit, .fts) or .csv, or `format`",
               fixed = TRUE)
  expect_error(write_catalog(list(ra = 1, dec = 2), f),
               "`x` must be a data frame with columns ra and dec")
  expect_error(write_catalog(data.frame(x = 1), f), "`x` has no column \"ra\"")
  expect_error(write_catalog(transform(x, dec = dec + 100), f),
               "declination")
  expect_error(write_catalog(transform(x, ok = TRUE), f),
               "`x` column \"ok\" is logical; write_catalog() writes numbers",
               fixed = TRUE)
  expect_error(write_catalog(transform(x, when = Sys.Date()), f),
               "`x` column \"when\" is of class Date", fixed = TRUE)
  y <- x
  y$id[4] <- NA
  expect_error(write_catalog(y, f), "`x` column \"id\" has NA in row 4",
               fixed = TRUE)
  y <- x
  y$name[5] <- "a,b"
  expect_error(write_catalog(y, f),
               "`x` column \"name\" has text with a comma, quote or line break (row 5)",
               fixed = TRUE)
  expect_error(write_catalog(x, f, format = "hdf5"), "`format` must be one of")
  expect_false(file.exists(f))
})
