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
#'   fitted points of each (`n`); attribute `seed` records `seed`. `patch_labels()`: an integer vector, the
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
            centres = centres, seed = if (!is.null(seed)) as.integer(seed))
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

# a catalog's unit vectors, patch numbers (1..n) and weights (or NULL),
# grouped by patch in C (a stable counting sort); the labels carry the
# [start, end) ranges of the patches as attribute "ranges", which
# count_pairs() trusts (subsetting drops it); bits (PIP words) and lab
# (sample labels of a labelled count), when given, follow the points
group_patches <- function(xyz, p, n, w = NULL, bits = NULL, lab = NULL) {
  g <- with_ranges(.Call(C_group_patches, xyz, as.integer(p), as.integer(n),
                         if (!is.null(w)) as.double(w)))
  # bitwise words (PIP) and sample labels in the same order: the grouping
  # is stable (wt_group_by_label), as order() by label is
  if (!is.null(bits) || !is.null(lab)) {
    o <- order(as.integer(p), method = "radix")
    if (!is.null(bits)) g$bits <- bits[o, , drop = FALSE]
    if (!is.null(lab)) g$lab <- lab[o]
  }
  g
}

# the same from a checked catalog and patch centres (a k x 3 matrix of unit
# vectors): unit vectors, nearest centres and grouping in one C call
patch_vectors <- function(cat, centres, w, threads) {
  storage.mode(centres) <- "double"
  with_ranges(.Call(C_patch_vectors, cat$ra, cat$dec, centres,
                    if (!is.null(w)) as.double(w), threads))
}

with_ranges <- function(g) {
  end <- cumsum(g$counts)
  n <- length(end)
  attr(g$labels, "ranges") <- cbind(start = c(0, end[-n]), end = end)
  g
}

# a checked catalog (ra, dec) with weights (original order, or NULL)
# given the patches of sky_patches(): unit vectors, nearest centres and
# grouping in one C call
patch_catalog <- function(cat, w, patches, threads, bits = NULL) {
  if (!is.null(bits)) {
    # bitwise words (PIP) follow their points: the grouping's order, read
    # from the point numbers grouped as weights
    g <- patch_vectors(cat, attr(patches, "centres"),
                       as.double(seq_len(nrow(cat))), threads)
    ord <- as.integer(g$weights)
    return(new_wtheta_prepared(cat, g$xyz, if (!is.null(w)) w[ord],
                               g$labels, patches,
                               bits = bits[ord, , drop = FALSE]))
  }
  g <- patch_vectors(cat, attr(patches, "centres"), w, threads)
  new_wtheta_prepared(cat, g$xyz, if (!is.null(w)) g$weights, g$labels,
                     patches)
}

# The one set of patches of a call with resampling, as the catalogs are to
# carry it: list(kind = "centres", patches = <wtheta_patches>) or
# list(kind = "labels", labels = <sorted union>, numbers = <per catalog,
# or NULL for prepared ones>). `cats` holds prepared catalogs and checked
# unprepared ones (ra, dec); `users` the user's objects.
call_patches <- function(patches, users, cats, prepared, n_patches, seed,
                         threads, fit_on) {
  carried <- lapply(cats[prepared], `[[`, "patches")
  carried <- carried[!vapply(carried, is.null, TRUE)]
  kinds <- vapply(carried, function(p) if (inherits(p, "wtheta_patches"))
    "centres" else "labels", "")
  if (length(unique(kinds)) > 1L) {
    stop("prepared catalogs `", names(kinds)[kinds == "centres"][1L],
         "` (k-means patches) and `", names(kinds)[kinds == "labels"][1L],
         "` (labelled patches) have different patches; prepare them with ",
         "the same patches.", call. = FALSE)
  }
  if (!is.null(patches) && !inherits(patches, "wtheta_patches") &&
      any(prepared)) {
    stop("`patches` as labels needs unprepared catalogs; give the labels ",
         "to prepare_catalog() instead (`", names(cats)[prepared][1L],
         "` is prepared).", call. = FALSE)
  }
  if (length(carried) && kinds[[1L]] == "centres" || !length(carried) &&
      (is.null(patches) || inherits(patches, "wtheta_patches"))) {
    ref <- if (!is.null(patches)) patches else if (length(carried))
      carried[[1L]]
    ref_name <- if (!is.null(patches)) "`patches`" else
      paste0("`", names(carried)[1L], "`")
    for (nm in names(carried)) {
      if (!identical(attr(carried[[nm]], "centres"), attr(ref, "centres"))) {
        stop("the prepared catalog `", nm, "` has other patches than ",
             ref_name, " (different sky_patches() centres); every catalog ",
             "of a call must have the same patches.", call. = FALSE)
      }
    }
    if (is.null(ref)) {
      fit <- cats[[fit_on]]
      ref <- fit_patches(if (prepared[[fit_on]]) fit$radec else fit, fit_on,
                         n_patches, seed %||% default_seed, threads = threads)
    }
    return(list(kind = "centres", patches = ref))
  }
  if (length(carried)) {
    plain <- names(cats)[!names(cats) %in% names(carried)]
    if (length(plain)) {
      stop("`", plain[1L], "` has no patch labels, but the prepared ",
           "catalog `", names(carried)[1L], "` is labelled; prepare every ",
           "catalog of the call with labels.", call. = FALSE)
    }
    num <- vapply(carried, is.numeric, TRUE)
    if (any(num) && !all(num)) {
      stop("prepared catalogs `", names(carried)[num][1L], "` and `",
           names(carried)[!num][1L], "` have patch labels of different ",
           "types (numbers and strings); labels are matched by value, so ",
           "give them one type.", call. = FALSE)
    }
    labels <- sort(unique(unlist(carried, use.names = FALSE)))
    if (length(labels) > max_patches) {
      stop("`patches` must hold at most ", format_n(max_patches),
           " distinct labels, not ", format_n(length(labels)), ".",
           call. = FALSE)
    }
    return(list(kind = "labels", labels = labels, numbers = NULL))
  }
  pn <- patch_numbers(object_values(patches, users, "patches",
                                    numeric = FALSE))
  list(kind = "labels", labels = pn$labels, numbers = pn$numbers)
}

# a labelled prepared catalog numbered by the union `labels` of the call:
# its own labels are a sorted subset, so the points keep their order and
# only the numbers and ranges change
relabel_catalog <- function(x, labels) {
  if (identical(x$patches, labels)) return(x)
  map <- match(x$patches, labels)
  counts <- integer(length(labels))
  r <- attr(x$patch, "ranges")
  counts[map] <- as.integer(r[, 2L] - r[, 1L])
  p <- map[x$patch]
  end <- cumsum(counts)
  attr(p, "ranges") <- cbind(start = c(0, end[-length(end)]), end = end)
  x$patch <- p
  x$patches <- labels
  x
}

# the patches of a call's counts in n_patches terms
catalog_n_patches <- function(x) {
  if (is.null(x$patch)) 0L else nrow(attr(x$patch, "ranges"))
}

# every patch needs randoms
check_random_patches <- function(randoms, pat) {
  labels <- if (pat$kind == "labels") pat$labels else
    seq_len(nrow(pat$patches))
  for (r in randoms) {
    rg <- attr(r$patch, "ranges")
    empty <- which(rg[, 2L] - rg[, 1L] == 0)
    if (length(empty)) {
      stop("patch ", dQuote(label_text(labels[empty[1L]]), FALSE),
           " holds no random ",
           "point; every patch needs randoms.", call. = FALSE)
    }
  }
}

# The seed of the patches wtheta() and wtheta_multi() fit, and of the
# bootstrap draws (plus one), when `seed` is NULL: errors are the same
# from one call to the next unless the user asks for other patches
default_seed <- 1L

# The seed a result used: that of its bootstrap draws, or of the k-means
# patches it was counted with (recorded by fit_patches(); none for patches
# fitted without a seed or given as labels); NULL without resampling
seed_used <- function(error, seed, patches) {
  if (error == "bootstrap") return(as.integer(seed %||% default_seed))
  if (error == "jackknife") return(attr(patches, "seed", exact = TRUE))
  NULL
}

# The typical size of the patches of a prepared, grouped catalog (the
# randoms), in degrees: the median over patches of 2 sqrt(2) times the rms
# angle of a patch's points from their mean direction (the diameter of a
# uniform disc with that rms), from at most 400 points of each patch, spread
# evenly over its range
patch_size <- function(cat) {
  r <- attr(cat$patch, "ranges")
  if (is.null(r)) return(NA_real_)
  # in C (wt_r_patch_sizes(): a loop over patches in R took 7-9 ms at 100)
  stats::median(.Call(C_patch_sizes, cat$xyz, r), na.rm = TRUE)
}

# the most patches: the n^2 histograms of pairs of patches are numbered
# by R integers
max_patches <- 46340L

check_n_patches <- function(n) {
  check_count(n, "n_patches", max_patches,
              " (n_patches^2 histograms of pairs of patches are numbered)")
}

check_labels <- function(v, where) {
  if (is.factor(v)) v <- as.character(v)
  if (!is.atomic(v) || is.object(v) || !(is.numeric(v) || is.character(v))) {
    stop(where, " must be patch labels (integer, character or factor), not ",
         describe(v), ".", call. = FALSE)
  }
  bad <- which(is.na(v))
  if (length(bad)) {
    stop(where, " has a missing patch label in row ", bad[1L], ".",
         call. = FALSE)
  }
  v
}

# the sorted union of the labels of every catalog: numbers compared by
# value (as.character() keeps 15 digits, and 1e15 and 1e15 + 1 would merge),
# or strings; labels of both kinds are refused
patch_levels <- function(p) {
  num <- vapply(p, is.numeric, TRUE)
  if (any(num) && !all(num)) {
    stop("`patches` gives numeric labels for `", names(p)[num][1L],
         "` but character or factor labels for `", names(p)[!num][1L],
         "`; labels are matched by value, so give them one type.",
         call. = FALSE)
  }
  all <- unique(unlist(lapply(p, function(v) unique(v)), use.names = FALSE))
  lv <- sort(all)
  if (length(lv) < 2L) {
    stop("`patches` must hold at least two distinct labels, not ",
         length(lv), ".", call. = FALSE)
  }
  if (length(lv) > max_patches) {
    stop("`patches` must hold at most ", format_n(max_patches),
         " distinct labels, not ", format_n(length(lv)), ".", call. = FALSE)
  }
  lv
}

# patch labels of each catalog as numbers 1..n: list(labels, numbers), the
# labels sorted as patch_levels() gives them
patch_numbers <- function(p) {
  labels <- patch_levels(p)
  list(labels = labels, numbers = lapply(p, function(v) match(v, labels)))
}

# a patch label in a message: a number with the digits that tell it apart
label_text <- function(x) {
  if (!is.numeric(x)) return(as.character(x))
  s <- format(x, digits = 15)
  if (as.numeric(s) != x) s <- format(x, digits = 17)
  s
}
