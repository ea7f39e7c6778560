# Counting across many processes or machines with the future framework:
# the catalogs are cut into blocks, each pair of blocks is an independent
# task whose histograms add up, and the user's future::plan() decides where
# the tasks run (sequential, multisession, a PSOCK cluster over ssh,
# batchtools on a scheduler). Each worker counts with its own best backend.

# the `distribute` argument: 0 (count here) or a number of blocks per
# catalog
distribute_blocks <- function(distribute) {
  if (isFALSE(distribute) || is.null(distribute)) return(0L)
  if (!requireNamespace("future.apply", quietly = TRUE)) {
    stop("`distribute` needs the future.apply package (Debian: ",
         "r-cran-future.apply); install it or use distribute = FALSE.",
         call. = FALSE)
  }
  if (isTRUE(distribute)) {
    # a few tasks per worker, so that uneven workers even out
    return(max(1L, as.integer(ceiling(sqrt(2 * future::nbrOfWorkers())))))
  }
  check_count(distribute, "distribute")
  as.integer(distribute)
}

# Where a call counts: `run` from choose_backend(), or NULL when block pairs
# go to future workers, which resolve `backend` and `threads` (as the user
# gave them) themselves
plan_counting <- function(backend, devices, threads, distribute) {
  n_blocks <- distribute_blocks(distribute)
  if (n_blocks == 0L) {
    return(list(run = choose_backend(backend, devices), n_blocks = 0L))
  }
  if (!is.null(devices)) {
    stop("`devices` cannot be combined with `distribute`: each worker ",
         "uses its own GPUs.", call. = FALSE)
  }
  match_choice(backend, c("auto", "cpu", "cuda"), "backend")
  list(run = NULL, n_blocks = n_blocks, backend = backend, threads = threads)
}

# counts unit vectors a, b (NULL for auto) as plan_counting() decided: here
# with count_pairs(), or through the future plan
count_planned <- function(how, a, b, edges, self_pairs, threads, progress,
                          wa, wb, pa, pb, n_patches) {
  if (is.null(how$run)) {
    return(count_pairs_future(a, b, edges, self_pairs, how$backend,
                              how$threads, wa, wb, pa, pb, n_patches,
                              how$n_blocks, progress))
  }
  count_pairs(a, b, edges, self_pairs, how$run, threads, progress, wa, wb,
              pa, pb, n_patches)
}

# like count_pairs(), with the block pairs run as futures; backend and
# threads are the user's arguments, resolved on each worker
count_pairs_future <- function(a, b, edges, self_pairs, backend, threads,
                               wa, wb, pa, pb, n_patches, n_blocks,
                               progress = FALSE) {
  start <- proc.time()[["elapsed"]]
  is_auto <- is.null(b)
  cut <- function(n) {
    k <- min(n_blocks, n)
    split(seq_len(n), rep(seq_len(k), diff(round(seq(0, n, length.out = k + 1)))))
  }
  ba <- cut(nrow(a))
  bb <- if (is_auto) ba else cut(nrow(b))
  jobs <- expand.grid(i = seq_along(ba), j = seq_along(bb))
  if (is_auto) jobs <- jobs[jobs$i <= jobs$j, ]
  tasks <- lapply(seq_len(nrow(jobs)), function(k) {
    ia <- ba[[jobs$i[k]]]
    ib <- bb[[jobs$j[k]]]
    diagonal <- is_auto && jobs$i[k] == jobs$j[k]
    y <- if (is_auto) a else b
    wy <- if (is_auto) wa else wb
    py <- if (is_auto) pa else pb
    list(a = a[ia, , drop = FALSE], b = if (!diagonal) y[ib, , drop = FALSE],
         wa = wa[ia], wb = if (!diagonal) wy[ib], pa = pa[ia],
         pb = if (!diagonal) py[ib], diagonal = diagonal,
         self_pairs = diagonal && self_pairs, edges = edges,
         backend = backend, threads = threads, n_patches = n_patches)
  })
  # a progressor (progressr) travels to the workers, each block advancing
  # it by its share; progressr relays the updates to this session
  if (is.function(progress)) {
    for (k in seq_along(tasks)) {
      tasks[[k]]$progress <- progress
      tasks[[k]]$progress_share <- 1 / length(tasks)
    }
  }
  parts <- future.apply::future_lapply(tasks, count_block, future.seed = FALSE,
                                       future.packages = "wtheta")
  out <- merge_counts(parts, is_auto, self_pairs)
  n1 <- as.double(nrow(a))
  n2 <- if (is_auto) n1 else as.double(nrow(b))
  out$n1 <- n1
  out$n2 <- n2
  out$type <- if (is_auto) "auto" else "cross"
  out$self_pairs <- self_pairs
  out$n_pairs <- pair_norm(n1, n2, is_auto, self_pairs)
  out <- count_totals(out, wa, wb, pa, pb, n_patches, is_auto, self_pairs)
  backends <- unique(vapply(parts, `[[`, "", "backend"))
  out$backend <- paste(sort(backends), collapse = "+")
  out$devices <- sort(unique(unlist(lapply(parts, `[[`, "devices"))))
  out$threads <- if (identical(backends, "cpu"))
    max(vapply(parts, function(p) as.integer(p$threads), 0L)) else NA_integer_
  out$distributed <- list(tasks = length(parts),
                          workers = length(unique(vapply(parts, `[[`, 0, "pid"))),
                          plan = plan_name(future::plan()))
  out$elapsed <- proc.time()[["elapsed"]] - start
  new_pair_counts(out)
}

# adds up the pair_counts of block pairs. For an auto count the blocks
# off the diagonal are cross counts between two blocks of one catalog: with
# self_pairs (ordered pairs) they count twice, and their patch arrays add
# to both [a, b] and [b, a].
merge_counts <- function(parts, is_auto, self_pairs) {
  first <- parts[[1L]]
  out <- list(edges = first$edges, theta_lo = first$theta_lo,
              theta_hi = first$theta_hi)
  add <- function(field, mirror = FALSE) {
    vals <- lapply(parts, function(p) {
      v <- p[[field]]
      if (is.null(v)) return(NULL)
      off <- is_auto && !p$diagonal
      if (off && mirror) {
        for (k in seq_len(dim(v)[3L])) {
          m <- v[, , k]
          v[, , k] <- m + t(m) - diag(diag(m), nrow(m))
        }
      }
      if (off && self_pairs) v <- 2 * v
      v
    })
    if (is.null(vals[[1L]])) return(NULL)
    Reduce(`+`, vals)
  }
  for (f in c("counts", "n_below", "n_above", "weighted", "weighted_below",
              "weighted_above")) {
    out[[f]] <- add(f)
  }
  out$n_outside <- out$n_below + out$n_above
  out$patch_counts <- add("patch_counts", mirror = TRUE)
  out$patch_weighted <- add("patch_weighted", mirror = TRUE)
  out$gpu_ms <- sum(vapply(parts, function(p) p$gpu_ms, 0), na.rm = TRUE)
  if (all(vapply(parts, function(p) is.na(p$gpu_ms), TRUE))) {
    out$gpu_ms <- NA_real_
  }
  out$pairs_skipped <- sum(vapply(parts, `[[`, 0, "pairs_skipped"))
  out$grid_plan_s <- sum(vapply(parts, `[[`, 0, "grid_plan_s"))
  out
}

# one block pair, on a worker: its own backend choice and thread count
count_block <- function(t) {
  run <- choose_backend(t$backend, NULL)
  threads <- threads_or_default(t$threads)
  pc <- count_pairs(t$a, t$b, t$edges, t$self_pairs, run, threads,
                    if (is.null(t$progress)) FALSE else t$progress,
                    t$wa, t$wb, t$pa, t$pb, t$n_patches,
                    progress_share = if (is.null(t$progress_share)) 1 else
                      t$progress_share)
  pc$pid <- Sys.getpid()
  pc$diagonal <- t$diagonal
  pc
}

# the name of a plan: its first class that names a strategy
plan_name <- function(p) {
  cl <- setdiff(class(p), c("FutureStrategy", "tweaked", "function"))
  if (length(cl)) cl[1L] else "unknown"
}
