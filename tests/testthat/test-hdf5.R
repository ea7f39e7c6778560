# HDF5 catalogs written by h5py in TXPipe's layout (tools/make-hdf5-fixtures.py)
# against the values, text and FITS copies the same script wrote beside them.

expected <- function(name) {
  utils::read.csv(fixture(name), stringsAsFactors = FALSE)
}

test_that("TXPipe's layout reads to the points of its text and FITS copies", {
  skip_if_not_installed("hdf5r")
  want <- expected("txpipe-lens1.csv")
  h <- read_catalog(fixture("txpipe.h5"), group = "/lens/bin_1")
  expect_named(h, c("ra", "dec", "weight"))        # weight found by name
  expect_identical(h$ra, want$ra)
  expect_identical(h$dec, want$dec)
  expect_identical(h$weight, want$weight)
  t <- read_catalog(fixture("txpipe-lens1.csv"),
                    columns = c("ra", "dec", "weight"))
  expect_identical(h, t)
  # absolute paths, relative names, no leading slash, case: the same
  expect_identical(read_catalog(fixture("txpipe.h5"), columns = c(
    ra = "/lens/bin_1/ra", dec = "/lens/bin_1/dec",
    weight = "/lens/bin_1/weight")), h)
  expect_identical(read_catalog(fixture("txpipe.h5"), group = "lens/bin_1/",
                                columns = c("RA", "Dec", "weight")), h)
  # the randoms: no weight dataset, so ra and dec only
  r <- read_catalog(fixture("txpipe.h5"), group = "/randoms/bin_1")
  expect_named(r, c("ra", "dec"))
  expect_identical(r, read_catalog(fixture("txpipe-randoms1.csv")))
  skip_if_no_fits()
  f <- read_catalog(fixture("txpipe-lens1.fits"),
                    columns = c("RA", "DEC", weight = "WEIGHT"))
  expect_identical(h, f)
})

test_that("pair counts from the HDF5 catalog equal those of its copies", {
  skip_if_not_installed("hdf5r")
  h <- read_catalog(fixture("txpipe.h5"), group = "/lens/bin_1")
  r <- read_catalog(fixture("txpipe.h5"), group = "/randoms/bin_1")
  t <- read_catalog(fixture("txpipe-lens1.csv"),
                    columns = c("ra", "dec", "weight"))
  tr <- read_catalog(fixture("txpipe-randoms1.csv"))
  b <- theta_bins(0.1, 10, n = 8, log = TRUE)
  ch <- pair_counts(h, bins = b, threads = 1)$counts
  expect_gt(sum(ch), 0)
  expect_identical(ch, pair_counts(t, bins = b, threads = 1)$counts)
  expect_identical(pair_counts(h, r, bins = b, threads = 1)$counts,
                   pair_counts(t, tr, bins = b, threads = 1)$counts)
  wh <- pair_counts(h, bins = b, weights = "weight", threads = 1)
  wt <- pair_counts(t, bins = b, weights = "weight", threads = 1)
  expect_false(identical(wh$weighted, wh$counts))
  expect_identical(wh$weighted, wt$weighted)
  expect_identical(wh$weighted_pairs, wt$weighted_pairs)
  skip_if_no_fits()
  f <- read_catalog(fixture("txpipe-lens1.fits"))
  expect_identical(ch, pair_counts(f, bins = b, threads = 1)$counts)
})

test_that("every numeric type reads to the values h5py wrote", {
  skip_if_not_installed("hdf5r")
  want <- expected("types.csv")
  types <- c("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32",
             "f64")
  x <- read_catalog(fixture("types.h5"), group = "types",
                    columns = c("ra", "dec", types))
  expect_named(x, c("ra", "dec", types))
  expect_identical(x$ra, want$ra)                    # float32 positions
  expect_identical(x$dec, want$dec)
  for (k in c("i8", "i16", "u8", "u16")) {
    expect_identical(x[[k]], as.integer(want[[k]]), info = k)
  }
  for (k in c("i32", "i64", "u32", "u64", "f32", "f64")) {
    expect_identical(x[[k]], as.double(want[[k]]), info = k)
  }
  expect_identical(x$i64[1:2], c(-(2^53 - 1), 2^53 - 1))
  expect_identical(x$u32[2], 2^32 - 1)
  expect_identical(which(is.na(x$f64)), 5L)          # NaN is NA
  expect_false(is.nan(x$f64[5]))
  # integer positions of two widths
  y <- read_catalog(fixture("types.h5"), group = "types",
                    columns = c("ra_i16", "dec_u64"))
  expect_identical(y$ra, c(0, 10, 359, 180, 45, 90))
  expect_identical(y$dec, c(0, 10, 89, 80, 45, 90))
})

test_that("HDF5 is found by its signature, also after a user block", {
  skip_if_not_installed("hdf5r")
  expect_true(wtheta:::is_hdf5(fixture("txpipe.h5")))
  expect_true(wtheta:::is_hdf5(fixture("userblock.h5")))
  expect_false(wtheta:::is_hdf5(fixture("txpipe-lens1.csv")))
  expect_false(wtheta:::is_hdf5(fixture("galaxies.fits")))
  # the user block holds text that reads as a catalog: still HDF5
  u <- read_catalog(fixture("userblock.h5"), group = "/lens/bin_1")
  want <- expected("userblock.csv")
  expect_identical(u$ra, want$ra)
  expect_identical(u$dec, want$dec)
  # the name does not matter
  f <- withr_tempfile()
  file.copy(fixture("txpipe.h5"), f)
  expect_identical(read_catalog(f, group = "randoms/bin_1"),
                   read_catalog(fixture("txpipe-randoms1.csv")))
})

test_that("missing datasets, groups and wrong arguments name what is wrong", {
  skip_if_not_installed("hdf5r")
  h5 <- fixture("txpipe.h5")
  expect_error(read_catalog(h5),
               "group \"/\" of `file` \".*txpipe.h5\" holds no datasets with the usual names .* It holds: lens \\(group\\), provenance \\(group\\), randoms \\(group\\).")
  expect_error(read_catalog(h5, columns = c("/lens/bin_1/ra", "/lens/bin_1/decl")),
               "`columns` names \"/lens/bin_1/decl\": group \"/lens/bin_1\" of `file` \".*\" holds no \"decl\"; it holds: dec, flag, ra, weight.")
  expect_error(read_catalog(h5, group = "/lens/bin_9"),
               "`group` \"/lens/bin_9\": group \"/lens\" of `file` \".*\" holds no \"bin_9\"; it holds: bin_1 \\(group\\), bin_2 \\(group\\).")
  expect_error(read_catalog(h5, columns = c("/lens/bin_1", "/lens/bin_1/dec")),
               "`columns` names \"/lens/bin_1\", which is a group of `file` \".*\", not a dataset; it holds: dec, flag, ra, weight.")
  expect_error(read_catalog(h5, group = "/lens/bin_1/ra"),
               "`group` \"/lens/bin_1/ra\" of `file` \".*\" is a dataset, not a group.")
  expect_error(read_catalog(h5, columns = 1:2),
               "HDF5 columns have names, not numbers")
  expect_error(read_catalog(h5, group = 3), "`group` must be NULL or the path of an HDF5 group")
  expect_error(read_catalog(h5, group = "lens/bin_1", sep = ","),
               "`sep` is for text files; `file` \".*\" is HDF5.")
  expect_error(read_catalog(h5, group = "lens/bin_1", hdu = 1),
               "`hdu` is for FITS files; `file` \".*\" is HDF5.")
  expect_error(read_catalog(fixture("txpipe-lens1.csv"), group = "lens/bin_1"),
               "`group` is for HDF5 files; `file` \".*\" is not HDF5")
  expect_error(read_catalog(h5, group = "lens/bin_1",
                            columns = c("ra", "dec", "/lens/bin_2/ra")),
               "`columns` gives two result columns the name \"ra\"", fixed = TRUE)
})

test_that("hostile HDF5 files give errors naming the dataset", {
  skip_if_not_installed("hdf5r")
  h <- fixture("hostile.h5")
  expect_error(read_catalog(h, group = "short"),
               "datasets \"/short/ra\" (10 rows) and \"/short/dec\" (9 rows) differ in length",
               fixed = TRUE)
  expect_error(read_catalog(h, group = "nested"),
               "\"/nested/ra\", which is a group of `file` \".*\", not a dataset; it holds: values.")
  expect_error(read_catalog(h, group = "matrix"),
               "dataset \"/matrix/ra\" is of dimensions 4 x 2; a column of a catalog is a one-dimensional dataset.",
               fixed = TRUE)
  expect_error(read_catalog(h, group = "scalar"),
               "dataset \"/scalar/ra\" is a scalar", fixed = TRUE)
  expect_error(read_catalog(h, group = "strings"),
               "dataset \"/strings/ra\" holds strings, not numbers: it cannot be a position.",
               fixed = TRUE)
  expect_error(read_catalog(h, group = "nan"),
               "`file` column \"/nan/dec\" has a non-finite value (NaN) in row 3.",
               fixed = TRUE)
  expect_error(read_catalog(h, group = "compound", columns = c("ra", "dec", "weight")),
               "dataset \"/compound/weight\" holds values of HDF5 class COMPOUND, which wtheta does not read",
               fixed = TRUE)
  expect_error(read_catalog(h, group = "empty"), "`file` is empty: it has no rows.",
               fixed = TRUE)
  expect_error(read_catalog(h, group = "nopos"), "It holds: x, y.", fixed = TRUE)
  # 64-bit integers a double cannot hold exactly, signed and unsigned
  for (d in c("id", "uid")) {
    expect_error(read_catalog(h, group = "big", columns = c("ra", "dec", d)),
                 paste0("dataset \"/big/", d, "\" holds 64-bit integers beyond what a double holds exactly (row 2"),
                 fixed = TRUE)
  }
  expect_error(read_catalog(h, group = "big", columns = c("ra64", "dec")),
               "dataset \"/big/ra64\" holds 64-bit integers beyond what a double holds exactly (row 3",
               fixed = TRUE)
  # one dataset named twice, by a relative and an absolute path
  expect_error(read_catalog(h, group = "nan", columns = c("ra", "/nan/RA")),
               "`columns` names the dataset \"/nan/ra\" twice.", fixed = TRUE)
  # a truncated file: HDF5's own reason, not its whole error stack
  f <- withr_tempfile()
  writeBin(readBin(fixture("txpipe.h5"), "raw", 3000), f)
  expect_error(read_catalog(f),
               "is HDF5 but cannot be opened: truncated file: eof = 3000")
})

test_that("without hdf5r, HDF5 is an error that says what to install", {
  ns <- asNamespace("wtheta")
  old <- get("hdf5r_installed", ns)
  unlockBinding("hdf5r_installed", ns)
  assign("hdf5r_installed", function() FALSE, ns)
  on.exit({
    assign("hdf5r_installed", old, ns)
    lockBinding("hdf5r_installed", ns)
  })
  expect_error(read_catalog(fixture("txpipe.h5"), group = "/lens/bin_1"),
               "is HDF5, and reading HDF5 needs the R package hdf5r. Install it (Debian/Ubuntu: apt-get install r-cran-hdf5r; elsewhere: install.packages(\"hdf5r\")).",
               fixed = TRUE)
  # text and FITS do not need it
  expect_identical(nrow(read_catalog(fixture("txpipe-randoms1.csv"))), 400L)
})
