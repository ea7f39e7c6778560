#' w(theta) from stored pair counts
#'
#' Combines [pair_counts()] results, counted once and kept (say with
#' `saveRDS()`), into the w(theta) that [wtheta()] would give from the same
#' catalogs: the same object, errors included. [wtheta()] keeps its counts
#' as the attribute `pair_counts`, so they can be reused too.
#'
#' For an auto-correlation give `dd` (data-data, auto pairs), `dr`
#' (data-random, cross pairs, data as `x`) and `rr` (random-random, auto
#' pairs); for a cross-correlation of D1 and D2 give `dd` = D1D2, `dr` =
#' D1R2, `rd` = R1D2 (randoms of D1 as `x`) and `rr` = R1R2 (the auto
#' count of shared randoms, or the cross count of R1 and R2). Only the
#' counts the estimator needs are required: `"natural"` needs `dd` and
#' `rr`, `"DP"` `dd` and `dr`.
#'
#' The counts must agree, or they are refused with a message naming the
#' argument: the same bin edges in the same unit (`theta_units`); all
#' weighted or none; the same
#' `self_pairs` for the auto counts; the same catalogs where two counts
#' share one (points, weight sums and, for counts that carry them, the
#' catalogs' fingerprints: DD's data must be DR's data, RR's randoms DR's
#' randoms, wherever they lie on the sky); and, for jackknife or bootstrap
#' errors, the same patches. Each count is checked first: its fields of the
#' right type and size (a count built or edited by hand), and counts that
#' are finite and not negative, or an error naming the field and the bin.
#' Counts saved before fingerprints were kept combine with the other
#' checks.
#'
#' @param dd,dr,rr,rd [pair_counts()] results, see Details.
#' @param estimator One of `"LS"`, `"natural"`, `"DP"`, `"Hamilton"`, as in
#'   [wtheta()].
#' @param error `"poisson"`, `"jackknife"`, `"bootstrap"` or `"none"`, as in
#'   [wtheta()]; `NULL` (the default) is `"jackknife"` when the counts carry
#'   patches and `"poisson"` otherwise.
#' @param n_boot,seed For bootstrap errors, as in [wtheta()].
#' @return A `wtheta` object as [wtheta()] returns it; `footprint_check`
#'   is `NULL` and `elapsed` the seconds of this call. When `dd` was
#'   counted with `mean_theta = TRUE` the result has its `theta_mean`
#'   column, as [wtheta()] with `mean_theta = TRUE` has. Its theta
#'   columns are in the counts' unit (`theta_units`, degrees unless they
#'   were counted with bins from `theta_bins(units = )`).
#' @seealso [wtheta()], [pair_counts()], [prepare_catalog()].
#' @examples
#' sim <- simulate_catalog(2000, seed = 1)
#' ran <- prepare_catalog(random_catalog(4000, seed = 2), n_patches = 8,
#'                        seed = 3)
#' gal <- prepare_catalog(sim, patches = ran$patches)
#' b <- theta_bins(0.1, 5, n = 6, log = TRUE)
#' rr <- pair_counts(ran, bins = b, threads = 1)
#' dd <- pair_counts(gal, bins = b, threads = 1)
#' dr <- pair_counts(gal, ran, bins = b, threads = 1)
#' w <- wtheta_from_counts(dd, dr, rr)
#' w$w_err
#' # the same as wtheta() on the same catalogs
#' all.equal(w$w, wtheta(gal, ran, b, error = "jackknife", threads = 1)$w)
#' @export
wtheta_from_counts <- function(dd, dr = NULL, rr = NULL, rd = NULL,
                               estimator = c("LS", "natural", "DP",
                                             "Hamilton"),
                               error = NULL, n_boot = 500, seed = NULL) {
  start <- proc.time()[["elapsed"]]
  estimator <- match_estimator(estimator)
  is_pc <- function(x, arg) {
    if (!is.null(x) && !inherits(x, "pair_counts")) {
      stop("`", arg, "` must be a pair_counts object (from pair_counts() ",
           "or attr(<wtheta>, \"pair_counts\")), not ", describe(x), ".",
           call. = FALSE)
    }
  }
  is_pc(dd, "dd")
  if (is.null(dd)) stop("`dd` is needed.", call. = FALSE)
  is_pc(dr, "dr")
  is_pc(rr, "rr")
  is_pc(rd, "rd")
  for (a in c("dd", "dr", "rr", "rd")) {
    pc <- get(a)
    if (!is.null(pc)) check_pair_counts(pc, a)
  }
  is_cross <- dd$type == "cross"
  pcs <- if (!is_cross) {
    if (!is.null(rd)) {
      stop("`rd` (R1D2) is for a cross-correlation, but `dd` counts auto ",
           "pairs.", call. = FALSE)
    }
    list(DD = dd, DR = dr, RR = rr)
  } else list(D1D2 = dd, D1R2 = dr, R1D2 = rd, R1R2 = rr)
  args <- stats::setNames(c("dd", "dr", "rd", "rr")[c(1L, 2L, if (is_cross)
    3L, 4L)], names(pcs))
  needs <- if (!is_cross) {
    switch(estimator, LS = c("DD", "DR", "RR"), natural = c("DD", "RR"),
           DP = c("DD", "DR"), Hamilton = c("DD", "DR", "RR"))
  } else {
    switch(estimator, LS = names(pcs), natural = c("D1D2", "R1R2"),
           DP = c("D1D2", "D1R2"), Hamilton = names(pcs))
  }
  for (nm in needs) {
    if (is.null(pcs[[nm]])) {
      stop("`", args[[nm]], "` (", nm, ") is needed by the ", estimator,
           " estimator.", call. = FALSE)
    }
  }
  # counts given beyond the estimator's needs are checked and kept, as
  # wtheta() keeps all its counts
  check_counts_agree(pcs, args, is_cross)
  has_p <- count_n_patches(dd) > 0L
  if (is.null(error)) error <- if (has_p) "jackknife" else "poisson"
  error <- match_error(error)
  if (error %in% c("jackknife", "bootstrap") && !has_p) {
    stop("error = \"", error, "\" needs counts with patches (pair_counts() ",
         "with `patches`, or prepared catalogs with patches); `dd` has none.",
         call. = FALSE)
  }
  if (error == "bootstrap") {
    for (nm in names(pcs)) {
      if (!is.null(pcs[[nm]]) && is.null(pcs[[nm]]$patch_counts)) {
        stop("error = \"bootstrap\" needs the pairs of each pair of ",
             "patches (`patch_counts`), but `", args[[nm]], "` keeps only ",
             "their margins (`patch_margins`), as the counts of wtheta() ",
             "with error = \"jackknife\" do: enough for a jackknife, not a ",
             "bootstrap. Count with pair_counts() and `patches`, or with ",
             "wtheta(error = \"bootstrap\").", call. = FALSE)
      }
    }
  }
  if (error == "bootstrap") check_count(n_boot, "n_boot")
  check_seed(seed)
  out <- wtheta_result(pcs, estimator, error, n_boot, seed)
  # the counts carry no catalog, so no patch size: only the singular
  # covariance is warned of here
  if (error %in% c("jackknife", "bootstrap")) {
    warn_untrusted_cov(error, nrow(out), ncol(attr(out, "replicates")),
                       NA_real_, NA_real_)
  }
  finish_result(out, start)
}

# the counts given to wtheta_from_counts() agree: kinds, bins,
# conventions, catalogs shared, patches
check_counts_agree <- function(pcs, args, is_cross) {
  kinds <- if (!is_cross) c(DD = "auto", DR = "cross", RR = "auto") else
    c(D1D2 = "cross", D1R2 = "cross", R1D2 = "cross", R1R2 = NA)
  ref <- pcs[[1L]]
  for (nm in names(pcs)) {
    pc <- pcs[[nm]]
    if (is.null(pc)) next
    a <- args[[nm]]
    if (!is.na(kinds[[nm]]) && pc$type != kinds[[nm]]) {
      stop("`", a, "` (", nm, ") must count ", kinds[[nm]], " pairs, but ",
           "it counts ", pc$type, " pairs.", call. = FALSE)
    }
    if (theta_units_of(pc) != theta_units_of(ref)) {
      stop("`", a, "` has its angles in ", theta_units_of(pc), " but `",
           args[[1L]], "` in ", theta_units_of(ref), "; count them with ",
           "the same bins (theta_bins() with the same `units`).",
           call. = FALSE)
    }
    if (!identical(pc$edges, ref$edges)) {
      stop("`", a, "` has other bins than `", args[[1L]], "` (",
           length(pc$edges) - 1L, " bins from ", format(pc$edges[1L]),
           " to ", format(pc$edges[length(pc$edges)]), " ",
           theta_unit_label(theta_units_of(pc)), ", against ",
           length(ref$edges) - 1L, " from ", format(ref$edges[1L]), " to ",
           format(ref$edges[length(ref$edges)]), "); count them with the ",
           "same bins.", call. = FALSE)
    }
    if (is.null(pc$weighted) != is.null(ref$weighted)) {
      stop("`", a, "` is ", if (is.null(pc$weighted)) "unweighted" else
        "weighted", " but `", args[[1L]], "` is ",
        if (is.null(ref$weighted)) "unweighted" else "weighted",
        "; count all with weights or none.", call. = FALSE)
    }
    if (count_n_patches(pc) != count_n_patches(ref) ||
        !identical(pc$patches, ref$patches)) {
      stop("`", a, "` has other patches than `", args[[1L]], "`; count all ",
           "with the same patches (the same sky_patches() result or ",
           "labels), or all without.", call. = FALSE)
    }
  }
  auto <- names(pcs)[vapply(pcs, function(pc) !is.null(pc) &&
                              pc$type == "auto", TRUE)]
  sp <- vapply(pcs[auto], `[[`, TRUE, "self_pairs")
  if (length(unique(sp)) > 1L) {
    stop("`", args[[auto[1L]]], "` and `", args[[auto[2L]]], "` were ",
         "counted with different `self_pairs` (", sp[[1L]], " and ",
         sp[[2L]], "); count them with the same convention.", call. = FALSE)
  }
  # the same catalog on both sides: (count, side) pairs that must match
  same <- if (!is_cross) {
    list(data = list(c("DD", "1"), c("DR", "1")),
         random = list(c("DR", "2"), c("RR", "1")))
  } else {
    list(data = list(c("D1D2", "1"), c("D1R2", "1")),
         data2 = list(c("D1D2", "2"), c("R1D2", "2")),
         random = list(c("R1D2", "1"), c("R1R2", "1")),
         random2 = list(c("D1R2", "2"), c("R1R2", "2")))
  }
  side <- function(pc, s) {
    if (pc$type == "auto") s <- "1"
    list(n = pc[[paste0("n", s)]], w = pc[[paste0("sum_w", s)]],
         fp = pc[[paste0("fingerprint", s)]])
  }
  for (what in names(same)) {
    ab <- same[[what]]
    if (is.null(pcs[[ab[[1L]][1L]]]) || is.null(pcs[[ab[[2L]][1L]]])) next
    x <- side(pcs[[ab[[1L]][1L]]], ab[[1L]][2L])
    y <- side(pcs[[ab[[2L]][1L]]], ab[[2L]][2L])
    # a count whose one-sided bitwise words were folded into the weights
    # (PIP: D-R pairs) sums other weights for the same catalog
    folded <- any(vapply(ab, function(k)
      identical(pcs[[k[1L]]]$pip$bitwise, "individual"), TRUE))
    if (!identical(x$n, y$n) ||
        !folded && !isTRUE(all.equal(x$w, y$w))) {
      stop("`", args[[ab[[1L]][1L]]], "` and `", args[[ab[[2L]][1L]]], "` ",
           "do not count the same ", what, " catalog (",
           format_n(x$n), " points", if (!is.null(x$w))
             paste0(", weight sum ", format(x$w)), " against ",
           format_n(y$n), if (!is.null(y$w))
             paste0(", weight sum ", format(y$w)), ").", call. = FALSE)
    }
    # counts made before fingerprints were kept have none: checked as above
    if (!is.null(x$fp) && !is.null(y$fp) && !same_fingerprint(x$fp, y$fp)) {
      stop("`", args[[ab[[1L]][1L]]], "` and `", args[[ab[[2L]][1L]]], "` ",
           "do not count the same ", what, " catalog: both have ",
           format_n(x$n), " points, but at other positions (their ",
           "fingerprints, sums over the points' positions, differ). Count ",
           "them from the same catalog.", call. = FALSE)
    }
  }
  invisible()
}

# A pair_counts object, perhaps built or edited by hand: the fields the
# estimators read, of the right type and size, and counts that can be
# (finite, and not negative unless weighted by negative weights), or an
# error naming the argument and the field.
check_pair_counts <- function(pc, arg) {
  bad <- function(field, what) {
    stop("`", arg, "$", field, "` ", what, ".", call. = FALSE)
  }
  is_num <- function(v) is.numeric(v) && !is.object(v) && is.null(dim(v))
  one <- function(field, ok = function(v) TRUE, what) {
    v <- pc[[field]]
    if (!is_num(v) || length(v) != 1L || !is.finite(v) || !ok(v)) {
      bad(field, paste0("must be ", what, ", not ", describe(v)))
    }
  }
  e <- pc$edges
  if (!is_num(e) || length(e) < 2L || anyNA(e) || any(!is.finite(e)) ||
      any(diff(e) <= 0)) {
    bad("edges", paste0("must be increasing finite bin edges (two or more), ",
                        "not ", describe(e)))
  }
  nb <- length(e) - 1L
  for (field in c("type")) {
    v <- pc[[field]]
    if (!is.character(v) || length(v) != 1L || !v %in% c("auto", "cross")) {
      bad(field, paste0("must be \"auto\" or \"cross\", not ",
                        describe(v)))
    }
  }
  v <- pc$self_pairs
  if (!is.logical(v) || length(v) != 1L || is.na(v)) {
    bad("self_pairs", paste0("must be TRUE or FALSE, not ", describe(v)))
  }
  one("n1", function(v) v >= 1, "a number of points (one number, 1 or more)")
  one("n2", function(v) v >= 1, "a number of points (one number, 1 or more)")
  one("n_pairs", function(v) v >= 0, "a number of pairs (one number, 0 or more)")
  counts_ok <- function(field, v, negative_ok) {
    if (!is_num(v) || length(v) != nb) {
      bad(field, paste0("must be ", nb, " numbers (one per bin), not ",
                        describe(v)))
    }
    k <- which(!is.finite(v) | (!negative_ok & v < 0))[1L]
    if (!is.na(k)) {
      bad(field, paste0("has ", format(v[k]), " in bin ", k, " (", format(e[k]),
                        " to ", format(e[k + 1L]), " degrees): a count ",
                        "must be finite", if (!negative_ok)
                          " and not negative"))
    }
  }
  counts_ok("counts", pc$counts, FALSE)
  if (!is.null(pc$weighted)) {
    counts_ok("weighted", pc$weighted, TRUE)
    for (f in c("sum_w1", "sum_w2", "sum_w1_sq", "sum_w2_sq",
                "weighted_pairs")) {
      one(f, what = "one finite number")
    }
  }
  for (f in c("patch_counts", "patch_weighted")) {
    a <- pc[[f]]
    if (is.null(a)) next
    d <- dim(a)
    if (!is.numeric(a) || length(d) != 3L || d[1L] != d[2L] || d[3L] != nb) {
      bad(f, paste0("must be a P x P x ", nb, " array (patches, patches, ",
                    "bins), not ", describe(a)))
    }
    if (any(!is.finite(a)) || (f == "patch_counts" && any(a < 0))) {
      bad(f, "holds a count that is not finite, or negative")
    }
  }
  for (f in c("patch_margins", "patch_margins_weighted")) {
    m <- pc[[f]]
    if (is.null(m)) next
    if (!is.null(pc$patch_counts) || !is.null(pc$patch_weighted)) {
      bad(f, paste0("comes with `patch_counts`: a count keeps its patch ",
                    "arrays or their margins, not both"))
    }
    P <- if (is.list(m) && is.matrix(m$rows)) nrow(m$rows) else 0L
    shape_ok <- is.list(m) && identical(names(m),
                                        c("rows", "cols", "diag", "total")) &&
      P >= 1L && all(vapply(m[1:3], function(v) is.numeric(v) &&
                              identical(dim(v), c(P, nb)), TRUE)) &&
      is_num(m$total) && length(m$total) == nb
    if (!shape_ok) {
      bad(f, paste0("must be list(rows, cols, diag, total): three P x ", nb,
                    " matrices (patches, bins) and ", nb, " totals, not ",
                    describe(m)))
    }
    v <- unlist(m, use.names = FALSE)
    if (any(!is.finite(v)) || (f == "patch_margins" && any(v < 0))) {
      bad(f, "holds a count that is not finite, or negative")
    }
  }
  if (!is.null(pc$patch_margins_weighted) && is.null(pc$patch_margins)) {
    bad("patch_margins_weighted", "comes without `patch_margins`")
  }
  invisible(pc)
}
