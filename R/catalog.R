#' Read a catalog of sky positions
#'
#' Reads right ascension and declination from a text file: whitespace
#' separated or comma separated (CSV), with or without a first line holding
#' the number of rows, and with or without a header line of column names.
#' Blank lines and lines starting with `#` are skipped.
#'
#' @param file Path to the file.
#' @param units Units of the two coordinate columns in the file: `"deg"`,
#'   `"arcmin"` or `"rad"`. They are converted to degrees.
#' @param columns The two columns holding right ascension and declination,
#'   in that order: positions (`c(1, 2)`) or, for a file with a header
#'   line, names.
#' @param sep Field separator: `NULL` (the default) detects commas, otherwise
#'   splits on white space; or a single character.
#' @return A data frame with numeric columns `ra` (in `[0, 360)`) and `dec`
#'   (in `[-90, 90]`), in degrees, one row per line of data.
#' @examples
#' f <- tempfile(fileext = ".txt")
#' writeLines(c("3", "600 120", "610.5 121", "21599 -30"), f)
#' read_catalog(f, units = "arcmin")
#' @export
read_catalog <- function(file, units = c("deg", "arcmin", "rad"),
                         columns = c(1, 2), sep = NULL) {
  units <- match_choice(units, c("deg", "arcmin", "rad"), "units")
  if (!is.character(file) || length(file) != 1L || is.na(file)) {
    stop("`file` must be a single file path, not ", describe(file), ".",
         call. = FALSE)
  }
  if (!file.exists(file)) {
    stop("`file` \"", file, "\" does not exist.", call. = FALSE)
  }
  if (length(columns) != 2L || anyNA(columns)) {
    stop("`columns` must name or number two columns (ra, dec), not ",
         describe(columns), ".", call. = FALSE)
  }
  lines <- readLines(file, warn = FALSE)
  line_no <- seq_along(lines)
  text <- trimws(lines)
  keep <- nzchar(text) & !startsWith(text, "#")
  text <- text[keep]
  line_no <- line_no[keep]
  if (!length(text)) stop("`file` \"", file, "\" holds no data.", call. = FALSE)
  if (is.null(sep)) sep <- if (grepl(",", text[1L], fixed = TRUE)) "," else ""
  split <- function(x) {
    if (identical(sep, "")) strsplit(x, "[[:space:]]+") else
      lapply(strsplit(x, sep, fixed = TRUE), trimws)
  }
  fields <- split(text)
  n_fields <- lengths(fields)

  # a first line with a single integer: the row count
  declared <- NA
  if (n_fields[1L] == 1L && length(text) > 1L &&
      grepl("^[0-9]+$", fields[[1L]])) {
    declared <- as.numeric(fields[[1L]])
    fields <- fields[-1L]
    n_fields <- n_fields[-1L]
    line_no <- line_no[-1L]
  }
  # a first line that is not numeric: a header of column names
  header <- NULL
  if (length(fields) &&
      anyNA(suppressWarnings(as.numeric(fields[[1L]])))) {
    header <- fields[[1L]]
    fields <- fields[-1L]
    n_fields <- n_fields[-1L]
    line_no <- line_no[-1L]
  }
  if (!length(fields)) stop("`file` \"", file, "\" holds no data.", call. = FALSE)
  if (!is.na(declared) && declared != length(fields)) {
    stop("`file` \"", file, "\" declares ", declared, " rows on its first ",
         "line but holds ", length(fields), ".", call. = FALSE)
  }
  if (is.character(columns)) {
    if (is.null(header)) {
      stop("`columns` names columns (", paste(columns, collapse = ", "),
           ") but `file` has no header line.", call. = FALSE)
    }
    idx <- match(columns, header)
    if (anyNA(idx)) {
      stop("`columns` names ", dQuote(columns[is.na(idx)][1L], FALSE),
           ", which is not among the columns of `file`: ",
           paste(header, collapse = ", "), ".", call. = FALSE)
    }
  } else {
    idx <- as.integer(columns)
    if (any(idx < 1L)) {
      stop("`columns` must be positive column numbers, not ",
           describe(columns), ".", call. = FALSE)
    }
  }
  need <- max(idx)
  short <- which(n_fields < need)
  if (length(short)) {
    stop("`file` line ", line_no[short[1L]], " has ", n_fields[short[1L]],
         " field(s) but column ", need, " is needed: \"",
         lines[line_no[short[1L]]], "\".", call. = FALSE)
  }
  values <- lapply(idx, function(k) {
    v <- vapply(fields, `[`, "", k)
    num <- suppressWarnings(as.numeric(v))
    bad <- which(is.na(num) | !is.finite(num))
    if (length(bad)) {
      stop("`file` line ", line_no[bad[1L]], " has a value that is not a ",
           "finite number in column ", k, ": \"", lines[line_no[bad[1L]]],
           "\".", call. = FALSE)
    }
    num
  })
  scale <- switch(units, deg = 1, arcmin = 1 / 60, rad = 180 / pi)
  check_catalog(list(ra = values[[1L]] * scale, dec = values[[2L]] * scale),
                "file")
}

# Validates a catalog given by the user and returns data.frame(ra, dec) in
# degrees with ra reduced to [0, 360). `arg` names the argument in messages.
as_catalog <- function(x, arg, columns = c("ra", "dec")) {
  if (is.matrix(x)) x <- as.data.frame(x)
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
    if (!is.numeric(v) || is.object(v)) {
      stop("`", arg, "` column ", dQuote(nm, FALSE), " must be numeric, not ",
           describe(v), ".", call. = FALSE)
    }
    as.double(v)
  })
  check_catalog(list(ra = cols[[1L]], dec = cols[[2L]]), arg,
                columns = columns)
}

check_catalog <- function(cat, arg, columns = c("ra", "dec")) {
  n <- length(cat$ra)
  if (!n) stop("`", arg, "` is empty: it has no rows.", call. = FALSE)
  for (k in 1:2) {
    v <- cat[[k]]
    if (!all(is.finite(v))) {
      bad <- which(!is.finite(v))[1L]
      stop("`", arg, "` column ", dQuote(columns[k], FALSE), " has a ",
           "non-finite value (", format(v[bad]), ") in row ", bad, ".",
           call. = FALSE)
    }
  }
  if (any(cat$dec < -90 | cat$dec > 90)) {
    bad <- which(cat$dec < -90 | cat$dec > 90)[1L]
    stop("`", arg, "` column ", dQuote(columns[2L], FALSE), " (declination) ",
         "must lie in [-90, 90] degrees; row ", bad, " has ",
         format(cat$dec[bad], digits = 15), ".", call. = FALSE)
  }
  ra <- cat$ra
  if (any(ra < 0 | ra >= 360)) ra <- ra %% 360
  # a plain data frame, built directly (data.frame() is slow on 10^6 rows)
  structure(list(ra = ra, dec = cat$dec), class = "data.frame",
            row.names = c(NA_integer_, -n))
}

# short description of an object for error messages
describe <- function(x) {
  if (is.null(x)) return("NULL")
  if (is.atomic(x) && length(x) == 1L) {
    return(paste0(if (is.character(x)) dQuote(x, FALSE) else format(x),
                  " (", class(x)[1L], ")"))
  }
  if (is.atomic(x) && length(x) <= 5L && length(x) > 0L) {
    return(paste0("c(", paste(format(x), collapse = ", "), ")"))
  }
  paste0("an object of class ", class(x)[1L], " and length ", length(x))
}

match_choice <- function(x, choices, arg) {
  if (identical(x, choices)) return(choices[1L])
  if (!is.character(x) || length(x) != 1L || is.na(x) || !x %in% choices) {
    stop("`", arg, "` must be one of ",
         paste(dQuote(choices, FALSE), collapse = ", "), ", not ",
         describe(x), ".", call. = FALSE)
  }
  x
}
