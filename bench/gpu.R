# GPU benchmark: the classic workload and a 10^6-point one on the CUDA engine.
#   Rscript bench/gpu.R [DATA_DIR] [REPS]
# Classic: the two reference catalogs (100k x 100k), DD + RR + DR with 360
# bins of 0.25 degree (self_pairs = TRUE, the classic convention; the GPU
# counts unordered pairs and the ordered counts follow exactly). Reported:
# summed GPU kernel time (CUDA events, measured in C) and the whole wtheta()
# call from R, minimum and median of REPS warm runs. Then the same for
# 10^6-point uniform catalogs on the classic footprint, and 20 log bins.
# Writes bench/gpu-results.csv.
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

res <- rbind(
  time_case("classic 360 linear", D, R, linear),
  time_case("classic 20 log", D, R, logb),
  time_case("1e6 360 linear", D6, R6, linear),
  time_case("1e6 20 log", D6, R6, logb)
)
if (nrow(gpu) > 1) {
  res <- rbind(res, time_case("1e6 360 linear, all GPUs", D6, R6, linear,
                              gpu$device))
}
print(res, row.names = FALSE, digits = 4)
utils::write.csv(res, file.path("bench", "gpu-results.csv"), row.names = FALSE)
