# plot() and autoplot() of wtheta and wtheta_multi results. What is drawn
# (axes, points, errors) comes from plot_data() and multi_plot_data(),
# which both plot() and autoplot() use.

# The points plot() and autoplot() draw, for wtheta and wtheta_multi
# alike: a data frame of theta, w, err (w_err, NA where missing or not
# finite, or all NA for `w_err` NULL), lo and hi (w -+ err; lo NA where
# not positive on a log w axis) and ok (the points that can be drawn: w
# finite, theta > 0 on a log theta axis, w > 0 on a log w axis).
plot_points <- function(theta, w, w_err, log_x, log_y) {
  ok <- is.finite(w) & (!log_x | theta > 0) & (!log_y | w > 0)
  err <- if (is.null(w_err)) rep(NA_real_, length(w)) else w_err
  err[!is.finite(err)] <- NA_real_
  lo <- w - err
  hi <- w + err
  if (log_y) lo[!is.na(lo) & lo <= 0] <- NA_real_
  data.frame(theta = theta, w = w, err = err, lo = lo, hi = hi, ok = ok)
}

# What plot() and autoplot() of a wtheta result draw, the arguments
# checked in this order: model, errors, legend, log, band. A list: lay
# (plot_layout()), ty (its y transform), log_x, log_y, has_err, fun (the
# model's function or NULL), d (theta, w, lo, hi of the points drawn) and
# grid and model_w (the model's curve, NULL without a model or points).
plot_data <- function(x, model, log, errors, band, legend = TRUE) {
  fun <- model_function(model, theta_units_of(x))
  check_flag(errors, "errors")
  check_flag(legend, "legend")
  lay <- plot_layout(x, log, band)
  log_x <- lay$x == "log"
  log_y <- lay$y == "log"
  has_err <- errors && "w_err" %in% names(x)
  p <- plot_points(x$theta, x$w, if (has_err) x$w_err, log_x, log_y)
  d <- p[p$ok, c("theta", "w", "lo", "hi"), drop = FALSE]
  rownames(d) <- NULL
  grid <- NULL
  mw <- NULL
  if (!is.null(fun) && nrow(d)) {
    grid <- model_grid(x, log_x)
    mw <- fun(grid)
    keep <- is.finite(mw)
    if (log_y) keep <- keep & mw > min(c(d$w, d$lo), na.rm = TRUE) / 10
    grid <- grid[keep]
    mw <- mw[keep]
  }
  list(lay = lay, ty = y_transform(lay), log_x = log_x, log_y = log_y,
       has_err = has_err, fun = fun, d = d, grid = grid, model_w = mw)
}

# a function of theta in `units` (the result's) from `model`: a function
# (of theta in that unit), or a simulated catalog (whose model_wtheta()
# takes degrees)
model_function <- function(model, units = "deg") {
  if (is.null(model)) return(NULL)
  if (is.function(model)) return(model)
  if (!is.null(attr(model, "model", exact = TRUE))) {
    return(function(theta) model_wtheta(model, theta_to_deg(theta, units)))
  }
  stop("`model` must be a function of theta (",
       theta_unit_label(units), ") or a catalog from ",
       "simulate_catalog(), not ", describe(model), ".", call. = FALSE)
}

# the theta axis label of a result: "theta (degrees)", or its unit
theta_axis_label <- function(x) {
  u <- theta_unit_label(theta_units_of(x))
  as.expression(bquote(theta ~ .(paste0("(", u, ")"))))
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
#' @param model A model to draw as a line: a function of theta in the
#'   result's unit (`attr(x, "theta_units")`, degrees unless the bins came
#'   from `theta_bins(units = )`)
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
  pd <- plot_data(x, model, log, errors, band, legend)
  lay <- pd$lay
  ty <- pd$ty
  log_x <- pd$log_x
  log_y <- pd$log_y
  has_err <- pd$has_err
  th <- pd$d$theta
  w <- pd$d$w
  lo <- pd$d$lo
  hi <- pd$d$hi
  args <- list(...)
  col <- if (is.null(args$col)) "black" else args$col
  args$col <- NULL
  if (is.null(args$main)) args$main <- plot_title(x)
  if (is.null(args$xlab)) args$xlab <- theta_axis_label(x)
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
  grid <- pd$grid
  mw <- pd$model_w
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
  pd <- plot_data(x, model, log, errors, band)
  lay <- pd$lay
  ty <- pd$ty
  d <- pd$d
  d$w_t <- ty(d$w)
  d$lo_t <- ty(d$lo)
  d$hi_t <- ty(d$hi)
  .data <- ggplot2::.data
  p <- ggplot2::ggplot(d, ggplot2::aes(x = .data$theta, y = .data$w_t))
  if (pd$has_err && lay$style == "band") {
    p <- p + ggplot2::geom_ribbon(
      ggplot2::aes(ymin = .data$lo_t, ymax = .data$hi_t), fill = "grey60",
      alpha = 0.4, na.rm = TRUE)
  }
  p <- p + ggplot2::geom_line(colour = "grey20")
  if (lay$style == "points") {
    p <- p + ggplot2::geom_point(colour = "black")
    if (pd$has_err) {
      p <- p + ggplot2::geom_errorbar(
        ggplot2::aes(ymin = .data$lo_t, ymax = .data$hi_t),
        width = if (pd$log_x) 0.03 else 0.01 * diff(range(d$theta)),
        na.rm = TRUE)
    }
  }
  if (!is.null(pd$grid)) {
    m <- data.frame(theta = pd$grid, w = pd$model_w)
    m$w_t <- ty(m$w)
    p <- p + ggplot2::geom_line(data = m, colour = "firebrick",
                                linetype = "dashed", linewidth = 0.8)
  }
  if (!pd$log_y) {
    p <- p + ggplot2::geom_hline(yintercept = 0, linetype = "dotted")
  }
  if (pd$log_x) p <- p + ggplot2::scale_x_log10()
  if (pd$log_y) p <- p + ggplot2::scale_y_log10()
  ylab <- expression(w(theta))
  if (lay$y == "asinh") {
    t <- asinh_ticks(lay, range(c(d$w, d$lo, d$hi), finite = TRUE))
    p <- p + ggplot2::scale_y_continuous(
      breaks = ty(t), labels = format(t, scientific = FALSE,
                                      drop0trailing = TRUE))
    ylab <- bquote(w(theta) ~ "(asinh scale," ~ s == .(lay$asinh_scale) * ")")
  }
  p + ggplot2::labs(
    x = theta_axis_label(x), y = ylab, title = plot_title(x),
    subtitle = paste0(plot_subtitle(x),
                      if (!is.null(pd$fun))
                        "\nline: measured; dashed: model"),
    caption = if (!nrow(d)) "w is NA in every bin") +
    ggplot2::theme_bw()
}

# What plot() and autoplot() of a wtheta_multi result draw: list(log_x,
# d: the long data frame with plot_points()'s err, lo, hi and ok)
multi_plot_data <- function(x, log, errors) {
  check_flag(errors, "errors")
  log_x <- multi_log(attr(x, "edges"), log)
  d <- as.data.frame(x)
  p <- plot_points(d$theta, d$w, if (errors) d$w_err, log_x, FALSE)
  d[c("err", "lo", "hi", "ok")] <- p[c("err", "lo", "hi", "ok")]
  list(log_x = log_x, d = d)
}

# TRUE when the theta axis of a result with these edges is best on a log
# scale
multi_log <- function(edges, log) {
  if (!is.null(log)) {
    if (!identical(log, "x") && !identical(log, "")) {
      stop("`log` must be \"x\", \"\" or NULL, not ", describe(log), ".",
           call. = FALSE)
    }
    return(identical(log, "x"))
  }
  bins_are_log(edges)
}

#' @rdname wtheta_multi-methods
#' @order 5
#' @export
plot.wtheta_multi <- function(x, log = NULL, errors = TRUE, ...) {
  pd <- multi_plot_data(x, log, errors)
  log_x <- pd$log_x
  d <- pd$d
  s <- attr(x, "samples")
  K <- length(s)
  old <- graphics::par(no.readonly = TRUE)
  on.exit(graphics::par(old))
  graphics::par(mfrow = c(K, K), mar = c(3.5, 3.5, 1.8, 0.5),
                mgp = c(2, 0.6, 0), oma = c(0, 0, 2, 0))
  for (i in seq_len(K)) {
    for (j in seq_len(K)) {
      if (j < i) {
        graphics::plot.new()
        next
      }
      e <- d[d$i == s[i] & d$j == s[j], , drop = FALSE]
      ok <- e$ok
      err <- e$err
      lo <- e$lo
      hi <- e$hi
      yr <- range(c(e$w[ok], lo[ok & is.finite(lo)], hi[ok & is.finite(hi)]),
                  finite = TRUE)
      if (!all(is.finite(yr))) yr <- c(-1, 1)
      graphics::plot(e$theta[ok], e$w[ok], log = if (log_x) "x" else "",
                     ylim = yr, pch = 19, cex = 0.6,
                     xlab = theta_axis_label(x),
                     ylab = "w", main = paste(s[i], "x", s[j]),
                     cex.main = 0.9, ...)
      graphics::abline(h = 0, col = "grey70", lty = 2)
      eb <- ok & is.finite(err) & err > 0
      if (any(eb)) {
        graphics::arrows(e$theta[eb], lo[eb], e$theta[eb], hi[eb],
                         angle = 90, code = 3, length = 0.02)
      }
    }
  }
  graphics::title(paste0("w(theta) of ", K, " samples (",
                         estimator_name(attr(x, "estimator")), ", ",
                         attr(x, "error"), " errors)"), outer = TRUE)
  invisible(x)
}

#' @rdname wtheta_multi-methods
#' @order 6
#' @exportS3Method ggplot2::autoplot
autoplot.wtheta_multi <- function(object, log = NULL, errors = TRUE, ...) {
  if (!requireNamespace("ggplot2", quietly = TRUE)) {
    stop("autoplot() needs the ggplot2 package; plot() works without it.",
         call. = FALSE)
  }
  pd <- multi_plot_data(object, log, errors)
  log_x <- pd$log_x
  d <- pd$d[pd$d$ok, , drop = FALSE]
  has_err <- errors && !is.null(d$w_err)
  .data <- ggplot2::.data
  p <- ggplot2::ggplot(d, ggplot2::aes(x = .data$theta, y = .data$w)) +
    ggplot2::geom_hline(yintercept = 0, colour = "grey70",
                        linetype = "dashed") +
    ggplot2::geom_point(size = 1) +
    ggplot2::facet_grid(rows = ggplot2::vars(.data$i),
                        cols = ggplot2::vars(.data$j), drop = FALSE) +
    ggplot2::labs(x = theta_axis_label(object), y = "w",
                  title = paste0("w(theta) of ",
                                 length(attr(object, "samples")),
                                 " samples (",
                                 estimator_name(attr(object, "estimator")),
                                 ", ", attr(object, "error"), " errors)"))
  if (has_err) {
    p <- p + ggplot2::geom_errorbar(
      ggplot2::aes(ymin = .data$lo, ymax = .data$hi), width = 0,
      na.rm = TRUE)
  }
  if (log_x) p <- p + ggplot2::scale_x_log10()
  p
}
