# What errors and weights cost: the classic workload (100k x 100k real
# catalogs, 360 bins of 0.25 degree, self_pairs = TRUE) through wtheta()
# without errors, with Poisson errors, with 20-patch jackknife and bootstrap
# errors, and weighted, on one backend.
#   Rscript bench/errors.R [BACKEND cpu|cuda] [DATA_DIR] [REPS]
# Reports the whole call (minimum and median of REPS runs after a warm-up)
# and, on the GPU, the summed kernel time; writes
# bench/results/errors-BACKEND.csv.
library(wtheta)
args <- commandArgs(trailingOnly = TRUE)
backend <- if (length(args) >= 1) args[1] else "cpu"
dir <- if (length(args) >= 2) args[2] else file.path("..", "shared", "data")
reps <- if (length(args) >= 3) as.integer(args[3]) else 3L

D <- read_catalog(file.path(dir, "data_100k_arcmin.txt"), units = "arcmin")
R <- read_catalog(file.path(dir, "flat_100k_arcmin.txt"), units = "arcmin")
bins <- theta_bins(0, 90, width = 0.25)
set.seed(1)
D$w <- runif(nrow(D), 0.5, 1.5)
R$w <- runif(nrow(R), 0.5, 1.5)
patches <- sky_patches(R, n_patches = 20, seed = 1)

run <- function(...) {
  t0 <- proc.time()[["elapsed"]]
  w <- wtheta(D, R, bins, self_pairs = TRUE, backend = backend,
              progress = FALSE, ...)
  c(call_s = proc.time()[["elapsed"]] - t0,
    gpu_ms = sum(vapply(attr(w, "pair_counts"), `[[`, 0, "gpu_ms")))
}
cases <- list(
  "no errors" = list(error = "none"),
  "poisson" = list(error = "poisson"),
  "jackknife, 20 patches" = list(error = "jackknife", patches = patches),
  "bootstrap, 20 patches" = list(error = "bootstrap", patches = patches,
                                 seed = 1),
  "weighted, no errors" = list(error = "none", weights = "w"),
  "weighted, jackknife" = list(error = "jackknife", patches = patches,
                               weights = "w")
)
first <- do.call(run, cases[[1]])                       # warm-up
res <- do.call(rbind, lapply(names(cases), function(nm) {
  t <- vapply(seq_len(reps), function(i) do.call(run, cases[[nm]]),
              numeric(2))
  data.frame(case = nm, backend = backend,
             threads = if (backend == "cpu") wtheta_threads() else NA,
             call_s_min = min(t[1, ]), call_s_median = stats::median(t[1, ]),
             gpu_ms_min = if (backend == "cuda") min(t[2, ]) else NA,
             gpu_ms_median = if (backend == "cuda") stats::median(t[2, ])
             else NA)
}))
res$vs_no_errors <- res$call_s_median / res$call_s_median[1]
cat(sprintf("%s; %s backend; %d runs each\n", R.version.string, backend,
            reps))
print(res, row.names = FALSE, digits = 4)
utils::write.csv(res, file.path("bench", "results",
                                 paste0("errors-", backend, ".csv")),
                 row.names = FALSE)
