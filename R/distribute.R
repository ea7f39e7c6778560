# Counting across many processes or machines with the future framework:
# the catalogs are cut into blocks, each pair of blocks is an independent
# task whose histograms add up, and the user's future::plan() decides where
# the tasks run (sequential, multisession, a PSOCK cluster over ssh,
# batchtools on a scheduler). Each worker counts with its own best backend.

# the `distribute` argument: 0 (count here) or a number of blocks per
# catalog
distribute_blocks <- function(distribute) {
  if (isFALSE(distribute) || is.null(distribute)) return(0L)
  if (!requireNamespace("future", quietly = TRUE)) {
    stop("`distribute` needs the future package (Debian: r-cran-future); ",
         "install it or use distribute = FALSE.", call. = FALSE)
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
# gave them) themselves. `checkpoint`, `retries` and `timeout` apply to
# distributed counts only. `mean_theta` (checked by the caller) asks every
# count of the call for its angle sums.
plan_counting <- function(backend, devices, threads, distribute,
                          checkpoint = NULL, retries = 1, timeout = NULL,
                          mean_theta = FALSE) {
  n_blocks <- distribute_blocks(distribute)
  check_block_options(checkpoint, retries, timeout)
  if (n_blocks == 0L) {
    if (!is.null(checkpoint)) {
      stop("`checkpoint` saves the blocks of a distributed count; it needs ",
           "`distribute` (TRUE or a number of blocks).", call. = FALSE)
    }
    return(list(run = choose_backend(backend, devices), n_blocks = 0L,
                mean_theta = mean_theta))
  }
  if (!is.null(devices)) {
    stop("`devices` cannot be combined with `distribute`: each worker ",
         "uses its own GPUs.", call. = FALSE)
  }
  match_choice(backend, c("auto", "cpu", "cuda"), "backend")
  list(run = NULL, n_blocks = n_blocks, auto_blocks = isTRUE(distribute),
       backend = backend, threads = threads, checkpoint = checkpoint,
       retries = as.integer(retries), timeout = timeout,
       mean_theta = mean_theta)
}

check_block_options <- function(checkpoint, retries, timeout) {
  if (!is.null(checkpoint) &&
      (!is.character(checkpoint) || length(checkpoint) != 1L ||
       is.na(checkpoint) || !nzchar(checkpoint))) {
    stop("`checkpoint` must be NULL or a directory name (one string), not ",
         describe(checkpoint), ".", call. = FALSE)
  }
  check_number(retries, "retries")
  if (retries < 0 || retries != round(retries)) {
    stop("`retries` must be a whole number >= 0, not ", describe(retries),
         ".", call. = FALSE)
  }
  if (!is.null(timeout)) {
    check_number(timeout, "timeout")
    if (timeout <= 0) {
      stop("`timeout` must be NULL or a number of seconds > 0, not ",
           describe(timeout), ".", call. = FALSE)
    }
  }
}

# counts unit vectors a, b (NULL for auto) as plan_counting() decided: here
# with count_pairs(), or through the future plan. `label` names the count
# in a checkpoint ("data-random", ...); how$mean_theta asks for the mean
# separations. ha, hb: catalog handles of a and b
# (see new_catalog_handle()), or NULL; a distributed count has no use for
# them (each worker gets blocks, not catalogs).
count_planned <- function(how, a, b, edges, self_pairs, threads, progress,
                          wa, wb, pa, pb, n_patches, label = "pairs",
                          ha = NULL, hb = NULL, defer = FALSE, ba = NULL,
                          bb = NULL) {
  # PIP (R/pip.R): one-sided words folded into their catalog's weights
  # (a catalog of its own, within the handle), the engine's settings
  pip <- NULL
  if (!is.null(how$pip)) {
    pip <- pip_resolve(how$pip, wa, wb, ba, bb, is.null(b))
    wa <- pip$wa
    wb <- pip$wb
    ba <- pip$ba
    bb <- pip$bb
    if (pip$fold_a) ha <- pip_handle(ha, pip$key)
    if (pip$fold_b) hb <- pip_handle(hb, pip$key)
  }
  if (is.null(how$run)) {
    pc <- count_pairs_future(a, b, edges, self_pairs, how, wa, wb, pa, pb,
                             n_patches, label, progress, ba, bb, pip)
    if (isTRUE(how$margins)) pc <- margins_only(pc)
    return(if (defer) deferred(function() pc) else pc)
  }
  count_pairs(a, b, edges, self_pairs, how$run, threads, progress, wa, wb,
              pa, pb, n_patches, ha = ha, hb = hb,
              mean_theta = isTRUE(how$mean_theta), defer = defer, ba = ba,
              bb = bb, pip = pip, margins = isTRUE(how$margins),
              grid_scale = how$grid_scale %||% 1)
}

# a count with patch arrays (merged from a distributed count's blocks)
# that keeps only their margins instead, as a local count for a jackknife
# does (count_pairs(margins = TRUE)): the same numbers
margins_only <- function(pc) {
  if (is.null(pc$patch_counts)) return(pc)
  pc$patch_margins <- .Call(C_patch_margins, pc$patch_counts)
  pc$patch_counts <- NULL
  if (!is.null(pc$patch_weighted)) {
    pc$patch_margins_weighted <- .Call(C_patch_margins, pc$patch_weighted)
    pc$patch_weighted <- NULL
  }
  pc
}

# like count_pairs(), with the block pairs run as futures, one future per
# block pair; backend and threads are the user's arguments, resolved on
# each worker. Each task carries only its two blocks' points, weights and
# patch numbers. Finished blocks go to the checkpoint as they arrive.
count_pairs_future <- function(a, b, edges, self_pairs, how, wa, wb, pa, pb,
                               n_patches, label, progress = TRUE,
                               bits_a = NULL, bits_b = NULL, pip = NULL) {
  start <- proc.time()[["elapsed"]]
  is_auto <- is.null(b)
  n_blocks <- how$n_blocks
  bt <- block_tasks(a, b, edges, self_pairs, how, wa, wb, pa, pb, n_patches,
                    label, bits_a = bits_a, bits_b = bits_b, pip = pip)
  jobs <- bt$jobs
  make_task <- bt$make_task
  ba <- bt$ba
  bb <- bt$bb
  files <- if (!is.null(how$checkpoint)) {
    file.path(how$checkpoint, paste0(block_name(label, jobs$i, jobs$j),
                                     ".rds"))
  }
  # what each block file must say it holds: this count's inputs, its two
  # blocks and the number of blocks per catalog
  ids <- lapply(seq_len(nrow(jobs)), function(k) {
    list(hash = how$checkpoint_hash, label = label, i = jobs$i[k],
         j = jobs$j[k], n_blocks = n_blocks)
  })
  run <- run_blocks(nrow(jobs), make_task, files, how$retries, how$timeout,
                    function(k) block_name(label, jobs$i[k], jobs$j[k]),
                    progress = !isFALSE(progress), ids = ids)
  parts <- run$parts
  out <- merge_counts(parts, is_auto, self_pairs)
  out$mean_theta <- isTRUE(how$mean_theta)
  if (out$mean_theta) out$theta_mean <- theta_means(out)
  n1 <- as.double(nrow(a))
  n2 <- if (is_auto) n1 else as.double(nrow(b))
  out$n1 <- n1
  out$n2 <- n2
  out$type <- if (is_auto) "auto" else "cross"
  out$self_pairs <- self_pairs
  out$n_pairs <- pair_norm(n1, n2, is_auto, self_pairs)
  out <- count_totals(out, wa, wb, pa, pb, n_patches, is_auto, self_pairs)
  out <- pip_result(out, pip, wa, wb, bits_a, bits_b, is_auto, self_pairs,
                    pa, pb, n_patches)
  backends <- unique(vapply(parts, `[[`, "", "backend"))
  out$backend <- paste(sort(backends), collapse = "+")
  out$devices <- sort(unique(unlist(lapply(parts, `[[`, "devices"))))
  out$threads <- if (identical(backends, "cpu"))
    max(vapply(parts, function(p) as.integer(p$threads), 0L)) else NA_integer_
  counted <- parts[!run$reused]
  sizes <- lengths(ba)
  sizes_b <- lengths(bb)
  per_task <- sizes[jobs$i] + ifelse(is_auto & jobs$i == jobs$j, 0,
                                     sizes_b[jobs$j])
  bytes_point <- 24 + 8 * (!is.null(wa)) + 4 * (!is.null(pa)) +
    4 * (if (!is.null(bits_a)) ncol(bits_a) else 0)
  out$distributed <- list(
    tasks = length(parts),
    blocks = n_blocks,
    workers = length(unique(vapply(counted, `[[`, 0, "pid"))),
    plan = plan_name(future::plan()),
    reused = sum(run$reused),
    retried = run$retried,
    faults = run$faults,
    count_s = sum(vapply(counted, `[[`, 0, "elapsed")),
    checkpoint = how$checkpoint,
    points_per_task = max(per_task),
    bytes_per_task = max(per_task) * bytes_point)
  out$elapsed <- proc.time()[["elapsed"]] - start
  add_fingerprints(new_pair_counts(out), catalog_fingerprint(a),
                   if (!is_auto) catalog_fingerprint(b))
}

# The block pairs of a count: `jobs` (block indices i, j), the blocks'
# point indices `ba`, `bb`, and `make_task(k)`, the list sent for task k
# (only its two blocks' unit vectors, weights and patch numbers), made when
# the task is sent so that the blocks are not all copied at once.
block_tasks <- function(a, b, edges, self_pairs, how, wa, wb, pa, pb,
                        n_patches, label, bits_a = NULL, bits_b = NULL,
                        pip = NULL) {
  is_auto <- is.null(b)
  n_blocks <- how$n_blocks
  cut <- function(n) {
    k <- min(n_blocks, n)
    split(seq_len(n), rep(seq_len(k), diff(round(seq(0, n, length.out = k + 1)))))
  }
  ba <- cut(nrow(a))
  bb <- if (is_auto) ba else cut(nrow(b))
  jobs <- expand.grid(i = seq_along(ba), j = seq_along(bb))
  if (is_auto) jobs <- jobs[jobs$i <= jobs$j, ]
  fault <- getOption("wtheta.test_block_fault")
  make_task <- function(k) {
    ia <- ba[[jobs$i[k]]]
    ib <- bb[[jobs$j[k]]]
    diagonal <- is_auto && jobs$i[k] == jobs$j[k]
    y <- if (is_auto) a else b
    wy <- if (is_auto) wa else wb
    py <- if (is_auto) pa else pb
    by <- if (is_auto) bits_a else bits_b
    list(a = a[ia, , drop = FALSE], b = if (!diagonal) y[ib, , drop = FALSE],
         wa = wa[ia], wb = if (!diagonal) wy[ib], pa = pa[ia],
         pb = if (!diagonal) py[ib], diagonal = diagonal,
         ba = if (!is.null(bits_a)) bits_a[ia, , drop = FALSE],
         bb = if (!diagonal && !is.null(by)) by[ib, , drop = FALSE],
         pip = pip,
         self_pairs = diagonal && self_pairs, edges = edges,
         backend = how$backend, threads = how$threads, n_patches = n_patches,
         mean_theta = isTRUE(how$mean_theta),
         block = block_name(label, jobs$i[k], jobs$j[k]),
         fault = if (!is.null(fault) && k %in% fault$block) fault)
  }
  list(jobs = jobs, ba = ba, bb = bb, make_task = make_task)
}

block_name <- function(label, i, j) sprintf("%s-%d-%d", label, i, j)

# Runs n block tasks as futures, at most as many at a time as the plan has
# workers, polling for the finished ones. A block whose worker is lost (the
# future fails with a FutureError: the process died, the job was killed)
# or that runs past `timeout` seconds is sent again, up to `retries` times;
# an error from the count itself is not retried. With `files`, finished
# blocks are read from and written to them. Returns the parts in task
# order, which blocks were reused and how many retries ran.
run_blocks <- function(n, make_task, files, retries, timeout, name,
                       progress = TRUE, ids = NULL) {
  parts <- vector("list", n)
  reused <- logical(n)
  if (!is.null(files)) {
    for (k in which(file.exists(files))) {
      part <- tryCatch(readRDS(files[k]), error = function(e) NULL)
      if (is.list(part) && inherits(part, "pair_counts")) {
        # a block file that does not say it holds this block (of these
        # inputs, of this number of blocks) is counted again: the
        # checkpoint is a cache, and the count it would spoil is right
        # once recounted; a message says which file and why
        got <- attr(part, "wtheta_block")
        if (!is.null(ids) && !identical(got, ids[[k]])) {
          message("`checkpoint`: ", dQuote(files[k], FALSE), " ",
                  block_mismatch(got, ids[[k]]), "; counting it again.")
          next
        }
        attr(part, "wtheta_block") <- NULL
        parts[[k]] <- part
        reused[k] <- TRUE
      }
    }
  }
  tick <- if (progress) block_progress(n, sum(reused)) else
    function(elapsed) invisible()
  pending <- which(!reused)
  attempts <- integer(n)
  running <- list()
  faults <- character()
  failure <- NULL
  t0 <- proc.time()[["elapsed"]]
  wait <- 0.02
  finish <- function(k, v) {
    if (!is.null(files)) {
      save_atomic(structure(v, wtheta_block = ids[[k]]), files[k])
    }
    parts[[k]] <<- v
    tick(proc.time()[["elapsed"]] - t0)
  }
  # waits for the running blocks (after a failure, or before the workers
  # are restarted), keeping those that finish; a block lost meanwhile
  # goes back to the queue, as one more attempt
  drain <- function() {
    while (length(running)) {
      keep <- rep(TRUE, length(running))
      for (m in seq_along(running)) {
        r <- running[[m]]
        v <- poll_block(r, timeout)
        if (is.null(v)) next
        keep[m] <- FALSE
        if (!inherits(v, "error")) {
          finish(r$k, v)
        } else if (is.null(failure)) {
          attempts[r$k] <<- attempts[r$k] + 1L
          faults <<- c(faults, fault_note(name(r$k), v))
          if (attempts[r$k] > retries) {
            failure <<- list(k = r$k, why = conditionMessage(v),
                             attempts = attempts[r$k])
          } else {
            pending <<- c(r$k, pending)
          }
        }
      }
      running <<- running[keep]
      if (length(running)) Sys.sleep(0.1)
    }
  }
  while (length(pending) || length(running)) {
    lost <- FALSE
    free <- future::nbrOfWorkers() - length(running)
    while (length(pending) && free > 0 && is.null(failure)) {
      k <- pending[1L]
      pending <- pending[-1L]
      f <- tryCatch(
        future::future(quote(count(task)), substitute = FALSE,
                       globals = list(count = count_block,
                                      task = make_task(k)),
                       packages = "wtheta", seed = FALSE, lazy = FALSE),
        error = function(e) e)
      if (inherits(f, "error")) {
        lost <- TRUE
        if (attempts[k] < retries) {
          attempts[k] <- attempts[k] + 1L
          faults <- c(faults, fault_note(name(k), f))
          pending <- c(pending, k)
        } else {
          failure <- list(k = k, why = conditionMessage(f),
                          attempts = attempts[k] + 1L)
        }
        break
      }
      running[[length(running) + 1L]] <- list(k = k, f = f,
                                              t = proc.time()[["elapsed"]])
      free <- free - 1L
    }
    done <- FALSE
    keep <- rep(TRUE, length(running))
    for (m in seq_along(running)) {
      r <- running[[m]]
      v <- poll_block(r, timeout)
      if (is.null(v)) next
      keep[m] <- FALSE
      done <- TRUE
      k <- r$k
      if (!inherits(v, "error")) {
        finish(k, v)
        next
      }
      worker_lost <- inherits(v, c("FutureError", "wtheta_timeout"))
      if (worker_lost) lost <- TRUE
      if (worker_lost && attempts[k] < retries && is.null(failure)) {
        attempts[k] <- attempts[k] + 1L
        faults <- c(faults, fault_note(name(k), v))
        pending <- c(pending, k)
      } else if (is.null(failure)) {
        failure <- list(k = k, why = conditionMessage(v),
                        attempts = attempts[k] + 1L)
      }
    }
    running <- running[keep]
    if (!is.null(failure)) {
      # with a checkpoint, the running blocks are worth waiting for; lost
      # workers are restarted so that the plan stays usable
      if (!is.null(files)) drain()
      if (lost && persistent_workers()) restart_workers()
      break
    }
    # a lost worker of a plan with persistent workers (multisession, a
    # PSOCK cluster) stays lost: let the others finish, then restart them
    if (lost && persistent_workers()) {
      drain()
      restart_workers()
    }
    # polling a scheduler's queue costs a command per future: wait longer
    # (up to 2 s) while nothing finishes
    if (done) wait <- 0.02 else if (length(running)) {
      Sys.sleep(wait)
      wait <- min(2 * wait, 2)
    }
  }
  if (!is.null(failure)) {
    k <- failure$k
    stop(sprintf(paste0("block %s (task %d of %d) failed after %d ",
                        "attempt%s: %s%s"),
                 name(k), k, n, failure$attempts,
                 if (failure$attempts > 1L) "s" else "", failure$why,
                 if (!is.null(files)) paste0("\nThe ", sum(!vapply(
                   parts, is.null, TRUE)), " finished blocks are in the ",
                   "checkpoint directory ", dQuote(dirname(files[1L]), FALSE),
                   "; the same call resumes from them.") else ""),
         call. = FALSE)
  }
  list(parts = parts, reused = reused, retried = length(faults),
       faults = faults)
}

# why a block was sent again, in one line
fault_note <- function(block, e) {
  paste0(block, ": ", strsplit(conditionMessage(e), "\n")[[1L]][1L])
}

# a running block's outcome: NULL while it runs, its counts, or an error
# (a FutureError when its worker was lost, a wtheta_timeout when it ran
# past `timeout`, after its worker was stopped)
poll_block <- function(r, timeout) {
  st <- tryCatch(future::resolved(r$f), error = function(e) e)
  if (isTRUE(st)) return(tryCatch(future::value(r$f), error = function(e) e))
  if (inherits(st, "error")) return(st)
  if (!is.null(timeout) && proc.time()[["elapsed"]] - r$t > timeout) {
    kill_future(r$f)
    return(structure(class = c("wtheta_timeout", "error", "condition"),
                     list(message = sprintf("it ran past timeout = %g s",
                                            timeout), call = NULL)))
  }
  NULL
}

# progress through progressr (when installed): blocks done out of all, and
# the rate of the blocks counted in this call
block_progress <- function(n, n_reused, envir = parent.frame()) {
  if (!requireNamespace("progressr", quietly = TRUE)) {
    return(function(elapsed) invisible())
  }
  # lives as long as the caller (run_blocks()), finished when it returns
  p <- progressr::progressor(steps = n, envir = envir)
  done <- n_reused
  if (n_reused > 0L) {
    p(amount = n_reused,
      message = sprintf("%d of %d blocks reused from the checkpoint",
                        n_reused, n))
  }
  counted <- 0L
  function(elapsed) {
    done <<- done + 1L
    counted <<- counted + 1L
    p(message = sprintf("block %d of %d done, %.2f blocks/s", done, n,
                        counted / max(elapsed, 1e-3)))
  }
}

# whether the current plan keeps its workers between futures
persistent_workers <- function() {
  inherits(future::plan(), "cluster")
}

# a plan's workers started afresh: the same plan set again after a
# sequential one (switching plans stops the old workers)
restart_workers <- function() {
  stack <- future::plan("list")
  future::plan(future::sequential)
  future::plan(stack)
}

# stops what runs a future that ran past its timeout, where that can be
# done: the process of a worker on this machine, or a batchtools job.
# Elsewhere the future is abandoned (it ends with its worker's plan).
kill_future <- function(f) {
  # reads future's and future.batchtools' objects, which may change shape
  tryCatch({
    if (inherits(f, "ClusterFuture") && is.numeric(f$node)) {
      node <- f$workers[[f$node]]
      pid <- node$session_info$process$pid
      if (isTRUE(attr(node$host, "localhost")) && is.numeric(pid)) {
        tools::pskill(pid)
      }
    } else if (inherits(f, "BatchtoolsFuture") &&
               requireNamespace("batchtools", quietly = TRUE)) {
      suppressMessages(batchtools::killJobs(f$config$jobid,
                                            reg = f$config$reg))
    }
  }, error = function(e) NULL)
  invisible()
}

# adds up the pair_counts of block pairs. For an auto count the blocks
# off the diagonal are cross counts between two blocks of one catalog: with
# self_pairs (ordered pairs) they count twice, and their patch arrays add
# to both [a, b] and [b, a]. Sums of angles (theta_sum) add up as counts
# do; the caller makes theta_mean from the merged sums.
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
              "weighted_above", "theta_sum")) {
    out[[f]] <- add(f)
  }
  out$n_outside <- out$n_below + out$n_above
  out$patch_counts <- add("patch_counts", mirror = TRUE)
  out$patch_weighted <- add("patch_weighted", mirror = TRUE)
  out$gpu_ms <- sum(vapply(parts, function(p) p$gpu_ms, 0), na.rm = TRUE)
  if (all(vapply(parts, function(p) is.na(p$gpu_ms), TRUE))) {
    out$gpu_ms <- NA_real_
  }
  idle <- vapply(parts, function(p) p$gpu_idle_s %||% NA_real_, 0)
  out$gpu_idle_s <- if (all(is.na(idle))) NA_real_ else sum(idle, na.rm = TRUE)
  out$pairs_skipped <- sum(vapply(parts, `[[`, 0, "pairs_skipped"))
  out$grid_plan_s <- sum(vapply(parts, `[[`, 0, "grid_plan_s"))
  out
}

# one block pair, on a worker: its own backend choice and thread count.
# `t$fault` (tests only, from the option wtheta.test_block_fault) makes
# the worker die or hang in this block, once when `t$fault$once` names a
# file that marks that it happened.
count_block <- function(t) {
  if (!is.null(t$fault)) block_fault(t$fault)
  run <- choose_backend(t$backend, NULL)
  threads <- threads_or_default(t$threads)
  pc <- count_pairs(t$a, t$b, t$edges, t$self_pairs, run, threads,
                    if (is.null(t$progress)) FALSE else t$progress,
                    t$wa, t$wb, t$pa, t$pb, t$n_patches,
                    progress_share = if (is.null(t$progress_share)) 1 else
                      t$progress_share, mean_theta = isTRUE(t$mean_theta),
                    ba = t$ba, bb = t$bb, pip = t$pip)
  pc$pid <- Sys.getpid()
  pc$diagonal <- t$diagonal
  pc
}

block_fault <- function(fault) {
  if (!is.null(fault$once)) {
    if (file.exists(fault$once)) return(invisible())
    file.create(fault$once)
  }
  if (identical(fault$action, "die")) tools::pskill(Sys.getpid())
  if (identical(fault$action, "hang")) Sys.sleep(3600)
  invisible()
}

# the name of a plan: its first class that names a strategy
plan_name <- function(p) {
  cl <- setdiff(class(p), c("FutureStrategy", "tweaked", "function"))
  if (length(cl)) cl[1L] else "unknown"
}
