#' Estimate the angular two-point correlation function
#'
#' Estimates w(theta), the angular two-point correlation function of a
#' catalog of positions on the sky (or the cross-correlation of two), in
#' the given bins of angle, from exact counts of its pairs against random
#' points on the same footprint: Landy-Szalay by default (section
#' Estimators). Its errors are Poisson (shot noise only, the default),
#' jackknife or bootstrap over patches of the sky, with the covariance
#' between bins ([wtheta_cov()]; section Errors).
#'
#' It counts data-data (DD), data-random (DR) and random-random (RR) pairs
#' with [pair_counts()], on the GPU when one is usable, and combines the
#' normalised counts `dd = DD / N_DD`, `dr = DR / N_DR`, `rr = RR / N_RR`
#' into w(theta). The result is a data frame, one row per bin, that
#' records how it was made (see Value).
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
#'     patches (see [pair_counts()]), so errors need no count of their
#'     own; the "Measured figures" article says what they cost.}
#'   \item{`"bootstrap"`}{`n_boot` resamplings of the patches with
#'     replacement; a pair between patches `a` and `b` counts
#'     `m_a m_b` times, `m` the number of times each patch was drawn (pairs
#'     within a patch `m_a^2` times), and the normalisers likewise. The
#'     covariance is that of the resampled w. Bootstrap over patches tends
#'     to overestimate errors somewhat; jackknife is the usual choice.}
#'   \item{`"none"`}{No error column.}
#' }
#' Patches and bootstrap draws are seeded by `seed` (1 unless given), so a
#' call gives the same errors every time; the seed is recorded in the
#' result. Use more patches than bins whose covariance you need (many more
#' to invert it: see the Hartlap factor in [wtheta_cov()]), and patches
#' larger than the largest angle: `wtheta()` warns when the covariance
#' must be singular (no more patches or draws than bins) and when the
#' patches' typical size is below the largest bin edge.
#'
#' @section PIP weights: Spectroscopic surveys give fibres to only some of
#' their targets; pairwise inverse probability (PIP) weights (Bianchi &
#' Percival 2017) correct the counts for it, with pycorr's definitions.
#' Each object of the fibre-assigned sample carries bitwise weights
#' (`bitwise`): one bit per realisation of the fibre assignment, set where
#' the object got a fibre in it. A DD pair then weighs
#' `w_i w_j nrealizations / (noffset + popcount(b_i & b_j))` (or
#' `default_value` where that denominator is 0), the inverse of the
#' probability that both objects got fibres; DR and RD pairs, whose
#' randoms carry no bits, take the data object's individual inverse
#' probability `nrealizations / (noffset + popcount(b_i))`. The normaliser
#' of DD is pycorr's default: the expected PIP weight of every pair of the
#' sample for independent selections, from the objects' popcounts (eq. 22
#' of Mohammad et al. 2020; see [pair_counts()]). `nrealizations` counts
#' the observed realisation too: its default is the number of bits plus
#' one, the observed realisation being implied (each object of the sample
#' got a fibre in it) and not stored; `noffset = 1` (the default) is that
#' implied bit, `noffset = 0` with `nrealizations` the number of bits
#' gives the zero-truncated estimator. Pairs that no realisation could
#' observe (closer than a fibre-collision radius, say) have no
#' probability to invert; angular upweights (`angular`, made by
#' [angular_upweights()]) multiply the DD and DR pairs at each separation
#' by the ratio of the parent sample's pairs to the PIP-weighted ones
#' there (RR takes no upweight). [simulate_fibre_assignment()] makes
#' bitwise weights for examples, and the article "Error bars, weights and
#' cross-correlations" shows both corrections on one.
#'
#' @param data The galaxy catalog (see [pair_counts()] for the form), or a
#'   catalog prepared by [prepare_catalog()].
#' @param random Random points on the same footprint, as a catalog or
#'   prepared: a random catalog prepared once serves many calls.
#' @param bins Bin edges in degrees, for example from [theta_bins()]. Bins
#'   made with `theta_bins(units = )` (arcmin, arcsec or radians) give the
#'   theta columns and the `edges` of the result in that unit.
#' @param estimator One of `"LS"`, `"natural"`, `"DP"`, `"Hamilton"`.
#' @param weights Per-object weights of the catalogs given unprepared
#'   (prepared ones keep theirs): `NULL`, the name of a column (the
#'   catalogs without that column, say randoms, have unit weights; at least
#'   one must have it), or a list with elements named `data`, `random`
#'   (and `data2`, `random2`), each a numeric vector or a column name; a
#'   catalog left out of the list has unit weights.
#' @param error `"poisson"` (the default), `"jackknife"`, `"bootstrap"` or
#'   `"none"`; see Errors.
#' @param patches For jackknife and bootstrap: `NULL` (the patches of the
#'   prepared catalogs that carry some, or else patches made by
#'   [sky_patches()] on `random`), a result of [sky_patches()], or labels:
#'   the name of a column present in every catalog, or a list with elements
#'   `data`, `random` (and `data2`, `random2`), each labels or a column name.
#' @param n_patches Number of patches made when `patches` is `NULL`.
#' @param n_boot Number of bootstrap resamplings.
#' @param seed A whole number (an R integer other than `NA`) seeding the
#'   patches made by k-means and the bootstrap draws (the global random
#'   state is left as it was). `NULL` (the default) uses the seed 1, so
#'   that errors are the same from one call to the next; give another seed
#'   to see how much they depend on the division into patches. A [wtheta()]
#'   result records the seed used as attribute `seed`.
#' @param data2,random2 A second sample and its randoms, for the
#'   cross-correlation of `data` with `data2`.
#' @param check_footprint `TRUE` (the default): before counting, run
#'   [footprint_check()] on `data` against `random` (and `data2` against
#'   its randoms) and warn, naming the largest discrepancy and where it
#'   is, when they do not seem to share a footprint. On the classic
#'   catalogs (10^5 points each) it takes a few milliseconds (5.3 ms on
#'   one thread of a small 2-core machine; `bench/host.R` times it),
#'   comparable with the GPU's counts; with more points it is a small
#'   fraction of the counting time. `FALSE` skips it.
#' @param mean_theta `TRUE` adds a column `theta_mean`: the pair-weighted
#'   mean separation of the DD (D1D2) pairs in each bin, in the bins' unit, `NA`
#'   for a bin without pairs (see [pair_counts()], which says how it is
#'   computed and what it costs). Only DD (D1D2) sums the angles; DR and
#'   RR are counted as without it. With jackknife or bootstrap errors it
#'   is the mean of the full sample: no replicate of it is made. `FALSE`
#'   (the default) leaves it out.
#' @param bitwise PIP bitwise weights (section PIP weights): `NULL` (none,
#'   the default), the names of the bitwise weight columns (looked up in
#'   every catalog; those without them, the randoms typically, have none),
#'   a matrix of `data`'s words, or a list with elements named `data`,
#'   `random` (and `data2`, `random2`), each column names or a matrix.
#'   Each column is a word of 32 bits held as whole numbers from 0 to
#'   2^32 - 1, or of 64 as `bit64::integer64`. A catalog prepared by
#'   [prepare_catalog()] with `bitwise` carries its own words, which count
#'   without this argument.
#' @param nrealizations The number of realisations, the observed one
#'   included: `NULL` (the default) for the number of bits plus one.
#' @param noffset Added to the popcount of a pair's bits: 1 (the default)
#'   or 0 (the zero-truncated estimator).
#' @param default_value The weight of a pair whose denominator
#'   `noffset + popcount` is 0 (default 0).
#' @param angular Angular upweights: `NULL` (none), a data frame with
#'   columns `theta` (degrees, increasing) and `weight`, as
#'   [angular_upweights()] makes, applied to DD and DR (D1D2, D1R2 and
#'   R1D2 for a cross-correlation), or a list with elements `DD` and `DR`,
#'   each such a data frame or `NULL`, for one table each (pycorr's
#'   `D1D2_twopoint_weights` and `D1R2_twopoint_weights`). A pair's
#'   upweight is interpolated linearly in `cos(theta)` between the rows,
#'   and is 1 outside their range. RR is never upweighted.
#' @inheritParams pair_counts
#' @return A data frame of class `c("wtheta", "data.frame")` with columns
#'   `theta_lo`, `theta_hi`, `theta` (all three in the unit of the bins,
#'   degrees unless [theta_bins()] was given `units`; `theta` is the bin's
#'   centre: the
#'   geometric centre `sqrt(theta_lo * theta_hi)` when the edges are
#'   log-spaced, as from `theta_bins(log = TRUE)`, the midpoint
#'   otherwise; attribute `bin_centres` says which), with
#'   `mean_theta = TRUE` `theta_mean` (see `mean_theta`), the counts
#'   (`DD`, `DR`, `RR`, or `D1D2`, `D1R2`, `R1D2`, `R1R2` for a
#'   cross-correlation: raw pair counts in the chosen convention, or
#'   weighted counts with weights), `w`, and `w_err` unless
#'   `error = "none"`. Attributes: `type` (`"auto"` or `"cross"`), `n_data`,
#'   `n_random` (and `n_data2`, `n_random2`), `estimator`, `self_pairs`,
#'   `weighted`, `error`, `cov` (the covariance of w, a matrix; diagonal
#'   for Poisson errors), `n_patches`, `replicates` (the jackknife or
#'   bootstrap w, one column each), `patches` (the patches used),
#'   `pair_counts` (the [pair_counts()] results, raw counts included; R1D2
#'   of a cross-correlation is the count of `data2` against the randoms,
#'   transposed; with `error = "jackknife"` they keep the margins of their
#'   patch arrays, `patch_margins`, instead of the arrays, see
#'   [pair_counts()]; see [wtheta_from_counts()] to reuse them),
#'   `backend`, `devices`, `threads`, `elapsed` (seconds for the whole call),
#'   `n_outside` (pairs outside the edges per count), `seed` (the seed of
#'   the k-means patches and bootstrap draws, when the call made any),
#'   `edges` (in the
#'   bins' unit), `theta_units` (that unit: `"deg"`, `"arcmin"`,
#'   `"arcsec"` or `"rad"`; a result without it is in degrees) and
#'   `footprint_check` (the [footprint_check()] results, or `NULL`), and
#'   with `bitwise` or `angular` also `pip`: a list with `bitwise` (by
#'   count: `"pairs"`, `"individual"` or `"none"`, how its pairs were
#'   weighted), `n_bits`, `nrealizations`, `noffset`, `default_value` and
#'   `angular` (the tables applied, `DD` and `DR`). `w` is
#'   `NA` in bins where its denominator is zero, and `w_err` in bins where
#'   that of a replicate is, each with a warning that names the bins.
#' @seealso [wtheta_cov()] for the covariance, [sky_patches()],
#'   [prepare_catalog()], [wtheta_from_counts()], and [wtheta_multi()] for
#'   every correlation of several samples.
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
                   check_footprint = TRUE, mean_theta = FALSE,
                   bitwise = NULL, nrealizations = NULL, noffset = 1,
                   default_value = 0, angular = NULL) {
  estimator <- match_estimator(estimator)
  error <- match_error(error)
  check_flag(self_pairs, "self_pairs")
  is_cross <- !is.null(data2)
  check_cross_args(is_cross, random2, self_pairs)
  users <- list(data = data, random = random, data2 = data2,
                random2 = random2)
  users <- users[!vapply(users, is.null, TRUE)]
  if (is.matrix(bitwise) || is.data.frame(bitwise)) {
    bitwise <- list(data = bitwise)
  }
  pip <- wtheta_pip(bitwise, nrealizations, noffset, default_value, angular,
                    users)
  # the counts: DD, DR, RR (or the four cross counts)
  spec <- if (!is_cross) {
    correlation_spec("data", "random", self_pairs = self_pairs)
  } else {
    correlation_spec("data", "random", "data2",
                     if (is.null(random2)) "random" else "random2")
  }
  # do data and randoms share a footprint?
  fp <- list(c("data", "random"))
  if (is_cross) fp[[2L]] <- c("data2", if (!is.null(random2)) "random2" else
    "random")
  # checks, catalogs prepared (with one set of patches when resampling)
  call <- new_call("wtheta", users, bins, columns, progress, self_pairs,
                   mean_theta, weights, patches, backend, threads, devices,
                   distribute, checkpoint, retries, timeout, error = error,
                   n_patches = n_patches, n_boot = n_boot, seed = seed,
                   fit_on = "random", randoms = "random",
                   counts = unique_counts(spec),
                   check_footprint = check_footprint, footprints = fp,
                   check_catalogs = function(cats) {
                     for (nm in intersect(c("data", "random"), names(cats))) {
                       check_enough_points(cats[[nm]], nm, is_cross,
                                           self_pairs)
                     }
                   },
                   check_weights = function(w) {
                     check_weight_totals(w, is_cross, self_pairs)
                   },
                   key = list(is.null(random2)), pip = pip)
  # the counts (the footprint check runs while the GPU counts, or first),
  # then w, its errors and covariance
  counted <- call_counts(call)
  out <- wtheta_result(spec_counts(spec, counted$done), estimator, error,
                       n_boot, seed)
  attr(out, "pip") <- pip_record(pip, attr(out, "pair_counts"))
  if (call$resample) {
    warn_untrusted_cov(error, nrow(out), ncol(attr(out, "replicates")),
                       patch_size(call$cats$random),
                       max(call$edges))
  }
  finish_result(out, call$start, counted$footprint)
}

# the options of a cross-correlation that only it, or only an
# auto-correlation, takes
check_cross_args <- function(is_cross, random2, self_pairs) {
  if (!is_cross && !is.null(random2)) {
    stop("`random2` is for a cross-correlation and needs `data2`.",
         call. = FALSE)
  }
  if (is_cross && self_pairs) {
    stop("`self_pairs = TRUE` applies to auto-correlations; a ",
         "cross-correlation (`data2` given) counts cross pairs only.",
         call. = FALSE)
  }
}

# an auto-correlation needs pairs
check_enough_points <- function(x, nm, is_cross, self_pairs) {
  n <- catalog_size(x)
  if (!is_cross && n < 2L && !self_pairs) {
    stop("`", nm, "` has ", n, " point; w(theta) needs at ",
         "least 2.", call. = FALSE)
  }
}

# the arguments of the errors; TRUE when they resample patches
check_error_args <- function(error, patches, n_patches, n_boot, seed) {
  resample <- error %in% c("jackknife", "bootstrap")
  if (!resample && !is.null(patches)) {
    stop("`patches` is used by error = \"jackknife\" or \"bootstrap\", not ",
         "by error = \"", error, "\".", call. = FALSE)
  }
  if (resample) check_n_patches(n_patches)
  if (error == "bootstrap") check_count(n_boot, "n_boot")
  check_seed(seed)
  resample
}

# The counts of one correlation as a list of specs, in the order of the
# result's columns: the names in `cats` of the data and randoms (d2, r2
# NULL for an auto-correlation; r2 == r1 when the samples share randoms).
# Each spec: column, x, y (NULL for auto pairs), self_pairs, and
# transposed (the count of y x x, taken from that of x x y so that one
# count of data and randoms serves both orders), and mean (TRUE for DD and
# D1D2: the counts that sum their pairs' angles when mean_theta is asked),
# and angular: which table of angular upweights the count takes ("DD" for
# DD and D1D2, "DR" for DR, D1R2 and R1D2, FALSE for the randoms' pairs:
# none; see run_counts()), and key, its count_key(), made once.
correlation_spec <- function(d1, r1, d2 = NULL, r2 = NULL,
                             self_pairs = FALSE) {
  s <- function(col, x, y, sp = FALSE, t = FALSE, mean = FALSE,
                angular = NULL) {
    list(col = col, x = x, y = y, self_pairs = sp, transposed = t,
         mean = mean, angular = angular, key = spec_key(x, y, sp))
  }
  if (is.null(d2)) {
    return(list(s("DD", d1, NULL, self_pairs, mean = TRUE, angular = "DD"),
                s("DR", d1, r1, angular = "DR"),
                s("RR", r1, NULL, self_pairs, angular = FALSE)))
  }
  list(s("D1D2", d1, d2, mean = TRUE, angular = "DD"),
       s("D1R2", d1, r2, angular = "DR"),
       s("R1D2", d2, r1, t = TRUE, angular = "DR"),
       if (r1 == r2) s("R1R2", r1, NULL, angular = FALSE) else
         s("R1R2", r1, r2, angular = FALSE))
}

# The PIP settings of wtheta() and wtheta_multi() (pip_settings(), R/pip.R)
# for the catalogs `users`, or NULL: `angular` is one table for DD and DR
# or a list of one each, kept as tables_by_count (run_counts() gives each
# count its own); the settings' own `angular` is the DD table, or the DR
# one when DD has none.
wtheta_pip <- function(bitwise, nrealizations, noffset, default_value,
                       angular, users) {
  by <- NULL
  if (!is.null(angular)) {
    one <- is.data.frame(angular) ||
      is.list(angular) && !is.null(angular$theta)
    if (one) {
      by <- list(DD = angular, DR = angular)
    } else if (is.list(angular) && !is.null(names(angular)) &&
               all(names(angular) %in% c("DD", "DR")) &&
               !anyDuplicated(names(angular))) {
      by <- list(DD = angular$DD, DR = angular$DR)
    } else {
      stop("`angular` must be NULL, a data frame with columns `theta` ",
           "(degrees) and `weight`, or a list with elements `DD` and `DR`, ",
           "each such a data frame or NULL, not ", describe(angular), ".",
           call. = FALSE)
    }
    by <- lapply(by, function(a) {
      if (!is.null(a)) check_angular(a)
    })
    angular <- by$DD %||% by$DR
  }
  pip <- pip_settings(bitwise, nrealizations, noffset, default_value,
                      angular, users)
  if (!is.null(pip)) pip$tables_by_count <- by
  pip
}

# what a wtheta result records of its PIP settings (NULL without them):
# how each count weighted its pairs (the counts' own records) and the
# settings
pip_record <- function(pip, pcs) {
  if (is.null(pip)) return(NULL)
  recs <- lapply(pcs, `[[`, "pip")
  get <- function(k) {
    v <- unlist(lapply(recs, `[[`, k))
    v <- v[!is.na(v)]
    if (length(v)) v[[1L]] else NA_real_
  }
  list(bitwise = vapply(recs, function(r) r$bitwise %||% "none", ""),
       n_bits = get("n_bits"), nrealizations = get("nrealizations"),
       noffset = pip$noffset, default_value = pip$default_value,
       angular = pip$tables_by_count)
}

# the name of the count a spec asks for (the spec's own key when
# correlation_spec() made it: wtheta_multi() looks its 78 specs up four
# times over, and paste() a time cost a millisecond a call)
count_key <- function(s) {
  s$key %||% spec_key(s$x, s$y, s$self_pairs)
}

spec_key <- function(x, y, self_pairs) {
  paste(x, y %||% x, self_pairs, sep = "-")
}

# the distinct counts of a list of specs (one per key), each with mean
# TRUE when any spec of its key has it
unique_counts <- function(spec) {
  keys <- vapply(spec, count_key, "")
  mean <- vapply(spec, function(s) isTRUE(s$mean), TRUE)
  first <- which(!duplicated(keys))
  out <- spec[first]
  for (k in seq_along(out)) {
    out[[k]]$mean <- any(mean[keys == keys[first[k]]])
  }
  out
}

# the counts of one correlation from those done, named by column; a
# transposed count is kept in `transposed` (an environment, or NULL) for
# the next correlation that needs it (wtheta_multi())
spec_counts <- function(spec, done, transposed = NULL) {
  out <- lapply(spec, function(s) {
    key <- count_key(s)
    pc <- done[[key]]
    if (!s$transposed) return(pc)
    if (is.null(transposed)) return(transpose_counts(pc))
    if (is.null(transposed[[key]])) assign(key, transpose_counts(pc),
                                           envir = transposed)
    transposed[[key]]
  })
  stats::setNames(out, vapply(spec, `[[`, "", "col"))
}

# elapsed seconds and footprint checks, set on a result last
finish_result <- function(out, start, fchecks = NULL) {
  attr(out, "elapsed") <- proc.time()[["elapsed"]] - start
  attr(out, "footprint_check") <- fchecks
  out
}
