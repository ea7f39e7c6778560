# One call of pair_counts(), wtheta() or wtheta_multi(), from the user's
# arguments to its counts: new_call() checks and prepares everything the
# counts need, in one order for all three, and holds it in a call object;
# run_counts() (through call_counts()) and count_catalogs() count.

# The call object: the user's catalogs `users` (named by argument)
# checked and prepared, the edges (degrees, counted) and `units` (the
# bins' unit and edges in it, bins_units()), weights, patches, the plan `how`,
# threads and progress, or the first error in this order:
#   progress; catalogs; bins; check_catalogs(cats); weights (their
#   products, then check_weights(w)); the error options (unless `error`
#   is NULL); the plan; memory; threads; the patches; the catalogs
#   prepared; randoms in every patch; the checkpoint.
# `error` NULL (pair_counts()): nothing resamples, and patches (given or
# carried by prepared catalogs, never fitted) are read before the plan and
# counted by the memory check. Otherwise patches are made or read only
# when resampling, after the memory check (k-means fits on `fit_on`).
# `counts`: the distinct counts (unique_counts()), for progress and the
# memory estimate (NULL: one count). `footprints`: the pairs of names
# c(data, random) that call_counts() checks when `check_footprint`.
# `key`: what besides catalogs, edges, self pairs and mean_theta the
# checkpoint depends on. The catalogs the call made for itself are
# released when the frame `envir` (the entry point's) exits; its progress
# finishes then.
new_call <- function(what, users, bins, columns, progress, self_pairs,
                     mean_theta, weights, patches, backend, threads,
                     devices, distribute, checkpoint, retries, timeout,
                     error = NULL, n_patches = NULL, n_boot = 0, seed = NULL,
                     fit_on = NULL, randoms = NULL, counts = NULL,
                     check_footprint = FALSE, footprints = list(),
                     check_catalogs = function(cats) NULL,
                     check_weights = function(w) NULL, key = list(),
                     pip = NULL, envir = parent.frame()) {
  start <- proc.time()[["elapsed"]]
  progress <- progress_or_default(progress)
  cc <- checked_catalogs(users, columns, threads)
  edges <- bins_edges(bins)
  units <- bins_units(bins, edges)
  check_catalogs(cc$cats)
  w <- call_weights(weights, users, cc$prepared)
  check_weight_products(w)
  check_weights(w)
  # PIP (pip_settings(), R/pip.R): the words of each catalog; every
  # catalog weighted (units where none are given), as pair weights need
  bits <- if (!is.null(pip)) call_bitwise(pip$bitwise, users, cc$prepared)
  if (!is.null(pip) && is.null(w)) {
    w <- lapply(cc$cats, function(x) rep(1, catalog_size(x)))
  }
  pat <- NULL
  resample <- FALSE
  if (is.null(error)) {
    carried <- any(vapply(cc$cats[cc$prepared], function(x)
      !is.null(x$patch), TRUE))
    if (!is.null(patches) || carried) {
      pat <- call_patches(patches, users, cc$cats, cc$prepared, NULL, NULL,
                          NULL, fit_on)
    }
  } else {
    resample <- check_error_args(error, patches, n_patches, n_boot, seed)
    check_flag(check_footprint, "check_footprint")
    check_flag(mean_theta, "mean_theta")
  }
  how <- plan_counting(backend, devices, threads, distribute, checkpoint,
                       retries, timeout, mean_theta)
  how$pip <- pip
  # a jackknife needs only the margins of each count's patch arrays (rows,
  # columns, diagonal: P x bins each): a local count keeps only those, a
  # distributed one reduces its merged arrays to them; PIP counts keep
  # the arrays
  how$margins <- identical(error, "jackknife") && is.null(pip)
  n_counts <- if (is.null(counts)) 1L else length(counts)
  check_call_memory(cc$cats, w, length(edges) - 1L, n_counts, pat, resample,
                    patches, n_patches, error, n_boot, bits)
  threads <- threads_or_default(threads)
  if (resample) {
    pat <- call_patches(patches, users, cc$cats, cc$prepared, n_patches,
                        seed, threads, fit_on)
  }
  cats <- call_catalogs(cc$cats, cc$prepared, w, pat, threads, bits)
  on_exit_of(envir, function() release_catalogs(cats))
  # the cells of the grids that the call's counts share
  how$grid_scale <- grid_scale(cats, edges, threads, how$run$backend)
  if (resample) check_random_patches(cats[randoms], pat)
  progress <- progress_start(progress, n_counts, envir)
  how <- checkpoint_open(how, what,
                         do.call(checkpoint_key,
                                 c(list(cats, edges, self_pairs), key,
                                   list(mean_theta = if (mean_theta) TRUE,
                                        pip = if (!is.null(pip))
                                          list(pip[-1L], lapply(cats, `[[`,
                                                                "bits"))))))
  list(start = start, cats = cats, checked = cc$cats, edges = edges,
       units = units, weights = w, patches = pat, resample = resample,
       how = how, threads = threads, progress = progress, counts = counts,
       check_footprint = check_footprint, footprints = footprints)
}

# runs f() when the frame `envir` exits, as on.exit(f(), add = TRUE)
# written there would
on_exit_of <- function(envir, f) {
  do.call(base::on.exit, list(as.call(list(f)), add = TRUE), envir = envir)
}

# The counts of a call object: each of call$counts once (run_counts()),
# with the footprint checks of call$footprints run meanwhile (or first).
# `samples` (wtheta_multi()): NULL, or list(data, random), the names in
# call$cats of the samples and of their randoms (one shared, or one per
# sample), whose counts run_counts_labelled() counts together when
# use_labels() says so. list(done: the counts by key, in the unit of the
# bins, footprint: the checks, or NULL)
call_counts <- function(call, labels = NULL, samples = NULL,
                        self_pairs = FALSE) {
  fchecks <- NULL
  check_fp <- function() {
    if (call$check_footprint) {
      fchecks <<- footprint_checks(call$checked, call$footprints)
    }
  }
  done <- if (!is.null(samples) &&
              use_labels(call$how, call$cats, samples$data, samples$random,
                         self_pairs, length(call$edges) - 1L)) {
    run_counts_labelled(call$how, call$cats, call$counts, call$edges,
                        call$threads, call$progress, samples$data,
                        samples$random, labels, meanwhile = check_fp)
  } else {
    run_counts(call$how, call$cats, call$counts, call$edges,
               call$threads, call$progress, labels, meanwhile = check_fp)
  }
  list(done = lapply(done, pair_counts_in_units, call$units),
       footprint = fchecks)
}

# The one place where the functions that take catalogs count: prepared
# catalogs `ca` and `cb` (NULL for auto pairs) through count_planned(),
# with their unit vectors, weights and patch numbers. `label` names the
# count in a checkpoint. The result carries the catalogs' patches.
count_catalogs <- function(how, ca, cb, edges, self_pairs, threads, progress,
                           label = "pairs", defer = FALSE) {
  pc <- count_planned(how, ca$xyz, cb$xyz, edges, self_pairs, threads,
                      progress, ca$weights, cb$weights, ca$patch, cb$patch,
                      catalog_n_patches(ca), label = label, ha = ca$handle,
                      hb = cb$handle, defer = defer, ba = ca$bits,
                      bb = cb$bits)
  with_patches <- function(pc) {
    if (!is.null(ca$patch)) pc$patches <- ca$patches
    pc
  }
  if (defer) deferred_then(pc, with_patches) else with_patches(pc)
}

# refuses a call whose memory cannot fit (see R/memory.R): its points,
# weighted or not, and, when `pat` (patches read already: pair_counts())
# or `resample` (patches resampled: wtheta(), wtheta_multi()) says so,
# the patch arrays of its counts and their replicates; `bits`: the PIP
# words of each catalog (call_bitwise(), NULL: none)
check_call_memory <- function(cats, w, n_bins, n_counts, pat = NULL,
                              resample = FALSE, patches = NULL,
                              n_patches = 0, error = "none", n_boot = 0,
                              bits = NULL) {
  n_p <- if (!is.null(pat)) {
    if (pat$kind == "labels") length(pat$labels) else nrow(pat$patches)
  } else if (!resample) 0 else if (is.null(patches)) n_patches else
    # patches given as labels are counted once read; made or given as
    # centres, they are known now
    if (inherits(patches, "wtheta_patches")) nrow(patches) else 0
  check_memory(sum(vapply(cats, catalog_size, 0)), !is.null(w),
               !is.null(pat) || resample, n_bins = n_bins, n_patches = n_p,
               n_replicates = if (!resample) 0 else if (error == "bootstrap")
                 n_boot else n_p,
               n_counts = n_counts,
               word_points = sum(vapply(bits, function(b)
                 if (is.null(b)) 0 else as.double(length(b)), 0)))
}

# footprint_check() of each pair of names c(data, random) in `pairs`,
# with a warning for each mismatch; named "data/random". The cells of
# the samples checked against the same randoms come from one C call,
# which reads those randoms once.
footprint_checks <- function(cats, pairs) {
  radec <- lapply(cats[unique(unlist(pairs))], catalog_radec)
  found <- vector("list", length(pairs))
  by_random <- split(seq_along(pairs), vapply(pairs, `[`, "", 2L))
  for (rn in names(by_random)) {
    r <- radec[[rn]]
    k <- by_random[[rn]]
    k <- k[vapply(k, function(i) footprint_checkable(radec[[pairs[[i]][1L]]],
                                                     r), TRUE)]
    if (length(k) < 2L) next
    found[k] <- .Call(C_footprint_cells_many, lapply(k, function(i) {
      d <- radec[[pairs[[i]][1L]]]
      list(d$ra, d$dec)
    }), r$ra, r$dec, footprint_thin(r), wtheta_threads())
  }
  out <- lapply(seq_along(pairs), function(i) {
    pr <- pairs[[i]]
    fc <- check_footprint_of(radec[[pr[1L]]], radec[[pr[2L]]], found[[i]])
    if (fc$verdict == "mismatch") {
      warning("`", pr[1L], "` and `", pr[2L], "` do not seem to share a ",
              "footprint: ", fc$message, ". See ?footprint_check; ",
              "randoms uniform in area on the footprint come from ",
              "random_catalog(). check_footprint = FALSE turns this ",
              "check off.", call. = FALSE)
    }
    fc
  })
  stats::setNames(out, vapply(pairs, paste, "", collapse = "/"))
}

# what a checkpoint of a call's counts depends on; NULL in `...` is left
# out (an option at its default then keeps the key of earlier versions)
checkpoint_key <- function(cats, edges, self_pairs, ...) {
  w <- lapply(cats, `[[`, "weights")
  if (all(vapply(w, is.null, TRUE))) w <- NULL
  p <- lapply(cats, `[[`, "patch")
  if (all(vapply(p, is.null, TRUE))) p <- NULL
  extra <- list(...)
  c(list(lapply(cats, `[[`, "xyz"), w, p, edges, self_pairs,
         catalog_n_patches(cats[[1L]])),
    extra[!vapply(extra, is.null, TRUE)])
}

# runs each count once; a list by key. `labels` names the catalogs in
# checkpoints when their names in `cats` are not fit for file names.
# how$mean_theta applies to the counts whose spec has mean; how$pip's
# angular upweights to those whose spec does not say angular = FALSE, the
# table named by the spec where the call has one per count. On the GPU the
# counts overlap (overlap_counts()): all start, each in a thread of its
# own, before the first is collected, so that the host work of each (and
# R's) runs while the GPU counts another; any still running when this
# exits (an error, an interrupt) is stopped first. meanwhile: a function
# (the footprint check) called once the counts have started when they
# overlap, before them otherwise.
run_counts <- function(how, cats, counts, edges, threads, progress,
                       labels = NULL, meanwhile = function() NULL) {
  lab <- function(k) if (is.null(labels)) k else labels[[k]]
  one <- function(s, defer) {
    how$mean_theta <- isTRUE(how$mean_theta) && isTRUE(s$mean)
    # PIP angular upweights by count: none where the spec says angular =
    # FALSE (wtheta()'s RR, as pycorr), the table the spec names where the
    # call has one per count (wtheta_pip(): DD and DR), else the call's.
    # Set as a NULL element: `$<-` NULL would drop it, and `$` would then
    # match another name by its prefix.
    if (!is.null(how$pip)) {
      if (isFALSE(s$angular)) {
        how$pip["angular"] <- list(NULL)
      } else if (is.character(s$angular) &&
                 !is.null(how$pip$tables_by_count)) {
        how$pip["angular"] <- list(how$pip$tables_by_count[[s$angular]])
      }
    }
    count_catalogs(how, cats[[s$x]], if (!is.null(s$y)) cats[[s$y]], edges,
                   s$self_pairs, threads, progress,
                   label = paste0(lab(s$x), "-", lab(s$y %||% s$x),
                                  if (s$self_pairs && !is.null(labels))
                                    "-self"),
                   defer = defer)
  }
  if (overlap_counts(how, counts)) {
    started <- list()
    on.exit(for (d in started) d$cancel(), add = TRUE)
    for (k in seq_along(counts)) started[[k]] <- one(counts[[k]], TRUE)
    meanwhile()
    out <- lapply(started, function(d) d$finish())
  } else {
    meanwhile()
    out <- lapply(counts, one, defer = FALSE)
  }
  stats::setNames(out, vapply(counts, count_key, ""))
}

# run_counts() for wtheta_multi() on the CPU (use_labels()): the counts
# D_s D_t of the samples `data_keys` (every one in `counts`) in one
# labelled auto count of their union, and their counts against the
# randoms `random_keys` in one labelled cross count of the union and the
# randoms (one shared catalog, unlabelled, or the union of the samples'
# own, labelled), each split into the separate counts' pair_counts
# objects (labelled_part(), labelled_pair_counts()); the others (the
# randoms' pairs) by run_counts(). The same list, in the order of
# `counts`.
run_counts_labelled <- function(how, cats, counts, edges, threads, progress,
                                data_keys, random_keys, labels = NULL,
                                meanwhile = function() NULL) {
  keys <- vapply(counts, count_key, "")
  S <- length(data_keys)
  key <- function(x, y) spec_key(x, y, FALSE)
  # what the labelled counts serve: key -> kind, labels s and t (1-based)
  served <- list()
  for (s in seq_len(S)) {
    for (t in s:S) {
      served[[key(data_keys[s], if (t != s) data_keys[t])]] <-
        list(kind = if (s == t) "auto" else "pair", s = s, t = t,
             x = data_keys[s], y = if (t != s) data_keys[t])
    }
  }
  for (s in seq_len(S)) {
    for (t in seq_along(random_keys)) {
      served[[key(data_keys[s], random_keys[t])]] <-
        list(kind = "cross", s = s, t = t, x = data_keys[s],
             y = random_keys[t])
    }
  }
  served <- served[names(served) %in% keys]
  kinds <- vapply(served, `[[`, "", "kind")
  meanwhile()
  done <- list()
  u <- labelled_union(cats[data_keys])
  on.exit(catalog_release(u$handle), add = TRUE)
  # each catalog's fingerprint once for the counts split from the
  # labelled ones (a sample's serves S + 1 of them; the handles of the
  # samples, counted only in the union, keep none)
  fps <- list()
  fingerprint <- function(nm) {
    if (is.null(fps[[nm]])) {
      fps[[nm]] <<- catalog_fingerprint(cats[[nm]]$xyz, cats[[nm]]$handle,
                                        threads)
    }
    fps[[nm]]
  }
  # each separate count of a labelled count records that count's seconds
  split <- function(res, which, La, Lb, start) {
    elapsed <- proc.time()[["elapsed"]] - start
    for (k in which) {
      sv <- served[[k]]
      t <- if (sv$kind == "cross" && Lb == 1L) 1L else sv$t
      part <- labelled_part(res, La, Lb, sv$s - 1L, t - 1L, sv$kind)
      done[[k]] <<- labelled_pair_counts(part, cats[[sv$x]],
                                         if (!is.null(sv$y)) cats[[sv$y]],
                                         edges, how$run, threads, elapsed,
                                         fingerprint(sv$x),
                                         if (!is.null(sv$y))
                                           fingerprint(sv$y))
    }
  }
  auto <- names(served)[kinds != "cross"]
  if (length(auto)) {
    start <- proc.time()[["elapsed"]]
    res <- count_union(u, NULL, edges, how, threads, progress,
                       length(auto), S)
    split(res, auto, S, S, start)
  }
  cross <- names(served)[kinds == "cross"]
  if (length(cross)) {
    r <- if (length(random_keys) == 1L) {
      x <- cats[[random_keys]]
      list(xyz = x$xyz, weights = x$weights, patch = x$patch, lab = NULL,
           handle = x$handle)
    } else {
      labelled_union(cats[random_keys])
    }
    if (length(random_keys) > 1L) on.exit(catalog_release(r$handle),
                                          add = TRUE)
    start <- proc.time()[["elapsed"]]
    res <- count_union(u, r, edges, how, threads, progress,
                       length(cross), S)
    split(res, cross, S, if (is.null(r$lab)) 1L else S, start)
  }
  rest <- counts[!keys %in% names(served)]
  if (length(rest)) {
    done <- c(done, run_counts(how, cats, rest, edges, threads, progress,
                               labels))
  }
  done[keys]
}

# The C result of the labelled count of u and r (from labelled_union():
# xyz, weights, patch, lab (1-based or NULL), handle; r NULL for the auto
# pairs of u) with S labels: count_pairs() with labels returns it as
# count_labelled() says, a part per label pair (labelled_part() picks
# one). `how`: the call's plan (its run, and whether patches keep their
# margins only). `share`: the counts it serves, for progress.
count_union <- function(u, r, edges, how, threads, progress, share, S) {
  count_pairs(u$xyz, r$xyz, edges, FALSE, how$run, threads, progress,
              u$weights, r$weights, u$patch, r$patch, u$n_patches %||% 0L,
              progress_share = share, ha = u$handle, hb = r$handle,
              la = u$lab, lb = r$lab, n_lab = S,
              margins = isTRUE(how$margins),
              grid_scale = how$grid_scale %||% 1)$res
}

# Whether run_counts() overlaps its counts: on the GPU, run here (not
# distributed), more than one count, unless options(wtheta.overlap =
# FALSE) (see ?wtheta-package, "Overlapped counts").
overlap_counts <- function(how, counts) {
  opt <- getOption("wtheta.overlap", TRUE)
  if (!isTRUE(opt) && !isFALSE(opt)) {
    stop("option `wtheta.overlap` must be TRUE or FALSE, not ",
         describe(opt), ".", call. = FALSE)
  }
  opt && length(counts) > 1L && !is.null(how$run) &&
    identical(how$run$backend, "cuda")
}
