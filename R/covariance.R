# The wtheta_cov class: wtheta_cov(), its print, plot (the correlation
# matrix) and matrix methods.

#' Covariance of a w(theta) estimate
#'
#' The covariance of w between bins that [wtheta()] (or [wtheta_multi()])
#' estimated with its errors.
#'
#' @section When it can be trusted: A jackknife covariance from `P`
#'   patches (or a bootstrap one from `P` draws) has rank at most `P - 1`:
#'   with no more patches than bins it is singular and has no inverse, and
#'   [wtheta()] warns. Its patches should also be larger than the largest
#'   angle, or the pairs at the largest separations span patches and the
#'   errors there are underestimated; [wtheta()] warns when the patches'
#'   typical size (the median over patches of the diameter of a disc with
#'   the rms spread of the patch's randoms about their centre) is below
#'   the largest bin edge.
#'
#' @section The inverse covariance: The inverse of an estimated covariance
#'   is a biased estimate of the inverse covariance, too large on average.
#'   For `P` jackknife patches (or `P` bootstrap draws) and `p` bins (the
#'   length of the data vector fitted) with `p < P - 2`, multiply it by the
#'   Hartlap factor
#'   \deqn{\alpha = \frac{P - p - 2}{P - 1}}{alpha = (P - p - 2) / (P - 1)}
#'   (Hartlap, Simon & Schneider 2007, A&A 464, 399) before using it in a
#'   chi-squared or a likelihood:
#'   `alpha * solve(as.matrix(wtheta_cov(w)))`. With 20 patches and 10
#'   bins, alpha is 8/19: the plain inverse would overstate the precision
#'   by more than a factor of two. The factor assumes independent,
#'   Gaussian replicates; jackknife replicates are neither, so treat it as
#'   the least correction, and prefer many more patches than bins.
#'
#' @param x A result of [wtheta()], or of [wtheta_multi()]: then the joint
#'   covariance of all its correlations, rows and columns in the order of
#'   its rows (correlation by correlation, bins within each), named
#'   `"i j theta"`, and with attribute `blocks` (the correlations, `"i-j"`).
#' @return The covariance matrix of `w` between bins: from the jackknife or
#'   bootstrap replicates, or diagonal for Poisson errors; `NULL` for
#'   `error = "none"`. It is a matrix of class `wtheta_cov`, with
#'   attributes `edges` (the bin edges, when the bins are adjacent),
#'   `theta_units` (their unit) and `error`, so that
#'   [plot()][plot.wtheta_cov()] draws its correlation
#'   matrix against theta; `as.matrix()` and `[` give plain matrices.
#' @seealso [plot.wtheta_cov()], [wtheta()].
#' @examples
#' sim <- simulate_catalog(2000, seed = 1)
#' ran <- random_catalog(4000, seed = 2)
#' w <- wtheta(sim, ran, theta_bins(0.1, 5, n = 6, log = TRUE), threads = 1,
#'             error = "jackknife", n_patches = 12, seed = 1)
#' round(stats::cov2cor(as.matrix(wtheta_cov(w))), 2)
#' plot(wtheta_cov(w))
#' # the inverse for a chi-squared, with the Hartlap factor
#' P <- attr(w, "n_patches")
#' p <- nrow(w)
#' icov <- (P - p - 2) / (P - 1) * solve(as.matrix(wtheta_cov(w)))
#' @export
wtheta_cov <- function(x) {
  if (!inherits(x, "wtheta") && !inherits(x, "wtheta_multi")) {
    stop("`x` must be a result of wtheta() or wtheta_multi(), not ",
         describe(x), ".", call. = FALSE)
  }
  cov <- attr(x, "cov", exact = TRUE)
  if (is.null(cov)) return(NULL)
  structure(cov, class = c("wtheta_cov", "matrix", "array"),
            edges = attr(x, "edges", exact = TRUE),
            theta_units = attr(x, "theta_units", exact = TRUE),
            error = attr(x, "error", exact = TRUE),
            blocks = if (inherits(x, "wtheta_multi"))
              names(attr(x, "entries")))
}

#' Plot the correlation matrix of a w(theta) covariance
#'
#' Draws the correlation matrix of the covariance from [wtheta_cov()] as an
#' image with a colour key, bins placed at their angles on both axes
#' (logarithmic for log-spaced bins). Bins where w has no variance (a
#' correlation that is not defined) are grey. The joint covariance of a
#' [wtheta_multi()] result is drawn as blocks, one per correlation, named on
#' both axes and separated by lines, with theta increasing within each.
#'
#' @param x A covariance from [wtheta_cov()].
#' @param main Title; the error type and number of bins go under it.
#' @param col Colours from -1 to 1.
#' @param ... Passed to [graphics::image()] (for example `xlab`).
#' @return The correlation matrix, invisibly.
#' @seealso [wtheta_cov()], [plot.wtheta()].
#' @examples
#' sim <- simulate_catalog(2000, seed = 1)
#' ran <- random_catalog(4000, like = sim, seed = 2)
#' w <- wtheta(sim, ran, theta_bins(0.1, 5, n = 6, log = TRUE), threads = 1,
#'             error = "jackknife", n_patches = 8, seed = 1)
#' plot(wtheta_cov(w))
#' @export
plot.wtheta_cov <- function(x, main = NULL,
                            col = grDevices::hcl.colors(20, "Blue-Red 3"),
                            ...) {
  m <- cov_matrix(x)
  n <- nrow(m)
  d <- sqrt(diag(m))
  r <- m / outer(d, d)
  r[!is.finite(r)] <- NA_real_
  e <- attr(x, "edges", exact = TRUE)
  blocks <- attr(x, "blocks", exact = TRUE)
  axis_name <- theta_axis_label(x)
  if (!is.null(blocks)) {
    # a joint covariance (wtheta_multi()): one block of bins per
    # correlation, theta increasing within each
    return(plot_cov_blocks(r, blocks, attr(x, "error", exact = TRUE), main,
                           col, ...))
  }
  if (is.null(e) || length(e) != n + 1L) {
    e <- seq(0.5, n + 0.5)
    axis_name <- "bin"
  }
  log_ax <- bins_are_log(e)
  # a bin from 0 cannot sit on a log axis: start it at half its upper edge
  if (log_ax && e[1L] <= 0) e[1L] <- e[2L] / 2
  err <- attr(x, "error", exact = TRUE)
  if (is.null(main)) main <- "Correlation of w between bins"
  breaks <- seq(-1, 1, length.out = length(col) + 1L)
  old <- graphics::par(no.readonly = TRUE)
  on.exit(graphics::par(old))
  graphics::layout(matrix(1:2, 1L), widths = c(5, 1))
  # the title over both panels, so that a narrow device does not clip it
  graphics::par(oma = c(0, 0, 2.5, 0), mar = c(5, 4.5, 1, 1))
  graphics::image(e, e, pmin(pmax(r, -1), 1), col = col, breaks = breaks,
                  log = if (log_ax) "xy" else "", xlab = axis_name,
                  ylab = axis_name, ...)
  graphics::title(main, outer = TRUE, line = 1)
  if (!is.null(err)) {
    graphics::mtext(paste0(err, " errors, ", n, " bins"), side = 3,
                    outer = TRUE, line = 0, cex = 0.8)
  }
  if (anyNA(r)) {
    graphics::image(e, e, ifelse(is.na(r), 0, NA_real_), col = "grey80",
                    add = TRUE)
  }
  graphics::box()
  colour_bar(breaks, col, bottom = 5)
  invisible(r)
}

# the colour key of a correlation image, in the next panel of the layout
colour_bar <- function(breaks, col, bottom) {
  graphics::par(mar = c(bottom, 0.5, 1, 4))
  graphics::image(1, breaks, matrix(breaks[-1L] - diff(breaks) / 2, 1L),
                  col = col, breaks = breaks, xaxt = "n", yaxt = "n",
                  xlab = "", ylab = "")
  graphics::axis(4, las = 1)
  graphics::mtext("correlation", side = 4, line = 2.5)
  graphics::box()
}

# the plain matrix of a wtheta_cov
cov_matrix <- function(x) {
  m <- unclass(x)
  attr(m, "edges") <- NULL
  attr(m, "theta_units") <- NULL
  attr(m, "error") <- NULL
  attr(m, "blocks") <- NULL
  m
}

# the correlation matrix `r` of a joint covariance: blocks of bins (one per
# correlation) separated by lines and named on both axes
plot_cov_blocks <- function(r, blocks, err, main, col, ...) {
  n <- nrow(r)
  nb <- n / length(blocks)
  if (is.null(main)) main <- "Correlation of w between correlations and bins"
  breaks <- seq(-1, 1, length.out = length(col) + 1L)
  old <- graphics::par(no.readonly = TRUE)
  on.exit(graphics::par(old))
  graphics::layout(matrix(1:2, 1L), widths = c(5, 1))
  lab <- max(strwidth_lines(blocks), 4)
  graphics::par(oma = c(0, 0, 2.5, 0), mar = c(lab + 2, lab + 1, 1, 1))
  idx <- seq_len(n)
  graphics::image(idx, idx, pmin(pmax(r, -1), 1), col = col, breaks = breaks,
                  xaxt = "n", yaxt = "n", xlab = "", ylab = "", ...)
  if (anyNA(r)) {
    graphics::image(idx, idx, ifelse(is.na(r), 0, NA_real_), col = "grey80",
                    add = TRUE)
  }
  cuts <- nb * seq_len(length(blocks) - 1L) + 0.5
  graphics::abline(v = cuts, h = cuts, col = "grey30")
  mid <- nb * (seq_along(blocks) - 0.5) + 0.5
  graphics::axis(1, at = mid, labels = blocks, las = 2, cex.axis = 0.8,
                 tick = FALSE)
  graphics::axis(2, at = mid, labels = blocks, las = 1, cex.axis = 0.8,
                 tick = FALSE)
  graphics::mtext(expression("correlation; " * theta * " increases within each"),
                  side = 1, line = lab + 0.8, cex = 0.8)
  graphics::title(main, outer = TRUE, line = 1)
  if (!is.null(err)) {
    graphics::mtext(paste0(err, " errors, ", length(blocks),
                           " correlations of ", nb, " bins"), side = 3,
                    outer = TRUE, line = 0, cex = 0.8)
  }
  graphics::box()
  colour_bar(breaks, col, bottom = lab + 2)
  invisible(r)
}

# margin lines that the longest of `labels` needs at cex 0.8
strwidth_lines <- function(labels) {
  0.8 * max(graphics::strwidth(labels, units = "inches")) /
    graphics::par("csi") + 1
}

#' @export
print.wtheta_cov <- function(x, ...) {
  err <- attr(x, "error", exact = TRUE)
  cat("<wtheta_cov> ", nrow(x), " x ", ncol(x), " covariance of w between ",
      "bins", if (!is.null(err)) paste0(" (", err, " errors)"),
      "; plot() draws its correlation matrix\n", sep = "")
  print(cov_matrix(x), ...)
  invisible(x)
}

#' @export
`[.wtheta_cov` <- function(x, ...) {
  cov_matrix(x)[...]
}

#' @export
as.matrix.wtheta_cov <- function(x, ...) cov_matrix(x)

# The warnings of a result whose covariance cannot be trusted: singular
# (no more patches, or bootstrap draws, than bins) and patches smaller
# than the largest angle (`size` and `largest` in degrees, NA to skip).
# `n_bins`: the covariance's size; `unit`: what it counts ("bins" of
# wtheta(), "values" of wtheta_multi()'s joint covariance) and `of`, said
# after the size ("(3 correlations x 10 bins)", say)
warn_untrusted_cov <- function(error, n_bins, n_rep, size, largest,
                               unit = "bins", of = NULL) {
  if (!error %in% c("jackknife", "bootstrap")) return(invisible())
  if (n_rep <= n_bins) {
    what <- if (error == "jackknife") "patches" else "bootstrap draws"
    warning("the ", error, " covariance of ", n_bins, " ", unit,
            if (!is.null(of)) paste0(" ", of), " from ", n_rep,
            " ", what, " is singular (rank at most ", n_rep - 1L,
            ") and has no inverse: use more ", what, " than ", unit, " (",
            if (error == "jackknife") "`n_patches`" else "`n_boot`",
            " > ", n_bins, "), many more to invert it (see ?wtheta_cov).",
            call. = FALSE)
  }
  if (is.finite(size) && is.finite(largest) && size < largest) {
    warning("the patches are about ", signif(size, 2), " degrees across, ",
            "less than the largest angle (", signif(largest, 3),
            " degrees): errors at the largest separations are ",
            "underestimated; use fewer, larger patches (`n_patches`).",
            call. = FALSE)
  }
  invisible()
}
