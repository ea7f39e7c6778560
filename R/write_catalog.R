#' Write a catalog as a FITS table or a CSV file
#'
#' `write_catalog()` writes a catalog (say randoms from [random_catalog()]
#' or a cut of the data) so that other tools read it without R: a FITS
#' binary table (through cfitsio, the writer of wtheta's result files, with
#' checksums) or a CSV file with a header line. [read_catalog()] reads
#' either back: the same columns, the numbers identical.
#'
#' Every column of `x` is written, in its order: double columns as 64-bit
#' floats (FITS `D`; CSV with 17 significant digits, so that each number
#' reads back identical; `NA` is written as `NaN` in FITS and `NA` in CSV,
#' and reads back as `NA`), integer columns as 32-bit integers (FITS `J`),
#' character and factor columns as text (FITS `A`, as wide as the longest
#' value; in CSV, text that reads as a number reads back as a number).
#' The position columns, `ra` and `dec` (found ignoring case, as
#' everywhere in wtheta, and checked as [wtheta()] checks them), are in
#' degrees, and their FITS `TUNIT` says `deg`.
#'
#' Refused, naming the column: logical, list, matrix and classed columns
#' other than factors (dates, say: convert them first), `NA` in integer or
#' character columns (FITS has no place for them without a null value),
#' and, in CSV, text holding a comma, a quote or a line break.
#'
#' @param x A data frame with columns `ra` and `dec` in degrees.
#' @param file The path: `.fits` (or `.fit`, `.fts`) or `.csv`, which
#'   picks the format unless `format` says.
#' @param format `"auto"` (by the extension), `"fits"` or `"csv"`.
#' @param overwrite Replace an existing file.
#' @return `file`, invisibly.
#' @seealso [read_catalog()], [write_healpix_map()], [random_catalog()].
#' @examples
#' ran <- random_catalog(1000, seed = 1)
#' ran$w <- runif(1000)
#' f <- tempfile(fileext = ".csv")
#' write_catalog(ran, f)
#' back <- read_catalog(f, columns = c("ra", "dec", "w"))
#' identical(back$w, ran$w)
#' @export
write_catalog <- function(x, file, format = c("auto", "fits", "csv"),
                          overwrite = FALSE) {
  check_file_name(file)
  check_flag(overwrite, "overwrite")
  format <- match_choice(format, c("auto", "fits", "csv"), "format")
  if (!is.data.frame(x)) {
    stop("`x` must be a data frame with columns ra and dec, not ",
         describe(x), ".", call. = FALSE)
  }
  # the positions checked as every function checks a catalog
  as_catalog(x, "x")
  ext <- if (grepl("\\.(fits|fit|fts)$", file, ignore.case = TRUE)) "fits"
    else if (grepl("\\.csv$", file, ignore.case = TRUE)) "csv"
  if (format == "auto") {
    if (is.null(ext)) {
      stop("`file` \"", file, "\" must end in .fits (or .fit, .fts) or ",
           ".csv, or `format` must say which.", call. = FALSE)
    }
    format <- ext
  }
  if (format == "fits") need_fits(file)
  cols <- catalog_columns_to_write(x, format)
  check_target(file, overwrite)
  if (format == "fits") {
    pos <- tolower(names(cols)) %in% c("ra", "dec")
    units <- as.list(stats::setNames(ifelse(pos, "deg", ""), names(cols)))
    hdu <- pipeline_table("CATALOG", cols, units, list(
      WTVERSN = as.character(utils::packageVersion("wtheta"))))
    write_pipeline_fits(file, list(), list(hdu))            # R/multi_io.R
    return(invisible(file))
  }
  text <- lapply(cols, function(v) {
    if (is.double(v)) sprintf("%.17g", v) else as.character(v)
  })
  lines <- c(paste(names(cols), collapse = ","),
             do.call(paste, c(unname(text), sep = ",")))
  write_all_or_nothing(list2(file, function(tmp) writeLines(lines, tmp)))
  invisible(file)
}

# a one-element list named by a computed name
list2 <- function(name, value) stats::setNames(list(value), name)

# the columns of `x` as write_catalog() writes them: doubles, integers and
# strings (factors as their labels), refusing what cannot be written
catalog_columns_to_write <- function(x, format) {
  nm <- names(x)
  if (is.null(nm) || anyNA(nm) || any(!nzchar(nm)) ||
      anyDuplicated(tolower(nm))) {
    stop("`x` must have distinct, non-empty column names (ignoring case), ",
         "not ", paste(dQuote(nm, FALSE), collapse = ", "), ".", call. = FALSE)
  }
  if (format == "csv" && any(grepl("[,\"\n\r]", nm))) {
    stop("`x` has a column name with a comma, quote or line break (",
         dQuote(nm[grepl("[,\"\n\r]", nm)][1L], FALSE), "), which a CSV ",
         "header cannot hold.", call. = FALSE)
  }
  out <- lapply(nm, function(k) {
    v <- x[[k]]
    where <- paste0("`x` column ", dQuote(k, FALSE))
    if (is.factor(v)) v <- as.character(v)
    ok <- is.null(dim(v)) && !is.list(v) && (!is.object(v)) &&
      (is.double(v) || is.integer(v) || is.character(v))
    if (!ok) {
      what <- if (is.logical(v)) "logical" else if (is.list(v)) "a list" else
        if (!is.null(dim(v))) "a matrix" else if (is.object(v))
          paste0("of class ", class(v)[1L]) else paste0("of type ", typeof(v))
      stop(where, " is ", what, "; write_catalog() writes numbers, ",
           "integers and text (convert it first).", call. = FALSE)
    }
    if (!is.double(v) && anyNA(v)) {
      stop(where, " has NA in row ", which(is.na(v))[1L], "; an integer or ",
           "text column cannot hold NA in FITS or read back as NA.",
           call. = FALSE)
    }
    if (is.character(v) && format == "csv" && any(grepl("[,\"\n\r]", v))) {
      stop(where, " has text with a comma, quote or line break (row ",
           which(grepl("[,\"\n\r]", v))[1L], "), which a CSV field read by ",
           "read_catalog() cannot hold; write FITS instead.", call. = FALSE)
    }
    v
  })
  stats::setNames(out, nm)
}
