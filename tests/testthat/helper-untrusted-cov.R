# Many tests resample deliberately small set-ups (a few patches, bins as
# wide as the patches) because they test arithmetic, not error bars:
# wtheta() and wtheta_multi() then warn that the covariance cannot be
# trusted (singular; patches smaller than the largest angle). This runs
# `expr` with those two warnings, and only them, muffled; every other
# warning still reaches the test. test-covariance.R and test-multi.R test
# that the warnings are given.
untrusted_cov_ok <- function(expr) {
  withCallingHandlers(expr, warning = function(w) {
    msg <- conditionMessage(w)
    if (grepl("covariance of .* is singular \\(rank at most", msg) ||
        grepl("^the patches are about .* less than the largest angle", msg)) {
      invokeRestart("muffleWarning")
    }
  })
}
