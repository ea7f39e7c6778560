#' Path of the installed command-line script
#'
#' The package ships a command-line script, `wtheta.R`, that reads catalog
#' files, estimates w(theta) with [wtheta()] and writes a CSV table and a
#' plot. `wtheta_cli()` prints the path of the copy installed with the
#' package that is loaded, so that
#' `Rscript "$(Rscript -e 'wtheta::wtheta_cli()')" --help` runs that copy
#' and not a stale one found first elsewhere. The script needs the
#' optparse package (Debian: r-cran-optparse); `--help` lists its options
#' (short flags included) and the columns it writes.
#'
#' @param print Print the path (on a line of its own).
#' @return The path, invisibly.
#' @seealso [wtheta()], [read_catalog()], [theta_bins()].
#' @examples
#' p <- wtheta_cli()
#' file.exists(p)
#' # from a shell:
#' # Rscript "$(Rscript -e 'wtheta::wtheta_cli()')" --help
#' @export
wtheta_cli <- function(print = TRUE) {
  check_flag(print, "print")
  # system.file() finds the loaded namespace's own copy first
  path <- system.file("scripts", "wtheta.R", package = "wtheta",
                      mustWork = TRUE)
  if (print) cat(path, "\n", sep = "")
  invisible(path)
}
