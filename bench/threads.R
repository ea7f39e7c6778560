# What the thread checks of issue 16 cost: wtheta_threads() (the cached
# parallelly::availableCores() lookup, then the C caps) per call, and the
# first count with a team larger than any before (wtheta starts and stops
# that many threads itself, to turn a failure into an R error) against the
# later counts with the same team.
#   Rscript bench/threads.R [REPS]
# Each team size runs in a fresh R process, so that its first call is the
# first with that team. Prints a table.
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 20L
rscript <- file.path(R.home("bin"), "Rscript")
one <- function(threads) {
  code <- sprintf(paste(
    "library(wtheta); set.seed(1)",
    "x <- data.frame(ra = runif(3000, 0, 20), dec = runif(3000, -10, 10))",
    "f <- function() pair_counts(x, bins = c(0, 1, 2), threads = %d,",
    "  backend = 'cpu')",
    "first <- system.time(f())[['elapsed']]",
    "later <- replicate(%d, system.time(f())[['elapsed']])",
    "cat(first, min(later), median(later), '\\n')", sep = "\n"),
    threads, reps)
  out <- system2(rscript, c("-e", shQuote(code)), stdout = TRUE)
  as.numeric(strsplit(trimws(out[length(out)]), " ")[[1]])
}
suppressMessages(library(wtheta))
cores <- wtheta_backends()$name[1]
per_call <- system.time(for (i in 1:1000) wtheta_threads())[["elapsed"]]
cat(sprintf("machine: %s; wtheta_threads(): %.3f ms per call\n", cores,
            per_call))
cat(sprintf("%8s %12s %12s %12s\n", "threads", "first (s)", "later min",
            "later median"))
for (t in c(2L, 4L, 8L, 16L)) {
  r <- one(t)
  cat(sprintf("%8d %12.4f %12.4f %12.4f\n", t, r[1], r[2], r[3]))
}
