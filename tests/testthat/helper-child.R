# Runs R code in a child Rscript with this session's library paths, so that
# a crash or a hang fails a test instead of killing the suite. Returns
# list(status, output): status 124 when the child ran past `timeout`
# seconds.
run_in_child_io <- function(code, timeout = 60) {
  rscript <- file.path(R.home("bin"), "Rscript")
  script <- tempfile(fileext = ".R")
  on.exit(unlink(script))
  writeLines(code, script)
  env <- paste0("R_LIBS=", paste(.libPaths(), collapse = .Platform$path.sep))
  out <- suppressWarnings(system2(rscript, c("--vanilla", script),
                                  stdout = TRUE, stderr = TRUE, env = env,
                                  timeout = timeout))
  status <- attr(out, "status") %||% 0L
  list(status = status, output = paste(out, collapse = "\n"))
}

skip_if_no_fits <- function() {
  if (!wtheta:::fits_available()) skip("wtheta was built without cfitsio")
}

fixture <- function(name) test_path("fixtures", name)

`%||%` <- function(a, b) if (is.null(a)) b else a
