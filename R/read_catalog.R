# read_catalog(): catalogs from FITS tables, HDF5 files and text files,
# the file's format told by its first bytes, the position columns found and
# their units converted to degrees, rows kept by a flag. The text reader is
# R/text.R, the FITS one R/fits.R, HDF5 R/hdf5.R, flags R/flags.R; the C
# side is src/io/ and its R boundary src/r/text.c and src/r/fits.c.

#' Read a catalog of sky positions from a FITS table, an HDF5 file or a text file
#'
#' Reads right ascension and declination, and any other columns asked for
#' (weights, redshifts, flags), from a FITS binary or ASCII table, from
#' datasets of an HDF5 file (as LSST DESC's TXPipe writes them) or from a
#' text file (whitespace separated or CSV), and keeps the rows a flag
#' column allows when asked. The format is decided by the content, not the
#' name: a file whose first bytes are `SIMPLE  =` (gzip compressed or not)
#' is FITS, one with the HDF5 signature is HDF5, anything else is text.
#'
#' @section FITS:
#' `hdu` picks the table: `NULL` the first table extension, a number the
#' HDU counted from 0 (the primary HDU, as astropy counts), a string the
#' `EXTNAME`. Every column type is read: `L` as logical; `B`, `I`, `J` and
#' unsigned `I` as integer; unsigned `J`, `E`, `D` and scaled columns
#' (`TSCALn`, `TZEROn`) as double; `A` as character; `K` (64-bit
#' integers, such as DESI's `TARGETID`) exactly, as `bit64::integer64`
#' (suggested package); without bit64 as double when every value is
#' within 2^53, else an error naming the column (never rounded). Unsigned
#' `K` (`TZEROn` = 2^63) is integer64 when every value is below 2^63, else
#' an error; ra and dec from `K` columns are doubles (exact, or an error). A vector column (say
#' `1024D`) becomes a matrix column with one row per table row.
#' Variable-length arrays, bit and complex columns are refused by name.
#' Nulls (`TNULLn`, NaN) are `NA`, and an error naming the row in `ra` or
#' `dec`. Columns are read in chunks of rows through cfitsio; memory is
#' the result plus one chunk; plain numeric columns are decoded from raw
#' rows read 4 MB at a time, so a file that shrinks while it is read is an
#' error naming it, never a crash. The sizes a header claims (`NAXIS2`
#' rows of `NAXIS1` bytes) are checked against the file before anything
#' is allocated, a header cfitsio cannot parse is named with its HDU and
#' card, and a bad value is reported at its own row. FITS support needs the package built with
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
#'   names in the file. One named column other than `ra` and `dec`
#'   (`c(weight = "W")`): the positions are found as with `NULL` and that
#'   column is read besides them.
#' @param sep Text only. Field separator: `NULL` (the default) detects
#'   commas in the first lines, otherwise splits on spaces and tabs; or a
#'   single character (a space or a tab mean runs of spaces and tabs).
#' @param hdu FITS only: `NULL`, an HDU number (from 0) or an `EXTNAME`.
#' @return A data frame with numeric columns `ra` (in `[0, 360)`) and `dec`
#'   (in `[-90, 90]`), in degrees, then the other columns asked for, one
#'   row per row of the table or line of data (those the flag keeps, with
#'   attribute `"flagged"`, when `flag` is given).
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
#' # flags: rows with no bit outside ok = 1 are kept (0 and 1, not 4)
#' writeLines(c("ra,dec,flag", "10,20,0", "30,-40,4", "50,5,1"), f)
#' read_catalog(f, flag = "flag", ok = 1)
#' @export
read_catalog <- function(file, units = NULL, columns = NULL, sep = NULL,
                         hdu = NULL, group = NULL, flag = NULL, ok = 0) {
  args <- check_read_args(file, units, columns, sep)
  flags <- check_flag_args(flag, ok, !missing(ok))         # R/flags.R
  hdf5 <- is_hdf5(file)                                    # R/hdf5.R
  check_hdf5_args(file, hdf5, sep, hdu, group)
  if (hdf5) {
    tab <- read_hdf5_columns(file, args$columns, group, flags)
  } else {
    src <- open_source(file)
    check_format_args(src, file, sep, hdu)
    tab <- if (src$fits) {
      read_fits_columns(file, args$columns, hdu)
    } else {
      read_text_columns(file, src$bytes, args$columns, sep)
    }
    tab$flag <- read_flag_column(file, src, flags, args$columns, hdu, sep)
  }
  pos <- positions_in_degrees(tab, args$units, file)
  out <- check_catalog(pos, "file", columns = tab$labels)
  out <- add_columns(out, tab$values[-(1:2)], tab$names[-(1:2)])
  apply_flags(out, tab$flag, flags, file)                  # R/flags.R
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
    # `units` cannot override a TUNIT (a contradiction is an error), so
    # say what can be done: the values converted outside wtheta
    hours <- tolower(tunit) %in% c("hourangle", "hour", "hours", "h", "hr")
    stop("`file` \"", file, "\" column ", dQuote(nm, FALSE), " has ",
         "TUNIT \"", tunit, "\", which wtheta does not convert (it reads ",
         "deg, arcmin, arcsec and rad, and `units` cannot override a ",
         "column's TUNIT). Read the table with another reader and give ",
         "wtheta() a data frame with ra and dec in degrees",
         if (hours) paste0(" (", nm, " * 15 for hours)"), ", or write the ",
         "column in degrees with TUNIT 'deg'.", call. = FALSE)
  }
  if (!is.null(units) && units != v) {
    stop("`units` is \"", units, "\" but column ", dQuote(nm, FALSE),
         " of `file` \"", file, "\" has TUNIT \"", tunit, "\".",
         call. = FALSE)
  }
  unname(v)
}

# `file` as a path: one non-empty string
check_file_name <- function(file) {
  if (!is.character(file) || length(file) != 1L || is.na(file) ||
      !nzchar(file)) {
    stop("`file` must be a single file path, not ", describe(file), ".",
         call. = FALSE)
  }
}

check_file <- function(file) {
  check_file_name(file)
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
  # named columns without ra and dec: the positions found by their usual
  # names (text without a header: columns 1 and 2), these besides
  nm <- names(columns)
  auto <- length(columns) == 1L && !is.null(nm) && !anyNA(nm) &&
    nzchar(nm) && !nm %in% c("ra", "dec")
  if (length(columns) < 2L && !auto) {
    bad("give at least the two position columns")
  }
  key <- if (is.character(columns)) tolower(columns) else columns
  if (anyDuplicated(key)) {
    stop("`columns` names column ", format(columns[anyDuplicated(key)]),
         " twice: ", describe(columns), ".", call. = FALSE)
  }
  if (auto) return(list(which = unname(columns), names = nm, auto = TRUE))
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
  what <- paste0("`file` \"", file, "\"")
  for (k in seq_along(ra_names)) {
    ij <- match_names(c(ra_names[k], dec_names[k]), have, what,
                      ignore_case = TRUE)
    if (!anyNA(ij)) return(ij)
  }
  stop("`file` \"", file, "\" has no columns with the usual names of ",
       "right ascension and declination (RA/DEC, ALPHA_J2000/DELTA_J2000, ",
       "RAJ2000/DEJ2000, ...); give them in `columns`. Its columns: ",
       paste(have, collapse = ", "), ".", call. = FALSE)
}

# where the names `want` of `columns` are among a file's column names
# `have`, case ignored (two columns that answer to one name are an error);
# a name that is not there is an error listing the file's columns
file_columns <- function(want, have, file) {
  idx <- match_names(want, have, paste0("`file` \"", file, "\""),
                     ignore_case = TRUE)
  if (anyNA(idx)) {
    stop("`columns` names ", dQuote(want[is.na(idx)][1L], FALSE),
         ", which is not among the columns of `file`: ",
         paste(have, collapse = ", "), ".", call. = FALSE)
  }
  idx
}

# column indexes (from 1) and result names of `columns` among `have`
resolve_columns <- function(columns, have, file) {
  if (is.null(columns)) {
    return(list(idx = find_positions(have, file), names = c("ra", "dec")))
  }
  if (isTRUE(columns$auto)) {
    pos <- if (is.null(have)) 1:2 else find_positions(have, file)
    extra <- resolve_columns(list(which = columns$which,
                                  names = columns$names), have, file)
    if (any(extra$idx %in% pos)) {
      stop("`columns` asks for a position column (", paste(have[pos] %||%
        pos, collapse = ", "), ") as ", paste(columns$names[extra$idx %in%
        pos], collapse = ", "), ".", call. = FALSE)
    }
    return(list(idx = c(pos, extra$idx), names = c("ra", "dec", extra$names)))
  }
  w <- columns$which
  if (is.character(w)) {
    idx <- file_columns(w, have, file)
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
  first <- match(c("ra", "dec"), nm)
  first <- first[!is.na(first)]
  o <- c(first, setdiff(seq_along(nm), first))
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

add_columns <- function(cat, values, names) {
  for (j in seq_along(values)) cat[[names[j]]] <- values[[j]]
  cat
}
