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
#' @return A list of class `wtheta_prepared`: `xyz` (an n x 3 matrix of unit
#'   vectors, grouped by patch when there are patches), `weights` (aligned
#'   with `xyz`, or `NULL`), `patch` (patch numbers aligned with `xyz`, with
#'   attribute `ranges`, or `NULL`), `patches` (the [sky_patches()] result
#'   or the sorted labels, or `NULL`), `n`, `radec` (the checked right
#'   ascensions and declinations in their original order, for
#'   [footprint_check()] and for giving the catalog patches later) and
#'   `handle`.
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
                            columns = c("ra", "dec"), threads = NULL) {
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
  if (!is.null(n_patches) && !is.null(patches)) {
    stop("give `patches` or `n_patches`, not both.", call. = FALSE)
  }
  check_seed(seed)
  if (!is.null(n_patches)) {
    patches <- fit_patches(cat, "x", n_patches, seed, threads = threads)
  }
  if (is.null(patches)) {
    return(new_wtheta_prepared(cat, unit_vectors(cat, threads), w))
  }
  if (inherits(patches, "wtheta_patches")) {
    return(patch_catalog(cat, w, patches, threads))
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
                     length(pn$labels), w)
  new_wtheta_prepared(cat, g$xyz, if (!is.null(w)) g$weights, g$labels,
                     pn$labels)
}

new_wtheta_prepared <- function(radec, xyz, weights = NULL, patch = NULL,
                               patches = NULL) {
  structure(list(xyz = xyz, weights = weights, patch = patch,
                 patches = patches, n = nrow(xyz), radec = radec,
                 handle = new_catalog_handle()),
            class = "wtheta_prepared")
}

# a checked catalog (ra, dec) with weights (original order, or NULL)
# given the patches of sky_patches(): unit vectors, nearest centres and
# grouping in one C call
patch_catalog <- function(cat, w, patches, threads) {
  g <- patch_vectors(cat, attr(patches, "centres"), w, threads)
  new_wtheta_prepared(cat, g$xyz, if (!is.null(w)) g$weights, g$labels,
                     patches)
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
      if (is.null(x$weights)) "unweighted" else "weighted", ", ", what,
      "\n  unit vectors", if (!is.null(x$patch)) " grouped by patch",
      "; ", format(structure(bytes, class = "object_size"), units = "auto"),
      " in R", if (length(ls(x$handle))) "; engine data cached", "\n",
      sep = "")
  invisible(x)
}

# The user's catalogs of one call (named by argument), checked: prepared
# ones as they are, the others as_catalog() (ra, dec). Also says which are
# prepared.
checked_catalogs <- function(users, columns) {
  prepared <- vapply(users, inherits, TRUE, "wtheta_prepared")
  cats <- lapply(names(users), function(nm) {
    if (prepared[[nm]]) users[[nm]] else as_catalog(users[[nm]], nm, columns)
  })
  list(cats = stats::setNames(cats, names(users)), prepared = prepared)
}

# points of a checked or prepared catalog
catalog_size <- function(x) {
  if (inherits(x, "wtheta_prepared")) x$n else nrow(x)
}

# ra and dec of a checked or prepared catalog, in its first order
catalog_radec <- function(x) {
  if (inherits(x, "wtheta_prepared")) x$radec else x
}

# weights of every catalog of a call (a list like object_values() gives, or
# NULL when none is weighted). Prepared catalogs keep theirs; `weights`
# applies to the others.
call_weights <- function(weights, users, prepared) {
  raw <- names(users)[!prepared]
  if (is.list(weights) && !is.data.frame(weights)) {
    bad <- intersect(names(weights), names(users)[prepared])
    if (length(bad)) {
      stop("`weights$", bad[1L], "`: `", bad[1L], "` is a prepared catalog, ",
           "whose weights were set by prepare_catalog().", call. = FALSE)
    }
  }
  prep_w <- lapply(users[prepared], `[[`, "weights")
  any_prep_w <- any(!vapply(prep_w, is.null, TRUE))
  w <- NULL
  if (!is.null(weights)) {
    if (!length(raw)) {
      stop("`weights` applies to catalogs given unprepared, and every ",
           "catalog is prepared: give weights to prepare_catalog().",
           call. = FALSE)
    }
    named_absent <- is.character(weights) && length(weights) == 1L &&
      !is.na(weights) && !any(vapply(users[raw], function(x)
        weights %in% colnames(x), TRUE))
    if (!(named_absent && any_prep_w)) {
      w <- object_values(weights, users[raw], "weights", numeric = TRUE)
    }
  }
  if (is.null(w) && !any_prep_w) return(NULL)
  out <- lapply(names(users), function(nm) {
    if (prepared[[nm]]) prep_w[[nm]] %||% rep(1, users[[nm]]$n) else
      w[[nm]] %||% rep(1, NROW(users[[nm]]))
  })
  stats::setNames(out, names(users))
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
                         n_patches, seed, threads = threads)
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

# every catalog of a call as a wtheta_prepared with weights `w` (from
# call_weights()) and, with `pat` (from call_patches()), the call's patches
call_catalogs <- function(cats, prepared, w, pat, threads) {
  # the unit vectors of the catalogs given as coordinates, in one pass
  plain <- names(cats)[!unlist(prepared[names(cats)]) &
                         (is.null(pat) || pat$kind != "centres")]
  xyz <- stats::setNames(unit_vectors_of(cats[plain], threads), plain)
  out <- lapply(names(cats), function(nm) {
    x <- cats[[nm]]
    if (prepared[[nm]]) {
      given <- x
      if (is.null(pat)) {
        x$patch <- NULL
        x$patches <- NULL
      } else if (is.null(x$patch)) {
        # prepared without patches: its points are in their first order;
        # grouped by patch they are another catalog, with its own handle
        if (pat$kind != "centres") {
          stop("wtheta internal: labels for an unlabelled catalog",
               call. = FALSE)
        }
        own <- patch_catalog(x$radec, w[[nm]], pat$patches, threads)
        own$own <- TRUE
        return(own)
      } else if (pat$kind == "labels") {
        x <- relabel_catalog(x, pat$labels)
      }
      if (!is.null(w) && is.null(x$weights)) x$weights <- w[[nm]]
      # other weights or patch ranges make another C catalog: one of this
      # call's own, so that the handle the user holds keeps its grid
      if (!identical(x$weights, given$weights) ||
          !identical(x$patch, given$patch)) {
        x$handle <- new_catalog_handle()
        x$own <- TRUE
      }
      return(x)
    }
    own <- if (is.null(pat)) {
      new_wtheta_prepared(x, xyz[[nm]], w[[nm]])
    } else if (pat$kind == "centres") {
      patch_catalog(x, w[[nm]], pat$patches, threads)
    } else {
      g <- group_patches(xyz[[nm]], pat$numbers[[nm]],
                         length(pat$labels), w[[nm]])
      new_wtheta_prepared(x, g$xyz, if (!is.null(w)) g$weights, g$labels,
                          pat$labels)
    }
    own$own <- TRUE
    own
  })
  stats::setNames(out, names(cats))
}

# frees the grids of the C catalogs a call made for itself (those of
# catalogs prepared by the user stay for their next calls)
release_catalogs <- function(cats) {
  for (x in cats) if (isTRUE(x$own)) catalog_release(x$handle)
  invisible(NULL)
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

# The one place where the functions that take catalogs count: prepared
# catalogs `ca` and `cb` (NULL for auto pairs) through count_planned(),
# with their unit vectors, weights and patch numbers. `label` names the
# count in a checkpoint. The result carries the catalogs' patches.
count_catalogs <- function(how, ca, cb, edges, self_pairs, threads, progress,
                           label = "pairs", defer = FALSE) {
  pc <- count_planned(how, ca$xyz, cb$xyz, edges, self_pairs, threads,
                      progress, ca$weights, cb$weights, ca$patch, cb$patch,
                      catalog_n_patches(ca), label = label, ha = ca$handle,
                      hb = cb$handle, defer = defer)
  with_patches <- function(pc) {
    if (!is.null(ca$patch)) pc$patches <- ca$patches
    pc
  }
  if (defer) deferred_then(pc, with_patches) else with_patches(pc)
}

# the count of cb x ca from that of ca x cb: the same pairs, with the
# catalogs' roles (n, weight sums, patch axes) swapped
transpose_counts <- function(pc) {
  if (pc$type != "cross") {
    stop("wtheta internal: only cross counts transpose", call. = FALSE)
  }
  swap <- function(x, a, b) {
    t <- x[[a]]
    x[a] <- list(x[[b]])
    x[b] <- list(t)
    x
  }
  pc <- swap(pc, "n1", "n2")
  for (k in c("sum_w1", "sum_w1_sq", "patch_n1", "patch_w1",
              "patch_w1_sq")) {
    if (!is.null(pc[[k]])) pc <- swap(pc, k, sub("1", "2", k))
  }
  for (k in c("patch_counts", "patch_weighted")) {
    if (!is.null(pc[[k]])) pc[[k]] <- aperm(pc[[k]], c(2L, 1L, 3L))
  }
  pc
}
