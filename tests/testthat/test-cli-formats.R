# ---- issue 35: the command line end to end: FITS and text catalogs,
# weights, masks and every output format, against the R functions ----
# (run_cli(), cli_out(): helper-cli.R)

py3_has <- function(module) {
  py <- "/usr/bin/python3"
  file.exists(py) && system2(py, c("-c", shQuote(paste("import", module))),
                             stdout = FALSE, stderr = FALSE) == 0
}

test_that("a weighted FITS catalog gives wtheta()'s result in every output format", {
  skip_if_no_fits()
  # galaxies.fits: written by astropy (tools/make-fits-fixtures.py), with
  # a weight column W, asked for as "w" (names ignore case, as in R)
  g <- fixture("galaxies.fits")
  ran <- random_catalog(400, ra_range = c(0, 360), dec_range = c(-70, 70),
                        seed = 5)
  rfile <- withr_tempfile()
  writeLines(sprintf("%.17g %.17g", ran$ra, ran$dec), rfile)
  b <- theta_bins(5, 80, n = 4, log = TRUE)
  gal <- read_catalog(g, columns = c(weight = "W"))
  want <- wtheta(gal[c("ra", "dec")], read_catalog(rfile), b,
                 weights = list(data = gal$weight), error = "jackknife",
                 n_patches = 5, seed = 3, threads = 1, progress = FALSE,
                 check_footprint = FALSE, backend = "cpu")
  expect_true(attr(want, "weighted"))
  args <- c("-d", g, "-r", rfile, "-w", "w", "-b", "log:5,80,4",
            "--error", "jackknife", "-p", "5", "--seed", "3", "-t", "1",
            "-B", "cpu", "-q")
  for (ext in c(".csv", ".fits")) {
    out <- cli_out(ext)
    res <- run_cli(args, "-o", out)
    expect_identical(res$status, 0L, info = paste(res$out, collapse = "\n"))
    got <- read_wtheta(out)
    # everything R has, but the time and the run's details
    for (a in c("n_data", "n_random", "estimator", "weighted", "error",
                "n_patches", "self_pairs", "theta_units")) {
      expect_identical(attr(got, a), attr(want, a), info = paste(ext, a))
    }
    expect_identical(got$DD, want$DD, info = ext)
    expect_identical(got$RR, want$RR, info = ext)
    expect_identical(got$w, want$w, info = ext)
    expect_identical(got$w_err, want$w_err, info = ext)
    expect_identical(wtheta_cov(got), wtheta_cov(want), info = ext)
  }
  # the covariance is in the CSV's sidecar and the FITS file's COV
  out <- cli_out(".csv")
  expect_identical(run_cli(args, "-o", out)$status, 0L)
  side <- sub("\\.csv$", "-cov.csv", out)
  expect_true(file.exists(side))
  out <- cli_out(".fits")
  expect_identical(run_cli(args, "-o", out)$status, 0L)
  expect_equal(unname(wtheta:::fits_read_image(out, "COV")),
               unname(attr(want, "cov")), tolerance = 0)
  # the pipelines' formats: w and the covariance, angles in arcmin
  for (fmt in c("sacc", "twopoint")) {
    out <- cli_out(".fits")
    res <- run_cli(args, "-o", out, "--format", fmt)
    expect_identical(res$status, 0L, info = paste(res$out, collapse = "\n"))
    got <- read_wtheta(out, format = fmt)
    expect_s3_class(got, "wtheta_multi")
    expect_equal(got$w, want$w, tolerance = 1e-15, info = fmt)
    expect_equal(got$theta, want$theta, tolerance = 1e-12, info = fmt)
    expect_equal(unname(unclass(wtheta_cov(got))),
                 unname(unclass(wtheta_cov(want))), tolerance = 1e-15,
                 ignore_attr = TRUE, info = fmt)
  }
})

test_that("--hdu picks the table of a FITS file astropy wrote", {
  skip_if_no_fits()
  skip_if_not(py3_has("astropy"), "no python3-astropy")
  f <- paste0(withr_tempfile(), ".fits")
  on.exit(unlink(f), add = TRUE)
  a <- random_catalog(200, seed = 1)
  z <- random_catalog(250, seed = 2)
  code <- paste0(
    "from astropy.io import fits; import numpy as np; ",
    "t = lambda n, ra, dec: fits.BinTableHDU.from_columns([",
    "fits.Column(name='RA', format='D', unit='deg', array=np.array(ra)), ",
    "fits.Column(name='DEC', format='D', unit='deg', array=np.array(dec))], ",
    "name=n); ",
    "fits.HDUList([fits.PrimaryHDU(), t('FIRST', [", paste(sprintf("%.17g", a$ra), collapse = ","),
    "], [", paste(sprintf("%.17g", a$dec), collapse = ","), "]), t('SECOND', [",
    paste(sprintf("%.17g", z$ra), collapse = ","), "], [",
    paste(sprintf("%.17g", z$dec), collapse = ","), "])]).writeto('", f, "')")
  py <- tempfile(fileext = ".py")
  on.exit(unlink(py), add = TRUE)
  writeLines(code, py)
  expect_identical(system2("/usr/bin/python3", py), 0L)
  rfile <- withr_tempfile()
  ran <- random_catalog(300, seed = 3)
  writeLines(sprintf("%.17g %.17g", ran$ra, ran$dec), rfile)
  b <- theta_bins(0.5, 5, n = 3, log = TRUE)
  for (h in c("2", "SECOND", "second")) {
    out <- cli_out()
    res <- run_cli("-d", f, "-r", rfile, "--hdu", h, "-b", "log:0.5,5,3",
                   "--error", "none", "-t", "1", "-o", out, "-q")
    expect_identical(res$status, 0L, info = paste(res$out, collapse = "\n"))
    got <- read_wtheta(out)
    expect_identical(attr(got, "n_data"), 250L, info = h)
    expect_identical(got$DD, wtheta(z, ran, b, error = "none", threads = 1,
                                    progress = FALSE)$DD, info = h)
  }
  # without --hdu: the first table
  out <- cli_out()
  expect_identical(run_cli("-d", f, "-r", rfile, "-b", "log:0.5,5,3",
                           "--error", "none", "-t", "1", "-o", out,
                           "-q")$status, 0L)
  expect_identical(attr(read_wtheta(out), "n_data"), 200L)
  res <- run_cli("-d", f, "-r", rfile, "--hdu", "NOPE", "-t", "1", "-q")
  expect_identical(res$status, 1L)
  expect_true(any(grepl("NOPE", res$out, fixed = TRUE)))
})

test_that("--mask draws the randoms as random_catalog(mask = ) does", {
  skip_if_no_fits()
  skip_if_not(wtheta:::healpix_available(), "built without chealpix")
  # ring.fits: written by healpy (tools/make-healpix-fixtures.py)
  mfile <- fixture("healpix/ring.fits")
  m <- read_healpix_map(mfile)
  sim <- random_catalog(300, mask = m, seed = 9)
  dfile <- withr_tempfile()
  writeLines(sprintf("%.17g %.17g", sim$ra, sim$dec), dfile)
  b <- theta_bins(0.5, 10, n = 4, log = TRUE)
  out <- cli_out()
  res <- run_cli("-d", dfile, "--mask", mfile, "--n-random", "1500",
                 "--seed", "4", "-b", "log:0.5,10,4", "-t", "1", "-o", out,
                 "-n", "0")
  expect_identical(res$status, 0L, info = paste(res$out, collapse = "\n"))
  expect_true(any(grepl(paste0("randoms: 1,500 drawn from the mask \"",
                               mfile, "\" (4512 square degrees)"), res$out,
                        fixed = TRUE)))
  ran <- random_catalog(1500, mask = m, seed = 4)
  want <- wtheta(sim, ran, b, threads = 1, progress = FALSE)
  got <- read_wtheta(out)
  expect_identical(attr(got, "n_random"), 1500L)
  expect_identical(got$DR, want$DR)
  expect_identical(got$RR, want$RR)
  expect_identical(got$w, want$w)
  # by default 10 randoms a data point; with weights the drawn randoms
  # have unit weights
  sim$wt <- seq(0.5, 1.5, length.out = 300)
  csv <- withr_tempfile()
  writeLines(c("ra,dec,wt", sprintf("%.17g,%.17g,%.17g", sim$ra, sim$dec,
                                    sim$wt)), csv)
  out <- cli_out(".fits")
  res <- run_cli("-d", csv, "--mask", mfile, "--seed", "4", "-w", "WT",
                 "-b", "log:0.5,10,4", "-t", "1", "-B", "cpu", "-o", out,
                 "-q")
  expect_identical(res$status, 0L, info = paste(res$out, collapse = "\n"))
  want <- wtheta(sim, random_catalog(3000, mask = m, seed = 4), b,
                 weights = "wt", threads = 1, progress = FALSE,
                 backend = "cpu")
  got <- read_wtheta(out)
  expect_identical(attr(got, "n_random"), 3000L)
  expect_true(attr(got, "weighted"))
  expect_identical(got$DD, want$DD)
  expect_identical(got$w, want$w)
})

test_that("log bins by default; the argument checks of the new options", {
  sim <- simulate_catalog(200, seed = 1)
  ran <- random_catalog(300, like = sim, seed = 2)
  dfile <- withr_tempfile()
  rfile <- withr_tempfile()
  writeLines(sprintf("%.17g %.17g", sim$ra, sim$dec), dfile)
  writeLines(sprintf("%.17g %.17g", ran$ra, ran$dec), rfile)
  out <- cli_out()
  res <- run_cli("-d", dfile, "-r", rfile, "-t", "1", "-o", out)
  expect_identical(res$status, 0L)
  expect_true(any(grepl("15 bins from 0.01 to 10 deg, log-spaced", res$out,
                        fixed = TRUE)))
  got <- read_wtheta(out)
  expect_identical(attr(got, "edges"),
                   as.vector(theta_bins(0.01, 10, n = 15, log = TRUE)))
  # (small catalogs: the smallest bins have no random pairs, which the
  # command line says too)
  expect_warning(want <- wtheta(sim, ran, theta_bins(0.01, 10, n = 15,
                                                     log = TRUE),
                                threads = 1, progress = FALSE),
                 "where RR is zero")
  expect_true(any(grepl("where RR is zero", res$out, fixed = TRUE)))
  expect_identical(got$DD, want$DD)
  expect_identical(got$w, want$w)
  bad <- function(..., msg) {
    res <- run_cli("-d", dfile, ...)
    expect_identical(res$status, 2L, info = msg)
    expect_true(any(grepl(msg, res$out, fixed = TRUE)),
                info = paste(c(msg, res$out), collapse = "\n"))
  }
  bad(msg = "--random FILE or --mask FILE is required")
  bad("-r", rfile, "--mask", rfile, msg = "give --random or --mask")
  bad("-r", rfile, "--n-random", "10", msg = "--n-random needs --mask")
  bad("--mask", rfile, "--n-random", "0",
      msg = "--n-random must be a whole number >= 1, not \"0\"")
  bad("-r", rfile, "--format", "fits", msg = "--format needs --out")
  bad("-r", rfile, "-o", "w.txt",
      msg = "--out \"w.txt\" must end in .csv or .fits (or .fit, .fts)")
  bad("-r", rfile, "-o", "w.csv", "--format", "sacc",
      msg = "--out \"w.csv\" must end in .fits (or .fit, .fts) for --format sacc")
  bad("-r", rfile, "-o", "w.fits", "--format", "csv",
      msg = "--out \"w.fits\" must end in .csv for --format csv")
  bad("-r", rfile, "-o", "w.fits", "--format", "hdf5",
      msg = "--format must be one of auto, csv, fits, sacc, twopoint")
  bad("-r", rfile, "--hdu=-1", msg = "--hdu must be a number or a name")
  # --hdu for text files is not theirs: the text catalogs read as before
  out <- cli_out()
  expect_identical(run_cli("-d", dfile, "-r", rfile, "--hdu", "1", "-b",
                           "log:0.1,5,3", "-t", "1", "-o", out,
                           "-q")$status, 0L)
})
