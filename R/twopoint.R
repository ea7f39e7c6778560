# DES "twopoint" FITS files (joezuntz/2point's TwoPointFile, read by
# CosmoSIS's 2pt_like), as twopoint.TwoPointFile.from_fits() reads them:
# * COVMAT: an image, the covariance of the whole data vector, with
#   COVDATA = T and NAME_k, STRT_k (and LEN_k) for each spectrum k (from 0);
# * wtheta: a table with 2PTDATA = T, QUANT1 = QUANT2 = 'GPR' (galaxy
#   positions, real space), KERNEL_1, KERNEL_2 (the n(z) extension),
#   WINDOWS = 'SAMPLE', N_ZBIN_1, N_ZBIN_2, N_ANG; columns BIN1, BIN2
#   (sample numbers from 1), ANGBIN (from 1), VALUE, ANG, ANGLEMIN,
#   ANGLEMAX (TUNIT arcmin) and NPAIRS; the sample names as metadata
#   MD_BIN1, MD_BIN2, ... (twopoint gives header keys MD_* as metadata);
# * with n(z), nz_sample: NZDATA = T, columns Z_LOW, Z_MID, Z_HIGH, BIN1,
#   BIN2, ... (one per sample, on one z grid).
# twopoint loads the kernels only from NZDATA extensions and never looks
# up KERNEL_1 itself, so a file without n(z) still reads.

twopoint_kernel <- "nz_sample"

write_twopoint <- function(x, file, nz, overwrite) {
  check_pipeline_file(file, overwrite)
  v <- pipeline_vector(x)
  nz <- check_nz(nz, v$samples)
  if (length(v$samples) > 99L) {
    stop("`x` has ", length(v$samples), " samples; a twopoint file names ",
         "at most 99.", call. = FALSE)
  }
  if (!is.null(nz)) {
    z <- nz[[1L]]$z
    if (!all(vapply(nz, function(e) identical(e$z, z), TRUE))) {
      stop("`nz` must give every sample on one z grid for a twopoint file ",
           "(its n(z) extension has one Z_MID column).", call. = FALSE)
    }
  }
  need_fits_writer("twopoint")
  if (is.null(nz)) {
    message("write_wtheta(): no `nz` given, so the twopoint file has no ",
            "n(z) extension (KERNEL_1 and KERNEL_2 name \"",
            twopoint_kernel, "\", which is not there); give ",
            "`nz = list(<sample> = list(z =, nz =), ...)` to write it.")
  }
  n <- length(v$value)
  cols <- list(BIN1 = v$i, BIN2 = v$j, ANGBIN = v$angbin, VALUE = v$value,
               ANG = v$theta, ANGLEMIN = v$theta_lo, ANGLEMAX = v$theta_hi)
  if (!is.null(v$npair)) cols$NPAIRS <- v$npair
  keys <- c(list(`2PTDATA` = TRUE, QUANT1 = "GPR", QUANT2 = "GPR",
                 KERNEL_1 = twopoint_kernel, KERNEL_2 = twopoint_kernel,
                 WINDOWS = "SAMPLE",
                 N_ZBIN_1 = length(unique(v$i)),
                 N_ZBIN_2 = length(unique(v$j)),
                 N_ANG = length(unique(v$angbin))),
            stats::setNames(as.list(v$samples),
                            paste0("MD_BIN", seq_along(v$samples))))
  units <- list(ANG = "arcmin", ANGLEMIN = "arcmin", ANGLEMAX = "arcmin")
  hdus <- list()
  if (!is.null(v$cov)) {
    hdus[[1L]] <- list(extname = "COVMAT",
                       keys = fits_keys(list(COVDATA = TRUE, NAME_0 = "wtheta",
                                             STRT_0 = 0L,
                                             LEN_0 = as.integer(n))),
                       image = v$cov)
  }
  hdus[[length(hdus) + 1L]] <- pipeline_table("wtheta", cols, units, keys)
  if (!is.null(nz)) {
    z <- nz[[1L]]$z
    k <- length(z)
    mid <- if (k > 1L) (z[-1L] + z[-k]) / 2 else numeric()
    step <- if (k > 1L) c(z[2L] - z[1L], z[k] - z[k - 1L]) / 2 else c(0, 0)
    zcols <- c(list(Z_LOW = c(z[1L] - step[1L], mid),
                    Z_MID = z, Z_HIGH = c(mid, z[k] + step[2L])),
               stats::setNames(lapply(nz, `[[`, "nz"),
                               paste0("BIN", seq_along(nz))))
    hdus[[length(hdus) + 1L]] <- pipeline_table(
      twopoint_kernel, zcols, keys = list(NZDATA = TRUE,
                                          NBIN = length(nz),
                                          NZ = k))
  }
  write_pipeline_fits(file, list(), hdus)
}

# The wtheta spectrum (2PTDATA = T, QUANT1 = QUANT2 = GPR; the one named
# wtheta when there are several) of a twopoint file as a wtheta_multi
# result: samples named by MD_BIN<k> (else "bin<k>"), angles in the unit of
# TUNIT of ANG, the covariance block named for the spectrum in COVMAT.
read_twopoint <- function(file) {
  check_file(file)
  need_fits(file)
  heads <- fits_headers(file)
  ext <- vapply(heads, function(h) as.character(h$EXTNAME %||% ""), "")
  gpr <- which(vapply(heads, function(h) {
    isTRUE(h$`2PTDATA`) && identical(h$QUANT1, "GPR") &&
      identical(h$QUANT2, "GPR")
  }, TRUE))
  if (!length(gpr)) {
    stop("`file` \"", file, "\" holds no w(theta) spectrum (an extension ",
         "with 2PTDATA = T and QUANT1 = QUANT2 = 'GPR').", call. = FALSE)
  }
  h <- if (any(tolower(ext[gpr]) == "wtheta")) {
    gpr[tolower(ext[gpr]) == "wtheta"][1L]
  } else gpr[1L]
  tab <- fits_read_table(file, hdu = h - 1L)
  cols <- tab$columns
  need <- c("BIN1", "BIN2", "VALUE", "ANG")
  if (!all(need %in% names(cols))) {
    stop("`file` \"", file, "\" spectrum ", ext[h], " lacks ",
         paste(setdiff(need, names(cols)), collapse = ", "), ".",
         call. = FALSE)
  }
  unit <- trimws(tab$units[["ANG"]])
  per_degree <- c(arcsec = 3600, arcmin = 60, deg = 1, rad = pi / 180)
  if (!unit %in% names(per_degree)) {
    stop("`file` \"", file, "\" spectrum ", ext[h], " gives ANG in \"",
         unit, "\"; twopoint's units are arcsec, arcmin, deg and rad.",
         call. = FALSE)
  }
  to_deg <- function(v) if (is.null(v)) rep(NA_real_, length(cols$VALUE))
    else as.double(v) / per_degree[[unit]]
  b1 <- as.integer(cols$BIN1)
  b2 <- as.integer(cols$BIN2)
  nbin <- max(c(b1, b2))
  md <- heads[[h]][paste0("MD_BIN", seq_len(nbin))]
  samples <- vapply(seq_len(nbin), function(k) {
    if (is.null(md[[k]])) paste0("bin", k) else as.character(md[[k]])
  }, "")
  used <- sort(unique(c(b1, b2)))
  cov <- NULL
  ch <- which(ext == "COVMAT")
  if (length(ch)) {
    ck <- heads[[ch[1L]]]
    full <- fits_read_image(file, "COVMAT")
    k <- 0L
    starts <- integer()
    nms <- character()
    while (!is.null(ck[[paste0("NAME_", k)]])) {
      nms <- c(nms, as.character(ck[[paste0("NAME_", k)]]))
      starts <- c(starts, as.integer(ck[[paste0("STRT_", k)]]))
      k <- k + 1L
    }
    m <- match(ext[h], nms)
    if (is.na(m)) {
      stop("`file` \"", file, "\" COVMAT names no spectrum ", ext[h],
           " (NAME_k: ", paste(nms, collapse = ", "), ").", call. = FALSE)
    }
    n <- length(cols$VALUE)
    idx <- starts[m] + seq_len(n)
    if (max(idx) > nrow(full)) {
      stop("`file` \"", file, "\" COVMAT has ", nrow(full), " rows; ",
           "spectrum ", ext[h], " needs ", max(idx), ".", call. = FALSE)
    }
    cov <- unname(full[idx, idx, drop = FALSE])
  }
  pipeline_result(samples[used], samples[b1], samples[b2],
                  theta = to_deg(cols$ANG), theta_lo = to_deg(cols$ANGLEMIN),
                  theta_hi = to_deg(cols$ANGLEMAX),
                  w = as.double(cols$VALUE), cov = cov,
                  npair = if (!is.null(cols$NPAIRS)) as.double(cols$NPAIRS),
                  source = paste0("twopoint file (spectrum ", ext[h], ")"))
}
