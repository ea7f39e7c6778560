# Where a warm wtheta() call spends its time besides the GPU kernels.
#   Rscript bench/host.R [DATA_DIR] [REPS] [BACKEND]
# The classic workload (the two reference catalogs, 100k x 100k, 360 bins
# of 0.25 degree, self_pairs = TRUE), REPS warm calls each (default 7),
# on BACKEND (default "cuda"; "cpu" works too, slowly):
#   - the whole call, with the footprint check (the default) and without,
#     with the counts overlapped (the default on the GPU) and not;
#   - the same with 20 jackknife patches (sky_patches(), seed 1, made once
#     beforehand and passed in, so k-means is not timed);
#   - both without the check, with catalogs made by prepare_catalog()
#     beforehand (as a user reusing catalogs would);
#   - the parts: footprint_check() (and its C cells alone), the summed
#     kernel time (CUDA events) of the three counts, and the host time of
#     the counts (their elapsed time less their kernel time), which the GPU
#     waits on;
#   - the stages of the call, plain and jackknife, each with and without
#     the footprint check: the mean milliseconds per call in each step of
#     wtheta() (the package's own functions, timed by wrappers put into its
#     namespace for this script only), the counts split into kernels and
#     host, and R's garbage collection, which any stage may set off: its
#     elapsed time (gc.time()[3]) and its CPU time (gc.time()[1], user
#     CPU of the whole process while R collected: OpenMP threads still
#     spinning after a parallel region count in it, up to once per
#     thread, so on a 16-core host it can read many times the elapsed
#     time; the stages above include only the elapsed), and the minor page
#     faults per call (Linux): pages the call touched for the first time.
#     R frees its large vectors at garbage collection and glibc then gives
#     the top of the heap back to the system, so the next calls' vectors
#     land on fresh pages again; on this project's virtual machines a
#     fault cost 10-15 us (a 2.4 MB vector of unit vectors, 586 pages,
#     took 6-9 ms instead of 1.6). Running the script with
#     MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824
#     (glibc keeps the memory) shows the calls without them.
# Then an Rprof profile of the jackknife call, top entries by total time.
# Minimum and median of REPS in milliseconds, with the machine named.
library(wtheta)
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args) >= 1) args[1] else file.path("..", "shared", "data")
reps <- if (length(args) >= 2) as.integer(args[2]) else 7L
backend <- if (length(args) >= 3) args[3] else "cuda"

cpu <- sub(".*: ", "", grep("^model name", readLines("/proc/cpuinfo"),
                            value = TRUE)[1])
be <- wtheta_backends()
gpu <- if (backend == "cuda") be$name[be$backend == "cuda"][1] else "none"
cat(sprintf("host: %s (%d cores); GPU: %s; wtheta %s; %d warm runs\n", cpu,
            parallel::detectCores(), gpu, packageVersion("wtheta"), reps))

D <- read_catalog(file.path(dir, "data_100k_arcmin.txt"), units = "arcmin")
R <- read_catalog(file.path(dir, "flat_100k_arcmin.txt"), units = "arcmin")
b <- theta_bins(0, 90, width = 0.25)
P <- sky_patches(R, 20, seed = 1)

ms <- function(expr) {
  f <- substitute(expr)
  e <- parent.frame()
  eval(f, e)                                           # warm-up
  x <- vapply(seq_len(reps), function(i) {
    t0 <- as.numeric(Sys.time())                       # microseconds
    suppressWarnings(eval(f, e))
    (as.numeric(Sys.time()) - t0) * 1000
  }, 0)
  c(min = min(x), median = stats::median(x))
}
row <- function(what, v) {
  cat(sprintf("%-52s %9.2f %9.2f\n", what, v[["min"]], v[["median"]]))
}
call <- function(...) suppressWarnings(
  wtheta(D, R, b, self_pairs = TRUE, backend = backend, ...))

# prepared catalogs (prepare_catalog(), made once beforehand, as a user
# reusing catalogs would): no checks, unit vectors or grouping per call
Dp <- prepare_catalog(D)
Rp <- prepare_catalog(R)
Dq <- prepare_catalog(D, patches = P)
Rq <- prepare_catalog(R, patches = P)
pcall <- function(d, r, ...) suppressWarnings(
  wtheta(d, r, b, self_pairs = TRUE, backend = backend, ...))
# the whole calls with the counts overlapped (the default on the GPU) and
# one after the other (options(wtheta.overlap = FALSE)), in one run
for (ov in c(FALSE, TRUE)) {
  options(wtheta.overlap = ov)
  cat(sprintf("%-52s %9s %9s\n", paste0("ms, overlapped counts ",
                                        if (ov) "on" else "off"),
              "min", "median"))
  row("whole wtheta() call", ms(call()))
  row("whole call, check_footprint = FALSE",
      ms(call(check_footprint = FALSE)))
  row("whole call, jackknife (20 patches)",
      ms(call(error = "jackknife", patches = P)))
  row("whole call, jackknife, check_footprint = FALSE",
      ms(call(error = "jackknife", patches = P, check_footprint = FALSE)))
  row("whole call, prepared catalogs, check_footprint = FALSE",
      ms(pcall(Dp, Rp, check_footprint = FALSE)))
  row("whole call, prepared, jackknife, check_footprint = FALSE",
      ms(pcall(Dq, Rq, error = "jackknife", check_footprint = FALSE)))
}
# the parts below: counts one after the other, so that each count's
# kernel time (CUDA events) is its own
options(wtheta.overlap = FALSE)
row("footprint_check(D, R)", ms(footprint_check(D, R)))
row("  its cells in C (src/sky/cells.c)",
    ms(.Call(wtheta:::C_footprint_cells, D$ra, D$dec, R$ra, R$dec, 1,
             wtheta_threads())))

# the counts' kernel time and their host time (elapsed less kernels)
parts <- function(...) {
  w <- call(check_footprint = FALSE, ...)
  pcs <- attr(w, "pair_counts")
  k <- sum(vapply(pcs, `[[`, 0, "gpu_ms"))
  e <- sum(vapply(pcs, `[[`, 0, "elapsed")) * 1000
  c(kernel = k, count_host = e - k)
}
for (jk in c(FALSE, TRUE)) {
  x <- replicate(reps, if (jk) parts(error = "jackknife", patches = P) else
    parts())
  lab <- if (jk) ", jackknife" else ""
  row(paste0("kernels (3 counts)", lab),
      c(min = min(x["kernel", ]), median = stats::median(x["kernel", ])))
  row(paste0("count host time (elapsed - kernels)", lab),
      c(min = min(x["count_host", ]),
        median = stats::median(x["count_host", ])))
}

# the stages of wtheta() (R/wtheta.R), each function wrapped by a timer
invisible(gc.time(TRUE))                        # gc.time() counts from here
stage_names <- c(checked_catalogs = "checks of the catalogs",
                 footprint_checks = "footprint check",
                 call_patches = "patches of the call",
                 call_catalogs = "unit vectors (and patches) of the catalogs",
                 run_counts = "the counts (R, host and kernels)",
                 wtheta_result = "w, errors and the result",
                 replicate_w = "  of which jackknife replicates of w",
                 replicate_cov = "  of which their covariance")
spent <- new.env()
for (nm in names(stage_names)) local({
  f <- get(nm, asNamespace("wtheta"))
  nm <- nm
  utils::assignInNamespace(nm, function(...) {
    t0 <- as.numeric(Sys.time())                   # microseconds
    on.exit(spent[[nm]] <- spent[[nm]] + as.numeric(Sys.time()) - t0)
    f(...)
  }, ns = "wtheta")
})
# minor page faults of this process so far (Linux; NA elsewhere)
minor_faults <- function() {
  st <- tryCatch(readLines("/proc/self/stat", warn = FALSE),
                 error = function(e) "")
  # the fields after the command name, which ends with ")"
  f <- strsplit(sub(".*\\) ", "", st), " ")[[1L]]
  if (length(f) >= 8L) as.numeric(f[8L]) else NA_real_
}
stages <- function(label, ...) {
  for (nm in names(stage_names)) spent[[nm]] <- 0
  kern <- 0
  f0 <- minor_faults()
  g0 <- gc.time()
  t0 <- as.numeric(Sys.time())
  for (i in seq_len(reps)) {
    w <- call(...)
    kern <- kern + sum(vapply(attr(w, "pair_counts"), `[[`, 0, "gpu_ms"))
  }
  total <- (as.numeric(Sys.time()) - t0) * 1000 / reps
  cat(sprintf("\nstages of %s: %.2f ms per call (mean of %d)\n", label,
              total, reps))
  for (nm in names(stage_names)) {
    cat(sprintf("  %-50s %9.2f\n", stage_names[[nm]],
                spent[[nm]] * 1000 / reps))
  }
  cat(sprintf("  %-50s %9.2f\n", "  of the counts, kernels (CUDA events)",
              kern / reps))
  g <- (gc.time() - g0) * 1000 / reps
  cat(sprintf("  %-50s %9.2f\n", "garbage collection, in any stage (elapsed)",
              g[3L]))
  cat(sprintf("  %-50s %9.2f\n", "  its CPU time (user, all threads)", g[1L]))
  cat(sprintf("  %-50s %9.0f\n", "minor page faults per call",
              (minor_faults() - f0) / reps))
}
stages("the plain call")
stages("the plain call, check_footprint = FALSE", check_footprint = FALSE)
stages("the jackknife call", error = "jackknife", patches = P)
stages("the jackknife call, check_footprint = FALSE", error = "jackknife",
       patches = P, check_footprint = FALSE)
# the same with the counts overlapped (their kernel times then overlap too,
# so their sum is more than the GPU's busy time)
options(wtheta.overlap = TRUE)
stages("the plain call, check_footprint = FALSE, overlapped",
       check_footprint = FALSE)
stages("the jackknife call, check_footprint = FALSE, overlapped",
       error = "jackknife", patches = P, check_footprint = FALSE)

prof <- tempfile()
Rprof(prof, interval = 0.002)
for (i in seq_len(reps)) call(error = "jackknife", patches = P,
                             check_footprint = FALSE)
Rprof(NULL)
cat("\nRprof, jackknife call without the footprint check, by total time:\n")
print(utils::head(summaryRprof(prof)$by.total, 25))
