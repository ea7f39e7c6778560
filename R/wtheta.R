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
                   threads = NULL, devices = NULL, columns = c("ra", "dec"),
                   progress = NULL) {
  start <- proc.time()[["elapsed"]]
  progress <- progress_or_default(progress)
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
  dd <- count_pairs(ud, NULL, edges, self_pairs, run, threads, progress)
  dr <- count_pairs(ud, ur, edges, FALSE, run, threads, progress)
  rr <- count_pairs(ur, NULL, edges, self_pairs, run, threads, progress)
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

