# A survey's analysis (issue 33): what jackknife errors over many patches
# and several samples with one covariance cost against the bare w(theta).
#
#   Rscript bench/survey.R [NxM ...] [--backend=cpu] [--devices=0,1]
#     [--threads=2] [--reps=3]
#     [--calls=plain,jk20,jk100,multi,multi_jk100] [--prepared]
#     [--order=rounds|calls] [--csv=FILE]
#
# NxM: N galaxies x M randoms, e.g. 2e4x1e5 (the default) 1e5x5e5; each
# size in turn. The workload:
#   - a DES-like footprint, the box ra 0..100, dec -60..5 degrees (about
#     5,460 deg^2);
#   - galaxies: simulate_catalog(N, ra_range = c(0, 100), dec_range =
#     c(-60, 5), sigma = 0.1, seed = 1); randoms: random_catalog(M) on the
#     same box, seed = 2;
#   - 20 log bins from 2.5 to 250 arcmin;
#   - patches: sky_patches(randoms, n_patches = 20 or 100, seed = 1), made
#     once beforehand and passed in (k-means is not timed);
#   - six samples, the galaxies dealt round-robin (row i to sample
#     (i - 1) %% 6 + 1), for wtheta_multi(), sharing the randoms.
# The calls (--calls, in this order; default all):
#   plain        wtheta(G, R, bins, error = "none")
#   jk20         wtheta(..., error = "jackknife", patches = <20 patches>)
#   jk100        wtheta(..., error = "jackknife", patches = <100 patches>)
#   multi        wtheta_multi(<6 samples>, R, bins, error = "none")
#   multi_jk100  wtheta_multi(..., error = "jackknife", patches = <100>)
# each made as a user makes it, on data frames (as the issue measured),
# footprint check included (the default). With --prepared each call is
# also timed on catalogs made by prepare_catalog() beforehand (with the
# call's patches), as a user reusing catalogs would; those rows are marked
# "prepared" and their ratios are to the prepared plain call.
# --backend: cpu (default), cuda or auto; --devices: the GPUs (e.g. "0" or
# "0,1"; default the package's choice); --threads: CPU threads of every
# call, the footprint check and the patches (options(wtheta.threads);
# default wtheta_threads()); --reps: timed runs of each call (default 3),
# after one small untimed warm-up call (thread pool, GPU context). With
# --order=rounds (the default) the calls run in rounds, each round every
# call once in the order above (plain, jk100, multi_jk100, plain, jk100,
# ...): a machine whose speed drifts from one minute to the next then
# slows the calls of a round alike, and a ratio compares calls made side
# by side. --order=calls runs each call's runs in turn (all the plain
# ones, then all the jk100 ones, ...), as this script did up to
# 2026-11-29. Every run follows a gc().
#
# Prints for each call the minimum and median wall-clock seconds of the
# whole call (Sys.time(), to the microsecond) and its ratio to the plain
# call (min to min, median to median), then what the results record of their fastest run: the
# counts' own seconds (the sum of each pair_counts result's `elapsed`,
# that of a labelled count, shared by the counts made of it, once; so
# the rest of the call -- checks, patches' labels, w and the
# replicates, the assembly in R -- is the difference), the grid planning
# (`grid_plan_s`), on the GPU the kernel time (`gpu_ms`) and the GPU's
# idle seconds (`gpu_idle_s`), and any `timings` a count or the result
# carries, summed by name.
#
# Every run is checked, so that a broken engine cannot pass for a fast
# one: the jackknife calls' DD, DR and RR equal the plain call's in every
# bin, and each count's patch counts (patch x patch x bin, while they are
# kept as such) add up to its histogram; for wtheta_multi(), RR equals the
# plain call's, the samples' DR add up to the plain DR, and the samples' DD
# plus their cross counts D1D2 (i < j) add up to the plain DD, bin by bin;
# with both multi calls, every correlation's counts of the jackknife call
# equal those of the plain one. The plain call is run once untimed for these checks if it is
# not among --calls. A failed check stops the script (exit status 1).
#
# Writes bench/results/survey-BACKEND.csv (or --csv): one row per size,
# catalogs and call. Quick run on a small machine:
#   Rscript bench/survey.R 2e3x1e4 --threads=2 --reps=1
library(wtheta)
options(width = 200)
args <- commandArgs(trailingOnly = TRUE)
source(file.path("bench", "machine.R"))
opt <- function(name, default) bench_opt(args, name, default)
known <- c("backend", "devices", "threads", "reps", "calls", "prepared", "csv",
           "order")
flags <- grep("^--", args, value = TRUE)
bad <- flags[!sub("^--([^=]*).*", "\\1", flags) %in% known]
if (length(bad)) {
  stop("unknown option ", bad[1], "; known: ",
       paste0("--", known, collapse = ", "), call. = FALSE)
}
sizes <- grep("^--", args, value = TRUE, invert = TRUE)
if (!length(sizes)) sizes <- "2e4x1e5"
sizes <- lapply(sizes, function(s) {
  v <- suppressWarnings(as.numeric(strsplit(s, "x", fixed = TRUE)[[1]]))
  if (length(v) != 2 || anyNA(v) || any(v < 1) || any(v != round(v))) {
    stop("a size is N galaxies x M randoms, such as 2e4x1e5, not '", s, "'",
         call. = FALSE)
  }
  v
})
backend <- opt("backend", "cpu")
if (!backend %in% c("cpu", "cuda", "auto")) {
  stop("--backend is cpu, cuda or auto, not '", backend, "'", call. = FALSE)
}
whole <- function(x, what) {
  v <- suppressWarnings(as.numeric(x))
  if (!length(v) || anyNA(v) || any(v < 0) || any(v != round(v))) {
    stop(what, " takes whole numbers, not '", paste(x, collapse = ","), "'",
         call. = FALSE)
  }
  as.integer(v)
}
devices <- opt("devices", NULL)
if (!is.null(devices)) devices <- whole(strsplit(devices, ",")[[1]], "--devices")
threads <- whole(opt("threads", wtheta_threads()), "--threads")
if (threads < 1) stop("--threads is at least 1, not 0", call. = FALSE)
options(wtheta.threads = threads, wtheta.progress = FALSE)
reps <- whole(opt("reps", 3), "--reps")
if (reps < 1) stop("--reps is at least 1, not 0", call. = FALSE)
all_calls <- c("plain", "jk20", "jk100", "multi", "multi_jk100")
calls <- strsplit(opt("calls", paste(all_calls, collapse = ",")), ",")[[1]]
if (!all(calls %in% all_calls)) {
  stop("--calls names calls among ", paste(all_calls, collapse = ", "),
       ", not '", paste(setdiff(calls, all_calls), collapse = ","), "'",
       call. = FALSE)
}
calls <- all_calls[all_calls %in% calls]
prepared <- isTRUE(opt("prepared", FALSE))
order <- opt("order", "rounds")
if (!order %in% c("rounds", "calls")) {
  stop("--order is rounds or calls, not '", order, "'", call. = FALSE)
}
csv <- opt("csv", file.path("bench", "results",
                            paste0("survey-", backend, ".csv")))

# the machine
cat(bench_machine(backend, devices),
    sprintf(", %d threads, %d runs each\n", threads, reps), sep = "")

bins <- theta_bins(2.5, 250, n = 20, log = TRUE, units = "arcmin")
box <- list(ra_range = c(0, 100), dec_range = c(-60, 5))
common <- list(bins = bins, backend = backend, devices = devices,
               threads = threads, progress = FALSE)

# the counts' own timings, summed over the counts of a result
count_timings <- function(x) {
  pcs <- attr(x, "pair_counts")
  # counts made of one labelled count (wtheta_multi() on the CPU) share
  # its elapsed, grid_plan_s and pairs_skipped: that count once
  lab <- vapply(pcs, function(p) isTRUE(p$labelled), TRUE)
  key <- vapply(pcs, function(p) paste(p$elapsed, p$grid_plan_s), "")
  pcs <- pcs[!lab | !duplicated(ifelse(lab, key, seq_along(key)))]
  one <- function(field) {
    v <- unlist(lapply(pcs, function(p) p[[field]]))
    if (is.null(v) || all(is.na(v))) NA_real_ else sum(v, na.rm = TRUE)
  }
  t <- c(counts_s = one("elapsed"), grid_plan_s = one("grid_plan_s"),
         gpu_ms = one("gpu_ms"), gpu_idle_s = one("gpu_idle_s"))
  # `timings` (a named numeric or list), of the counts or of the result
  extra <- unlist(c(lapply(pcs, function(p) p[["timings"]]),
                    list(attr(x, "timings"))))
  if (length(extra) && !is.null(names(extra))) {
    nm <- sub("^.*\\.", "", names(extra))
    extra <- tapply(as.numeric(extra), nm, sum)
    t <- c(t, stats::setNames(as.numeric(extra), paste0("timings.", names(extra))))
  }
  t
}

# the checks: counts of a call against the plain call's
same <- function(a, b) length(a) == length(b) && all(a == b)
fail <- function(...) stop(..., call. = FALSE)
check_patch_sums <- function(x, label) {
  for (nm in names(attr(x, "pair_counts"))) {
    p <- attr(x, "pair_counts")[[nm]]
    pc <- p$patch_counts
    if (is.null(pc) || length(dim(pc)) != 3L) next
    # an auto count stores a pair of different patches in [a, b] and [b, a]
    tot <- apply(pc, 3L, function(m) {
      if (identical(p$type, "auto")) (sum(m) + sum(diag(m))) / 2 else sum(m)
    })
    if (!same(tot, p$counts)) {
      fail(label, ": the patch counts of ", nm, " do not add up to its ",
           "histogram (bins ", paste(which(tot != p$counts), collapse = ", "),
           ")")
    }
  }
}
check_single <- function(x, ref, label) {
  for (k in c("DD", "DR", "RR")) {
    if (!same(x[[k]], ref[[k]])) {
      fail(label, ": ", k, " differs from the plain call's in bins ",
           paste(which(x[[k]] != ref[[k]]), collapse = ", "))
    }
  }
  check_patch_sums(x, label)
}
check_multi <- function(x, ref, label, samples) {
  e <- attr(x, "entries")
  key <- function(i, j) paste0(samples[i], "-", samples[j])
  k <- length(samples)
  rr <- e[[key(1, 1)]]$RR
  dr <- Reduce(`+`, lapply(seq_len(k), function(i) e[[key(i, i)]]$DR))
  dd <- Reduce(`+`, lapply(seq_len(k), function(i) e[[key(i, i)]]$DD))
  for (i in seq_len(k - 1)) for (j in (i + 1):k) dd <- dd + e[[key(i, j)]]$D1D2
  for (s in list(list("RR", rr), list("DR summed over the samples", dr),
                 list("DD of the samples plus their D1D2", dd))) {
    plain <- ref[[substr(s[[1]], 1, 2)]]
    if (!same(s[[2]], plain)) {
      fail(label, ": ", s[[1]], " differs from the plain call's in bins ",
           paste(which(s[[2]] != plain), collapse = ", "))
    }
  }
  check_patch_sums(x, label)
}
check_multi_pair <- function(x, y, label) {
  ex <- attr(x, "entries")
  ey <- attr(y, "entries")
  for (nm in names(ey)) {
    cols <- intersect(c("DD", "DR", "RR", "D1D2", "D1R2", "R1D2", "R1R2"),
                      names(ey[[nm]]))
    for (cl in cols) if (!same(ex[[nm]][[cl]], ey[[nm]][[cl]])) {
      fail(label, ": ", nm, " ", cl, " differs from the plain ",
           "wtheta_multi()'s")
    }
  }
}

rows <- list()
for (sz in sizes) {
  n <- sz[1]
  m <- sz[2]
  t0 <- proc.time()[["elapsed"]]
  G <- simulate_catalog(n, ra_range = box$ra_range, dec_range = box$dec_range,
                        sigma = 0.1, seed = 1)
  R <- random_catalog(m, ra_range = box$ra_range, dec_range = box$dec_range,
                      seed = 2)
  patches <- list(jk20 = sky_patches(R, n_patches = 20, seed = 1),
                  jk100 = sky_patches(R, n_patches = 100, seed = 1))
  samples <- paste0("s", 1:6)
  S <- split(G, factor(samples[(seq_len(nrow(G)) - 1L) %% 6L + 1L],
                       levels = samples))
  S <- lapply(S, function(s) { rownames(s) <- NULL; s })
  cat(sprintf(paste0("\n%s galaxies x %s randoms, 20 log bins 2.5-250 ",
                     "arcmin (catalogs and patches made in %.1f s)\n"),
              format(n, big.mark = ","), format(m, big.mark = ","),
              proc.time()[["elapsed"]] - t0))
  # each call on data frames, and with --prepared on prepared catalogs
  call_of <- function(name, prep) {
    p <- switch(name, jk20 = patches$jk20,
                jk100 = , multi_jk100 = patches$jk100, NULL)
    err <- if (is.null(p)) "none" else "jackknife"
    if (prep) {
      pr <- function(x) prepare_catalog(x, patches = p, threads = threads)
      if (startsWith(name, "multi")) {
        d <- lapply(S, pr)
        r <- pr(R)
        function() do.call(wtheta_multi, c(list(d, r, error = err), common))
      } else {
        d <- pr(G)
        r <- pr(R)
        function() do.call(wtheta, c(list(d, r, error = err), common))
      }
    } else if (startsWith(name, "multi")) {
      function() do.call(wtheta_multi, c(list(S, R, error = err,
                                              patches = p), common))
    } else {
      function() do.call(wtheta, c(list(G, R, error = err, patches = p),
                                   common))
    }
  }
  # warm-up: thread pool, GPU context (small catalogs leave bins empty:
  # warnings muted)
  invisible(suppressWarnings(do.call(wtheta, c(list(
    G[seq_len(min(n, 1000)), ], R[seq_len(min(m, 5000)), ],
    error = "none"), common))))
  ref <- NULL
  if (!"plain" %in% calls) ref <- suppressWarnings(call_of("plain", FALSE)())
  for (prep in if (prepared) c(FALSE, TRUE) else FALSE) {
    cats <- if (prep) "prepared" else "data.frame"
    multi_ref <- NULL
    fs <- lapply(stats::setNames(calls, calls), call_of, prep = prep)
    secs <- matrix(NA_real_, reps, length(calls), dimnames = list(NULL, calls))
    best <- list()
    # the runs in rounds (--order=rounds) or call by call
    runs <- if (order == "rounds") {
      expand.grid(name = calls, k = seq_len(reps), stringsAsFactors = FALSE)
    } else {
      expand.grid(k = seq_len(reps), name = calls, stringsAsFactors = FALSE)
    }
    for (i in seq_len(nrow(runs))) {
      k <- runs$k[i]
      name <- runs$name[i]
      gc()
      t0 <- as.numeric(Sys.time())
      x <- suppressWarnings(fs[[name]]())
      secs[k, name] <- as.numeric(Sys.time()) - t0
      label <- sprintf("%s (%s, run %d)", name, cats, k)
      if (name == "plain") {
        if (is.null(ref)) ref <- x else check_single(x, ref, label)
      } else if (startsWith(name, "jk")) {
        check_single(x, ref, label)
      } else {
        check_multi(x, ref, label, samples)
        if (name == "multi" && is.null(multi_ref)) multi_ref <- x
        if (name == "multi_jk100" && !is.null(multi_ref)) {
          check_multi_pair(x, multi_ref, label)
        }
      }
      if (secs[k, name] == min(secs[seq_len(k), name])) best[[name]] <- x
    }
    plain_t <- c(min = NA_real_, median = NA_real_)
    if ("plain" %in% calls) {
      plain_t <- c(min = min(secs[, "plain"]),
                   median = stats::median(secs[, "plain"]))
    }
    for (name in calls) {
      tm <- c(min = min(secs[, name]), median = stats::median(secs[, name]))
      tt <- count_timings(best[[name]])
      cat(sprintf("  %-11s %-10s min %8.3f s  median %8.3f s  %5.2fx plain\n",
                  name, cats, tm[["min"]], tm[["median"]],
                  tm[["min"]] / plain_t[["min"]]))
      rows[[length(rows) + 1]] <- data.frame(
        n_galaxies = n, n_randoms = m, catalogs = cats, call = name,
        backend = attr(best[[name]], "backend")[1], threads = threads,
        reps = reps, min_s = tm[["min"]], median_s = tm[["median"]],
        ratio_min = tm[["min"]] / plain_t[["min"]],
        ratio_median = tm[["median"]] / plain_t[["median"]],
        t(tt), check.names = FALSE)
    }
  }
}
res <- do.call(rbind, lapply(rows, function(r) {
  miss <- setdiff(unique(unlist(lapply(rows, names))), names(r))
  r[miss] <- NA_real_
  r
}))
res <- res[unique(unlist(lapply(rows, names)))]
cat("\nseconds of the whole call (min, median of the runs), its ratio to the",
    "plain call, and\nthe fastest run's counts (sum of their elapsed), grid",
    "planning, GPU kernels and idle time:\n")
show <- res
show$n_galaxies <- format(show$n_galaxies, scientific = TRUE)
show$n_randoms <- format(show$n_randoms, scientific = TRUE)
print(show[setdiff(names(show), c("threads", "reps"))], row.names = FALSE,
      digits = 3)
cat("checks passed: jackknife counts equal the plain call's, patch counts",
    "add up, the samples' counts add up to the plain call's\n")
dir.create(dirname(csv), showWarnings = FALSE, recursive = TRUE)
utils::write.csv(res, csv, row.names = FALSE)
cat("written:", csv, "\n")
