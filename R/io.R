# Files in and out: catalogs from FITS tables and text, results written and
# read back. The C side is src/io/text.c (text in memory), src/io/fits.c
# (cfitsio) and their R boundary src/r/io.c.

#' Read a catalog of sky positions from a FITS table or a text file
#'
#' Reads right ascension and declination, and any other columns asked for
#' (weights, redshifts, flags), from a FITS binary or ASCII table or from a
#' text file (whitespace separated or CSV). The format is decided by the
#' content, not the name: a file whose first bytes are `SIMPLE  =` (gzip
#' compressed or not) is FITS, anything else is text.
#'
#' @section FITS:
#' `hdu` picks the table: `NULL` the first table extension, a number the
#' HDU counted from 0 (the primary HDU, as astropy counts), a string the
#' `EXTNAME`. Every column type is read: `L` as logical; `B`, `I`, `J` and
#' unsigned `I` as integer; `K`, unsigned `J`, `E`, `D` and scaled columns
#' (`TSCALn`, `TZEROn`) as double; `A` as character. A vector column (say
#' `1024D`) becomes a matrix column with one row per table row.
#' Variable-length arrays, bit and complex columns are refused by name.
#' Nulls (`TNULLn`, NaN) are `NA`, and an error naming the row in `ra` or
#' `dec`. Columns are read in chunks of rows through cfitsio; memory is
#' the result plus one chunk. Plain numeric columns of an uncompressed
#' file are decoded straight from the file mapped read-only (pages the
#' system reads in and drops as needed), as astropy does. FITS support needs the package built with
#' cfitsio (Debian: `apt-get install libcfitsio-dev`, then reinstall);
#' `wtheta_backends()` does not depend on it.
#'
#' @section Text:
#' What is accepted, exactly:
#' * line ends LF, CRLF or CR, and a UTF-8 byte-order mark at the start;
#' * comments: `#` and everything after it on a line; blank lines (after
#'   comments are removed) are skipped;
#' * numbers as C's `strtod()` reads them (correctly rounded): `12`,
#'   `-0.5`, `.5`, `1e-3`, `2.5E+01`; spaces around fields; trailing
#'   separators (`1,2,`) and columns not asked for are ignored;
#' * a first line holding one whole number is the row count, and the rows
#'   that follow must match it;
#' * a header line of column names: the first line (after a row count) is
#'   a header when none of the fields at the positions to be read is a
#'   number, data when all of them are, and an error naming the line when
#'   some are and some are not (`NA 5`), so no data row is ever dropped
#'   silently. Names in `columns` require a header;
#' * gzip (checked to its end: a truncated file is an error), bzip2 and xz
#'   compressed files; pipes and process substitutions are read once.
#'
#' Anything else is an error that names `file` and, for a bad line, its
#' number (counted from 1, blank and comment lines included) and its text.
#' Other columns asked for are numbers (double, `NA` or empty fields `NA`)
#' or, when a field is not a number, character.
#'
#' @param file Path to the file.
#' @param units Units of the two coordinate columns: `NULL` (FITS: each
#'   column's `TUNITn`, degrees when absent; text: degrees) or one of
#'   `"deg"`, `"arcmin"`, `"arcsec"`, `"rad"`. They are converted to
#'   degrees by the same multiplication for both formats. An explicit
#'   `units` that contradicts a `TUNITn` is an error.
#' @param columns The columns to read: `NULL` finds ra and dec by their
#'   usual names (`RA`/`DEC`, `ALPHA_J2000`/`DELTA_J2000`,
#'   `RAJ2000`/`DEJ2000`, ...; case-insensitive), or, in a text file without
#'   a header, takes columns 1 and 2. Otherwise a character vector of
#'   column names (case-insensitive) or a vector of column numbers, named by
#'   the names the result gets: `c(ra = "ALPHA", dec = "DELTA", weight =
#'   "W")`. Unnamed, the first two are ra and dec and the others keep their
#'   names in the file.
#' @param sep Text only. Field separator: `NULL` (the default) detects
#'   commas in the first lines, otherwise splits on spaces and tabs; or a
#'   single character (a space or a tab mean runs of spaces and tabs).
#' @param hdu FITS only: `NULL`, an HDU number (from 0) or an `EXTNAME`.
#' @return A data frame with numeric columns `ra` (in `[0, 360)`) and `dec`
#'   (in `[-90, 90]`), in degrees, then the other columns asked for, one
#'   row per row of the table or line of data.
#' @seealso [write_wtheta()] for results; [simulate_catalog()] and
#'   [random_catalog()] for simulated catalogs; [wtheta()] and
#'   [pair_counts()], which take the result.
#' @md
#' @examples
#' f <- tempfile(fileext = ".txt")
#' writeLines(c("3", "600 120", "610.5 121", "21599 -30"), f)
#' read_catalog(f, units = "arcmin")
#' writeLines(c("ra,dec,w", "10,20,1.5", "30,-40,0.5"), f)
#' read_catalog(f, columns = c("ra", "dec", weight = "w"))
#' @export
read_catalog <- function(file, units = NULL, columns = NULL, sep = NULL,
                         hdu = NULL) {
  args <- check_read_args(file, units, columns, sep)
  src <- open_source(file)
  check_format_args(src, file, sep, hdu)
  tab <- if (src$fits) {
    read_fits_columns(file, args$columns, hdu)
  } else {
    read_text_columns(file, src$bytes, args$columns, sep)
  }
  pos <- positions_in_degrees(tab, args$units, file)
  out <- check_catalog(pos, "file", columns = tab$labels)
  add_columns(out, tab$values[-(1:2)], tab$names[-(1:2)])
}

# The steps of read_catalog(). Each reader gives the same table:
# list(values: the columns read, ra and dec first; names: their names in
# the result; labels: the names of the position columns in messages (the
# file's for FITS, "ra" and "dec" for text); units: the units each position
# column carries in the file ("" for none: text, or FITS without TUNITn)).

# the arguments that do not depend on the file's format: `units` and
# `columns` as the readers take them
check_read_args <- function(file, units, columns, sep) {
  check_file(file)
  units <- check_units(units)
  columns <- check_columns(columns)
  if (!is.null(sep) && (!is.character(sep) || length(sep) != 1L ||
                        is.na(sep) || nchar(sep, "bytes") > 1L)) {
    stop("`sep` must be NULL or a single character, not ", describe(sep),
         ".", call. = FALSE)
  }
  list(units = units, columns = columns)
}

# `sep` is for text, `hdu` for FITS: refused for the other format
check_format_args <- function(src, file, sep, hdu) {
  if (src$fits && !is.null(sep)) {
    stop("`sep` is for text files; \"", file, "\" is FITS.", call. = FALSE)
  }
  if (!src$fits && !is.null(hdu)) {
    stop("`hdu` is for FITS files; `file` \"", file, "\" is text.",
         call. = FALSE)
  }
}

# ra and dec of a table read (see above) in degrees: each column's units in
# the file (a FITS TUNITn) when it has them, which an explicit `units` must
# not contradict, else `units`, else degrees; converted by to_degrees()
positions_in_degrees <- function(tab, units, file) {
  pos <- lapply(1:2, function(k) {
    u <- column_units(tab$units[[k]], tab$labels[[k]], units, file)
    to_degrees(as.double(tab$values[[k]]), u)
  })
  list(ra = pos[[1L]], dec = pos[[2L]])
}

column_units <- function(tunit, nm, units, file) {
  if (!nzchar(tunit)) return(units %||% "deg")
  v <- unit_names[tolower(tunit)]
  if (is.na(v)) {
    stop("`file` \"", file, "\" column ", dQuote(nm, FALSE), " has ",
         "TUNIT \"", tunit, "\", which wtheta does not convert; give ",
         "`units` after converting the file.", call. = FALSE)
  }
  if (!is.null(units) && units != v) {
    stop("`units` is \"", units, "\" but column ", dQuote(nm, FALSE),
         " of `file` \"", file, "\" has TUNIT \"", tunit, "\".",
         call. = FALSE)
  }
  unname(v)
}

check_file <- function(file) {
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
}

unit_names <- c(deg = "deg", degree = "deg", degrees = "deg",
                arcmin = "arcmin", arcsec = "arcsec", rad = "rad",
                radian = "rad", radians = "rad")

check_units <- function(units) {
  if (is.null(units)) return(NULL)
  if (!is.character(units) || length(units) != 1L || is.na(units) ||
      !units %in% names(unit_names)) {
    stop("`units` must be NULL or one of \"deg\", \"arcmin\", \"arcsec\", ",
         "\"rad\", not ", describe(units), ".", call. = FALSE)
  }
  unname(unit_names[units])
}

# the one conversion to degrees used by every reader
to_degrees <- function(x, units) {
  if (units == "deg") return(x)          # x * 1, without the copy
  x * switch(units, deg = 1, arcmin = 1 / 60, arcsec = 1 / 3600,
             rad = 180 / pi)
}

# `columns` as given, checked: NULL, or a character or whole-number vector
# of at least two distinct entries, with result names (ra, dec first when
# unnamed; "" for names taken from the file)
check_columns <- function(columns) {
  if (is.null(columns)) return(NULL)
  bad <- function(why) {
    stop("`columns` must ", why, ", not ", describe(columns), ".",
         call. = FALSE)
  }
  if (is.numeric(columns) && !is.object(columns)) {
    # the upper bound before any coercion to integer
    if (anyNA(columns) || any(!is.finite(columns)) ||
        any(columns != round(columns)) || any(columns < 1) ||
        any(columns > .Machine$integer.max)) {
      bad(paste0("be column numbers from 1 to ", .Machine$integer.max))
    }
  } else if (is.character(columns)) {
    if (anyNA(columns) || any(!nzchar(columns))) bad("name columns")
  } else {
    bad("name or number the columns to read")
  }
  if (length(columns) < 2L) bad("give at least the two position columns")
  key <- if (is.character(columns)) tolower(columns) else columns
  if (anyDuplicated(key)) {
    stop("`columns` names column ", format(columns[anyDuplicated(key)]),
         " twice: ", describe(columns), ".", call. = FALSE)
  }
  nm <- names(columns)
  if (is.null(nm)) {
    nm <- c("ra", "dec", rep("", length(columns) - 2L))
  } else {
    nm[is.na(nm)] <- ""
    # unnamed first two: ra and dec, unless named elsewhere
    for (k in 1:2) {
      want <- c("ra", "dec")[k]
      if (!nzchar(nm[k]) && !want %in% nm) nm[k] <- want
    }
    if (!all(c("ra", "dec") %in% nm)) {
      stop("`columns` is named, so it must name the columns \"ra\" and ",
           "\"dec\"; its names: ", paste(nm, collapse = ", "), ".",
           call. = FALSE)
    }
    if (anyDuplicated(nm[nzchar(nm)])) {
      stop("`columns` gives the name ", dQuote(nm[nzchar(nm)][anyDuplicated(
        nm[nzchar(nm)])], FALSE), " twice.", call. = FALSE)
    }
  }
  list(which = unname(columns), names = nm)
}

# the usual names of position columns, tried in this order
ra_names <- c("ra", "alpha_j2000", "raj2000", "ra_j2000", "alpha", "ra_deg",
              "radeg", "ra2000", "ra_icrs", "alphawin_j2000")
dec_names <- c("dec", "delta_j2000", "dej2000", "dec_j2000", "delta",
               "dec_deg", "dedeg", "dec2000", "de_icrs", "deltawin_j2000")

find_positions <- function(have, file) {
  low <- tolower(have)
  for (k in seq_along(ra_names)) {
    i <- match(ra_names[k], low)
    j <- match(dec_names[k], low)
    if (!is.na(i) && !is.na(j)) return(c(i, j))
  }
  stop("`file` \"", file, "\" has no columns with the usual names of ",
       "right ascension and declination (RA/DEC, ALPHA_J2000/DELTA_J2000, ",
       "RAJ2000/DEJ2000, ...); give them in `columns`. Its columns: ",
       paste(have, collapse = ", "), ".", call. = FALSE)
}

# column indexes (from 1) and result names of `columns` among `have`
resolve_columns <- function(columns, have, file) {
  if (is.null(columns)) {
    return(list(idx = find_positions(have, file), names = c("ra", "dec")))
  }
  w <- columns$which
  if (is.character(w)) {
    idx <- match(tolower(w), tolower(have))
    if (anyNA(idx)) {
      stop("`columns` names ", dQuote(w[is.na(idx)][1L], FALSE),
           ", which is not among the columns of `file`: ",
           paste(have, collapse = ", "), ".", call. = FALSE)
    }
  } else {
    idx <- as.integer(w)
    if (!is.null(have) && any(idx > length(have))) {
      stop("`columns` asks for column ", max(idx), " but `file` has ",
           length(have), ".", call. = FALSE)
    }
  }
  nm <- columns$names
  blank <- !nzchar(nm)
  nm[blank] <- if (is.null(have)) paste0("V", idx[blank]) else have[idx[blank]]
  if (anyDuplicated(nm)) {
    stop("`columns` gives two result columns the name ",
         dQuote(nm[anyDuplicated(nm)], FALSE), ".", call. = FALSE)
  }
  # ra and dec first
  o <- c(match(c("ra", "dec"), nm), setdiff(seq_along(nm),
                                            match(c("ra", "dec"), nm)))
  list(idx = idx[o], names = nm[o])
}

magic_fits <- function(b) {
  length(b) >= 9L && identical(b[1:9], charToRaw("SIMPLE  ="))
}
magic_of <- function(b) {
  if (length(b) >= 2L && b[1L] == as.raw(0x1f) && b[2L] == as.raw(0x8b)) {
    return("gzip")
  }
  if (length(b) >= 3L && identical(b[1:3], charToRaw("BZh"))) return("bzip2")
  if (length(b) >= 6L && identical(b[1:6], as.raw(c(0xfd, 0x37, 0x7a, 0x58,
                                                    0x5a, 0x00)))) {
    return("xz")
  }
  "plain"
}

# What a file holds, reading it once: list(fits, bytes). A regular file is
# peeked at (its first bytes, decompressed); a stream (a FIFO, a process
# substitution: size 0) is read whole, once, and may not be FITS.
open_source <- function(file) {
  size <- file.size(file)
  if (is.na(size) || size == 0) {
    bytes <- .Call(C_read_gzip, path.expand(file))
    if (magic_fits(bytes)) {
      stop("`file` \"", file, "\" is a FITS stream; FITS is read from ",
           "files only: save it to a file first.", call. = FALSE)
    }
    return(list(fits = FALSE, bytes = bytes))
  }
  head <- readBin(file, "raw", 80L)
  kind <- magic_of(head)
  if (kind != "plain") {
    con <- switch(kind, gzip = gzfile(file, "rb"), bzip2 = bzfile(file, "rb"),
                  xz = xzfile(file, "rb"))
    head <- tryCatch(readBin(con, "raw", 80L), error = function(e) raw(0))
    close(con)
  }
  if (magic_fits(head)) return(list(fits = TRUE))
  bytes <- switch(kind,
    plain = readBin(file, "raw", size),
    gzip = .Call(C_read_gzip, path.expand(file)),
    read_connection(file, kind))
  list(fits = FALSE, bytes = bytes)
}

read_connection <- function(file, kind) {
  con <- switch(kind, bzip2 = bzfile(file, "rb"), xz = xzfile(file, "rb"))
  on.exit(close(con))
  parts <- list()
  repeat {
    b <- readBin(con, "raw", 2^24)
    if (!length(b)) break
    parts[[length(parts) + 1L]] <- b
  }
  unlist(parts, use.names = FALSE) %||% raw(0)
}

# ---- text -----------------------------------------------------------------

# the columns of a text catalog as a table (see read_catalog()): where the
# lines are, the separator, the row count and header lines, the columns,
# then the values
read_text_columns <- function(file, bytes, columns, sep) {
  lines <- text_lines(file, bytes)
  sep <- text_sep(sep, lines$head)
  layout <- text_layout(file, lines, split_fields(lines$head, sep$sep),
                        columns)
  cols <- if (is.null(columns) && is.null(layout$header)) {
    list(idx = 1:2, names = c("ra", "dec"))
  } else {
    resolve_columns(columns, layout$header, file)
  }
  values <- text_values(file, bytes, sep, layout, cols$idx)
  list(values = values, names = cols$names, labels = c("ra", "dec"),
       units = c("", ""))
}

# the number of lines of data (blank and comment lines aside) and the
# first few, with their line numbers; a NUL byte or no data is an error
text_lines <- function(file, bytes) {
  info <- .Call(C_text_info, bytes, 3L)
  if (info[[2L]] > 0) {
    stop("`file` \"", file, "\" is not a text file: line ", info[[2L]],
         " holds a NUL byte (binary data?).", call. = FALSE)
  }
  n_lines <- info[[1L]]
  head <- info[[3L]]
  if (!n_lines) stop("`file` \"", file, "\" holds no data.", call. = FALSE)
  # bytes that are not text in this locale (say Latin-1 in UTF-8) become
  # <xx> so that string functions accept them; numbers are ASCII anyway
  odd <- which(!validEnc(head))
  if (length(odd)) head[odd] <- iconv(head[odd], "latin1", "ASCII", sub = "byte")
  list(n = n_lines, head = head, head_line = info[[4L]])
}

# the separator: as given, or a comma when the first lines hold one, else
# runs of spaces and tabs (""); with its byte for the C parser (0 for "")
text_sep <- function(sep, head) {
  if (is.null(sep)) {
    sep <- if (any(grepl(",", head, fixed = TRUE, useBytes = TRUE))) "," else ""
  }
  if (sep %in% c(" ", "\t")) sep <- ""
  code <- if (identical(sep, "")) 0L else as.integer(charToRaw(sep))
  list(sep = sep, code = code)
}

# Which first lines are not data: a row count (a single whole number) and
# a header (see read_catalog()'s Text section). Returns list(skip: lines
# before the data, header: the column names or NULL, n_rows).
text_layout <- function(file, lines, fields, columns) {
  declared <- NA
  skip <- 0
  if (length(fields[[1L]]) == 1L &&
      grepl("^[0-9]+$", fields[[1L]], useBytes = TRUE)) {
    if (nchar(fields[[1L]]) > 15L) {
      stop("`file` \"", file, "\" line ", lines$head_line[1L], " holds a ",
           "single number of ", nchar(fields[[1L]]), " digits: too large ",
           "for a row count, and a catalog needs two columns.", call. = FALSE)
    }
    declared <- as.numeric(fields[[1L]])
    skip <- 1
  }
  header <- NULL
  if (skip < lines$n) {
    f <- fields[[skip + 1L]]
    f <- sub('^"(.*)"$', "\\1", sub("^'(.*)'$", "\\1", f))
    if (is_header(file, f, lines, skip, columns)) {
      header <- f
      skip <- skip + 1
    }
  }
  n_rows <- lines$n - skip
  if (!is.na(declared) && declared != n_rows) {
    stop("`file` \"", file, "\" declares ",
         format(declared, scientific = FALSE), " rows on its first line but ",
         "holds ", n_rows, ".", call. = FALSE)
  }
  if (!n_rows) stop("`file` \"", file, "\" holds no data.", call. = FALSE)
  if (!is.null(columns) && is.character(columns$which) && is.null(header)) {
    stop("`columns` names columns (", paste(columns$which, collapse = ", "),
         ") but `file` has no header line.", call. = FALSE)
  }
  list(skip = skip, header = header, n_rows = n_rows)
}

# whether the fields f of the first line after a row count are a header:
# only the position columns decide (other columns may hold text); a line
# where some of them are numbers and some not is an error
is_header <- function(file, f, lines, skip, columns) {
  names_given <- !is.null(columns) && is.character(columns$which)
  look <- if (names_given) integer() else if (is.null(columns)) 1:2 else
    as.integer(columns$which[match(c("ra", "dec"), columns$names)])
  look <- look[look <= length(f)]
  num <- !is.na(suppressWarnings(as.numeric(f[look])))
  if (names_given || (is.null(columns) && !any(num)) ||
      (length(look) && !any(num))) {
    return(TRUE)
  }
  if (!all(num)) {
    stop("`file` \"", file, "\" line ", lines$head_line[skip + 1L], " (",
         quote_line(lines$head[skip + 1L]), ") is neither a header nor ",
         "data: column ", look[num][1L], " holds a number but column ",
         look[!num][1L], " does not. Fix or remove the line.",
         call. = FALSE)
  }
  FALSE
}

# the values of columns idx (from 1) of the data lines, parsed in C: a
# line too short, or a position that is not a finite number, is an error
# naming the line; other columns that are not all numbers are read as text
text_values <- function(file, bytes, sep, layout, idx) {
  skip <- layout$skip
  n_rows <- layout$n_rows
  res <- .Call(C_text_parse, bytes, sep$code, skip, n_rows, idx - 1L)
  row_text <- function(row) {
    r <- .Call(C_text_row, bytes, skip, row - 1)
    list(line = r[[1L]], text = quote_line(iconv(r[[2L]], "latin1",
                                                 "ASCII", sub = "byte")))
  }
  if (res[[4L]] > 0) {
    r <- row_text(res[[4L]])
    body <- .Call(C_text_row, bytes, skip, res[[4L]] - 1)[[2L]]
    got <- length(split_fields(trimws(sub("#.*$", "", body, useBytes = TRUE)),
                               sep$sep)[[1L]])
    stop("`file` line ", r$line, " has ", got, " field(s) but column ",
         max(idx), " is needed: ", r$text, ".", call. = FALSE)
  }
  values <- res[[1L]]
  for (j in seq_along(idx)) {
    first_bad <- c(res[[2L]][j], res[[3L]][j])
    if (j <= 2L) {
      first_bad <- first_bad[first_bad > 0]
      if (length(first_bad)) {
        r <- row_text(min(first_bad))
        stop("`file` line ", r$line, " has a value that is not a finite ",
             "number in column ", idx[j], ": ", r$text, ".", call. = FALSE)
      }
    } else if (first_bad[1L] > 0) {
      values[[j]] <- .Call(C_text_strings, bytes, sep$code, skip, n_rows,
                           idx[j] - 1L)
    }
  }
  values
}

add_columns <- function(cat, values, names) {
  for (j in seq_along(values)) cat[[names[j]]] <- values[[j]]
  cat
}

split_fields <- function(x, sep) {
  if (identical(sep, "")) {
    strsplit(x, "[[:space:]]+", useBytes = TRUE)
  } else {
    lapply(strsplit(x, sep, fixed = TRUE, useBytes = TRUE), trimws)
  }
}

# a line of a file for an error message: quoted, non-ASCII bytes escaped,
# at most 80 characters
quote_line <- function(x) {
  x <- sub("\r$", "", x, useBytes = TRUE)
  if (nchar(x, "bytes") > 80L) x <- paste0(substr(x, 1L, 77L), "...")
  paste0("\"", x, "\"")
}

# ---- FITS -----------------------------------------------------------------

fits_available <- function() isTRUE(.Call(C_fits_compiled))

need_fits <- function(file) {
  if (!fits_available()) {
    stop("`file` \"", file, "\" is FITS, but wtheta was built without ",
         "cfitsio. Install it (Debian/Ubuntu: apt-get install ",
         "libcfitsio-dev pkg-config) and reinstall wtheta.", call. = FALSE)
  }
}

# `hdu` as given: list(number, name) for the C reader
check_hdu <- function(hdu) {
  if (is.null(hdu)) return(list(-1L, NULL))
  if (is.numeric(hdu) && length(hdu) == 1L && !is.na(hdu) &&
      hdu == round(hdu) && hdu >= 0 && hdu <= 1e6) {
    return(list(as.integer(hdu), NULL))
  }
  if (is.character(hdu) && length(hdu) == 1L && !is.na(hdu) && nzchar(hdu)) {
    return(list(-1L, hdu))
  }
  stop("`hdu` must be NULL, an HDU number (0 is the primary HDU) or an ",
       "EXTNAME, not ", describe(hdu), ".", call. = FALSE)
}

# Internal reader of FITS tables, for catalogs and (later) HEALPix maps:
# the columns `columns` (names, case-insensitive, or numbers from 1; NULL
# for all) of the table at `hdu`. Returns list(columns: named list of
# vectors, n x repeat matrices for vector columns; units: TUNITn of each;
# n_rows; hdu (from 0); extname; keywords: data frame name, value,
# comment).
fits_read_table <- function(file, hdu = NULL, columns = NULL,
                            info = NULL) {
  need_fits(file)
  h <- check_hdu(hdu)
  info <- info %||% .Call(C_fits_info, path.expand(file), h[[1L]], h[[2L]])
  have <- info$columns$name
  idx <- if (is.null(columns)) seq_along(have) else if (is.character(columns)) {
    i <- match(tolower(columns), tolower(have))
    if (anyNA(i)) {
      stop("`columns` names ", dQuote(columns[is.na(i)][1L], FALSE),
           ", which is not among the columns of `file`: ",
           paste(have, collapse = ", "), ".", call. = FALSE)
    }
    i
  } else as.integer(columns)
  for (i in idx) {
    if (info$columns$kind[i] == 0L) {
      what <- if (info$columns$typecode[i] < 0) "a variable-length array" else
        "of a type wtheta does not read (bit or complex)"
      stop("`file` \"", file, "\" column ", dQuote(have[i], FALSE),
           " (TFORM ", info$columns$tform[i], ") is ", what, ".",
           call. = FALSE)
    }
  }
  vals <- .Call(C_fits_read, path.expand(file), info$hdu, idx - 1L)
  names(vals) <- have[idx]
  list(columns = vals, units = stats::setNames(info$columns$unit[idx],
                                               have[idx]),
       n_rows = info$n_rows, hdu = info$hdu, extname = info$extname,
       keywords = as.data.frame(info$keywords, stringsAsFactors = FALSE))
}

# the columns of a FITS catalog as a table (see read_catalog()): the table
# at `hdu`, the columns asked for (ra and dec one number per row), their
# values and the units ra and dec carry (TUNITn)
read_fits_columns <- function(file, columns, hdu) {
  need_fits(file)
  h <- check_hdu(hdu)
  info <- .Call(C_fits_info, path.expand(file), h[[1L]], h[[2L]])
  cols <- resolve_columns(columns, info$columns$name, file)
  check_fits_positions(file, info, cols$idx[1:2])
  tab <- fits_read_table(file, columns = cols$idx, info = info)
  list(values = unname(tab$columns), names = cols$names,
       labels = names(tab$columns)[1:2],
       units = trimws(vapply(1:2, function(k) tab$units[[k]], "")))
}

# ra and dec must be columns of one number per row
check_fits_positions <- function(file, info, idx) {
  for (k in 1:2) {
    i <- idx[k]
    if (!info$columns$kind[i] %in% 1:2 || info$columns$n_elements[i] != 1) {
      stop("`file` \"", file, "\" column ", dQuote(info$columns$name[i],
                                                   FALSE),
           " (TFORM ", info$columns$tform[i], ") must hold one number per ",
           "row to be ", c("ra", "dec")[k], ".", call. = FALSE)
    }
  }
}

# ---- writing results --------------------------------------------------------

#' Write and read w(theta) results and pair counts
#'
#' `write_wtheta()` writes a [wtheta()] result; the format follows the
#' extension of `file`:
#' * `.fits` (or `.fit`, `.fts`): a FITS file written through cfitsio, so
#'   the package must be built with it (Debian: `apt-get install
#'   libcfitsio-dev pkg-config`, then reinstall; without it writing FITS is
#'   an error and `.csv` is the way). Its extension `WTHETA` is a binary
#'   table with `theta_lo`, `theta_hi`, `theta` (`TUNIT` `deg`), `DD`,
#'   `DR`, `RR`, `w`, `w_err` (every column of the result, in double
#'   precision); the primary header and the table's carry the keywords
#'   `ESTIMATR` (estimator), `COUNTING` (`auto` or `cross`), `SELFPAIR`,
#'   `WEIGHTED`, `N_DATA`, `N_RANDOM`, `BACKEND`, `ERRMETH` (error method),
#'   `NPATCHES` and `WTVERSN` (wtheta's version), each with a comment saying
#'   what it is. Extension `COV` is an image holding the covariance matrix
#'   (astropy's `fits.getdata(file, "COV")[i, j]` is the covariance of bins
#'   `i` and `j`); extension `R_OBJECT` holds the remaining R attributes
#'   (pair counts, patches, replicates), serialized with [serialize()], so
#'   that the round trip is exact. Every HDU has `CHECKSUM` and `DATASUM`.
#'   The file is written under a temporary name in the same directory and
#'   renamed when complete: a failed write leaves no file behind.
#' * `.csv`: the table, numbers with 17 significant digits (exact), after
#'   comment lines (`#`) giving the same keywords and naming two files
#'   written beside it: the covariance (`<name>-cov.csv`) and the R
#'   attributes (`<name>-attributes.rds`).
#'
#' `read_wtheta()` gives back an object identical to the one written,
#' covariance and attributes included. Read only files you trust: the R
#' attributes are unserialized. A FITS file without `R_OBJECT` (a table
#' written by another tool) is read from its table (`WTHETA`, else the
#' first table) with the columns `theta_lo`, `theta_hi`, `theta`, `DD`,
#' `DR`, `RR` (or `D1D2`, `D1R2`, `R1D2`, `R1R2`), `w` and optionally
#' `w_err` (names case-insensitive), the covariance from an extension `COV`
#' (an image, or a table whose first column holds one row of the matrix per
#' bin) and the attributes from the keywords above in the table's header;
#' what the file does not give is left out (the error method is
#' `"unknown"` when there are errors but no `ERRMETH`), and attribute
#' `source` says the object was rebuilt this way.
#'
#' `write_pair_counts()` and `read_pair_counts()` do the same for a
#' [pair_counts()] result (extensions `PAIR_COUNTS`, with `theta_lo`,
#' `theta_hi`, `counts`, and, when counted with `mean_theta = TRUE`,
#' `theta_mean` and `theta_sum`; and `PATCHES` with the per-patch count
#' arrays when there are any), so that counts made on one machine can be
#' combined on another. A result with `theta_mean` (from
#' `mean_theta = TRUE`) writes it as a column like the others, and
#' [read_wtheta()] of a FITS table from another tool takes a
#' `theta_mean` column when there is one.
#'
#' @param x A `wtheta` or `pair_counts` object.
#' @param file Path to write or read.
#' @param overwrite Replace an existing file?
#' @return The write functions return `file`, invisibly; the read functions
#'   the object.
#' @md
#' @examples
#' set.seed(1)
#' sim <- random_catalog(300)
#' ran <- random_catalog(600)
#' w <- wtheta(sim, ran, theta_bins(1, 20, n = 4), threads = 1)
#' f <- tempfile(fileext = ".csv")
#' write_wtheta(w, f)
#' identical(read_wtheta(f), w)
#' @export
write_wtheta <- function(x, file, overwrite = FALSE) {
  if (!inherits(x, "wtheta")) {
    stop("`x` must be a result of wtheta(), not ", describe(x), ".",
         call. = FALSE)
  }
  cov <- attr(x, "cov")
  keys <- result_keywords(list(
    ESTIMATR = attr(x, "estimator"), COUNTING = attr(x, "type"),
    SELFPAIR = attr(x, "self_pairs"), WEIGHTED = attr(x, "weighted"),
    N_DATA = attr(x, "n_data"), N_RANDOM = attr(x, "n_random"),
    BACKEND = attr(x, "backend"), ERRMETH = attr(x, "error"),
    NPATCHES = attr(x, "n_patches")))
  table <- stats::setNames(lapply(names(x), function(nm) as.double(x[[nm]])),
                           names(x))
  extra <- if (is.null(cov)) NULL else list(COV = list(COV = unname(cov)))
  attrs <- attributes(x)
  attrs$names <- NULL
  write_result(file, overwrite, "WTHETA", table, keys, extra, attrs,
               "w(theta)")
}

#' @rdname write_wtheta
#' @export
read_wtheta <- function(file) {
  read_result(file, "WTHETA", "w(theta)")
}

#' @rdname write_wtheta
#' @export
write_pair_counts <- function(x, file, overwrite = FALSE) {
  if (!inherits(x, "pair_counts")) {
    stop("`x` must be a result of pair_counts(), not ", describe(x), ".",
         call. = FALSE)
  }
  keys <- result_keywords(list(
    COUNTING = x$type, SELFPAIR = x$self_pairs, N1 = x$n1, N2 = x$n2,
    N_PAIRS = x$n_pairs, N_BELOW = x$n_below, N_ABOVE = x$n_above,
    BACKEND = x$backend))
  table <- list(theta_lo = as.double(x$theta_lo),
                theta_hi = as.double(x$theta_hi),
                counts = as.double(x$counts))
  if (!is.null(x$theta_mean)) {
    table$theta_mean <- as.double(x$theta_mean)
    table$theta_sum <- as.double(x$theta_sum)
  }
  extra <- NULL
  if (!is.null(x$patch_counts)) {
    a <- x$patch_counts
    d <- dim(a)
    # one row per bin: the P x P counts of that bin, column-major
    extra <- list(PATCHES = list(
      COUNTS = t(matrix(as.double(a), d[1L] * d[2L], d[3L]))))
  }
  write_result(file, overwrite, "PAIR_COUNTS", table, keys, extra,
               list(object = x), "pair counts")
}

#' @rdname write_wtheta
#' @export
read_pair_counts <- function(file) {
  read_result(file, "PAIR_COUNTS", "pair counts")$object
}

result_keywords <- function(k) {
  k <- k[!vapply(k, function(v) is.null(v) || length(v) != 1L || is.na(v),
                 TRUE)]
  c(k, list(WTVERSN = as.character(utils::packageVersion("wtheta"))))
}

result_format <- function(file) {
  if (grepl("\\.(fits|fit|fts)$", file, ignore.case = TRUE)) return("fits")
  if (grepl("\\.csv$", file, ignore.case = TRUE)) return("csv")
  stop("`file` \"", file, "\" must end in .fits (or .fit, .fts) or .csv: ",
       "the extension picks the format.", call. = FALSE)
}

sidecar <- function(file, what) {
  paste0(sub("\\.csv$", "", file, ignore.case = TRUE), "-", what)
}

write_result <- function(file, overwrite, extname, table, keys, extra,
                         robject, what) {
  if (!is.character(file) || length(file) != 1L || is.na(file) ||
      !nzchar(file)) {
    stop("`file` must be a single file path, not ", describe(file), ".",
         call. = FALSE)
  }
  check_flag(overwrite, "overwrite")
  format <- result_format(file)
  if (format == "fits" && !fits_available()) {
    stop("`file` \"", file, "\" is FITS, and writing FITS needs wtheta ",
         "built with cfitsio. Install it (Debian/Ubuntu: apt-get install ",
         "libcfitsio-dev pkg-config) and reinstall wtheta, or write a .csv ",
         "file.", call. = FALSE)
  }
  dir <- dirname(file)
  if (!dir.exists(dir)) {
    stop("`file` \"", file, "\" cannot be written: its directory \"", dir,
         "\" does not exist.", call. = FALSE)
  }
  if (file.access(dir, 2L) != 0L) {
    stop("`file` \"", file, "\" cannot be written: its directory \"", dir,
         "\" is not writable.", call. = FALSE)
  }
  if (dir.exists(file)) {
    stop("`file` \"", file, "\" is a directory, not a file.", call. = FALSE)
  }
  if (file.exists(file) && !overwrite) {
    stop("`file` \"", file, "\" exists; use `overwrite = TRUE` to replace ",
         "it.", call. = FALSE)
  }
  if (format == "fits") {
    write_fits_result(file, extname, table, keys, extra, robject, what)
    return(invisible(file))
  }
  lines <- c(paste0("# wtheta ", keys$WTVERSN, ": ", what),
             paste0("# ", names(keys), ": ", vapply(keys, format_value, "")))
  for (nm in names(extra)) {
    f <- sidecar(file, paste0(tolower(nm), ".csv"))
    write_csv_numbers(extra[[nm]][[1L]], f, NULL)
    lines <- c(lines, paste0("# ", tolower(nm), ": ", basename(f)))
  }
  rds <- sidecar(file, "attributes.rds")
  saveRDS(robject, rds)
  lines <- c(lines, paste0("# r_object: ", basename(rds)))
  write_csv_numbers(table, file, lines)
  invisible(file)
}

format_value <- function(v) {
  if (is.character(v)) v else if (is.logical(v)) (if (v) "TRUE" else "FALSE")
  else if (is.integer(v)) as.character(v) else sprintf("%.17g", v)
}

# a list of equal-length numeric vectors, or a matrix, as CSV with 17
# significant digits (every double exactly)
write_csv_numbers <- function(x, file, comments) {
  if (is.matrix(x)) {
    x <- lapply(seq_len(ncol(x)), function(j) x[, j])
    names(x) <- paste0("V", seq_along(x))
  }
  cells <- lapply(x, function(v) {
    s <- sprintf("%.17g", v)
    s[is.na(v)] <- "NA"
    s
  })
  body <- do.call(paste, c(cells, sep = ","))
  writeLines(c(comments, paste(names(x), collapse = ","), body), file)
}

read_csv_numbers <- function(file) {
  bytes <- readBin(file, "raw", file.size(file))
  info <- .Call(C_text_info, bytes, 1L)
  if (!info[[1L]]) stop("`file` \"", file, "\" holds no table.", call. = FALSE)
  header <- strsplit(info[[3L]][1L], ",", fixed = TRUE)[[1L]]
  n <- info[[1L]] - 1
  res <- .Call(C_text_parse, bytes, as.integer(charToRaw(",")), 1, n,
               seq_along(header) - 1L)
  if (res[[4L]] > 0 || any(res[[2L]] > 0)) {
    stop("`file` \"", file, "\" is not a table wtheta wrote: row ",
         max(res[[4L]], res[[2L]]), " is not all numbers.", call. = FALSE)
  }
  stats::setNames(res[[1L]], header)
}

read_result <- function(file, extname, what) {
  check_file(file)
  src <- open_source(file)
  if (src$fits) {
    need_fits(file)
    blob <- tryCatch(fits_read_table(file, hdu = "R_OBJECT"),
                     error = function(e) conditionMessage(e))
    if (is.character(blob)) {
      if (!grepl("no HDU with EXTNAME \"R_OBJECT\"", blob, fixed = TRUE)) {
        stop(blob, call. = FALSE)
      }
      if (extname == "WTHETA") return(rebuild_wtheta(file))
      stop("`file` \"", file, "\" has no R_OBJECT extension: it was not ",
           "written by wtheta; read its tables with read_catalog() or ",
           "another FITS reader.", call. = FALSE)
    }
    tab <- fits_read_table(file, hdu = extname)
    robject <- unserialize(as.raw(blob$columns$SERIAL))
    table <- tab$columns
  } else {
    lines <- readLines(file, n = 40L, warn = FALSE)
    rds <- sub("^# r_object: ", "", grep("^# r_object: ", lines,
                                         value = TRUE))
    if (length(rds) != 1L) {
      stop("`file` \"", file, "\" names no r_object file: it was not ",
           "written by wtheta.", call. = FALSE)
    }
    rds <- file.path(dirname(file), rds)
    if (!file.exists(rds)) {
      stop("`file` \"", file, "\" names \"", rds, "\", which does not ",
           "exist: keep the files written beside it.", call. = FALSE)
    }
    robject <- readRDS(rds)
    table <- read_csv_numbers(file)
  }
  if (extname == "PAIR_COUNTS") return(robject)
  out <- table
  attributes(out) <- c(list(names = names(table)), robject)
  out
}

# ---- FITS results, written through cfitsio (src/io/fits.c) ------------------

# what each keyword of a result file says, written as its comment
keyword_comments <- c(
  ESTIMATR = "w(theta) estimator",
  COUNTING = "auto: one catalog; cross: two",
  SELFPAIR = "pairs of a point with itself counted",
  WEIGHTED = "pairs weighted by point weights",
  N_DATA = "points in the data catalog",
  N_RANDOM = "points in the random catalog",
  BACKEND = "where the pairs were counted",
  ERRMETH = "error method of w_err and COV",
  NPATCHES = "sky patches of the resampling",
  N1 = "points in the first catalog",
  N2 = "points in the second catalog",
  N_PAIRS = "pairs looked at",
  N_BELOW = "pairs closer than the first bin",
  N_ABOVE = "pairs wider than the last bin",
  WTVERSN = "version of wtheta that wrote this file")

fits_keys <- function(keys) {
  list(name = names(keys), value = unname(keys),
       comment = unname(ifelse(names(keys) %in% names(keyword_comments),
                               keyword_comments[names(keys)], "")))
}

# A list of numeric vectors (one number a row) or matrices (one row of
# numbers a row) as columns for C_fits_write: values row after row
fits_columns <- function(columns, extname) {
  n <- NROW(columns[[1L]])
  list(extname = extname,
       columns = lapply(columns, function(v) {
         if (is.raw(v)) as.vector(t(v)) else if (is.matrix(v))
           as.vector(t(v)) + 0 else as.double(v)
       }),
       `repeat` = vapply(columns, function(v) as.integer(NCOL(v)), 1L),
       unit = ifelse(grepl("^theta", names(columns)), "deg", ""),
       n_rows = as.double(n))
}

# The file is written under a temporary name in its own directory and
# renamed when complete, so a failed write leaves neither a half file nor
# a damaged old one.
write_fits_result <- function(file, extname, table, keys, extra, robject,
                              what) {
  k <- fits_keys(keys)
  none <- fits_keys(list())
  main <- c(fits_columns(table, extname), list(keys = k))
  hdus <- list(main)
  for (nm in names(extra)) {
    if (nm == "COV") {
      # an image: the usual FITS form of a matrix; astropy's
      # fits.getdata(file, "COV")[i, j] is the covariance of bins i and j
      cov <- extra[[nm]][[1L]]
      hdus[[length(hdus) + 1L]] <- list(
        extname = "COV", keys = none,
        image = matrix(as.double(cov), nrow(cov), ncol(cov)))
    } else {
      hdus[[length(hdus) + 1L]] <- c(fits_columns(extra[[nm]], nm),
                                     list(keys = none))
    }
  }
  blob <- serialize(robject, NULL, xdr = TRUE)
  hdus[[length(hdus) + 1L]] <- c(
    fits_columns(list(SERIAL = matrix(blob, 1L)), "R_OBJECT"),
    list(keys = none))
  tmp <- tempfile(paste0(".", basename(file), "-"), tmpdir = dirname(file),
                  fileext = ".part")
  on.exit(if (file.exists(tmp)) unlink(tmp), add = TRUE)
  .Call(C_fits_write, path.expand(tmp), path.expand(file), k, hdus)
  invisible(file)
}

# Internal: the 2-d image HDU named `extname` as a double matrix, [i, j]
# as astropy's data[i, j] (nulls NA)
fits_read_image <- function(file, extname) {
  need_fits(file)
  .Call(C_fits_read_image, path.expand(file), extname)
}

# a header keyword's value as written ("'LS      '", "T", "400", "1.5E-3")
# as an R value
keyword_value <- function(v) {
  v <- trimws(v)
  if (grepl("^'", v)) return(trimws(gsub("''", "'", sub("^'(.*)'$", "\\1", v)),
                                    "right"))
  if (v %in% c("T", "F")) return(v == "T")
  if (grepl("^[+-]?[0-9]+$", v)) {
    x <- as.numeric(v)
    return(if (abs(x) <= .Machine$integer.max) as.integer(x) else x)
  }
  as.numeric(sub("D", "E", v, fixed = TRUE))
}

# A wtheta object from a FITS table written by another tool (no R_OBJECT):
# the columns, the keywords of the table's header and the COV extension
# (an image, or a table with a vector column COV) when there is one.
# Attributes the file does not give are left out, not guessed.
rebuild_wtheta <- function(file) {
  info <- tryCatch(.Call(C_fits_info, path.expand(file), -1L, "WTHETA"),
                   error = function(e) NULL) %||%
    .Call(C_fits_info, path.expand(file), -1L, NULL)
  have <- info$columns$name
  auto <- c("DD", "DR", "RR")
  cross <- c("D1D2", "D1R2", "R1D2", "R1R2")
  counts <- if (all(tolower(cross) %in% tolower(have))) cross else auto
  want <- c("theta_lo", "theta_hi", "theta",
            if ("theta_mean" %in% tolower(have)) "theta_mean", counts, "w")
  if ("w_err" %in% tolower(have)) want <- c(want, "w_err")
  idx <- match(tolower(want), tolower(have))
  if (anyNA(idx)) {
    stop("`file` \"", file, "\" has no R_OBJECT extension and its table ",
         "(HDU ", info$hdu, ") lacks the column(s) ",
         paste(want[is.na(idx)], collapse = ", "), " of a w(theta) result ",
         "(theta_lo, theta_hi, theta, DD, DR, RR, w, and optionally w_err). ",
         "Its columns: ", paste(have, collapse = ", "), ".", call. = FALSE)
  }
  bad <- idx[!info$columns$kind[idx] %in% 1:2 |
             info$columns$n_elements[idx] != 1]
  if (length(bad)) {
    stop("`file` \"", file, "\" column ", dQuote(have[bad[1L]], FALSE),
         " (TFORM ", info$columns$tform[bad[1L]], ") must hold one number ",
         "per row.", call. = FALSE)
  }
  tab <- fits_read_table(file, columns = idx, info = info)
  out <- stats::setNames(lapply(tab$columns, as.double), want)
  nb <- length(out$theta)
  kw <- tab$keywords
  key <- function(name) {
    i <- match(name, kw$name)
    if (is.na(i)) NULL else keyword_value(kw$value[i])
  }
  cov <- NULL
  cov_hdu <- tryCatch(fits_read_image(file, "COV"),
                      error = function(e) conditionMessage(e))
  if (is.character(cov_hdu) && grepl("is a table", cov_hdu, fixed = TRUE)) {
    cov_hdu <- fits_read_table(file, hdu = "COV")$columns[[1L]]
  }
  if (is.matrix(cov_hdu)) {
    if (!identical(dim(cov_hdu), c(nb, nb))) {
      stop("`file` \"", file, "\" has a COV extension of ",
           paste(dim(cov_hdu), collapse = " x "), " values for ", nb,
           " bins.", call. = FALSE)
    }
    cov <- cov_hdu
    nm <- format(out$theta)
    dimnames(cov) <- list(nm, nm)
  } else if (!grepl("no HDU with EXTNAME", cov_hdu, fixed = TRUE)) {
    stop(cov_hdu, call. = FALSE)
  }
  adjacent <- nb < 2L || all(out$theta_hi[-nb] == out$theta_lo[-1L])
  a <- list(
    type = key("COUNTING") %||% (if (identical(counts, cross)) "cross" else
      "auto"),
    n_data = key("N_DATA"), n_random = key("N_RANDOM"),
    estimator = key("ESTIMATR"), self_pairs = key("SELFPAIR"),
    weighted = key("WEIGHTED"),
    error = key("ERRMETH") %||% (if (!is.null(cov) || "w_err" %in% want)
      "unknown" else "none"),
    cov = cov,
    n_patches = key("NPATCHES"), backend = key("BACKEND"),
    edges = if (adjacent) c(out$theta_lo, out$theta_hi[nb]),
    source = paste0("FITS table without R_OBJECT (HDU ", tab$hdu, ")"))
  a <- a[!vapply(a, is.null, TRUE)]
  do.call(structure, c(list(as.data.frame(out)),
                       list(class = c("wtheta", "data.frame")), a))
}
