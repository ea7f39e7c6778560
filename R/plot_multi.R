# plot() and autoplot() of wtheta_multi results: a triangle of panels,
# w_ij against theta, sample i down and j across. What is drawn comes
# from multi_plot_data(), which both use.

# What plot() and autoplot() of a wtheta_multi result draw: list(log_x,
# log_y, scales, d: the long data frame with plot_points()'s w (|w| on a
# log w axis), err, lo, hi, ok, open and run, and ylim: the w range of
# each panel's row ("free_y") or of all panels ("fixed"), by sample i)
multi_plot_data <- function(x, log, errors, scales = "fixed") {
  check_flag(errors, "errors")
  if (!is.character(scales) || length(scales) != 1L || is.na(scales) ||
      !scales %in% c("fixed", "free_y")) {
    stop("`scales` must be \"fixed\" or \"free_y\", not ", describe(scales),
         ".", call. = FALSE)
  }
  log_x <- multi_log(attr(x, "edges"), log)
  log_y <- !is.null(log) && grepl("y", log, fixed = TRUE)
  d <- as.data.frame(x)
  has_err <- errors && !is.null(d$w_err)
  p <- plot_points(d$theta, d$w, if (has_err) d$w_err, log_x, log_y)
  # the runs of the line are counted within each correlation
  key <- paste(d$i, d$j)
  p$run[!is.na(p$run)] <- as.integer(factor(paste(key, p$run)))[!is.na(p$run)]
  d$w <- p$w
  d[c("err", "lo", "hi", "ok", "open", "run")] <-
    p[c("err", "lo", "hi", "ok", "open", "run")]
  span <- function(e) {
    r <- range(c(e$w, e$lo, e$hi)[c(e$ok, e$ok, e$ok)], finite = TRUE)
    if (!all(is.finite(r))) r <- if (log_y) c(0.1, 1) else c(-1, 1)
    if (!log_y) r <- range(r, 0)
    r
  }
  s <- attr(x, "samples")
  ylim <- if (scales == "fixed") {
    stats::setNames(rep(list(span(d)), length(s)), s)
  } else {
    stats::setNames(lapply(s, function(k) span(d[d$i == k, , drop = FALSE])),
                    s)
  }
  list(log_x = log_x, log_y = log_y, has_err = has_err, scales = scales,
       d = d, ylim = ylim)
}

# TRUE when the theta axis of a result with these edges is best on a log
# scale
multi_log <- function(edges, log) {
  if (!is.null(log)) {
    check_log(log, c("", "x", "y", "xy"))
    return(grepl("x", log, fixed = TRUE))
  }
  bins_are_log(edges)
}

multi_title <- function(x) {
  err <- attr(x, "error")
  errs <- if (is.null(err) || err == "none") "no errors" else
    paste(if (err == "poisson") "Poisson" else err, "errors")
  # weighted counts are sums of w_i w_j, as print() and summary() say
  if (isTRUE(attr(x, "weighted"))) errs <- paste0(errs, "; weighted counts")
  K <- length(attr(x, "samples"))
  as.expression(bquote(w(theta) ~ "of" ~ .(K) ~ "samples (" *
                         .(estimator_name(attr(x, "estimator"))) * ", " *
                         .(errs) * ")"))
}

#' @rdname wtheta_multi-methods
#' @order 5
#' @param scales The w axes of the panels: `"fixed"` (the default), one
#'   range shared by every panel, so that amplitudes compare across
#'   panels, in `plot()` and `autoplot()` alike; `"free_y"`, one range per
#'   row (sample `i`). `plot()` and `autoplot()` also take `log = "y"` or
#'   `"xy"`, which draws a negative w at |w| as an open symbol, and the
#'   line in each panel joins only its filled points.
#' @export
plot.wtheta_multi <- function(x, log = NULL, errors = TRUE,
                              scales = "fixed", ...) {
  pd <- multi_plot_data(x, log, errors, scales)
  log_x <- pd$log_x
  log_y <- pd$log_y
  d <- pd$d
  s <- attr(x, "samples")
  K <- length(s)
  old <- graphics::par(no.readonly = TRUE)
  on.exit(graphics::par(old))
  # a right margin of a line and a half keeps the last tick label inside
  graphics::par(mfrow = c(K, K), mar = c(3.5, 3.8, 1.8, 1.5),
                mgp = c(2.2, 0.6, 0), oma = c(0, 0, 3, 0), cex.axis = 0.85)
  xl <- range(d$theta[d$ok])
  if (!all(is.finite(xl))) xl <- range(d$theta, finite = TRUE)
  for (i in seq_len(K)) {
    for (j in seq_len(K)) {
      if (j < i) {
        graphics::plot.new()
        next
      }
      e <- d[d$i == s[i] & d$j == s[j] & d$ok, , drop = FALSE]
      graphics::plot(e$theta, e$w, type = "n", xlim = xl, ylim = pd$ylim[[i]],
                     log = paste0(if (log_x) "x", if (log_y) "y"),
                     xlab = theta_axis_label(x), ylab = expression(w(theta)),
                     main = paste(s[i], "x", s[j]), cex.main = 0.9,
                     xaxt = "n", yaxt = "n", ...)
      at <- graphics::axTicks(1)
      graphics::axis(1, at = at, labels = format_ticks(at))
      at <- graphics::axTicks(2)
      graphics::axis(2, at = at, labels = format_ticks(at))
      if (!log_y) graphics::abline(h = 0, col = "grey70", lty = 2)
      path <- line_path(e)
      graphics::lines(path$x, path$y, col = "grey40")
      graphics::points(e$theta, e$w, pch = ifelse(e$open, 1, 19), cex = 0.7)
      lo <- if (log_y) ifelse(is.na(e$lo) & !is.na(e$hi),
                              10^graphics::par("usr")[3L], e$lo) else e$lo
      # bars shorter than a pixel or so would be zero-length arrows
      usr <- graphics::par("usr")[3:4]
      tall <- if (log_y) abs(log10(e$hi) - log10(lo)) else abs(e$hi - lo)
      eb <- is.finite(e$err) & !is.na(tall) & tall > 1e-3 * abs(diff(usr))
      if (any(eb)) {
        graphics::arrows(e$theta[eb], lo[eb], e$theta[eb], e$hi[eb],
                         angle = 90, code = 3, length = 0.02)
      }
    }
  }
  graphics::title(multi_title(x), outer = TRUE, line = 1.6)
  if (any(d$open & d$ok)) {
    graphics::mtext("open symbols: w < 0, drawn at |w|", side = 3,
                    outer = TRUE, line = 0, cex = 0.7)
  }
  invisible(x)
}

#' @rdname wtheta_multi-methods
#' @order 6
#' @exportS3Method ggplot2::autoplot
autoplot.wtheta_multi <- function(object, log = NULL, errors = TRUE,
                                  scales = "fixed", ...) {
  if (!requireNamespace("ggplot2", quietly = TRUE)) {
    stop("autoplot() needs the ggplot2 package; plot() works without it.",
         call. = FALSE)
  }
  pd <- multi_plot_data(object, log, errors, scales)
  d <- pd$d[pd$d$ok, , drop = FALSE]
  if (pd$log_y && nrow(d)) {
    d$lo[is.na(d$lo) & !is.na(d$hi)] <- min(c(d$w, d$lo), na.rm = TRUE) / 3
  }
  d$symbol <- ifelse(d$open, "w < 0, at |w|", "w > 0")
  .data <- ggplot2::.data
  p <- ggplot2::ggplot(d, ggplot2::aes(x = .data$theta, y = .data$w))
  if (!pd$log_y) {
    p <- p + ggplot2::geom_hline(yintercept = 0, colour = "grey70",
                                 linetype = "dashed")
  }
  p <- p +
    ggplot2::geom_line(data = d[!is.na(d$run), , drop = FALSE],
                       ggplot2::aes(group = .data$run), colour = "grey40") +
    ggplot2::geom_point(ggplot2::aes(shape = .data$symbol), size = 1.5,
                        fill = "white") +
    ggplot2::scale_shape_manual(
      values = c("w > 0" = 19, "w < 0, at |w|" = 21), name = NULL,
      guide = if (any(d$open)) "legend" else "none") +
    ggplot2::facet_grid(rows = ggplot2::vars(.data$i),
                        cols = ggplot2::vars(.data$j), drop = FALSE,
                        scales = pd$scales) +
    ggplot2::labs(x = theta_axis_label(object), y = expression(w(theta)),
                  title = multi_title(object)) +
    ggplot2::theme_bw() + ggplot2::theme(legend.position = "bottom")
  if (pd$has_err) {
    p <- p + ggplot2::geom_errorbar(
      ggplot2::aes(ymin = .data$lo, ymax = .data$hi), width = 0,
      na.rm = TRUE)
  }
  xs <- if (pd$log_x) ggplot2::scale_x_log10 else ggplot2::scale_x_continuous
  p <- p + xs(labels = format_ticks)
  ys <- if (pd$log_y) ggplot2::scale_y_log10 else ggplot2::scale_y_continuous
  p + ys(labels = format_ticks)
}
