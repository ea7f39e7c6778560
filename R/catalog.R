#' Read a catalog of sky positions
#'
#' Reads right ascension and declination from a text file: whitespace
#' separated or comma separated (CSV), with or without a first line holding
#' the number of rows, and with or without a header line of column names.
#'
#' What is accepted, exactly:
#' \itemize{
#'   \item line ends LF, CRLF or CR, and a UTF-8 byte-order mark at the start;
#'   \item comments: \code{#} and everything after it on a line; blank lines
#'     (after comments are removed) are skipped;
#'   \item numbers as R's \code{as.numeric()} reads them: \code{12},
#'     \code{-0.5}, \code{.5}, \code{1e-3}, \code{2.5E+01}; spaces around
#'     fields; trailing separators (\code{1,2,}) and extra columns are
#'     ignored;
#'   \item a first line holding one whole number is the row count, and the
#'     rows that follow must match it; a first line (after that) that is not
#'     all numbers is the header;
#'   \item gzip, bzip2 and xz compressed files.
#' }
#' Anything else is an error that names `file` and, for a bad line, its
#' number (counted from 1, blank and comment lines included) and its text:
#' a missing or empty file, a directory, a binary file (one holding a NUL
#' byte), a line with too few fields, a value that is not a finite number,
#' a declination outside `[-90, 90]` degrees. Right ascensions outside
#' `[0, 360)` are reduced modulo 360. The numbers are read with
#' \code{scan()}: a million rows take a few seconds.
#'
#' @param file Path to the file.
#' @param units Units of the two coordinate columns in the file: `"deg"`,
#'   `"arcmin"` or `"rad"`. They are converted to degrees.
#' @param columns The two columns holding right ascension and declination,
#'   in that order: positions (`c(1, 2)`) or, for a file with a header
#'   line, names.
#' @param sep Field separator: `NULL` (the default) detects commas in the
#'   first line of data, otherwise splits on spaces and tabs; or a single
#'   character (a space or a tab mean spaces and tabs).
#' @return A data frame with numeric columns `ra` (in `[0, 360)`) and `dec`
#'   (in `[-90, 90]`), in degrees, one row per line of data.
#' @seealso [simulate_catalog()] and [random_catalog()] for simulated catalogs;
#'   [wtheta()] and [pair_counts()], which take the result.
#' @examples
#' f <- tempfile(fileext = ".txt")
#' writeLines(c("3", "600 120", "610.5 121", "21599 -30"), f)
#' read_catalog(f, units = "arcmin")
#' @export
read_catalog <- function(file, units = c("deg", "arcmin", "rad"),
                         columns = c(1, 2), sep = NULL) {
  units <- match_choice(units, c("deg", "arcmin", "rad"), "units")
  if (!is.character(file) || length(file) != 1L || is.na(file) ||
      !nzchar(file)) {
    stop("`file` must be a single file path, not ", describe(file), ".",
         call. = FALSE)
  }
  if (!file.exists(file)) {
    stop("`file` \"", file, "\" does not exist.", call. = FALSE)
  }
  if (dir.exists(file)) {
    stop("`file` \"", file, "\" is a directory, not a file.", call. = FALSE)
  }
  if (length(columns) != 2L || anyNA(columns) ||
      !(is.character(columns) ||
        (is.numeric(columns) && all(columns == round(columns))))) {
    stop("`columns` must name or number two columns (ra, dec), not ",
         describe(columns), ".", call. = FALSE)
  }
  if (!is.null(sep) && (!is.character(sep) || length(sep) != 1L ||
                        is.na(sep) || nchar(sep, "bytes") > 1L)) {
    stop("`sep` must be NULL or a single character, not ", describe(sep),
         ".", call. = FALSE)
  }
  nul <- first_nul_line(file)
  if (!is.na(nul)) {
    stop("`file` \"", file, "\" is not a text file: line ", nul,
         " holds a NUL byte (binary data?).", call. = FALSE)
  }
  lines <- readLines(file, warn = FALSE)
  if (length(lines)) {
    lines[1L] <- sub("^\xef\xbb\xbf", "", lines[1L], useBytes = TRUE)
  }
  # bytes that are not text in this locale (say Latin-1 in UTF-8) become
  # <xx> so that string functions accept them; numbers are ASCII anyway
  odd <- which(!validEnc(lines))
  if (length(odd)) lines[odd] <- iconv(lines[odd], "latin1", "ASCII", sub = "byte")
  text <- lines
  hash <- grep("#", text, fixed = TRUE, useBytes = TRUE)
  if (length(hash)) {
    text[hash] <- sub("#.*$", "", text[hash], useBytes = TRUE)
  }
  text <- trimws(text)
  line_no <- which(nzchar(text))
  text <- text[line_no]
  if (!length(text)) stop("`file` \"", file, "\" holds no data.", call. = FALSE)
  if (is.null(sep)) {
    # commas in the first lines (row count, header, data) make it CSV
    sep <- if (any(grepl(",", text[seq_len(min(3L, length(text)))],
                         fixed = TRUE, useBytes = TRUE))) "," else ""
  }
  if (sep %in% c(" ", "\t")) sep <- ""
  head <- split_fields(text[seq_len(min(2L, length(text)))], sep)

  # a first line with a single whole number: the row count
  declared <- NA
  first <- 1L
  if (length(head[[1L]]) == 1L &&
      grepl("^[0-9]+$", head[[1L]], useBytes = TRUE)) {
    declared <- as.numeric(head[[1L]])
    first <- 2L
  }
  # a first line that is not all numbers: a header of column names
  header <- NULL
  if (first <= length(text) &&
      anyNA(suppressWarnings(as.numeric(head[[first]])))) {
    # names as written, without the quotes a CSV writer puts around them
    header <- sub('^"(.*)"$', "\\1", sub("^'(.*)'$", "\\1", head[[first]]))
    first <- first + 1L
  }
  body <- seq_len(length(text) - first + 1L) + (first - 1L)
  if (!is.na(declared) && declared != length(body)) {
    stop("`file` \"", file, "\" declares ",
         format(declared, scientific = FALSE), " rows on its first line but ",
         "holds ", length(body), ".", call. = FALSE)
  }
  if (!length(body)) stop("`file` \"", file, "\" holds no data.", call. = FALSE)
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
  values <- parse_columns(text[body], idx, sep)
  if (is.null(values)) {
    # the fast reader met something odd: find the first bad line, reading
    # chunk by chunk and line by line only in the chunk that holds it
    chunks <- split(body, (seq_along(body) - 1L) %/% 65536L)
    parts <- lapply(chunks, function(k) {
      parse_columns(text[k], idx, sep) %||%
        parse_columns_slowly(text[k], idx, sep, line_no[k], lines)
    })
    values <- lapply(seq_along(idx), function(j) {
      unlist(lapply(parts, `[[`, j), use.names = FALSE)
    })
  }
  scale <- switch(units, deg = 1, arcmin = 1 / 60, rad = 180 / pi)
  check_catalog(list(ra = values[[1L]] * scale, dec = values[[2L]] * scale),
                "file")
}

# The line (from 1) of the first NUL byte in a file (decompressed as
# readLines() would), or NA; read in chunks
first_nul_line <- function(file) {
  con <- gzfile(file, "rb")   # like readLines(): gzip, bzip2, xz or plain
  on.exit(close(con))
  newlines <- 0
  repeat {
    b <- readBin(con, "raw", 2^24)
    if (!length(b)) return(NA)
    z <- which(b == as.raw(0L))
    if (length(z)) {
      return(newlines + sum(b[seq_len(z[1L])] == as.raw(10L)) + 1)
    }
    newlines <- newlines + sum(b == as.raw(10L))
  }
}

split_fields <- function(x, sep) {
  if (identical(sep, "")) {
    strsplit(x, "[[:space:]]+", useBytes = TRUE)
  } else {
    strsplit(x, sep, fixed = TRUE, useBytes = TRUE)
  }
}

# The columns idx of the lines x (trimmed, no comments, none blank) as
# numbers, one per line, through scan(); NULL when any line has too few
# fields or a value that is not a finite number.
parse_columns <- function(x, idx, sep) {
  need <- max(idx)
  what <- rep(list(NULL), need)
  what[unique(idx)] <- list(numeric())
  vals <- tryCatch(
    scan(text = x, what = what, sep = sep, quote = "", dec = ".",
         comment.char = "", na.strings = character(), fill = TRUE,
         flush = TRUE, strip.white = TRUE, blank.lines.skip = FALSE,
         quiet = TRUE),
    error = function(e) NULL, warning = function(w) NULL)
  if (is.null(vals)) return(NULL)
  vals <- vals[idx]
  for (v in vals) {
    if (length(v) != length(x) || !all(is.finite(v))) return(NULL)
  }
  vals
}

# The same, line by line, to report the first bad line: its number in the
# file and its text.
parse_columns_slowly <- function(x, idx, sep, line_no, lines) {
  fields <- split_fields(x, sep)
  n_fields <- lengths(fields)
  need <- max(idx)
  short <- which(n_fields < need)
  if (length(short)) {
    stop("`file` line ", line_no[short[1L]], " has ", n_fields[short[1L]],
         " field(s) but column ", need, " is needed: ",
         quote_line(lines[line_no[short[1L]]]), ".", call. = FALSE)
  }
  lapply(idx, function(k) {
    v <- trimws(vapply(fields, `[`, "", k))
    num <- suppressWarnings(as.numeric(v))
    bad <- which(!is.finite(num))
    if (length(bad)) {
      stop("`file` line ", line_no[bad[1L]], " has a value that is not a ",
           "finite number in column ", k, ": ",
           quote_line(lines[line_no[bad[1L]]]), ".", call. = FALSE)
    }
    num
  })
}

# a line of a file for an error message: quoted, non-ASCII bytes escaped,
# at most 80 characters
quote_line <- function(x) {
  x <- sub("\r$", "", x, useBytes = TRUE)
  if (nchar(x) > 80L) x <- paste0(substr(x, 1L, 77L), "...")
  paste0("\"", x, "\"")
}

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

# The one place that matches a choice argument (estimator, error, backend,
# units): case-insensitive, and a unique prefix is enough, as match.arg()
# allows ("ls", "jack", "CPU"). The canonical spelling is returned.
match_choice <- function(x, choices, arg) {
  if (identical(x, choices)) return(choices[1L])
  refuse <- function(why = "") {
    stop("`", arg, "` must be one of ",
         paste(dQuote(choices, FALSE), collapse = ", "), ", not ",
         describe(x), why, " (case is ignored; a unique prefix is enough).",
         call. = FALSE)
  }
  if (!is.character(x) || length(x) != 1L || is.na(x) || !nzchar(x)) refuse()
  hit <- which(tolower(choices) == tolower(x))
  if (!length(hit)) hit <- which(startsWith(tolower(choices), tolower(x)))
  if (length(hit) > 1L) {
    refuse(paste0(", which could be any of ",
                  paste(dQuote(choices[hit], FALSE), collapse = ", ")))
  }
  if (!length(hit)) refuse()
  choices[hit]
}
