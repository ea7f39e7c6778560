# The host stages of the survey-scale call, timed WITHOUT counting a pair, so
# that they can be measured on any machine (no GPU needed):
#   Rscript bench/plan.R [N ...] [threads=T1,T2] [patches=P]
#     N: default 1e7, several allowed; threads: default 1 and
#     wtheta_threads() (at 10^8 points one thread takes minutes);
#     patches: P > 0 plans the count of a jackknife instead, one task per
#     pair of P patches (sky_patches(X, P, seed = 1), labelled beforehand,
#     untimed), as wtheta(error = "jackknife") counts
# For N uniform points on the whole sky (the catalog of bench/scale.R gpu),
# auto pairs, 20 log bins 0.01-10 deg, on each thread count, each stage's
# seconds (minimum and median of 3 runs):
#   check          check_catalog(): finite, in range (one C pass)
#   unit_vectors   ra, dec to unit vectors (C, OpenMP)
#   patch_labels   with patches=P only, and not in the total: what a call
#                  with patches makes instead of unit_vectors (unit
#                  vectors, nearest of the P centres, grouped by patch in
#                  one C call, patch_vectors())
#   catalog        the C catalog of the unit vectors
#   grid_build     sorting the points by cell and building the trees
#   grid_walk      the walk over node pairs: the engine's tasks, bulk sums
#   cuda_*         the CUDA engine's host work on the walk's tasks
#                  (plan_*.cxx, compiled in every build): analysis of the
#                  points, rows and launches, the task boundaries of the
#                  device ordering (which a count now skips for the grid's
#                  points: they come ordered), the items of every launch
#                  (made while the GPU counts, except the first launch's;
#                  in a count the walk feeds the engine as it goes, so the
#                  launches are planned while the GPU counts too); launches
#                  and chunk_loads: their number, and the chunks of 2^21
#                  points the worker copies to the device and orders for
#                  them
# for the grid modes the GPU uses: "prune" (pruning only, the GPU's auto)
# and TRUE (bulk counting of node pairs too); total: their sum. Writes
# bench/results/plan.csv.
library(wtheta)
args <- commandArgs(trailingOnly = TRUE)
th_arg <- grep("^threads=", args, value = TRUE)
p_arg <- grep("^patches=", args, value = TRUE)
args <- setdiff(args, c(th_arg, p_arg))
n_patches <- if (length(p_arg)) as.integer(sub("^patches=", "", p_arg[1])) else 0L
ns <- if (length(args)) as.numeric(args) else 1e7
bins <- theta_bins(0.01, 10, n = 20, log = TRUE)
edges <- as.numeric(bins)
cpu <- sub(".*: ", "", grep("^model name", readLines("/proc/cpuinfo"),
                            value = TRUE)[1])
thread_set <- if (length(th_arg)) {
  as.integer(strsplit(sub("^threads=", "", th_arg[1]), ",")[[1]])
} else unique(c(1L, wtheta_threads()))
cat(sprintf("CPU: %s, threads %s; full-sky auto, 20 log bins 0.01-10 deg%s\n",
            cpu, paste(thread_set, collapse = " and "),
            if (n_patches > 0) sprintf(", %d patches", n_patches) else ""))
ns_ <- asNamespace("wtheta")
timed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  v <- force(expr)
  list(s = proc.time()[["elapsed"]] - t0, value = v)
}
reps <- 3L
res <- list()
for (n in ns) {
  X <- random_catalog(n, ra_range = c(0, 360), dec_range = c(-90, 90),
                      seed = 3)
  # a jackknife's count: the points grouped by patch, a task per patch pair
  tasks <- NULL
  if (n_patches > 0) {
    P <- sky_patches(X, n_patches = n_patches, seed = 1)
    lab <- ns_$nearest_centre(ns_$unit_vectors(X, wtheta_threads()),
                              attr(P, "centres"))
    X <- X[order(lab, method = "radix"), ]
    ranges <- attr(ns_$with_ranges(list(labels = sort(lab),
                                        counts = tabulate(lab, n_patches)))$labels,
                   "ranges")
    # every pair a <= b of patches (all within 180 degrees), as an auto
    # count's tasks before those beyond reach are left out
    tasks <- .Call(ns_$C_patch_plan,
                   ns_$unit_vectors(ns_$check_catalog(X, "x"), 1L),
                   matrix(as.double(ranges), ncol = 2L), NULL, NULL, 180,
                   wtheta_threads())$tasks
  }
  for (th in thread_set) {
    for (g in list("prune", TRUE)) {
      old <- options(wtheta.grid = g)
      runs <- lapply(seq_len(reps), function(r) {
        a <- timed(ns_$check_catalog(X, "x"))
        b <- timed(ns_$unit_vectors(a$value, th))
        c <- timed(.Call(ns_$C_catalog_new, b$value, NULL,
                         if (n_patches > 0) matrix(as.double(ranges), ncol = 2L),
                         NULL, NULL))
        p <- .Call(ns_$C_plan_catalogs, c$value, NULL, edges,
                   ns_$wt_constant("backend", "cuda"), th, ns_$grid_mode(),
                   tasks, as.integer(max(1, n_patches)^2), FALSE)
        .Call(ns_$C_catalog_release, c$value)
        out <- c(check = a$s, unit_vectors = b$s, catalog = c$s, p)
        if (n_patches > 0) {
          out["patch_labels"] <- timed(ns_$patch_vectors(
            a$value, attr(P, "centres"), NULL, th))$s
        }
        rm(a, b, c)
        invisible(gc(verbose = FALSE))
        out
      })
      options(old)
      m <- do.call(rbind, runs)
      stage <- setdiff(colnames(m), c("tasks", "task_pairs", "cuda_launches",
                                      "cuda_chunk_loads", "patch_labels"))
      extra <- intersect(colnames(m), "patch_labels")
      row <- data.frame(n = n, threads = th, patches = n_patches,
                        grid = format(g),
                        stage = c(sub("_s$", "", stage), "total", extra),
                        min_s = c(apply(m[, stage], 2, min),
                                  min(rowSums(m[, stage])),
                                  apply(m[, extra, drop = FALSE], 2, min)),
                        median_s = c(apply(m[, stage], 2, stats::median),
                                     stats::median(rowSums(m[, stage])),
                                     apply(m[, extra, drop = FALSE], 2,
                                           stats::median)),
                        tasks = m[1, "tasks"],
                        launches = m[1, "cuda_launches"],
                        chunk_loads = m[1, "cuda_chunk_loads"],
                        visited_share = m[1, "task_pairs"] / (n * (n - 1) / 2))
      print(row, row.names = FALSE, digits = 3)
      res[[length(res) + 1L]] <- row
    }
  }
  rm(X)
  invisible(gc(verbose = FALSE))
}
res <- do.call(rbind, res)
utils::write.csv(res, file.path("bench", "results", "plan.csv"),
                 row.names = FALSE)
