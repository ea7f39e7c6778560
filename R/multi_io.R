# Formats of write_wtheta() and read_wtheta() beyond a single wtheta() result
# in wtheta's own files: a wtheta_multi() result in wtheta's FITS and CSV
# files, and the survey pipelines' files (SACC, R/sacc.R; DES twopoint,
# R/twopoint.R). write_wtheta() and read_wtheta() (R/io.R) call
# write_wtheta_as() and read_wtheta_as() first; these return NULL for what
# the single-result path does itself.

result_formats <- c("auto", "fits", "csv", "sacc", "twopoint")

# format and overwrite of write_wtheta(), read as today's
# write_wtheta(x, file, overwrite) too: a logical third argument is
# `overwrite`
write_format_args <- function(format, overwrite) {
  if (is.logical(format) && length(format) == 1L && !is.na(format)) {
    overwrite <- format
    format <- "auto"
  }
  list(format = check_result_format(format), overwrite = overwrite)
}

check_result_format <- function(format) {
  if (identical(format, result_formats)) return("auto")
  if (!is.character(format) || length(format) != 1L || is.na(format) ||
      !format %in% result_formats) {
    stop("`format` must be one of ", paste0("\"", result_formats, "\"",
                                           collapse = ", "), ", not ",
         describe(format), ".", call. = FALSE)
  }
  format
}

# fits and csv asked for by name must agree with the file's extension,
# which names the sidecar files of a .csv
check_own_format <- function(format, file) {
  if (format %in% c("fits", "csv") && is.character(file) &&
      length(file) == 1L && !is.na(file) &&
      !identical(result_format_quiet(file), format)) {
    stop("`format` is \"", format, "\" but `file` \"", file, "\" does not ",
         "end in ", if (format == "fits") ".fits (or .fit, .fts)" else
           ".csv", ".", call. = FALSE)
  }
}

result_format_quiet <- function(file) {
  tryCatch(result_format(file), error = function(e) NA_character_)
}

# NULL when the single-result path of write_wtheta() writes x
write_wtheta_as <- function(x, file, format, nz, overwrite) {
  is_multi <- inherits(x, "wtheta_multi")
  if (!is_multi && !inherits(x, "wtheta")) {
    stop("`x` must be a result of wtheta() or wtheta_multi(), not ",
         describe(x), ".", call. = FALSE)
  }
  check_own_format(format, file)
  if (format == "sacc") return(invisible(write_sacc(x, file, nz, overwrite)))
  if (format == "twopoint") {
    return(invisible(write_twopoint(x, file, nz, overwrite)))
  }
  if (!is.null(nz)) {
    stop("`nz` is written only to SACC and twopoint files (format = ",
         "\"sacc\" or \"twopoint\"), not with format = \"", format, "\".",
         call. = FALSE)
  }
  if (is_multi) return(invisible(write_multi(x, file, overwrite)))
  NULL
}

# NULL when the single-result path of read_wtheta() reads the file
read_wtheta_as <- function(file, format) {
  format <- check_result_format(format)
  check_own_format(format, file)
  if (format == "sacc") return(read_sacc(file))
  if (format == "twopoint") return(read_twopoint(file))
  check_file(file)
  src <- open_source(file)
  if (!src$fits) {
    first <- readLines(file, n = 1L, warn = FALSE)
    if (length(first) && endsWith(first, ": w(theta) of several samples")) {
      return(read_multi(file))
    }
    return(NULL)
  }
  need_fits(file)
  kind <- pipeline_kind(file)
  switch(kind, multi = read_multi(file), sacc = read_sacc(file),
         twopoint = read_twopoint(file), NULL)
}

# ---- FITS headers of any HDU -------------------------------------------------

# every HDU's header keywords: a list (one element per HDU, from the
# primary) of named lists of R values
fits_headers <- function(file) {
  first <- .Call(C_fits_header, path.expand(file), 0L)
  out <- vector("list", first$n_hdus)
  out[[1L]] <- header_keys(first$cards)
  for (h in seq_len(first$n_hdus - 1L)) {
    out[[h + 1L]] <- header_keys(.Call(C_fits_header, path.expand(file),
                                       as.integer(h))$cards)
  }
  out
}

# 80-character cards as a named list of values (keyword_value())
header_keys <- function(cards) {
  name <- trimws(substr(cards, 1L, 8L))
  valued <- substr(cards, 9L, 10L) == "= " & nzchar(name)
  vals <- lapply(substr(cards[valued], 11L, 80L), card_value)
  stats::setNames(vals, name[valued])
}

# the value of a card (after "= "): a quoted string ('' is a quote), or
# what comes before the comment's "/"
card_value <- function(s) {
  s <- sub("^ +", "", s)
  if (startsWith(s, "'")) {
    m <- regmatches(s, regexpr("^'([^']|'')*'", s))
    return(keyword_value(m))
  }
  v <- trimws(sub("/.*$", "", s))
  if (!nzchar(v)) return(NULL)
  keyword_value(v)
}

hdu_key <- function(h, name) {
  v <- h[[name]]
  if (is.null(v)) NULL else v
}

# what a FITS file is: "multi" (a wtheta_multi() result that wtheta
# wrote), "sacc", "twopoint", or "" (anything else)
pipeline_kind <- function(file) {
  heads <- tryCatch(fits_headers(file), error = function(e) NULL)
  if (is.null(heads)) return("")
  ext <- vapply(heads, function(h) as.character(h$EXTNAME %||% ""), "")
  if ("WTHETA_MULTI" %in% ext && "R_OBJECT" %in% ext) return("multi")
  if (!is.null(heads[[1L]]$SACCFVER) ||
      any(vapply(heads, function(h) !is.null(h$SACCTYPE), TRUE))) {
    return("sacc")
  }
  if (any(vapply(heads, function(h) isTRUE(h$`2PTDATA`), TRUE))) {
    return("twopoint")
  }
  ""
}

# ---- a wtheta_multi() result in wtheta's FITS and CSV files -----------------

# The table WTHETA_MULTI: i and j as sample numbers (from 1; the names are
# keywords SAMPLE1, SAMPLE2, ...), theta_lo, theta_hi, theta, theta_mean
# when there is one, w, w_err; COV the joint covariance; R_OBJECT every
# attribute, as for a wtheta() result.
write_multi <- function(x, file, overwrite) {
  samples <- attr(x, "samples")
  keys <- result_keywords(c(list(
    ESTIMATR = attr(x, "estimator"), SELFPAIR = attr(x, "self_pairs"),
    WEIGHTED = attr(x, "weighted"), BACKEND = attr(x, "backend"),
    ERRMETH = attr(x, "error"), NPATCHES = attr(x, "n_patches"),
    NSAMPLES = length(samples), THUNIT = theta_units_of(x)),
    stats::setNames(as.list(samples), paste0("SAMPLE", seq_along(samples))),
    pip_keywords(attr(x, "pip"))))
  cols <- unclass(x)[names(x)]
  table <- lapply(cols, function(v) {
    if (is.factor(v)) as.double(as.integer(v)) else as.double(v)
  })
  cov <- attr(x, "cov")
  extra <- if (is.null(cov)) NULL else list(COV = list(COV = unname(cov)))
  attrs <- attributes(x)
  attrs$names <- NULL
  write_result(file, overwrite, "WTHETA_MULTI", table, keys, extra, attrs,
               "w(theta) of several samples")
}

read_multi <- function(file) {
  out <- read_result(file, "WTHETA_MULTI", "w(theta) of several samples")
  samples <- attr(out, "samples")
  cls <- oldClass(out)
  cols <- unclass(out)
  for (nm in c("i", "j")) {
    cols[[nm]] <- factor(samples[cols[[nm]]], levels = samples)
  }
  class(cols) <- cls
  cols
}

# ---- the data vector the pipelines' files hold -------------------------------

# What SACC and twopoint files hold of a result: per row the sample
# numbers i and j (from 1), the angular bin within the correlation (from
# 1), w, the angles in arcmin (theta_convert() from the result's unit,
# theta_units_of()), the pair counts (DD or D1D2 of each row,
# NULL when not known), the sample names and the covariance (NULL when
# none)
pipeline_vector <- function(x) {
  if (inherits(x, "wtheta_multi")) {
    samples <- attr(x, "samples")
    i <- as.integer(x$i)
    j <- as.integer(x$j)
    npair <- unlist(lapply(attr(x, "entries"), function(e) {
      e[["DD"]] %||% e[["D1D2"]]
    }), use.names = FALSE)
  } else {
    cross <- identical(attr(x, "type"), "cross")
    samples <- if (cross) c("data", "data2") else "data"
    i <- rep(1L, nrow(x))
    j <- rep(if (cross) 2L else 1L, nrow(x))
    npair <- x[["DD"]] %||% x[["D1D2"]]
  }
  n <- length(i)
  if (length(npair) != n) npair <- NULL
  pair <- paste(i, j)
  angbin <- stats::ave(seq_len(n), factor(pair, levels = unique(pair)),
                       FUN = seq_along)
  cov <- attr(x, "cov", exact = TRUE)
  u <- theta_units_of(x)
  arcmin <- function(v) theta_convert(as.double(v), u, "arcmin")
  list(samples = samples, i = i, j = j, angbin = as.integer(angbin),
       value = as.double(x$w), theta = arcmin(x$theta),
       theta_lo = arcmin(x$theta_lo), theta_hi = arcmin(x$theta_hi),
       npair = if (!is.null(npair)) as.double(npair),
       cov = if (!is.null(cov)) unname(as.matrix(cov)) + 0)
}

# the checks write_sacc() and write_twopoint() share: file and overwrite
# (cfitsio: need_fits_writer(), once the arguments are known to be good)
check_pipeline_file <- function(file, overwrite) {
  if (!is.character(file) || length(file) != 1L || is.na(file) ||
      !nzchar(file)) {
    stop("`file` must be a single file path, not ", describe(file), ".",
         call. = FALSE)
  }
  check_flag(overwrite, "overwrite")
  check_target(file, overwrite)
  check_name_lengths(file, file)
}

# SACC and twopoint files are FITS: an error naming the format without
# cfitsio, after the other arguments are checked (a bad `nz` is the same
# error with or without it)
need_fits_writer <- function(what) {
  if (!fits_available()) {
    stop("`format` \"", what, "\" is FITS, and writing FITS needs wtheta ",
         "built with cfitsio. Install it (Debian/Ubuntu: apt-get install ",
         "libcfitsio-dev pkg-config) and reinstall wtheta.", call. = FALSE)
  }
}

# n(z) of the samples: NULL, or a list named by sample of list(z, nz),
# numeric and of one length each
check_nz <- function(nz, samples) {
  if (is.null(nz)) return(NULL)
  if (!is.list(nz) || is.null(names(nz)) || is.data.frame(nz)) {
    stop("`nz` must be NULL or a list named by sample of list(z =, nz =), ",
         "not ", describe(nz), ".", call. = FALSE)
  }
  missing <- setdiff(samples, names(nz))
  if (length(missing)) {
    stop("`nz` has no n(z) for sample(s) ", paste0("\"", missing, "\"",
                                                   collapse = ", "),
         "; its names: ", paste0("\"", names(nz), "\"", collapse = ", "),
         ".", call. = FALSE)
  }
  lapply(stats::setNames(samples, samples), function(s) {
    e <- nz[[s]]
    ok <- is.list(e) && is.numeric(e$z) && is.numeric(e$nz) &&
      length(e$z) == length(e$nz) && length(e$z) > 0L &&
      all(is.finite(e$z)) && all(is.finite(e$nz))
    if (!ok) {
      stop("`nz` of sample \"", s, "\" must be list(z =, nz =), two finite ",
           "numeric vectors of one length, not ", describe(e), ".",
           call. = FALSE)
    }
    list(z = as.double(e$z), nz = as.double(e$nz))
  })
}

# One HDU for C_fits_write: a table of named columns (double vectors,
# integer vectors, character vectors, or double matrices: one row a row)
# with units and keys (a named list)
pipeline_table <- function(extname, columns, units = NULL, keys = list()) {
  unit <- vapply(names(columns), function(nm) units[[nm]] %||% "", "")
  list(extname = extname,
       columns = lapply(columns, function(v) {
         if (is.matrix(v)) as.vector(t(v)) + 0 else if (is.integer(v) ||
           is.character(v)) v else as.double(v)
       }),
       `repeat` = vapply(columns, function(v) {
         if (is.character(v)) max(1L, nchar(v, "bytes")) else
           as.integer(NCOL(v))
       }, 1L),
       unit = unname(unit), n_rows = as.double(NROW(columns[[1L]])),
       keys = fits_keys(keys))
}

# writes the HDUs (after a primary HDU with keys `primary`) under a short
# temporary name, renamed over `file` when complete: a failed write leaves
# the old file as it was
write_pipeline_fits <- function(file, primary, hdus) {
  tmp <- short_temp(dirname(file))
  on.exit(if (file.exists(tmp)) unlink(tmp), add = TRUE)
  .Call(C_fits_write, path.expand(tmp), path.expand(file),
        fits_keys(primary), hdus)
  invisible(file)
}

# A wtheta_multi result from what a pipeline file gives: per point the
# sample names s1, s2 (in the order `samples`), angles in degrees, w, the
# covariance and where it came from. w_err is the root of the covariance's
# diagonal; the error method is "unknown" (NULL covariance: "none").
pipeline_result <- function(samples, s1, s2, theta, theta_lo, theta_hi, w,
                            cov, npair, source) {
  f <- function(s) factor(s, levels = samples)
  out <- data.frame(i = f(s1), j = f(s2), theta_lo = theta_lo,
                    theta_hi = theta_hi, theta = theta, w = w)
  if (!is.null(cov)) out$w_err <- sqrt(diag(cov))
  pair <- paste(as.integer(out$i), as.integer(out$j))
  blocks <- unique(pair)
  entries <- lapply(blocks, function(p) {
    k <- which(pair == p)
    e <- out[k, setdiff(names(out), c("i", "j")), drop = FALSE]
    rownames(e) <- NULL
    ec <- if (!is.null(cov)) cov[k, k, drop = FALSE]
    if (!is.null(ec)) dimnames(ec) <- list(format(e$theta), format(e$theta))
    a <- list(type = if (out$i[k[1L]] == out$j[k[1L]]) "auto" else "cross",
              error = if (is.null(ec)) "none" else "unknown", cov = ec,
              edges = bin_edges_of(e$theta_lo, e$theta_hi), source = source)
    do.call(structure, c(list(e, class = c("wtheta", "data.frame")),
                         a[!vapply(a, is.null, TRUE)]))
  })
  names(entries) <- vapply(blocks, function(p) {
    k <- which(pair == p)[1L]
    paste0(out$i[k], "-", out$j[k])
  }, "")
  if (!is.null(cov)) {
    nm <- paste(out$i, out$j, format(out$theta))
    dimnames(cov) <- list(nm, nm)
  }
  lo <- entries[[1L]]$theta_lo
  same <- all(vapply(entries, function(e) identical(e$theta_lo, lo) &&
                       identical(e$theta_hi, entries[[1L]]$theta_hi), TRUE))
  a <- list(samples = samples, entries = entries, cov = cov,
            error = if (is.null(cov)) "none" else "unknown",
            edges = if (same) attr(entries[[1L]], "edges"),
            npair = npair, source = source)
  do.call(structure, c(list(out, class = c("wtheta_multi", "data.frame")),
                       a[!vapply(a, is.null, TRUE)]))
}

# the edges of adjacent bins, else NULL
bin_edges_of <- function(lo, hi) {
  n <- length(lo)
  if (!n || anyNA(lo) || anyNA(hi)) return(NULL)
  if (n > 1L && !all(hi[-n] == lo[-1L])) return(NULL)
  c(lo, hi[n])
}
