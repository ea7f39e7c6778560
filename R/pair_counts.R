#' Count pairs by angular separation
#'
#' Counts the pairs of one catalog (auto: each unordered pair `i < j` once,
#' no self pairs) or of two catalogs (cross: all `n1 * n2` pairs) whose
#' angular separation falls in each bin. Counts are exact: see
#' [wtheta-package] for the contract every backend meets.
#'
#' @param x A catalog: a data frame (or matrix) with right ascension and
#'   declination columns in degrees, as returned by [read_catalog()].
#' @param y A second catalog for cross pairs, or `NULL` for auto pairs of
#'   `x`.
#' @param bins Bin edges in degrees, for example from [theta_bins()].
#' @param self_pairs For auto pairs only: `TRUE` counts all ordered pairs,
#'   self pairs included (the counts sum to `n^2`), the classic convention;
#'   `FALSE` (the default) counts each unordered pair once.
#' @param backend `"auto"` (a GPU when one is usable, otherwise the CPU),
#'   `"cpu"` or `"cuda"` (an error when no GPU is usable). The CUDA engine
#'   keeps its device buffers between calls, for the life of the R process,
#'   so that repeated calls start fast.
#' @param threads CPU threads; defaults to [wtheta_threads()].
#' @param devices CUDA device indices to use (default: all visible).
#' @param columns Names of the right ascension and declination columns.
#' @param progress Print progress lines (share done, elapsed, estimated time
#'   left) during runs longer than two seconds. Defaults to the option
#'   `wtheta.progress`, or to `interactive()` when it is unset.
#' @return An object of class `pair_counts`: a list with `counts` (a double
#'   vector, one count per bin, exact up to 2^53), `edges`, `theta_lo`,
#'   `theta_hi`, `n1`, `n2`, `type` (`"auto"` or `"cross"`), `self_pairs`,
#'   `n_pairs` (all pairs counted), `n_below` and `n_above` (pairs below the
#'   first and at or beyond the last edge), `n_outside` (their sum),
#'   `backend`, `devices`, `threads`, `elapsed` (seconds for the whole
#'   call, checks included) and `gpu_ms`
#'   (kernel time on the GPU, `NA` on the CPU).
#' @examples
#' set.seed(1)
#' cat <- random_catalog(500, ra_range = c(0, 20), dec_range = c(-10, 10))
#' pc <- pair_counts(cat, bins = theta_bins(0, 10, width = 1), threads = 1)
#' pc
#' sum(pc$counts) + pc$n_outside == choose(500, 2)
#' @export
pair_counts <- function(x, y = NULL, bins, self_pairs = FALSE,
                        backend = c("auto", "cpu", "cuda"), threads = NULL,
                        devices = NULL, columns = c("ra", "dec"),
                        progress = NULL) {
  start <- proc.time()[["elapsed"]]
  progress <- progress_or_default(progress)
  a <- as_catalog(x, "x", columns)
  b <- if (is.null(y)) NULL else as_catalog(y, "y", columns)
  edges <- bins_edges(bins)
  check_flag(self_pairs, "self_pairs")
  if (self_pairs && !is.null(y)) {
    stop("`self_pairs = TRUE` applies to auto pairs only (y = NULL); cross ",
         "pairs are all n1 * n2 pairs already.", call. = FALSE)
  }
  threads <- threads_or_default(threads)
  run <- choose_backend(backend, devices)
  pc <- count_pairs(unit_vectors(a, threads),
                    if (!is.null(b)) unit_vectors(b, threads), edges,
                    self_pairs, run, threads, progress)
  pc$elapsed <- proc.time()[["elapsed"]] - start
  pc
}

# A checked catalog as an n x 3 matrix of unit vectors, made once per
# catalog (the exactness contract fixes how: see ?wtheta-package).
unit_vectors <- function(cat, threads) {
  .Call(C_unit_vectors, cat$ra, cat$dec, threads)
}

# The one place that calls the C core. a, b: unit vectors from
# unit_vectors() (b NULL for auto); run: from choose_backend().
count_pairs <- function(a, b, edges, self_pairs, run, threads,
                        progress = FALSE) {
  start <- proc.time()[["elapsed"]]
  res <- .Call(C_pair_counts, a, b, edges, self_pairs,
               if (run$backend == "cuda") 2L else 1L, threads, run$devices,
               NULL, NULL, NULL, 1L, progress)
  elapsed <- proc.time()[["elapsed"]] - start
  slots <- res$slots[, 1L]
  nb <- length(edges) - 1L
  n1 <- as.double(nrow(a))          # double: n1 * n2 overflows integers
  n2 <- if (is.null(b)) n1 else as.double(nrow(b))
  n_pairs <- if (!is.null(b)) n1 * n2 else if (self_pairs) n1^2 else
    n1 * (n1 - 1) / 2
  structure(list(
    counts = slots[seq_len(nb) + 1L],
    edges = edges,
    theta_lo = edges[-(nb + 1L)],
    theta_hi = edges[-1L],
    n1 = n1,
    n2 = n2,
    type = if (is.null(b)) "auto" else "cross",
    self_pairs = self_pairs,
    n_pairs = n_pairs,
    n_below = slots[1L],
    n_above = slots[nb + 2L],
    n_outside = slots[1L] + slots[nb + 2L],
    backend = run$backend,
    devices = run$devices,
    threads = if (run$backend == "cpu") threads else NA_integer_,
    elapsed = elapsed,
    gpu_ms = if (run$backend == "cuda") res$gpu_ms else NA_real_
  ), class = "pair_counts")
}

progress_or_default <- function(progress) {
  if (is.null(progress)) progress <- getOption("wtheta.progress", interactive())
  check_flag(progress, "progress")
  progress
}

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
