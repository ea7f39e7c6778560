cli_path <- function() {
  p <- system.file("scripts", "wtheta.R", package = "wtheta")
  if (!nzchar(p)) skip("wtheta.R is not installed")
  p
}

run_cli <- function(...) {
  rscript <- file.path(R.home("bin"), "Rscript")
  out <- suppressWarnings(system2(
    rscript, c(shQuote(cli_path()), ...), stdout = TRUE, stderr = TRUE,
    env = paste0("R_LIBS=", shQuote(paste(.libPaths(), collapse = ":")))))
  status <- attr(out, "status")
  list(status = if (is.null(status)) 0L else status, out = out)
}

test_that("the command line computes what wtheta() computes", {
  sim <- simulate_catalog(300, n_clusters = 5, sigma = 0.5, seed = 31)
  ran <- random_catalog(400, like = sim, seed = 32)
  dfile <- withr_tempfile()
  rfile <- withr_tempfile()
  out <- withr_tempfile()
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
  got <- utils::read.csv(out)
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
  expect_true(any(grepl("--units must be deg, arcmin, arcsec or rad", res$out,
                        fixed = TRUE)))
  res <- run_cli("--data", f, "--random", file.path(tempdir(), "nope.txt"))
  expect_identical(res$status, 2L)
  expect_true(any(grepl("--random: file", res$out, fixed = TRUE)))
  res <- run_cli("--data", f, "--random", f, "--threads", "two")
  expect_identical(res$status, 2L)
  expect_true(any(grepl("--threads must be a whole number", res$out,
                        fixed = TRUE)))
  res <- run_cli("--data", f, "--random", f, "--colour", "red")
  expect_identical(res$status, 2L)
  expect_true(any(grepl("unknown option --colour", res$out, fixed = TRUE)))
  # an error inside the computation: status 1, the package's message
  bad <- withr_tempfile()
  writeLines(c("1 2", "3 x"), bad)
  res <- run_cli("--data", bad, "--random", f)
  expect_identical(res$status, 1L)
  expect_true(any(grepl("error: `file` line 2", res$out, fixed = TRUE)))
})
