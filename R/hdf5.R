# Catalogs in HDF5 files, as LSST DESC's TXPipe writes them: groups such as
# /lens/bin_1 holding one-dimensional datasets ra, dec, weight. Read through
# the suggested package hdf5r (Debian: r-cran-hdf5r); read_catalog() sends
# a file here when it carries the HDF5 signature.

#' @name read_catalog
#' @rdname read_catalog
#' @section HDF5:
#' A file whose HDF5 signature (`\x89HDF\r\n\x1a\n`) is at its start, or
#' after a user block (at byte 512, 1024, 2048, ...), is HDF5. Each column
#' is a one-dimensional dataset, and all of them must have the same length.
#' `columns` names datasets by path: absolute (`"/lens/bin_1/ra"`) or
#' relative to `group`. With `columns = NULL`, ra and dec are found in
#' `group` (the root when `NULL`) by the usual names, and a dataset
#' `weight` there is read too, as in TXPipe's layout:
#' `read_catalog("cat.h5", group = "/lens/bin_1")` gives `ra`, `dec` and
#' `weight`. Names are matched exactly, else case-insensitively. Every
#' numeric type is read: 8- and 16-bit integers as integer; 32- and 64-bit
#' integers and floats (16 to 128 bits) as double; enumerated booleans (as
#' h5py writes numpy's bool) as logical; strings as character. A 64-bit
#' integer dataset holding a value of magnitude \eqn{2^{53}} or more is
#' refused, naming it, since a double cannot hold every such integer
#' exactly. NaN in columns other than the positions is `NA`. Datasets
#' carry no units: `units` applies (degrees when `NULL`). A missing dataset
#' is an error naming the path and what its group holds; a group where a
#' dataset is needed, a scalar, a dataset of two or more dimensions and a
#' compound, array or reference type are errors naming the dataset.
#' Reading HDF5 needs the package hdf5r (Debian/Ubuntu: `apt-get install
#' r-cran-hdf5r`; else `install.packages("hdf5r")`).
#' @param group HDF5 only: the group that relative names in `columns` and
#'   `flag` are in, and where ra, dec and weight are looked for when
#'   `columns` is `NULL`: `NULL` (the root) or a path such as
#'   `"/lens/bin_1"`.
NULL

hdf5_signature <- as.raw(c(0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a))

# Whether `file` is HDF5: the signature at byte 0, or at 512, 1024, 2048,
# ... (after a user block, as the HDF5 file format allows). Streams (size
# 0) are not: HDF5 is read from files only.
is_hdf5 <- function(file) {
  size <- file.size(file)
  if (is.na(size) || size < 8) return(FALSE)
  # raw = TRUE: the bytes of the file, not decompressed
  con <- file(file, "rb", raw = TRUE)
  on.exit(close(con))
  at <- 0
  while (at + 8 <= size) {
    seek(con, at)
    if (identical(readBin(con, "raw", 8L), hdf5_signature)) return(TRUE)
    at <- if (at == 0) 512 else 2 * at
  }
  FALSE
}

# hdf5r is suggested, not imported: checked where it is needed (a function
# of its own, so that tests can stand in for it)
hdf5r_installed <- function() requireNamespace("hdf5r", quietly = TRUE)

need_hdf5r <- function(file) {
  if (!hdf5r_installed()) {
    stop("`file` \"", file, "\" is HDF5, and reading HDF5 needs the R ",
         "package hdf5r. Install it (Debian/Ubuntu: apt-get install ",
         "r-cran-hdf5r; elsewhere: install.packages(\"hdf5r\")).",
         call. = FALSE)
  }
}

# `group` as given: NULL (the root) or a path, returned as "/a/b"
check_group <- function(group) {
  if (is.null(group)) return("/")
  if (!is.character(group) || length(group) != 1L || is.na(group) ||
      !nzchar(group)) {
    stop("`group` must be NULL or the path of an HDF5 group such as ",
         "\"/lens/bin_1\", not ", describe(group), ".", call. = FALSE)
  }
  parts <- strsplit(group, "/", fixed = TRUE)[[1L]]
  paste0("/", paste(parts[nzchar(parts)], collapse = "/"))
}

# `sep`, `hdu` and `group` are each for one format: refused for the others
check_hdf5_args <- function(file, hdf5, sep, hdu, group) {
  if (hdf5) {
    for (a in c("sep", "hdu")) {
      if (!is.null(get(a))) {
        stop("`", a, "` is for ", if (a == "sep") "text" else "FITS",
             " files; `file` \"", file, "\" is HDF5.", call. = FALSE)
      }
    }
  } else if (!is.null(group)) {
    stop("`group` is for HDF5 files; `file` \"", file, "\" is not HDF5 ",
         "(it does not start with the HDF5 signature).", call. = FALSE)
  }
}

# The columns of an HDF5 catalog as a table (see read_catalog()), and the
# flag dataset when `flags` asks for one (list(values, label)).
read_hdf5_columns <- function(file, columns, group, flags) {
  need_hdf5r(file)
  base <- check_group(group)
  h5 <- hdf5_try(hdf5r::H5File$new(path.expand(file), mode = "r"),
                 paste0("`file` \"", file, "\" is HDF5 but cannot be opened"))
  on.exit(h5$close_all())
  root <- hdf5_object(h5, base, file, "group")
  if (!inherits(root, "H5Group")) {
    stop("`group` \"", base, "\" of `file` \"", file, "\" is a dataset, ",
         "not a group.", call. = FALSE)
  }
  cols <- hdf5_columns(h5, root, base, columns, file)
  flag_path <- if (!is.null(flags)) {
    if (!is.character(flags$flag)) {
      stop("`flag` must name a dataset of the HDF5 `file` \"", file,
           "\", not ", describe(flags$flag), ".", call. = FALSE)
    }
    hdf5_path(h5, base, flags$flag, file, "flag")
  }
  paths <- c(cols$paths, flag_path)
  sets <- lapply(paths, function(p) h5[[p]])
  on.exit(for (d in sets) d$close(), add = TRUE, after = FALSE)
  rows <- vapply(seq_along(sets), function(k) {
    hdf5_rows(sets[[k]], paths[k], file)
  }, 0)
  differ <- which(rows != rows[1L])
  if (length(differ)) {
    stop("`file` \"", file, "\" datasets \"", paths[1L], "\" (",
         format(rows[1L], scientific = FALSE), " rows) and \"",
         paths[differ[1L]], "\" (",
         format(rows[differ[1L]], scientific = FALSE),
         " rows) differ in length; the columns of a catalog must have the ",
         "same length.", call. = FALSE)
  }
  values <- lapply(seq_along(sets), function(k) {
    hdf5_try(hdf5_read(sets[[k]], paths[k], file, position = k <= 2L),
             paste0("`file` \"", file, "\" dataset \"", paths[k],
                    "\" cannot be read"))
  })
  n <- length(cols$paths)
  list(values = values[seq_len(n)], names = cols$names,
       labels = cols$paths[1:2], units = c("", ""),
       flag = if (!is.null(flag_path)) {
         list(values = values[[n + 1L]], label = flag_path)
       })
}

# `expr`, or, when HDF5 fails, an error saying `what` and the innermost
# cause that HDF5's error stack gives (hdf5r's message is the whole stack);
# wtheta's own errors pass as they are
hdf5_try <- function(expr, what) {
  tryCatch(expr, error = function(e) {
    if (!grepl("HDF5-API Errors", conditionMessage(e), fixed = TRUE)) stop(e)
    lines <- strsplit(conditionMessage(e), "\n", fixed = TRUE)[[1L]]
    causes <- grep("error #[0-9]+:", lines, value = TRUE)
    cause <- if (length(causes)) {
      sub("^.*line [0-9]+: ", "", causes[length(causes)])
    } else trimws(lines[1L])
    stop(what, ": ", cause, ".", call. = FALSE)
  })
}

# the object at `path` of the open file: a group (H5Group) or a dataset
# (H5D), found one name at a time, exactly or else case-insensitively;
# what = "group", "columns" or "flag" for messages
hdf5_object <- function(h5, path, file, what) {
  parts <- strsplit(path, "/", fixed = TRUE)[[1L]]
  parts <- parts[nzchar(parts)]
  obj <- h5[["/"]]
  at <- "/"
  for (p in parts) {
    if (!inherits(obj, "H5Group")) {
      stop(hdf5_arg(what), " \"", path, "\": \"", at, "\" of `file` \"",
           file, "\" is a dataset, not a group.", call. = FALSE)
    }
    have <- obj$names
    name <- if (p %in% have) p else {
      i <- which(tolower(have) == tolower(p))
      if (length(i) == 1L) have[i] else NA_character_
    }
    if (is.na(name)) {
      stop(hdf5_arg(what), " \"", path, "\": group \"", at, "\" of `file` ",
           "\"", file, "\" holds no \"", p, "\"; it holds: ",
           hdf5_listing(obj), ".", call. = FALSE)
    }
    obj <- obj[[name]]
    at <- paste0(if (at == "/") "" else at, "/", name)
  }
  attr(obj, "path") <- at
  obj
}

hdf5_arg <- function(what) {
  switch(what, group = "`group`", columns = "`columns` names",
         flag = "`flag` names", found = "the position or weight found by name")
}

# what a group holds, for messages: "dec, ra, weight, meta (group)"
hdf5_listing <- function(g) {
  info <- g$ls()
  if (!nrow(info)) return("nothing")
  kind <- ifelse(as.character(info$obj_type) == "H5I_GROUP", " (group)", "")
  paste0(info$name, kind, collapse = ", ")
}

# the full path of the dataset `name` (absolute, or relative to `base`)
hdf5_path <- function(h5, base, name, file, what) {
  path <- if (startsWith(name, "/")) name else
    paste0(if (base == "/") "" else base, "/", name)
  obj <- hdf5_object(h5, path, file, what)
  at <- attr(obj, "path")
  if (inherits(obj, "H5Group")) {
    stop(hdf5_arg(what), " \"", at, "\", which is a group of `file` \"",
         file, "\", not a dataset; it holds: ", hdf5_listing(obj), ".",
         call. = FALSE)
  }
  obj$close()
  at
}

# the datasets to read and the names of the result's columns, ra and dec
# first: those named by `columns` (as check_columns() gives it), or ra and
# dec by their usual names in the group and weight when it is there
hdf5_columns <- function(h5, root, base, columns, file) {
  prefix <- if (base == "/") "" else base
  if (is.null(columns)) {
    # groups too: one named ra is an error that says it is a group
    have <- names(root)
    low <- tolower(have)
    what <- paste0("`file` \"", file, "\" (group \"", base, "\")")
    for (k in seq_along(ra_names)) {
      ij <- match_names(c(ra_names[k], dec_names[k]), have, what,
                        ignore_case = TRUE)
      i <- ij[1L]
      j <- ij[2L]
      if (!is.na(i) && !is.na(j)) {
        w <- match(c("weight", "weights"), low)
        w <- w[!is.na(w)][1L]
        idx <- c(i, j, if (!is.na(w)) w)
        paths <- vapply(have[idx], function(nm) {
          hdf5_path(h5, base, nm, file, "found")
        }, "", USE.NAMES = FALSE)
        return(list(paths = paths,
                    names = c("ra", "dec", if (!is.na(w)) "weight")))
      }
    }
    stop("group \"", base, "\" of `file` \"", file, "\" holds no datasets ",
         "with the usual names of right ascension and declination (ra/dec, ",
         "alpha_j2000/delta_j2000, ...); give `group` or `columns`. It ",
         "holds: ", hdf5_listing(root), ".", call. = FALSE)
  }
  if (isTRUE(columns$auto) && is.character(columns$which)) {
    pos <- hdf5_columns(h5, root, base, NULL, file)
    extra <- hdf5_columns(h5, root, base, list(which = columns$which,
                                               names = columns$names), file)
    keep <- pos$names %in% c("ra", "dec")
    return(list(paths = c(pos$paths[keep], extra$paths),
                names = c(pos$names[keep], extra$names)))
  }
  if (!is.character(columns$which)) {
    stop("`columns` must name the datasets of the HDF5 `file` \"", file,
         "\" (HDF5 columns have names, not numbers), not ",
         describe(columns$which), ".", call. = FALSE)
  }
  paths <- vapply(columns$which, function(w) {
    hdf5_path(h5, base, w, file, "columns")
  }, "", USE.NAMES = FALSE)
  if (anyDuplicated(paths)) {
    stop("`columns` names the dataset \"", paths[anyDuplicated(paths)],
         "\" twice.", call. = FALSE)
  }
  nm <- columns$names
  blank <- !nzchar(nm)
  nm[blank] <- basename(paths[blank])
  if (anyDuplicated(nm)) {
    stop("`columns` gives two result columns the name ",
         dQuote(nm[anyDuplicated(nm)], FALSE), "; name them: ",
         "c(ra = ..., dec = ..., name = ...).", call. = FALSE)
  }
  first <- match(c("ra", "dec"), nm)
  first <- first[!is.na(first)]
  o <- c(first, setdiff(seq_along(nm), first))
  list(paths = paths[o], names = nm[o])
}

# the length of a one-dimensional dataset; anything else is an error
hdf5_rows <- function(d, path, file) {
  dims <- d$dims
  if (length(dims) != 1L) {
    what <- if (!length(dims)) "a scalar" else
      paste0("of dimensions ", paste(rev(dims), collapse = " x "))
    stop("`file` \"", file, "\" dataset \"", path, "\" is ", what, "; a ",
         "column of a catalog is a one-dimensional dataset.", call. = FALSE)
  }
  as.double(dims)
}

# the values of a one-dimensional dataset (see the HDF5 section of
# read_catalog()); positions must be numbers
hdf5_read <- function(d, path, file, position) {
  type <- d$get_type()
  on.exit(type$close())
  cls <- class(type)[1L]
  if (position && !cls %in% c("H5T_INTEGER", "H5T_FLOAT")) {
    stop("`file` \"", file, "\" dataset \"", path, "\" holds ",
         hdf5_type_name(cls), ", not numbers: it cannot be a position.",
         call. = FALSE)
  }
  if (cls == "H5T_INTEGER" && type$get_size() <= 2L) return(d$read())
  if (cls %in% c("H5T_INTEGER", "H5T_FLOAT")) {
    # converted by HDF5 itself: every width and sign to double
    v <- d$read_low_level(mem_type = hdf5r::h5types$H5T_NATIVE_DOUBLE)
    v <- as.double(v)
    if (cls == "H5T_INTEGER") {
      big <- which(abs(v) >= 2^53)
      if (length(big)) {
        stop("`file` \"", file, "\" dataset \"", path, "\" holds ",
             type$get_size() * 8L, "-bit integers beyond what a double ",
             "holds exactly (row ", big[1L], ": about ",
             format(v[big[1L]], digits = 17), "; magnitude 2^53 or more). ",
             "Positions, weights and flags are read as doubles; convert or ",
             "leave out this dataset.", call. = FALSE)
      }
    } else if (!position) {
      v[is.nan(v)] <- NA
    }
    return(v)
  }
  if (cls %in% c("H5T_LOGICAL", "H5T_STRING")) return(d$read())
  stop("`file` \"", file, "\" dataset \"", path, "\" holds ",
       hdf5_type_name(cls), ", which wtheta does not read (numbers, ",
       "booleans and strings only).", call. = FALSE)
}

hdf5_type_name <- function(cls) {
  switch(cls, H5T_STRING = "strings", H5T_LOGICAL = "booleans",
         paste0("values of HDF5 class ", sub("^H5T_", "", cls)))
}
