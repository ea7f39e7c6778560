# Randoms from a HEALPix mask: random_catalog(n, mask = m) for an nside-1024
# mask (the pixels with centres at declination -20 to 40 degrees and right
# ascension 100 to 300: about 2.2 million pixels, 8,400 square degrees),
# on 1 and on 2 threads; also in_footprint() of the drawn points. Times
# are the minimum and median of `reps` runs.
#
#   Rscript bench/healpix.R [n ...] [--reps=3]
#
# e.g. Rscript bench/healpix.R 1e7 1e8. Prints a table and writes
# output/bench-healpix.csv.
args <- commandArgs(trailingOnly = TRUE)
opt <- function(name, default) {
  hit <- grep(paste0("^--", name, "="), args, value = TRUE)
  if (length(hit)) as.numeric(sub("^[^=]*=", "", hit[1])) else default
}
sizes <- as.numeric(grep("^--", args, value = TRUE, invert = TRUE))
if (!length(sizes)) sizes <- 1e7
reps <- opt("reps", 3)
suppressMessages(library(wtheta))
stopifnot(wtheta:::healpix_available())

nside <- 1024
all <- seq_len(12 * nside^2) - 1
cen <- .Call(wtheta:::C_healpix_centres, nside, TRUE, all, NULL)
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
print(out, row.names = FALSE)
dir.create("output", showWarnings = FALSE)
utils::write.csv(out, "output/bench-healpix.csv", row.names = FALSE)
