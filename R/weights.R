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
