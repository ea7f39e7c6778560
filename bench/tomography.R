# Tomography in one call against separate calls: K samples (simulated,
# clustered) of N_DATA points each, one shared random catalog of N_RANDOM,
# 20 log bins from 0.01 to 10 degrees, jackknife errors with 20 patches.
# Times wtheta_multi() (all K (K + 1) / 2 correlations; RR once, each
# sample against the randoms once) against the K (K + 1) / 2 separate
# wtheta() calls (each recounts RR and its data-random counts), and checks
# that the two give the same w.
#   Rscript bench/tomography.R [BACKEND cpu|cuda|auto] [K] [N_DATA]
#     [N_RANDOM] [THREADS]
# Defaults: cpu, 5, 2e5, 1e6, all threads (the issue's sizes); for a
# quick run on a small machine: Rscript bench/tomography.R cpu 5 2e4 1e5
library(wtheta)
args <- commandArgs(trailingOnly = TRUE)
arg <- function(k, default) if (length(args) >= k) args[k] else default
backend <- arg(1, "cpu")
K <- as.integer(arg(2, 5))
n_data <- as.numeric(arg(3, 2e5))
n_random <- as.numeric(arg(4, 1e6))
threads <- if (length(args) >= 5) as.integer(args[5]) else NULL

bins <- theta_bins(0.01, 10, n = 20, log = TRUE)
box <- list(ra_range = c(0, 60), dec_range = c(-30, 30))
data <- lapply(seq_len(K), function(k) {
  simulate_catalog(n_data, ra_range = box$ra_range,
                   dec_range = box$dec_range, seed = k)
})
names(data) <- paste0("z", seq_len(K))
ran <- random_catalog(n_random, ra_range = box$ra_range,
                      dec_range = box$dec_range, seed = 100)
patches <- sky_patches(ran, n_patches = 20, seed = 1)
common <- list(bins = bins, error = "jackknife", patches = patches,
               backend = backend, threads = threads, progress = FALSE,
               check_footprint = FALSE)

# a warm-up (GPU contexts, thread pools)
# (its small catalogs leave the smallest bin empty: warnings muted)
invisible(suppressWarnings(do.call(wtheta, c(list(data[[1]][1:1000, ],
                                                  ran[1:5000, ]), common))))

t0 <- proc.time()[["elapsed"]]
sep <- list()
for (i in seq_len(K)) {
  for (j in i:K) {
    sep[[paste0(names(data)[i], "-", names(data)[j])]] <- if (i == j) {
      do.call(wtheta, c(list(data[[i]], ran), common))
    } else {
      do.call(wtheta, c(list(data[[i]], ran, data2 = data[[j]]), common))
    }
  }
}
t_sep <- proc.time()[["elapsed"]] - t0

t0 <- proc.time()[["elapsed"]]
tomo <- do.call(wtheta_multi, c(list(data, ran), common))
t_multi <- proc.time()[["elapsed"]] - t0

same <- all(vapply(names(sep), function(nm) {
  identical(sep[[nm]]$w, attr(tomo, "entries")[[nm]]$w) &&
    identical(sep[[nm]]$w_err, attr(tomo, "entries")[[nm]]$w_err)
}, TRUE))
cat(sprintf(paste0("backend %s (%s), K = %d (%d correlations), %s data ",
                   "points each, %s randoms, %d bins, jackknife (20 patches)\n",
                   "  %d separate wtheta() calls: %.2f s\n",
                   "  one wtheta_multi() call (%d counts): %.2f s\n",
                   "  ratio: %.1f%%; same w and w_err: %s\n"),
            attr(tomo, "backend"),
            if (attr(tomo, "backend") == "cpu")
              paste(attr(tomo, "threads"), "threads") else "GPU",
            K, length(sep), format(n_data, big.mark = ",", scientific = FALSE),
            format(n_random, big.mark = ",", scientific = FALSE),
            length(bins) - 1L, length(sep), t_sep,
            length(attr(tomo, "pair_counts")), t_multi,
            100 * t_multi / t_sep, same))
flush(stdout())
