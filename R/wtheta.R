#' Estimate the angular two-point correlation function
#'
#' Counts data-data (DD), data-random (DR) and random-random (RR) pairs with
#' [pair_counts()] and combines the normalised counts
#' `dd = DD / N_DD`, `dr = DR / N_DR`, `rr = RR / N_RR` into w(theta):
#' \describe{
#'   \item{`"LS"` (Landy-Szalay, the default)}{`(dd - 2 dr + rr) / rr`}
#'   \item{`"natural"`}{`dd / rr - 1`}
#'   \item{`"DP"` (Davis-Peebles)}{`dd / dr - 1`}
#'   \item{`"Hamilton"`}{`dd rr / dr^2 - 1`}
#' }
#' With `self_pairs = FALSE` the auto counts are unordered pairs without
#' self pairs, normalised by `nD (nD - 1) / 2` and `nR (nR - 1) / 2`; with
#' `self_pairs = TRUE` they are all ordered pairs, self pairs included,
#' normalised by `nD^2` and `nR^2` (the classic convention: for
#' `nD == nR` Landy-Szalay is then exactly `(DD - 2 DR + RR) / RR` of the raw
#' counts). DR is always all `nD * nR` pairs.
#'
#' @param data The galaxy catalog (see [pair_counts()] for the form).
#' @param random Random points on the same footprint.
#' @param bins Bin edges in degrees, for example from [theta_bins()].
#' @param estimator One of `"LS"`, `"natural"`, `"DP"`, `"Hamilton"`.
#' @inheritParams pair_counts
#' @return A data frame of class `c("wtheta", "data.frame")` with columns
#'   `theta_lo`, `theta_hi`, `theta` (bin centre, degrees), `DD`, `DR`, `RR`
#'   (raw counts in the chosen convention) and `w`, and attributes `n_data`,
#'   `n_random`, `estimator`, `self_pairs`, `backend`, `devices`, `threads`,
#'   `elapsed` (seconds for the whole call), `n_outside` (pairs outside the edges for DD, DR,
#'   RR) and `edges`. `w` is `NA` in bins where its denominator count is
#'   zero, with a warning.
#' @examples
#' sim <- simulate_catalog(2000, seed = 1)
#' ran <- random_catalog(4000, seed = 2)
#' w <- wtheta(sim, ran, theta_bins(0.1, 5, n = 8, log = TRUE), threads = 1)
#' w
#' plot(w)
#' @export
wtheta <- function(data, random, bins,
                   estimator = c("LS", "natural", "DP", "Hamilton"),
                   self_pairs = FALSE, backend = c("auto", "cpu", "cuda"),
                   threads = NULL, devices = NULL, columns = c("ra", "dec")) {
  start <- proc.time()[["elapsed"]]
  d <- as_catalog(data, "data", columns)
  r <- as_catalog(random, "random", columns)
  edges <- bins_edges(bins)
  estimator <- match_choice(estimator, c("LS", "natural", "DP", "Hamilton"),
                            "estimator")
  check_flag(self_pairs, "self_pairs")
  for (arg in c("data", "random")) {
    n <- nrow(if (arg == "data") d else r)
    if (n < 2L && !self_pairs) {
      stop("`", arg, "` has ", n, " point; w(theta) needs at least 2.",
           call. = FALSE)
    }
  }
  threads <- threads_or_default(threads)
  run <- choose_backend(backend, devices)
  ud <- unit_vectors(d, threads)
  ur <- unit_vectors(r, threads)
  dd <- count_pairs(ud, NULL, edges, self_pairs, run, threads)
  dr <- count_pairs(ud, ur, edges, FALSE, run, threads)
  rr <- count_pairs(ur, NULL, edges, self_pairs, run, threads)
  w <- estimate_w(dd$counts / dd$n_pairs, dr$counts / dr$n_pairs,
                  rr$counts / rr$n_pairs, estimator)
  nb <- length(edges) - 1L
  out <- data.frame(theta_lo = dd$theta_lo, theta_hi = dd$theta_hi,
                    theta = (dd$theta_lo + dd$theta_hi) / 2,
                    DD = dd$counts, DR = dr$counts, RR = rr$counts, w = w)
  structure(out, class = c("wtheta", "data.frame"),
            n_data = nrow(d), n_random = nrow(r), estimator = estimator,
            self_pairs = self_pairs, backend = run$backend,
            devices = run$devices, threads = dd$threads,
            elapsed = proc.time()[["elapsed"]] - start,
            n_outside = c(DD = dd$n_outside, DR = dr$n_outside,
                          RR = rr$n_outside),
            edges = edges)
}

# w from normalised counts; NA (with a warning) where a denominator is zero
estimate_w <- function(dd, dr, rr, estimator) {
  denom <- switch(estimator, LS = rr, natural = rr, DP = dr, Hamilton = dr)
  w <- switch(estimator,
              LS = (dd - 2 * dr + rr) / rr,
              natural = dd / rr - 1,
              DP = dd / dr - 1,
              Hamilton = dd * rr / dr^2 - 1)
  zero <- denom == 0
  if (any(zero)) {
    w[zero] <- NA_real_
    warning("w is NA in ", sum(zero), " bin(s) where ",
            if (estimator %in% c("LS", "natural")) "RR" else "DR",
            " is zero; widen the bins or add randoms.", call. = FALSE)
  }
  w
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
