# Files in and out: catalogs from FITS tables and text, results written and
# read back. The C side is src/text.c (text in memory), src/fits.c (cfitsio)
# and their R boundary src/glue_io.c.

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
#' `dec`. The table is read in chunks of rows through cfitsio; memory is
#' the result plus one chunk. FITS support needs the package built with
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
#' @seealso [write_wtheta()] for results.
#' @examples
#' f <- tempfile(fileext = ".txt")
#' writeLines(c("3", "600 120", "610.5 121", "21599 -30"), f)
#' read_catalog(f, units = "arcmin")
#' writeLines(c("ra,dec,w", "10,20,1.5", "30,-40,0.5"), f)
#' read_catalog(f, columns = c("ra", "dec", weight = "w"))
#' @export
read_catalog <- function(file, units = NULL, columns = NULL, sep = NULL,
                         hdu = NULL) {
  check_file(file)
  units <- check_units(units)
  columns <- check_columns(columns)
  if (!is.null(sep) && (!is.character(sep) || length(sep) != 1L ||
                        is.na(sep) || nchar(sep, "bytes") > 1L)) {
    stop("`sep` must be NULL or a single character, not ", describe(sep),
         ".", call. = FALSE)
  }
  src <- open_source(file)
  if (src$fits) {
    if (!is.null(sep)) {
      stop("`sep` is for text files; \"", file, "\" is FITS.", call. = FALSE)
    }
    return(read_fits_catalog(file, units, columns, hdu))
  }
  if (!is.null(hdu)) {
    stop("`hdu` is for FITS files; `file` \"", file, "\" is text.",
         call. = FALSE)
  }
  read_text_catalog(file, src$bytes, units %||% "deg", columns, sep)
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

read_text_catalog <- function(file, bytes, units, columns, sep) {
  info <- .Call(C_text_info, bytes, 3L)
  if (info[[2L]] > 0) {
    stop("`file` \"", file, "\" is not a text file: line ", info[[2L]],
         " holds a NUL byte (binary data?).", call. = FALSE)
  }
  n_lines <- info[[1L]]
  head <- info[[3L]]
  head_line <- info[[4L]]
  if (!n_lines) stop("`file` \"", file, "\" holds no data.", call. = FALSE)
  # bytes that are not text in this locale (say Latin-1 in UTF-8) become
  # <xx> so that string functions accept them; numbers are ASCII anyway
  odd <- which(!validEnc(head))
  if (length(odd)) head[odd] <- iconv(head[odd], "latin1", "ASCII", sub = "byte")
  if (is.null(sep)) {
    sep <- if (any(grepl(",", head, fixed = TRUE, useBytes = TRUE))) "," else ""
  }
  if (sep %in% c(" ", "\t")) sep <- ""
  sep_code <- if (identical(sep, "")) 0L else as.integer(charToRaw(sep))
  fields <- split_fields(head, sep)

  # a first line with a single whole number: the row count
  declared <- NA
  skip <- 0
  if (length(fields[[1L]]) == 1L &&
      grepl("^[0-9]+$", fields[[1L]], useBytes = TRUE)) {
    if (nchar(fields[[1L]]) > 15L) {
      stop("`file` \"", file, "\" line ", head_line[1L], " holds a single ",
           "number of ", nchar(fields[[1L]]), " digits: too large for a row ",
           "count, and a catalog needs two columns.", call. = FALSE)
    }
    declared <- as.numeric(fields[[1L]])
    skip <- 1
  }
  header <- NULL
  if (skip < n_lines) {
    f <- fields[[skip + 1L]]
    f <- sub('^"(.*)"$', "\\1", sub("^'(.*)'$", "\\1", f))
    names_given <- !is.null(columns) && is.character(columns$which)
    look <- if (names_given) integer() else if (is.null(columns)) 1:2 else
      as.integer(columns$which)
    look <- look[look <= length(f)]
    num <- !is.na(suppressWarnings(as.numeric(f[look])))
    if (names_given || (is.null(columns) && !any(num)) ||
        (length(look) && !any(num))) {
      header <- f
      skip <- skip + 1
    } else if (!all(num)) {
      stop("`file` \"", file, "\" line ", head_line[skip + 1L], " (",
           quote_line(head[skip + 1L]), ") is neither a header nor data: ",
           "column ", look[num][1L], " holds a number but column ",
           look[!num][1L], " does not. Fix or remove the line.",
           call. = FALSE)
    }
  }
  n_rows <- n_lines - skip
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
  cols <- if (is.null(columns) && is.null(header)) {
    list(idx = 1:2, names = c("ra", "dec"))
  } else {
    resolve_columns(columns, header, file)
  }
  idx <- cols$idx
  res <- .Call(C_text_parse, bytes, sep_code, skip, n_rows, idx - 1L)
  row_text <- function(row) {
    r <- .Call(C_text_row, bytes, skip, row - 1)
    list(line = r[[1L]], text = quote_line(iconv(r[[2L]], "latin1",
                                                 "ASCII", sub = "byte")))
  }
  if (res[[4L]] > 0) {
    r <- row_text(res[[4L]])
    body <- .Call(C_text_row, bytes, skip, res[[4L]] - 1)[[2L]]
    got <- length(split_fields(trimws(sub("#.*$", "", body, useBytes = TRUE)),
                               sep)[[1L]])
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
      values[[j]] <- .Call(C_text_strings, bytes, sep_code, skip, n_rows,
                           idx[j] - 1L)
    }
  }
  out <- check_catalog(list(ra = to_degrees(values[[1L]], units),
                            dec = to_degrees(values[[2L]], units)), "file")
  add_columns(out, values[-(1:2)], cols$names[-(1:2)])
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

read_fits_catalog <- function(file, units, columns, hdu) {
  need_fits(file)
  h <- check_hdu(hdu)
  info <- .Call(C_fits_info, path.expand(file), h[[1L]], h[[2L]])
  cols <- resolve_columns(columns, info$columns$name, file)
  for (k in 1:2) {
    i <- cols$idx[k]
    if (!info$columns$kind[i] %in% 1:2 || info$columns$n_elements[i] != 1) {
      stop("`file` \"", file, "\" column ", dQuote(info$columns$name[i],
                                                   FALSE),
           " (TFORM ", info$columns$tform[i], ") must hold one number per ",
           "row to be ", c("ra", "dec")[k], ".", call. = FALSE)
    }
  }
  tab <- fits_read_table(file, columns = cols$idx, info = info)
  pos <- lapply(1:2, function(k) {
    nm <- names(tab$columns)[k]
    tunit <- trimws(tab$units[[k]])
    u <- if (nzchar(tunit)) {
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
    } else units %||% "deg"
    to_degrees(as.double(tab$columns[[k]]), u)
  })
  out <- check_catalog(list(ra = pos[[1L]], dec = pos[[2L]]), "file",
                       columns = names(tab$columns)[1:2])
  add_columns(out, unname(tab$columns[-(1:2)]), cols$names[-(1:2)])
}
