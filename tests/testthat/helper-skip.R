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
