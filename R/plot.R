# plot() and autoplot() of wtheta results. What is drawn (axes, points,
# open symbols, errors, ticks, titles) comes from plot_data(), which both
# use; those of wtheta_multi results are in plot_multi.R.

# The points plot() and autoplot() draw, for wtheta and wtheta_multi
# alike: a data frame of theta, w (|w| on a log w axis), err (w_err, NA
# where missing or not finite, or all NA for `w_err` NULL), lo and hi (w
# -+ err; lo NA where not positive on a log w axis), ok (the points that
# can be drawn: w and theta finite, theta > 0 on a log theta axis, w != 0
# on a log w axis), open (a negative w drawn at |w| as an open symbol, on
# a log w axis only) and run (the line joins the filled points of one run
# of consecutive bins; NA for the others, so that no line crosses a gap).
plot_points <- function(theta, w, w_err, log_x, log_y) {
  ok <- is.finite(w) & is.finite(theta) & (!log_x | theta > 0) &
    (!log_y | w != 0)
  open <- ok & log_y & w < 0
  y <- if (log_y) abs(w) else w
  err <- if (is.null(w_err)) rep(NA_real_, length(w)) else w_err
  err[!is.finite(err)] <- NA_real_
  lo <- y - err
  hi <- y + err
  if (log_y) lo[!is.na(lo) & lo <= 0] <- NA_real_
  filled <- ok & !open
  run <- cumsum(c(TRUE, filled[-1L] != filled[-length(filled)]))[
    seq_along(filled)]
  run[!filled] <- NA_integer_
  data.frame(theta = theta, w = y, err = err, lo = lo, hi = hi, ok = ok,
             open = open, run = as.integer(run))
}

# What plot() and autoplot() of a wtheta result draw, the arguments
# checked in this order: model, errors, legend, theta, log, band. A list:
# lay (plot_layout()), ty (its y transform), log_x, log_y, has_err, fun
# (the model's function or NULL), d (plot_points() of the points drawn),
# xlim (the theta range of every bin that has an angle, drawn or not),
# ticks (the asinh axis's ticks in w, or NULL), theta_col (the column on
# the angle axis) and grid and model_w (the model's curve, NULL without a
# model or points).
plot_data <- function(x, model, log, errors, band, legend = TRUE,
                      theta = "theta") {
  fun <- model_function(model, theta_units_of(x))
  check_flag(errors, "errors")
  check_flag(legend, "legend")
  col <- theta_column(x, theta)
  lay <- plot_layout(x, log, band)
  log_x <- lay$x == "log"
  log_y <- lay$y == "log"
  has_err <- errors && "w_err" %in% names(x)
  p <- plot_points(x[[col]], x$w, if (has_err) x$w_err, log_x, log_y)
  d <- p[p$ok, c("theta", "w", "lo", "hi", "open", "run"), drop = FALSE]
  rownames(d) <- NULL
  th <- x[[col]][is.finite(x[[col]]) & (!log_x | x[[col]] > 0)]
  xlim <- if (length(th)) range(th) else NULL
  ticks <- if (lay$y == "asinh" && nrow(d)) {
    asinh_ticks(lay$asinh_scale, range(c(d$w, d$lo, d$hi), finite = TRUE))
  }
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
       has_err = has_err, fun = fun, d = d, xlim = xlim, ticks = ticks,
       theta_col = col, grid = grid, model_w = mw)
}

# the column drawn on the angle axis: the bin centres ("theta") or the
# mean separation of the pairs ("theta_mean", from mean_theta = TRUE)
theta_column <- function(x, theta) {
  if (!is.character(theta) || length(theta) != 1L || is.na(theta) ||
      !theta %in% c("theta", "theta_mean")) {
    stop("`theta` must be \"theta\" (the bin centres) or \"theta_mean\" ",
         "(the pairs' mean separation), not ", describe(theta), ".",
         call. = FALSE)
  }
  if (!theta %in% names(x)) {
    stop("`theta = \"theta_mean\"` needs a result with a `theta_mean` ",
         "column: count with `mean_theta = TRUE`.", call. = FALSE)
  }
  theta
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

# the theta axis label of a result: "theta (degrees)", or its unit, and
# "mean theta" when the pairs' mean separation is drawn
theta_axis_label <- function(x, col = "theta") {
  u <- paste0("(", theta_unit_label(theta_units_of(x)), ")")
  if (col == "theta_mean") {
    return(as.expression(bquote("mean" ~ theta ~ "of the pairs" ~ .(u))))
  }
  as.expression(bquote(theta ~ .(u)))
}

# the w axis label: w(theta), and the asinh scale when there is one
w_axis_label <- function(lay) {
  if (lay$y == "asinh") {
    return(as.expression(bquote(w(theta) ~ "(asinh scale," ~
                                  s == .(lay$asinh_scale) * ")")))
  }
  expression(w(theta))
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
    check_log(log, c("", "x", "y", "xy"))
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

check_log <- function(log, allowed) {
  if (!is.character(log) || length(log) != 1L || is.na(log) ||
      !log %in% allowed) {
    stop("`log` must be ", paste0("\"", allowed, "\"", collapse = ", "),
         " or NULL, not ", describe(log), ".", call. = FALSE)
  }
}

# the y transform of a layout (asinh(w / s) for an asinh axis)
y_transform <- function(lay) {
  if (lay$y != "asinh") return(function(v) v)
  s <- lay$asinh_scale
  function(v) asinh(v / s)
}

# The ticks (in w) of an asinh(w / s) axis spanning `range_w` and 0:
# 0, then 1, 5 and 2 times powers of ten (decades first) on each side,
# each at least an eighth of the axis (in asinh units) from every tick
# already taken, so that labels never crowd. A side with values but no
# such tick gets the round number just inside its end, so that the
# largest w and the negative ones can always be read off.
asinh_ticks <- function(s, range_w) {
  lo <- min(range_w, 0)
  hi <- max(range_w, 0)
  ty <- function(v) asinh(v / s)
  gap <- (ty(hi) - ty(lo)) / 8
  if (!(gap > 0)) return(0)
  top <- ceiling(log10(max(abs(c(lo, hi)), s)))
  dec <- 10^seq(floor(log10(s)), top)
  cand <- c(dec, 5 * dec, 2 * dec)
  kept <- 0
  for (end in c(lo, hi)) {
    mine <- sign(end) * cand[cand <= abs(end)]
    taken <- 0
    for (v in mine) {
      if (all(abs(ty(v) - ty(c(kept, taken))) >= gap)) taken <- c(taken, v)
    }
    taken <- taken[-1L]
    if (!length(taken) && abs(ty(end)) >= gap) {
      p <- 10^floor(log10(abs(end)))
      taken <- sign(end) * floor(abs(end) / p) * p
    }
    kept <- c(kept, taken)
  }
  sort(signif(kept, 6))
}

# tick labels as people write them: 0.005, 0.1, 20 (never 5e-03 or 5.00)
format_ticks <- function(t) {
  vapply(t, function(v) format(signif(v, 6), scientific = FALSE,
                               drop0trailing = TRUE, trim = TRUE), "")
}

plot_title <- function(x) {
  as.expression(bquote(bold(.(estimator_name(attr(x, "estimator",
                                                   exact = TRUE))) ~
                              "estimate of" ~ w(theta))))
}

# The line under the title, as the words that can end a line (each with
# its punctuation): auto or cross, the numbers of points, the errors, and
# "weighted counts" (sums of w_i w_j, as print() and summary() say)
subtitle_parts <- function(x) {
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
  err <- a$error
  if (is.null(err)) err <- if ("w_err" %in% names(x)) "given" else "none"
  errs <- switch(err, none = "no errors", given = "errors given",
                 poisson = "Poisson errors",
                 paste0(err, " errors",
                        if (!is.null(a$n_patches))
                          paste0(" (", a$n_patches, " patches)")))
  out <- c(if (type == "cross") "cross-correlation;" else
    "auto-correlation;", paste0(n(nd), " data,"),
    paste0(n(nr), " random points;"), paste0(errs, ";"),
    if (isTRUE(a$weighted)) "weighted counts")
  out[length(out)] <- sub(";$", "", out[length(out)])
  out
}

# the subtitle on one line
plot_subtitle <- function(x) paste(subtitle_parts(x), collapse = " ")

# `parts` joined by spaces into as few lines as keep each within what
# fits(line) allows (a part longer than that goes on a line of its own)
wrap_parts <- function(parts, fits) {
  lines <- character()
  cur <- NULL
  for (p in parts) {
    try <- if (is.null(cur)) p else paste(cur, p)
    if (is.null(cur) || fits(try)) cur <- try else {
      lines <- c(lines, cur)
      cur <- p
    }
  }
  c(lines, cur)
}

# the subtitle lines of base plot(): each within `width` inches at `cex`
# on the open device
subtitle_lines <- function(x, width, cex = 0.8) {
  wrap_parts(subtitle_parts(x), function(s)
    graphics::strwidth(s, units = "inches", cex = cex) <= width)
}

# the subtitle of autoplot(): lines of at most 50 characters, which fit
# a plot 480 pixels wide at ggplot2's 11-point text
gg_subtitle <- function(x) {
  paste(wrap_parts(subtitle_parts(x), function(s) nchar(s) <= 50),
        collapse = "\n")
}

# the title and subtitle lines of base plot(), above the plot region
draw_titles <- function(main, sub, cex = 0.8) {
  k <- length(sub)
  for (i in seq_len(k)) {
    graphics::mtext(sub[i], side = 3, line = 0.3 + (k - i) * 0.9, cex = cex)
  }
  graphics::title(main = main, line = 0.8 + k * 0.9)
}

# the line through the filled points, with NA between runs so that it
# never crosses a gap (a bin not drawn, or an open symbol)
line_path <- function(d) {
  d <- d[!is.na(d$run), , drop = FALSE]
  x <- numeric()
  y <- numeric()
  for (r in unique(d$run)) {
    k <- d$run == r
    x <- c(x, NA_real_, d$theta[k])
    y <- c(y, NA_real_, d$w[k])
  }
  list(x = x[-1L], y = y[-1L])
}

#' Plot w(theta)
#'
#' Plots w against the bin centres (or, with `theta = "theta_mean"`, the
#' mean separation of the pairs in each bin), with plus and minus `w_err`
#' when the result has errors, and a model curve when `model` is given.
#'
#' The axes are chosen from the values of w, never from their errors, so
#' that results of one kind are drawn alike: the angle axis is
#' logarithmic; the w axis is logarithmic when every w is positive,
#' otherwise linear, or `asinh(w / s)` (labelled in w, with ticks at 1, 2
#' and 5 times powers of ten on both sides of 0; `s` a power of ten near
#' the smaller |w|) when the |w| span more than two decades. On a
#' logarithmic w axis (`log = "xy"`) a negative w is drawn at |w| as an
#' open symbol, as papers do, and the line joins only the filled points,
#' never across a bin that is not drawn; a w of exactly 0 cannot be drawn
#' there. The angle axis always spans every bin. Results with more than 40
#' bins (for example the classic 360 linear bins) are drawn as a line with
#' a shaded error band, fewer as points with error bars. The title names
#' the estimator; the lines under it say auto- or cross-correlation, the
#' numbers of data and random points and the error type, wrapped to the
#' width of the device. A result whose w is `NA` in every bin gives an
#' empty frame that says so.
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
#' @param legend Draw a legend when a model or open symbols are drawn.
#' @param band `TRUE` for a line with a shaded error band, `FALSE` for
#'   points with error bars; by default a band for more than 40 bins.
#' @param theta The angle drawn on the x axis: `"theta"` (the bin
#'   centres, the default) or `"theta_mean"` (the pair-weighted mean
#'   separation of each bin, from `wtheta(mean_theta = TRUE)`).
#' @param ... Passed to [plot.default()] (for example `main`, `ylim`,
#'   `col`).
#' @return `x`, invisibly.
#' @seealso [autoplot.wtheta()] for ggplot2, [plot.wtheta_cov()] for the
#'   correlation matrix of the errors, [wtheta()].
#' @examples
#' sim <- simulate_catalog(2000, seed = 1)
#' ran <- random_catalog(4000, like = sim, seed = 2)
#' w <- wtheta(sim, ran, theta_bins(0.02, 3, n = 10, log = TRUE), threads = 1,
#'             mean_theta = TRUE)
#' plot(w, model = sim)
#' # negative w as open symbols at |w| on log-log axes
#' plot(w, log = "xy")
#' # the pairs' mean separation as the angle
#' plot(w, theta = "theta_mean")
#' # many linear bins: a line with a band
#' w2 <- wtheta(sim, ran, theta_bins(0, 4, width = 0.05), threads = 1)
#' plot(w2)
#' @export
plot.wtheta <- function(x, model = NULL, log = NULL, errors = TRUE,
                        legend = TRUE, band = NULL, theta = "theta", ...) {
  pd <- plot_data(x, model, log, errors, band, legend, theta)
  lay <- pd$lay
  ty <- pd$ty
  log_x <- pd$log_x
  log_y <- pd$log_y
  d <- pd$d
  th <- d$theta
  w <- d$w
  lo <- d$lo
  hi <- d$hi
  args <- list(...)
  col <- if (is.null(args$col)) "black" else args$col
  args$col <- NULL
  main <- if (is.null(args$main)) plot_title(x) else args$main
  args$main <- NULL
  if (is.null(args$xlab)) args$xlab <- theta_axis_label(x, pd$theta_col)
  if (is.null(args$ylab)) args$ylab <- w_axis_label(lay)
  if (!length(w)) {
    xl <- range(c(x$theta_lo, x$theta_hi), finite = TRUE)
    if (!all(is.finite(xl))) xl <- c(0, 1)
    if (log_x && xl[1L] <= 0) xl[1L] <- xl[2L] / 100
    do.call(graphics::plot, c(list(xl, c(-1, 1), type = "n",
                                   log = if (log_x) "x" else ""), args))
    graphics::text(sqrt(prod(xl)), 0, "w is NA in every bin", col = "grey30")
    draw_titles(main, subtitle_lines(x, graphics::par("pin")[1L]))
    return(invisible(x))
  }
  grid <- pd$grid
  mw <- pd$model_w
  if (is.null(args$ylim)) {
    r <- range(c(w, lo, hi, if (!is.null(grid)) mw), finite = TRUE)
    if (!log_y) r <- range(r, 0)
    args$ylim <- ty(r)
  }
  if (is.null(args$xlim)) args$xlim <- pd$xlim
  pch <- if (is.null(args$pch)) 19 else args$pch
  args$pch <- NULL
  own_x <- is.null(args$xaxt)
  own_y <- is.null(args$yaxt)
  args$xaxt <- "n"
  args$yaxt <- "n"
  do.call(graphics::plot, c(list(th, ty(w), type = "n",
                                 log = paste0(if (log_x) "x" else "",
                                              if (log_y) "y" else "")),
                            args))
  if (own_x) {
    at <- graphics::axTicks(1)
    graphics::axis(1, at = at, labels = format_ticks(at))
  }
  if (own_y) {
    at <- if (lay$y == "asinh") pd$ticks else graphics::axTicks(2)
    graphics::axis(2, at = ty(at), labels = format_ticks(at))
  }
  draw_titles(main, subtitle_lines(x, graphics::par("pin")[1L]))
  if (!log_y) graphics::abline(h = 0, lty = 3, col = "grey40")
  bottom <- if (log_y) 10^graphics::par("usr")[3L] else NA_real_
  if (pd$has_err) {
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
  path <- line_path(d)
  graphics::lines(path$x, ty(path$y), col = col)
  open <- d$open
  if (lay$style == "points" || any(open)) {
    shown <- lay$style == "points" | open
    graphics::points(th[shown], ty(w[shown]),
                     pch = ifelse(open[shown], 1, pch), col = col,
                     bg = "white")
  }
  keys <- list()
  if (!is.null(grid)) {
    graphics::lines(grid, ty(mw), col = "firebrick", lwd = 2, lty = 2)
    keys <- list(c("measured", col, 1, if (lay$style == "points") pch else
      NA, 1), c("model", "firebrick", 2, NA, 2))
  }
  if (any(open)) keys <- c(keys, list(c("w < 0, at |w|", col, 0, 1, 1)))
  if (legend && length(keys)) {
    k <- do.call(rbind, keys)
    graphics::legend("topright", bty = "n", legend = k[, 1L], col = k[, 2L],
                     lty = as.numeric(k[, 3L]), pch = as.numeric(k[, 4L]),
                     lwd = as.numeric(k[, 5L]))
  }
  invisible(x)
}

#' Plot w(theta) with ggplot2
#'
#' The ggplot2 version of [plot.wtheta()], with the same choice of axes,
#' ticks and style: points and lines with error bars, or a line with a
#' shaded error band for many bins; negative w as open symbols at |w| on
#' a logarithmic w axis; a dashed model curve when `model` is given; a
#' title naming the estimator and a subtitle (on lines of at most 50
#' characters, which fit a plot 480 pixels wide) with auto or cross, the
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
#' ggplot2::autoplot(w, log = "xy")
#' @exportS3Method ggplot2::autoplot
autoplot.wtheta <- function(object, model = NULL, log = NULL, errors = TRUE,
                            band = NULL, theta = "theta", ...) {
  if (!requireNamespace("ggplot2", quietly = TRUE)) {
    stop("autoplot() needs the ggplot2 package; plot() works without it.",
         call. = FALSE)
  }
  x <- object
  pd <- plot_data(x, model, log, errors, band, theta = theta)
  lay <- pd$lay
  ty <- pd$ty
  d <- pd$d
  d$w_t <- ty(d$w)
  # a bar whose lower end is not positive on a log w axis goes down to
  # below the lowest point, as in plot()
  if (pd$log_y && nrow(d)) {
    d$lo[is.na(d$lo) & !is.na(d$hi)] <- min(c(d$w, d$lo), na.rm = TRUE) / 3
  }
  d$lo_t <- ty(d$lo)
  d$hi_t <- ty(d$hi)
  d$symbol <- ifelse(d$open, "w < 0, at |w|", "w > 0")
  .data <- ggplot2::.data
  p <- ggplot2::ggplot(d, ggplot2::aes(x = .data$theta, y = .data$w_t))
  if (pd$has_err && lay$style == "band") {
    p <- p + ggplot2::geom_ribbon(
      ggplot2::aes(ymin = .data$lo_t, ymax = .data$hi_t), fill = "grey60",
      alpha = 0.4, na.rm = TRUE)
  }
  filled <- d[!is.na(d$run), , drop = FALSE]
  p <- p + ggplot2::geom_line(data = filled, ggplot2::aes(group = .data$run),
                              colour = "grey20")
  if (lay$style == "points" || any(d$open)) {
    pts <- if (lay$style == "points") d else d[d$open, , drop = FALSE]
    p <- p + ggplot2::geom_point(data = pts, ggplot2::aes(shape = .data$symbol),
                                 colour = "black", fill = "white") +
      ggplot2::scale_shape_manual(
        values = c("w > 0" = 19, "w < 0, at |w|" = 21), name = NULL,
        guide = if (any(d$open)) "legend" else "none")
  }
  if (lay$style == "points" && pd$has_err) {
    p <- p + ggplot2::geom_errorbar(
      ggplot2::aes(ymin = .data$lo_t, ymax = .data$hi_t),
      width = if (pd$log_x) 0.03 else 0.01 * diff(range(d$theta)),
      na.rm = TRUE)
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
  xs <- if (pd$log_x) ggplot2::scale_x_log10 else ggplot2::scale_x_continuous
  # every bin's angle on the axis, drawn or not
  p <- p + xs(labels = format_ticks)
  if (!is.null(pd$xlim)) p <- p + ggplot2::expand_limits(x = pd$xlim)
  if (pd$log_y) p <- p + ggplot2::scale_y_log10(labels = format_ticks)
  if (lay$y == "asinh") {
    p <- p + ggplot2::scale_y_continuous(breaks = ty(pd$ticks),
                                         labels = format_ticks(pd$ticks))
  }
  p + ggplot2::labs(
    x = theta_axis_label(x, pd$theta_col), y = w_axis_label(lay),
    title = plot_title(x),
    subtitle = paste0(gg_subtitle(x),
                      if (!is.null(pd$fun))
                        "\nline: measured; dashed: model"),
    caption = if (!nrow(d)) "w is NA in every bin") +
    ggplot2::theme_bw() + ggplot2::theme(legend.position = "bottom")
}
