# The text reader of read_catalog() (R/read_catalog.R): lines, separator,
# header and row count found in R, values parsed in C (src/io/text.c).

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
  # positions found by name (columns NULL or only other columns named):
  # columns 1 and 2 when there is no header
  auto <- is.null(columns) || isTRUE(columns$auto)
  look <- if (names_given) integer() else if (auto) 1:2 else
    as.integer(columns$which[match(c("ra", "dec"), columns$names)])
  look <- look[look <= length(f)]
  num <- !is.na(suppressWarnings(as.numeric(f[look])))
  if (names_given || (auto && !any(num)) ||
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
