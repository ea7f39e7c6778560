# read_catalog(flag =, ok =): rows kept by TreeCorr's rule (flag & ~ok ==
# 0), the same for text, FITS and HDF5 copies of one catalog
# (tools/make-hdf5-fixtures.py wrote the counts kept, computed by numpy).

kept <- utils::read.csv(fixture("txpipe-lens1-kept.csv"))
lens <- utils::read.csv(fixture("txpipe-lens1.csv"))

test_that("text rows are kept by the bit-mask rule, counted as numpy did", {
  for (i in seq_len(nrow(kept))) {
    ok <- kept$ok[i]
    expect_message(
      x <- read_catalog(fixture("txpipe-lens1.csv"),
                        columns = c("ra", "dec", "weight"), flag = "flag",
                        ok = ok),
      paste0("read_catalog\\(\\): ", 240 - kept$n_kept[i], " of 240 rows of ",
             "`file` \".*txpipe-lens1.csv\" dropped by `flag` \"flag\" ",
             "\\(kept: no bit set outside `ok` = ", ok, "\\)"))
    expect_identical(nrow(x), kept$n_kept[i], info = ok)
    expect_identical(attr(x, "flagged"), 240L - kept$n_kept[i])
    # the rows kept are those whose flag bits are all in ok, in file order
    keep <- bitwAnd(lens$flag, bitwNot(ok)) == 0
    expect_identical(x$ra, lens$ra[keep])
    expect_identical(x$weight, lens$weight[keep])
  }
  # ok = 0 keeps flag 0 only; ok = 3 keeps 1, 2 and 3 but not 8
  x <- suppressMessages(read_catalog(fixture("txpipe-lens1.csv"),
                                     columns = c("ra", "dec", "flag"),
                                     flag = "flag", ok = 3))
  expect_setequal(unique(x$flag), c(0, 1, 2, 3))
  # a flag by number, in a file without a header
  f <- withr_tempfile()
  writeLines(c("10 20 0", "30 -40 4", "50 5 1", "60 6 5"), f)
  y <- suppressMessages(read_catalog(f, flag = 3, ok = 1))
  expect_identical(y$ra, c(10, 50))
  expect_identical(attr(y, "flagged"), 2L)
})

test_that("FITS and HDF5 copies keep the same rows as the text", {
  t <- suppressMessages(read_catalog(fixture("txpipe-lens1.csv"),
                                     columns = c("ra", "dec", "weight"),
                                     flag = "flag", ok = 2))
  expect_identical(nrow(t), kept$n_kept[kept$ok == 2])
  b <- theta_bins(0.1, 10, n = 8, log = TRUE)
  if (wtheta:::fits_available()) {
    f <- suppressMessages(read_catalog(fixture("txpipe-lens1.fits"),
                                       columns = c("RA", "DEC", weight = "WEIGHT"),
                                       flag = "FLAG", ok = 2))
    expect_identical(f, t)
    # by column number too
    expect_identical(suppressMessages(read_catalog(
      fixture("txpipe-lens1.fits"), columns = c("RA", "DEC", weight = "WEIGHT"),
      flag = 4, ok = 2)), t)
  }
  skip_if_not_installed("hdf5r")
  h <- suppressMessages(read_catalog(fixture("txpipe.h5"), group = "/lens/bin_1",
                                     flag = "flag", ok = 2))
  expect_identical(h, t)
  expect_identical(suppressMessages(read_catalog(fixture("txpipe.h5"),
                                                 group = "/lens/bin_2", flag = "/lens/bin_1/flag",
                                                 ok = 2)) |>
                     tryCatch(error = conditionMessage),
                   paste0("`file` \"", fixture("txpipe.h5"), "\" datasets \"/lens/bin_2/ra\" ",
                          "(150 rows) and \"/lens/bin_1/flag\" (240 rows) differ in ",
                          "length; the columns of a catalog must have the same length."))
  expect_identical(pair_counts(h, bins = b, threads = 1)$counts,
                   pair_counts(t, bins = b, threads = 1)$counts)
})

test_that("flags of every type: logical, 64-bit, negative; others refused", {
  skip_if_not_installed("hdf5r")
  h <- fixture("hostile.h5")
  rd <- function(flag, ok = 0) {
    suppressMessages(read_catalog(h, group = "flags", flag = flag, ok = ok))
  }
  expect_identical(rd("bool")$ra, c(1, 2, 4))           # TRUE is 1
  expect_identical(rd("whole")$ra, c(0, 2))             # 0, 2, 0, 4, 1
  expect_identical(rd("whole", ok = 6)$ra, c(0, 1, 2, 3))
  # bit 40 and bit 0: beyond 32-bit integers
  expect_identical(rd("i64")$ra, c(0, 4))
  expect_identical(rd("i64", ok = 2^40)$ra, c(0, 1, 4))
  expect_identical(rd("i64", ok = 2^40 + 1)$ra, c(0, 1, 2, 3, 4))
  # -1 is every bit: dropped unless ok allows all 64 (it cannot: < 2^53)
  expect_identical(rd("neg")$ra, c(0, 3, 4))
  expect_identical(rd("neg", ok = 2^53 - 1)$ra, c(0, 2, 3, 4))
  expect_identical(attr(rd("neg"), "flagged"), 2L)
  expect_error(rd("frac"),
               "`flag` column \"/flags/frac\" of `file` \".*\" must hold integer flags; row 2 holds 0.5.")
  expect_error(rd("all"),
               "`flag` column \"/flags/all\" of `file` \".*\" flags all 5 rows")
  expect_error(rd("nothere"),
               "`flag` names \"/flags/nothere\": group \"/flags\" of `file` \".*\" holds no \"nothere\"; it holds: all, bool, dec, frac, i64, neg, ra, whole.")
  expect_error(rd(2), "`flag` must name a dataset of the HDF5 `file`")
})

test_that("no rows dropped: a message and flagged = 0 all the same", {
  f <- withr_tempfile()
  writeLines(c("ra,dec,flag", "10,20,0", "30,-40,0"), f)
  expect_message(x <- read_catalog(f, flag = "FLAG"),
                 "0 of 2 rows of `file` .* dropped by `flag` \"flag\"")
  expect_identical(attr(x, "flagged"), 0L)
  expect_null(attr(read_catalog(f), "flagged"))
})

test_that("bad flag arguments and columns name what is wrong", {
  f <- withr_tempfile()
  writeLines(c("ra,dec,flag,name", "10,20,0,a", "30,-40,1.5,b"), f)
  expect_error(read_catalog(f, flag = "FLAGS"),
               "`flag` names \"FLAGS\", which is not among the columns of `file` \".*\": ra, dec, flag, name.")
  expect_error(read_catalog(f, flag = "flag"),
               "`flag` column \"flag\" of `file` \".*\" must hold integer flags; row 2 holds 1.5.")
  expect_error(read_catalog(f, flag = "name"),
               "has a value that is not a finite number in column 4")
  expect_error(read_catalog(f, flag = 5), "`flag` is column 5 but `file` \".*\" has 4.")
  # a missing flag in text names its line
  h <- withr_tempfile()
  writeLines(c("ra,dec,flag", "10,20,0", "30,-40,", "1,2,0"), h)
  expect_error(read_catalog(h, flag = "flag"),
               "`file` line 3 has a value that is not a finite number in column 3: \"30,-40,\".",
               fixed = TRUE)
  expect_error(read_catalog(f, ok = 1),
               "`ok` is the flag bits allowed, for `flag`; give `flag` too (`ok` is 1 (numeric)).",
               fixed = TRUE)
  for (bad in list(-1, 0.5, 2^53, NA, "0", c(0, 1))) {
    expect_error(read_catalog(f, flag = "flag", ok = bad),
                 "`ok` must be a whole number from 0 to 2^53 - 1", fixed = TRUE)
  }
  for (bad in list(NA, "", 0, 1.5, c("a", "b"), TRUE)) {
    expect_error(read_catalog(f, flag = bad),
                 "`flag` must be NULL, a column name or a column number")
  }
  g <- withr_tempfile()
  writeLines(c("10 20 0", "30 -40 1"), g)
  expect_error(read_catalog(g, flag = "flag"),
               "`flag` names the column \"flag\" but `file` \".*\" has no header line; give its number.")
  skip_if_no_fits()
  expect_error(read_catalog(fixture("galaxies.fits"), flag = "NAME"),
               "`flag` column \"NAME\" of `file` \".*\" must hold one integer flag per row, not of type character.")
  expect_error(read_catalog(fixture("galaxies.fits"), flag = "SHAPE"),
               "must hold one integer flag per row, not a vector column.")
  expect_error(read_catalog(fixture("galaxies.fits"), flag = "SMALL"),
               "`flag` column \"SMALL\" of `file` \".*\" has no value \\(NA\\) in row 8.")
  expect_error(read_catalog(fixture("galaxies.fits"), flag = "NOPE"),
               "`flag` names \"NOPE\", which is not among the columns of `file` \".*\": RA, DEC, W")
  expect_error(read_catalog(fixture("galaxies.fits"), flag = 12),
               "`flag` is column 12, which is not among the columns")
  # a logical FITS column is a flag: TRUE rows dropped
  want <- utils::read.csv(fixture("galaxies.csv"))
  x <- suppressMessages(read_catalog(fixture("galaxies.fits"), flag = "FLAG"))
  expect_identical(x$ra, read_catalog(fixture("galaxies.fits"))$ra[!want$flag])
  expect_identical(attr(x, "flagged"), sum(want$flag))
})
