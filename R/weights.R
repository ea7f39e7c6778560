# Per-object values given alongside catalogs: weights and patch labels.

# Resolves `spec` (NULL, a column name present in every catalog, or a list
# naming some of the catalogs, each element a vector or a column name) into
# a list with one vector per catalog of `cats` (the user's objects, named as
# the arguments), or NULL. Weights missing from a list are 1; patch labels
# must be given for every catalog.
object_values <- function(spec, cats, arg, numeric) {
  if (is.null(spec)) return(NULL)
  what <- if (numeric) "weights" else "patch labels"
  if (is.character(spec) && length(spec) == 1L && !is.na(spec)) {
    has <- vapply(cats, function(x) spec %in% colnames(x), TRUE)
    # weights named once: the catalogs without that column (randoms read
    # without one) have unit weights; patch labels are needed everywhere
    if (numeric && any(has)) {
      spec <- stats::setNames(rep(list(spec), sum(has)), names(cats)[has])
    } else {
      spec <- stats::setNames(rep(list(spec), length(cats)), names(cats))
    }
  } else if (!is.list(spec) || is.data.frame(spec)) {
    stop("`", arg, "` must be NULL, the name of a column in each catalog, ",
         "or a list with elements ", paste(names(cats), collapse = ", "),
         " (vectors or column names), not ", describe(spec), ".",
         call. = FALSE)
  }
  extra <- setdiff(names(spec), names(cats))
  if (is.null(names(spec)) || any(!nzchar(names(spec))) || length(extra)) {
    stop("`", arg, "` must be a list named by catalog (",
         paste(names(cats), collapse = ", "), ")",
         if (length(extra)) paste0("; ", dQuote(extra[1L], FALSE),
                                   " is not one of them"), ".", call. = FALSE)
  }
  out <- lapply(names(cats), function(nm) {
    x <- cats[[nm]]
    n <- NROW(x)
    v <- spec[[nm]]
    where <- paste0("`", arg, "$", nm, "`")
    if (is.null(v)) {
      if (numeric) return(rep(1, n))
      stop("`", arg, "` gives no ", what, " for `", nm, "`.", call. = FALSE)
    }
    if (is.character(v) && length(v) == 1L && n != 1L) {
      cols <- colnames(x)
      if (is.null(cols) || !v %in% cols) {
        stop(where, " names column ", dQuote(v, FALSE), ", which `", nm,
             "` does not have (its columns: ",
             paste(cols, collapse = ", "), ").", call. = FALSE)
      }
      if (sum(cols == v) > 1L) {
        stop(where, " names column ", dQuote(v, FALSE), ", but `", nm,
             "` has ", sum(cols == v), " columns of that name (columns ",
             paste(which(cols == v), collapse = " and "), "); rename all ",
             "but one.", call. = FALSE)
      }
      v <- if (is.data.frame(x)) x[[v]] else x[, v]
      where <- paste0("column ", dQuote(spec[[nm]], FALSE), " of `", nm, "`")
    }
    if (length(v) != n) {
      stop(where, " must hold one value per row of `", nm, "` (", n,
           "), not ", length(v), ".", call. = FALSE)
    }
    if (numeric) check_weights(v, where) else check_labels(v, where)
  })
  stats::setNames(out, names(cats))
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
