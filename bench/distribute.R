# Bytes sent to each worker by a distributed count: every task of a
# block-pair count is serialized as the future framework would send it
# (serialize() of the task list), for catalogs of 10^5 .. 10^7 points.
#
#   Rscript bench/distribute.R [max_n] [blocks]     (default 1e6 and 4)
#
# Prints a table and writes bench/results/distribute.csv. Counting is not run:
# this measures only what each worker receives, against the bytes of the
# whole catalogs (what a task would carry if it held both catalogs).
suppressPackageStartupMessages(library(wtheta))
args <- commandArgs(trailingOnly = TRUE)
max_n <- if (length(args) >= 1) as.numeric(args[1]) else 1e6
k <- if (length(args) >= 2) as.integer(args[2]) else 4L
sizes <- c(1e5, 1e6, 1e7)
sizes <- sizes[sizes <= max_n]
ns <- asNamespace("wtheta")
how <- list(n_blocks = k, backend = "auto", threads = NULL)
edges <- theta_bins(0.01, 10, n = 20, log = TRUE)
rows <- list()
for (n in sizes) {
  for (kind in c("auto", "cross")) {
    for (extra in c("plain", "weights+patches")) {
      set.seed(1)
      a <- ns$unit_vectors(random_catalog(n), 1L)
      b <- if (kind == "cross") ns$unit_vectors(random_catalog(n), 1L)
      wa <- if (extra != "plain") runif(n)
      wb <- if (extra != "plain" && kind == "cross") runif(n)
      pa <- if (extra != "plain") sample.int(20L, n, TRUE)
      pb <- if (extra != "plain" && kind == "cross") sample.int(20L, n, TRUE)
      t0 <- proc.time()[["elapsed"]]
      bt <- ns$block_tasks(a, b, edges, FALSE, how, wa, wb, pa, pb,
                           if (extra != "plain") 20L else 0L, "pairs")
      bytes <- vapply(seq_len(nrow(bt$jobs)), function(i)
        as.double(length(serialize(bt$make_task(i), NULL))), 0)
      secs <- proc.time()[["elapsed"]] - t0
      whole <- as.double(length(serialize(list(a, b, wa, wb, pa, pb), NULL)))
      rows[[length(rows) + 1L]] <- data.frame(
        n = n, count = kind, data = extra, blocks = k,
        tasks = nrow(bt$jobs), max_task_MB = max(bytes) / 1e6,
        total_sent_MB = sum(bytes) / 1e6, whole_catalogs_MB = whole / 1e6,
        bytes_per_point = max(bytes) / (if (kind == "cross") 2 * n / k else
                                          2 * n / k),
        make_s = secs)
      rm(a, b, bt)
      invisible(gc())
    }
  }
}
out <- do.call(rbind, rows)
cat(sprintf("machine: %s, %d cores; R %s; wtheta %s\n",
            Sys.info()[["nodename"]], parallel::detectCores(),
            getRversion(), packageVersion("wtheta")))
print(format(out, digits = 4), row.names = FALSE)
utils::write.csv(out, "bench/results/distribute.csv", row.names = FALSE)
