# The command line (inst/scripts/wtheta.R) run as a user runs it, for
# test-cli.R and test-cli-formats.R.

cli_path <- function() {
  skip_if_not_installed("optparse")
  p <- system.file("scripts", "wtheta.R", package = "wtheta")
  if (!nzchar(p)) skip("wtheta.R is not installed")
  p
}

# a result file for --out, removed with its sidecar files when the calling
# test ends
cli_out <- function(ext = ".csv", env = parent.frame()) {
  f <- paste0(tempfile("cli-"), ext)
  stem <- sub("\\.[a-z]+$", "", f)
  do.call(on.exit, list(substitute(unlink(c(f, Sys.glob(paste0(s, "-*")))),
                                   list(f = f, s = stem)), add = TRUE),
          envir = env)
  f
}

run_cli <- function(...) {
  rscript <- file.path(R.home("bin"), "Rscript")
  out <- suppressWarnings(system2(
    rscript, c(shQuote(cli_path()), ...), stdout = TRUE, stderr = TRUE,
    env = paste0("R_LIBS=", shQuote(paste(.libPaths(), collapse = ":")))))
  status <- attr(out, "status")
  list(status = if (is.null(status)) 0L else status, out = out)
}

# a small clustered catalog and its randoms (seeds seed and seed + 1) and
# their ra, dec as CSV files, removed when the calling test ends
cli_catalog_files <- function(seed, env = parent.frame()) {
  sim <- simulate_catalog(300, n_clusters = 5, sigma = 0.5, seed = seed)
  ran <- random_catalog(400, like = sim, seed = seed + 1)
  dfile <- withr_tempfile(env)
  rfile <- withr_tempfile(env)
  utils::write.csv(sim[c("ra", "dec")], dfile, row.names = FALSE,
                   quote = FALSE)
  utils::write.csv(ran[c("ra", "dec")], rfile, row.names = FALSE,
                   quote = FALSE)
  list(sim = sim, ran = ran, dfile = dfile, rfile = rfile)
}
