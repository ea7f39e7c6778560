# CPU benchmark: task lists (jackknife patches) and weights.
#   Rscript bench/cpu-tasks.R [DATA_DIR] [REPS] [THREADS] [PATCHES]
# The classic workload: DD and RR (auto) and DR (cross) of the two reference
# catalogs with 360 bins of 0.25 degree from 0 to 90, counted
#  - as one task per count (the whole catalogs), and
#  - as a patch task list: points sorted into PATCHES equal-count slices in
#    RA, every pair of patches a task with a histogram of its own
#    (PATCHES (PATCHES + 1) / 2 auto tasks, PATCHES^2 cross tasks),
# each unweighted and weighted (weights uniform in [0.5, 1.5]).
# Prints seconds (minimum and median of REPS runs of DD + DR + RR, the
# configurations interleaved), elapsed and CPU (user + system, all
# threads: steadier than elapsed on a shared machine), and
# writes bench/results/cpu-tasks-results.csv. Also checks that the patch
# histograms add up to the whole-catalog counts.
library(wtheta)
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args) >= 1) args[1] else file.path("..", "shared", "data")
reps <- if (length(args) >= 2) as.integer(args[2]) else 3L
threads <- if (length(args) >= 3) as.integer(args[3]) else 2L
n_patch <- if (length(args) >= 4) as.integer(args[4]) else 20L

D <- read_catalog(file.path(dir, "data_100k_arcmin.txt"), units = "arcmin")
R <- read_catalog(file.path(dir, "flat_100k_arcmin.txt"), units = "arcmin")
edges <- as.double(theta_bins(0, 90, width = 0.25))

# points sorted by patch (equal-count slices in RA); start and end
# (zero-based, end exclusive) of each patch
by_patch <- function(cat) {
  o <- order(cat$ra)
  cut <- round(seq(0, nrow(cat), length.out = n_patch + 1))
  list(cat = cat[o, ], lo = cut[-length(cut)], hi = cut[-1])
}
pd <- by_patch(D)
pr <- by_patch(R)
xd <- wtheta:::unit_vectors(pd$cat, threads)
xr <- wtheta:::unit_vectors(pr$cat, threads)
set.seed(1)
wd <- runif(nrow(D), 0.5, 1.5)
wr <- runif(nrow(R), 0.5, 1.5)

# tasks as a k x 5 matrix (a0, a1, b0, b1, out), one histogram per task
auto_tasks <- function(p) {
  pq <- which(upper.tri(diag(n_patch), diag = TRUE), arr.ind = TRUE)
  pq <- pq[order(pq[, 1], pq[, 2]), , drop = FALSE]
  cbind(p$lo[pq[, 1]], p$hi[pq[, 1]], p$lo[pq[, 2]], p$hi[pq[, 2]],
        seq_len(nrow(pq)) - 1)
}
cross_tasks <- function(p, q) {
  pq <- expand.grid(b = seq_len(n_patch), a = seq_len(n_patch))
  cbind(p$lo[pq$a], p$hi[pq$a], q$lo[pq$b], q$hi[pq$b], seq_len(nrow(pq)) - 1)
}
t_dd <- auto_tasks(pd)
t_rr <- auto_tasks(pr)
t_dr <- cross_tasks(pd, pr)

count <- function(a, b, wa, wb, tasks) {
  .Call(wtheta:::C_pair_counts, a, b, edges, FALSE, 1L, threads, 0L, wa, wb,
        tasks, if (is.null(tasks)) 1L else nrow(tasks), FALSE, 0L, 0L)
}
runs <- list(
  "one task" = function(w) list(
    count(xd, NULL, if (w) wd, NULL, NULL),
    count(xd, xr, if (w) wd, if (w) wr, NULL),
    count(xr, NULL, if (w) wr, NULL, NULL)),
  "patch tasks" = function(w) list(
    count(xd, NULL, if (w) wd, NULL, t_dd),
    count(xd, xr, if (w) wd, if (w) wr, t_dr),
    count(xr, NULL, if (w) wr, NULL, t_rr))
)

cpu <- tryCatch(sub(".*: ", "", grep("model name", readLines("/proc/cpuinfo"),
                                     value = TRUE)[1]),
                error = function(e) NA_character_)
cat(sprintf(paste0("machine: %s, %d cores; R %s; %d + %d points; %d bins; ",
                   "%d threads; %d patches (%d + %d + %d tasks); %d runs each\n"),
            cpu, parallel::detectCores(), getRversion(), nrow(D), nrow(R),
            length(edges) - 1L, threads, n_patch, nrow(t_dd), nrow(t_dr),
            nrow(t_rr), reps))

# the four configurations take turns within each repetition, so that load
# from other processes (a shared machine) drifts over all of them alike
configs <- expand.grid(how = names(runs), w = c(FALSE, TRUE),
                       stringsAsFactors = FALSE)
times <- matrix(NA_real_, reps, nrow(configs))
cpu_s <- times
sums <- list()
for (i in seq_len(reps)) {
  for (k in seq_len(nrow(configs))) {
    how <- configs$how[k]
    w <- configs$w[k]
    res <- NULL
    gc()
    st <- system.time(res <- runs[[how]](w))
    times[i, k] <- st[["elapsed"]]
    cpu_s[i, k] <- st[["user.self"]] + st[["sys.self"]]
    sums[[paste(how, w)]] <- lapply(res, function(r) list(
      slots = rowSums(r$slots), wsum = if (w) rowSums(r$wsum)))
  }
}
rows <- lapply(seq_len(nrow(configs)), function(k) data.frame(
  tasks = configs$how[k], weighted = configs$w[k], threads = threads,
  min_s = min(times[, k]), median_s = stats::median(times[, k]),
  cpu_min_s = min(cpu_s[, k]), cpu_median_s = stats::median(cpu_s[, k])))
res <- do.call(rbind, rows)
base <- res$min_s[res$tasks == "one task" & !res$weighted]
res$vs_one_task_unweighted <- res$min_s / base
cpu_base <- res$cpu_min_s[res$tasks == "one task" & !res$weighted]
res$cpu_vs_one_task_unweighted <- res$cpu_min_s / cpu_base
print(res, row.names = FALSE, digits = 4)

# the patch histograms add up to the whole-catalog ones
for (w in c(FALSE, TRUE)) {
  one <- sums[[paste("one task", w)]]
  pat <- sums[[paste("patch tasks", w)]]
  for (k in 1:3) {
    stopifnot(identical(one[[k]]$slots, pat[[k]]$slots))
    if (w) {
      rel <- max(abs(one[[k]]$wsum - pat[[k]]$wsum) / pmax(one[[k]]$wsum, 1))
      cat(sprintf("weighted sums, count %d: one task vs patches, max relative difference %.2g\n",
                  k, rel))
    }
  }
}
utils::write.csv(res, file.path("bench", "results", "cpu-tasks-results.csv"),
                 row.names = FALSE)
