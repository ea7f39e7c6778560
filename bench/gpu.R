# GPU benchmark: the classic workload and a 10^6-point one on the CUDA engine.
#   Rscript bench/gpu.R [DATA_DIR] [REPS]
# Classic: the two reference catalogs (100k x 100k), DD + RR + DR with 360
# bins of 0.25 degree (self_pairs = TRUE, the classic convention; the GPU
# counts unordered pairs and the ordered counts follow exactly). Reported:
# summed GPU kernel time (CUDA events, measured in C) and the whole wtheta()
# call from R, minimum and median of REPS warm runs. Then the same for
# 10^6-point uniform catalogs on the classic footprint, and 20 log bins.
# Then, through the core entry point, the classic workload with 20
# jackknife patches (210 + 210 + 400 tasks, one histogram each) and with
# per-point weights (kernel time only). Writes bench/results/gpu-results.csv.
library(wtheta)
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args) >= 1) args[1] else file.path("..", "shared", "data")
reps <- if (length(args) >= 2) as.integer(args[2]) else 7L

be <- wtheta_backends()
gpu <- be[be$backend == "cuda" & be$available, ]
if (!nrow(gpu)) stop("no usable CUDA GPU: ", be$name[be$backend == "cuda"][1])
cat(sprintf("GPU: %s (cc %s, %.0f GB); %d warm runs each\n", gpu$name[1],
            gpu$compute_capability[1], gpu$memory_gb[1], reps))

D <- read_catalog(file.path(dir, "data_100k_arcmin.txt"), units = "arcmin")
R <- read_catalog(file.path(dir, "flat_100k_arcmin.txt"), units = "arcmin")
D6 <- random_catalog(1e6, ra_range = c(0, 90), dec_range = c(0, 90), seed = 1)
R6 <- random_catalog(1e6, ra_range = c(0, 90), dec_range = c(0, 90), seed = 2)
linear <- theta_bins(0, 90, width = 0.25)
logb <- theta_bins(0.01, 10, n = 20, log = TRUE)

time_case <- function(name, d, r, bins, devices = gpu$device[1]) {
  whole_call_ms <- function() {
    t0 <- proc.time()[["elapsed"]]
    wtheta(d, r, bins, self_pairs = TRUE, backend = "cuda", devices = devices)
    (proc.time()[["elapsed"]] - t0) * 1000
  }
  # summed kernel time of DD, RR and DR (CUDA events, from C)
  gpu_ms <- function() {
    sum(pair_counts(d, bins = bins, self_pairs = TRUE, backend = "cuda",
                    devices = devices)$gpu_ms,
        pair_counts(r, bins = bins, self_pairs = TRUE, backend = "cuda",
                    devices = devices)$gpu_ms,
        pair_counts(d, r, bins = bins, backend = "cuda",
                    devices = devices)$gpu_ms)
  }
  whole_call_ms(); gpu_ms()                          # warm-up
  calls <- vapply(seq_len(reps), function(i) whole_call_ms(), 0)
  kern <- vapply(seq_len(reps), function(i) gpu_ms(), 0)
  data.frame(case = name, n_data = nrow(d), n_random = nrow(r),
             bins = length(bins) - 1L, devices = length(devices),
             gpu_kernel_ms_min = min(kern), gpu_kernel_ms_median = median(kern),
             wtheta_call_ms_min = min(calls),
             wtheta_call_ms_median = median(calls))
}

# The core entry point, for task lists and weights (what pair_counts() will
# pass for jackknife patches): returns the summed GPU kernel time.
core_ms <- function(a, b, edges, w1 = NULL, w2 = NULL, tasks = NULL,
                    n_out = 1L) {
  .Call(wtheta:::C_pair_counts, a, b, edges, FALSE, 2L, 1L,
        as.integer(gpu$device[1]), w1, w2, tasks, as.integer(n_out),
        FALSE, 0L, 0L)
}

# Patches as the R layer will make them: a label per point (here 4 x 5
# equal-count cells in RA and Dec of the random catalog, the same cell
# edges for both catalogs), points sorted by label, one task per patch
# pair (diagonal tasks for a patch with itself), one histogram per task.
patch_of <- function(cat, ra_cut, dec_cut) {
  (findInterval(cat$ra, ra_cut, all.inside = TRUE) - 1L) *
    (length(dec_cut) - 1L) + findInterval(cat$dec, dec_cut, all.inside = TRUE)
}
patched <- function(cat, lab, k) {
  o <- order(lab)
  end <- cumsum(tabulate(lab, k))
  list(xyz = wtheta:::unit_vectors(cat[o, ], 1L), start = c(0, end[-k]),
       end = end)
}
auto_tasks <- function(p) {
  k <- length(p$start)
  pq <- which(upper.tri(diag(k), diag = TRUE), arr.ind = TRUE)
  m <- cbind(p$start[pq[, 1]], p$end[pq[, 1]], p$start[pq[, 2]],
             p$end[pq[, 2]], seq_len(nrow(pq)) - 1)
  storage.mode(m) <- "double"
  m
}
cross_tasks <- function(p, q) {
  g <- expand.grid(i = seq_along(p$start), j = seq_along(q$start))
  m <- cbind(p$start[g$i], p$end[g$i], q$start[g$j], q$end[g$j],
             seq_len(nrow(g)) - 1)
  storage.mode(m) <- "double"
  m
}

time_core <- function(name, d, r, bins, n_ra = 4, n_dec = 5,
                      weighted = FALSE, patches = TRUE) {
  edges <- as.double(bins)
  qs <- function(v, k) {
    q <- stats::quantile(v, seq(0, 1, length.out = k + 1), names = FALSE)
    q[1] <- -Inf; q[k + 1] <- Inf; q
  }
  k <- if (patches) n_ra * n_dec else 1L
  ra_cut <- qs(r$ra, if (patches) n_ra else 1L)
  dec_cut <- qs(r$dec, if (patches) n_dec else 1L)
  pd <- patched(d, patch_of(d, ra_cut, dec_cut), k)
  pr <- patched(r, patch_of(r, ra_cut, dec_cut), k)
  set.seed(3)
  wd <- if (weighted) stats::runif(nrow(d), 0.5, 1.5)
  wr <- if (weighted) stats::runif(nrow(r), 0.5, 1.5)
  ta_d <- if (patches) auto_tasks(pd)
  ta_r <- if (patches) auto_tasks(pr)
  tc <- if (patches) cross_tasks(pd, pr)
  one <- function() {
    a <- core_ms(pd$xyz, NULL, edges, wd, NULL, ta_d, if (patches) nrow(ta_d) else 1L)
    b <- core_ms(pr$xyz, NULL, edges, wr, NULL, ta_r, if (patches) nrow(ta_r) else 1L)
    c <- core_ms(pd$xyz, pr$xyz, edges, wd, wr, tc, if (patches) nrow(tc) else 1L)
    list(ms = a$gpu_ms + b$gpu_ms + c$gpu_ms,
         total = c(sum(a$slots), sum(b$slots), sum(c$slots)))
  }
  first <- one()                                     # warm-up
  n1 <- as.double(nrow(d)); n2 <- as.double(nrow(r))
  ok <- identical(first$total, c(n1 * (n1 - 1) / 2, n2 * (n2 - 1) / 2, n1 * n2))
  kern <- vapply(seq_len(reps), function(i) one()$ms, 0)
  data.frame(case = name, n_data = n1, n_random = n2,
             bins = length(bins) - 1L, devices = 1L,
             gpu_kernel_ms_min = min(kern), gpu_kernel_ms_median = median(kern),
             wtheta_call_ms_min = NA_real_, wtheta_call_ms_median = NA_real_,
             all_pairs_counted = ok)
}

res <- rbind(
  time_case("classic 360 linear", D, R, linear),
  time_case("classic 20 log", D, R, logb),
  time_case("1e6 360 linear", D6, R6, linear),
  time_case("1e6 20 log", D6, R6, logb)
)
res$all_pairs_counted <- NA
res <- rbind(
  res,
  time_core("classic 360 linear, 1 task (core)", D, R, linear, patches = FALSE),
  time_core("classic 360 linear, 20 patches", D, R, linear),
  time_core("classic 20 log, 20 patches", D, R, logb),
  time_core("classic 360 linear, weighted", D, R, linear, weighted = TRUE,
            patches = FALSE),
  time_core("classic 360 linear, weighted, 20 patches", D, R, linear,
            weighted = TRUE)
)
if (nrow(gpu) > 1) {
  res <- rbind(res, cbind(time_case("1e6 360 linear, all GPUs", D6, R6,
                                    linear, gpu$device),
                          all_pairs_counted = NA))
}
print(res, row.names = FALSE, digits = 4)
utils::write.csv(res, file.path("bench", "results", "gpu-results.csv"),
                 row.names = FALSE)
