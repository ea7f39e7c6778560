#' Patches on the sky for jackknife and bootstrap errors
#'
#' `sky_patches()` divides a footprint into `n_patches` compact patches by
#' k-means on the unit sphere (spherical k-means: points go to the centre
#' of largest dot product, a centre is the normalised mean of its points),
#' started by k-means++ seeding. Fit it to the random catalog, which covers
#' the footprint evenly, so that patches have about equal area.
#' `patch_labels()` gives each point of a catalog the number of its nearest
#' centre.
#'
#' @param x A catalog (see [pair_counts()]).
#' @param n_patches Number of patches, from 2 to the points fitted (the
#'   smaller of `max_points` and the rows of `x`).
#' @param seed A whole number (an R integer other than `NA`) seeding a
#'   reproducible division (the global random state is left as it was), or
#'   `NULL` to use the session's random state.
#' @param iter Most k-means iterations.
#' @param max_points The fit uses a random subset of at most this many
#'   points; the rest only get labels. On the classic 10^5-point random
#'   catalog, fits to 10^4 and to all points give patches of the same spread
#'   of sizes, in a tenth of the time (see NEWS).
#' @param columns Names of the right ascension and declination columns.
#' @param threads CPU threads, as in [pair_counts()]; defaults to
#'   [wtheta_threads()].
#' @param patches A result of `sky_patches()`.
#' @return `sky_patches()`: a data frame of class `wtheta_patches` with the
#'   centres (`ra`, `dec`, degrees), one row per patch, and the number of
#'   fitted points of each (`n`). `patch_labels()`: an integer vector, the
#'   patch (row of `patches`) of each point of `x`.
#' @seealso [wtheta()] with `error = "jackknife"` or `"bootstrap"`, which makes
#'   patches itself unless given some; [pair_counts()] with `patches`.
#' @examples
#' ran <- random_catalog(5000, seed = 1)
#' p <- sky_patches(ran, n_patches = 8, seed = 1)
#' p
#' table(patch_labels(p, ran))
#' @export
sky_patches <- function(x, n_patches = 20, seed = NULL, iter = 50,
                        max_points = 10000, columns = c("ra", "dec"),
                        threads = NULL) {
  fit_patches(as_catalog(x, "x", columns), "x", n_patches, seed, iter,
              max_points, threads_or_default(threads))
}

# sky_patches() on a checked catalog; `arg` names it in messages (wtheta()
# fits its `random`)
fit_patches <- function(cat, arg, n_patches, seed, iter = 50,
                        max_points = 10000, threads = wtheta_threads()) {
  check_n_patches(n_patches)
  check_count(iter, "iter")
  check_count(max_points, "max_points")
  check_seed(seed)
  if (n_patches < 2) {
    stop("`n_patches` must be at least 2, not ", n_patches, ".",
         call. = FALSE)
  }
  if (n_patches > nrow(cat)) {
    stop("`n_patches` (", n_patches, ") exceeds the number of points of `",
         arg, "` (", nrow(cat), ").", call. = FALSE)
  }
  if (n_patches > max_points) {
    stop("`n_patches` (", n_patches, ") exceeds `max_points` (", max_points,
         "), the points the k-means fits; raise `max_points` or ask for ",
         "fewer patches.", call. = FALSE)
  }
  with_seed(seed, {
    if (nrow(cat) > max_points) cat <- cat[sample.int(nrow(cat), max_points), ]
    # k-means++ seeding and Lloyd's iterations run in C, seeded by
    # n_patches uniform draws from R's random stream
    fit <- .Call(C_kmeans, unit_vectors(cat, threads),
                 stats::runif(n_patches), as.integer(iter), threads)
    centres <- fit[[1L]]
    lab <- fit[[2L]]
  })
  out <- data.frame(ra = (atan2(centres[, 2L], centres[, 1L]) * (180 / pi)) %% 360,
                    dec = asin(pmin(1, pmax(-1, centres[, 3L]))) * (180 / pi),
                    n = tabulate(lab, n_patches))
  structure(out, class = c("wtheta_patches", "data.frame"),
            centres = centres)
}

#' @rdname sky_patches
#' @export
patch_labels <- function(patches, x, columns = c("ra", "dec"),
                         threads = NULL) {
  if (!inherits(patches, "wtheta_patches")) {
    stop("`patches` must come from sky_patches(), not ", describe(patches),
         ".", call. = FALSE)
  }
  cat <- as_catalog(x, "x", columns)
  threads <- threads_or_default(threads)
  nearest_centre(unit_vectors(cat, threads), attr(patches, "centres"),
                 threads)
}

# the centre of largest dot product (x cx + y cy) + z cz for each row of u,
# the first on ties (in C: a 10^5 x 20 max.col took tens of ms)
nearest_centre <- function(u, centres, threads = wtheta_threads()) {
  storage.mode(centres) <- "double"
  .Call(C_nearest_centre, u, centres, threads)
}

#' @export
print.wtheta_patches <- function(x, ...) {
  cat("<wtheta_patches> ", nrow(x), " patches on the unit sphere; fitted ",
      "points per patch: ", min(x$n), " to ", max(x$n), "\n", sep = "")
  print(as.data.frame(unclass(x))[seq_len(min(nrow(x), 6L)), ],
        row.names = FALSE, digits = 5)
  if (nrow(x) > 6L) cat("  ... ", nrow(x) - 6L, " more patches\n", sep = "")
  invisible(x)
}
