#' Every auto- and cross-correlation of several samples, with one covariance
#'
#' For `K` samples (tomographic bins, say) estimates all `K (K + 1) / 2`
#' correlations w_ij, `i <= j`: the auto-correlations of each sample and
#' the cross-correlations of each pair. Each count is done once: the
#' randoms' RR once when the samples share randoms, each sample's count
#' against the randoms once (it serves as DR of its auto-correlation and as
#' D1R2 and R1D2 of its cross-correlations), and each pair of samples once.
#' Each w_ij is identical to the separate [wtheta()] call
#' (`wtheta(data[[i]], random)` for `i == j`,
#' `wtheta(data[[i]], random, data2 = data[[j]])` otherwise, with
#' `random2 = random[[j]]` for randoms per sample) with the same patches
#' and options, errors included.
#'
#' With jackknife or bootstrap errors every correlation is resampled with
#' one set of patches (and, for bootstrap, one set of draws), so the
#' replicates of all correlations are stacked into one vector per
#' replicate, and [wtheta_cov()] gives the joint covariance of all
#' `K (K + 1) / 2 x n_bins` values (as TreeCorr's `estimate_multi_cov()`
#' does). The patches are made by [sky_patches()] on `random` (the first
#' sample's randoms when each has its own), unless given as `patches` or
#' carried by prepared catalogs ([prepare_catalog()]).
#'
#' With `self_pairs = TRUE` the auto-correlations count self pairs; the
#' cross-correlations count cross pairs, with RR then counted a second
#' time without self pairs.
#'
#' @param data A named list of `K` catalogs (data frames or prepared
#'   catalogs), the names distinct and non-empty.
#' @param random Randoms: one catalog shared by all samples, or a list of
#'   `K` catalogs, one per sample (in the order of `data`, or named as
#'   `data`).
#' @param weights `NULL` or the name of a column: the catalogs that have it
#'   are weighted, the others have unit weights.
#' @param patches For jackknife and bootstrap: `NULL` or a result of
#'   [sky_patches()].
#' @inheritParams wtheta
#' @return A data frame of class `c("wtheta_multi", "data.frame")`, long and
#'   tidy: columns `i`, `j` (the sample names, as factors in the order of
#'   `data`), `theta_lo`, `theta_hi`, `theta`, with `mean_theta = TRUE`
#'   `theta_mean` (of each correlation's DD or D1D2 pairs), `w` and `w_err`
#'   (unless `error = "none"`), one row per correlation and bin. Attributes:
#'   `samples` (the names), `entries` (the `wtheta` result of each
#'   correlation, named `"i-j"`), `cov` (the joint covariance; see
#'   [wtheta_cov()]), `replicates` (stacked), `pair_counts` (each count
#'   done, once), `estimator`, `error`, `self_pairs`, `weighted`,
#'   `n_patches`, `patches`, `edges`, `backend`, `threads`, `elapsed` and
#'   `footprint_check` (one per sample).
#' @seealso [wtheta()], [wtheta_cov()], [plot.wtheta_multi()],
#'   [prepare_catalog()].
#' @examples
#' ran <- random_catalog(6000, seed = 1)
#' z <- list(z1 = simulate_catalog(1500, seed = 2),
#'           z2 = simulate_catalog(1500, seed = 3))
#' b <- theta_bins(0.1, 5, n = 5, log = TRUE)
#' tomo <- wtheta_multi(z, ran, b, error = "jackknife", n_patches = 8,
#'                      seed = 1, threads = 1)
#' tomo
#' dim(wtheta_cov(tomo))
#' plot(tomo)
#' @export
wtheta_multi <- function(data, random, bins,
                         estimator = c("LS", "natural", "DP", "Hamilton"),
                         self_pairs = FALSE, backend = c("auto", "cpu", "cuda"),
                         threads = NULL, devices = NULL,
                         columns = c("ra", "dec"), progress = NULL,
                         weights = NULL,
                         error = c("poisson", "jackknife", "bootstrap",
                                   "none"),
                         patches = NULL, n_patches = 20, n_boot = 500,
                         seed = NULL, distribute = FALSE, checkpoint = NULL,
                         retries = 1, timeout = NULL, check_footprint = TRUE,
                         mean_theta = FALSE) {
  start <- proc.time()[["elapsed"]]
  progress <- progress_or_default(progress)
  estimator <- match_estimator(estimator)
  error <- match_error(error)
  check_flag(self_pairs, "self_pairs")
  # 1. the samples and their randoms, by name: "data$z1", "random" (or
  # "random$z1" per sample)
  samples <- multi_samples(data)
  rk <- multi_randoms(random, samples)
  users <- c(stats::setNames(data, paste0("data$", samples)),
             stats::setNames(rk$randoms, rk$keys))
  dk <- paste0("data$", samples)
  rki <- if (length(rk$keys) == 1L) rep(rk$keys, length(samples)) else
    rk$keys
  if (!is.null(weights) && !(is.character(weights) &&
                              length(weights) == 1L && !is.na(weights))) {
    stop("`weights` must be NULL or the name of a column, not ",
         describe(weights), ".", call. = FALSE)
  }
  if (!is.null(patches) && !inherits(patches, "wtheta_patches")) {
    stop("`patches` must be NULL or a result of sky_patches(), not ",
         describe(patches), "; give labels to prepare_catalog().",
         call. = FALSE)
  }
  cc <- checked_catalogs(users, columns)
  edges <- bins_edges(bins)
  for (nm in unique(c(dk, rki))) {
    check_enough_points(cc$cats[[nm]], nm, FALSE, self_pairs)
  }
  w <- call_weights(weights, users, cc$prepared)
  check_weight_products(w)
  # 2. which correlations, and the counts each needs
  K <- length(samples)
  ij <- which(upper.tri(diag(K), diag = TRUE), arr.ind = TRUE)
  ij <- ij[order(ij[, 1L], ij[, 2L]), , drop = FALSE]
  specs <- lapply(seq_len(nrow(ij)), function(r) {
    i <- ij[r, 1L]
    j <- ij[r, 2L]
    if (i == j) correlation_spec(dk[i], rki[i], self_pairs = self_pairs) else
      correlation_spec(dk[i], rki[i], dk[j], rki[j])
  })
  for (r in seq_len(nrow(ij))) {
    check_weight_totals(spec_weights(w, specs[[r]]), ij[r, 1L] != ij[r, 2L],
                        self_pairs)
  }
  todo <- unique_counts(do.call(c, specs))
  resample <- check_error_args(error, patches, n_patches, n_boot, seed)
  check_flag(check_footprint, "check_footprint")
  check_flag(mean_theta, "mean_theta")
  how <- plan_counting(backend, devices, threads, distribute, checkpoint,
                       retries, timeout, mean_theta)
  check_call_memory(cc$cats, w, resample, patches, n_patches, error, n_boot,
                    length(edges) - 1L, n_counts = length(todo))
  threads <- threads_or_default(threads)
  # 3. footprints, each sample against its randoms, once
  fp <- lapply(seq_len(K), function(i) c(dk[i], rki[i]))
  # (run_counts() runs the check while the GPU counts, or first)
  fchecks <- NULL
  check_fp <- function() {
    if (check_footprint) fchecks <<- footprint_checks(cc$cats, fp)
  }
  # 4. the catalogs prepared, with one set of patches for everything
  pat <- if (resample) call_patches(patches, users, cc$cats, cc$prepared,
                                    n_patches, seed, threads, rki[1L])
  cats <- call_catalogs(cc$cats, cc$prepared, w, pat, threads)
  on.exit(release_catalogs(cats), add = TRUE)
  if (resample) check_random_patches(cats[unique(rki)], pat)
  # 5. every count once
  progress <- progress_start(progress, length(todo), environment())
  how <- checkpoint_open(how, "wtheta_multi",
                         checkpoint_key(cats, edges, self_pairs, names(cats),
                                        mean_theta = if (mean_theta) TRUE))
  labels <- stats::setNames(c(paste0("data", seq_len(K)),
                              if (length(rk$keys) == 1L) "random" else
                                paste0("random", seq_len(K))),
                            c(dk, rk$keys))
  done <- run_counts(how, cats, todo, edges, threads, progress, labels,
                     meanwhile = check_fp)
  # 6. each correlation by the one estimation path, with one set of draws
  m <- NULL
  if (resample) {
    P <- catalog_n_patches(cats[[1L]])
    m <- patch_multiplicities(error, P, n_boot, seed)
  }
  entries <- lapply(seq_len(nrow(ij)), function(r) {
    wtheta_result(spec_counts(specs[[r]], done), estimator, error, n_boot,
                  seed, m)
  })
  names(entries) <- paste0(samples[ij[, 1L]], "-", samples[ij[, 2L]])
  elapsed <- proc.time()[["elapsed"]] - start
  for (r in seq_len(nrow(ij))) {
    i <- ij[r, 1L]
    j <- ij[r, 2L]
    fc <- if (check_footprint) {
      if (i == j) list("data/random" = fchecks[[i]]) else
        stats::setNames(fchecks[c(i, j)],
                        c("data/random", if (length(rk$keys) == 1L)
                          "data2/random" else "data2/random2"))
    }
    attr(entries[[r]], "elapsed") <- elapsed
    attr(entries[[r]], "footprint_check") <- fc
  }
  multi_result(entries, ij, samples, error, done, fchecks, start)
}

# `data` of wtheta_multi(): a named list of catalogs; its names
multi_samples <- function(data) {
  if (!is.list(data) || is.data.frame(data) ||
      inherits(data, "wtheta_prepared") || !length(data)) {
    stop("`data` must be a named list of catalogs (one per sample), not ",
         describe(data), ".", call. = FALSE)
  }
  nm <- names(data)
  if (is.null(nm) || anyNA(nm) || any(!nzchar(nm))) {
    stop("`data` must be a named list: every sample needs a name ",
         "(list(z1 = ..., z2 = ...)).", call. = FALSE)
  }
  if (anyDuplicated(nm)) {
    stop("`data` has two samples named ", dQuote(nm[anyDuplicated(nm)],
                                                  FALSE),
         "; the names must be distinct.", call. = FALSE)
  }
  nm
}

# `random` of wtheta_multi(): one catalog, or a list of one per sample;
# list(randoms, keys)
multi_randoms <- function(random, samples) {
  one <- is.data.frame(random) || is.matrix(random) ||
    inherits(random, "wtheta_prepared") || !is.list(random)
  if (one) return(list(randoms = list(random), keys = "random"))
  if (length(random) != length(samples)) {
    stop("`random` must be one catalog or a list of one per sample (",
         length(samples), "), not a list of ", length(random), ".",
         call. = FALSE)
  }
  nm <- names(random)
  if (!is.null(nm)) {
    if (!setequal(nm, samples) || anyDuplicated(nm)) {
      stop("`random` is named, but not by the samples of `data` (",
           paste(samples, collapse = ", "), ").", call. = FALSE)
    }
    random <- random[samples]
  }
  list(randoms = unname(random), keys = paste0("random$", samples))
}

# the weights of one correlation's catalogs, named as check_weight_totals()
# reads them
spec_weights <- function(w, spec) {
  if (is.null(w)) return(NULL)
  if (spec[[1L]]$col == "DD") {
    return(list(data = w[[spec[[1L]]$x]], random = w[[spec[[3L]]$x]]))
  }
  out <- list(data = w[[spec[[1L]]$x]], random = w[[spec[[4L]]$x]],
              data2 = w[[spec[[1L]]$y]])
  if (!is.null(spec[[4L]]$y)) out$random2 <- w[[spec[[4L]]$y]]
  out
}

# the wtheta_multi object from its entries (in the order of ij)
multi_result <- function(entries, ij, samples, error, done, fchecks, start) {
  f <- function(k) factor(samples[k], levels = samples)
  rows <- lapply(seq_along(entries), function(r) {
    e <- entries[[r]]
    d <- data.frame(i = f(rep(ij[r, 1L], nrow(e))),
                    j = f(rep(ij[r, 2L], nrow(e))),
                    theta_lo = e$theta_lo, theta_hi = e$theta_hi,
                    theta = e$theta)
    if (!is.null(e$theta_mean)) d$theta_mean <- e$theta_mean
    d$w <- e$w
    if (!is.null(e$w_err)) d$w_err <- e$w_err
    d
  })
  out <- do.call(rbind, rows)
  rownames(out) <- NULL
  first <- entries[[1L]]
  reps <- NULL
  cov <- NULL
  if (error %in% c("jackknife", "bootstrap")) {
    reps <- do.call(rbind, lapply(entries, attr, "replicates"))
    cov <- replicate_cov(reps, error)
  } else if (error == "poisson") {
    cov <- diag(out$w_err^2, nrow(out))
  }
  if (!is.null(cov)) {
    nm <- paste(out$i, out$j, format(out$theta))
    dimnames(cov) <- list(nm, nm)
  }
  structure(out, class = c("wtheta_multi", "data.frame"),
            samples = samples, entries = entries, cov = cov,
            replicates = reps, pair_counts = done,
            estimator = attr(first, "estimator"), error = error,
            self_pairs = attr(first, "self_pairs"),
            weighted = attr(first, "weighted"),
            n_patches = attr(first, "n_patches"),
            patches = attr(first, "patches"),
            edges = attr(first, "edges"), backend = attr(first, "backend"),
            threads = attr(first, "threads"),
            elapsed = proc.time()[["elapsed"]] - start,
            footprint_check = fchecks)
}

#' Methods for wtheta_multi results
#'
#' `print()` shows the samples, the correlations and the first rows;
#' `as.data.frame()` gives the plain long data frame (columns `i`, `j`,
#' `theta_lo`, `theta_hi`, `theta`, `w`, `w_err`). `[` that selects whole
#' correlations, or the same bins of each correlation it keeps (rows in
#' their order, none repeated, columns `i`, `j`, `theta_lo`, `theta_hi`,
#' `theta` and `w` kept), stays a `wtheta_multi` result: the covariance
#' block and replicate rows of the rows kept, the entries of the
#' correlations kept (each subset as by `[` on a [wtheta()] result), the
#' samples that still appear (the factor levels follow), the bin edges when
#' the bins kept are adjacent, and no `pair_counts` (they describe every
#' bin). Any other subset is the plain data frame. `plot()` draws a triangle of panels, w_ij against theta with its
#' errors, sample `i` down and `j` across; `autoplot()` draws the same with
#' ggplot2 (the panels below the diagonal stay empty).
#'
#' @param x,object A result of [wtheta_multi()].
#' @param n Rows to print.
#' @param log `"x"`, `""` or `NULL` (the default: a log theta axis for log
#'   bins).
#' @param errors Draw error bars.
#' @param row.names,optional Ignored (for the generic).
#' @param ... Passed to [graphics::plot()] for each panel (`plot()`);
#'   ignored otherwise.
#' @return `plot()`: `x`, invisibly; `autoplot()`: a ggplot object.
#' @seealso [wtheta_multi()], [wtheta_cov()].
#' @examples
#' ran <- random_catalog(4000, seed = 1)
#' z <- list(a = simulate_catalog(1000, seed = 2),
#'           b = simulate_catalog(1000, seed = 3))
#' tomo <- wtheta_multi(z, ran, theta_bins(0.1, 5, n = 5, log = TRUE),
#'                      threads = 1)
#' head(as.data.frame(tomo))
#' plot(tomo)
#' @name wtheta_multi-methods
NULL

#' @rdname wtheta_multi-methods
#' @export
print.wtheta_multi <- function(x, n = 10L, ...) {
  a <- attributes(x)
  s <- a$samples
  K <- length(s)
  cat("<wtheta_multi> ", K, " sample", if (K != 1L) "s", " (",
      paste(s, collapse = ", "), "): ", length(a$entries), " correlation",
      if (length(a$entries) != 1L) "s", ", ", length(a$edges) - 1L,
      " bins\n", sep = "")
  cat(estimator_name(a$estimator), "; ", a$error, " errors",
      if (a$error %in% c("jackknife", "bootstrap"))
        paste0(" (", a$n_patches, " patches, joint covariance)"),
      if (!is.null(a$source)) paste0("; read from a ", a$source) else
        paste0("; ", length(a$pair_counts), " counts in ",
               format(signif(a$elapsed, 3)), " s"), "\n", sep = "")
  d <- as.data.frame(x)
  print(utils::head(d, n), row.names = FALSE, digits = 5)
  if (nrow(d) > n) cat("  ... ", nrow(d) - n, " more rows\n", sep = "")
  invisible(x)
}

#' @rdname wtheta_multi-methods
#' @export
as.data.frame.wtheta_multi <- function(x, row.names = NULL, optional = FALSE,
                                       ...) {
  cols <- unclass(x)
  structure(cols[names(x)], class = "data.frame",
            row.names = c(NA_integer_, -length(cols[[1L]])))
}

# `[.wtheta_multi`: R/multi_subset.R

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
  edges[1L] > 0 && length(edges) > 2L && is_log_spaced(edges)
}

#' @rdname wtheta_multi-methods
#' @export
plot.wtheta_multi <- function(x, log = NULL, errors = TRUE, ...) {
  check_flag(errors, "errors")
  s <- attr(x, "samples")
  K <- length(s)
  log_x <- multi_log(attr(x, "edges"), log)
  d <- as.data.frame(x)
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
      ok <- is.finite(e$w) & (!log_x | e$theta > 0)
      err <- if (errors && !is.null(e$w_err)) e$w_err else
        rep(NA_real_, nrow(e))
      lo <- e$w - err
      hi <- e$w + err
      yr <- range(c(e$w[ok], lo[ok & is.finite(lo)], hi[ok & is.finite(hi)]),
                  finite = TRUE)
      if (!all(is.finite(yr))) yr <- c(-1, 1)
      graphics::plot(e$theta[ok], e$w[ok], log = if (log_x) "x" else "",
                     ylim = yr, pch = 19, cex = 0.6,
                     xlab = expression(theta ~ "(degrees)"),
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
#' @exportS3Method ggplot2::autoplot
autoplot.wtheta_multi <- function(object, log = NULL, errors = TRUE, ...) {
  if (!requireNamespace("ggplot2", quietly = TRUE)) {
    stop("autoplot() needs the ggplot2 package; plot() works without it.",
         call. = FALSE)
  }
  check_flag(errors, "errors")
  log_x <- multi_log(attr(object, "edges"), log)
  d <- as.data.frame(object)
  d <- d[is.finite(d$w) & (!log_x | d$theta > 0), , drop = FALSE]
  has_err <- errors && !is.null(d$w_err)
  d$lo <- if (has_err) d$w - d$w_err else NA_real_
  d$hi <- if (has_err) d$w + d$w_err else NA_real_
  .data <- ggplot2::.data
  p <- ggplot2::ggplot(d, ggplot2::aes(x = .data$theta, y = .data$w)) +
    ggplot2::geom_hline(yintercept = 0, colour = "grey70",
                        linetype = "dashed") +
    ggplot2::geom_point(size = 1) +
    ggplot2::facet_grid(rows = ggplot2::vars(.data$i),
                        cols = ggplot2::vars(.data$j), drop = FALSE) +
    ggplot2::labs(x = expression(theta ~ "(degrees)"), y = "w",
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
