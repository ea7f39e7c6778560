# Results written and read back: write_wtheta() and read_wtheta(), CSV and
# FITS.

test_that("write_wtheta() and read_wtheta() round-trip exactly, CSV and FITS", {
  set.seed(3)
  x <- random_catalog(250)
  y <- random_catalog(400)
  w <- untrusted_cov_ok(
    wtheta(x, y, theta_bins(1, 20, n = 4), error = "jackknife",
           n_patches = 4, threads = 1))
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
  pp <- pair_counts(x, y, bins = theta_bins(1, 20, n = 4), threads = 1,
                    patches = attr(w, "patches"))    # with patch arrays
  write_pair_counts(pp, file.path(d, "pp.csv"))
  expect_identical(read_pair_counts(file.path(d, "pp.csv")), pp)
  expect_true(file.exists(file.path(d, "pp-patches.csv")))
  pm <- attr(w, "pair_counts")$DR          # the jackknife's: margins only
  write_pair_counts(pm, file.path(d, "pm.csv"))
  expect_identical(read_pair_counts(file.path(d, "pm.csv")), pm)
  mg <- unname(as.matrix(utils::read.csv(file.path(d, "pm-margins.csv"),
                                         colClasses = "numeric")))
  m <- pm$patch_margins
  expect_identical(mg, unname(cbind(t(m$rows), t(m$cols), t(m$diag),
                                    m$total)))

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
                          "pp-patches.csv", "pp-attributes.rds", "pm.csv",
                          "pm-margins.csv", "pm-attributes.rds",
                          "w.fits")))
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
  py <- astropy_python()
  set.seed(5)
  w <- untrusted_cov_ok(
    wtheta(random_catalog(200), random_catalog(300),
           theta_bins(1, 20, n = 3), threads = 1, error = "jackknife",
           n_patches = 3))
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
  # the jackknife's counts keep the margins of their patch arrays, one row
  # per bin: 3 row sums, 3 column sums, 3 diagonal counts, the total
  pm <- attr(w, "pair_counts")$RR
  m <- pm$patch_margins
  expect_true(sum(m$total) > 0)
  write_pair_counts(pm, f, overwrite = TRUE)
  expect_identical(read_pair_counts(f), pm)
  got <- as.numeric(astropy_words(
    "from astropy.io import fits; ",
    "h = fits.open('", f, "', checksum=True); ",
    "h.verify('exception'); a = h['MARGINS'].data['MARGINS']; ",
    "print(a.shape[0], a.shape[1], ",
    "' '.join(repr(float(v)) for v in a.ravel()))"))
  expect_identical(got[1:2], c(3, 10))
  expect_identical(got[-(1:2)],
                   as.vector(t(cbind(t(m$rows), t(m$cols), t(m$diag),
                                     m$total))))
  # an auto count: its margins are symmetric, the diagonal in both
  expect_identical(m$rows, m$cols)
  expect_identical(m$total, colSums(m$rows))
})

test_that("PIP-weighted results say so in their keywords (astropy reads them)", {
  d <- pip_catalog(150, k = 2, seed = 31)
  r <- data.frame(ra = runif(300, 10, 25), dec = runif(300, -8, 8))
  ang <- data.frame(theta = c(0.5, 3), weight = c(1.8, 1.1))
  w <- wtheta(d, r, bins = theta_bins(0.5, 5, n = 3), threads = 1,
              bitwise = c("b1", "b2"), noffset = 0, default_value = 2,
              angular = ang)
  pc <- pair_counts(d, bins = theta_bins(0.5, 5, n = 3), threads = 1,
                    bitwise = c("b1", "b2"))
  want <- c(PIPBITS = "64", NREALIZ = "65", NOFFSET = "0", DEFVALUE = "2")
  # CSV: the keywords as comment lines
  f <- paste0(withr_tempfile(), ".csv")
  g <- paste0(withr_tempfile(), ".csv")
  on.exit(unlink(c(f, g, wtheta:::sidecar(f, c("cov.csv", "attributes.rds")),
                   wtheta:::sidecar(g, "attributes.rds"))), add = TRUE)
  write_wtheta(w, f)
  head <- grep("^# [A-Z0-9]+: ", readLines(f), value = TRUE)
  kv <- stats::setNames(sub("^# [A-Z0-9]+: ", "", head),
                        sub("^# ([A-Z0-9]+): .*", "\\1", head))
  expect_identical(kv[names(want)], want)
  expect_identical(kv[["ANGUPWT"]], "TRUE")
  expect_identical(read_wtheta(f), w)
  write_pair_counts(pc, g)
  head <- grep("^# [A-Z0-9]+: ", readLines(g), value = TRUE)
  expect_true(all(c("# PIPBITS: 64", "# NREALIZ: 65", "# NOFFSET: 1",
                    "# DEFVALUE: 0", "# ANGUPWT: FALSE") %in% head))
  # a result without PIP has none of them
  plain <- wtheta(d, r, bins = theta_bins(0.5, 5, n = 3), threads = 1)
  h <- paste0(withr_tempfile(), ".csv")
  on.exit(unlink(c(h, wtheta:::sidecar(h, "attributes.rds"))), add = TRUE)
  write_wtheta(plain, h)
  expect_false(any(grepl("^# (PIPBITS|NREALIZ|NOFFSET|DEFVALUE|ANGUPWT):",
                         readLines(h))))
  # FITS, read by astropy
  skip_if_no_fits()
  py <- astropy_python()
  ff <- paste0(withr_tempfile(), ".fits")
  on.exit(unlink(ff), add = TRUE)
  write_wtheta(w, ff)
  out <- system2(py, c("-c", shQuote(paste0(
    "from astropy.io import fits; h = fits.getheader('", ff, "', 'WTHETA'); ",
    "print(h['PIPBITS'], h['NREALIZ'], h['NOFFSET'], h['DEFVALUE'], ",
    "h['ANGUPWT'], h.comments['NREALIZ'])"))), stdout = TRUE)
  expect_identical(out, "64 65 0 2.0 True PIP: realisations (nrealizations)")
  expect_identical(read_wtheta(ff), w)
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
                     "`file` \"/sys/w.fits\": cannot create the file (as \"/sys/.wt-",
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

# ---- issue 31, round three: writes all or nothing; readers that check ------

io31_results <- function() {
  set.seed(31)
  x <- random_catalog(200)
  y <- random_catalog(300)
  b <- theta_bins(1, 20, n = 4)
  w1 <- untrusted_cov_ok(
    wtheta(x, y, b, error = "jackknife", n_patches = 4, threads = 1))
  list(w1 = w1,
       w2 = wtheta(y, x, b, error = "poisson", threads = 1),
       pc1 = pair_counts(x, y, bins = b, threads = 1),
       pc2 = pair_counts(y, bins = b, threads = 1))
}

test_that("a failed write leaves the old table, sidecars and covariance", {
  r <- io31_results()
  d <- tempfile()
  dir.create(d)
  on.exit(unlink(d, recursive = TRUE), add = TRUE)
  f <- file.path(d, "w.csv")
  write_wtheta(r$w1, f)
  before <- tools::md5sum(list.files(d, full.names = TRUE))
  # the covariance, the sidecar, the table: each write failing in turn,
  # and the last rename
  for (fault in list(1L, 2L, 3L, "rename")) {
    old <- options(wtheta.test_write_fault = fault)
    expect_error(write_wtheta(r$w2, f, overwrite = TRUE),
                 if (identical(fault, "rename")) "left as they were" else
                   "write fault")
    options(old)
    expect_identical(tools::md5sum(list.files(d, full.names = TRUE)), before)
    expect_identical(read_wtheta(f), r$w1)
    expect_identical(list.files(d, all.files = TRUE, no.. = TRUE),
                     c("w-attributes.rds", "w-cov.csv", "w.csv"))
  }
  write_wtheta(r$w2, f, overwrite = TRUE)
  expect_identical(read_wtheta(f), r$w2)
  # pair counts: the same
  g <- file.path(d, "pc.csv")
  write_pair_counts(r$pc1, g)
  old <- options(wtheta.test_write_fault = 2L)
  expect_error(write_pair_counts(r$pc2, g, overwrite = TRUE), "write fault")
  options(old)
  expect_identical(read_pair_counts(g), r$pc1)
  expect_false(any(grepl("\\.part$", list.files(d, all.files = TRUE))))
})

test_that("a SACC or twopoint overwrite that fails leaves the old file", {
  skip_if_no_fits()
  r <- io31_results()
  d <- tempfile()
  dir.create(d)
  on.exit(unlink(d, recursive = TRUE), add = TRUE)
  f <- file.path(d, "w.sacc")
  suppressMessages(write_wtheta(r$w1, f, format = "sacc"))
  before <- tools::md5sum(f)
  # nz for a sample that is not written: refused, the old file stands
  expect_error(suppressMessages(write_wtheta(r$w2, f, format = "sacc",
                                             nz = list(data = "no"),
                                             overwrite = TRUE)), "`nz`")
  expect_identical(tools::md5sum(f), before)
  expect_identical(list.files(d, all.files = TRUE, no.. = TRUE), "w.sacc")
})

test_that("results write to the longest legal names; longer ones are refused up front", {
  r <- io31_results()
  d <- tempfile()
  dir.create(d)
  on.exit(unlink(d, recursive = TRUE), add = TRUE)
  # 240 characters: its sidecars (-attributes.rds) stay within 255
  f <- file.path(d, paste0(strrep("a", 236), ".csv"))
  expect_identical(nchar(basename(f)), 240L)
  write_wtheta(r$w1, f)
  expect_identical(read_wtheta(f), r$w1)
  write_pair_counts(r$pc1, f, overwrite = TRUE)
  expect_identical(read_pair_counts(f), r$pc1)
  if (wtheta:::fits_available()) {
    g <- file.path(d, paste0(strrep("b", 250), ".fits"))
    expect_identical(nchar(basename(g)), 255L)
    write_wtheta(r$w1, g)
    expect_identical(read_wtheta(g), r$w1)
    h <- file.path(d, paste0(strrep("c", 250), ".sacc"))
    suppressMessages(write_wtheta(r$w1, h, format = "sacc"))
    expect_true(file.exists(h))
  }
  # a CSV whose sidecar name would pass 255 bytes: refused before writing
  long <- file.path(d, paste0(strrep("d", 245), ".csv"))
  expect_error(write_wtheta(r$w1, long),
               "-attributes.rds\" that it needs is 260 bytes long", fixed = TRUE)
  expect_false(any(startsWith(list.files(d), "ddd")))
  expect_false(any(grepl("\\.part$", list.files(d, all.files = TRUE))))
})

test_that("CSV readers check the table against its sidecar", {
  r <- io31_results()
  d <- tempfile()
  dir.create(d)
  on.exit(unlink(d, recursive = TRUE), add = TRUE)
  f <- file.path(d, "pc.csv")
  write_pair_counts(r$pc1, f)
  lines <- readLines(f)
  k <- grep("^[0-9]", lines)[2L]
  # an edited count
  ed <- lines
  cells <- strsplit(ed[k], ",")[[1L]]
  cells[3L] <- "12345"
  ed[k] <- paste(cells, collapse = ",")
  writeLines(ed, f)
  expect_error(read_pair_counts(f),
               "pc.csv\" does not match its sidecar .*row 2 of column counts is 12345 in the table")
  # a deleted row
  writeLines(lines[-k], f)
  expect_error(read_pair_counts(f), "the table has 3 rows, the sidecar 4")
  writeLines(lines, f)
  expect_identical(read_pair_counts(f), r$pc1)
  # a sidecar from another result of the same shape
  g <- file.path(d, "other.csv")
  write_pair_counts(r$pc2, g)
  file.copy(file.path(d, "other-attributes.rds"),
            file.path(d, "pc-attributes.rds"), overwrite = TRUE)
  expect_error(read_pair_counts(f), "pc.csv\" does not match its sidecar")
  # a w(theta) CSV read as counts, and counts as w(theta)
  h <- file.path(d, "w.csv")
  write_wtheta(r$w1, h)
  expect_error(read_pair_counts(h),
               "w.csv\" holds w(theta), not pair counts; read it with read_wtheta()",
               fixed = TRUE)
  expect_error(read_wtheta(g),
               "other.csv\" holds pair counts, not w(theta); read it with read_pair_counts()",
               fixed = TRUE)
  # w(theta): an edited w, a deleted row, an edited covariance
  wl <- readLines(h)
  k <- grep("^[0-9-]", wl)[1L]
  writeLines(wl[-k], h)
  expect_error(read_wtheta(h), "w.csv\" does not match its sidecar.*3 rows, the sidecar 4")
  ed <- wl
  ed[k] <- sub(",[^,]*,([^,]*)$", ",0.5,\\1", ed[k])
  writeLines(ed, h)
  expect_error(read_wtheta(h), "row 1 of column w is 0.5 in the table")
  writeLines(wl, h)
  cl <- readLines(file.path(d, "w-cov.csv"))
  writeLines(c(cl[1L], sub("^[^,]*", "0.25", cl[2L]), cl[-(1:2)]),
             file.path(d, "w-cov.csv"))
  expect_error(read_wtheta(h), "its COV file .*w-cov.csv\" holds other values")
  # FITS pair counts: the table checked against the stored object too
  skip_if_no_fits()
  p <- file.path(d, "pc.fits")
  write_pair_counts(r$pc1, p)
  expect_identical(read_pair_counts(p), r$pc1)
  write_wtheta(r$w1, file.path(d, "w.fits"))
  expect_error(read_pair_counts(file.path(d, "w.fits")),
               "w.fits\" holds no PAIR_COUNTS table: it is not pair counts that wtheta wrote; read it with read_wtheta()",
               fixed = TRUE)
  expect_error(read_wtheta(p),
               "pc.fits\" holds no WTHETA table: it is not w(theta) that wtheta wrote; read it with read_pair_counts()",
               fixed = TRUE)
})

test_that("a damaged R_OBJECT HDU is an error naming the file and the HDU", {
  skip_if_no_fits()
  r <- io31_results()
  f <- tempfile(fileext = ".fits")
  on.exit(unlink(f), add = TRUE)
  write_pair_counts(r$pc1, f)
  bytes <- readBin(f, "raw", file.size(f))
  # the serialization's header ("X\n" then version 3), in R_OBJECT's data
  at <- grepRaw(as.raw(c(0x58, 0x0a, 0, 0, 0, 3)), bytes)
  expect_true(length(at) == 1L)
  bytes[at + 6:40] <- as.raw(0xff)
  writeBin(bytes, f)
  # the checksums find the damage first
  res <- run_in_child_io(sprintf(
    'r <- try(wtheta::read_pair_counts("%s"), silent = TRUE); cat(r)', f))
  expect_identical(res$status, 0L)
  expect_match(res$output, paste0("`file` \"", f, "\": HDU 2 (R_OBJECT) ",
                                  "fails its DATASUM check"), fixed = TRUE)
  # without them, the R object's own md5 does
  res <- run_in_child_io(sprintf(
    'r <- try(wtheta::read_pair_counts("%s", verify = FALSE), silent = TRUE); cat(r)',
    f))
  expect_identical(res$status, 0L)
  expect_match(res$output, paste0("`file` \"", f, "\": its R_OBJECT HDU ",
                                  "cannot be read"), fixed = TRUE)
})

test_that("a cross-correlation's FITS header has N_DATA2 and N_RANDOM2, read back", {
  skip_if_no_fits()
  sim <- simulate_catalog(300, seed = 1)
  ran <- random_catalog(400, like = sim, seed = 2)
  w <- wtheta(sim, ran, theta_bins(0.1, 5, n = 4, log = TRUE),
              data2 = simulate_catalog(200, seed = 3),
              random2 = random_catalog(500, like = sim, seed = 4),
              threads = 1, progress = FALSE)
  f <- paste0(withr_tempfile(), ".fits")
  on.exit(unlink(f), add = TRUE)
  write_wtheta(w, f)
  kw <- wtheta:::fits_read_table(f, hdu = "WTHETA")$keywords
  val <- function(k) kw$value[match(k, kw$name)]
  expect_identical(as.numeric(c(val("N_DATA"), val("N_DATA2"), val("N_RANDOM"),
                                val("N_RANDOM2"))), c(300, 200, 400, 500))
  expect_identical(read_wtheta(f), w)
  # a file without R_OBJECT (as other tools write) reads the sizes from the
  # keywords
  r <- wtheta:::rebuild_wtheta(f)
  expect_identical(c(attr(r, "n_data"), attr(r, "n_data2"),
                     attr(r, "n_random"), attr(r, "n_random2")),
                   c(300L, 200L, 400L, 500L))
  py <- astropy_python()
  out <- system2(py, c("-c", shQuote(paste0(
    "from astropy.io import fits; h = fits.getheader('", f, "', 'WTHETA'); ",
    "print(h['N_DATA2'], h['N_RANDOM2'], h.comments['N_DATA2'])"))),
    stdout = TRUE)
  expect_identical(out, "200 500 points in the second data catalog")
})
