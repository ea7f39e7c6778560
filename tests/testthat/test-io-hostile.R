# Hostile input, round three (issue 31): the FITS reader against files
# that lie, break or change while they are read; fixtures from
# tools/make-hostile-fits-fixtures.py (astropy, then damaged).

test_that("a FITS file that shrinks while it is read is an error naming it, not a crash", {
  skip_if_no_fits()
  # 300,000 rows of ra, dec: several 4 MB chunks; the test hook truncates
  # the file after the first chunk, as another process would
  res <- run_in_child_io(c(
    "library(wtheta)",
    "f <- tempfile(fileext = '.fits')",
    "n <- 3e5",
    "cat0 <- data.frame(ra = seq(0, 10, length.out = n), dec = seq(-5, 5, length.out = n))",
    "wtheta:::write_fits_result(f, 'CAT', cat0, list(), NULL, NULL, 'cat')",
    "x <- read_catalog(f)",
    "stopifnot(identical(x$ra, cat0$ra))",
    "options(wtheta.test_fits_shrink = 30000)",
    "e <- tryCatch(read_catalog(f), error = function(e) conditionMessage(e))",
    "cat('MESSAGE:', e, '\\n')",
    "stopifnot(is.character(e), grepl(f, e, fixed = TRUE))"))
  expect_identical(res$status, 0L, info = res$output)
  expect_match(res$output, "shrank from [0-9]+ to 30000 bytes while it was read")
})

test_that("a time limit during a count reaches tryCatch(error = ) as R raised it", {
  set.seed(3)
  a <- random_catalog(3e5)
  e <- tryCatch({
    setTimeLimit(elapsed = 0.5, transient = TRUE)
    # on the CPU, one thread: seconds of counting, polled between chunks
    pair_counts(a, bins = theta_bins(0.01, 10, n = 10), threads = 1,
                backend = "cpu")
  }, error = function(e) e, interrupt = function(i) "interrupt")
  setTimeLimit()
  expect_s3_class(e, "error")
  expect_match(conditionMessage(e), "elapsed time limit")
})

test_that("random_catalog(mask = ) passes a time limit through, without .Call internals", {
  skip_if_not(wtheta:::healpix_available())
  m <- healpix_map(random_catalog(1000, seed = 1), nside = 16)
  e <- tryCatch({
    setTimeLimit(elapsed = 0.2, transient = TRUE)
    random_catalog(3e7, mask = m, seed = 1)
  }, error = function(e) e, interrupt = function(i) "interrupt")
  setTimeLimit()
  expect_s3_class(e, "error")
  expect_match(conditionMessage(e), "elapsed time limit")
  expect_null(conditionCall(e))
  # an internal error of the boundary names no .Call either
  e <- tryCatch(.Call(wtheta:::C_healpix_pixels, 0, TRUE, 1, 1, NULL, 1L),
                error = function(e) e)
  expect_match(conditionMessage(e), "bad nside")
  expect_null(conditionCall(e))
})

test_that("a flipped byte in a result file is found by its checksums", {
  skip_if_no_fits()
  set.seed(4)
  counts <- pair_counts(random_catalog(300), bins = theta_bins(1, 20, n = 4),
                        threads = 1)
  f <- tempfile(fileext = ".fits")
  write_pair_counts(counts, f)
  expect_identical(read_pair_counts(f)$counts, counts$counts)
  b <- readBin(f, "raw", file.size(f))
  # the first byte of the PAIR_COUNTS table's data: theta_lo of bin 1
  # the END card of HDU 1's header (at a card boundary), its data after it
  ends <- grepRaw("END     ", b, offset = 2881, fixed = TRUE, all = TRUE)
  end1 <- ends[(ends - 1) %% 80 == 0][1]
  data_at <- ceiling(end1 / 2880) * 2880
  # a byte of the data unit's fill (after the 4 rows, before the next
  # 2880-byte block): DATASUM covers it, the table does not
  fill <- b
  fill[data_at + 2800] <- as.raw(bitwXor(as.integer(fill[data_at + 2800]), 1L))
  writeBin(fill, f)
  expect_error(read_pair_counts(f),
               "HDU 1 \\(PAIR_COUNTS\\) fails its DATASUM check.*verify = FALSE")
  # the opt-out reads it (the table and R_OBJECT are intact)
  expect_identical(read_pair_counts(f, verify = FALSE)$counts, counts$counts)
  # a byte of the table's data: the checksum finds it, and without the
  # checksum the table no longer matches the counts stored with it
  b[data_at + 20] <- as.raw(bitwXor(as.integer(b[data_at + 20]), 1L))
  writeBin(b, f)
  expect_error(read_pair_counts(f),
               "HDU 1 \\(PAIR_COUNTS\\) fails its DATASUM check.*verify = FALSE")
  expect_error(read_pair_counts(f, verify = FALSE),
               "but the pair counts stored with it say.*it was edited")
  w <- wtheta(random_catalog(300), random_catalog(600),
              theta_bins(1, 20, n = 4), threads = 1)
  g <- tempfile(fileext = ".fits")
  write_wtheta(w, g)
  b <- readBin(g, "raw", file.size(g))
  b[length(b) - 100] <- as.raw(bitwXor(as.integer(b[length(b) - 100]), 4L))
  writeBin(b, g)
  expect_error(read_wtheta(g), "fails its DATASUM check")
  expect_error(read_wtheta(g, verify = NA), "`verify` must be TRUE or FALSE")
  # a file without CHECKSUM keywords (astropy wrote none) reads as before
  expect_s3_class(read_wtheta(fixture("foreign-wtheta.fits")), "wtheta")
})

test_that("64-bit integer columns are exact: integer64, or doubles within 2^53, never rounded", {
  skip_if_no_fits()
  f <- fixture("int64.fits.gz")
  cols <- c(ra = "RA", dec = "DEC", id = "TARGETID", small = "SMALL",
            ulow = "ULOW")
  if (requireNamespace("bit64", quietly = TRUE)) {
    x <- read_catalog(f, columns = cols)
    expect_s3_class(x$id, "integer64")
    expect_identical(length(unique(x$id)), 5000L)
    expect_identical(as.character(x$id[c(1, 5000)]),
                     c("4611686018427387904", "4611686018427392903"))
    expect_identical(as.character(x$ulow[2]), "4611686018427387905")
    expect_true(is.na(x$small[4]))
    expect_identical(as.character(x$small[5]), as.character(4000 - 2^40))
  }
  # without bit64 (the fallback, forced): doubles when exact, else an error
  tab <- wtheta:::fits_read_table(f, columns = c("SMALL"))
  expect_identical(tab$columns$SMALL[c(1, 4, 5)], c(-2^40, NA, 4000 - 2^40))
  expect_error(wtheta:::fits_read_table(f, columns = "TARGETID"),
               "column \"TARGETID\" holds 64-bit integers beyond 2\\^53")
  expect_error(wtheta:::int64_column(
    .Call(wtheta:::C_fits_read, path.expand(f), 1L, 2L, NULL)[[1]],
    "TARGETID", f, "double"), "beyond 2\\^53")
  # unsigned 64-bit values above 2^63 - 1: no integer64 holds them
  expect_error(read_catalog(f, columns = c(ra = "RA", dec = "DEC", u = "UHIGH")),
               "UHIGH.*unsigned 64-bit.*above 2\\^63 - 1 at row 1")
})

test_that("claimed sizes are checked against the file before allocating", {
  skip_if_no_fits()
  expect_error(read_catalog(fixture("hostile-rows.fits")),
               "claims NAXIS2 = 2000000000 rows of NAXIS1 = 16 bytes .*holds only 2880 bytes")
  skip_if_not(wtheta:::healpix_available())
  expect_error(read_healpix_map(fixture("hostile-healpix.fits")),
               "claims NAXIS2 = 2000000 rows of NAXIS1 = 4096 bytes")
})

test_that("failed reads close their files: 400 failures, then a good read", {
  skip_if_no_fits()
  skip_if_not(dir.exists("/proc/self/fd"))
  fds <- function() length(list.files("/proc/self/fd"))
  before <- fds()
  bad <- c("hostile-rows.fits", "hostile-tform.fits", "hostile-ascii.fits",
           "bad-naxis2.fits")
  for (k in 1:400) {
    try(read_catalog(fixture(bad[k %% 4 + 1])), silent = TRUE)
  }
  expect_lte(fds() - before, 2)
  expect_identical(nrow(read_catalog(fixture("minutes.fits"))), 300L)
})

test_that("broken headers say what is wrong, in which card and HDU", {
  skip_if_no_fits()
  expect_error(read_catalog(fixture("hostile-tform.fits")),
               "HDU 1's header is broken at card 10, TFORM1 .*99999999999999999999D")
  expect_error(read_catalog(fixture("hostile-tfields.fits")),
               "HDU 1's header is broken at card 8, TFIELDS .*TFIELDS = 2x")
  expect_error(read_catalog(fixture("hostile-naxis2.fits")),
               "HDU 1's header is broken at card 5, NAXIS2 .*-5")
  expect_error(read_catalog(fixture("hostile-naxis2.fits"), hdu = 1),
               "HDU 1's header is broken at card 5")
  expect_error(read_catalog(fixture("image-only.fits")), "no table extension")
})

test_that("a bad number is reported at its own row", {
  skip_if_no_fits()
  expect_error(read_catalog(fixture("hostile-ascii.fits")),
               "column 1 \\(\"RA\"\\) at row 7:")
  f <- tempfile(fileext = ".txt")
  lines <- sprintf("%d %d", 1:5000, 1:5000)
  lines[4321] <- "12.3x4 5"
  writeLines(lines, f)
  expect_error(read_catalog(f), "line 4321")
})
