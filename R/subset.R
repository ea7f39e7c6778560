# `[` of wtheta and wtheta_multi results.

# `[` on a wtheta_multi() result (documented in ?wtheta_multi-methods, R/print.R):
# a selection of whole correlations, or of the same bins in each
# correlation kept, stays a wtheta_multi result with the matching
# covariance block; anything else is a plain data frame, as before.

#' @rdname wtheta_multi-methods
#' @order 4
#' @param i,j,drop As for a data frame.
#' @export
`[.wtheta_multi` <- function(x, i, j, drop) {
  a <- attributes(x)
  plain <- as.data.frame(x)
  n <- nrow(plain)
  out <- plain_subset(plain, i, j, drop, nargs() < 3L && missing(drop))
  if (!is.data.frame(out)) return(out)
  out <- keep_theta_units(out, a)
  rows <- kept_rows(out, n)
  whole <- c("i", "j", "theta_lo", "theta_hi", "theta", "w")
  if (!all(whole %in% names(out)) || anyNA(rows) || anyDuplicated(rows) ||
      is.unsorted(rows) || !length(rows)) {
    return(out)
  }
  pair <- paste(as.integer(plain$i), as.integer(plain$j))
  blocks <- unique(pair)
  bin <- stats::ave(seq_len(n), factor(pair, levels = blocks),
                    FUN = seq_along)
  kept <- unique(pair[rows])
  bins <- lapply(kept, function(p) bin[rows][pair[rows] == p])
  if (!all(vapply(bins, identical, TRUE, bins[[1L]]))) return(out)
  s <- a$samples[a$samples %in% c(as.character(out$i),
                                  as.character(out$j))]
  out$i <- factor(as.character(out$i), levels = s)
  out$j <- factor(as.character(out$j), levels = s)
  attr(out, "row.names") <- c(NA_integer_, -length(rows))
  keep <- setdiff(names(a), c("names", "row.names", "class"))
  for (nm in keep) attr(out, nm) <- a[[nm]]
  if (!identical(rows, seq_len(n))) {
    b <- bins[[1L]]
    entries <- a$entries[match(kept, blocks)]
    attr(out, "entries") <- lapply(entries, function(e) {
      if (identical(b, seq_len(nrow(e)))) e else e[b, ]
    })
    if (!is.null(a$cov)) attr(out, "cov") <- a$cov[rows, rows, drop = FALSE]
    if (!is.null(a$replicates)) {
      attr(out, "replicates") <- a$replicates[rows, , drop = FALSE]
    }
    attr(out, "samples") <- s
    lo <- a$entries[[1L]]$theta_lo[b]
    hi <- a$entries[[1L]]$theta_hi[b]
    attr(out, "edges") <- bin_edges_of(lo, hi)
    attr(out, "pair_counts") <- NULL
  }
  class(out) <- a$class
  out
}

# a subset `out` of a result with attributes `a`: the unit of its theta
# columns when it has any (a plain data frame keeps it too)
keep_theta_units <- function(out, a) {
  th <- any(names(out) %in% c("theta_lo", "theta_hi", "theta",
                              "theta_mean"))
  attr(out, "theta_units") <- if (th) a$theta_units
  out
}

# The rows of the original that a data frame subset kept, from its row
# names (automatic row names survive `[` as the original row numbers;
# repeated rows get ".1", ".2" suffixes).
kept_rows <- function(out, n) {
  rn <- attr(out, "row.names")
  if (is.integer(rn) && length(rn) == 2L && is.na(rn[1L])) {
    return(seq_len(abs(rn[2L])))
  }
  suppressWarnings(as.integer(sub("\\..*$", "", as.character(rn))))
}

#' Subset a w(theta) result
#'
#' `[` on a [wtheta()] result keeps what is still true of the bins that
#' remain: the covariance rows and columns (`cov`), the replicate rows,
#' the bin edges (when the bins left are adjacent), and drops what no
#' longer is: pairs outside the edges (`n_outside`) and the raw
#' [pair_counts()] results, which describe all the bins. A subset that
#' repeats or reorders bins, or drops `theta_lo`, `theta_hi`, `theta` or
#' `w`, is no longer a w(theta) result and becomes a plain data frame.
#'
#' @param x A result of [wtheta()].
#' @param i,j,drop As for a data frame.
#' @return A result of [wtheta()] for fewer bins or columns, or a data
#'   frame.
#' @seealso [wtheta()], [wtheta_cov()].
#' @examples
#' sim <- simulate_catalog(2000, seed = 1)
#' ran <- random_catalog(4000, like = sim, seed = 2)
#' w <- wtheta(sim, ran, theta_bins(0.1, 5, n = 8, log = TRUE), threads = 1,
#'             error = "jackknife", n_patches = 10, seed = 3)
#' w3 <- w[2:4, ]
#' w3
#' dim(wtheta_cov(w3))
#' @export
`[.wtheta` <- function(x, i, j, drop) {
  a <- attributes(x)
  n <- nrow(x)
  plain <- as.data.frame(x)
  out <- plain_subset(plain, i, j, drop, nargs() < 3L && missing(drop))
  if (!is.data.frame(out)) return(out)
  out <- keep_theta_units(out, a)
  rows <- kept_rows(out, n)
  whole <- c("theta_lo", "theta_hi", "theta", "w")
  if (!all(whole %in% names(out)) || anyNA(rows) || anyDuplicated(rows) ||
      is.unsorted(rows) || !length(rows)) {
    return(out)
  }
  attr(out, "row.names") <- c(NA_integer_, -length(rows))
  keep <- setdiff(names(a), c("names", "row.names", "class"))
  for (nm in keep) attr(out, nm) <- a[[nm]]
  if (!identical(rows, seq_len(n))) {
    if (!is.null(a$cov)) attr(out, "cov") <- a$cov[rows, rows, drop = FALSE]
    if (!is.null(a$replicates)) {
      attr(out, "replicates") <- a$replicates[rows, , drop = FALSE]
    }
    adjacent <- length(rows) == 1L ||
      all(out$theta_hi[-length(rows)] == out$theta_lo[-1L])
    attr(out, "edges") <- if (adjacent) {
      c(out$theta_lo, out$theta_hi[length(rows)])
    }
    attr(out, "n_outside") <- NULL
    attr(out, "pair_counts") <- NULL
  }
  class(out) <- a$class
  out
}

# `plain[i, j, drop]` as `[` was called on the result: `one_index` for
# `x[i]` (columns), else rows `i` and columns `j`; arguments missing in the
# call stay missing here
plain_subset <- function(plain, i, j, drop, one_index) {
  if (one_index) return(if (missing(i)) plain else plain[i])
  ii <- if (missing(i)) seq_len(nrow(plain)) else i
  if (missing(j)) {
    if (missing(drop)) plain[ii, ] else plain[ii, , drop = drop]
  } else {
    if (missing(drop)) plain[ii, j] else plain[ii, j, drop = drop]
  }
}
