# A representative subset of what the tests exercise, small enough to run
# under valgrind (20-50 times slower than native): every C entry point, the
# CPU kernels on one and two threads (table lookup, float prefilter and
# binary-search paths), auto, cross and self pairs, the error paths (bad
# input, injected faults), read_catalog() on text and FITS and the result
# writers. Run by
#   sh tools/sanitize.sh valgrind
# which builds the package first. Stops with status 1 on a wrong count.
library(wtheta)

check <- function(ok, what) {
  if (!isTRUE(ok)) {
    cat("WRONG:", what, "\n")
    quit(status = 1)
  }
  cat("ok:", what, "\n")
}

# brute force, following ?wtheta-package step by step
ref_slots <- function(x, y = NULL, edges, self_pairs = FALSE) {
  u <- function(cat) {
    ra <- (cat$ra %% 360) * (pi / 180)
    dec <- cat$dec * (pi / 180)
    list(x = cos(dec) * cos(ra), y = cos(dec) * sin(ra), z = sin(dec))
  }
  a <- u(x)
  b <- if (is.null(y)) a else u(y)
  d2 <- outer(a$x, b$x, "-")^2 + outer(a$y, b$y, "-")^2
  d2 <- d2 + outer(a$z, b$z, "-")^2
  if (is.null(y) && !self_pairs) d2 <- d2[upper.tri(d2)]
  s <- sin(edges * (pi / 180) / 2)
  c2 <- ifelse(edges >= 180, Inf, 4 * s * s)
  tabulate(findInterval(as.vector(d2), c2) + 1L, nbins = length(edges) + 1L)
}
slots_of <- function(pc) c(pc$n_below, pc$counts, pc$n_above)

invisible(wtheta_backends())
invisible(wtheta_threads())

set.seed(1)
x <- random_catalog(400, ra_range = c(0, 40), dec_range = c(-20, 20))
y <- random_catalog(230, ra_range = c(10, 50), dec_range = c(-10, 30))
for (b in list(theta_bins(0, 60, width = 0.5),
               theta_bins(0.01, 30, n = 15, log = TRUE),
               theta_bins(0, 180, n = 70000))) {
  for (threads in 1:2) {
    pc <- pair_counts(x, bins = b, backend = "cpu", threads = threads)
    check(identical(slots_of(pc), as.double(ref_slots(x, NULL, b))),
          sprintf("auto, %d bins, %d thread(s)", length(b) - 1, threads))
    pc <- pair_counts(x, y, bins = b, backend = "cpu", threads = threads)
    check(identical(slots_of(pc), as.double(ref_slots(x, y, b))),
          sprintf("cross, %d bins, %d thread(s)", length(b) - 1, threads))
  }
}
pc <- pair_counts(y, bins = theta_bins(0, 60, width = 1), self_pairs = TRUE,
                  backend = "cpu", threads = 2)
check(identical(slots_of(pc),
                as.double(ref_slots(y, NULL, theta_bins(0, 60, width = 1),
                                    TRUE))), "self pairs")

# enough pairs (> 2^22) for the float prefilter of the vector kernels
big <- random_catalog(3000, ra_range = c(0, 30), dec_range = c(0, 30))
b <- theta_bins(0, 40, width = 0.1)
p1 <- pair_counts(big, bins = b, backend = "cpu", threads = 1)
p2 <- pair_counts(big, bins = b, backend = "cpu", threads = 2)
check(identical(p1$counts, p2$counts) &&
        sum(p1$counts) + p1$n_outside == choose(3000, 2),
      "3000 points, float prefilter, 1 vs 2 threads")

w <- wtheta(x, y, bins = theta_bins(0, 20, width = 1), backend = "cpu",
            threads = 2)
check(all(is.finite(w$w[w$RR > 0])), "wtheta()")

# error paths leave nothing behind
for (bad in list(quote(pair_counts(data.frame(ra = 1, dec = 91), bins = b)),
                 quote(pair_counts(x, bins = c(0, 2, 1))),
                 quote(read_catalog(tempfile()))))
  check(inherits(try(eval(bad), silent = TRUE), "try-error"),
        paste("error:", deparse(bad)))
for (fault in c("alloc", "thread")) {
  Sys.setenv(WTHETA_TEST_FAULT = fault)
  r <- try(pair_counts(x, bins = b, backend = "cpu", threads = 2),
           silent = TRUE)
  Sys.unsetenv("WTHETA_TEST_FAULT")
  # engines without the hook count normally; either way nothing leaks
  check(inherits(r, "try-error") || inherits(r, "pair_counts"),
        paste("fault", fault))
}
f <- tempfile()
writeLines(c("# ra dec", "10,20\r", "11,-20.5", "", "1e1,2E1"), f)
cat1 <- read_catalog(f)
check(identical(cat1$dec, c(20, -20.5, 20)), "read_catalog CSV with CRLF")
unlink(f)

# the text reader on gzip, a header and an extra column; FITS (cfitsio's
# reader and the raw fast path) when built with it; results written and
# read back
f <- tempfile(fileext = ".gz")
con <- gzfile(f, "w")
writeLines(c("ra dec name", "10 20 a", "30 -40 b"), con)
close(con)
cat2 <- read_catalog(f, columns = c("ra", "dec", "name"))
check(identical(cat2$name, c("a", "b")), "read_catalog gzip with a header")
writeBin(readBin(f, "raw", 30), f)
check(inherits(try(read_catalog(f), silent = TRUE), "try-error"),
      "truncated gzip refused")
unlink(f)
fx <- file.path("tests", "testthat", "fixtures")
if (wtheta:::fits_available() && dir.exists(fx)) {
  g <- read_catalog(file.path(fx, "galaxies.fits"),
                    columns = c("RA", "DEC", "W", "NAME", "SHAPE", "SMALL",
                                "FLAG", "ID"))
  check(nrow(g) == 24 && is.matrix(g$SHAPE) && anyNA(g$SMALL),
        "read_catalog FITS, every column type")
  s <- read_catalog(file.path(fx, "scaled.fits"),
                    columns = c("ra", "dec", "u16", "u32"))
  check(identical(s$U16[4], 65535L), "read_catalog FITS, scaled columns")
  for (bad in c("bad-truncated.fits", "bad-no-end.fits", "bad-naxis2.fits",
                "image-only.fits", "null-dec.fits"))
    check(inherits(try(read_catalog(file.path(fx, bad)), silent = TRUE),
                   "try-error"), paste("FITS refused:", bad))
  wf <- tempfile(fileext = ".fits")
  write_wtheta(w, wf)
  check(identical(read_wtheta(wf), w), "write_wtheta / read_wtheta FITS")
  write_wtheta(w, wf, overwrite = TRUE)
  check(identical(read_wtheta(wf), w), "write_wtheta FITS over a file")
  unlink(wf)
  pf <- tempfile(fileext = ".fits")
  pp <- attr(w, "pair_counts")[[1L]]
  write_pair_counts(pp, pf)
  check(identical(read_pair_counts(pf), pp), "write_pair_counts FITS")
  unlink(pf)
  # cfitsio refuses to create the file: closed, nothing left
  if (dir.exists("/sys/kernel")) {
    check(inherits(try(write_wtheta(w, "/sys/w.fits"), silent = TRUE),
                   "try-error"), "write_wtheta FITS refused by the system")
  }
  fw <- read_wtheta(file.path(fx, "foreign-wtheta.fits"))
  f32 <- read_wtheta(file.path(fx, "foreign-wtheta-f32.fits"))
  check(identical(dim(attr(fw, "cov")), c(4L, 4L)) &&
          identical(dim(attr(f32, "cov")), c(4L, 4L)),
        "read_wtheta of tables astropy wrote (COV image and table)")
}
pc <- pair_counts(x, bins = b, backend = "cpu", threads = 2)
check(identical(slots_of(pc), as.double(ref_slots(x, NULL, b))),
      "counts after the errors")

# the grid through prepared catalogs: one catalog's grid kept for several
# counts, rebuilt for other cells, released; patches and weights
old <- options(wtheta.grid = TRUE)
gb <- wtheta:::grid_builds()
eg <- c(0, 1, 3)
ux <- wtheta:::unit_vectors(x, 1L)
uy <- wtheta:::unit_vectors(y, 1L)
hx <- wtheta:::new_catalog_handle()
hy <- wtheta:::new_catalog_handle()
run <- list(backend = "cpu", devices = integer())
cg1 <- wtheta:::count_pairs(ux, NULL, eg, FALSE, run, 2L, ha = hx)
cg2 <- wtheta:::count_pairs(ux, uy, eg, FALSE, run, 2L, ha = hx, hb = hy)
cg3 <- wtheta:::count_pairs(ux, uy, c(0, 2, 5), FALSE, run, 1L, ha = hx,
                            hb = hy)
wtheta:::catalog_release(hx)
rm(hx, hy)
invisible(gc())
check(identical(slots_of(cg1), as.double(ref_slots(x, NULL, eg))) &&
        identical(slots_of(cg2), as.double(ref_slots(x, y, eg))) &&
        identical(slots_of(cg3), as.double(ref_slots(x, y, c(0, 2, 5)))) &&
        wtheta:::grid_builds() - gb == 4,
      "grid counts through catalog handles (4 builds)")
wg <- wtheta(x, y, bins = eg, backend = "cpu", threads = 2,
             error = "jackknife", n_patches = 3, seed = 1,
             weights = list(data = runif(400), random = runif(230)),
             check_footprint = FALSE)
check(all(vapply(attr(wg, "pair_counts"), `[[`, 0, "pairs_skipped") > 0),
      "wtheta() with patches and weights through the grid")
options(old)
cat("subset done\n")
