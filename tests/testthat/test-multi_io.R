# SACC and DES twopoint files (R/sacc.R, R/twopoint.R), wtheta_multi()
# results in wtheta's own files (R/multi_io.R) and `[` on them
# (R/multi_subset.R). The reference readers (LSST DESC's sacc, joezuntz's
# 2point) read what wtheta writes where they are found (set
# WTHETA_SACC_PATH and WTHETA_TWOPOINT_PATH to their source directories, or
# have them importable by python3); the fixtures they wrote
# (tools/make-pipeline-fixtures.py) are read by read_wtheta() in every run.

skip_if_no_fits_write <- function() {
  if (!wtheta:::fits_available()) skip("wtheta built without cfitsio")
}

pipe_ran <- random_catalog(3000, seed = 1)
pipe_z <- list(z1 = simulate_catalog(700, seed = 2),
               z2 = simulate_catalog(700, seed = 3),
               z3 = simulate_catalog(700, seed = 4))
pipe_bins <- theta_bins(0.5, 5, n = 4, log = TRUE)
pipe_tomo <- untrusted_cov_ok(
  wtheta_multi(pipe_z, pipe_ran, pipe_bins, error = "jackknife",
               n_patches = 5, seed = 1, threads = 1,
               check_footprint = FALSE))
pipe_nz <- lapply(c(z1 = 0.3, z2 = 0.6, z3 = 0.9), function(m) {
  z <- seq(0, 1.5, by = 0.05)
  list(z = z, nz = stats::dnorm(z, m, 0.1))
})

test_that("a wtheta_multi() result round-trips through FITS and CSV", {
  skip_if_no_fits_write()
  d <- withr_tempfile()
  dir.create(d)
  f <- file.path(d, "tomo.fits")
  expect_identical(write_wtheta(pipe_tomo, f), f)
  back <- read_wtheta(f)
  expect_identical(back, pipe_tomo)
  expect_identical(wtheta_cov(back), wtheta_cov(pipe_tomo))
  cf <- file.path(d, "tomo.csv")
  write_wtheta(pipe_tomo, cf, format = "csv")
  expect_true(file.exists(file.path(d, "tomo-cov.csv")))
  back <- read_wtheta(cf)
  expect_identical(back, pipe_tomo)
  # today's order write_wtheta(x, file, overwrite) still works
  expect_error(write_wtheta(pipe_tomo, f), "exists")
  expect_identical(write_wtheta(pipe_tomo, f, TRUE), f)
  # a single wtheta() result is written as before
  w <- attr(pipe_tomo, "entries")[[2L]]
  g <- file.path(d, "one.fits")
  write_wtheta(w, g)
  expect_identical(read_wtheta(g), w)
})

test_that("SACC and twopoint files read back: values, angles, names, cov", {
  skip_if_no_fits_write()
  d <- withr_tempfile()
  dir.create(d)
  cov <- unname(attr(pipe_tomo, "cov"))
  for (fmt in c("sacc", "twopoint")) {
    f <- file.path(d, paste0(fmt, ".fits"))
    expect_message(write_wtheta(pipe_tomo, f, format = fmt), "no `nz` given")
    r <- read_wtheta(f)
    expect_s3_class(r, "wtheta_multi")
    expect_identical(attr(r, "samples"), c("z1", "z2", "z3"))
    expect_identical(as.character(r$i), as.character(pipe_tomo$i))
    expect_identical(as.character(r$j), as.character(pipe_tomo$j))
    expect_identical(r$w, pipe_tomo$w)
    # degrees here, arcmin in the file
    expect_equal(r$theta, pipe_tomo$theta, tolerance = 1e-14)
    expect_equal(r$theta_lo, pipe_tomo$theta_lo, tolerance = 1e-14)
    expect_equal(r$theta_hi, pipe_tomo$theta_hi, tolerance = 1e-14)
    expect_identical(unname(as.matrix(wtheta_cov(r))), cov)
    expect_equal(r$w_err, sqrt(diag(cov)), tolerance = 1e-15)
    expect_identical(names(attr(r, "entries")),
                     names(attr(pipe_tomo, "entries")))
    expect_identical(attr(r, "error"), "unknown")
    expect_equal(attr(r, "edges"), attr(pipe_tomo, "edges"),
                 tolerance = 1e-14)
    expect_identical(read_wtheta(f, format = fmt), r)
    expect_output(print(r), "3 samples \\(z1, z2, z3\\): 6 correlations")
    expect_error(write_wtheta(pipe_tomo, f, format = fmt), "exists")
  }
  # with n(z): NZ tracers, an n(z) extension; no message
  f <- file.path(d, "nz.fits")
  expect_silent(write_wtheta(pipe_tomo, f, format = "sacc", nz = pipe_nz))
  expect_identical(read_wtheta(f)$w, pipe_tomo$w)
  expect_silent(write_wtheta(pipe_tomo, f, format = "twopoint", nz = pipe_nz,
                             overwrite = TRUE))
  expect_identical(read_wtheta(f)$w, pipe_tomo$w)
})

test_that("write_wtheta() refuses bad format and nz, naming them", {
  f <- tempfile(fileext = ".fits")
  expect_error(write_wtheta(pipe_tomo, f, format = "hdf5"),
               "`format` must be one of")
  expect_error(write_wtheta(pipe_tomo, f, format = "csv"),
               "`format` is \"csv\" but `file`")
  expect_error(write_wtheta(pipe_tomo, f, nz = pipe_nz),
               "`nz` is written only to SACC and twopoint")
  expect_error(write_wtheta(pipe_tomo, f, format = "sacc",
                            nz = pipe_nz[1:2]),
               "`nz` has no n\\(z\\) for sample\\(s\\) \"z3\"")
  bad <- pipe_nz
  bad$z2$nz <- bad$z2$nz[-1]
  expect_error(write_wtheta(pipe_tomo, f, format = "sacc", nz = bad),
               "`nz` of sample \"z2\"")
  odd <- pipe_nz
  odd$z3$z <- odd$z3$z + 0.01
  expect_error(write_wtheta(pipe_tomo, f, format = "twopoint", nz = odd),
               "one z grid")
  expect_error(write_wtheta(data.frame(a = 1), f),
               "`x` must be a result of wtheta\\(\\) or wtheta_multi\\(\\)")
  expect_false(file.exists(f))
})

test_that("[ keeps the covariance block of the correlations or bins kept", {
  m <- pipe_tomo
  cov <- attr(m, "cov")
  rows <- which(m$i == "z2" & m$j == "z3")
  s <- m[rows, ]
  expect_s3_class(s, "wtheta_multi")
  expect_identical(attr(s, "cov"), cov[rows, rows])
  expect_identical(attr(s, "samples"), c("z2", "z3"))
  expect_identical(levels(s$i), c("z2", "z3"))
  expect_identical(names(attr(s, "entries")), "z2-z3")
  expect_identical(attr(s, "replicates"), attr(m, "replicates")[rows, ])
  expect_identical(s$w, m$w[rows])
  expect_null(attr(s, "pair_counts"))
  # the same bins of every correlation: bins 2 and 3
  b <- m[m$theta > 0.8 & m$theta < 3, ]
  kb <- which(m$theta > 0.8 & m$theta < 3)
  expect_s3_class(b, "wtheta_multi")
  expect_identical(attr(b, "cov"), cov[kb, kb])
  expect_identical(attr(b, "edges"), attr(m, "edges")[2:4])
  expect_identical(nrow(attr(b, "entries")[["z1-z3"]]), 2L)
  expect_identical(unname(attr(attr(b, "entries")[["z1-z3"]], "cov")),
                   unname(attr(attr(m, "entries")[["z1-z3"]], "cov")[2:3, 2:3]))
  expect_identical(attr(b, "samples"), c("z1", "z2", "z3"))
  # a sliced result writes as any other
  skip_if_no_fits_write()
  f <- tempfile(fileext = ".fits")
  on.exit(unlink(f))
  write_wtheta(b, f)
  expect_identical(read_wtheta(f), b)
  f2 <- tempfile(fileext = ".fits")
  on.exit(unlink(f2), add = TRUE)
  suppressMessages(write_wtheta(s, f2, format = "sacc"))
  r <- read_wtheta(f2)
  expect_identical(attr(r, "samples"), c("z2", "z3"))
  expect_identical(unname(attr(r, "cov")), unname(cov[rows, rows]))
  # other selections stay plain data frames, as before
  expect_false(inherits(m[c(2, 1), ], "wtheta_multi"))
  expect_false(inherits(m[c(1, 2, 5), ], "wtheta_multi"))
  expect_false(inherits(m[, c("i", "w")], "wtheta_multi"))
  expect_identical(m[3, "w"], m$w[3])
  expect_identical(m[["w"]], m$w)
})

# ---- fixtures written by the reference packages ------------------------------

expected_pipeline <- function(stem) {
  e <- utils::read.csv(test_path("fixtures", paste0(stem, "-expected.csv")),
                       stringsAsFactors = FALSE)
  cov <- as.matrix(utils::read.csv(test_path("fixtures",
                                             paste0(stem, "-cov.csv"))))
  list(e = e, cov = unname(cov))
}

# a pipeline file read back: samples, pairs, values, angles (the files'
# arcmin) and pair counts as the fixture's reference writer recorded them
expect_pipeline_read <- function(r, x) {
  expect_s3_class(r, "wtheta_multi")
  expect_identical(attr(r, "samples"), c("lens0", "lens1"))
  expect_identical(as.character(r$i), x$e$tracer1)
  expect_identical(as.character(r$j), x$e$tracer2)
  expect_identical(r$w, x$e$value)
  expect_equal(r$theta * 60, x$e$theta_arcmin, tolerance = 1e-15)
  expect_equal(r$theta_lo * 60, x$e$theta_min_arcmin, tolerance = 1e-15)
  expect_equal(r$theta_hi * 60, x$e$theta_max_arcmin, tolerance = 1e-15)
  expect_identical(attr(r, "npair"), x$e$npair)
}

test_that("read_wtheta() reads the SACC fixture sacc wrote", {
  skip_if_not(wtheta:::fits_available(), "wtheta built without cfitsio")
  x <- expected_pipeline("pipeline-sacc")
  r <- read_wtheta(test_path("fixtures", "pipeline-sacc.fits"))
  expect_pipeline_read(r, x)
  # the galaxy_density_xi block of a covariance that also covers two cl points
  expect_identical(unname(attr(r, "cov")), x$cov)
  expect_identical(names(attr(r, "entries")),
                   c("lens0-lens0", "lens0-lens1", "lens1-lens1"))
  expect_identical(read_wtheta(test_path("fixtures", "pipeline-sacc.fits"),
                               format = "sacc"), r)
})

test_that("read_wtheta() reads the twopoint fixture 2point wrote", {
  skip_if_not(wtheta:::fits_available(), "wtheta built without cfitsio")
  x <- expected_pipeline("pipeline-twopoint")
  r <- read_wtheta(test_path("fixtures", "pipeline-twopoint.fits"))
  expect_pipeline_read(r, x)
  # the wtheta block of a COVMAT that also covers gammat
  expect_identical(unname(attr(r, "cov")), x$cov)
  expect_error(read_wtheta(test_path("fixtures", "galaxies.fits"),
                           format = "twopoint"),
               "holds no w\\(theta\\) spectrum")
  expect_error(read_wtheta(test_path("fixtures", "galaxies.fits"),
                           format = "sacc"),
               "holds no galaxy_density_xi points")
})

# ---- the reference readers read what wtheta writes ---------------------------

# python3 with the reference package `module` importable (its source in
# the environment variable `var`, else installed); the script's path
pipeline_reader <- function(module, var) {
  script <- test_path("..", "..", "tools", "read-pipeline-files.py")
  if (!file.exists(script)) {
    skip("tools/read-pipeline-files.py is not here (tests run from a build)")
  }
  py <- Sys.getenv("WTHETA_PYTHON", "")
  if (!nzchar(py)) {
    py <- if (file.exists("/usr/bin/python3")) "/usr/bin/python3" else
      Sys.which("python3")
  }
  if (!nzchar(py)) skip("no python3 found")
  src <- Sys.getenv(var, "")
  env <- if (nzchar(src)) paste0("PYTHONPATH=", src) else character()
  ok <- suppressWarnings(system2(py, c("-c", shQuote(paste("import", module))),
                                 env = env, stdout = FALSE, stderr = FALSE))
  if (ok != 0L) {
    skip(paste0("python3 cannot import ", module, " (set ", var,
                " to its source directory)"))
  }
  function(kind, file) {
    out <- tempfile(fileext = ".csv")
    on.exit(unlink(out))
    rc <- system2(py, c(shQuote(script), kind, shQuote(file), shQuote(out)),
                  env = env, stdout = TRUE, stderr = TRUE)
    if (!is.null(attr(rc, "status"))) stop(paste(rc, collapse = "\n"))
    read_long_csv(out)
  }
}

# the long CSV the script writes (field,i,j,value) as a named list:
# vectors (numbers where every element is one), and matrices for fields
# with j
read_long_csv <- function(file) {
  d <- utils::read.csv(file, colClasses = "character", na.strings = NULL)
  out <- lapply(split(d, factor(d$field, levels = unique(d$field))),
                function(g) {
    num <- suppressWarnings(as.numeric(g$value))
    v <- if (!anyNA(num) || all(g$value == "nan")) num else g$value
    if (all(nzchar(g$j))) {
      m <- matrix(NA, max(as.integer(g$i)), max(as.integer(g$j)))
      m[cbind(as.integer(g$i), as.integer(g$j))] <- v
      return(m)
    }
    v[order(as.integer(g$i))]
  })
  out
}

test_that("sacc's reader reads wtheta's SACC file", {
  skip_if_no_fits_write()
  read <- pipeline_reader("sacc", "WTHETA_SACC_PATH")
  for (with_nz in c(FALSE, TRUE)) {
    f <- tempfile(fileext = ".fits")
    on.exit(unlink(f), add = TRUE)
    suppressMessages(write_wtheta(pipe_tomo, f, format = "sacc",
                                  nz = if (with_nz) pipe_nz))
    got <- read("sacc", f)
    expect_identical(got$data_types, "galaxy_density_xi")
    expect_identical(got$tracers, c("z1", "z2", "z3"))
    expect_identical(got$tracer_class,
                     rep(if (with_nz) "NZTracer" else "MiscTracer", 3))
    expect_identical(got$tracer1, as.character(pipe_tomo$i))
    expect_identical(got$tracer2, as.character(pipe_tomo$j))
    expect_equal(got$value, pipe_tomo$w, tolerance = 1e-12)
    expect_equal(got$theta, pipe_tomo$theta * 60, tolerance = 1e-12)
    expect_equal(got$theta_min, pipe_tomo$theta_lo * 60, tolerance = 1e-12)
    expect_equal(got$theta_max, pipe_tomo$theta_hi * 60, tolerance = 1e-12)
    dd <- unlist(lapply(attr(pipe_tomo, "entries"),
                        function(e) if (is.null(e$DD)) e$D1D2 else e$DD), use.names = FALSE)
    expect_equal(got$npair, dd, tolerance = 1e-12)
    expect_equal(unname(got$cov), unname(attr(pipe_tomo, "cov")),
                 tolerance = 1e-12)
    if (with_nz) {
      expect_equal(got[["nz:z2:nz"]], pipe_nz$z2$nz, tolerance = 1e-12)
      expect_equal(got[["nz:z2:z"]], pipe_nz$z2$z, tolerance = 1e-12)
    }
  }
})

test_that("2point's reader reads wtheta's twopoint file", {
  skip_if_no_fits_write()
  read <- pipeline_reader("twopoint", "WTHETA_TWOPOINT_PATH")
  for (with_nz in c(FALSE, TRUE)) {
    f <- tempfile(fileext = ".fits")
    on.exit(unlink(f), add = TRUE)
    suppressMessages(write_wtheta(pipe_tomo, f, format = "twopoint",
                                  nz = if (with_nz) pipe_nz))
    got <- read("twopoint", f)
    expect_identical(got$spectrum, "wtheta")
    expect_identical(got$angle_unit, "arcmin")
    expect_equal(got$bin1, as.integer(pipe_tomo$i))
    expect_equal(got$bin2, as.integer(pipe_tomo$j))
    expect_equal(got$angbin, rep(1:4, 6))
    expect_identical(got$tracer1, as.character(pipe_tomo$i))
    expect_identical(got$tracer2, as.character(pipe_tomo$j))
    expect_equal(got$value, pipe_tomo$w, tolerance = 1e-12)
    expect_equal(got$theta, pipe_tomo$theta * 60, tolerance = 1e-12)
    expect_equal(got$theta_min, pipe_tomo$theta_lo * 60, tolerance = 1e-12)
    expect_equal(got$theta_max, pipe_tomo$theta_hi * 60, tolerance = 1e-12)
    expect_equal(unname(got$cov), unname(attr(pipe_tomo, "cov")),
                 tolerance = 1e-12)
    if (with_nz) {
      expect_identical(got$kernels, "nz_sample")
      expect_equal(got[["nz:nz_sample:bin3"]], pipe_nz$z3$nz,
                   tolerance = 1e-12)
      expect_equal(got[["nz:nz_sample:z"]], pipe_nz$z1$z, tolerance = 1e-12)
    } else {
      expect_null(got$kernels)
    }
  }
})
