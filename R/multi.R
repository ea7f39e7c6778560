#' Every auto- and cross-correlation of several samples, with one covariance
#'
#' For `K` samples (tomographic bins, say) estimates all `K (K + 1) / 2`
#' correlations w_ij, `i <= j`: the auto-correlations of each sample and
#' the cross-correlations of each pair. Each count is done once: the
#' randoms' RR once when the samples share randoms, each sample's count
#' against the randoms once (it serves as DR of its auto-correlation and as
#' D1R2 and R1D2 of its cross-correlations), and each pair of samples once.
#' Each w_ij is the separate [wtheta()] call
#' (`wtheta(data[[i]], random)` for `i == j`,
#' `wtheta(data[[i]], random, data2 = data[[j]])` otherwise, with
#' `random2 = random[[j]]` for randoms per sample) with the same patches
#' and options, errors included: identical, but for weighted counts
#' summed in another order when the samples are counted together (to
#' about 1e-15 relative).
#'
#' On the CPU the samples are counted together in one pass: one count of
#' their union, each point labelled with its sample, gives every count
#' D_i D_j (each pair of points into the histogram of its two samples),
#' and one count of the union against the randoms (labelled too when each
#' sample has its own) every D_i R. Each count is then split out as the
#' separate count would have been (its counts and patch arrays, or with
#' jackknife errors their margins, identical,
#' its weighted counts to rounding) and records `labelled = TRUE`; its
#' `elapsed`, `grid_plan_s` and `pairs_skipped` are those of the count
#' shared by all samples. The randoms' pairs are counted as before. This
#' is not done with `self_pairs = TRUE`, `mean_theta = TRUE`, PIP weights
#' (`bitwise`, `angular`), `distribute`, on the GPU, for one sample, when
#' the union's histograms (at most patches^2 x samples^2 of `n_bins + 2`
#' slots, 16 bytes a slot, 32 weighted) would take more than a quarter of the
#' memory available, or with `options(wtheta.labels = FALSE)` (see
#' [wtheta-package], section Labelled counts): each count is then made
#' on its own.
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
#' @param weights Per-object weights of the catalogs given unprepared:
#'   `NULL`, the name of a column (the catalogs that have it are weighted,
#'   the others have unit weights), or a list with elements `data` (a list
#'   named by sample, each element a numeric vector or a column name) and
#'   `random` (a vector or column name for shared randoms, else a list
#'   named by sample, as `data`); a catalog left out has unit weights.
#' @param patches For jackknife and bootstrap: `NULL` (the patches of the
#'   prepared catalogs that carry some, or else [sky_patches()] on the
#'   randoms), a result of [sky_patches()], or labels: the name of a column
#'   present in every catalog, or a list with elements `data` and `random`
#'   in the form of `weights`, labels for every catalog.
#' @param bitwise PIP bitwise weights (see [wtheta()], section PIP
#'   weights): `NULL`, the names of the bitwise weight columns (the
#'   catalogs that have them carry them, the others none), or a list in the
#'   form of `weights`, each element column names or a matrix of words.
#' @inheritParams wtheta
#' @return A data frame of class `c("wtheta_multi", "data.frame")`, long and
#'   tidy: columns `i`, `j` (the sample names, as factors in the order of
#'   `data`), `theta_lo`, `theta_hi`, `theta` (in the bins' unit, as in
#'   [wtheta()]), with `mean_theta = TRUE`
#'   `theta_mean` (of each correlation's DD or D1D2 pairs), `w` and `w_err`
#'   (unless `error = "none"`), one row per correlation and bin. Attributes:
#'   `samples` (the names), `entries` (the `wtheta` result of each
#'   correlation, named `"i-j"`), `cov` (the joint covariance; see
#'   [wtheta_cov()]), `replicates` (stacked), `pair_counts` (each count
#'   done, once), `estimator`, `error`, `self_pairs`, `weighted`,
#'   `n_patches`, `patches`, `seed` (as in [wtheta()]), `edges`,
#'   `theta_units`, `backend`, `threads`,
#'   `elapsed` and
#'   `footprint_check` (one per sample); with `bitwise` or `angular` also
#'   `pip`, as in [wtheta()], over every count (each entry has its own).
#' @seealso [wtheta()], [wtheta_cov()], [plot.wtheta_multi()],
#'   [prepare_catalog()].
#' @examples
#' ran <- random_catalog(6000, seed = 1)
#' z <- list(z1 = simulate_catalog(1500, seed = 2),
#'           z2 = simulate_catalog(1500, seed = 3))
#' b <- theta_bins(0.1, 5, n = 5, log = TRUE)
#' tomo <- wtheta_multi(z, ran, b, error = "jackknife", n_patches = 16,
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
                         mean_theta = FALSE, bitwise = NULL,
                         nrealizations = NULL, noffset = 1,
                         default_value = 0, angular = NULL) {
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
  weights <- multi_values(weights, samples, rk$keys, "weights")
  if (!inherits(patches, "wtheta_patches")) {
    patches <- multi_values(patches, samples, rk$keys, "patches")
  }
  if (!is.null(bitwise) && !is.character(bitwise)) {
    bitwise <- multi_values(bitwise, samples, rk$keys, "bitwise")
  }
  pip <- wtheta_pip(bitwise, nrealizations, noffset, default_value, angular,
                    users)
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
  # 3. checks, footprints (each sample against its randoms, once) and the
  # catalogs prepared, with one set of patches for everything
  call <- new_call("wtheta_multi", users, bins, columns, progress,
                   self_pairs, mean_theta, weights, patches, backend,
                   threads, devices, distribute, checkpoint, retries,
                   timeout, error = error, n_patches = n_patches,
                   n_boot = n_boot, seed = seed, fit_on = rki[1L],
                   randoms = unique(rki),
                   counts = unique_counts(do.call(c, specs)),
                   check_footprint = check_footprint,
                   footprints = lapply(seq_len(K), function(i)
                     c(dk[i], rki[i])),
                   check_catalogs = function(cats) {
                     for (nm in unique(c(dk, rki))) {
                       check_enough_points(cats[[nm]], nm, FALSE, self_pairs)
                     }
                   },
                   check_weights = function(w) {
                     for (r in seq_len(nrow(ij))) {
                       check_weight_totals(spec_weights(w, specs[[r]]),
                                           ij[r, 1L] != ij[r, 2L], self_pairs)
                     }
                   },
                   key = list(names(users)), pip = pip)
  # 4. every count once
  labels <- stats::setNames(c(paste0("data", seq_len(K)),
                              if (length(rk$keys) == 1L) "random" else
                                paste0("random", seq_len(K))),
                            c(dk, rk$keys))
  counted <- call_counts(call, labels,
                         samples = list(data = dk, random = rk$keys),
                         self_pairs = self_pairs)
  done <- counted$done
  fchecks <- counted$footprint
  # 5. each correlation by the one estimation path, with one set of draws
  m <- NULL
  if (call$resample) {
    P <- catalog_n_patches(call$cats[[1L]])
    m <- patch_multiplicities(error, P, n_boot, seed)
  }
  # a count is transposed, and its replicates reduced, once for the
  # correlations sharing it
  reduced <- new.env(parent = emptyenv())
  transposed <- new.env(parent = emptyenv())
  # every count has the call's bins: their names in each covariance, once
  bin_names <- format(bin_centres(done[[1L]]$edges)$theta)
  entries <- lapply(seq_len(nrow(ij)), function(r) {
    keys <- lapply(specs[[r]], function(s) paste(count_key(s), s$transposed))
    names(keys) <- vapply(specs[[r]], `[[`, "", "col")
    e <- wtheta_result(spec_counts(specs[[r]], done, transposed), estimator,
                       error, n_boot, seed, m, replicate_cache(reduced, keys),
                       bin_names, cov_later = call$resample)
    attr(e, "pip") <- pip_record(pip, attr(e, "pair_counts"))
    e
  })
  names(entries) <- paste0(samples[ij[, 1L]], "-", samples[ij[, 2L]])
  elapsed <- proc.time()[["elapsed"]] - call$start
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
  out <- multi_result(entries, ij, samples, error, done, fchecks,
                      call$start, bin_names)
  attr(out, "pip") <- pip_record(pip, attr(out, "pair_counts"))
  if (call$resample) {
    # the joint covariance of every correlation's bins, and the patches
    # (fitted on the first sample's randoms) against the largest angle
    warn_untrusted_cov(error, nrow(out), ncol(attr(out, "replicates")),
                       patch_size(call$cats[[rki[1L]]]), max(call$edges),
                       unit = "values",
                       of = paste0("(", nrow(ij), " correlation",
                                   if (nrow(ij) != 1L) "s", " x ",
                                   length(call$edges) - 1L, " bins)"))
  }
  out
}

# `weights` or `patches` of wtheta_multi() (NULL, a column name, or
# list(data = list(<sample> = ...), random = <one> or list(<sample> = ...)))
# as new_call() takes them: a column name, or a list named by the call's
# catalogs ("data$z1", "random" or "random$z1")
multi_values <- function(spec, samples, random_keys, arg) {
  if (is.null(spec) || is.character(spec) && length(spec) == 1L &&
      !is.na(spec)) {
    return(spec)
  }
  shared <- identical(random_keys, "random")
  form <- paste0("`", arg, "` must be NULL, the name of a column, or a list ",
                 "with elements `data` (a list named by sample: ",
                 paste(samples, collapse = ", "), ") and `random` (",
                 if (shared) "a vector or a column name" else
                   "a list named by sample", ")")
  if (!is.list(spec) || is.data.frame(spec) || is.null(names(spec)) ||
      !all(names(spec) %in% c("data", "random")) || anyDuplicated(names(spec))) {
    stop(form, ", not ", describe(spec), ".", call. = FALSE)
  }
  by_sample <- function(v, what) {
    if (is.null(v)) return(list())
    nm <- names(v)
    if (!is.list(v) || is.data.frame(v) || is.null(nm) ||
        !all(nm %in% samples) || anyDuplicated(nm)) {
      stop("`", arg, "$", what, "` must be a list named by sample (",
           paste(samples, collapse = ", "), "), not ", describe(v), ".",
           call. = FALSE)
    }
    stats::setNames(v, paste0(what, "$", nm))
  }
  out <- by_sample(spec$data, "data")
  if (!is.null(spec$random)) {
    out <- c(out, if (shared) list(random = spec$random) else
      by_sample(spec$random, "random"))
  }
  out
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

# the wtheta_multi object from its entries (in the order of ij); with
# resampled errors, the entries come without their covariance and `w_err`
# (wtheta_result(cov_later = TRUE)) and get their blocks of the joint
# covariance here, once (a covariance each and the joint one again cost
# 21 products more at six samples). bin_names: the names of each entry's
# bins in its covariance.
multi_result <- function(entries, ij, samples, error, done, fchecks, start,
                         bin_names) {
  # the entries' columns joined, a data frame once at the end (rbind() of
  # a data frame per entry took most of this function's 12 ms at 21)
  nr <- vapply(entries, nrow, 0L)
  # .subset2(): the entries' `[[.data.frame` method cost 0.2 ms a call
  col <- function(name) {
    unlist(lapply(entries, .subset2, name), use.names = FALSE)
  }
  f <- function(k) factor(samples[rep(k, nr)], levels = samples)
  out <- list(i = f(ij[, 1L]), j = f(ij[, 2L]),
              theta_lo = col("theta_lo"), theta_hi = col("theta_hi"),
              theta = col("theta"))
  if (!is.null(entries[[1L]]$theta_mean)) out$theta_mean <- col("theta_mean")
  out$w <- col("w")
  first <- entries[[1L]]
  reps <- NULL
  cov <- NULL
  if (error %in% c("jackknife", "bootstrap")) {
    reps <- do.call(rbind, lapply(entries, attr, "replicates"))
    cov <- replicate_cov(reps, error, attr(first, "threads"))
    end <- cumsum(nr)
    for (r in seq_along(entries)) {
      k <- (end[r] - nr[r] + 1L):end[r]
      block <- cov[k, k, drop = FALSE]
      dimnames(block) <- list(bin_names, bin_names)
      entries[[r]] <- with_cov_block(entries[[r]], block)
    }
  }
  if (!is.null(entries[[1L]]$w_err)) out$w_err <- col("w_err")
  if (error == "poisson") cov <- diag(out$w_err^2, sum(nr))
  if (!is.null(cov)) {
    # the entries' bins, as each entry's covariance names them
    nm <- paste(out$i, out$j, rep(bin_names, length(entries)))
    dimnames(cov) <- list(nm, nm)
  }
  structure(out, class = c("wtheta_multi", "data.frame"),
            row.names = c(NA_integer_, -sum(nr)), samples = samples,
            entries = entries, cov = cov, replicates = reps,
            pair_counts = done,
            estimator = attr(first, "estimator"), error = error,
            self_pairs = attr(first, "self_pairs"),
            weighted = attr(first, "weighted"),
            n_patches = attr(first, "n_patches"),
            patches = attr(first, "patches"), seed = attr(first, "seed"),
            edges = attr(first, "edges"),
            theta_units = attr(first, "theta_units"),
            backend = attr(first, "backend"),
            threads = attr(first, "threads"),
            elapsed = proc.time()[["elapsed"]] - start,
            footprint_check = fchecks)
}

# Labelled counts (issue 33). On the CPU, wtheta_multi() counts every
# D_s D_t in one auto count of the samples' union (the samples' points
# concatenated in order, grouped by patch, each carrying its sample's
# label) and every D_s R in one cross count of the union and the randoms
# (the randoms labelled too when each sample has its own), instead of a
# count each. The engine counts a pair of labels (s, t) of a task with
# histogram `out` into histogram (out La + s) Lb + t (0-based), with the
# pairs (s, t) and (t, s) of an auto job's diagonal tasks folded into
# (s, t), s < t, and the slots beyond the last edge filled from the
# labels' totals (src/wt.h). C splits such a result into what it returns
# for each separate count (wtr_label_parts() in src/r/results.c);
# labelled_part() picks one, and labelled_pair_counts() makes the
# separate count's pair_counts object of it.

# whether run_counts_labelled() counts a call's samples: the CPU, here (not
# distributed, so no checkpoint), no PIP, no mean_theta, no self pairs,
# two samples or more, all weighted or none, the labelled count's
# histograms within a quarter of the memory available (labelled_bytes()),
# and options(wtheta.labels) TRUE (the default; see ?wtheta-package,
# "Labelled counts")
use_labels <- function(how, cats, data_keys, random_keys, self_pairs,
                       n_bins, available = memory_available()) {
  opt <- getOption("wtheta.labels", TRUE)
  if (!isTRUE(opt) && !isFALSE(opt)) {
    stop("option `wtheta.labels` must be TRUE or FALSE, not ",
         describe(opt), ".", call. = FALSE)
  }
  weighted <- vapply(cats[c(data_keys, random_keys)],
                     function(x) !is.null(x$weights), TRUE)
  need <- labelled_bytes(length(data_keys),
                         catalog_n_patches(cats[[data_keys[1L]]]), n_bins,
                         any(weighted))
  opt && length(data_keys) > 1L && !is.null(how$run) &&
    identical(how$run$backend, "cpu") && is.null(how$pip) &&
    !isTRUE(how$mean_theta) && !isTRUE(self_pairs) &&
    (all(weighted) || !any(weighted)) &&
    (is.na(available) || need <= available / 4)
}

# the bytes of a labelled auto count's histograms of S samples, P patches
# (0: none) and n_bins bins: (P^2 S^2 histograms of n_bins + 2 slots) the
# engine's 64-bit counts and R's double copy, as much again for weight
# sums; the separate counts split from them come on top (their patch
# arrays, which check_call_memory() counts)
labelled_bytes <- function(S, P, n_bins, weighted) {
  max(1, P)^2 * S^2 * (n_bins + 2) * 16 * (1 + weighted)
}

# From `parts`, the C result of a labelled count with La x Lb labels (a
# list of what C returns for each separate count: label_parts() in
# src/r/results.c, which says how they are made of the labelled
# histograms), the part of the count D_s D_t (s, t 0-based): `kind`
# "auto" is D_s D_s and "pair" D_s D_t (s < t), from the union's auto
# count (parts s <= t, s outer); "cross" D_s B_t from the union's cross
# count (parts (s, t), s outer; t = 0 when B is unlabelled). Its gpu_ms,
# pairs_skipped and plan_s are the labelled count's.
labelled_part <- function(parts, La, Lb, s, t, kind) {
  kind <- match.arg(kind, c("auto", "pair", "cross"))
  if (kind == "auto") t <- s
  if (kind == "pair" && !(s < t)) {
    stop("wtheta internal: a labelled pair needs s < t", call. = FALSE)
  }
  is_auto <- kind != "cross"
  n <- if (is_auto) La * (La + 1) / 2 else La * Lb
  if (!is.list(parts) || length(parts) != n || (is_auto && La != Lb) ||
      s < 0 || s >= La || t < 0 || t >= Lb) {
    stop("wtheta internal: no part (", s, ", ", t, ") in a labelled count ",
         "of ", length(parts), " parts (", La, " x ", Lb, " labels)",
         call. = FALSE)
  }
  # auto: the rows s' < s hold La - s' parts each
  k <- if (is_auto) s * La - s * (s - 1) / 2 + (t - s) else s * Lb + t
  parts[[k + 1L]]
}

# The pair_counts object of the separate count of catalogs ca and cb
# (prepared; cb NULL for auto pairs) from its part of a labelled count
# (labelled_part()), as count_pairs() and count_catalogs() make it from
# a count of their own: the points, weights, patches and fingerprints
# are those of ca and cb. Its `elapsed` (the labelled count's seconds,
# given), `grid_plan_s` and `pairs_skipped` are those of the labelled
# count, which counted this and the other samples' pairs together, and
# are the same in every count made of it; `labelled` is TRUE. fa, fb: the
# fingerprints of ca and cb, when made already.
labelled_pair_counts <- function(part, ca, cb, edges, run, threads,
                                 elapsed,
                                 fa = catalog_fingerprint(ca$xyz, ca$handle,
                                                          threads),
                                 fb = if (!is.null(cb))
                                   catalog_fingerprint(cb$xyz, cb$handle,
                                                       threads)) {
  pa <- ca$patch
  pb <- if (!is.null(cb)) cb$patch
  P <- catalog_n_patches(ca)
  pc <- count_result(part, ca$xyz, cb$xyz, edges, FALSE, run, threads,
                     FALSE, ca$weights, cb$weights, pa, pb,
                     attr(pa, "ranges"),
                     if (!is.null(cb)) attr(pb, "ranges") else
                       attr(pa, "ranges"),
                     P, FALSE, proc.time()[["elapsed"]])
  pc$elapsed <- elapsed
  pc$gpu_idle_s <- gpu_idle(elapsed, pc$gpu_ms, run$devices)
  pc <- pip_result(pc, NULL, ca$weights, cb$weights, NULL, NULL,
                   is.null(cb), FALSE, pa, pb, P)
  pc <- add_fingerprints(pc, fa, fb)
  if (!is.null(pa)) pc$patches <- ca$patches
  pc$labelled <- TRUE
  pc
}

# the union of prepared catalogs `cats` (all weighted or none, with the
# same patches or none) for a labelled count: their points concatenated
# in order, then grouped by patch (stably: within a patch, the catalogs in
# order), with weights, patch numbers (and their ranges) and `lab`, the
# number of each point's catalog (1-based); a handle of its own, so that
# the union's grid serves both its labelled counts
labelled_union <- function(cats) {
  n <- vapply(cats, function(x) nrow(x$xyz), 0L)
  xyz <- do.call(rbind, lapply(cats, `[[`, "xyz"))
  lab <- rep(seq_along(cats), n)
  w <- if (!is.null(cats[[1L]]$weights)) {
    unlist(lapply(cats, function(x) as.double(x$weights)), use.names = FALSE)
  }
  p <- NULL
  P <- catalog_n_patches(cats[[1L]])
  if (P > 0L) {
    p <- unlist(lapply(cats, function(x) as.integer(x$patch)),
                use.names = FALSE)
    o <- order(p, method = "radix")
    xyz <- xyz[o, , drop = FALSE]
    lab <- lab[o]
    if (!is.null(w)) w <- w[o]
    p <- p[o]
    end <- cumsum(tabulate(p, P))
    attr(p, "ranges") <- cbind(start = c(0, end[-P]), end = end)
  }
  list(xyz = xyz, weights = w, patch = p, lab = lab, n_patches = P,
       handle = new_catalog_handle())
}
