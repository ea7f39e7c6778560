#' Bin edges in angle
#'
#' Makes the edges of angular bins: linear (`width` or `n`), logarithmic
#' (`log = TRUE`) or any increasing vector (`edges`), in degrees or in the
#' angular unit `units`. Bins are `[lo, hi)`; see [wtheta-package] for how
#' pairs on an edge are decided.
#'
#' With `units` other than `"deg"`, `from`, `to`, `width` and `edges` are in
#' that unit and the edges are made there, by the same arithmetic as in
#' degrees (so `theta_bins(2.5, 250, n = 20, log = TRUE, units = "arcmin")`
#' has first and last edges 2.5 and 250 arcmin exactly). Each edge is then
#' converted to degrees once, by one operation: `x / 60` (arcmin),
#' `x / 3600` (arcsec), both correctly rounded, or `x * (180 / pi)` (rad, a
#' multiplication by the double nearest 180/pi). Those degree values are
#' the edges that are counted: a count with these bins is the count with
#' `theta_bins(edges = as.vector(b))`, pair for pair, and an edge that is a
#' whole number of degrees in arcmin or arcsec (60 or 120 arcmin, 3600
#' arcsec) is exactly that number of degrees. [pair_counts()], [wtheta()]
#' and [wtheta_multi()] give their results in the unit: the theta columns
#' (`theta_lo`, `theta_hi`, `theta`, `theta_mean`) are the edges as made in
#' the unit, their centres, and the mean separations converted from degrees
#' (`x * 60`, `x * 3600`, `x * (pi / 180)`); the attribute `theta_units`
#' names the unit, and print, plot and the files written say it.
#'
#' @param from,to First and last edge, in `units` (`0 <= from < to <= 180`
#'   degrees; `from > 0` for log bins).
#' @param width Bin width in `units` (linear bins); `(to - from) / width`
#'   must be a whole number.
#' @param n Number of bins, at most 10^6.
#' @param log Logarithmic spacing.
#' @param edges An increasing numeric vector of edges in `units`, used as
#'   given; the other arguments (but `units`) must then be missing.
#' @param units The angular unit of `from`, `to`, `width` and `edges` and
#'   of the results counted with these bins: `"deg"` (the default),
#'   `"arcmin"`, `"arcsec"` or `"rad"`.
#' @return A numeric vector of edges in degrees (length: bins + 1), the
#'   edges that are counted. With `units` other than `"deg"` it has the
#'   attributes `theta_units` (the unit) and `unit_edges` (the edges in
#'   that unit, as made); results counted with it are in that unit.
#' @seealso [pair_counts()] and [wtheta()], which take the edges as `bins`.
#' @examples
#' length(theta_bins(0, 90, width = 0.25))
#' theta_bins(0.01, 10, n = 20, log = TRUE)
#' theta_bins(edges = c(0, 0.5, 1, 2, 5))
#' # 20 log bins from 2.5 to 250 arcmin; the values are degrees
#' b <- theta_bins(2.5, 250, n = 20, log = TRUE, units = "arcmin")
#' attr(b, "unit_edges")[c(1, 21)]
#' range(b)
#' @export
theta_bins <- function(from, to, width = NULL, n = NULL, log = FALSE,
                       edges = NULL, units = "deg") {
  units <- check_theta_units(units, "units")
  if (!is.null(edges)) {
    if (!missing(from) || !missing(to) || !is.null(width) || !is.null(n)) {
      stop("give either `edges` or `from`, `to` and `width` or `n`, ",
           "not both.", call. = FALSE)
    }
    return(bins_in_units(check_edges(edges, "edges", units), "edges",
                         units))
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
  bins_in_units(check_edges(e, "bins", units), "bins", units)
}

# ---- angular units ----------------------------------------------------

theta_unit_names <- c("deg", "arcmin", "arcsec", "rad")

# `units` of theta_bins() (and a unit recorded on bins or results), checked
check_theta_units <- function(units, arg) {
  if (!is.character(units) || length(units) != 1L || is.na(units) ||
      !units %in% theta_unit_names) {
    stop("`", arg, "` must be one of ",
         paste0("\"", theta_unit_names, "\"", collapse = ", "), ", not ",
         describe(units), ".", call. = FALSE)
  }
  units
}

# Angles in `units` as degrees, each by one operation: x / 60 and
# x / 3600 are correctly rounded (so 60 arcmin is exactly 1 degree);
# radians are multiplied by the double nearest 180 / pi.
theta_to_deg <- function(x, units) {
  switch(units, deg = x, arcmin = x / 60, arcsec = x / 3600,
         rad = x * (180 / pi))
}

# angles in degrees in `units`, each by one multiplication
theta_from_deg <- function(x, units) {
  switch(units, deg = x, arcmin = x * 60, arcsec = x * 3600,
         rad = x * (pi / 180))
}

# angles in `from` in `to`: one operation between degrees, arcmin and
# arcsec, through degrees for radians
theta_convert <- function(x, from, to) {
  if (from == to) return(x)
  if (from == "arcmin" && to == "arcsec") return(x * 60)
  if (from == "arcsec" && to == "arcmin") return(x / 60)
  theta_from_deg(theta_to_deg(x, from), to)
}

# The unit of a result (data frame attribute or pair_counts element);
# degrees when it records none (results and files from before units)
theta_units_of <- function(x) {
  u <- if (inherits(x, "pair_counts")) x$theta_units else
    attr(x, "theta_units", exact = TRUE)
  u %||% "deg"
}

# the words of a unit in print and plot labels
theta_unit_label <- function(units) {
  switch(units, deg = "degrees", arcmin = "arcmin", arcsec = "arcsec",
         rad = "radians")
}

# edges in `units` as degrees (theta_to_deg()); in radians, pi (as
# close as a double comes to 180 degrees) is 180, not a bit above
unit_edges_to_deg <- function(e, units) {
  d <- theta_to_deg(e, units)
  if (units == "rad") d <- pmin(d, 180)
  d
}

# The edges `e` (in `units`, checked) as theta_bins() returns them:
# degrees, each converted once, with the unit and the edges as made
# when not degrees; the degree edges are checked again (strictly
# increasing, [0, 180]).
bins_in_units <- function(e, arg, units) {
  if (units == "deg") return(e)
  d <- check_edges(unit_edges_to_deg(e, units), arg)
  structure(d, theta_units = units, unit_edges = e)
}

# The unit and edges in it of `bins` (degree edges `edges`, checked):
# list(units, edges). Bins without a unit are degrees; `unit_edges` that
# no longer convert to `edges` (the vector was changed since) give way
# to the degree edges converted.
bins_units <- function(bins, edges) {
  u <- attr(bins, "theta_units", exact = TRUE)
  if (is.null(u)) return(list(units = "deg", edges = edges))
  u <- check_theta_units(u, "attr(bins, \"theta_units\")")
  ue <- attr(bins, "unit_edges", exact = TRUE)
  ok <- is.numeric(ue) && length(ue) == length(edges) &&
    identical(unit_edges_to_deg(as.double(ue), u), edges)
  list(units = u, edges = if (ok) as.double(ue) else
    theta_from_deg(edges, u))
}

# A pair_counts object counted in degrees (edges, theta_lo, theta_hi,
# theta_mean, theta_sum) in the unit of the call's bins `bu`
# (bins_units()): the edges as made in it, the angle sums and means
# converted; theta_units records the unit.
pair_counts_in_units <- function(pc, bu) {
  if (bu$units != "deg") {
    e <- bu$edges
    nb <- length(e) - 1L
    pc$edges <- e
    pc$theta_lo <- e[-(nb + 1L)]
    pc$theta_hi <- e[-1L]
    if (!is.null(pc$theta_sum)) {
      pc$theta_sum <- theta_from_deg(pc$theta_sum, bu$units)
      pc$theta_mean <- theta_from_deg(pc$theta_mean, bu$units)
    }
  }
  pc$theta_units <- bu$units
  pc
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

# the `bins` argument of pair_counts() and wtheta(), checked: the
# degree edges counted
bins_edges <- function(bins) {
  if (missing(bins)) {
    stop("`bins` is needed: edges in degrees, see theta_bins().",
         call. = FALSE)
  }
  check_edges(bins, "bins")
}

# edges in `units` checked: numeric, 2 to max_bins + 1, finite, within
# [0, 180] degrees, strictly increasing
check_edges <- function(e, arg, units = "deg") {
  if (!is.numeric(e) || is.object(e) && !inherits(e, "numeric")) {
    stop("`", arg, "` must be a numeric vector of edges in ",
         theta_unit_label(units), ", not ", describe(e), ".", call. = FALSE)
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
  top <- theta_from_deg(180, units)
  bad <- which(e < 0 | e > top)
  if (length(bad)) {
    stop("`", arg, "` edges must lie in [0, ", format(top, digits = 15),
         "] ", theta_unit_label(units), "; edge ", bad[1L], " is ",
         format(e[bad[1L]], digits = 15), ".", call. = FALSE)
  }
  bad <- which(diff(e) <= 0)
  if (length(bad)) {
    stop("`", arg, "` edges must be strictly increasing; edge ", bad[1L] + 1L,
         " (", format(e[bad[1L] + 1L], digits = 15), ") does not exceed edge ",
         bad[1L], " (", format(e[bad[1L]], digits = 15), ").", call. = FALSE)
  }
  e
}


# "20 bins from 0.01 to 10 deg, log-spaced" (in the result's unit)
describe_bins <- function(x) {
  u <- theta_units_of(x)
  e <- attr(x, "edges", exact = TRUE)
  if (is.null(e)) {
    if (nrow(x) > 1L && any(x$theta_hi[-nrow(x)] != x$theta_lo[-1L])) {
      return(paste0(nrow(x), " bins, not adjacent, from ",
                    format(signif(x$theta_lo[1L], 4)), " to ",
                    format(signif(x$theta_hi[nrow(x)], 4)), " ", u))
    }
    e <- c(x$theta_lo, x$theta_hi[nrow(x)])
  }
  spacing <- if (bins_are_log(e)) ", log-spaced" else
    if (length(e) > 2L && is_lin_spaced(e)) paste0(", width ",
                                                   format(signif(e[2L] - e[1L], 4)))
  paste0(nrow(x), " bin", if (nrow(x) != 1L) "s", " from ",
         format(signif(e[1L], 4)), " to ", format(signif(e[length(e)], 4)),
         " ", u, spacing)
}

is_lin_spaced <- function(e) {
  d <- diff(e)
  max(abs(d - mean(d))) < 1e-9 * mean(d)
}
