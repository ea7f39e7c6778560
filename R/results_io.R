# Results written and read back: write_wtheta(), read_wtheta(),
# write_pair_counts(), read_pair_counts(), as FITS (R/fits.R) or CSV with
# a sidecar of what the CSV cannot hold.

#' Write and read w(theta) results and pair counts
#'
#' `write_wtheta()` writes a [wtheta()] or [wtheta_multi()] result. With
#' `format = "auto"` (or `"fits"`, `"csv"`, which must agree) the format
#' follows the extension of `file`:
#' * `.fits` (or `.fit`, `.fts`): a FITS file written through cfitsio, so
#'   the package must be built with it (Debian: `apt-get install
#'   libcfitsio-dev pkg-config`, then reinstall; without it writing FITS is
#'   an error and `.csv` is the way). Its extension `WTHETA` is a binary
#'   table with `theta_lo`, `theta_hi`, `theta` (`TUNIT` the result's
#'   unit, `attr(x, "theta_units")`: `deg`, or `arcmin`, `arcsec`, `rad`
#'   for bins from `theta_bins(units = )`), `DD`,
#'   `DR`, `RR`, `w`, `w_err` (every column of the result, in double
#'   precision); the primary header and the table's carry the keywords
#'   `ESTIMATR` (estimator), `COUNTING` (`auto` or `cross`), `SELFPAIR`,
#'   `WEIGHTED`, `N_DATA`, `N_RANDOM` (and for a cross-correlation
#'   `N_DATA2`, `N_RANDOM2`), `BACKEND`, `ERRMETH` (error method),
#'   `NPATCHES`, `THUNIT` (the unit of the theta columns) and `WTVERSN`
#'   (wtheta's version), each with a comment saying
#'   what it is; a PIP-weighted result (`bitwise =`, `angular =`) adds
#'   `PIPBITS` (bits of the words), `NREALIZ` (`nrealizations`), `NOFFSET`,
#'   `DEFVALUE` (`default_value`) and `ANGUPWT` (angular upweights
#'   applied), as do [write_pair_counts()] and a [wtheta_multi()] result. Extension `COV` is an image holding the covariance matrix
#'   (astropy's `fits.getdata(file, "COV")[i, j]` is the covariance of bins
#'   `i` and `j`); extension `R_OBJECT` holds the remaining R attributes
#'   (pair counts, patches, replicates), serialized with [serialize()], so
#'   that the round trip is exact. Every HDU has `CHECKSUM` and `DATASUM`.
#'   The file is written under a temporary name in the same directory and
#'   renamed when complete: a failed write leaves no file behind.
#' * `.csv`: the table, numbers with 17 significant digits (exact), after
#'   comment lines (`#`) giving the same keywords and naming two files
#'   written beside it: the covariance (`<name>-cov.csv`) and the R
#'   attributes (`<name>-attributes.rds`, which also holds the table and
#'   the covariance: reading checks the CSV files against it and refuses a
#'   table or covariance edited since, or a sidecar of another result).
#'   All are written under short temporary names in the same directory and
#'   renamed into place only when every one is written: a failed write
#'   leaves the old files as they were.
#'
#' `read_wtheta()` gives back an object identical to the one written,
#' covariance and attributes included. Read only files you trust: the R
#' attributes are unserialized. A FITS file without `R_OBJECT` (a table
#' written by another tool) is read from its table (`WTHETA`, else the
#' first table) with the columns `theta_lo`, `theta_hi`, `theta`, `DD`,
#' `DR`, `RR` (or `D1D2`, `D1R2`, `R1D2`, `R1R2`), `w` and optionally
#' `w_err` (names case-insensitive), the covariance from an extension `COV`
#' (an image, or a table whose first column holds one row of the matrix per
#' bin) and the attributes from the keywords above in the table's header
#' (the unit from `THUNIT`, else from the `TUNIT` of `theta` when that is
#' `deg`, `arcmin`, `arcsec` or `rad`, else degrees; a file without the
#' unit, as written before units, is in degrees);
#' what the file does not give is left out (the error method is
#' `"unknown"` when there are errors but no `ERRMETH`), and attribute
#' `source` says the object was rebuilt this way.
#'
#' A [wtheta_multi()] result is written the same way, as the table
#' `WTHETA_MULTI` (columns `i` and `j` hold the sample numbers from 1, named
#' by keywords `SAMPLE1`, `SAMPLE2`, ...; the CSV likewise), its joint
#' covariance as `COV` (`<name>-cov.csv`), and every attribute, so that
#' `read_wtheta()` gives back the identical object.
#'
#' For the survey pipelines' likelihood codes, `format = "sacc"` writes a
#' SACC file (FITS layout of LSST DESC's sacc, read by Firecrown,
#' `sacc_like` and TXPipe) and `format = "twopoint"` a DES twopoint FITS
#' file (read by CosmoSIS's `2pt_like`), whatever the extension:
#' * SACC: one tracer per sample, named after it (an `NZ` tracer with
#'   `nz`, else a `Misc` tracer with no n(z), with a message saying so);
#'   data type `galaxy_density_xi`, points tagged `theta`, `theta_min`,
#'   `theta_max` (arcmin, as TXPipe writes them, converted from the
#'   result's unit), `npair` and `weight` (both
#'   the DD or D1D2 count of the point: the weighted sum for weighted
#'   catalogs); the full joint covariance.
#' * twopoint: extension `wtheta` (`2PTDATA = T`, `QUANT1 = QUANT2 = 'GPR'`,
#'   `WINDOWS = 'SAMPLE'`, `KERNEL_1 = KERNEL_2 = 'nz_sample'`) with columns
#'   `BIN1`, `BIN2` (the sample numbers, from 1), `ANGBIN`, `VALUE`, `ANG`,
#'   `ANGLEMIN`, `ANGLEMAX` (arcmin, converted from the result's unit) and
#'   `NPAIRS`, the sample names as
#'   metadata keywords `MD_BIN1`, `MD_BIN2`, ...; `COVMAT`, the covariance
#'   image with `NAME_0`, `STRT_0`, `LEN_0`; with `nz`, the n(z) extension
#'   `nz_sample` (`Z_MID` the z given, `Z_LOW`, `Z_HIGH` halfway to the
#'   neighbours; every sample on one z grid). Without `nz` there is no n(z)
#'   extension (twopoint reads such a file; a likelihood needs the kernel
#'   added), and a message says so.
#' A [wtheta()] result is one sample `"data"` (auto-correlation) or two,
#' `"data"` and `"data2"` (cross-correlation).
#'
#' `read_wtheta()` reads SACC and twopoint files too (`format = "auto"`
#' tells them from their headers): the `galaxy_density_xi` points (SACC) or
#' the w(theta) spectrum (`QUANT1 = QUANT2 = 'GPR'`, the one named `wtheta`
#' when there are several), as a `wtheta_multi` result whatever the number
#' of correlations: samples from the tracer names (twopoint: `MD_BIN<k>`,
#' else `"bin<k>"`), angles in degrees, the block of the file's covariance
#' for these points as `cov` (and `w_err` its diagonal's root), error method
#' `"unknown"`, the pair counts as attribute `npair`, and attribute `source`.
#'
#' `write_pair_counts()` and `read_pair_counts()` do the same for a
#' [pair_counts()] result (extensions `PAIR_COUNTS`, with `theta_lo`,
#' `theta_hi`, `counts`, and, when counted with `mean_theta = TRUE`,
#' `theta_mean` and `theta_sum`, all with `TUNIT` the result's unit and
#' the keyword `THUNIT`; and `PATCHES` with the per-patch count
#' arrays when there are any, one row per bin, or `MARGINS` for counts that
#' keep only their margins (those of [wtheta()] with `error =
#' "jackknife"`), one row per bin of the P row sums, P column sums and P
#' diagonal counts of its patch array, then its total), so that counts
#' made on one machine can be
#' combined on another. A result with `theta_mean` (from
#' `mean_theta = TRUE`) writes it as a column like the others, and
#' [read_wtheta()] of a FITS table from another tool takes a
#' `theta_mean` column when there is one.
#'
#' @param x A `wtheta`, `wtheta_multi` or `pair_counts` object.
#' @param file Path to write or read.
#' @param format `"auto"` (by the extension when writing, by the contents
#'   when reading), `"fits"`, `"csv"`, `"sacc"` or `"twopoint"`. A logical
#'   third argument is taken as `overwrite`, as before `format` was added.
#' @param nz For `"sacc"` and `"twopoint"`: `NULL`, or the n(z) of each
#'   sample, a list named by sample of `list(z =, nz =)`.
#' @param overwrite Replace an existing file?
#' @param verify For a FITS file: check the `CHECKSUM` and `DATASUM` of
#'   every HDU first, and stop with an error naming the file and the HDU
#'   when one does not match (the file changed after it was written: one
#'   flipped byte changes a count). HDUs without them (files of other
#'   tools) are read as they are. `FALSE` skips the check.
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
write_wtheta <- function(x, file,
                         format = c("auto", "fits", "csv", "sacc", "twopoint"),
                         nz = NULL, overwrite = FALSE) {
  # other formats and wtheta_multi() results: R/multi_io.R
  args <- write_format_args(format, overwrite)
  overwrite <- args$overwrite
  done <- write_wtheta_as(x, file, args$format, nz, overwrite)
  if (!is.null(done)) return(invisible(done))
  cov <- attr(x, "cov")
  keys <- result_keywords(c(list(
    ESTIMATR = attr(x, "estimator"), COUNTING = attr(x, "type"),
    SELFPAIR = attr(x, "self_pairs"), WEIGHTED = attr(x, "weighted"),
    N_DATA = attr(x, "n_data"), N_RANDOM = attr(x, "n_random"),
    N_DATA2 = attr(x, "n_data2"), N_RANDOM2 = attr(x, "n_random2"),
    BACKEND = attr(x, "backend"), ERRMETH = attr(x, "error"),
    NPATCHES = attr(x, "n_patches"), THUNIT = theta_units_of(x)),
    pip_keywords(attr(x, "pip"))))
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
read_wtheta <- function(file,
                        format = c("auto", "fits", "csv", "sacc", "twopoint"),
                        verify = TRUE) {
  verify_fits_result(file, verify)                         # R/fits.R
  # other formats and wtheta_multi() results: R/multi_io.R
  read_wtheta_as(file, format) %||% read_result(file, "WTHETA", "w(theta)")
}

#' @rdname write_wtheta
#' @export
write_pair_counts <- function(x, file, overwrite = FALSE) {
  if (!inherits(x, "pair_counts")) {
    stop("`x` must be a result of pair_counts(), not ", describe(x), ".",
         call. = FALSE)
  }
  keys <- result_keywords(c(list(
    COUNTING = x$type, SELFPAIR = x$self_pairs, N1 = x$n1, N2 = x$n2,
    N_PAIRS = x$n_pairs, N_BELOW = x$n_below, N_ABOVE = x$n_above,
    BACKEND = x$backend, THUNIT = theta_units_of(x)), pip_keywords(x$pip)))
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
  m <- x$patch_margins
  if (!is.null(m)) {
    # one row per bin: the P row sums, P column sums and P diagonal counts
    # of that bin's patch array, then its total
    extra <- list(MARGINS = list(
      MARGINS = cbind(t(m$rows), t(m$cols), t(m$diag), m$total,
                      deparse.level = 0)))
  }
  write_result(file, overwrite, "PAIR_COUNTS", table, keys, extra,
               list(object = x), "pair counts")
}

#' @rdname write_wtheta
#' @export
read_pair_counts <- function(file, verify = TRUE) {
  verify_fits_result(file, verify)                         # R/fits.R
  read_result(file, "PAIR_COUNTS", "pair counts")
}

result_keywords <- function(k) {
  k <- k[!vapply(k, function(v) is.null(v) || length(v) != 1L || is.na(v),
                 TRUE)]
  c(k, list(WTVERSN = as.character(utils::packageVersion("wtheta"))))
}

# the keywords of a result's PIP settings (its `pip` record: pip_result()
# for pair counts, pip_record() for wtheta() and wtheta_multi()), none
# without one: bits a word set, realisations, offset, the factor of a
# pair with no common bit, and whether angular upweights were applied
pip_keywords <- function(rec) {
  if (is.null(rec)) return(list())
  # counts as integers (FITS integer keywords), when they are whole
  whole <- function(v) {
    if (length(v) == 1L && !is.na(v) && v == round(v) &&
        abs(v) <= .Machine$integer.max) as.integer(v) else v
  }
  list(PIPBITS = whole(rec$n_bits), NREALIZ = whole(rec$nrealizations),
       NOFFSET = whole(rec$noffset), DEFVALUE = rec$default_value,
       ANGUPWT = !is.null(rec$angular))
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
  check_file_name(file)
  check_flag(overwrite, "overwrite")
  format <- result_format(file)
  if (format == "fits" && !fits_available()) {
    stop("`file` \"", file, "\" is FITS, and writing FITS needs wtheta ",
         "built with cfitsio. Install it (Debian/Ubuntu: apt-get install ",
         "libcfitsio-dev pkg-config) and reinstall wtheta, or write a .csv ",
         "file.", call. = FALSE)
  }
  check_target(file, overwrite)
  check_name_lengths(file, c(file, if (format == "csv") c(
    sidecar(file, paste0(tolower(names(extra)), ".csv")),
    sidecar(file, "attributes.rds"))))
  if (format == "fits") {
    write_fits_result(file, extname, table, keys, extra, robject, what)
    return(invisible(file))
  }
  lines <- c(paste0("# wtheta ", keys$WTVERSN, ": ", what),
             paste0("# ", names(keys), ": ", vapply(keys, format_value, "")))
  writers <- list()
  for (nm in names(extra)) {
    f <- sidecar(file, paste0(tolower(nm), ".csv"))
    writers[[f]] <- local({
      v <- extra[[nm]][[1L]]
      function(tmp) write_csv_numbers(v, tmp, NULL)
    })
    lines <- c(lines, paste0("# ", tolower(nm), ": ", basename(f)))
  }
  rds <- sidecar(file, "attributes.rds")
  lines <- c(lines, paste0("# r_object: ", basename(rds)))
  # the sidecar holds the table and the extra tables too, so that a reader
  # can tell an edited table, or a sidecar of another result, and refuse it
  side <- list(wtheta_csv = 2L, what = what, table = table,
               extra = lapply(extra, `[[`, 1L), robject = robject)
  writers[[rds]] <- function(tmp) saveRDS(side, tmp)
  writers[[file]] <- function(tmp) write_csv_numbers(table, tmp, lines)
  write_all_or_nothing(writers)
  invisible(file)
}

# file names longer than this many bytes cannot be made (NAME_MAX)
name_max <- 255L

# the files a write makes must all have names the system can make
check_name_lengths <- function(file, paths) {
  long <- paths[nchar(basename(paths), "bytes") > name_max]
  if (length(long)) {
    stop("`file` \"", file, "\" cannot be written: the file name ",
         dQuote(basename(long[1L]), FALSE), " that it needs is ",
         nchar(basename(long[1L]), "bytes"), " bytes long, more than the ",
         name_max, " a file name may have; use a shorter name.",
         call. = FALSE)
  }
  for (f in paths) {
    if (dir.exists(f)) {
      stop("`file` \"", file, "\" cannot be written: ", dQuote(f, FALSE),
           ", which it writes, is a directory.", call. = FALSE)
    }
  }
}

# a short temporary name in `dir` (whatever the length of the final name)
short_temp <- function(dir) tempfile(".wt-", tmpdir = dir, fileext = ".part")

# Writes files all or nothing. `writers` is named by final path; each
# element writes that file's content to the temporary path it is given.
# Every file is written under a short temporary name in its own directory;
# only when all are written are they renamed into place, the old files
# moved aside first and put back if a rename fails, so that a failure
# leaves the old files standing and no temporary behind. (Tests only: the
# option wtheta.test_write_fault, a number k, fails the k-th write, or
# "rename" the last rename.)
write_all_or_nothing <- function(writers) {
  targets <- names(writers)
  fault <- getOption("wtheta.test_write_fault")
  tmps <- vapply(targets, function(f) short_temp(dirname(f)), "",
                 USE.NAMES = FALSE)
  olds <- rep(NA_character_, length(targets))
  on.exit({
    unlink(tmps[file.exists(tmps)])
    gone <- olds[!is.na(olds) & file.exists(olds)]
    unlink(gone)
  }, add = TRUE)
  for (k in seq_along(writers)) {
    if (identical(fault, k)) stop("wtheta test: write fault", call. = FALSE)
    writers[[k]](tmps[k])
  }
  fail <- function(what) {
    stop("`file` \"", targets[length(targets)], "\" was not written: ",
         "cannot ", what, "; the files that were there are left as they ",
         "were.", call. = FALSE)
  }
  # put back what was moved aside, then fail
  restore <- function(placed, what) {
    for (k in which(placed)) unlink(targets[k])
    for (k in which(!is.na(olds))) {
      if (file.rename(olds[k], targets[k])) olds[k] <<- NA_character_
    }
    fail(what)
  }
  placed <- logical(length(targets))
  for (k in seq_along(targets)) {
    if (file.exists(targets[k])) {
      old <- short_temp(dirname(targets[k]))
      if (!file.rename(targets[k], old)) {
        restore(placed, paste0("move the old \"", targets[k], "\" aside"))
      }
      olds[k] <- old
    }
  }
  for (k in seq_along(targets)) {
    ok <- !(identical(fault, "rename") && k == length(targets)) &&
      suppressWarnings(file.rename(tmps[k], targets[k]))
    if (!ok) restore(placed, paste0("rename a finished file to \"",
                                    targets[k], "\""))
    placed[k] <- TRUE
  }
  invisible(targets)
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

# `file` can be written where it is: its directory exists and is writable,
# it is not a directory, and it does not exist unless `overwrite`
check_target <- function(file, overwrite) {
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
}
