# Everything through cfitsio (src/io/fits.c, boundary src/r/fits.c):
# FITS tables read for read_catalog() and HEALPix maps, and the FITS files
# of results (written by write_wtheta() and write_pair_counts(), read back
# or rebuilt from another tool's table).

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
# comment). 64-bit integer columns (K) are never rounded: `int64` =
# "double" gives doubles when every value is within 2^53 and an error
# otherwise (what wtheta itself reads: pixels, flags, counts), and
# "integer64" bit64's integer64 (columns read for users; see
# int64_column()).
fits_read_table <- function(file, hdu = NULL, columns = NULL,
                            info = NULL, int64 = "double") {
  need_fits(file)
  h <- check_hdu(hdu)
  info <- info %||% .Call(C_fits_info, path.expand(file), h[[1L]], h[[2L]])
  have <- info$columns$name
  idx <- if (is.null(columns)) seq_along(have) else
    if (is.character(columns)) file_columns(columns, have, file) else
      as.integer(columns)
  for (i in idx) {
    if (info$columns$kind[i] == 0L) {
      what <- if (info$columns$typecode[i] < 0) "a variable-length array" else
        "of a type wtheta does not read (bit or complex)"
      stop("`file` \"", file, "\" column ", dQuote(have[i], FALSE),
           " (TFORM ", info$columns$tform[i], ") is ", what, ".",
           call. = FALSE)
    }
  }
  vals <- .Call(C_fits_read, path.expand(file), info$hdu, idx - 1L,
                getOption("wtheta.test_fits_shrink"))
  for (j in which(info$columns$kind[idx] == 5L)) {
    vals[[j]] <- int64_column(vals[[j]], have[idx[j]], file,
                              if (length(int64) > 1L) int64[j] else int64)
  }
  names(vals) <- have[idx]
  list(columns = vals, units = stats::setNames(info$columns$unit[idx],
                                               have[idx]),
       n_rows = info$n_rows, hdu = info$hdu, extname = info$extname,
       keywords = as.data.frame(info$keywords, stringsAsFactors = FALSE))
}

# A 64-bit integer column (K; C gives the int64 bits in a double vector)
# exactly: as bit64's integer64 when `as` is "integer64" and bit64 is
# installed; else as doubles when every value is within 2^53, which they
# hold exactly; else an error naming the column and bit64. Never rounded.
int64_column <- function(v, name, file, as) {
  if (as == "integer64" && requireNamespace("bit64", quietly = TRUE)) {
    class(v) <- "integer64"
    return(v)
  }
  d <- .Call(C_int64_as_double, v)
  if (is.null(d)) {
    stop("`file` \"", file, "\" column ", dQuote(name, FALSE), " holds ",
         "64-bit integers beyond 2^53, which doubles cannot hold exactly",
         if (as == "integer64") paste0("; install the bit64 package to ",
                                       "read them as integer64") else
           paste0(" (wtheta needs this column as numbers)"), ".",
         call. = FALSE)
  }
  d
}

# The CHECKSUM and DATASUM keywords of every HDU of a FITS file checked
# (cfitsio's fits_verify_chksum): an error naming the file and the first
# HDU that fails; HDUs without them (files of other tools) pass.
fits_verify_checksums <- function(file) {
  need_fits(file)
  .Call(C_fits_verify, path.expand(file))
  invisible(TRUE)
}

# read_wtheta(verify = ) and read_pair_counts(verify = ): the checksums of
# a FITS result, when `verify` is TRUE and `file` is FITS
verify_fits_result <- function(file, verify) {
  if (!is.logical(verify) || length(verify) != 1L || is.na(verify)) {
    stop("`verify` must be TRUE or FALSE, not ", describe(verify), ".",
         call. = FALSE)
  }
  if (!verify || !is.character(file) || length(file) != 1L ||
      is.na(file) || !file.exists(file)) return(invisible(FALSE))
  # results are written uncompressed; the reader itself refuses the rest
  if (!identical(readBin(file, "raw", 6L), charToRaw("SIMPLE")) ||
      !fits_available()) return(invisible(FALSE))
  tryCatch(fits_verify_checksums(file), error = function(e) {
    stop(conditionMessage(e), " Pass `verify = FALSE` to read it anyway.",
         call. = FALSE)
  })
  invisible(TRUE)
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
  # positions as doubles (exact, or an error), other columns as they are
  # (64-bit integers as integer64: IDs such as DESI's TARGETID)
  tab <- fits_read_table(file, columns = cols$idx, info = info,
                         int64 = c("double", "double",
                                   rep("integer64", length(cols$idx) - 2L)))
  list(values = unname(tab$columns), names = cols$names,
       labels = names(tab$columns)[1:2],
       units = trimws(vapply(1:2, function(k) tab$units[[k]], "")))
}

# ra and dec must be columns of one number per row
check_fits_positions <- function(file, info, idx) {
  for (k in 1:2) {
    i <- idx[k]
    if (!info$columns$kind[i] %in% c(1L, 2L, 5L) ||
        info$columns$n_elements[i] != 1) {
      stop("`file` \"", file, "\" column ", dQuote(info$columns$name[i],
                                                   FALSE),
           " (TFORM ", info$columns$tform[i], ") must hold one number per ",
           "row to be ", c("ra", "dec")[k], ".", call. = FALSE)
    }
  }
}

# what each keyword of a file wtheta writes says (results, maps), written
# as its comment
keyword_comments <- c(
  ESTIMATR = "w(theta) estimator",
  COUNTING = "auto: one catalog; cross: two",
  SELFPAIR = "pairs of a point with itself counted",
  WEIGHTED = "pairs weighted by point weights",
  N_DATA = "points in the data catalog",
  N_RANDOM = "points in the random catalog",
  N_DATA2 = "points in the second data catalog",
  N_RANDOM2 = "points in the second random catalog",
  BACKEND = "where the pairs were counted",
  ERRMETH = "error method of w_err and COV",
  NPATCHES = "sky patches of the resampling",
  N1 = "points in the first catalog",
  N2 = "points in the second catalog",
  N_PAIRS = "pairs looked at",
  N_BELOW = "pairs closer than the first bin",
  N_ABOVE = "pairs wider than the last bin",
  THUNIT = "unit of the theta columns",
  PIPBITS = "PIP: bits of the bitwise words",
  NREALIZ = "PIP: realisations (nrealizations)",
  NOFFSET = "PIP: offset of the popcount (noffset)",
  DEFVALUE = "PIP: factor of a pair with no common bit",
  ANGUPWT = "PIP: angular upweights applied",
  PIXTYPE = "HEALPIX pixelisation",
  ORDERING = "pixel ordering scheme",
  COORDSYS = "C: equatorial, G: galactic",
  NSIDE = "resolution parameter",
  FIRSTPIX = "first pixel number (from 0)",
  LASTPIX = "last pixel number (from 0)",
  INDXSCHM = "IMPLICIT: every pixel; EXPLICIT: PIXEL column",
  OBJECT = "FULLSKY or PARTIAL",
  WTVERSN = "version of wtheta that wrote this file",
  SERMD5 = "md5 of the serialized R object")

fits_keys <- function(keys) {
  list(name = names(keys), value = unname(keys),
       comment = unname(ifelse(names(keys) %in% names(keyword_comments),
                               keyword_comments[names(keys)], "")))
}

# A list of numeric vectors (one number a row) or matrices (one row of
# numbers a row) as columns for C_fits_write: values row after row; the
# theta columns have TUNIT `theta_units`
fits_columns <- function(columns, extname, theta_units = "deg") {
  n <- NROW(columns[[1L]])
  list(extname = extname,
       columns = lapply(columns, function(v) {
         if (is.raw(v)) as.vector(t(v)) else if (is.matrix(v))
           as.vector(t(v)) + 0 else as.double(v)
       }),
       `repeat` = vapply(columns, function(v) as.integer(NCOL(v)), 1L),
       unit = ifelse(grepl("^theta", names(columns)), theta_units, ""),
       n_rows = as.double(n))
}

# The file is written under a temporary name in its own directory and
# renamed when complete, so a failed write leaves neither a half file nor
# a damaged old one.
write_fits_result <- function(file, extname, table, keys, extra, robject,
                              what) {
  k <- fits_keys(keys)
  none <- fits_keys(list())
  main <- c(fits_columns(table, extname, keys$THUNIT %||% "deg"),
            list(keys = k))
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
  # the md5 of the bytes, checked before they are unserialized: R's
  # unserialize() can crash on damaged bytes
  hdus[[length(hdus) + 1L]] <- c(
    fits_columns(list(SERIAL = matrix(blob, 1L)), "R_OBJECT"),
    list(keys = fits_keys(list(SERMD5 = raw_md5(blob)))))
  # a short temporary name: the final name may be as long as NAME_MAX
  tmp <- short_temp(dirname(file))
  on.exit(if (file.exists(tmp)) unlink(tmp), add = TRUE)
  .Call(C_fits_write, path.expand(tmp), path.expand(file), k, hdus)
  invisible(file)
}

# md5 of raw bytes (through a temporary file: tools::md5sum() reads only
# files before R 4.5)
raw_md5 <- function(bytes) {
  tmp <- tempfile("wtheta-md5-")
  on.exit(unlink(tmp), add = TRUE)
  writeBin(bytes, tmp)
  unname(tools::md5sum(tmp))
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
  bad <- idx[!info$columns$kind[idx] %in% c(1L, 2L, 5L) |
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
  # the unit: keyword THUNIT, else the TUNIT of theta when it names one,
  # else degrees
  tunit <- trimws(tolower(info$columns$unit[idx[3L]] %||% ""))
  units <- key("THUNIT") %||% (if (tunit %in% theta_unit_names) tunit) %||%
    "deg"
  units <- check_theta_units(units, paste0("THUNIT of \"", file, "\""))
  a <- list(
    type = key("COUNTING") %||% (if (identical(counts, cross)) "cross" else
      "auto"),
    n_data = key("N_DATA"), n_random = key("N_RANDOM"),
    n_data2 = key("N_DATA2"), n_random2 = key("N_RANDOM2"),
    estimator = key("ESTIMATR"), self_pairs = key("SELFPAIR"),
    weighted = key("WEIGHTED"),
    error = key("ERRMETH") %||% (if (!is.null(cov) || "w_err" %in% want)
      "unknown" else "none"),
    cov = cov,
    n_patches = key("NPATCHES"), backend = key("BACKEND"),
    edges = if (adjacent) c(out$theta_lo, out$theta_hi[nb]),
    theta_units = units,
    source = paste0("FITS table without R_OBJECT (HDU ", tab$hdu, ")"))
  a <- a[!vapply(a, is.null, TRUE)]
  do.call(structure, c(list(as.data.frame(out)),
                       list(class = c("wtheta", "data.frame")), a))
}
