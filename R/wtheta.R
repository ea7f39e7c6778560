#' Estimate the angular two-point correlation function
#'
#' Counts data-data (DD), data-random (DR) and random-random (RR) pairs with
#' [pair_counts()] and combines the normalised counts
#' `dd = DD / N_DD`, `dr = DR / N_DR`, `rr = RR / N_RR` into w(theta).
#'
#' @section Estimators: For the auto-correlation of one sample:
#' \describe{
#'   \item{`"LS"` (Landy & Szalay 1993, the default)}{`(dd - 2 dr + rr) / rr`.
#'     The least variance and the least sensitivity to the footprint's edges
#'     of the four; use it unless there is a reason not to.}
#'   \item{`"natural"` (Peebles & Hauser 1974)}{`dd / rr - 1`. Simple, but
#'     biased by the footprint at large angles; needs many randoms.}
#'   \item{`"DP"` (Davis & Peebles 1983)}{`dd / dr - 1`. Needs no RR, so it
#'     is cheap, but has more variance than LS on large scales.}
#'   \item{`"Hamilton"` (Hamilton 1993)}{`dd rr / dr^2 - 1`. As insensitive
#'     to the mean density as LS, with a slightly larger variance.}
#' }
#' For the cross-correlation of two samples D1 and D2 (with randoms R1 and
#' R2 on their footprints; pass `data2` and `random2`) the counts are
#' D1D2, D1R2, R1D2 and R1R2, all cross pairs, and the estimators are
#' `(d1d2 - d1r2 - r1d2 + r1r2) / r1r2` (LS), `d1d2 / r1r2 - 1` (natural),
#' `d1d2 / d1r2 - 1` (DP) and `d1d2 r1r2 / (d1r2 r1d2) - 1` (Hamilton). When
#' `random2` is `NULL` both samples share `random`, and R1R2 is its auto
#' count (pairs `i != j`).
#'
#' @section Conventions: With `self_pairs = FALSE` the auto counts are
#' unordered pairs without self pairs, normalised by `nD (nD - 1) / 2` and
#' `nR (nR - 1) / 2`; with `self_pairs = TRUE` they are all ordered pairs,
#' self pairs included, normalised by `nD^2` and `nR^2` (the classic
#' convention: for `nD == nR` Landy-Szalay is then exactly
#' `(DD - 2 DR + RR) / RR` of the raw counts). DR is always all `nD * nR`
#' pairs. With weights, counts are sums of `w_i w_j` and the normalisers the
#' same sums over all pairs: `((sum w)^2 - sum w^2) / 2` for unordered auto
#' pairs, `(sum w)^2` with self pairs, `sum w1 * sum w2` for cross pairs.
#'
#' @section Errors:
#' \describe{
#'   \item{`"poisson"`}{`|1 + w| / sqrt(DD)` with the raw DD (D1D2) pair
#'     count: the shot noise alone. It ignores the covariance between bins
#'     and underestimates the error wherever the sample's own clustering
#'     (cosmic variance) matters, that is at all but the smallest angles.}
#'   \item{`"jackknife"`}{The footprint is cut into `n_patches` patches
#'     ([sky_patches()] on the randoms, seeded by `seed`, unless `patches`
#'     gives labels or centres). w is estimated `n_patches` times, each time
#'     without one patch, and the covariance is
#'     `(P - 1) / P * sum_k (w_k - mean w)(w_k - mean w)^T`. All counts come
#'     from one pass over the pairs that credits each pair to its two
#'     patches (see [pair_counts()]), so errors cost little more than w.}
#'   \item{`"bootstrap"`}{`n_boot` resamplings of the patches with
#'     replacement; a pair between patches `a` and `b` counts
#'     `m_a m_b` times, `m` the number of times each patch was drawn (pairs
#'     within a patch `m_a^2` times), and the normalisers likewise. The
#'     covariance is that of the resampled w. Bootstrap over patches tends
#'     to overestimate errors somewhat; jackknife is the usual choice.}
#'   \item{`"none"`}{No error column.}
#' }
#' Use at least as many patches as bins whose covariance you need, and
#' patches larger than the largest angle of interest.
#'
#' @param data The galaxy catalog (see [pair_counts()] for the form).
#' @param random Random points on the same footprint.
#' @param bins Bin edges in degrees, for example from [theta_bins()].
#' @param estimator One of `"LS"`, `"natural"`, `"DP"`, `"Hamilton"`.
#' @param weights Per-object weights: `NULL`, the name of a column (the
#'   catalogs without that column, say randoms, have unit weights; at least
#'   one must have it), or a list with elements named `data`, `random`
#'   (and `data2`, `random2`), each a numeric vector or a column name; a
#'   catalog left out of the list has unit weights.
#' @param error `"poisson"` (the default), `"jackknife"`, `"bootstrap"` or
#'   `"none"`; see Errors.
#' @param patches For jackknife and bootstrap: `NULL` (patches made by
#'   [sky_patches()] on `random`), a result of [sky_patches()], or labels:
#'   the name of a column present in every catalog, or a list with elements
#'   `data`, `random` (and `data2`, `random2`), each labels or a column name.
#' @param n_patches Number of patches made when `patches` is `NULL`.
#' @param n_boot Number of bootstrap resamplings.
#' @param seed A whole number (an R integer other than `NA`) seeding the
#'   patches made by k-means and the bootstrap draws (the global random
#'   state is left as it was), or `NULL`.
#' @param data2,random2 A second sample and its randoms, for the
#'   cross-correlation of `data` with `data2`.
#' @param check_footprint `TRUE` (the default): before counting, run
#'   [footprint_check()] on `data` against `random` (and `data2` against
#'   its randoms) and warn, naming the largest discrepancy and where it
#'   is, when they do not seem to share a footprint. It takes a small
#'   fraction of the counting time. `FALSE` skips it.
#' @inheritParams pair_counts
#' @return A data frame of class `c("wtheta", "data.frame")` with columns
#'   `theta_lo`, `theta_hi`, `theta` (bin centre, degrees), the counts
#'   (`DD`, `DR`, `RR`, or `D1D2`, `D1R2`, `R1D2`, `R1R2` for a
#'   cross-correlation: raw pair counts in the chosen convention, or
#'   weighted counts with weights), `w`, and `w_err` unless
#'   `error = "none"`. Attributes: `type` (`"auto"` or `"cross"`), `n_data`,
#'   `n_random` (and `n_data2`, `n_random2`), `estimator`, `self_pairs`,
#'   `weighted`, `error`, `cov` (the covariance of w, a matrix; diagonal
#'   for Poisson errors), `n_patches`, `replicates` (the jackknife or
#'   bootstrap w, one column each), `patches` (the patches used),
#'   `pair_counts` (the [pair_counts()] results, raw counts included),
#'   `backend`, `devices`, `threads`, `elapsed` (seconds for the whole call),
#'   `n_outside` (pairs outside the edges per count), `edges` and
#'   `footprint_check` (the [footprint_check()] results, or `NULL`). `w` is
#'   `NA` in bins where its denominator is zero, and `w_err` in bins where
#'   that of a replicate is, each with a warning that names the bins.
#' @seealso [wtheta_cov()] for the covariance, [sky_patches()].
#' @examples
#' sim <- simulate_catalog(2000, seed = 1)
#' ran <- random_catalog(4000, seed = 2)
#' w <- wtheta(sim, ran, theta_bins(0.1, 5, n = 8, log = TRUE), threads = 1)
#' w
#' plot(w)
#' wj <- wtheta(sim, ran, theta_bins(0.1, 5, n = 8, log = TRUE), threads = 1,
#'              error = "jackknife", n_patches = 10, seed = 3)
#' wj$w_err
#' @export
wtheta <- function(data, random, bins,
                   estimator = c("LS", "natural", "DP", "Hamilton"),
                   self_pairs = FALSE, backend = c("auto", "cpu", "cuda"),
                   threads = NULL, devices = NULL, columns = c("ra", "dec"),
                   progress = NULL, weights = NULL,
                   error = c("poisson", "jackknife", "bootstrap", "none"),
                   patches = NULL, n_patches = 20, n_boot = 500, seed = NULL,
                   data2 = NULL, random2 = NULL, distribute = FALSE,
                   checkpoint = NULL, retries = 1, timeout = NULL,
                   check_footprint = TRUE) {
  start <- proc.time()[["elapsed"]]
  progress <- progress_or_default(progress)
  estimator <- match_choice(estimator, c("LS", "natural", "DP", "Hamilton"),
                            "estimator")
  error <- match_choice(error, c("poisson", "jackknife", "bootstrap", "none"),
                        "error")
  check_flag(self_pairs, "self_pairs")
  is_cross <- !is.null(data2)
  if (!is_cross && !is.null(random2)) {
    stop("`random2` is for a cross-correlation and needs `data2`.",
         call. = FALSE)
  }
  if (is_cross && self_pairs) {
    stop("`self_pairs = TRUE` applies to auto-correlations; a ",
         "cross-correlation (`data2` given) counts cross pairs only.",
         call. = FALSE)
  }
  users <- list(data = data, random = random, data2 = data2,
                random2 = random2)
  users <- users[!vapply(users, is.null, TRUE)]
  cats <- lapply(names(users), function(nm) as_catalog(users[[nm]], nm,
                                                        columns))
  names(cats) <- names(users)
  edges <- bins_edges(bins)
  for (nm in intersect(c("data", "random"), names(cats))) {
    if (!is_cross && nrow(cats[[nm]]) < 2L && !self_pairs) {
      stop("`", nm, "` has ", nrow(cats[[nm]]), " point; w(theta) needs at ",
           "least 2.", call. = FALSE)
    }
  }
  w <- object_values(weights, users, "weights", numeric = TRUE)
  check_weight_products(w)
  check_weight_totals(w, is_cross, self_pairs)
  resample <- error %in% c("jackknife", "bootstrap")
  if (!resample && !is.null(patches)) {
    stop("`patches` is used by error = \"jackknife\" or \"bootstrap\", not ",
         "by error = \"", error, "\".", call. = FALSE)
  }
  if (resample) check_n_patches(n_patches)
  if (error == "bootstrap") check_count(n_boot, "n_boot")
  check_seed(seed)
  check_flag(check_footprint, "check_footprint")
  how <- plan_counting(backend, devices, threads, distribute, checkpoint,
                       retries, timeout)
  # patches given as labels are counted once read, below; made or given
  # as centres, they are known now
  n_p <- if (!resample) 0 else if (is.null(patches)) n_patches else
    if (inherits(patches, "wtheta_patches")) nrow(patches) else 0
  check_memory(sum(vapply(cats, nrow, 0L)), !is.null(w), resample,
               n_bins = length(edges) - 1L, n_patches = n_p,
               n_replicates = if (error == "bootstrap") n_boot else n_p,
               n_counts = if (is_cross) 4 else 3)
  threads <- threads_or_default(threads)

  fchecks <- NULL
  if (check_footprint) {
    pairs <- list(c("data", "random"))
    if (is_cross) pairs[[2L]] <- c("data2", if (!is.null(cats$random2))
      "random2" else "random")
    fchecks <- lapply(pairs, function(pr) {
      fc <- footprint_check(cats[[pr[1L]]], cats[[pr[2L]]])
      if (fc$verdict == "mismatch") {
        warning("`", pr[1L], "` and `", pr[2L], "` do not seem to share a ",
                "footprint: ", fc$message, ". See ?footprint_check; ",
                "randoms uniform in area on the footprint come from ",
                "random_catalog(). check_footprint = FALSE turns this ",
                "check off.", call. = FALSE)
      }
      fc
    })
    names(fchecks) <- vapply(pairs, paste, "", collapse = "/")
  }

  p <- NULL
  labels <- NULL
  made <- NULL
  if (resample) {
    # each catalog grouped by patch once, not once per count it enters
    if (is.null(patches) || inherits(patches, "wtheta_patches")) {
      made <- if (is.null(patches)) {
        fit_patches(cats$random, "random", n_patches, seed,
                    threads = threads)
      } else patches
      labels <- as.character(seq_len(nrow(made)))
      g <- lapply(names(cats), function(nm) {
        patch_vectors(cats[[nm]], attr(made, "centres"), w[[nm]], threads)
      })
    } else {
      pn <- patch_numbers(object_values(patches, users, "patches",
                                        numeric = FALSE))
      labels <- pn$labels
      g <- lapply(names(cats), function(nm) {
        group_patches(unit_vectors(cats[[nm]], threads), pn$numbers[[nm]],
                      length(labels), w[[nm]])
      })
    }
    names(g) <- names(cats)
    empty <- which(g$random$counts == 0L)
    if (length(empty)) {
      stop("patch ", dQuote(label_text(labels[empty[1L]]), FALSE),
           " holds no random ",
           "point; every patch needs randoms.", call. = FALSE)
    }
    u <- lapply(g, `[[`, "xyz")
    p <- lapply(g, `[[`, "labels")
    if (!is.null(w)) w <- lapply(g, `[[`, "weights")
    rm(g)
  } else {
    u <- lapply(cats, unit_vectors, threads = threads)
  }
  progress <- progress_start(progress, if (is_cross) 4L else 3L,
                             environment())
  how <- checkpoint_open(how, "wtheta", list(u, w, p, edges, self_pairs,
                                             length(labels), is.null(random2)))
  # one C catalog per catalog, shared by every count it enters, so that
  # its grid is sorted and built once; freed when the call returns
  handles <- lapply(u, function(x) new_catalog_handle())
  on.exit(lapply(handles, catalog_release), add = TRUE)
  count <- function(x, y, sp) {
    count_planned(how, u[[x]], if (!is.null(y)) u[[y]], edges, sp, threads,
                  progress, w[[x]], if (!is.null(y)) w[[y]], p[[x]],
                  if (!is.null(y)) p[[y]], length(labels),
                  label = paste0(x, "-", if (is.null(y)) x else y),
                  ha = handles[[x]], hb = if (!is.null(y)) handles[[y]])
  }
  if (!is_cross) {
    pcs <- list(DD = count("data", NULL, self_pairs),
                DR = count("data", "random", FALSE),
                RR = count("random", NULL, self_pairs))
  } else {
    r2 <- if (is.null(random2)) "random" else "random2"
    pcs <- list(D1D2 = count("data", "data2", FALSE),
                D1R2 = count("data", r2, FALSE),
                R1D2 = count("random", "data2", FALSE),
                R1R2 = if (is.null(random2)) count("random", NULL, FALSE) else
                  count("random", "random2", FALSE))
  }
  weighted <- !is.null(w)
  norm <- lapply(pcs, function(pc) if (weighted) pc$weighted / pc$weighted_pairs
                 else pc$counts / pc$n_pairs)
  wv <- estimate_w(norm, estimator, is_cross, warn = TRUE)
  nb <- length(edges) - 1L
  out <- data.frame(theta_lo = edges[-(nb + 1L)], theta_hi = edges[-1L])
  out$theta <- (out$theta_lo + out$theta_hi) / 2
  for (nm in names(pcs)) {
    out[[nm]] <- if (weighted) pcs[[nm]]$weighted else pcs[[nm]]$counts
  }
  out$w <- wv
  cov <- NULL
  reps <- NULL
  if (error == "poisson") {
    raw <- pcs[[1L]]$counts
    out$w_err <- ifelse(raw > 0, abs(1 + wv) / sqrt(raw), NA_real_)
    cov <- diag(out$w_err^2, nb)
  } else if (resample) {
    reps <- replicate_w(pcs, estimator, is_cross, error, n_boot, seed,
                        weighted)
    bad <- which(rowSums(!is.finite(reps)) > 0)
    if (length(bad)) {
      warning("w_err is NA in ", length(bad), " bin(s) where a ", error,
              " replicate of w has a zero denominator: bin",
              if (length(bad) > 1L) "s", " ",
              paste(bad[seq_len(min(10L, length(bad)))], collapse = ", "),
              if (length(bad) > 10L) ", ...", "; widen the bins, use ",
              "fewer patches or add randoms.", call. = FALSE)
    }
    cov <- if (error == "jackknife") {
      P <- ncol(reps)
      d <- reps - rowMeans(reps)
      (P - 1) / P * tcrossprod(d)
    } else {
      stats::cov(t(reps))
    }
    out$w_err <- sqrt(diag(cov))
  }
  if (!is.null(cov)) {
    nm <- format(out$theta)
    dimnames(cov) <- list(nm, nm)
  }
  structure(out, class = c("wtheta", "data.frame"),
            type = if (is_cross) "cross" else "auto",
            n_data = nrow(cats$data), n_random = nrow(cats$random),
            n_data2 = if (is_cross) nrow(cats$data2),
            n_random2 = if (is_cross) nrow(cats[[r2]]),
            estimator = estimator, self_pairs = self_pairs,
            weighted = weighted, error = error, cov = cov,
            n_patches = if (resample) length(labels) else NA_integer_,
            replicates = reps,
            patches = if (resample) (if (!is.null(made)) made else labels),
            pair_counts = pcs,
            backend = pcs[[1L]]$backend, devices = pcs[[1L]]$devices,
            threads = pcs[[1L]]$threads,
            elapsed = proc.time()[["elapsed"]] - start,
            n_outside = vapply(pcs, `[[`, 0, "n_outside"),
            edges = edges, footprint_check = fchecks)
}

#' Covariance of a w(theta) estimate
#'
#' @param x A result of [wtheta()].
#' @return The covariance matrix of `w` between bins: from the jackknife or
#'   bootstrap replicates, or diagonal for Poisson errors; `NULL` for
#'   `error = "none"`. It is a matrix of class `wtheta_cov`, with
#'   attributes `edges` (the bin edges, when the bins are adjacent) and
#'   `error`, so that [plot()][plot.wtheta_cov()] draws its correlation
#'   matrix against theta; `as.matrix()` and `[` give plain matrices.
#' @seealso [plot.wtheta_cov()], [wtheta()].
#' @examples
#' sim <- simulate_catalog(2000, seed = 1)
#' ran <- random_catalog(4000, seed = 2)
#' w <- wtheta(sim, ran, theta_bins(0.1, 5, n = 6, log = TRUE), threads = 1,
#'             error = "jackknife", n_patches = 8, seed = 1)
#' round(stats::cov2cor(as.matrix(wtheta_cov(w))), 2)
#' plot(wtheta_cov(w))
#' @export
wtheta_cov <- function(x) {
  if (!inherits(x, "wtheta")) {
    stop("`x` must be a result of wtheta(), not ", describe(x), ".",
         call. = FALSE)
  }
  cov <- attr(x, "cov", exact = TRUE)
  if (is.null(cov)) return(NULL)
  structure(cov, class = c("wtheta_cov", "matrix", "array"),
            edges = attr(x, "edges", exact = TRUE),
            error = attr(x, "error", exact = TRUE))
}

# w from the normalised counts (a list in the order DD, DR, RR or D1D2,
# D1R2, R1D2, R1R2; vectors, or matrices with a column per replicate).
# NA where a denominator is zero (with a warning when asked).
estimate_w <- function(n, estimator, is_cross, warn = FALSE) {
  if (!is_cross) {
    dd <- n[[1L]]
    dr <- n[[2L]]
    rr <- n[[3L]]
    denom <- switch(estimator, LS = rr, natural = rr, DP = dr, Hamilton = dr)
    w <- switch(estimator,
                LS = (dd - 2 * dr + rr) / rr,
                natural = dd / rr - 1,
                DP = dd / dr - 1,
                Hamilton = dd * rr / dr^2 - 1)
    what <- if (estimator %in% c("LS", "natural")) "RR" else "DR"
  } else {
    d1d2 <- n[[1L]]
    d1r2 <- n[[2L]]
    r1d2 <- n[[3L]]
    r1r2 <- n[[4L]]
    denom <- switch(estimator, LS = r1r2, natural = r1r2, DP = d1r2,
                    Hamilton = d1r2 * r1d2)
    w <- switch(estimator,
                LS = (d1d2 - d1r2 - r1d2 + r1r2) / r1r2,
                natural = d1d2 / r1r2 - 1,
                DP = d1d2 / d1r2 - 1,
                Hamilton = d1d2 * r1r2 / (d1r2 * r1d2) - 1)
    what <- switch(estimator, LS = "R1R2", natural = "R1R2", DP = "D1R2",
                   Hamilton = "D1R2 or R1D2")
  }
  zero <- !is.finite(denom) | denom == 0
  if (any(zero)) {
    w[zero] <- NA_real_
    if (warn) {
      bins <- which(zero)
      warning("w is NA in ", length(bins), " bin(s) where ", what,
              " is zero: bin", if (length(bins) > 1L) "s", " ",
              paste(bins[seq_len(min(10L, length(bins)))], collapse = ", "),
              if (length(bins) > 10L) ", ...",
              "; widen the bins or add randoms.", call. = FALSE)
    }
  }
  w
}

# how often each of P patches enters each replicate: a P x replicates
# matrix (jackknife: all but one; bootstrap: P draws with replacement)
patch_multiplicities <- function(error, P, n_boot, seed) {
  if (error == "jackknife") return(1 - diag(P))
  with_seed(bootstrap_seed(seed), {
    vapply(seq_len(n_boot), function(i)
      tabulate(sample.int(P, P, replace = TRUE), P), numeric(P))
  })
}

# the seed of the bootstrap draws: seed + 1, a stream apart from the one
# that seeded the k-means patches; past the largest integer, its negative
bootstrap_seed <- function(seed) {
  if (is.null(seed)) return(NULL)
  seed <- as.integer(seed)
  if (seed < .Machine$integer.max) seed + 1L else -.Machine$integer.max
}

# w of each jackknife (leave one patch out) or bootstrap (patches drawn with
# replacement) replicate: a bins x replicates matrix. Replicate r gives
# patch a the multiplicity m[a, r]; a pair between patches a and b then
# counts m_a m_b times, and the normalisers follow the same rule.
replicate_w <- function(pcs, estimator, is_cross, error, n_boot, seed,
                        weighted) {
  P <- dim(pcs[[1L]]$patch_counts)[1L]
  m <- patch_multiplicities(error, P, n_boot, seed)
  # mm[a + (b - 1) P, r] = m[a, r] m[b, r]
  mm <- if (error != "jackknife") m[rep(seq_len(P), P), , drop = FALSE] *
    m[rep(seq_len(P), each = P), , drop = FALSE]
  norm <- lapply(pcs, function(pc) {
    is_auto <- pc$type == "auto"
    arr <- if (weighted) pc$patch_weighted else pc$patch_counts
    nb <- dim(arr)[3L]
    if (error == "jackknife") {
      # leaving patch r out: all pairs, less row r and column r of S, plus
      # S[r, r] that both took away (m^T S m in O(P^2) a bin, in C)
      storage.mode(arr) <- "double"
      counts <- .Call(C_jackknife_counts, arr, is_auto)
    } else {
      flat <- matrix(arr, P * P, nb)
      counts <- crossprod(flat, mm)         # bins x replicates: m^T S m
      if (is_auto) {
        # S holds each pair between two patches at [a, b] and [b, a], the
        # pairs inside a patch once: add the diagonal again and halve
        diag_s <- flat[(seq_len(P) - 1L) * (P + 1L) + 1L, , drop = FALSE]
        counts <- (counts + crossprod(diag_s, m^2)) / 2
      }
    }
    s1 <- if (weighted) pc$patch_w1 else pc$patch_n1
    s1_sq <- if (weighted) pc$patch_w1_sq else pc$patch_n1
    s2 <- if (weighted) pc$patch_w2 else pc$patch_n2
    t1 <- colSums(m * s1)
    total <- if (!is_auto) t1 * colSums(m * s2) else if (pc$self_pairs)
      t1^2 else (t1^2 - colSums(m^2 * s1_sq)) / 2
    sweep(counts, 2L, total, "/")
  })
  estimate_w(norm, estimator, is_cross)
}
