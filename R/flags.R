# Rows of a catalog kept by a flag column, as TreeCorr's flag_col and
# ok_flag: read_catalog(file, flag = "FLAG", ok = 0).

#' @name read_catalog
#' @rdname read_catalog
#' @section Flags:
#' `flag` names a column of integer flags (a bit mask per row), for FITS,
#' text and HDF5 alike, and `ok` the bits allowed: a row is kept when its
#' flag has no bit set outside `ok`, that is when `bitwAnd(flag,
#' bitwNot(ok)) == 0`, TreeCorr's rule for `flag_col` and `ok_flag`. With
#' the default `ok = 0` only rows whose flag is 0 are kept; `ok = 3` keeps
#' flags 0, 1, 2 and 3 and drops 4. Flags are whole numbers of magnitude
#' below \eqn{2^{53}}, negative ones taken as 64-bit two's complement (so
#' -1 has every bit set), or logical (`TRUE` is 1); a column holding
#' fractions, text or missing values is an error naming the column and the
#' row. Positions are checked in every row, flagged or not. The number of
#' rows dropped is reported in a message and kept in the attribute
#' `"flagged"` of the result (0 when none is); a flag that drops every row
#' is an error. The flag column is not in the result unless `columns` asks
#' for it too.
#' @param flag `NULL` (keep every row), or the flag column: a name
#'   (case-insensitive; for HDF5 a dataset path, absolute or relative to
#'   `group`) or, in FITS and text, a column number.
#' @param ok The flag bits allowed in the rows kept: a whole number from 0
#'   to \eqn{2^{53} - 1}. Only with `flag`.
NULL

# `flag` and `ok` as given: NULL when no flag, else list(flag, ok)
check_flag_args <- function(flag, ok, ok_given) {
  if (is.null(flag)) {
    if (ok_given) {
      stop("`ok` is the flag bits allowed, for `flag`; give `flag` too ",
           "(`ok` is ", describe(ok), ").", call. = FALSE)
    }
    return(NULL)
  }
  name <- is.character(flag) && length(flag) == 1L && !is.na(flag) &&
    nzchar(flag)
  number <- is.numeric(flag) && !is.object(flag) && length(flag) == 1L &&
    is.finite(flag) && flag == round(flag) && flag >= 1 &&
    flag <= .Machine$integer.max
  if (!name && !number) {
    stop("`flag` must be NULL, a column name or a column number, not ",
         describe(flag), ".", call. = FALSE)
  }
  if (!is.numeric(ok) || is.object(ok) || length(ok) != 1L ||
      !is.finite(ok) || ok != round(ok) || ok < 0 || ok >= 2^53) {
    stop("`ok` must be a whole number from 0 to 2^53 - 1 (the flag bits ",
         "allowed), not ", describe(ok), ".", call. = FALSE)
  }
  list(flag = if (number) as.integer(flag) else flag, ok = as.double(ok))
}

# The flag column of a FITS or text catalog, read beside the catalog's
# columns: list(values, label). FITS reads the one column; text parses the
# bytes once more for it, with the same separator and header as the
# catalog (a second pass over the text, only when a flag is asked for).
read_flag_column <- function(file, src, flags, columns, hdu, sep) {
  if (is.null(flags)) return(NULL)
  f <- flags$flag
  if (src$fits) {
    h <- check_hdu(hdu)
    info <- .Call(C_fits_info, path.expand(file), h[[1L]], h[[2L]])
    have <- info$columns$name
    idx <- if (is.character(f)) match_names(f, have, paste0(
      "`file` \"", file, "\""), ignore_case = TRUE) else f
    if (is.na(idx) || idx > length(have)) {
      stop("`flag` ", if (is.character(f)) paste0("names \"", f, "\"") else
        paste("is column", f), ", which is not among the columns of `file` ",
        "\"", file, "\": ", paste(have, collapse = ", "), ".", call. = FALSE)
    }
    tab <- fits_read_table(file, columns = idx, info = info)
    return(list(values = tab$columns[[1L]], label = have[idx]))
  }
  lines <- text_lines(file, src$bytes)
  s <- text_sep(sep, lines$head)
  layout <- text_layout(file, lines, split_fields(lines$head, s$sep),
                        columns)
  have <- layout$header
  if (is.character(f)) {
    if (is.null(have)) {
      stop("`flag` names the column \"", f, "\" but `file` \"", file,
           "\" has no header line; give its number.", call. = FALSE)
    }
    idx <- match_names(f, have, paste0("`file` \"", file, "\""),
                       ignore_case = TRUE)
    if (is.na(idx)) {
      stop("`flag` names \"", f, "\", which is not among the columns of ",
           "`file` \"", file, "\": ", paste(have, collapse = ", "), ".",
           call. = FALSE)
    }
  } else {
    idx <- f
    if (!is.null(have) && idx > length(have)) {
      stop("`flag` is column ", idx, " but `file` \"", file, "\" has ",
           length(have), ".", call. = FALSE)
    }
  }
  values <- text_values(file, src$bytes, s, layout, idx)[[1L]]
  list(values = values,
       label = if (is.null(have)) paste0("column ", idx) else have[idx])
}

# The rows of catalog `cat` (a data frame from read_catalog()) whose flag
# has no bit outside flags$ok, with attribute "flagged" (the rows dropped)
# and a message saying how many; `flag` is list(values, label).
apply_flags <- function(cat, flag, flags, file) {
  if (is.null(flags)) return(cat)
  n <- nrow(cat)
  if (NROW(flag$values) != n) {
    stop("`flag` column \"", flag$label, "\" of `file` \"", file, "\" has ",
         NROW(flag$values), " rows but the catalog has ", n, ".",
         call. = FALSE)
  }
  keep <- flags_clear(flag_numbers(flag, file), flags$ok)
  dropped <- n - sum(keep)
  if (dropped == n) {
    stop("`flag` column \"", flag$label, "\" of `file` \"", file, "\" ",
         "flags all ", n, " rows: none has a flag without bits outside ",
         "`ok` = ", format(flags$ok, scientific = FALSE), ".", call. = FALSE)
  }
  if (dropped) {
    cols <- lapply(cat, function(v) {
      if (is.matrix(v)) v[keep, , drop = FALSE] else v[keep]
    })
    cat <- structure(cols, class = "data.frame",
                     row.names = c(NA_integer_, -(n - dropped)))
  }
  message("read_catalog(): ", format(dropped, scientific = FALSE), " of ",
          format(n, scientific = FALSE), " rows of `file` \"", file,
          "\" dropped by `flag` \"", flag$label, "\" (kept: no bit set ",
          "outside `ok` = ", format(flags$ok, scientific = FALSE), ").")
  attr(cat, "flagged") <- dropped
  cat
}

# a flag column as whole numbers (double), checked
flag_numbers <- function(flag, file) {
  v <- flag$values
  where <- paste0("`flag` column \"", flag$label, "\" of `file` \"", file,
                  "\"")
  if (is.logical(v)) v <- as.integer(v)
  if (!is.numeric(v) || is.object(v) || !is.null(dim(v))) {
    what <- if (!is.null(dim(v))) "a vector column" else
      paste0("of type ", class(v)[1L])
    stop(where, " must hold one integer flag per row, not ", what, ".",
         call. = FALSE)
  }
  v <- as.double(v)
  bad <- which(is.na(v))
  if (length(bad)) {
    stop(where, " has no value (NA) in row ", bad[1L], ".", call. = FALSE)
  }
  bad <- which(v != round(v) | abs(v) >= 2^53)
  if (length(bad)) {
    stop(where, " must hold integer flags; row ", bad[1L], " holds ",
         format(v[bad[1L]], digits = 17), ".", call. = FALSE)
  }
  v
}

# whether each flag v has no bit outside ok (flag & ~ok == 0), in 64-bit
# two's complement, computed exactly on 16-bit pieces: floor(v / 2^16k)
# %% 2^16 is piece k of v's two's complement for |v| < 2^53, and R's
# bitwAnd() takes 32-bit integers
flags_clear <- function(v, ok) {
  keep <- rep(TRUE, length(v))
  for (k in 0:3) {
    s <- 2^(16 * k)
    piece <- as.integer(floor(v / s) %% 65536)
    allowed <- as.integer(floor(ok / s) %% 65536)
    keep <- keep & bitwAnd(piece, bitwAnd(bitwNot(allowed), 65535L)) == 0L
  }
  keep
}
