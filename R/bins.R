#' Bin edges in angle
#'
#' Makes the edges of angular bins, in degrees: linear (`width` or `n`),
#' logarithmic (`log = TRUE`) or any increasing vector (`edges`). Bins are
#' `[lo, hi)`; see [wtheta-package] for how pairs on an edge are decided.
#'
#' @param from,to First and last edge, in degrees (`0 <= from < to <= 180`;
#'   `from > 0` for log bins).
#' @param width Bin width in degrees (linear bins); `(to - from) / width`
#'   must be a whole number.
#' @param n Number of bins, at most 10^6.
#' @param log Logarithmic spacing.
#' @param edges An increasing numeric vector of edges in degrees, used as
#'   given; the other arguments must then be missing.
#' @return A numeric vector of edges in degrees (length: bins + 1).
#' @seealso [pair_counts()] and [wtheta()], which take the edges as `bins`.
#' @examples
#' length(theta_bins(0, 90, width = 0.25))
#' theta_bins(0.01, 10, n = 20, log = TRUE)
#' theta_bins(edges = c(0, 0.5, 1, 2, 5))
#' @export
theta_bins <- function(from, to, width = NULL, n = NULL, log = FALSE,
                       edges = NULL) {
  if (!is.null(edges)) {
    if (!missing(from) || !missing(to) || !is.null(width) || !is.null(n)) {
      stop("give either `edges` or `from`, `to` and `width` or `n`, ",
           "not both.", call. = FALSE)
    }
    return(check_edges(edges, "edges"))
  }
  if (missing(from) || missing(to)) {
    stop("`from` and `to` are needed unless `edges` is given.", call. = FALSE)
  }
  check_number(from, "from")
  check_number(to, "to")
  check_flag(log, "log")
  if (is.null(width) == is.null(n)) {
    stop("give exactly one of `width` and `n`.", call. = FALSE)
  }
  if (!(to > from)) {
    stop("`to` (", to, ") must be greater than `from` (", from, ").",
         call. = FALSE)
  }
  if (!is.null(n)) check_count(n, "n", max_bins)
  if (log) {
    if (!(from > 0)) {
      stop("`from` must be greater than 0 for log bins, not ", from, ".",
           call. = FALSE)
    }
    if (is.null(n)) {
      stop("log bins need `n`, not `width`.", call. = FALSE)
    }
    e <- exp(seq(base::log(from), base::log(to), length.out = n + 1))
  } else if (!is.null(width)) {
    check_number(width, "width")
    if (!(width > 0)) {
      stop("`width` must be positive, not ", width, ".", call. = FALSE)
    }
    k <- (to - from) / width
    if (abs(k - round(k)) > 1e-9 * max(1, k)) {
      stop("`width` (", width, ") does not divide `to` - `from` (",
           to - from, ") into a whole number of bins.", call. = FALSE)
    }
    if (k > max_bins) {
      stop("`width` (", width, ") makes ", format_n(round(k)), " bins; at ",
           "most ", format_n(max_bins), " are allowed.", call. = FALSE)
    }
    e <- from + seq(0, round(k)) * width
  } else {
    e <- seq(from, to, length.out = n + 1)
  }
  e[1L] <- from
  e[length(e)] <- to
  check_edges(e, "bins")
}

# The centre of each bin: geometric, sqrt(lo hi), when the edges are log
# spaced (bins_are_log(): theta_bins(log = TRUE) or edges given so), where the midpoint would sit off-centre on the log axis
# that such bins are plotted on; the midpoint otherwise (and for one bin,
# whose spacing cannot be told).
bin_centres <- function(edges) {
  nb <- length(edges) - 1L
  lo <- edges[-(nb + 1L)]
  hi <- edges[-1L]
  if (bins_are_log(edges)) {
    list(theta = sqrt(lo * hi), how = "geometric")
  } else {
    list(theta = (lo + hi) / 2, how = "midpoint")
  }
}

# The one test of log-spaced edges (bin centres, print, plot axes): at
# least two bins, the first edge above 0, and one ratio between neighbours
# to 1e-9
bins_are_log <- function(edges) {
  nb <- length(edges) - 1L
  if (nb < 2L || !(edges[1L] > 0)) return(FALSE)
  r <- edges[-1L] / edges[-(nb + 1L)]
  all(abs(r / r[1L] - 1) < 1e-9)
}

# the most bins a count takes: the engines keep one histogram of bins + 2
# slots per thread (and per pair of patches)
max_bins <- 1e6

# the `bins` argument of pair_counts() and wtheta(), checked
bins_edges <- function(bins) {
  if (missing(bins)) {
    stop("`bins` is needed: edges in degrees, see theta_bins().",
         call. = FALSE)
  }
  check_edges(bins, "bins")
}

check_edges <- function(e, arg) {
  if (!is.numeric(e) || is.object(e) && !inherits(e, "numeric")) {
    stop("`", arg, "` must be a numeric vector of edges in degrees, not ",
         describe(e), ".", call. = FALSE)
  }
  e <- as.double(e)
  if (length(e) < 2L) {
    stop("`", arg, "` must hold at least two edges, not ", length(e), ".",
         call. = FALSE)
  }
  if (length(e) > max_bins + 1) {
    stop("`", arg, "` must hold at most ", format_n(max_bins + 1),
         " edges, not ", format_n(length(e)), ".", call. = FALSE)
  }
  bad <- which(!is.finite(e))
  if (length(bad)) {
    stop("`", arg, "` has a non-finite edge (", e[bad[1L]], ") at position ",
         bad[1L], ".", call. = FALSE)
  }
  bad <- which(e < 0 | e > 180)
  if (length(bad)) {
    stop("`", arg, "` edges must lie in [0, 180] degrees; edge ", bad[1L],
         " is ", format(e[bad[1L]], digits = 15), ".", call. = FALSE)
  }
  bad <- which(diff(e) <= 0)
  if (length(bad)) {
    stop("`", arg, "` edges must be strictly increasing; edge ", bad[1L] + 1L,
         " (", format(e[bad[1L] + 1L], digits = 15), ") does not exceed edge ",
         bad[1L], " (", format(e[bad[1L]], digits = 15), ").", call. = FALSE)
  }
  e
}

# "20 bins from 0.01 to 10 deg, log-spaced"
describe_bins <- function(x) {
  e <- attr(x, "edges", exact = TRUE)
  if (is.null(e)) {
    if (nrow(x) > 1L && any(x$theta_hi[-nrow(x)] != x$theta_lo[-1L])) {
      return(paste0(nrow(x), " bins, not adjacent, from ",
                    format(signif(x$theta_lo[1L], 4)), " to ",
                    format(signif(x$theta_hi[nrow(x)], 4)), " deg"))
    }
    e <- c(x$theta_lo, x$theta_hi[nrow(x)])
  }
  spacing <- if (bins_are_log(e)) ", log-spaced" else
    if (length(e) > 2L && is_lin_spaced(e)) paste0(", width ",
                                                   format(signif(e[2L] - e[1L], 4)))
  paste0(nrow(x), " bin", if (nrow(x) != 1L) "s", " from ",
         format(signif(e[1L], 4)), " to ", format(signif(e[length(e)], 4)),
         " deg", spacing)
}

is_lin_spaced <- function(e) {
  d <- diff(e)
  max(abs(d - mean(d))) < 1e-9 * mean(d)
}
