test_that("the command line computes what wtheta() computes", {
  sim <- simulate_catalog(300, n_clusters = 5, sigma = 0.5, seed = 31)
  ran <- random_catalog(400, like = sim, seed = 32)
  dfile <- withr_tempfile()
  rfile <- withr_tempfile()
  out <- cli_out()
  # arcminutes, with a row-count line, as the classic catalogs come
  writeLines(c("300", sprintf("%.10f %.10f", sim$ra * 60, sim$dec * 60)),
             dfile)
  writeLines(c("400", sprintf("%.10f %.10f", ran$ra * 60, ran$dec * 60)),
             rfile)
  res <- run_cli("--data", dfile, "--random", rfile, "--units", "arcmin",
                 "--bins", "lin:0,10,1", "--estimator", "LS", "--self-pairs",
                 "--threads", "1", "--out", out, "--rows", "3")
  expect_identical(res$status, 0L)
  expect_true(any(grepl("Landy-Szalay", res$out)))
  expect_true(any(grepl("self pairs included", res$out)))
  expect_true(any(grepl("7 more bins", res$out)))
  got <- read_wtheta(out)
  d <- read_catalog(dfile, units = "arcmin")
  r <- read_catalog(rfile, units = "arcmin")
  want <- wtheta(d, r, theta_bins(0, 10, width = 1), self_pairs = TRUE,
                 threads = 1, backend = "cpu", progress = FALSE)
  expect_identical(names(got), names(as.data.frame(want)))
  expect_equal(got$DD, want$DD)
  expect_equal(got$DR, want$DR)
  expect_equal(got$w, want$w, tolerance = 1e-12)
  # log bins, CSV input with a header naming the columns
  csv <- withr_tempfile()
  # (quote = FALSE: read_catalog() takes header names as written)
  utils::write.csv(data.frame(id = 1:300, RA = sim$ra, DEC = sim$dec), csv,
                   row.names = FALSE, quote = FALSE)
  res <- run_cli("--data", csv, "--random", csv, "--columns", "RA,DEC",
                 "--bins=log:0.1,10,5", "--estimator", "natural",
                 "--threads", "1", "--rows", "all")
  expect_identical(res$status, 0L)
  expect_true(any(grepl("5 bins from 0.1 to 10 deg, log-spaced", res$out,
                        fixed = TRUE)))
})

test_that("the command line names the argument it rejects", {
  f <- withr_tempfile()
  writeLines(c("1 2", "3 4"), f)
  res <- run_cli("--help")
  expect_identical(res$status, 0L)
  expect_true(any(grepl("^Usage: Rscript wtheta.R", res$out)))
  # every option and every output column is described
  for (o in c("-d FILE, --data", "-r FILE, --random", "--data2", "--random2",
              "--error", "-p N, --n-patches", "-w COL, --weights",
              "-s, --self-pairs", "-o FILE, --out")) {
    expect_true(any(grepl(o, res$out, fixed = TRUE)), info = o)
  }
  for (col in c("theta_lo, theta_hi", "DD, DR, RR", "D1D2, D1R2, R1D2, R1R2",
                "w_err")) {
    expect_true(any(grepl(col, res$out, fixed = TRUE)), info = col)
  }
  expect_identical(run_cli()$status, 2L)
  res <- run_cli("--random", f)
  expect_identical(res$status, 2L)
  expect_true(any(grepl("--data FILE is required", res$out, fixed = TRUE)))
  res <- run_cli("--data", f, "--random", f, "--bins", "lin:0,10")
  expect_identical(res$status, 2L)
  expect_true(any(grepl("--bins: lin: needs three numbers", res$out,
                        fixed = TRUE)))
  res <- run_cli("--data", f, "--random", f, "--bins", "lin:0,10,3")
  expect_identical(res$status, 2L)
  expect_true(any(grepl("--bins: `width` (3) does not divide", res$out,
                        fixed = TRUE)))
  res <- run_cli("--data", f, "--random", f, "--units", "parsec")
  expect_identical(res$status, 2L)
  expect_true(any(grepl("--units must be one of deg, arcmin, arcsec, rad, not \"parsec\"",
                        res$out, fixed = TRUE)))
  res <- run_cli("-d", f, "-r", f, "--error", "jack", "-p", "1")
  expect_identical(res$status, 2L)
  expect_true(any(grepl("--n-patches must be a whole number >= 2", res$out,
                        fixed = TRUE)))
  res <- run_cli("-d", f, "-r", f, "--random2", f)
  expect_identical(res$status, 2L)
  expect_true(any(grepl("--random2 needs --data2", res$out, fixed = TRUE)))
  res <- run_cli("--data", f, "--random", file.path(tempdir(), "nope.txt"))
  expect_identical(res$status, 2L)
  expect_true(any(grepl("--random: file", res$out, fixed = TRUE)))
  res <- run_cli("--data", f, "--random", f, "--threads", "two")
  expect_identical(res$status, 2L)
  expect_true(any(grepl("--threads must be a whole number", res$out,
                        fixed = TRUE)))
  res <- run_cli("--data", f, "--random", f, "--colour", "red")
  expect_identical(res$status, 2L)
  expect_true(any(grepl("colour", res$out, fixed = TRUE)))
  # an error inside the computation: status 1, the package's message
  bad <- withr_tempfile()
  writeLines(c("1 2", "3 x"), bad)
  res <- run_cli("--data", bad, "--random", f)
  expect_identical(res$status, 1L)
  expect_true(any(grepl(paste0("error: --data \"", bad, "\": `file` line 2"),
                        res$out, fixed = TRUE)))
})

test_that("short flags, errors, weights and cross-correlations", {
  sim <- simulate_catalog(300, n_clusters = 5, sigma = 0.5, seed = 41)
  ran <- random_catalog(400, like = sim, seed = 42)
  sim$wt <- seq(0.5, 1.5, length.out = nrow(sim))
  ran$wt <- 1
  dfile <- withr_tempfile()
  rfile <- withr_tempfile()
  out <- cli_out()
  utils::write.csv(sim, dfile, row.names = FALSE, quote = FALSE)
  utils::write.csv(ran, rfile, row.names = FALSE, quote = FALSE)
  b <- theta_bins(0.1, 5, n = 6, log = TRUE)
  res <- run_cli("-d", dfile, "-r", rfile, "-c", "ra,dec", "-b",
                 "log:0.1,5,6", "-e", "ham", "--error", "jackknife", "-p",
                 "7", "--seed", "7", "-w", "wt", "-t", "1", "-B", "cpu",
                 "-o", out, "-q")
  expect_identical(res$status, 0L)
  expect_length(res$out, 0L)
  got <- read_wtheta(out)
  want <- wtheta(sim, ran, b, estimator = "Hamilton", error = "jackknife",
                 n_patches = 7, seed = 7, weights = "wt", threads = 1,
                 backend = "cpu", progress = FALSE)
  expect_identical(names(got), names(as.data.frame(want)))
  expect_equal(got$DD, want$DD, tolerance = 1e-12)
  expect_equal(got$w, want$w, tolerance = 1e-12)
  expect_equal(got$w_err, want$w_err, tolerance = 1e-12)
  # a cross-correlation of two halves against wtheta(data2 = )
  half <- seq_len(nrow(sim)) %% 2 == 0
  d1 <- withr_tempfile()
  d2 <- withr_tempfile()
  writeLines(sprintf("%.12f %.12f", sim$ra[half], sim$dec[half]), d1)
  writeLines(sprintf("%.12f %.12f", sim$ra[!half], sim$dec[!half]), d2)
  r1 <- withr_tempfile()
  writeLines(sprintf("%.12f %.12f", ran$ra, ran$dec), r1)
  res <- run_cli("-d", d1, "--data2", d2, "-r", r1, "--random2", r1, "-b",
                 "log:0.1,5,6", "--error", "none", "-t", "1", "-o", out,
                 "-n", "0")
  expect_identical(res$status, 0L)
  got <- read_wtheta(out)
  want <- wtheta(read_catalog(d1), read_catalog(r1), b,
                 data2 = read_catalog(d2), random2 = read_catalog(r1),
                 error = "none", threads = 1, progress = FALSE)
  expect_identical(names(got), c("theta_lo", "theta_hi", "theta", "D1D2",
                                 "D1R2", "R1D2", "R1R2", "w"))
  expect_equal(got$D1D2, want$D1D2)
  expect_equal(got$w, want$w, tolerance = 1e-12)
  # a weight column that is not there
  res <- run_cli("-d", dfile, "-r", rfile, "-c", "ra,dec", "-w", "nope")
  expect_identical(res$status, 1L)
  expect_true(any(grepl(paste0("--data \"", dfile, "\": `columns` names ",
                               "\"nope\", which is not among the columns"),
                        res$out, fixed = TRUE)))
})

test_that("wtheta_cli() gives the installed script and prints nothing", {
  # no print of its own: p <- wtheta_cli() is silent, cat() prints it once
  expect_silent(p <- wtheta_cli())
  expect_identical(capture.output(cat(wtheta_cli())), p)
  expect_identical(normalizePath(p),
                   normalizePath(file.path(find.package("wtheta"), "scripts",
                                           "wtheta.R")))
  expect_true(file.exists(p))
  # the README's shell recipe: Rscript -e 'cat(wtheta::wtheta_cli())'
  # prints the path alone, which runs as the script
  rscript <- file.path(R.home("bin"), "Rscript")
  env <- paste0("R_LIBS=", shQuote(paste(.libPaths(), collapse = ":")))
  got <- system2(rscript, c("-e", shQuote("cat(wtheta::wtheta_cli())")),
                 stdout = TRUE, env = env)
  expect_identical(got, p)
  skip_if_not_installed("optparse")
  help <- system2(rscript, c(shQuote(got), "--help"), stdout = TRUE,
                  env = env)
  expect_match(help[1], "^Usage: Rscript wtheta.R")
})

test_that("--mean-theta adds the theta_mean column of wtheta()", {
  cf <- cli_catalog_files(33)
  dfile <- cf$dfile
  rfile <- cf$rfile
  out <- cli_out()
  res <- run_cli("--data", dfile, "--random", rfile, "--bins",
                 "log:0.1,10,5", "--mean-theta", "--threads", "1",
                 "--out", out, "--quiet")
  expect_identical(res$status, 0L)
  got <- read_wtheta(out)
  want <- wtheta(read_catalog(dfile), read_catalog(rfile),
                 theta_bins(0.1, 10, n = 5, log = TRUE), threads = 1,
                 backend = "cpu", progress = FALSE, mean_theta = TRUE,
                 check_footprint = FALSE)
  expect_identical(names(got), names(as.data.frame(want)))
  expect_equal(got$theta_mean, want$theta_mean, tolerance = 1e-12)
  expect_true(all(got$theta_mean > got$theta_lo &
                    got$theta_mean < got$theta_hi))
})

test_that("--bins takes a unit: the output's angles are in it", {
  cf <- cli_catalog_files(61)
  dfile <- cf$dfile
  rfile <- cf$rfile
  out <- cli_out()
  res <- run_cli("--data", dfile, "--random", rfile, "--bins",
                 "log:6,600,5:arcmin", "--threads", "1", "--out", out)
  expect_identical(res$status, 0L)
  expect_true(any(grepl("5 bins from 6 to 600 arcmin, log-spaced", res$out,
                        fixed = TRUE)))
  got <- read_wtheta(out)
  want <- wtheta(read_catalog(dfile), read_catalog(rfile),
                 theta_bins(6, 600, n = 5, log = TRUE, units = "arcmin"),
                 threads = 1, backend = "cpu", progress = FALSE)
  expect_equal(got$theta_lo, want$theta_lo, tolerance = 1e-14)
  expect_identical(got$theta_lo[1], 6)
  expect_equal(got$DD, want$DD)
  expect_equal(got$w, want$w, tolerance = 1e-12)
  # a unit the bins cannot take, named with its flag
  res <- run_cli("--data", dfile, "--random", rfile, "--bins",
                 "lin:0,10,1:furlong")
  expect_false(res$status == 0L)
  expect_true(any(grepl("--bins must be one of deg, arcmin, arcsec, rad, ",
                        res$out, fixed = TRUE)))
  res <- run_cli("--data", dfile, "--random", rfile, "--bins",
                 "lin:0,10,1:arcmin:x")
  expect_false(res$status == 0L)
  expect_true(any(grepl("with an optional :UNIT", res$out, fixed = TRUE)))
})

# ---- issue 31, round three: catalogs read once, through read_catalog() ----

test_that("-w reads FITS and headerless text catalogs as read_catalog() does", {
  b <- theta_bins(1, 30, n = 4)
  out <- cli_out()
  # FITS: the weight column read with the catalog, randoms without it
  # have unit weights
  skip_if_not(wtheta:::fits_available(), "built without cfitsio")
  g <- fixture("galaxies.fits")
  ran <- random_catalog(300, ra_range = c(0, 360), dec_range = c(-60, 60),
                        seed = 5)
  rfile <- withr_tempfile()
  writeLines(sprintf("%.17g %.17g", ran$ra, ran$dec), rfile)
  res <- run_cli("-d", g, "-r", rfile, "-w", "W", "-b", "lin:1,30,7.25",
                 "--error", "none", "-t", "1", "-o", out, "-q")
  expect_identical(res$status, 0L)
  cat <- read_catalog(g, columns = c(weight = "W"))
  rc <- read_catalog(rfile)
  want <- wtheta(cat[c("ra", "dec")], rc, b, error = "none", threads = 1,
                 weights = list(data = cat$weight, random = rep(1, nrow(rc))),
                 progress = FALSE)
  got <- read_wtheta(out)
  expect_equal(got$DD, want$DD, tolerance = 1e-12)
  expect_equal(got$w, want$w, tolerance = 1e-12)
  # headerless text with a name column: -w 3 keeps the first row
  d <- withr_tempfile()
  set.seed(9)
  n <- 60
  ra <- runif(n, 0, 20)
  dec <- runif(n, -10, 10)
  wt <- runif(n, 0.5, 2)
  writeLines(sprintf("%.17g %.17g %.17g gal%d", ra, dec, wt, seq_len(n)), d)
  r2 <- withr_tempfile()
  ran2 <- random_catalog(200, seed = 3)
  writeLines(sprintf("%.17g %.17g 1 r%d", ran2$ra, ran2$dec,
                     seq_len(200)), r2)
  res <- run_cli("-d", d, "-r", r2, "-w", "3", "-b", "lin:1,30,7.25",
                 "--error", "none", "-t", "1", "-o", out, "-q")
  expect_identical(res$status, 0L)
  want <- wtheta(data.frame(ra = ra, dec = dec, w = wt),
                 cbind(ran2, w = 1), b, weights = "w", error = "none",
                 threads = 1, progress = FALSE)
  got <- read_wtheta(out)
  expect_equal(got$DD, want$DD, tolerance = 1e-12)
  expect_equal(got$w, want$w, tolerance = 1e-12)
})

test_that("-o and --plot that cannot be written fail before counting", {
  f <- withr_tempfile()
  writeLines(c("10 10", "11 11", "12 12"), f)
  res <- run_cli("-d", f, "-r", f, "-o", file.path(tempdir(), "nope",
                                                   "w.csv"))
  expect_identical(res$status, 2L)
  expect_true(any(grepl("--out: the directory \"", res$out, fixed = TRUE)))
  res <- run_cli("-d", f, "-r", f, "--plot", tempdir())
  expect_identical(res$status, 2L)
  expect_true(any(grepl("is a directory", res$out, fixed = TRUE)))
  where <- unwritable_dir()
  # a count that would take long: refused at once, before reading
  res <- run_cli("-d", f, "-r", f, "-o", file.path(where, "w.csv"))
  expect_identical(res$status, 2L)
  expect_true(any(grepl(paste0("--out: \"", file.path(where, "w.csv"),
                               "\" cannot be written"), res$out,
                        fixed = TRUE)))
})
