# code evaluated with the option wtheta.grid set to mode (FALSE, "auto",
# TRUE or "prune"), the option restored after
with_grid <- function(mode, code) {
  old <- options(wtheta.grid = mode)
  on.exit(options(old))
  code
}
