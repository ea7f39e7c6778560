# CPU benchmark: pair_counts() on the reference catalogs.
#   Rscript bench/cpu.R [DATA_DIR] [REPS] [N]
# DD and RR (auto, unordered pairs) and DR (cross) of the two catalogs, with
# 360 linear bins of 0.25 degree and with 20 log bins from 0.01 to 10
# degrees, on 1 and 2 threads. Prints seconds (minimum and median of REPS
# runs) and pairs per second, and writes bench/results/cpu-results.csv.
library(wtheta)
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args) >= 1) args[1] else file.path("..", "shared", "data")
reps <- if (length(args) >= 2) as.integer(args[2]) else 3L
n <- if (length(args) >= 3) as.integer(args[3]) else 100000L

D <- read_catalog(file.path(dir, "data_100k_arcmin.txt"), units = "arcmin")
R <- read_catalog(file.path(dir, "flat_100k_arcmin.txt"), units = "arcmin")
D <- D[seq_len(min(n, nrow(D))), ]
R <- R[seq_len(min(n, nrow(R))), ]
binnings <- list(
  "360 linear 0-90" = theta_bins(0, 90, width = 0.25),
  "20 log 0.01-10" = theta_bins(0.01, 10, n = 20, log = TRUE)
)
cpu <- tryCatch(sub(".*: ", "", grep("model name", readLines("/proc/cpuinfo"),
                                     value = TRUE)[1]),
                error = function(e) NA_character_)
cat(sprintf("machine: %s, %d cores; R %s; n = %d per catalog; %d runs each\n",
            cpu, parallel::detectCores(), getRversion(), n, reps))

rows <- list()
for (bname in names(binnings)) {
  b <- binnings[[bname]]
  for (threads in 1:2) {
    jobs <- list(DD = function() pair_counts(D, bins = b, backend = "cpu", threads = threads),
                 RR = function() pair_counts(R, bins = b, backend = "cpu", threads = threads),
                 DR = function() pair_counts(D, R, bins = b, backend = "cpu", threads = threads))
    for (kind in names(jobs)) {
      t <- vapply(seq_len(reps), function(i) jobs[[kind]]()$elapsed, 0)
      pairs <- if (kind == "DR") nrow(D) * as.double(nrow(R)) else
        nrow(D) * (nrow(D) - 1) / 2
      rows[[length(rows) + 1]] <- data.frame(
        bins = bname, threads = threads, count = kind, pairs = pairs,
        min_s = min(t), median_s = stats::median(t),
        pairs_per_s = pairs / min(t))
    }
  }
}
res <- do.call(rbind, rows)
total <- aggregate(cbind(min_s, median_s) ~ bins + threads, res, sum)
print(res, row.names = FALSE, digits = 4)
cat("\nDD + RR + DR:\n")
print(total, row.names = FALSE, digits = 4)
utils::write.csv(res, file.path("bench", "results", "cpu-results.csv"),
                 row.names = FALSE)
