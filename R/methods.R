# print, summary, plot, autoplot and as.data.frame methods for pair_counts
# and wtheta results. The wtheta methods read what is there: any count
# columns, an optional w_err, and attributes that may be missing.

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
  if (!is.null(x$distributed)) cat("  ", describe_distributed(x$distributed),
                                   "\n", sep = "")
  show <- min(length(x$counts), 6L)
  print(data.frame(theta_lo = x$theta_lo, theta_hi = x$theta_hi,
                   count = x$counts)[seq_len(show), ], row.names = FALSE)
  if (length(x$counts) > show) {
    cat("  ... ", length(x$counts) - show, " more bins\n", sep = "")
  }
  invisible(x)
}

# one line on a distributed count: tasks, workers, what each received
describe_distributed <- function(d) {
  paste0("distributed: ", d$tasks, " tasks (", d$blocks, " blocks per ",
         "catalog) on ", d$workers, " worker", if (d$workers != 1L) "s",
         " (", d$plan, "); each task received at most ",
         format_n(d$points_per_task), " points (",
         format(round(d$bytes_per_task / 1e6, 2), nsmall = 2), " MB)",
         if (isTRUE(d$reused > 0)) paste0("; ", d$reused,
                                          " reused from the checkpoint"),
         if (isTRUE(d$retried > 0)) paste0("; ", d$retried, " retried"))
}

estimator_name <- function(e) {
  if (is.null(e)) return("unknown estimator")
  switch(e, LS = "Landy-Szalay", natural = "natural", DP = "Davis-Peebles",
         Hamilton = "Hamilton", e)
}

# columns of a wtheta result that hold pair counts
count_columns <- function(x) {
  known <- intersect(names(x), c("DD", "DR", "RR", "D1D2", "D1R2", "R1D2",
                                 "R1R2"))
  if (length(known)) return(known)
  setdiff(names(x), c("theta_lo", "theta_hi", "theta", "w", "w_err"))
}

result_type <- function(x) {
  type <- attr(x, "type", exact = TRUE)
  if (is.null(type)) type <- if ("D1D2" %in% names(x)) "cross" else "auto"
  type
}

# "20 bins from 0.01 to 10 deg, log-spaced"
describe_bins <- function(x) {
  e <- attr(x, "edges", exact = TRUE)
  if (is.null(e)) e <- c(x$theta_lo, x$theta_hi[nrow(x)])
  spacing <- if (length(e) > 2L && is_log_spaced(e)) ", log-spaced" else
    if (length(e) > 2L && is_lin_spaced(e)) paste0(", width ",
                                                   format(signif(e[2L] - e[1L], 4)))
  paste0(nrow(x), " bin", if (nrow(x) != 1L) "s", " from ",
         format(signif(e[1L], 4)), " to ", format(signif(e[length(e)], 4)),
         " deg", spacing)
}

is_log_spaced <- function(e) {
  if (!(e[1L] > 0)) return(FALSE)
  d <- diff(log(e))
  max(abs(d - mean(d))) < 1e-6 * mean(d)
}

is_lin_spaced <- function(e) {
  d <- diff(e)
  max(abs(d - mean(d))) < 1e-9 * mean(d)
}

describe_sizes <- function(a, type) {
  nd <- a$n_data
  nr <- a$n_random
  fmt <- function(n) if (is.null(n)) "?" else
    paste(format_n(n), collapse = " and ")
  paste0("data ", fmt(nd), ", randoms ", fmt(nr), " points")
}

describe_convention <- function(a, type) {
  if (type == "cross") return("cross pairs: all n1 * n2 pairs")
  sp <- a$self_pairs
  if (is.null(sp)) return("pair convention not recorded")
  if (isTRUE(sp)) "ordered pairs, self pairs included (self_pairs = TRUE)"
  else "unordered pairs, no self pairs (self_pairs = FALSE)"
}

describe_errors <- function(x, a) {
  err <- a$error
  if (is.null(err)) err <- if ("w_err" %in% names(x)) "given" else "none"
  out <- paste0("errors: ", err)
  if (!is.null(a$n_patches) && err %in% c("jackknife", "bootstrap")) {
    out <- paste0(out, " (", a$n_patches, " patches)")
  }
  if (isTRUE(a$weighted)) out <- paste0(out, "; weighted pairs")
  out
}

describe_run_attr <- function(a) {
  if (is.null(a$backend)) return("backend not recorded")
  threads <- if (is.null(a$threads)) NA else a$threads
  elapsed <- if (is.null(a$elapsed)) NA_real_ else a$elapsed
  if (a$backend == "cpu" && is.na(threads)) {
    return(paste0("backend: cpu, ", format(signif(elapsed, 3)), " s"))
  }
  describe_run(a$backend, threads, a$devices, elapsed)
}

#' Print, summarise and convert w(theta) results
#'
#' `print()` shows the sizes, estimator, counting convention, errors,
#' backend and time of a [wtheta()] result, then its first bins.
#' `summary()` gives the headline numbers; `as.data.frame()` drops the
#' class and attributes.
#'
#' @param x,object A result of [wtheta()].
#' @param n Number of bins to show.
#' @param ... Ignored.
#' @return `print()` returns `x` invisibly; `summary()` an object of class
#'   `summary.wtheta`, a list with `type`, `estimator`, `n_data`,
#'   `n_random`, `self_pairs`, `n_bins`, `theta_range`, `pairs` (pairs
#'   counted in the bins, by count column), `n_outside`, `w_first` (w in
#'   the first bin with a finite w), `w_max` and `theta_at_max`,
#'   `theta_zero` (centre of the first bin after the first where w is not
#'   positive, `NA` if none), `error`, `median_rel_err` (median of
#'   `w_err / |w|`, `NA` without errors), `backend`, `threads`, `devices`,
#'   `elapsed`; `as.data.frame()` a plain data frame.
#' @examples
#' sim <- simulate_catalog(2000, seed = 1)
#' ran <- random_catalog(4000, like = sim, seed = 2)
#' w <- wtheta(sim, ran, theta_bins(0.05, 5, n = 8, log = TRUE), threads = 1)
#' print(w, n = 3)
#' summary(w)
#' head(as.data.frame(w), 3)
#' @name wtheta-methods
NULL

#' @rdname wtheta-methods
#' @export
print.wtheta <- function(x, n = 10L, ...) {
  a <- attributes(x)
  type <- result_type(x)
  cat("<wtheta> ", if (type == "cross") "cross-correlation" else
    "auto-correlation", ", ", estimator_name(a$estimator), "; ",
    describe_bins(x), "\n", sep = "")
  cat("  ", describe_sizes(a, type), "\n", sep = "")
  cat("  ", describe_convention(a, type), "; ", describe_errors(x, a), "\n",
      sep = "")
  out <- a$n_outside
  cat("  ", describe_run_attr(a), "\n", sep = "")
  if (length(out) && all(is.finite(out)) && any(out > 0)) {
    cat("  pairs outside the edges: ",
        paste0(if (!is.null(names(out))) paste0(names(out), " "),
               vapply(out, format_n, ""), collapse = ", "), "\n", sep = "")
  }
  show <- min(nrow(x), n)
  df <- as.data.frame(x)[seq_len(show), , drop = FALSE]
  print(df, row.names = FALSE, digits = 4)
  if (nrow(x) > show) {
    cat("# ... ", nrow(x) - show, " more bin", if (nrow(x) - show > 1L) "s",
        "; print(x, n = ", nrow(x), ") or as.data.frame(x) for all\n",
        sep = "")
  }
  invisible(x)
}

#' @rdname wtheta-methods
#' @export
summary.wtheta <- function(object, ...) {
  a <- attributes(object)
  x <- object
  ok <- which(is.finite(x$w))
  first <- if (length(ok)) ok[1L] else NA_integer_
  imax <- if (length(ok)) ok[which.max(x$w[ok])] else NA_integer_
  nonpos <- if (length(ok)) ok[x$w[ok] <= 0] else integer(0)
  err <- a$error
  if (is.null(err)) err <- if ("w_err" %in% names(x)) "given" else "none"
  rel <- if ("w_err" %in% names(x)) {
    r <- x$w_err / abs(x$w)
    stats::median(r[is.finite(r)])
  } else NA_real_
  cols <- count_columns(x)
  structure(list(
    type = result_type(x), estimator = a$estimator,
    n_data = a$n_data, n_random = a$n_random, self_pairs = a$self_pairs,
    n_bins = nrow(x),
    theta_range = c(x$theta_lo[1L], x$theta_hi[nrow(x)]),
    pairs = vapply(x[cols], function(v) sum(as.double(v)), 0),
    n_outside = a$n_outside,
    w_first = if (is.na(first)) NA_real_ else x$w[first],
    theta_first = if (is.na(first)) NA_real_ else x$theta[first],
    w_max = if (is.na(imax)) NA_real_ else x$w[imax],
    theta_at_max = if (is.na(imax)) NA_real_ else x$theta[imax],
    theta_zero = if (length(nonpos)) x$theta[nonpos[1L]] else NA_real_,
    error = err, median_rel_err = rel,
    backend = a$backend, threads = a$threads, devices = a$devices,
    elapsed = a$elapsed
  ), class = "summary.wtheta")
}

#' @export
print.summary.wtheta <- function(x, ...) {
  f <- function(v) format(signif(v, 4))
  cat(if (x$type == "cross") "Angular cross-correlation" else
    "Angular auto-correlation", ", ", estimator_name(x$estimator),
    " estimator\n", sep = "")
  cat("  data:     ", paste(format_n(x$n_data), collapse = " x "),
      " points; randoms: ", paste(format_n(x$n_random), collapse = " x "),
      " points\n", sep = "")
  cat("  bins:     ", x$n_bins, " from ", f(x$theta_range[1L]), " to ",
      f(x$theta_range[2L]), " deg\n", sep = "")
  cat("  pairs:    ", paste0(names(x$pairs), " ", format_n(x$pairs),
                              collapse = ", "), " in the bins\n", sep = "")
  cat("  w:        ", f(x$w_first), " at ", f(x$theta_first),
      " deg (first bin); largest ", f(x$w_max), " at ", f(x$theta_at_max),
      " deg\n", sep = "")
  cat("  w <= 0:   ", if (is.na(x$theta_zero)) "in no bin" else
    paste0("first at ", f(x$theta_zero), " deg"), "\n", sep = "")
  cat("  errors:   ", x$error, if (is.finite(x$median_rel_err))
    paste0(", median w_err / |w| = ", f(x$median_rel_err)), "\n", sep = "")
  if (!is.null(x$backend)) {
    cat("  ", describe_run_attr(x), "\n", sep = "")
  }
  invisible(x)
}

#' @rdname wtheta-methods
#' @param row.names,optional Ignored (for the generic).
#' @export
as.data.frame.wtheta <- function(x, row.names = NULL, optional = FALSE, ...) {
  cols <- unclass(x)
  structure(cols[names(x)], class = "data.frame",
            row.names = c(NA_integer_, -length(cols[[1L]])))
}

# a function of theta from `model`: a function, or a simulated catalog
model_function <- function(model) {
  if (is.null(model)) return(NULL)
  if (is.function(model)) return(model)
  if (!is.null(attr(model, "model", exact = TRUE))) {
    return(function(theta) model_wtheta(model, theta))
  }
  stop("`model` must be a function of theta (degrees) or a catalog from ",
       "simulate_catalog(), not ", describe(model), ".", call. = FALSE)
}

model_grid <- function(x, log_x) {
  lo <- x$theta_lo[1L]
  hi <- x$theta_hi[nrow(x)]
  if (log_x) exp(seq(log(max(lo, min(x$theta) / 2)), log(hi), length.out = 200))
  else seq(lo, hi, length.out = 200)
}

plot_axes <- function(x, log, w_lo) {
  if (!is.null(log)) return(log)
  e <- attr(x, "edges", exact = TRUE)
  if (is.null(e)) e <- c(x$theta_lo, x$theta_hi[nrow(x)])
  ok <- is.finite(x$w)
  log_x <- length(e) > 2L && is_log_spaced(e)
  log_y <- any(ok) && all(x$w[ok] > 0) && all(w_lo[ok] > 0)
  paste0(c(if (log_x) "x", if (log_y) "y"), collapse = "")
}

#' Plot w(theta)
#'
#' Plots w against the bin centres, with error bars of plus and minus
#' `w_err` when the result has them, and a model curve when `model` is
#' given. The angle axis is logarithmic when the bins are logarithmically
#' spaced, and the w axis when every w (less its error) is positive.
#'
#' @param x A result of [wtheta()].
#' @param model A model to draw as a line: a function of theta in degrees
#'   returning w, or a catalog from [simulate_catalog()] (drawn with
#'   [model_wtheta()]).
#' @param log Axes to draw logarithmically, as for [plot.default()]; by
#'   default chosen from the bins and the values.
#' @param errors Draw error bars when the result has a `w_err` column.
#' @param legend Draw a legend when a model is drawn.
#' @param ... Passed to [plot.default()] (for example `main`, `ylim`,
#'   `col`).
#' @return `x`, invisibly.
#' @examples
#' sim <- simulate_catalog(2000, seed = 1)
#' ran <- random_catalog(4000, like = sim, seed = 2)
#' w <- wtheta(sim, ran, theta_bins(0.02, 3, n = 10, log = TRUE), threads = 1)
#' plot(w, model = sim)
#' @export
plot.wtheta <- function(x, model = NULL, log = NULL, errors = TRUE,
                        legend = TRUE, ...) {
  fun <- model_function(model)
  has_err <- errors && "w_err" %in% names(x)
  err <- if (has_err) x$w_err else rep(0, nrow(x))
  err[!is.finite(err)] <- 0
  log <- plot_axes(x, log, x$w - err)
  ok <- is.finite(x$w)
  if (grepl("y", log, fixed = TRUE)) ok <- ok & x$w > 0
  th <- x$theta[ok]
  w <- x$w[ok]
  lo <- w - err[ok]
  hi <- w + err[ok]
  grid <- NULL
  if (!is.null(fun)) {
    grid <- model_grid(x, grepl("x", log, fixed = TRUE))
    mw <- fun(grid)
    if (grepl("y", log, fixed = TRUE)) {
      keep <- mw > min(lo) / 10
      grid <- grid[keep]
      mw <- mw[keep]
    }
  }
  args <- list(...)
  if (is.null(args$ylim)) {
    r <- range(c(lo, hi, if (!is.null(grid)) mw), finite = TRUE)
    if (!grepl("y", log, fixed = TRUE)) r <- range(r, 0)
    args$ylim <- r
  }
  if (is.null(args$main)) {
    args$main <- paste(estimator_name(attr(x, "estimator", exact = TRUE)),
                       "estimate")
  }
  if (is.null(args$xlab)) args$xlab <- expression(theta ~ "(degrees)")
  if (is.null(args$ylab)) args$ylab <- expression(w(theta))
  if (is.null(args$pch)) args$pch <- 19
  if (is.null(args$type)) args$type <- "b"
  do.call(graphics::plot, c(list(th, w, log = log), args))
  if (!grepl("y", log, fixed = TRUE)) graphics::abline(h = 0, lty = 3,
                                                       col = "grey40")
  if (has_err) {
    lo_drawn <- lo
    if (grepl("y", log, fixed = TRUE)) {
      lo_drawn <- ifelse(lo > 0, lo, 10^graphics::par("usr")[3L])
    }
    # bars shorter than a pixel or so would be zero-length arrows (warnings)
    usr <- graphics::par("usr")[3:4]
    tall <- if (grepl("y", log, fixed = TRUE)) {
      abs(log10(pmax(hi, 1e-300)) - log10(pmax(lo_drawn, 1e-300)))
    } else abs(hi - lo_drawn)
    bar <- hi > lo & tall > 1e-3 * abs(diff(usr))
    graphics::arrows(th[bar], lo_drawn[bar], th[bar], hi[bar], angle = 90,
                     code = 3, length = 0.03,
                     col = if (is.null(args$col)) 1 else args$col)
  }
  if (!is.null(grid)) {
    graphics::lines(grid, mw, col = "firebrick", lwd = 2, lty = 2)
    if (legend) {
      graphics::legend("topright", bty = "n",
                       legend = c("measured", "model"),
                       col = c(if (is.null(args$col)) 1 else args$col,
                               "firebrick"),
                       lty = c(1, 2), pch = c(19, NA), lwd = c(1, 2))
    }
  }
  invisible(x)
}

#' Plot w(theta) with ggplot2
#'
#' The ggplot2 version of [plot.wtheta()]: points and lines, error bars
#' when the result has `w_err`, a dashed model curve when `model` is given,
#' logarithmic axes chosen as for `plot()`. Needs the ggplot2 package.
#'
#' @param object A result of [wtheta()].
#' @inheritParams plot.wtheta
#' @param ... Ignored.
#' @return A ggplot object.
#' @examplesIf requireNamespace("ggplot2", quietly = TRUE)
#' sim <- simulate_catalog(2000, seed = 1)
#' ran <- random_catalog(4000, like = sim, seed = 2)
#' w <- wtheta(sim, ran, theta_bins(0.02, 3, n = 10, log = TRUE), threads = 1)
#' ggplot2::autoplot(w, model = sim)
#' @exportS3Method ggplot2::autoplot
autoplot.wtheta <- function(object, model = NULL, log = NULL, errors = TRUE,
                            ...) {
  if (!requireNamespace("ggplot2", quietly = TRUE)) {
    stop("autoplot() needs the ggplot2 package; plot() works without it.",
         call. = FALSE)
  }
  x <- object
  fun <- model_function(model)
  has_err <- errors && "w_err" %in% names(x)
  err <- if (has_err) x$w_err else rep(0, nrow(x))
  err[!is.finite(err)] <- 0
  log <- plot_axes(x, log, x$w - err)
  log_x <- grepl("x", log, fixed = TRUE)
  log_y <- grepl("y", log, fixed = TRUE)
  ok <- is.finite(x$w) & (!log_y | x$w > 0)
  d <- data.frame(theta = x$theta[ok], w = x$w[ok], lo = x$w[ok] - err[ok],
                  hi = x$w[ok] + err[ok], what = "measured")
  .data <- ggplot2::.data
  p <- ggplot2::ggplot(d, ggplot2::aes(x = .data$theta, y = .data$w)) +
    ggplot2::geom_line(colour = "grey30") +
    ggplot2::geom_point(colour = "black")
  if (has_err) {
    d$lo[log_y & d$lo <= 0] <- NA
    p <- p + ggplot2::geom_errorbar(
      data = d, ggplot2::aes(ymin = .data$lo, ymax = .data$hi),
      width = if (log_x) 0.03 else 0.01 * diff(range(d$theta)))
  }
  if (!is.null(fun)) {
    g <- model_grid(x, log_x)
    m <- data.frame(theta = g, w = fun(g))
    if (log_y) m <- m[m$w > min(d$lo, na.rm = TRUE) / 10, , drop = FALSE]
    p <- p + ggplot2::geom_line(data = m, colour = "firebrick",
                                linetype = "dashed", linewidth = 0.8)
  }
  if (!log_y) p <- p + ggplot2::geom_hline(yintercept = 0, linetype = "dotted")
  if (log_x) p <- p + ggplot2::scale_x_log10()
  if (log_y) p <- p + ggplot2::scale_y_log10()
  p + ggplot2::labs(
    x = expression(theta ~ "(degrees)"), y = expression(w(theta)),
    title = paste(estimator_name(attr(x, "estimator", exact = TRUE)),
                  "estimate"),
    subtitle = if (!is.null(fun)) "points: measured; dashed: model") +
    ggplot2::theme_bw()
}
