# HEALPix footprints: maps read from FITS, maps made from catalogs, points
# looked up in maps and randoms drawn from them. Pixel arithmetic is C
# (src/sky/healpix.c, through chealpix); see also footprint_check() in
# R/footprint_check.R.

healpix_available <- function() isTRUE(.Call(C_healpix_compiled))

need_healpix <- function(what) {
  if (!healpix_available()) {
    stop(what, " needs HEALPix support, but wtheta was built without ",
         "chealpix. Install it (Debian/Ubuntu: apt-get install ",
         "libchealpix-dev) and reinstall wtheta.", call. = FALSE)
  }
}

# HEALPix's UNSEEN value (-1.6375e30): outside the map
healpix_unseen <- -1.6375e30

# The rotation from equatorial (ICRS/J2000) to galactic unit vectors, as
# HEALPix and astropy define galactic coordinates (IAU 1958, Blaauw et al.
# 1960, in its FK5 J2000 form): the north galactic pole at right ascension
# 192.85948 deg, declination 27.12825 deg, and the north celestial pole at
# galactic longitude 122.93192 deg. The rows are the galactic x, y and z
# axes in equatorial coordinates; its transpose takes galactic to
# equatorial.
equatorial_to_galactic <- local({
  a <- 192.85948 * pi / 180
  d <- 27.12825 * pi / 180
  l <- 122.93192 * pi / 180
  z <- c(cos(d) * cos(a), cos(d) * sin(a), sin(d))
  w <- (c(0, 0, 1) - sin(d) * z) / cos(d)
  cross <- function(p, q) c(p[2] * q[3] - p[3] * q[2], p[3] * q[1] - p[1] * q[3],
                            p[1] * q[2] - p[2] * q[1])
  x <- cos(l) * w - sin(l) * cross(z, w)
  y <- cross(z, x)
  rbind(x, y, z, deparse.level = 0)
})

# row-major 9 doubles for C: from equatorial to the map's frame (lookups)
# or back (drawing)
rot_to_map <- function(m) {
  if (m$coordsys == "G") as.vector(t(equatorial_to_galactic)) else NULL
}
rot_from_map <- function(m) {
  if (m$coordsys == "G") as.vector(equatorial_to_galactic) else NULL
}

#' HEALPix maps: read, made from catalogs, used as footprints
#'
#' `read_healpix_map()` reads a HEALPix map from a FITS file as healpy,
#' the HEALPix C and Fortran libraries and survey releases write them.
#' `healpix_map()` counts the points of a catalog in each pixel.
#' `in_footprint()` says which points of a catalog fall on a map (or a
#' mask function). A map is a footprint for [random_catalog()] and
#' [simulate_catalog()] through their `mask` argument.
#'
#' A map is read from the first binary table after the primary HDU (or
#' `hdu`):
#' * `ORDERING` `RING` or `NESTED` (`NEST`);
#' * `INDXSCHM` `IMPLICIT` (or absent): one value per pixel, in a scalar
#'   column or a vector column such as `1024E` or `1024D`, rows in order;
#'   `EXPLICIT` (a partial map): a `PIXEL` column of pixel numbers and a
#'   value column;
#' * `NSIDE` a power of two up to 8192 (derived from the number of pixels
#'   of an implicit map when absent);
#' * `COORDSYS` `C` (equatorial; also assumed when absent) or `G`
#'   (galactic), which is rotated to equatorial exactly: points are turned
#'   into galactic unit vectors by the fixed matrix of the IAU 1958
#'   definition in its J2000 form (north galactic pole at right ascension
#'   192.85948, declination 27.12825; north celestial pole at galactic
#'   longitude 122.93192 degrees), as HEALPix and astropy use, before their
#'   pixel is looked up, and drawn points are turned back by its transpose.
#'
#' A pixel is in the footprint when its value is above 0. Values of 0,
#' `UNSEEN` (-1.6375e30) and `NaN` are outside; other negative values,
#' a number of pixels that does not match `NSIDE`, an unknown `ORDERING`
#' or coordinate system, and a map with no pixel above 0 are errors.
#'
#' All of these need HEALPix support (Debian's `libchealpix-dev`, found
#' when wtheta is installed); without it they are an error that says so.
#' `read_healpix_map()` needs cfitsio as well.
#'
#' @param file Path to a FITS file.
#' @param hdu `NULL` (the first table), an HDU number (0 is the primary)
#'   or an `EXTNAME`.
#' @param column The value column: `NULL` (the first column that is not
#'   `PIXEL`), a name or a number.
#' @param x A catalog: a data frame with columns `ra` and `dec` in degrees
#'   (names set by `columns`).
#' @param nside A power of two from 1 to 8192.
#' @param ordering `"RING"` (the default, as healpy's) or `"NESTED"`.
#' @param mask A `healpix_map`, or a function of `ra` and `dec` returning
#'   a logical vector.
#' @param columns The names of the right-ascension and declination columns.
#' @return `read_healpix_map()` and `healpix_map()`: an object of class
#'   `healpix_map`, a list with `nside`, `ordering`, `coordsys` (`"C"` or
#'   `"G"`), `pixel` (numbers from 0, in the map's ordering, of the pixels
#'   above 0, increasing), `value` (their values), `n_pixels` (`12 nside^2`),
#'   `area` (square degrees of the pixels above 0) and `source` (the file,
#'   or how the map was made). `healpix_map()` gives the number of points
#'   in each pixel (pixels without points are left out). `in_footprint()`:
#'   a logical vector, one per row of `x`.
#' @seealso [random_catalog()] with `mask =`, [footprint_check()].
#' @examples
#' if (wtheta:::healpix_available()) {
#'   sim <- simulate_catalog(2000, seed = 1)
#'   m <- healpix_map(sim, nside = 16)
#'   m
#'   ran <- random_catalog(5000, mask = m, seed = 2)
#'   mean(in_footprint(ran, m))
#' }
#' @export
read_healpix_map <- function(file, hdu = NULL, column = NULL) {
  check_file(file)
  need_healpix("read_healpix_map()")
  tab <- fits_read_table(file, hdu = hdu)
  kw <- tab$keywords
  key <- function(k) {
    v <- kw$value[toupper(kw$name) == k]
    if (length(v)) trimws(gsub("'", "", v[[1L]])) else NULL
  }
  where <- paste0("`file` \"", file, "\"")
  cols <- names(tab$columns)
  scheme <- toupper(key("INDXSCHM") %||% "IMPLICIT")
  if (!scheme %in% c("IMPLICIT", "EXPLICIT")) {
    stop(where, " has INDXSCHM ", dQuote(scheme, FALSE), "; wtheta reads ",
         "IMPLICIT and EXPLICIT maps.", call. = FALSE)
  }
  is_pixel <- toupper(cols) == "PIXEL"
  if (is.null(column)) {
    pick <- which(!is_pixel)[1L]
    if (is.na(pick)) {
      stop(where, " has no value column (its columns: ",
           paste(cols, collapse = ", "), ").", call. = FALSE)
    }
  } else if (is.character(column) && length(column) == 1L) {
    pick <- match(toupper(column), toupper(cols))
    if (is.na(pick)) {
      stop("`column` ", dQuote(column, FALSE), " is not among the columns of ",
           where, ": ", paste(cols, collapse = ", "), ".", call. = FALSE)
    }
  } else if (is.numeric(column) && length(column) == 1L &&
             column %in% seq_along(cols)) {
    pick <- as.integer(column)
  } else {
    stop("`column` must be NULL, a column name or a number from 1 to ",
         length(cols), ", not ", describe(column), ".", call. = FALSE)
  }
  flat <- function(v) if (is.matrix(v)) as.vector(t(v)) else as.vector(v)
  values <- as.numeric(flat(tab$columns[[pick]]))
  if (scheme == "EXPLICIT") {
    if (!any(is_pixel)) {
      stop(where, " is an EXPLICIT (partial) map without a PIXEL column ",
           "(its columns: ", paste(cols, collapse = ", "), ").", call. = FALSE)
    }
    pixel <- as.numeric(flat(tab$columns[[which(is_pixel)[1L]]]))
  }
  ns <- key("NSIDE")
  nside <- if (!is.null(ns)) suppressWarnings(as.numeric(ns)) else if (
    scheme == "IMPLICIT") sqrt(length(values) / 12) else NA
  if (is.null(ns) && scheme == "EXPLICIT") {
    stop(where, " is an EXPLICIT map without an NSIDE keyword.", call. = FALSE)
  }
  check_nside(nside, paste0(where, " has NSIDE"))
  n_pixels <- 12 * nside^2
  ordering <- toupper(key("ORDERING") %||% "")
  if (ordering == "NEST") ordering <- "NESTED"
  if (!ordering %in% c("RING", "NESTED")) {
    stop(where, " has ORDERING ", dQuote(ordering, FALSE), "; a HEALPix map ",
         "is RING or NESTED.", call. = FALSE)
  }
  coordsys <- toupper(key("COORDSYS") %||% "C")
  coordsys <- switch(coordsys, C = , Q = , CELESTIAL = , EQUATORIAL = "C",
                     G = , GALACTIC = "G", coordsys)
  if (!coordsys %in% c("C", "G")) {
    stop(where, " has COORDSYS ", dQuote(coordsys, FALSE), "; wtheta reads ",
         "maps in equatorial (C) or galactic (G) coordinates.", call. = FALSE)
  }
  if (scheme == "IMPLICIT") {
    if (length(values) != n_pixels) {
      stop(where, " has ", format_n(length(values)), " pixel values, but ",
           "NSIDE ", nside, " has ", format_n(n_pixels), " pixels.",
           call. = FALSE)
    }
    pixel <- seq_len(n_pixels) - 1
  } else {
    bad <- is.na(pixel) | pixel < 0 | pixel >= n_pixels | pixel != round(pixel)
    if (any(bad)) {
      stop(where, " has PIXEL ", pixel[bad][1L], ", outside 0 to ",
           format_n(n_pixels - 1), " for NSIDE ", nside, ".", call. = FALSE)
    }
    if (anyDuplicated(pixel)) {
      stop(where, " lists PIXEL ", pixel[anyDuplicated(pixel)], " twice.",
           call. = FALSE)
    }
  }
  make_healpix_map(nside, ordering, coordsys, pixel, values,
                   source = normalizePath(file), where = where)
}

check_nside <- function(nside, what) {
  if (!is.numeric(nside) || length(nside) != 1L || is.na(nside) ||
      nside < 1 || nside > 8192 || nside != round(nside) ||
      bitwAnd(as.integer(nside), as.integer(nside) - 1L) != 0L) {
    stop(what, " ", describe(nside), "; it must be a power of two from 1 ",
         "to 8192.", call. = FALSE)
  }
}

# A healpix_map as given (perhaps built or edited by hand): what the C
# code reads of it checked here, with messages naming the argument and
# the field
check_healpix_map <- function(m, arg) {
  if (!is.list(m)) {
    stop("`", arg, "` must be a healpix_map (a list), not ", describe(m), ".",
         call. = FALSE)
  }
  check_nside(m$nside, paste0("`", arg, "$nside` is"))
  if (!is.character(m$ordering) || length(m$ordering) != 1L ||
      !m$ordering %in% c("NESTED", "RING")) {
    stop("`", arg, "$ordering` must be \"NESTED\" or \"RING\", not ",
         describe(m$ordering), ".", call. = FALSE)
  }
  if (!is.character(m$coordsys) || length(m$coordsys) != 1L ||
      !m$coordsys %in% c("C", "G")) {
    stop("`", arg, "$coordsys` must be \"C\" (equatorial) or \"G\" ",
         "(galactic), not ", describe(m$coordsys), ".", call. = FALSE)
  }
  p <- m$pixel
  n_pixels <- 12 * m$nside^2
  if (!is.numeric(p) || !length(p) || anyNA(p) || any(p != round(p)) ||
      any(p < 0) || any(p >= n_pixels) || is.unsorted(p, strictly = TRUE)) {
    stop("`", arg, "$pixel` must be pixel numbers from 0 to ",
         format_n(n_pixels - 1), " (nside ", m$nside, "), increasing, not ",
         describe(p), ".", call. = FALSE)
  }
  v <- m$value
  if (!is.numeric(v) || length(v) != length(p) || any(!is.finite(v)) ||
      any(v <= 0)) {
    stop("`", arg, "$value` must be ", length(p), " finite values above 0 ",
         "(one per pixel), not ", describe(v), ".", call. = FALSE)
  }
  invisible(m)
}

# keep the pixels above 0, sorted; UNSEEN and NaN are outside
make_healpix_map <- function(nside, ordering, coordsys, pixel, values,
                             source, where) {
  outside <- is.na(values) | abs(values - healpix_unseen) < 1e25
  neg <- !outside & values < 0
  if (any(neg)) {
    stop(where, " has a negative value (", values[neg][1L], ", pixel ",
         pixel[neg][1L], ") that is not UNSEEN; a mask's values must be ",
         ">= 0.", call. = FALSE)
  }
  if (any(!outside & !is.finite(values))) {
    stop(where, " has an infinite value.", call. = FALSE)
  }
  keep <- !outside & values > 0
  if (!any(keep)) {
    stop(where, " has no pixel with a value above 0: the footprint is ",
         "empty.", call. = FALSE)
  }
  o <- order(pixel[keep])
  n_pixels <- 12 * nside^2
  structure(list(nside = nside, ordering = ordering, coordsys = coordsys,
                 pixel = pixel[keep][o], value = values[keep][o],
                 n_pixels = n_pixels,
                 area = sum(keep) * (4 * pi * (180 / pi)^2) / n_pixels,
                 source = source),
            class = "healpix_map")
}

#' @rdname read_healpix_map
#' @export
healpix_map <- function(x, nside = 256, ordering = c("RING", "NESTED"),
                        columns = c("ra", "dec")) {
  need_healpix("healpix_map()")
  cat <- as_catalog(x, "x", columns)
  check_nside(nside, "`nside` is")
  ordering <- match_choice(ordering, c("RING", "NESTED"), "ordering")
  pix <- .Call(C_healpix_pixels, nside, ordering == "NESTED",
               as.double(cat$ra), as.double(cat$dec), NULL,
               threads_or_default(NULL))
  counts <- table(pix)
  if (!length(counts)) {
    stop("`x` has no points: a map of counts would be empty.", call. = FALSE)
  }
  make_healpix_map(nside, ordering, "C", as.numeric(names(counts)),
                   as.numeric(counts),
                   source = paste0("counts of ", format_n(nrow(cat)),
                                   " points"), where = "`x`")
}

#' @export
print.healpix_map <- function(x, ...) {
  frame <- if (x$coordsys == "G") "galactic (G)" else "equatorial (C)"
  cat("<healpix_map> nside ", x$nside, ", ", x$ordering, ", ", frame, "\n",
      "  ", format_n(length(x$pixel)), " of ", format_n(x$n_pixels),
      " pixels above 0, ", format(x$area, digits = 4), " square degrees\n",
      "  values ", format(min(x$value), digits = 4), " to ",
      format(max(x$value), digits = 4), "\n",
      "  from ", x$source, "\n", sep = "")
  invisible(x)
}

#' Write a HEALPix map as a FITS file that healpy reads
#'
#' `write_healpix_map()` writes a `healpix_map` (from [healpix_map()] or
#' [read_healpix_map()]) as the HEALPix FITS convention has it, so that
#' healpy's `read_map()`, the HEALPix libraries and [read_healpix_map()]
#' read it: a binary table `HEALPIX` with the keywords `PIXTYPE =
#' 'HEALPIX'`, `ORDERING` (the map's, `RING` or `NESTED`), `COORDSYS`,
#' `NSIDE`, `FIRSTPIX`, `LASTPIX` and `INDXSCHM`, written by cfitsio with
#' checksums.
#'
#' A full map (`partial = FALSE`, `INDXSCHM = 'IMPLICIT'`) has one value a
#' pixel in the column `SIGNAL`, 0 for the pixels the map leaves out (they
#' are outside the footprint, as when read). It holds `12 nside^2` doubles:
#' 50 MB at nside 1024, 6.4 GB at nside 8192. A partial map (`partial =
#' TRUE`, `INDXSCHM = 'EXPLICIT'`, `OBJECT = 'PARTIAL'`) has the columns
#' `PIXEL` and `SIGNAL` for the map's pixels only, as healpy's
#' `write_map(partial = True)` writes (`read_map(partial = True)` reads it,
#' with `UNSEEN` elsewhere). Either reads back with [read_healpix_map()]
#' identical in `nside`, `ordering`, `coordsys`, `pixel` and `value`.
#'
#' @param m A `healpix_map`.
#' @param file The path, ending in `.fits` (or `.fit`, `.fts`).
#' @param partial Write only the map's pixels (see above).
#' @param overwrite Replace an existing file.
#' @return `file`, invisibly.
#' @seealso [read_healpix_map()], [healpix_map()], [write_catalog()].
#' @examples
#' if (wtheta:::healpix_available() && wtheta:::fits_available()) {
#'   m <- healpix_map(simulate_catalog(2000, seed = 1), nside = 16)
#'   f <- tempfile(fileext = ".fits")
#'   write_healpix_map(m, f)
#'   back <- read_healpix_map(f)
#'   identical(back$pixel, m$pixel)
#'   # in Python: healpy.read_map(f) gives the same map
#' }
#' @export
write_healpix_map <- function(m, file, partial = FALSE, overwrite = FALSE) {
  if (!inherits(m, "healpix_map")) {
    stop("`m` must be a healpix_map (from healpix_map() or ",
         "read_healpix_map()), not ", describe(m), ".", call. = FALSE)
  }
  check_healpix_map(m, "m")
  check_file_name(file)
  check_flag(partial, "partial")
  check_flag(overwrite, "overwrite")
  if (!grepl("\\.(fits|fit|fts)$", file, ignore.case = TRUE)) {
    stop("`file` \"", file, "\" must end in .fits (or .fit, .fts): a ",
         "HEALPix map is a FITS file.", call. = FALSE)
  }
  need_fits(file)
  check_target(file, overwrite)
  n <- 12 * m$nside^2
  cols <- if (partial) {
    list(PIXEL = as.integer(m$pixel), SIGNAL = as.double(m$value))
  } else {
    v <- numeric(n)
    v[m$pixel + 1] <- m$value
    list(SIGNAL = v)
  }
  keys <- list(PIXTYPE = "HEALPIX", ORDERING = m$ordering,
               COORDSYS = m$coordsys, NSIDE = as.integer(m$nside),
               FIRSTPIX = 0L, LASTPIX = as.integer(n - 1),
               INDXSCHM = if (partial) "EXPLICIT" else "IMPLICIT",
               OBJECT = if (partial) "PARTIAL" else "FULLSKY",
               WTVERSN = as.character(utils::packageVersion("wtheta")))
  hdu <- pipeline_table("HEALPIX", cols, NULL, keys)       # R/multi_io.R
  write_pipeline_fits(file, list(), list(hdu))
  invisible(file)
}

# TRUE where a point falls on one of the map's pixels (all above 0): each
# point's pixel is looked up among the map's pixels, taken as runs of
# consecutive numbers (src/sky/healpix.c)
on_map <- function(m, ra, dec) {
  check_healpix_map(m, "mask")
  .Call(C_healpix_on_map, m$nside, m$ordering == "NESTED",
        as.double(m$pixel), as.double(ra), as.double(dec), rot_to_map(m),
        threads_or_default(NULL))
}

#' @rdname read_healpix_map
#' @export
in_footprint <- function(x, mask, columns = c("ra", "dec")) {
  cat <- as_catalog(x, "x", columns)
  if (inherits(mask, "healpix_map")) {
    need_healpix("in_footprint()")
    return(on_map(mask, cat$ra, cat$dec))
  }
  if (!is.function(mask)) {
    stop("`mask` must be a healpix_map or a function(ra, dec) returning a ",
         "logical vector, not ", describe(mask), ".", call. = FALSE)
  }
  apply_mask(mask, cat$ra, cat$dec)
}

# A footprint (as make_footprint() gives) for a map: the box is the map's
# bounding box in equatorial coordinates, widened by 1.5 pixel sizes; the
# area is the map's.
map_footprint <- function(m, weighted) {
  check_healpix_map(m, "mask")
  nest <- map_nested_pixels(m)
  cen <- .Call(C_healpix_centres, m$nside, TRUE, nest, rot_from_map(m),
               threads_or_default(NULL))
  margin <- 1.5 * sqrt(4 * pi / m$n_pixels) * 180 / pi
  dec <- c(max(-90, min(cen[[2L]]) - margin), min(90, max(cen[[2L]]) + margin))
  cos_min <- cospi(max(abs(dec)) / 180)
  ra <- sort(unique(cen[[1L]]))
  gaps <- diff(c(ra, ra[1L] + 360))
  g <- which.max(gaps)
  ra_margin <- if (cos_min > 1e-6) margin / cos_min else Inf
  width <- 360 - gaps[g] + 2 * ra_margin
  fp <- if (width >= 360) list(ra_lo = 0, ra_width = 360) else
    list(ra_lo = (ra[(g %% length(ra)) + 1L] - ra_margin) %% 360,
         ra_width = width)
  fp$ra_range <- c(fp$ra_lo, (fp$ra_lo + fp$ra_width) %% 360)
  if (fp$ra_width == 360) fp$ra_range <- c(0, 360)
  fp$dec_range <- dec
  fp$mask <- NULL
  fp$healpix <- m
  fp$weighted <- weighted
  fp$box_area <- box_area(fp$ra_lo, fp$ra_width, dec)
  fp$area <- m$area
  fp
}

# the map's pixels above 0 in NESTED numbering, in the map's order
map_nested_pixels <- function(m) {
  if (m$ordering == "NESTED") return(m$pixel)
  .Call(C_healpix_renumber, m$nside, TRUE, m$pixel)
}

# n points uniform in area on the map's pixels above 0 (or with density
# proportional to the value when weighted). A pixel is drawn uniformly (all
# have one area) or, weighted, through an alias table; it is split into its
# 4^(29 - log2 nside) nested sub-pixels of nside 2^29 and the point is the
# centre of one drawn uniformly: uniform in area to 0.4 milliarcseconds.
# The centre comes from HEALPix's formulas for z and phi (src/sky/healpix.c),
# not through chealpix and a unit vector. The draw is a counter-based hash of
# a 64-bit seed taken from R's random stream, so it follows set.seed() and
# does not depend on threads. fine_order (NULL: 29) is for tests.
draw_map <- function(n, m, weighted, fine_order = NULL) {
  nest <- map_nested_pixels(m)
  o <- order(nest)
  nest <- nest[o]
  w <- if (weighted) as.double(m$value[o])
  seed <- floor(stats::runif(2L) * 2^32)
  out <- .Call(C_healpix_draw, m$nside, as.double(nest), w, seed, n,
               rot_from_map(m), fine_order, threads_or_default(NULL))
  data.frame(ra = out[[1L]], dec = out[[2L]])
}
