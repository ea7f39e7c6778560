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
  tab <- data.frame(theta_lo = x$theta_lo, theta_hi = x$theta_hi,
                    count = x$counts)
  if (!is.null(x$theta_mean)) tab$theta_mean <- x$theta_mean
  print(tab[seq_len(show), ], row.names = FALSE)
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
  setdiff(names(x), c("theta_lo", "theta_hi", "theta", "theta_mean", "w",
                      "w_err"))
}

result_type <- function(x) {
  type <- attr(x, "type", exact = TRUE)
  if (is.null(type)) type <- if ("D1D2" %in% names(x)) "cross" else "auto"
  type
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
#' @seealso [wtheta()], [plot.wtheta()], [wtheta_cov()].
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
    if (!is.null(x$estimator)) " estimator", "\n", sep = "")
  # sizes are absent from results read from files that do not record them
  cat("  data:     ", paste(format_n(x$n_data %||% "?"), collapse = " x "),
      " points; randoms: ", paste(format_n(x$n_random %||% "?"),
                                  collapse = " x "),
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

# How a result is drawn, from its w values and bins alone (never from the
# errors, so that every result of one kind is drawn alike):
# - x: the angle axis is logarithmic (bin centres are always > 0);
# - y: logarithmic when every finite w is positive, otherwise asinh(w / s)
#   when the |w| span more than two decades (s a power of ten near the
#   small |w|), otherwise linear;
# - style: many bins (more than 40) are drawn as a line with a shaded
#   error band, fewer as points with error bars.
# `log` and `band` (from the plot call) override the choice.
plot_layout <- function(x, log = NULL, band = NULL) {
  w <- x$w[is.finite(x$w)]
  y <- if (!length(w)) "linear" else if (all(w > 0)) "log" else {
    a <- abs(w[w != 0])
    small <- if (length(a)) stats::quantile(a, 0.25, names = FALSE) else 0
    if (length(a) && max(a) > 100 * small) "asinh" else "linear"
  }
  xs <- "log"
  if (!is.null(log)) {
    if (!is.character(log) || length(log) != 1L || is.na(log) ||
        !grepl("^[xy]*$", log)) {
      stop("`log` must be \"\", \"x\", \"y\" or \"xy\", not ", describe(log),
           ".", call. = FALSE)
    }
    xs <- if (grepl("x", log, fixed = TRUE)) "log" else "linear"
    y <- if (grepl("y", log, fixed = TRUE)) "log" else if (y == "asinh")
      "asinh" else "linear"
  }
  if (!is.null(band)) check_flag(band, "band")
  style <- if (isTRUE(band) || (is.null(band) && nrow(x) > 40L)) "band" else
    "points"
  scale <- NA_real_
  if (y == "asinh") {
    a <- abs(w[w != 0])
    scale <- 10^floor(log10(stats::quantile(a, 0.25, names = FALSE)))
  }
  list(x = xs, y = y, style = style, asinh_scale = scale)
}

# the y transform of a layout and its tick marks (asinh only)
y_transform <- function(lay) {
  if (lay$y != "asinh") return(function(v) v)
  s <- lay$asinh_scale
  function(v) asinh(v / s)
}

asinh_ticks <- function(lay, range_w) {
  s <- lay$asinh_scale
  top <- max(abs(range_w), s)
  # from 10 s: labels at +-s would crowd the one at 0
  pw <- 10^seq(log10(s) + 1, max(log10(s) + 1, ceiling(log10(top))))
  t <- c(-rev(pw), 0, pw)
  t[t >= min(range_w, 0) & t <= max(range_w, 0)]
}

plot_title <- function(x) {
  paste(estimator_name(attr(x, "estimator", exact = TRUE)),
        "estimate of w(theta)")
}

# "auto-correlation; N_data = 600, N_random = 900; errors: jackknife (16
# patches)"
plot_subtitle <- function(x) {
  a <- attributes(x)
  type <- result_type(x)
  n <- function(v) if (is.null(v)) "?" else paste(format_n(v), collapse = " x ")
  nd <- a$n_data
  nr <- a$n_random
  if (type == "cross" && length(nd) == 1L && !is.null(a$n_data2)) {
    nd <- c(nd, a$n_data2)
  }
  if (type == "cross" && length(nr) == 1L && !is.null(a$n_random2)) {
    nr <- c(nr, a$n_random2)
  }
  paste0(if (type == "cross") "cross-correlation" else "auto-correlation",
         "; N_data = ", n(nd), ", N_random = ", n(nr), "; ",
         describe_errors(x, a))
}

#' Plot w(theta)
#'
#' Plots w against the bin centres, with plus and minus `w_err` when the
#' result has errors, and a model curve when `model` is given.
#'
#' The axes are chosen from the values of w, never from their errors, so
#' that results of one kind are drawn alike: the angle axis is
#' logarithmic; the w axis is logarithmic when every w is positive,
#' otherwise linear, or `asinh(w / s)` (labelled in w; `s` a power of ten
#' near the smaller |w|) when the |w| span more than two decades. Results
#' with more than 40 bins (for example the classic 360 linear bins) are
#' drawn as a line with a shaded error band, fewer as points with error
#' bars. The title names the estimator; the line under it says auto- or
#' cross-correlation, the numbers of data and random points and the error
#' type. A result whose w is `NA` in every bin gives an empty frame that
#' says so.
#'
#' @param x A result of [wtheta()].
#' @param model A model to draw as a line: a function of theta in degrees
#'   returning w, or a catalog from [simulate_catalog()] (drawn with
#'   [model_wtheta()]).
#' @param log Axes to draw logarithmically, `""`, `"x"`, `"y"` or `"xy"`;
#'   by default chosen as in Details.
#' @param errors Draw the errors when the result has a `w_err` column.
#' @param legend Draw a legend when a model is drawn.
#' @param band `TRUE` for a line with a shaded error band, `FALSE` for
#'   points with error bars; by default a band for more than 40 bins.
#' @param ... Passed to [plot.default()] (for example `main`, `ylim`,
#'   `col`).
#' @return `x`, invisibly.
#' @seealso [autoplot.wtheta()] for ggplot2, [plot.wtheta_cov()] for the
#'   correlation matrix of the errors, [wtheta()].
#' @examples
#' sim <- simulate_catalog(2000, seed = 1)
#' ran <- random_catalog(4000, like = sim, seed = 2)
#' w <- wtheta(sim, ran, theta_bins(0.02, 3, n = 10, log = TRUE), threads = 1)
#' plot(w, model = sim)
#' # many linear bins: a line with a band
#' w2 <- wtheta(sim, ran, theta_bins(0, 4, width = 0.05), threads = 1)
#' plot(w2)
#' @export
plot.wtheta <- function(x, model = NULL, log = NULL, errors = TRUE,
                        legend = TRUE, band = NULL, ...) {
  fun <- model_function(model)
  check_flag(errors, "errors")
  check_flag(legend, "legend")
  lay <- plot_layout(x, log, band)
  ty <- y_transform(lay)
  log_x <- lay$x == "log"
  log_y <- lay$y == "log"
  has_err <- errors && "w_err" %in% names(x)
  ok <- is.finite(x$w) & (!log_x | x$theta > 0) & (!log_y | x$w > 0)
  th <- x$theta[ok]
  w <- x$w[ok]
  err <- if (has_err) x$w_err[ok] else rep(NA_real_, length(w))
  err[!is.finite(err)] <- NA_real_
  lo <- w - err
  hi <- w + err
  if (log_y) lo[!is.na(lo) & lo <= 0] <- NA_real_
  args <- list(...)
  col <- if (is.null(args$col)) "black" else args$col
  args$col <- NULL
  if (is.null(args$main)) args$main <- plot_title(x)
  if (is.null(args$xlab)) args$xlab <- expression(theta ~ "(degrees)")
  if (is.null(args$ylab)) {
    args$ylab <- if (lay$y == "asinh") {
      bquote(w(theta) ~ "(asinh scale," ~ s == .(lay$asinh_scale) * ")")
    } else expression(w(theta))
  }
  if (!length(w)) {
    xl <- range(c(x$theta_lo, x$theta_hi), finite = TRUE)
    if (!all(is.finite(xl))) xl <- c(0, 1)
    if (log_x && xl[1L] <= 0) xl[1L] <- xl[2L] / 100
    do.call(graphics::plot, c(list(xl, c(-1, 1), type = "n",
                                   log = if (log_x) "x" else ""), args))
    graphics::text(sqrt(prod(xl)), 0, "w is NA in every bin", col = "grey30")
    graphics::mtext(plot_subtitle(x), side = 3, line = 0.4, cex = 0.8)
    return(invisible(x))
  }
  grid <- NULL
  if (!is.null(fun)) {
    grid <- model_grid(x, log_x)
    mw <- fun(grid)
    keep <- is.finite(mw)
    if (log_y) keep <- keep & mw > min(c(w, lo), na.rm = TRUE) / 10
    grid <- grid[keep]
    mw <- mw[keep]
  }
  if (is.null(args$ylim)) {
    r <- range(c(w, lo, hi, if (!is.null(grid)) mw), finite = TRUE)
    if (!log_y) r <- range(r, 0)
    args$ylim <- ty(r)
  }
  if (is.null(args$pch)) args$pch <- 19
  if (lay$y == "asinh") args$yaxt <- "n"
  do.call(graphics::plot, c(list(th, ty(w), type = "n",
                                 log = paste0(if (log_x) "x" else "",
                                              if (log_y) "y" else "")),
                            args))
  if (lay$y == "asinh") {
    t <- asinh_ticks(lay, range(c(w, lo, hi), finite = TRUE))
    graphics::axis(2, at = ty(t), labels = format(t, scientific = FALSE,
                                                  drop0trailing = TRUE))
  }
  graphics::mtext(plot_subtitle(x), side = 3, line = 0.4, cex = 0.8)
  if (!log_y) graphics::abline(h = 0, lty = 3, col = "grey40")
  bottom <- if (log_y) 10^graphics::par("usr")[3L] else NA_real_
  if (has_err) {
    lo_drawn <- ifelse(is.na(lo) & !is.na(hi), bottom, lo)
    if (lay$style == "band") {
      fill <- grDevices::adjustcolor(col, alpha.f = 0.25)
      runs <- rle(!is.na(lo_drawn) & !is.na(hi))
      ends <- cumsum(runs$lengths)
      for (k in which(runs$values)) {
        idx <- (ends[k] - runs$lengths[k] + 1L):ends[k]
        graphics::polygon(c(th[idx], rev(th[idx])),
                          ty(c(lo_drawn[idx], rev(hi[idx]))), col = fill,
                          border = NA)
      }
    } else {
      # bars shorter than a pixel or so would be zero-length arrows
      usr <- graphics::par("usr")[3:4]
      tall <- if (log_y) abs(log10(hi) - log10(lo_drawn)) else
        abs(ty(hi) - ty(lo_drawn))
      bar <- !is.na(tall) & tall > 1e-3 * abs(diff(usr))
      graphics::arrows(th[bar], ty(lo_drawn[bar]), th[bar], ty(hi[bar]),
                       angle = 90, code = 3, length = 0.03, col = col)
    }
  }
  graphics::lines(th, ty(w), col = col)
  if (lay$style == "points") {
    graphics::points(th, ty(w), pch = args$pch, col = col)
  }
  if (!is.null(grid)) {
    graphics::lines(grid, ty(mw), col = "firebrick", lwd = 2, lty = 2)
    if (legend) {
      pch <- if (lay$style == "points") args$pch else NA
      graphics::legend("topright", bty = "n",
                       legend = c("measured", "model"),
                       col = c(col, "firebrick"), lty = c(1, 2),
                       pch = c(pch, NA), lwd = c(1, 2))
    }
  }
  invisible(x)
}

#' Plot w(theta) with ggplot2
#'
#' The ggplot2 version of [plot.wtheta()], with the same choice of axes
#' and style: points and lines with error bars, or a line with a shaded
#' error band for many bins; a dashed model curve when `model` is given;
#' a title naming the estimator and a subtitle with auto or cross, the
#' numbers of points and the error type. Needs the ggplot2 package.
#'
#' @param object A result of [wtheta()].
#' @inheritParams plot.wtheta
#' @param ... Ignored.
#' @return A ggplot object.
#' @seealso [plot.wtheta()] for base graphics, [wtheta()].
#' @examplesIf requireNamespace("ggplot2", quietly = TRUE)
#' sim <- simulate_catalog(2000, seed = 1)
#' ran <- random_catalog(4000, like = sim, seed = 2)
#' w <- wtheta(sim, ran, theta_bins(0.02, 3, n = 10, log = TRUE), threads = 1)
#' ggplot2::autoplot(w, model = sim)
#' @exportS3Method ggplot2::autoplot
autoplot.wtheta <- function(object, model = NULL, log = NULL, errors = TRUE,
                            band = NULL, ...) {
  if (!requireNamespace("ggplot2", quietly = TRUE)) {
    stop("autoplot() needs the ggplot2 package; plot() works without it.",
         call. = FALSE)
  }
  x <- object
  fun <- model_function(model)
  check_flag(errors, "errors")
  lay <- plot_layout(x, log, band)
  ty <- y_transform(lay)
  log_x <- lay$x == "log"
  log_y <- lay$y == "log"
  has_err <- errors && "w_err" %in% names(x)
  ok <- is.finite(x$w) & (!log_x | x$theta > 0) & (!log_y | x$w > 0)
  err <- if (has_err) x$w_err[ok] else rep(NA_real_, sum(ok))
  err[!is.finite(err)] <- NA_real_
  d <- data.frame(theta = x$theta[ok], w = x$w[ok], lo = x$w[ok] - err,
                  hi = x$w[ok] + err)
  if (log_y) d$lo[!is.na(d$lo) & d$lo <= 0] <- NA_real_
  d$w_t <- ty(d$w)
  d$lo_t <- ty(d$lo)
  d$hi_t <- ty(d$hi)
  .data <- ggplot2::.data
  p <- ggplot2::ggplot(d, ggplot2::aes(x = .data$theta, y = .data$w_t))
  if (has_err && lay$style == "band") {
    p <- p + ggplot2::geom_ribbon(
      ggplot2::aes(ymin = .data$lo_t, ymax = .data$hi_t), fill = "grey60",
      alpha = 0.4, na.rm = TRUE)
  }
  p <- p + ggplot2::geom_line(colour = "grey20")
  if (lay$style == "points") {
    p <- p + ggplot2::geom_point(colour = "black")
    if (has_err) {
      p <- p + ggplot2::geom_errorbar(
        ggplot2::aes(ymin = .data$lo_t, ymax = .data$hi_t),
        width = if (log_x) 0.03 else 0.01 * diff(range(d$theta)),
        na.rm = TRUE)
    }
  }
  if (!is.null(fun) && nrow(d)) {
    g <- model_grid(x, log_x)
    m <- data.frame(theta = g, w = fun(g))
    m <- m[is.finite(m$w), , drop = FALSE]
    if (log_y) m <- m[m$w > min(c(d$w, d$lo), na.rm = TRUE) / 10, ,
                      drop = FALSE]
    m$w_t <- ty(m$w)
    p <- p + ggplot2::geom_line(data = m, colour = "firebrick",
                                linetype = "dashed", linewidth = 0.8)
  }
  if (!log_y) p <- p + ggplot2::geom_hline(yintercept = 0, linetype = "dotted")
  if (log_x) p <- p + ggplot2::scale_x_log10()
  if (log_y) p <- p + ggplot2::scale_y_log10()
  ylab <- expression(w(theta))
  if (lay$y == "asinh") {
    t <- asinh_ticks(lay, range(c(d$w, d$lo, d$hi), finite = TRUE))
    p <- p + ggplot2::scale_y_continuous(
      breaks = ty(t), labels = format(t, scientific = FALSE,
                                      drop0trailing = TRUE))
    ylab <- bquote(w(theta) ~ "(asinh scale," ~ s == .(lay$asinh_scale) * ")")
  }
  p + ggplot2::labs(
    x = expression(theta ~ "(degrees)"), y = ylab, title = plot_title(x),
    subtitle = paste0(plot_subtitle(x),
                      if (!is.null(fun)) "\nline: measured; dashed: model"),
    caption = if (!nrow(d)) "w is NA in every bin") +
    ggplot2::theme_bw()
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
  axis_name <- expression(theta ~ "(degrees)")
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
  log_ax <- e[1L] > 0 && n > 1L && is_log_spaced(e)
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

# --- subsetting -----------------------------------------------------------

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
  out <- if (nargs() < 3L && missing(drop)) {
    if (missing(i)) plain else plain[i]
  } else {
    ii <- if (missing(i)) seq_len(n) else i
    if (missing(j)) {
      if (missing(drop)) plain[ii, ] else plain[ii, , drop = drop]
    } else {
      if (missing(drop)) plain[ii, j] else plain[ii, j, drop = drop]
    }
  }
  if (!is.data.frame(out)) return(out)
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
