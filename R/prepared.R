#' Prepare a catalog once for many counts
#'
#' Does once what every count does to a catalog: checks its positions,
#' turns them into unit vectors, reads its weights and gives each point a
#' patch (k-means centres or labels), grouping the points by patch. The
#' result can be given wherever a catalog is taken ([pair_counts()],
#' [wtheta()], [wtheta_multi()]), as often as needed: a random catalog
#' prepared once serves every data catalog. Results are those of the same
#' call with the unprepared catalog (see Details for the one exception).
#'
#' The object also holds `handle`, an environment made when the catalog is
#' prepared and shared by its copies: the counting engine may keep what it
#' builds for the catalog there (its spatial grid), so that counts that
#' reuse the catalog reuse it too.
#'
#' A prepared catalog with patches is used by jackknife and bootstrap
#' errors as it is: every catalog of a call must then have the same patches
#' (the same [sky_patches()] centres, or labels of one type, numbers or
#' strings, numbered together), and unprepared catalogs of the call get
#' the prepared catalogs' centres. Catalogs with other centres are
#' refused. Without resampling a prepared catalog's patches are ignored;
#' its points are then counted in their patch order, which leaves the pair
#' counts unchanged and can change weighted counts in the last bits only.
#'
#' Weights given to `prepare_catalog()` stay with the catalog; the
#' `weights` argument of [wtheta()] and [pair_counts()] applies to the
#' catalogs given unprepared. When some catalogs of a call are weighted,
#' the others have unit weights, as with a weight column that only some
#' catalogs have.
#'
#' @param x A catalog (see [pair_counts()] for the form).
#' @param weights `NULL`, the name of a column of `x`, or a numeric vector
#'   with one weight per row.
#' @param patches `NULL`, a result of [sky_patches()] (its centres), or
#'   labels: the name of a column of `x` or a vector with one label per
#'   row.
#' @param n_patches With `patches = NULL`, the number of patches that
#'   [sky_patches()] makes on `x` itself (seeded by `seed`); `NULL` for no
#'   patches.
#' @param seed Seeds the k-means patches, as in [sky_patches()].
#' @param columns Names of the right ascension and declination columns.
#' @param threads CPU threads, as in [pair_counts()].
#' @param bitwise Bitwise weights (PIP): `NULL`, the names of columns of
#'   `x` or a matrix with one row per object, as `bitwise` of
#'   [pair_counts()] takes them for one catalog. They stay with the
#'   catalog: every count of it is then PIP-weighted (with the call's
#'   `nrealizations`, `noffset`, `default_value`), as its weights are used.
#' @return A list of class `wtheta_prepared`: `xyz` (an n x 3 matrix of unit
#'   vectors, grouped by patch when there are patches), `weights` (aligned
#'   with `xyz`, or `NULL`), `patch` (patch numbers aligned with `xyz`, with
#'   attribute `ranges`, or `NULL`), `patches` (the [sky_patches()] result
#'   or the sorted labels, or `NULL`), `n`, `radec` (the checked right
#'   ascensions and declinations in their original order, for
#'   [footprint_check()] and for giving the catalog patches later),
#'   `handle` and `bits` (the bitwise words as an n x k integer matrix of
#'   32-bit words, aligned with `xyz`, or `NULL`).
#' @seealso [wtheta_multi()], [wtheta_from_counts()].
#' @examples
#' ran <- random_catalog(4000, seed = 2)
#' rp <- prepare_catalog(ran, n_patches = 8, seed = 1)
#' rp
#' sim <- simulate_catalog(2000, seed = 1)
#' b <- theta_bins(0.1, 5, n = 6, log = TRUE)
#' w <- wtheta(sim, rp, b, error = "jackknife", threads = 1)
#' attr(w, "n_patches")
#' @export
prepare_catalog <- function(x, weights = NULL, patches = NULL,
                            n_patches = NULL, seed = NULL,
                            columns = c("ra", "dec"), threads = NULL,
                            bitwise = NULL) {
  if (inherits(x, "wtheta_prepared")) {
    stop("`x` is a prepared catalog already; prepare the catalog it came ",
         "from to change its weights or patches.", call. = FALSE)
  }
  cat <- as_catalog(x, "x", columns)
  threads <- threads_or_default(threads)
  w <- NULL
  if (!is.null(weights)) {
    if (is.list(weights)) {
      stop("`weights` must be NULL, a column name or a numeric vector, not ",
           describe(weights), ".", call. = FALSE)
    }
    w <- object_values(list(x = weights), list(x = x), "weights",
                       numeric = TRUE)$x
    check_weight_products(list(x = w))
  }
  # bitwise weights (PIP): the words, grouped with the points below
  bits <- if (!is.null(bitwise)) {
    call_bitwise(list(x = bitwise), list(x = x), c(x = FALSE))$x
  }
  if (!is.null(n_patches) && !is.null(patches)) {
    stop("give `patches` or `n_patches`, not both.", call. = FALSE)
  }
  check_seed(seed)
  if (!is.null(n_patches)) {
    patches <- fit_patches(cat, "x", n_patches, seed, threads = threads)
  }
  if (is.null(patches)) {
    return(new_wtheta_prepared(cat, unit_vectors(cat, threads), w,
                               bits = bits))
  }
  if (inherits(patches, "wtheta_patches")) {
    return(patch_catalog(cat, w, patches, threads, bits))
  }
  if (is.list(patches)) {
    stop("`patches` must be NULL, a result of sky_patches(), a column name ",
         "or a vector of labels, not ", describe(patches), ".",
         call. = FALSE)
  }
  v <- object_values(list(x = patches), list(x = x), "patches",
                     numeric = FALSE)
  pn <- patch_numbers(v)
  g <- group_patches(unit_vectors(cat, threads), pn$numbers$x,
                     length(pn$labels), w, bits)
  new_wtheta_prepared(cat, g$xyz, if (!is.null(w)) g$weights, g$labels,
                     pn$labels, bits = g$bits)
}

new_wtheta_prepared <- function(radec, xyz, weights = NULL, patch = NULL,
                               patches = NULL, bits = NULL) {
  structure(list(xyz = xyz, weights = weights, patch = patch,
                 patches = patches, n = nrow(xyz), radec = radec,
                 handle = new_catalog_handle(), bits = bits),
            class = "wtheta_prepared")
}

#' @export
print.wtheta_prepared <- function(x, ...) {
  p <- x$patches
  what <- if (is.null(p)) "no patches" else
    if (inherits(p, "wtheta_patches")) paste(nrow(p), "k-means patches") else
      paste(length(p), "labelled patches")
  bytes <- utils::object.size(unclass(x)[c("xyz", "weights", "patch",
                                           "patches", "radec")])
  cat("<wtheta_prepared> ", format_n(x$n), " points, ",
      if (is.null(x$weights)) "unweighted" else "weighted",
      if (!is.null(x$bits)) paste0(", ", 32 * ncol(x$bits),
                                   " bitwise realisations"), ", ", what,
      "\n  unit vectors", if (!is.null(x$patch)) " grouped by patch",
      "; ", format(structure(bytes, class = "object_size"), units = "auto"),
      " in R", if (length(ls(x$handle))) "; engine data cached", "\n",
      sep = "")
  invisible(x)
}
