# Validates a catalog given by the user and returns data.frame(ra, dec) in
# degrees with ra reduced to [0, 360). `arg` names the argument in messages.
#
# Accepted: data frames (tibbles and data.tables are data frames) and
# matrices with the two columns by name; integer and double columns. Refused
# with an error naming the argument and column: factors, characters, logical,
# list and matrix columns, classed numbers (dates, integer64), non-finite
# values, declinations outside [-90, 90], and two columns of a name it needs
# (which one is meant cannot be known).
as_catalog <- function(x, arg, columns = c("ra", "dec")) {
  if (!is.character(columns) || length(columns) != 2L || anyNA(columns) ||
      columns[1L] == columns[2L]) {
    stop("`columns` must be two distinct column names (ra, dec), not ",
         describe(columns), ".", call. = FALSE)
  }
  if (is.matrix(x) || is.data.frame(x)) {
    # two columns of one name: which one is meant cannot be known
    nms <- colnames(x)
    for (nm in columns) {
      if (sum(nms == nm, na.rm = TRUE) > 1L) {
        stop("`", arg, "` has ", sum(nms == nm, na.rm = TRUE), " columns ",
             "named ", dQuote(nm, FALSE), " (columns ",
             paste(which(nms == nm), collapse = " and "), "); rename all ",
             "but one.", call. = FALSE)
      }
    }
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
  missing <- setdiff(columns, names(x))
  if (length(missing)) {
    stop("`", arg, "` has no column ", dQuote(missing[1L], FALSE),
         " (its columns: ", paste(names(x), collapse = ", "), ").",
         call. = FALSE)
  }
  cols <- lapply(columns, function(nm) {
    v <- x[[nm]]
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
                columns = columns)
}

check_catalog <- function(cat, arg, columns = c("ra", "dec")) {
  n <- length(cat$ra)
  if (!n) stop("`", arg, "` is empty: it has no rows.", call. = FALSE)
  # one pass in C: first non-finite ra, dec; first dec out of range; any ra
  # outside [0, 360)
  bad <- .Call(C_check_coords, cat$ra, cat$dec)
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
