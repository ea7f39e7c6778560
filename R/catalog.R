# Validates a catalog given by the user and returns data.frame(ra, dec) in
# degrees with ra reduced to [0, 360). `arg` names the argument in messages.
# The columns are found by name ignoring case, as read_catalog() finds a
# file's.
#
# Accepted: data frames (tibbles and data.tables are data frames) and
# matrices with the two columns by name; integer and double columns. Refused
# with an error naming the argument and column: factors, characters, logical,
# list and matrix columns, classed numbers (dates, integer64), non-finite
# values, declinations outside [-90, 90], and two columns of a name it needs
# (which one is meant cannot be known). `threads`: the check's pass
# (threads_or_default(): NULL is wtheta_threads()).
as_catalog <- function(x, arg, columns = c("ra", "dec"), threads = NULL) {
  if (!is.character(columns) || length(columns) != 2L || anyNA(columns) ||
      tolower(columns[1L]) == tolower(columns[2L])) {
    stop("`columns` must be two distinct column names (ra, dec), not ",
         describe(columns), ".", call. = FALSE)
  }
  if (is.matrix(x)) {
    if (!is.numeric(x)) {
      stop("`", arg, "` is a matrix of type ", typeof(x), "; it must be ",
           "numeric.", call. = FALSE)
    }
    x <- as.data.frame(x)
  }
  if (!is.data.frame(x)) {
    stop("`", arg, "` must be a data frame with columns ",
         paste(columns, collapse = " and "), ", not ", describe(x), ".",
         call. = FALSE)
  }
  # names matched ignoring case, as read_catalog() matches a file's: "RA"
  # is `ra`; two columns that answer to one name (ra and RA) are an error,
  # as which one is meant cannot be known
  idx <- match_names(columns, names(x), paste0("`", arg, "`"),
                     ignore_case = TRUE)
  if (anyNA(idx)) {
    stop("`", arg, "` has no column ", dQuote(columns[is.na(idx)][1L], FALSE),
         " (its columns: ", paste(names(x), collapse = ", "), "; names ",
         "are matched ignoring case).", call. = FALSE)
  }
  columns <- names(x)[idx]
  cols <- lapply(seq_along(idx), function(k) {
    nm <- columns[k]
    v <- x[[idx[k]]]
    if (!is.numeric(v) || is.object(v) || !is.null(dim(v))) {
      what <- if (is.factor(v)) "a factor" else if (is.list(v)) {
        "a list column"
      } else if (!is.null(dim(v))) {
        "a matrix column"
      } else if (is.object(v)) {
        paste0("an object of class ", class(v)[1L])
      } else {
        paste0("of type ", typeof(v))
      }
      stop("`", arg, "` column ", dQuote(nm, FALSE), " must be numeric, not ",
           what, ".", call. = FALSE)
    }
    as.double(v)
  })
  check_catalog(list(ra = cols[[1L]], dec = cols[[2L]]), arg,
                columns = columns, threads = threads)
}

# Where each name of `want` is among the column names `have` (NA when
# absent), compared exactly or, with ignore_case, as files' column names
# are. Two columns that answer to one name are an error naming `what` and
# both columns: which one is meant cannot be known. Data frames, FITS and
# text headers and HDF5 groups resolve names through this.
match_names <- function(want, have, what, ignore_case = FALSE) {
  if (is.null(have)) return(rep(NA_integer_, length(want)))
  key <- if (ignore_case) tolower(have) else have
  vapply(want, function(nm) {
    i <- which(key == if (ignore_case) tolower(nm) else nm)
    if (length(i) > 1L) {
      stop(what, " has ", length(i), " columns named ", dQuote(nm, FALSE),
           if (ignore_case) ", ignoring case", " (columns ",
           paste(i, collapse = " and "), if (ignore_case)
             paste0(": ", paste(have[i], collapse = ", ")),
           "); rename all but one.", call. = FALSE)
    }
    if (length(i)) i else NA_integer_
  }, 1L, USE.NAMES = FALSE)
}

check_catalog <- function(cat, arg, columns = c("ra", "dec"),
                          threads = NULL) {
  n <- length(cat$ra)
  if (!n) stop("`", arg, "` is empty: it has no rows.", call. = FALSE)
  # one pass in C on up to `threads` threads (a light pass; 10^8 rows took
  # 0.41 s on one): first non-finite ra, dec; first dec out of range; any
  # ra outside [0, 360)
  bad <- .Call(C_check_coords, cat$ra, cat$dec, threads_or_default(threads))
  for (k in 1:2) {
    if (bad[k] > 0) {
      stop("`", arg, "` column ", dQuote(columns[k], FALSE), " has a ",
           "non-finite value (", format(cat[[k]][bad[k]]), ") in row ",
           sprintf("%.0f", bad[k]), ".", call. = FALSE)
    }
  }
  if (bad[3L] > 0) {
    stop("`", arg, "` column ", dQuote(columns[2L], FALSE), " (declination) ",
         "must lie in [-90, 90] degrees; row ", sprintf("%.0f", bad[3L]),
         " has ",
         format(cat$dec[bad[3L]], digits = 15), ".", call. = FALSE)
  }
  ra <- cat$ra
  # reduced exactly in C (fmod), however large: R's %% loses accuracy
  # beyond 2^53 degrees
  if (bad[4L] > 0) ra <- .Call(C_reduce_ra, ra)
  # a plain data frame, built directly (data.frame() is slow on 10^6 rows)
  structure(list(ra = ra, dec = cat$dec), class = "data.frame",
            row.names = c(NA_integer_, -n))
}

`%||%` <- function(a, b) if (is.null(a)) b else a

# A checked catalog as an n x 3 matrix of unit vectors, made once per
# catalog (the exactness contract fixes how: see ?wtheta-package).
unit_vectors <- function(cat, threads) {
  unit_vectors_of(list(cat), threads)[[1L]]
}

# the same for a list of checked catalogs: one light pass over all their
# points (one team of threads), a list of matrices
unit_vectors_of <- function(cats, threads) {
  .Call(C_unit_vectors, lapply(cats, `[[`, "ra"), lapply(cats, `[[`, "dec"),
        threads)
}

# Catalog handles: an environment that holds a C catalog (src/core/
# catalog.c: unit vectors, weights, patch ranges and the grid its first
# counts build) once a count has used it, so that every count of a
# wtheta() call, and every copy of an R object carrying the environment,
# shares one C catalog and sorts and builds its grid once.
new_catalog_handle <- function() new.env(parent = emptyenv())

# the C catalog of handle for unit vectors xyz, weights w (NULL: none),
# bitwise words bits (PIP: an n x k integer matrix, or NULL), patch
# ranges (a k x 2 matrix of [start, end) from group_patches(), or NULL:
# one range) and sample labels lab (labelled counts, count_labelled(): n
# integers, 0-based, or NULL), made on first use (and again when the
# handle was read back from a saved session, which keeps no C memory);
# later uses must give the same points, weights, ranges, words and labels
catalog_handle <- function(handle, xyz, w = NULL, ranges = NULL,
                           bits = NULL, lab = NULL) {
  if (!is.null(w)) w <- as.double(w)
  if (!is.null(ranges)) ranges <- matrix(as.double(ranges), ncol = 2L)
  if (!is.null(lab)) lab <- as.integer(lab)
  if (is.null(handle$ptr) || !.Call(C_catalog_alive, handle$ptr)) {
    handle$xyz <- xyz
    handle$w <- w
    handle$ranges <- ranges
    handle$bits <- bits
    handle$lab <- lab
    handle$ptr <- .Call(C_catalog_new, xyz, w, ranges, bits, lab)
  } else if (!identical(handle$xyz, xyz) || !identical(handle$w, w) ||
             !identical(handle$ranges, ranges) ||
             !identical(handle$bits, bits) ||
             !identical(handle$lab, lab)) {
    stop("wtheta internal: a catalog handle used for other points, weights, ",
         "patches or labels", call. = FALSE)
  }
  handle$ptr
}

# frees the grid a handle's C catalog keeps (the catalog stays usable and
# builds it again when a count needs it)
catalog_release <- function(handle) {
  if (!is.null(handle$ptr) && .Call(C_catalog_alive, handle$ptr)) {
    .Call(C_catalog_release, handle$ptr)
  }
  # the catalogs of its weights with inverse probabilities (pip_handle())
  for (h in handle$pip_handles) catalog_release(h)
  invisible(NULL)
}

# grid stages (per-catalog sorts and trees) built by this R process
grid_builds <- function() .Call(C_grid_builds)

# The user's catalogs of one call (named by argument), checked: prepared
# ones as they are, the others as_catalog() (ra, dec). Also says which are
# prepared.
checked_catalogs <- function(users, columns, threads = NULL) {
  prepared <- vapply(users, inherits, TRUE, "wtheta_prepared")
  cats <- lapply(names(users), function(nm) {
    if (prepared[[nm]]) check_prepared(users[[nm]], nm) else
      as_catalog(users[[nm]], nm, columns, threads)
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

# every catalog of a call as a wtheta_prepared with weights `w` (from
# call_weights()), bitwise words `bits` (call_bitwise(), or NULL) and,
# with `pat` (from call_patches()), the call's patches
call_catalogs <- function(cats, prepared, w, pat, threads, bits = NULL) {
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
          stop("`", nm, "` is a prepared catalog without patches, but the ",
               "patches of this call are labels; prepare it with labels ",
               "too (prepare_catalog(patches = ...)), or give it ",
               "unprepared.", call. = FALSE)
        }
        own <- patch_catalog(x$radec, w[[nm]], pat$patches, threads, x$bits)
        own$own <- TRUE
        return(own)
      } else if (pat$kind == "labels") {
        x <- relabel_catalog(x, pat$labels)
      }
      if (!is.null(w) && is.null(x$weights)) x$weights <- w[[nm]]
      # a copy whose points, weights or patches were edited no longer
      # matches the C catalog its shared handle holds: it gets its own
      if (stale_handle(x)) {
        x$handle <- new_catalog_handle()
        x$own <- TRUE
        return(x)
      }
      # other weights or patch ranges make another C catalog: one of this
      # call's own, so that the handle the user holds keeps its grid
      if (!identical(x$weights, given$weights) ||
          !identical(x$patch, given$patch)) {
        x$handle <- new_catalog_handle()
        x$own <- TRUE
      }
      return(x)
    }
    b <- bits[[nm]]
    own <- if (is.null(pat)) {
      new_wtheta_prepared(x, xyz[[nm]], w[[nm]], bits = b)
    } else if (pat$kind == "centres") {
      patch_catalog(x, w[[nm]], pat$patches, threads, b)
    } else {
      g <- group_patches(xyz[[nm]], pat$numbers[[nm]],
                         length(pat$labels), w[[nm]], b)
      new_wtheta_prepared(x, g$xyz, if (!is.null(w)) g$weights, g$labels,
                          pat$labels, bits = g$bits)
    }
    own$own <- TRUE
    own
  })
  stats::setNames(out, names(cats))
}

# A prepared catalog as given (perhaps a copy edited since): its parts
# of one size and kind, or an error naming the argument
check_prepared <- function(x, arg) {
  bad <- function(what) {
    stop("`", arg, "` is a prepared catalog whose ", what, ": it was ",
         "edited after prepare_catalog(). Prepare the catalog again.",
         call. = FALSE)
  }
  xyz <- x$xyz
  # the values are read only when they are not the very vectors (the same
  # R object, so unedited: R copies on modify) that the handle's C catalog
  # was made from: a call's hot path reads no catalog-sized data here
  h <- if (is.environment(x$handle)) x$handle
  if (!is.double(xyz) || !is.matrix(xyz) || ncol(xyz) != 3L ||
      !nrow(xyz) || (!identical(h$xyz, xyz) &&
                     !is.finite(min(xyz) + max(xyz)))) {
    bad(paste0("`xyz` is not a matrix of finite unit vectors (n x 3 ",
               "doubles) but ", describe(xyz)))
  }
  n <- nrow(xyz)
  if (!is.numeric(x$n) || length(x$n) != 1L || !identical(as.double(x$n),
                                                         as.double(n))) {
    bad(paste0("`n` (", format(x$n), ") is not the ", n, " rows of `xyz`"))
  }
  if (!is.data.frame(x$radec) || nrow(x$radec) != n) {
    bad(paste0("`radec` does not have the ", n, " rows of `xyz`"))
  }
  w <- x$weights
  if (!is.null(w) && (!is.numeric(w) || length(w) != n ||
                      (!identical(h$w, w) &&
                       !all(is.finite(c(min(w), max(w))))))) {
    bad(paste0("`weights` are not ", n, " finite numbers"))
  }
  b <- x$bits
  if (!is.null(b) && (!is.integer(b) || !is.matrix(b) || nrow(b) != n ||
                      ncol(b) < 1L)) {
    bad(paste0("`bits` are not an ", n, " x k integer matrix of bitwise ",
               "words"))
  }
  p <- x$patch
  if (!is.null(p) && (length(p) != n || is.null(attr(p, "ranges")))) {
    bad(paste0("`patch` does not give ", n, " patch numbers with their ",
               "ranges"))
  }
  if (!is.environment(x$handle)) bad("`handle` is not an environment")
  x
}

# does the C catalog in x's handle hold other points, weights or patch
# ranges than x (a copy of a prepared catalog edited since)?
stale_handle <- function(x) {
  h <- x$handle
  if (is.null(h$ptr)) return(FALSE)
  ranges <- attr(x$patch, "ranges")
  !identical(h$xyz, x$xyz) ||
    !identical(h$w, if (!is.null(x$weights)) as.double(x$weights)) ||
    !identical(h$ranges, if (!is.null(ranges))
      matrix(as.double(ranges), ncol = 2L)) ||
    !identical(h$bits, x$bits)
}

# frees the grids of the C catalogs a call made for itself (those of
# catalogs prepared by the user stay for their next calls)
release_catalogs <- function(cats) {
  for (x in cats) if (isTRUE(x$own)) catalog_release(x$handle)
  invisible(NULL)
}
