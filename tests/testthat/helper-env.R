# code run with environment variables set (WTHETA_CPU_NARROW,
# WTHETA_HUGE_PAGES, ...), each put back as it was afterwards
with_env <- function(vars, code) {
  old <- Sys.getenv(names(vars), unset = NA, names = TRUE)
  do.call(Sys.setenv, as.list(vars))
  on.exit(for (v in names(old)) {
    if (is.na(old[[v]])) Sys.unsetenv(v) else do.call(Sys.setenv, as.list(old[v]))
  })
  force(code)
}
