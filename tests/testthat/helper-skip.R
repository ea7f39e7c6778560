# Reference catalogs live outside the package (../shared/data); the test
# command passes their absolute path in WTHETA_DATA.
shared_data <- function(file) {
  dir <- Sys.getenv("WTHETA_DATA")
  if (!nzchar(dir)) skip("WTHETA_DATA is not set (reference catalogs absent)")
  path <- file.path(dir, file)
  if (!file.exists(path)) skip(paste("reference catalog missing:", path))
  path
}

has_cuda <- function() {
  b <- wtheta_backends()
  any(b$backend == "cuda" & b$available)
}

skip_if_no_cuda <- function() {
  if (!has_cuda()) skip("no usable CUDA GPU")
}

# at most 2 threads in tests
test_threads <- function() min(2L, wtheta_threads())

# a temporary file removed when the calling test ends
withr_tempfile <- function(env = parent.frame()) {
  f <- tempfile()
  do.call(on.exit, list(substitute(unlink(f), list(f = f)), add = TRUE),
          envir = env)
  f
}

# A directory this process cannot write: a new 0555 directory (restored
# and removed when the calling test ends), or /sys/kernel where the
# process writes it anyway (root), which refuses even root; skips the
# test where there is neither.
unwritable_dir <- function(env = parent.frame()) {
  ro <- tempfile("ro-")
  dir.create(ro)
  Sys.chmod(ro, "0555")
  do.call(on.exit, list(substitute({
    Sys.chmod(ro, "0755")
    unlink(ro, recursive = TRUE)
  }, list(ro = ro)), add = TRUE), envir = env)
  if (file.access(ro, 2L) != 0L) return(ro)
  if (dir.exists("/sys/kernel")) return("/sys/kernel")
  skip("no directory this process cannot write")
}

# the Python that fixture checks run (/usr/bin/python3), skipping the test
# unless it imports astropy
astropy_python <- function() {
  py <- "/usr/bin/python3"
  if (!file.exists(py) ||
      system2(py, c("-c", shQuote("import astropy")), stdout = FALSE,
              stderr = FALSE) != 0) skip("no python3-astropy")
  py
}

# the words that Python code (its pieces pasted together) prints, run by
# astropy_python(), which must exit without an error (a FITS checksum or
# verify failure included)
astropy_words <- function(...) {
  out <- system2(astropy_python(), c("-c", shQuote(paste0(...))),
                 stdout = TRUE, stderr = TRUE)
  expect_null(attr(out, "status"))
  strsplit(out, " ")[[1]]
}
