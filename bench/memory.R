# Memory over time: N calls (default 1000) of pair_counts() and of wtheta()
# on one backend; the process's resident memory (VmRSS) and, on CUDA, the
# GPU's used memory are read every N/10 calls. Prints a table and the growth
# after the first tenth (warm-up: allocator arenas, the CUDA engine's cached
# buffers), and exits with status 1 when it exceeds the limits.
#
#   Rscript bench/memory.R [cpu|cuda] [N] [faults] [--rss-mb=8] [--gpu-mb=16]
#
# "faults" makes every other call fail on purpose (WTHETA_TEST_FAULT, tests
# only: thread and alloc on the CPU, all four steps on CUDA in turn), to
# show that failed runs free what they took. Linux only (/proc).
args <- commandArgs(trailingOnly = TRUE)
opt <- function(name, default) {
  hit <- grep(paste0("^--", name, "="), args, value = TRUE)
  if (length(hit)) as.numeric(sub("^[^=]*=", "", hit[1])) else default
}
pos <- grep("^--", args, value = TRUE, invert = TRUE)
backend <- if (length(pos) >= 1) pos[1] else "cpu"
n_calls <- if (length(pos) >= 2) as.integer(pos[2]) else 1000L
faults <- "faults" %in% pos
rss_limit <- opt("rss-mb", 8)
gpu_limit <- opt("gpu-mb", 16)
stopifnot(backend %in% c("cpu", "cuda"), n_calls >= 10)

suppressMessages(library(wtheta))
rss_mb <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", s[startsWith(s, "VmRSS:")])) / 1024
}
gpu_mb <- function() {
  if (backend != "cuda") return(NA_real_)
  v <- suppressWarnings(system2("nvidia-smi", c("--query-gpu=memory.used",
                                                "--format=csv,noheader,nounits",
                                                "-i", "0"), stdout = TRUE))
  as.numeric(v[1])
}

set.seed(1)
data <- simulate_catalog(3000, sigma = 0.5, seed = 2)
rand <- random_catalog(6000, ra_range = range(data$ra),
                       dec_range = range(data$dec), seed = 3)
bins <- theta_bins(0.01, 10, n = 30, log = TRUE)
fault_kinds <- if (backend == "cpu") c("thread", "alloc") else
  c("alloc", "launch", "copy", "thread")
threads <- if (backend == "cpu") wtheta_threads() else NULL
machine <- paste(Sys.info()[["nodename"]], "/", R.version.string)
cat(sprintf("memory over %d calls of pair_counts() and wtheta(), backend %s%s\n",
            n_calls, backend, if (faults) ", every other call failing" else ""))
cat(sprintf("machine: %s; %s\n", machine,
            if (backend == "cpu") paste(threads, "threads") else
              paste(wtheta_backends()$name[wtheta_backends()$backend == "cuda"][1])))
cat(sprintf("catalogs: %d data, %d random points, %d bins\n\n",
            nrow(data), nrow(rand), length(bins) - 1))

step <- max(1L, n_calls %/% 10L)
rows <- list()
n_failed <- 0L
t0 <- proc.time()[["elapsed"]]
for (i in seq_len(n_calls)) {
  fail <- faults && i %% 2 == 0
  if (fail) {
    Sys.setenv(WTHETA_TEST_FAULT = fault_kinds[(i / 2) %% length(fault_kinds) + 1])
  }
  r1 <- try(pair_counts(data, bins = bins, backend = backend, threads = threads),
            silent = TRUE)
  r2 <- try(wtheta(data, rand, bins = bins, backend = backend, threads = threads),
            silent = TRUE)
  if (fail) {
    Sys.unsetenv("WTHETA_TEST_FAULT")
    n_failed <- n_failed + inherits(r1, "try-error") + inherits(r2, "try-error")
  } else if (inherits(r1, "try-error") || inherits(r2, "try-error")) {
    stop("a call failed: ", if (inherits(r1, "try-error")) r1 else r2)
  }
  rm(r1, r2)
  if (i %% step == 0 || i == 1) {
    invisible(gc())
    rows[[length(rows) + 1]] <- data.frame(
      calls = i, rss_mb = round(rss_mb(), 1), gpu_used_mb = gpu_mb(),
      seconds = round(proc.time()[["elapsed"]] - t0, 1))
  }
}
tab <- do.call(rbind, rows)
print(tab, row.names = FALSE)
base <- tab[tab$calls == step, ]
last <- tab[nrow(tab), ]
rss_growth <- last$rss_mb - base$rss_mb
gpu_growth <- last$gpu_used_mb - base$gpu_used_mb
cat(sprintf("\nVmRSS growth from call %d to %d: %+.1f MB (limit %g MB)\n",
            step, n_calls, rss_growth, rss_limit))
if (backend == "cuda") {
  cat(sprintf("GPU used memory growth: %+.0f MiB (limit %g MiB)\n", gpu_growth,
              gpu_limit))
}
if (faults) cat(sprintf("failed calls (injected): %d\n", n_failed))
ok <- rss_growth <= rss_limit && (backend != "cuda" || gpu_growth <= gpu_limit) &&
  (!faults || n_failed >= n_calls %/% 2)
cat(if (ok) "flat: OK\n" else "GROWTH ABOVE THE LIMIT (or faults not seen)\n")
quit(status = if (ok) 0 else 1)
