#' Path of the installed command-line script
#'
#' The package ships a command-line script, `wtheta.R`, that reads catalog
#' files with [read_catalog()] (or draws randoms from a HEALPix mask),
#' estimates w(theta) with [wtheta()] and writes the result with
#' [write_wtheta()] (CSV, FITS, SACC or twopoint) and a plot.
#' `wtheta_cli()` gives the path of the copy installed with the package
#' that is loaded, and prints nothing itself, so that
#' `Rscript "$(Rscript -e 'cat(wtheta::wtheta_cli())')" --help` runs that
#' copy and not a stale one found first elsewhere. The script needs the
#' optparse package (Debian: r-cran-optparse); `--help` lists its options
#' (short flags included), the default bins (`log:0.01,10,15`: 15
#' logarithmic bins from 0.01 to 10 degrees) and the columns it writes.
#'
#' @return The path (a character string).
#' @seealso [wtheta()], [read_catalog()], [theta_bins()].
#' @examples
#' p <- wtheta_cli()
#' file.exists(p)
#' # from a shell:
#' # Rscript "$(Rscript -e 'cat(wtheta::wtheta_cli())')" --help
#' @export
wtheta_cli <- function() {
  # system.file() finds the loaded namespace's own copy first
  system.file("scripts", "wtheta.R", package = "wtheta", mustWork = TRUE)
}
