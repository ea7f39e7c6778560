# SACC files (LSST DESC's format for summary statistics, read by Firecrown,
# sacc_like and TXPipe) in their FITS layout, as sacc's Sacc.load_fits()
# reads them (sacc FITS version 2):
# * primary HDU: SACCFVER = 2;
# * one table per tracer: SACCTYPE = 'tracer', SACCCLSS = 'NZ' (columns z,
#   nz; SACCQTTY) or 'Misc' (columns name, quantity), SACCNAME the name,
#   EXTNAME 'tracer:<class>:<name>';
# * the data points of one type in one table: SACCTYPE = 'data', SACCNAME
#   the data type, NTRACER = 2; columns tracer_0, tracer_1, value, then the
#   tags (theta, theta_min, theta_max, npair, weight, sacc_ordering: the
#   point's place in the covariance);
# * the covariance: SACCTYPE = 'covariance', SACCCLSS = 'full', SACCNAME =
#   'cov', SIZE = n; a vector column `row`, one row of the matrix a row.

sacc_data_type <- "galaxy_density_xi"

write_sacc <- function(x, file, nz, overwrite) {
  check_pipeline_file(file, overwrite)
  v <- pipeline_vector(x)
  nz <- check_nz(nz, v$samples)
  need_fits_writer("sacc")
  tracers <- lapply(v$samples, function(s) {
    keys <- list(SACCTYPE = "tracer", SACCNAME = s)
    if (is.null(nz)) {
      pipeline_table(paste0("tracer:Misc:", s),
                     list(name = s, quantity = "galaxy_density"),
                     keys = c(keys, list(SACCCLSS = "Misc")))
    } else {
      pipeline_table(paste0("tracer:NZ:", s),
                     list(z = nz[[s]]$z, nz = nz[[s]]$nz),
                     keys = c(keys, list(SACCCLSS = "NZ",
                                         SACCQTTY = "galaxy_density")))
    }
  })
  if (is.null(nz)) {
    message("write_wtheta(): no `nz` given, so the SACC tracers carry no ",
            "n(z) (sacc's Misc tracers, named after the samples); give ",
            "`nz = list(<sample> = list(z =, nz =), ...)` for NZ tracers.")
  }
  n <- length(v$value)
  cols <- list(tracer_0 = v$samples[v$i], tracer_1 = v$samples[v$j],
               value = v$value, theta = v$theta, theta_min = v$theta_lo,
               theta_max = v$theta_hi)
  if (!is.null(v$npair)) {
    cols$npair <- v$npair
    cols$weight <- v$npair
  }
  cols$sacc_ordering <- seq_len(n) - 1L
  units <- list(theta = "arcmin", theta_min = "arcmin",
                theta_max = "arcmin")
  data <- pipeline_table(paste0("data:", sacc_data_type), cols, units,
                         list(SACCTYPE = "data", SACCNAME = sacc_data_type,
                              NTRACER = 2L))
  hdus <- c(tracers, list(data))
  if (!is.null(v$cov)) {
    hdus[[length(hdus) + 1L]] <- pipeline_table(
      "covariance:full:cov", list(row = v$cov),
      keys = list(SACCTYPE = "covariance", SACCCLSS = "full",
                  SACCNAME = "cov", SIZE = as.integer(n)))
  }
  write_pipeline_fits(file, list(SACCFVER = 2L), hdus)
}

# The galaxy_density_xi points of a SACC FITS file as a wtheta_multi
# result: samples the tracers (in the file's order), angles from the
# arcmin tags theta, theta_min, theta_max, the covariance's block of those
# points.
read_sacc <- function(file) {
  check_file(file)
  need_fits(file)
  heads <- fits_headers(file)
  if (!is.null(heads[[1L]]$SACCFVER) && heads[[1L]]$SACCFVER > 2) {
    stop("`file` \"", file, "\" is SACC FITS version ",
         heads[[1L]]$SACCFVER, "; wtheta reads versions 1 and 2.",
         call. = FALSE)
  }
  type <- vapply(heads, function(h) tolower(h$SACCTYPE %||% ""), "")
  tracers <- vapply(heads[type == "tracer"],
                    function(h) as.character(h$SACCNAME %||% ""), "")
  names_data <- vapply(heads, function(h) h$SACCNAME %||% "", "")
  dh <- which(type == "data" & names_data == sacc_data_type)
  if (!length(dh)) {
    stop("`file` \"", file, "\" holds no ", sacc_data_type, " points ",
         "(data types: ", paste(unique(names_data[type == "data"]),
                               collapse = ", "), ").", call. = FALSE)
  }
  tab <- fits_read_table(file, hdu = dh[1L] - 1L)$columns
  need <- c("tracer_0", "tracer_1", "value", "theta")
  if (!all(need %in% names(tab))) {
    stop("`file` \"", file, "\" ", sacc_data_type, " table lacks ",
         paste(setdiff(need, names(tab)), collapse = ", "), ".",
         call. = FALSE)
  }
  null <- function(v) {
    if (is.null(v)) return(NULL)
    v <- as.double(v)
    v[v == -1.4375304375e30 | v == -1437530437530211245] <- NA
    v
  }
  ord <- null(tab$sacc_ordering)
  n_total <- sum(vapply(dh, function(h) heads[[h]]$NAXIS2 %||% 0, 0)) +
    sum(vapply(which(type == "data" & names_data != sacc_data_type),
               function(h) heads[[h]]$NAXIS2 %||% 0, 0))
  pos <- if (is.null(ord) || anyNA(ord)) seq_along(tab$value) else ord + 1
  o <- order(pos)
  s1 <- trimws(tab$tracer_0)[o]
  s2 <- trimws(tab$tracer_1)[o]
  samples <- unique(c(tracers[tracers %in% c(s1, s2)], s1, s2))
  arcmin <- 60
  theta_min <- null(tab$theta_min)
  theta_max <- null(tab$theta_max)
  nb <- length(o)
  cov <- NULL
  ch <- which(type == "covariance")
  if (length(ch)) {
    cls <- tolower(heads[[ch[1L]]]$SACCCLSS %||% "full")
    ct <- fits_read_table(file, hdu = ch[1L] - 1L)$columns
    if (cls != "full") {
      stop("`file` \"", file, "\" has a SACC covariance of class \"", cls,
           "\"; wtheta reads full ones.", call. = FALSE)
    }
    full <- if (!is.null(ct$row)) as.matrix(ct$row) else
      do.call(cbind, lapply(seq_along(ct) - 1L,
                            function(k) as.double(ct[[paste0("col_", k)]])))
    if (nrow(full) < max(pos)) {
      stop("`file` \"", file, "\" has a covariance of ", nrow(full),
           " points for data point ", max(pos), ".", call. = FALSE)
    }
    k <- pos[o]
    cov <- unname(full[k, k, drop = FALSE])
  }
  pipeline_result(samples, s1, s2,
                  theta = as.double(tab$theta)[o] / arcmin,
                  theta_lo = if (is.null(theta_min)) rep(NA_real_, nb) else
                    theta_min[o] / arcmin,
                  theta_hi = if (is.null(theta_max)) rep(NA_real_, nb) else
                    theta_max[o] / arcmin,
                  w = as.double(tab$value)[o], cov = cov,
                  npair = null(tab$npair)[o],
                  source = paste0("SACC file (", nb, " ", sacc_data_type,
                                  " points of ", n_total, ")"))
}
