# print, summary, plot and as.data.frame methods for pair_counts and wtheta
# results.

#' @export
print.pair_counts <- function(x, ...) {
  conv <- if (x$type == "cross") "all n1 * n2 pairs" else if (x$self_pairs)
    "ordered pairs, self pairs included" else "unordered pairs i < j"
  cat("<pair_counts> ", x$type, ": ", format_n(x$n1),
      if (x$type == "cross") paste0(" x ", format_n(x$n2)), " points, ",
      conv, "\n", sep = "")
  cat("  ", length(x$counts), " bins from ", format(x$edges[1L]), " to ",
      format(x$edges[length(x$edges)]), " deg; ", format_n(x$n_pairs),
      " pairs, ", format_n(x$n_outside), " outside the edges\n", sep = "")
  cat("  ", describe_run(x$backend, x$threads, x$devices, x$elapsed), "\n",
      sep = "")
  show <- min(length(x$counts), 6L)
  print(data.frame(theta_lo = x$theta_lo, theta_hi = x$theta_hi,
                   count = x$counts)[seq_len(show), ], row.names = FALSE)
  if (length(x$counts) > show) {
    cat("  ... ", length(x$counts) - show, " more bins\n", sep = "")
  }
  invisible(x)
}

estimator_name <- function(e) {
  switch(e, LS = "Landy-Szalay", natural = "natural", DP = "Davis-Peebles",
         Hamilton = "Hamilton")
}

#' @export
print.wtheta <- function(x, n = 10L, ...) {
  a <- attributes(x)
  e <- a$edges
  cat("<wtheta> ", estimator_name(a$estimator), " w(theta), ", nrow(x),
      " bins from ", format(e[1L]), " to ", format(e[length(e)]), " deg\n",
      sep = "")
  cat("  data: ", format_n(a$n_data), " points; random: ",
      format_n(a$n_random), " points\n", sep = "")
  cat("  counts: ", if (a$self_pairs)
    "ordered pairs, self pairs included (self_pairs = TRUE)" else
      "unordered pairs, no self pairs (self_pairs = FALSE)", "\n", sep = "")
  cat("  ", describe_run(a$backend, a$threads, a$devices, a$elapsed), "\n",
      sep = "")
  show <- min(nrow(x), n)
  print(as.data.frame(x)[seq_len(show), , drop = FALSE], row.names = FALSE,
        digits = 4)
  if (nrow(x) > show) cat("  ... ", nrow(x) - show, " more bins\n", sep = "")
  invisible(x)
}

#' @export
as.data.frame.wtheta <- function(x, ...) {
  data.frame(theta_lo = x$theta_lo, theta_hi = x$theta_hi, theta = x$theta,
             DD = x$DD, DR = x$DR, RR = x$RR, w = x$w)
}

#' Plot w(theta)
#'
#' Plots w against the bin centres. The angle axis is logarithmic when the
#' bins are logarithmically spaced, and the w axis when every w is positive.
#'
#' @param x A result of [wtheta()].
#' @param log Axes to draw logarithmically, as for [plot.default()]; by
#'   default chosen from the data.
#' @param ... Passed to [plot.default()].
#' @return `x`, invisibly.
#' @export
plot.wtheta <- function(x, log = NULL, ...) {
  ok <- is.finite(x$w)
  if (is.null(log)) {
    e <- attr(x, "edges")
    log_x <- e[1L] > 0 && length(e) > 2L &&
      stats::sd(diff(base::log(e))) < 1e-6 * mean(diff(base::log(e)))
    log_y <- any(ok) && all(x$w[ok] > 0)
    log <- paste0(c(if (log_x) "x", if (log_y) "y"), collapse = "")
  }
  graphics::plot(x$theta[ok], x$w[ok], log = log, type = "b", pch = 19,
                 xlab = expression(theta ~ "(degrees)"),
                 ylab = expression(w(theta)),
                 main = paste(estimator_name(attr(x, "estimator")),
                              "estimate"), ...)
  if (!grepl("y", log)) graphics::abline(h = 0, lty = 3)
  invisible(x)
}
