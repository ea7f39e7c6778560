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
# spaced (one ratio between neighbours, to 1e-9: theta_bins(log = TRUE) or
# edges given so), where the midpoint would sit off-centre on the log axis
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

bins_are_log <- function(edges) {
  nb <- length(edges) - 1L
  if (nb < 2L || !(edges[1L] > 0)) return(FALSE)
  r <- edges[-1L] / edges[-(nb + 1L)]
  all(abs(r / r[1L] - 1) < 1e-9)
}
