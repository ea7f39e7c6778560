# print, summary, format and as.data.frame methods for pair_counts, wtheta
# and wtheta_multi results, and the describe_* lines they print. The
# wtheta methods read what is there: any count columns, an optional w_err,
# and attributes that may be missing.

format_n <- function(n) format(n, big.mark = ",", scientific = FALSE)

describe_run <- function(backend, threads, devices, elapsed) {
  how <- if (backend == "cpu") {
    paste0("cpu (", threads, " thread", if (threads != 1) "s", ")")
  } else {
    paste0("cuda (device", if (length(devices) != 1) "s", " ",
           paste(devices, collapse = ", "), ")")
  }
  paste0("backend: ", how, ", ", format(signif(elapsed, 3)), " s")
}

#' Methods for wtheta_multi results
#'
#' `print()` shows the samples, the correlations and the first rows;
#' `summary()` gives per correlation its sizes, the first and the largest
#' w and the median relative error (a `summary.wtheta_multi` list with
#' `samples`, `n_correlations`, `n_bins`, `theta_units`, `theta_range`,
#' `estimator`, `error`, `n_patches`, `weighted` (`NULL` where not
#' recorded), `self_pairs`, `cov_dim`,
#' `correlations` (a data frame: `correlation`, `type`, `n_data`,
#' `w_first`, `w_max`, `theta_at_max`, `median_rel_err`), `backend`,
#' `threads`, `elapsed`); `as.data.frame()` gives the plain long data frame (columns `i`, `j`,
#' `theta_lo`, `theta_hi`, `theta`, `w`, `w_err`, in the unit of the
#' attribute `theta_units`, which it keeps). `[` that selects whole
#' correlations, or the same bins of each correlation it keeps (rows in
#' their order, none repeated, columns `i`, `j`, `theta_lo`, `theta_hi`,
#' `theta` and `w` kept), stays a `wtheta_multi` result: the covariance
#' block and replicate rows of the rows kept, the entries of the
#' correlations kept (each subset as by `[` on a [wtheta()] result), the
#' samples that still appear (the factor levels follow), the bin edges when
#' the bins kept are adjacent, and no `pair_counts` (they describe every
#' bin). Any other subset is the plain data frame. `plot()` draws a
#' triangle of panels, w_ij against theta with its errors, sample `i` down
#' and `j` across; `autoplot()` draws the same with ggplot2 (the panels
#' below the diagonal stay empty).
#'
#' @param x,object A result of [wtheta_multi()].
#' @param n Rows to print.
#' @param log The axes drawn logarithmically: `""`, `"x"`, `"y"` or
#'   `"xy"` (with `"y"` or `"xy"` a negative w is drawn at |w| as an open
#'   symbol; see `scales`), or `NULL` (the default: a log theta axis for
#'   log bins, a linear w axis).
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
#' @order 1
NULL

#' @rdname wtheta_multi-methods
#' @order 2
#' @export
print.wtheta_multi <- function(x, n = 10L, ...) {
  a <- attributes(x)
  s <- a$samples
  K <- length(s)
  cat("<wtheta_multi> ", K, " sample", if (K != 1L) "s", " (",
      paste(s, collapse = ", "), "): ", length(a$entries), " correlation",
      if (length(a$entries) != 1L) "s", ", ", length(a$edges) - 1L,
      " bins\n", sep = "")
  cat(estimator_name(a$estimator), "; ", describe_multi_errors(a),
      if (isTRUE(a$weighted)) "; weighted counts",
      if (!is.null(a$source)) paste0("; read from a ", a$source) else
        paste0("; ", length(a$pair_counts), " counts in ",
               format(signif(a$elapsed, 3)), " s"), "\n", sep = "")
  if (!is.null(a$pip)) cat(describe_pip(a$pip, by_count = FALSE), "\n",
                           sep = "")
  d <- as.data.frame(x)
  print(unit_headers(utils::head(d, n), theta_units_of(x)),
        row.names = FALSE, digits = 5)
  if (nrow(d) > n) cat("  ... ", nrow(d) - n, " more rows\n", sep = "")
  invisible(x)
}

# "no errors", "poisson errors", "jackknife errors (20 patches, seed 1,
# joint covariance)"
describe_multi_errors <- function(a) {
  err <- a$error %||% "unknown"
  if (err == "none") return("no errors")
  paste0(err, " errors", if (err %in% c("jackknife", "bootstrap"))
    paste0(" (", a$n_patches, " patches, ",
           if (!is.null(a$seed)) paste0("seed ", a$seed, ", "),
           "joint covariance)"))
}

#' @rdname wtheta_multi-methods
#' @order 3
#' @export
summary.wtheta_multi <- function(object, ...) {
  a <- attributes(object)
  entries <- a$entries
  per <- lapply(names(entries), function(nm) {
    e <- entries[[nm]]
    ok <- which(is.finite(e$w))
    imax <- if (length(ok)) ok[which.max(e$w[ok])] else NA_integer_
    rel <- if (!is.null(e$w_err)) {
      r <- e$w_err / abs(e$w)
      r <- r[is.finite(r)]
      if (length(r)) stats::median(r) else NA_real_
    } else NA_real_
    data.frame(correlation = nm, type = result_type(e),
               n_data = sizes_text(cross_sizes(attr(e, "n_data"),
                                               attr(e, "n_data2"), e)),
               w_first = if (length(ok)) e$w[ok[1L]] else NA_real_,
               w_max = if (is.na(imax)) NA_real_ else e$w[imax],
               theta_at_max = if (is.na(imax)) NA_real_ else e$theta[imax],
               median_rel_err = rel)
  })
  edges <- a$edges
  structure(list(
    samples = a$samples, n_correlations = length(entries),
    n_bins = if (length(entries)) nrow(entries[[1L]]) else 0L,
    theta_units = theta_units_of(object),
    theta_range = c(object$theta_lo[1L],
                    object$theta_hi[length(object$theta_hi)]),
    estimator = a$estimator, error = a$error %||% "unknown",
    n_patches = a$n_patches, weighted = a$weighted,
    self_pairs = a$self_pairs, cov_dim = dim(a$cov),
    correlations = do.call(rbind, per),
    backend = a$backend, threads = a$threads, elapsed = a$elapsed
  ), class = "summary.wtheta_multi")
}

# sizes as "300" or "300 x 200"; "?" where not recorded
sizes_text <- function(n) {
  if (!length(n)) "?" else paste(format_n(n), collapse = " x ")
}

#' @export
print.summary.wtheta_multi <- function(x, ...) {
  f <- function(v) format(signif(v, 4))
  K <- length(x$samples)
  cat("Angular correlations of ", K, " sample", if (K != 1L) "s", " (",
      paste(x$samples, collapse = ", "), "), ",
      estimator_name(x$estimator), if (!is.null(x$estimator)) " estimator",
      "\n", sep = "")
  cat("  bins:     ", x$n_bins, " from ", f(x$theta_range[1L]), " to ",
      f(x$theta_range[2L]), " ", x$theta_units, " in each of ",
      x$n_correlations, " correlation", if (x$n_correlations != 1L) "s",
      "\n", sep = "")
  cat("  errors:   ", describe_multi_errors(x),
      if (!is.null(x$cov_dim)) paste0("; covariance ",
                                      paste(x$cov_dim, collapse = " x ")),
      "\n", sep = "")
  # (files of other tools do not say how their counts were weighted)
  cat("  counts:   ", if (is.null(x$weighted)) "weighting not recorded" else
    if (isTRUE(x$weighted)) "weighted (sums of w_i w_j)" else
      "unweighted pairs", if (isTRUE(x$self_pairs)) ", self pairs included",
    "\n", sep = "")
  tab <- x$correlations
  tab$type <- NULL
  for (k in c("w_first", "w_max", "theta_at_max", "median_rel_err")) {
    tab[[k]] <- f(tab[[k]])
  }
  print(tab, row.names = FALSE)
  if (!is.null(x$backend)) {
    cat("  ", describe_run_attr(x), "\n", sep = "")
  }
  invisible(x)
}

#' @rdname wtheta_multi-methods
#' @order 3
#' @export
as.data.frame.wtheta_multi <- function(x, row.names = NULL, optional = FALSE,
                                       ...) {
  plain_data_frame(x)
}

#' @export
print.pair_counts <- function(x, ...) {
  conv <- if (x$type == "cross") "all n1 * n2 pairs" else if (x$self_pairs)
    "ordered pairs, self pairs included" else "unordered pairs i < j"
  cat("<pair_counts> ", x$type, ": ", format_n(x$n1),
      if (x$type == "cross") paste0(" x ", format_n(x$n2)), " points, ",
      conv, "\n", sep = "")
  cat("  ", length(x$counts), " bins from ", format(x$edges[1L]), " to ",
      format(x$edges[length(x$edges)]), " ", theta_units_of(x), "; ",
      format_n(x$n_pairs),
      " pairs, ", format_n(x$n_outside), " outside the edges\n", sep = "")
  cat("  ", describe_run(x$backend, x$threads, x$devices, x$elapsed), "\n",
      sep = "")
  if (!is.null(x$distributed)) cat("  ", describe_distributed(x$distributed),
                                   "\n", sep = "")
  show <- min(length(x$counts), 6L)
  tab <- data.frame(theta_lo = x$theta_lo, theta_hi = x$theta_hi,
                    count = x$counts)
  if (!is.null(x$theta_mean)) tab$theta_mean <- x$theta_mean
  print(unit_headers(tab[seq_len(show), ], theta_units_of(x)),
        row.names = FALSE)
  if (length(x$counts) > show) {
    cat("  ... ", length(x$counts) - show, " more bins\n", sep = "")
  }
  invisible(x)
}

# A table to print with the unit in its theta columns' headers
# ("theta_lo[arcmin]") when it is not degrees, the package's unit, which
# the line above the table names
unit_headers <- function(d, units) {
  if (units == "deg") return(d)
  th <- names(d) %in% c("theta_lo", "theta_hi", "theta", "theta_mean")
  names(d)[th] <- paste0(names(d)[th], "[", units, "]")
  d
}

# one line on a distributed count: tasks, workers, what each received
describe_distributed <- function(d) {
  paste0("distributed: ", d$tasks, " tasks (", d$blocks, " blocks per ",
         "catalog) on ", d$workers, " worker", if (d$workers != 1L) "s",
         " (", d$plan, "); each task received at most ",
         format_n(d$points_per_task), " points (",
         format(round(d$bytes_per_task / 1e6, 2), nsmall = 2), " MB)",
         if (isTRUE(d$reused > 0)) paste0("; ", d$reused,
                                          " reused from the checkpoint"),
         if (isTRUE(d$retried > 0)) paste0("; ", d$retried, " retried"))
}

estimator_name <- function(e) {
  if (is.null(e)) return("unknown estimator")
  switch(e, LS = "Landy-Szalay", natural = "natural", DP = "Davis-Peebles",
         Hamilton = "Hamilton", e)
}

# columns of a wtheta result that hold pair counts
count_columns <- function(x) {
  known <- intersect(names(x), c("DD", "DR", "RR", "D1D2", "D1R2", "R1D2",
                                 "R1R2"))
  if (length(known)) return(known)
  setdiff(names(x), c("theta_lo", "theta_hi", "theta", "theta_mean", "w",
                      "w_err"))
}

result_type <- function(x) {
  type <- attr(x, "type", exact = TRUE)
  if (is.null(type)) type <- if ("D1D2" %in% names(x)) "cross" else "auto"
  type
}

# the catalogs' sizes: for a cross-correlation both samples and both
# random catalogs (a result read from a file may lack the second ones)
describe_sizes <- function(a, type) {
  fmt <- function(n) if (is.null(n)) "?" else
    paste(format_n(n), collapse = " and ")
  nd <- a$n_data
  nr <- a$n_random
  if (type == "cross") {
    # n_data2 and n_random2 beside n_data and n_random (older results
    # and files kept both sizes in n_data and n_random)
    if (length(nd) == 1L) nd <- c(nd, a$n_data2 %||% NA)
    if (length(nr) == 1L) nr <- c(nr, a$n_random2 %||% NA)
    fmt <- function(n) paste(ifelse(is.na(n), "?", format_n(n)),
                             collapse = " and ")
  }
  paste0("data ", fmt(nd), ", randoms ", fmt(nr), " points")
}

# the count columns of a weighted result as text with their fractions
# (print()'s 4 significant digits would show 3073.646 as 3074, which
# reads as a number of pairs)
weighted_counts_text <- function(d, cols) {
  for (k in cols) d[[k]] <- format(d[[k]], digits = 7L, nsmall = 1L)
  d
}

describe_convention <- function(a, type) {
  if (type == "cross") return("cross pairs: all n1 * n2 pairs")
  sp <- a$self_pairs
  if (is.null(sp)) return("pair convention not recorded")
  if (isTRUE(sp)) "ordered pairs, self pairs included (self_pairs = TRUE)"
  else "unordered pairs, no self pairs (self_pairs = FALSE)"
}

# "errors: jackknife (40 patches, seed 1); weighted counts": the seed of
# the patches (jackknife) or of the draws (bootstrap) when the result
# records one (none for patches given as labels, nor in files)
describe_errors <- function(x, a) {
  err <- a$error
  if (is.null(err)) err <- if ("w_err" %in% names(x)) "given" else "none"
  out <- paste0("errors: ", err)
  if (err %in% c("jackknife", "bootstrap")) {
    what <- c(if (!is.null(a$n_patches)) paste(a$n_patches, "patches"),
              if (!is.null(a$seed)) paste("seed", a$seed))
    if (length(what)) out <- paste0(out, " (", paste(what, collapse = ", "),
                                    ")")
  }
  if (isTRUE(a$weighted)) out <- paste0(out, "; weighted counts")
  out
}

# "PIP weights: 64 bits, nrealizations 65, noffset 1 (individual: DR;
# pairs: DD); angular upweights: DD, DR" from a result's `pip` (without
# the counts by weighting when not by_count: wtheta_multi())
describe_pip <- function(p, by_count = TRUE) {
  how <- p$bitwise[p$bitwise != "none"]
  out <- if (!length(how)) "no bitwise weights" else {
    by <- vapply(split(names(how), how), paste, "", collapse = ", ")
    paste0("PIP weights: ", format_n(p$n_bits), " bits, nrealizations ",
           format_n(p$nrealizations), ", noffset ", p$noffset,
           if (p$default_value != 0) paste0(", default_value ",
                                            format(p$default_value)),
           if (by_count) paste0(" (", paste0(names(by), ": ", by,
                                             collapse = "; "), ")"))
  }
  ang <- names(Filter(Negate(is.null), p$angular))
  paste0(out, "; angular upweights: ",
         if (length(ang)) paste(ang, collapse = ", ") else "none")
}

describe_run_attr <- function(a) {
  if (is.null(a$backend)) return("backend not recorded")
  threads <- if (is.null(a$threads)) NA else a$threads
  elapsed <- if (is.null(a$elapsed)) NA_real_ else a$elapsed
  if (a$backend == "cpu" && is.na(threads)) {
    return(paste0("backend: cpu, ", format(signif(elapsed, 3)), " s"))
  }
  describe_run(a$backend, threads, a$devices, elapsed)
}

#' Print, summarise and convert w(theta) results
#'
#' `print()` shows the sizes, estimator, counting convention, errors,
#' backend and time of a [wtheta()] result, then its first bins.
#' `summary()` gives the headline numbers; `as.data.frame()` drops the
#' class and attributes but `theta_units`. The angles are in the result's
#' unit (its attribute `theta_units`, degrees unless the bins came from
#' `theta_bins(units = )`), which the bins line names; with a unit other
#' than degrees the theta columns' headers name it too (`theta[arcmin]`).
#'
#' @param x,object A result of [wtheta()].
#' @param n Number of bins to show.
#' @param ... Ignored.
#' @return `print()` returns `x` invisibly; `summary()` an object of class
#'   `summary.wtheta`, a list with `type`, `estimator`, `n_data`,
#'   `n_random` (both samples' for a cross-correlation), `self_pairs`,
#'   `weighted`, `n_bins`, `theta_units`, `theta_range` (in that unit),
#'   `pairs` (pairs counted in the bins, by count column; for a weighted
#'   result the sums of `w_i w_j`, which print as such), `n_outside`,
#'   `w_first` (w in the first bin with a finite w), `w_max` and
#'   `theta_at_max`, `theta_zero` (centre of the first bin after the first
#'   where w is not positive, `NA` if none), `error`, `median_rel_err`
#'   (median of `w_err / |w|`, `NA` without errors), `backend`, `threads`,
#'   `devices`,
#'   `elapsed`; `as.data.frame()` a plain data frame.
#' @seealso [wtheta()], [plot.wtheta()], [wtheta_cov()].
#' @examples
#' sim <- simulate_catalog(2000, seed = 1)
#' ran <- random_catalog(4000, like = sim, seed = 2)
#' w <- wtheta(sim, ran, theta_bins(0.05, 5, n = 8, log = TRUE), threads = 1)
#' print(w, n = 3)
#' summary(w)
#' head(as.data.frame(w), 3)
#' @name wtheta-methods
NULL

#' @rdname wtheta-methods
#' @export
print.wtheta <- function(x, n = 10L, ...) {
  a <- attributes(x)
  type <- result_type(x)
  cat("<wtheta> ", if (type == "cross") "cross-correlation" else
    "auto-correlation", ", ", estimator_name(a$estimator), "; ",
    describe_bins(x), "\n", sep = "")
  cat("  ", describe_sizes(a, type), "\n", sep = "")
  cat("  ", describe_convention(a, type), "; ", describe_errors(x, a), "\n",
      sep = "")
  if (!is.null(a$pip)) cat("  ", describe_pip(a$pip), "\n", sep = "")
  out <- a$n_outside
  cat("  ", describe_run_attr(a), "\n", sep = "")
  if (length(out) && all(is.finite(out)) && any(out > 0)) {
    cat("  pairs outside the edges: ",
        paste0(if (!is.null(names(out))) paste0(names(out), " "),
               vapply(out, format_n, ""), collapse = ", "), "\n", sep = "")
  }
  show <- min(nrow(x), n)
  df <- as.data.frame(x)[seq_len(show), , drop = FALSE]
  if (isTRUE(a$weighted)) df <- weighted_counts_text(df, count_columns(x))
  print(unit_headers(df, theta_units_of(x)), row.names = FALSE, digits = 4)
  if (nrow(x) > show) {
    cat("# ... ", nrow(x) - show, " more bin", if (nrow(x) - show > 1L) "s",
        "; print(x, n = ", nrow(x), ") or as.data.frame(x) for all\n",
        sep = "")
  }
  invisible(x)
}

#' @rdname wtheta-methods
#' @export
summary.wtheta <- function(object, ...) {
  a <- attributes(object)
  x <- object
  ok <- which(is.finite(x$w))
  first <- if (length(ok)) ok[1L] else NA_integer_
  imax <- if (length(ok)) ok[which.max(x$w[ok])] else NA_integer_
  nonpos <- if (length(ok)) ok[x$w[ok] <= 0] else integer(0)
  err <- a$error
  if (is.null(err)) err <- if ("w_err" %in% names(x)) "given" else "none"
  rel <- if ("w_err" %in% names(x)) {
    r <- x$w_err / abs(x$w)
    stats::median(r[is.finite(r)])
  } else NA_real_
  cols <- count_columns(x)
  structure(list(
    type = result_type(x), estimator = a$estimator,
    n_data = cross_sizes(a$n_data, a$n_data2, x),
    n_random = cross_sizes(a$n_random, a$n_random2, x),
    self_pairs = a$self_pairs, weighted = isTRUE(a$weighted),
    n_bins = nrow(x), theta_units = theta_units_of(x),
    theta_range = c(x$theta_lo[1L], x$theta_hi[nrow(x)]),
    pairs = vapply(x[cols], function(v) sum(as.double(v)), 0),
    n_outside = a$n_outside,
    w_first = if (is.na(first)) NA_real_ else x$w[first],
    theta_first = if (is.na(first)) NA_real_ else x$theta[first],
    w_max = if (is.na(imax)) NA_real_ else x$w[imax],
    theta_at_max = if (is.na(imax)) NA_real_ else x$theta[imax],
    theta_zero = if (length(nonpos)) x$theta[nonpos[1L]] else NA_real_,
    error = err, median_rel_err = rel,
    backend = a$backend, threads = a$threads, devices = a$devices,
    elapsed = a$elapsed
  ), class = "summary.wtheta")
}

# both samples' sizes of a cross-correlation, as one vector
cross_sizes <- function(n1, n2, x) {
  if (result_type(x) == "cross" && length(n1) == 1L && !is.null(n2)) {
    c(n1, n2)
  } else n1
}

#' @export
print.summary.wtheta <- function(x, ...) {
  f <- function(v) format(signif(v, 4))
  u <- x$theta_units %||% "deg"
  cat(if (x$type == "cross") "Angular cross-correlation" else
    "Angular auto-correlation", ", ", estimator_name(x$estimator),
    if (!is.null(x$estimator)) " estimator", "\n", sep = "")
  # sizes are absent from results read from files that do not record them
  cat("  data:     ", paste(format_n(x$n_data %||% "?"), collapse = " x "),
      " points; randoms: ", paste(format_n(x$n_random %||% "?"),
                                  collapse = " x "),
      " points\n", sep = "")
  cat("  bins:     ", x$n_bins, " from ", f(x$theta_range[1L]), " to ",
      f(x$theta_range[2L]), " ", u, "\n", sep = "")
  # a weighted result's counts are sums of w_i w_j, not numbers of pairs
  cat(if (isTRUE(x$weighted)) "  weighted: " else "  pairs:    ",
      paste0(names(x$pairs), " ", format_n(x$pairs), collapse = ", "),
      if (isTRUE(x$weighted)) " (sums of w_i w_j in the bins)" else
        " in the bins", "\n", sep = "")
  cat("  w:        ", f(x$w_first), " at ", f(x$theta_first),
      " ", u, " (first bin); largest ", f(x$w_max), " at ",
      f(x$theta_at_max), " ", u, "\n", sep = "")
  cat("  w <= 0:   ", if (is.na(x$theta_zero)) "in no bin" else
    paste0("first at ", f(x$theta_zero), " ", u), "\n", sep = "")
  cat("  errors:   ", x$error, if (is.finite(x$median_rel_err))
    paste0(", median w_err / |w| = ", f(x$median_rel_err)), "\n", sep = "")
  if (!is.null(x$backend)) {
    cat("  ", describe_run_attr(x), "\n", sep = "")
  }
  invisible(x)
}

#' @rdname wtheta-methods
#' @param row.names,optional Ignored (for the generic).
#' @export
as.data.frame.wtheta <- function(x, row.names = NULL, optional = FALSE, ...) {
  plain_data_frame(x)
}

# a wtheta or wtheta_multi result as a plain data frame: its columns,
# without the class and attributes but `theta_units` (the unit of its
# theta columns)
plain_data_frame <- function(x) {
  cols <- unclass(x)
  structure(cols[names(x)], class = "data.frame",
            row.names = c(NA_integer_, -length(cols[[1L]])),
            theta_units = attr(x, "theta_units", exact = TRUE))
}
