# Reading speed: read_catalog() on FITS and on text, side by side with
# data.table::fread() on the same text and astropy's fits.getdata() on the
# same FITS file (when Debian's python3-astropy is present; the data are
# forced with a column sum, so memory mapping cannot hide the read, and,
# separately, copied into native-endian arrays as read_catalog() delivers
# them). Catalogs of ra, dec (10 decimals) and a weight; times are the
# minimum and median of `reps` runs, files warm in the page cache.
#
#   Rscript bench/io.R [rows ...] [--reps=3] [--threads=N]
#
# e.g. Rscript bench/io.R 1e6 1e7. Prints a table and writes
# output/bench-io.csv.
args <- commandArgs(trailingOnly = TRUE)
opt <- function(name, default) {
  hit <- grep(paste0("^--", name, "="), args, value = TRUE)
  if (length(hit)) as.numeric(sub("^[^=]*=", "", hit[1])) else default
}
sizes <- as.numeric(grep("^--", args, value = TRUE, invert = TRUE))
if (!length(sizes)) sizes <- 1e6
reps <- opt("reps", 3)
suppressMessages(library(wtheta))
has_dt <- requireNamespace("data.table", quietly = TRUE)
if (has_dt) data.table::setDTthreads(opt("threads", 0))
py <- "/usr/bin/python3"
has_astropy <- file.exists(py) &&
  system2(py, c("-c", shQuote("import astropy")), stdout = FALSE,
          stderr = FALSE) == 0
has_fits <- wtheta:::fits_available()

timed <- function(f) {
  t <- numeric(reps)
  for (k in seq_len(reps)) {
    gc()
    t[k] <- system.time(f())[["elapsed"]]
  }
  c(min = min(t), median = stats::median(t))
}

rows <- list()
add <- function(format, reader, n, bytes, t) {
  rows[[length(rows) + 1L]] <<- data.frame(
    format = format, reader = reader, rows = n, MB = round(bytes / 1e6, 1),
    min_s = round(t[["min"]], 3), median_s = round(t[["median"]], 3),
    MB_per_s = round(bytes / 1e6 / t[["min"]]),
    Mrows_per_s = round(n / 1e6 / t[["min"]], 2))
}

dir <- tempfile("bench-io")
dir.create(dir)
for (n in sizes) {
  set.seed(1)
  ra <- stats::runif(n, 0, 360)
  dec <- stats::runif(n, -90, 90)
  w <- stats::runif(n, 0.5, 2)
  txt <- file.path(dir, "cat.txt")
  data.table_write <- function() {
    writeLines(sprintf("%.10f %.10f %.6f", ra, dec, w), txt)
  }
  data.table_write()
  tb <- file.size(txt)
  add("text", "read_catalog", n, tb,
      timed(function() read_catalog(txt, columns = c(1, 2, w = 3))))
  if (has_dt) {
    add("text", "data.table::fread", n, tb,
        timed(function() data.table::fread(txt, header = FALSE,
                                           colClasses = "double")))
  }
  if (has_fits) {
    fts <- file.path(dir, "cat.fits")
    wtheta:::write_fits_result(fts, "CAT", list(RA = ra, DEC = dec, W = w),
                               list(), NULL, NULL, "catalog")
    fb <- file.size(fts)
    add("fits", "read_catalog", n, fb,
        timed(function() read_catalog(fts, columns = c("RA", "DEC", "W"))))
    if (has_astropy) {
      # "sum": the columns summed (memory-mapped, nothing kept); "copy":
      # native-endian copies of the columns, what read_catalog() delivers
      for (how in c("sum", "copy")) {
        force <- if (how == "sum") {
          "    s = float(d['RA'].sum() + d['DEC'].sum() + d['W'].sum())\n"
        } else {
          paste0("    c = [np.array(d[k], dtype=np.float64) for k in ",
                 "('RA', 'DEC', 'W')]\n")
        }
        code <- sprintf(paste0(
          "import time, statistics\nimport numpy as np\n",
          "from astropy.io import fits\nts = []\n",
          "for k in range(%d):\n",
          "    t0 = time.perf_counter()\n",
          "    d = fits.getdata('%s', 1)\n", force,
          "    ts.append(time.perf_counter() - t0)\n",
          "print(min(ts), statistics.median(ts))\n"), reps, fts)
        out <- system2(py, c("-c", shQuote(code)), stdout = TRUE)
        t <- as.numeric(strsplit(out[length(out)], " ")[[1]])
        add("fits", paste0("astropy fits.getdata + ", how), n, fb,
            c(min = t[1], median = t[2]))
      }
    }
  }
  unlink(file.path(dir, c("cat.txt", "cat.fits")))
}
res <- do.call(rbind, rows)
options(width = 150)
cat(sprintf("bench/io.R: %s, %d cores, R %s, wtheta %s, cfitsio %s\n",
            sub("^model name\\s*:\\s*", "",
                grep("^model name", readLines("/proc/cpuinfo"), value = TRUE)[1]),
            parallel::detectCores(), getRversion(),
            utils::packageVersion("wtheta"), if (has_fits) "yes" else "no"))
print(res, row.names = FALSE)
dir.create("output", showWarnings = FALSE)
utils::write.csv(res, "output/bench-io.csv", row.names = FALSE)
