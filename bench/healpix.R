# Randoms from a HEALPix mask: random_catalog(n, mask = m) for an nside-1024
# mask (the pixels with centres at declination -20 to 40 degrees and right
# ascension 100 to 300: about 3.4 million pixels, 11,300 square degrees,
# 3,778 runs of consecutive NESTED numbers), on 1 and on 2 threads; also
# in_footprint() of the drawn points on 2 threads. Times are the minimum and
# median of `reps` runs (seconds, elapsed), with the machine, its load
# (uptime) before and after, and the library the package came from.
#
#   Rscript bench/healpix.R [n ...] [--reps=3] [--against=LIB]
#
# e.g. Rscript bench/healpix.R 1e7 1e8. With --against=LIB the same runs
# are made first by the wtheta installed in library LIB (say an older
# version, built with R CMD INSTALL --library=LIB), in a child process, and
# the table shows both and the ratio of the medians. Issue 20's target: 10^8
# randoms on 2 threads in under 10 s. Prints a table and writes
# output/bench-healpix.csv.
args <- commandArgs(trailingOnly = TRUE)
opt <- function(name, default) {
  hit <- grep(paste0("^--", name, "="), args, value = TRUE)
  if (length(hit)) sub("^[^=]*=", "", hit[1]) else default
}
sizes <- as.numeric(grep("^--", args, value = TRUE, invert = TRUE))
if (!length(sizes)) sizes <- 1e7
reps <- as.numeric(opt("reps", 3))
against <- opt("against", NULL)
out_file <- opt("out", NULL)          # the child's table (with --against)
suppressMessages(library(wtheta))
stopifnot(wtheta:::healpix_available())

load <- function() trimws(sub(".*load average:", "", system("uptime", intern = TRUE)))
machine <- function() {
  cpu <- tryCatch(grep("^model name", readLines("/proc/cpuinfo"), value = TRUE),
                  error = function(e) character(0), warning = function(w) character(0))
  cpu <- if (length(cpu)) trimws(sub(".*:", "", cpu[1L])) else "unknown CPU"
  paste0(cpu, ", ", parallel::detectCores(), " cores")
}

old <- NULL
if (!is.null(against)) {
  tmp <- tempfile(fileext = ".csv")
  cat("* first the wtheta in ", against, "\n", sep = "")
  script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1L])
  st <- system2(file.path(R.home("bin"), "Rscript"),
                c(script, format(sizes, scientific = TRUE), paste0("--reps=", reps),
                  paste0("--out=", tmp)),
                env = paste0("R_LIBS=", against))
  stopifnot(st == 0)
  old <- utils::read.csv(tmp)
  cat("* now the wtheta in ", dirname(find.package("wtheta")), "\n", sep = "")
}

nside <- 1024
all <- seq_len(12 * nside^2) - 1
# (wtheta 0.2.0's development versions before the threaded centres took 4
# arguments: --against such a library works too)
cen <- if (wtheta:::C_healpix_centres$numParameters == 5L) {
  .Call(wtheta:::C_healpix_centres, nside, TRUE, all, NULL, 2L)
} else .Call(wtheta:::C_healpix_centres, nside, TRUE, all, NULL)
keep <- cen[[2L]] > -20 & cen[[2L]] < 40 & cen[[1L]] > 100 & cen[[1L]] < 300
m <- wtheta:::make_healpix_map(nside, "NESTED", "C", all[keep],
                               rep(1, sum(keep)), "bench", "bench")
rm(all, cen, keep)
print(m)

timed <- function(f) {
  t <- vapply(seq_len(reps), function(i) {
    gc(FALSE)
    system.time(f())[["elapsed"]]
  }, 0)
  c(min = min(t), median = stats::median(t))
}

load_before <- load()
rows <- list()
for (n in sizes) {
  for (th in c(1L, 2L)) {
    options(wtheta.threads = th)
    t <- timed(function() random_catalog(n, mask = m, seed = 1))
    rows[[length(rows) + 1L]] <- data.frame(what = "random_catalog", n = n,
                                            threads = th, min_s = t[["min"]],
                                            median_s = t[["median"]])
  }
  r <- random_catalog(n, mask = m, seed = 1)
  options(wtheta.threads = 2L)
  t <- timed(function() in_footprint(r, m))
  rows[[length(rows) + 1L]] <- data.frame(what = "in_footprint", n = n,
                                          threads = 2L, min_s = t[["min"]],
                                          median_s = t[["median"]])
  stopifnot(all(in_footprint(r, m)))
  rm(r)
}
out <- do.call(rbind, rows)
if (!is.null(out_file)) {
  utils::write.csv(out, out_file, row.names = FALSE)
  quit(save = "no")
}
cat("\nmachine: ", machine(), "\n", "load (1, 5, 15 min) before: ",
    load_before, "; after: ", load(), "\n",
    "wtheta ", format(utils::packageVersion("wtheta")), " from ",
    dirname(find.package("wtheta")), "; ", reps, " runs each\n", sep = "")
if (!is.null(old)) {
  out$old_min_s <- old$min_s
  out$old_median_s <- old$median_s
  out$speedup <- round(old$median_s / out$median_s, 2)
  cat("old_*: the wtheta in ", against, "\n", sep = "")
}
print(out, row.names = FALSE)
dir.create("output", showWarnings = FALSE)
utils::write.csv(out, "output/bench-healpix.csv", row.names = FALSE)
