# The one place where the functions that take catalogs count: prepared
# catalogs `ca` and `cb` (NULL for auto pairs) through count_planned(),
# with their unit vectors, weights and patch numbers. `label` names the
# count in a checkpoint. The result carries the catalogs' patches.
count_catalogs <- function(how, ca, cb, edges, self_pairs, threads, progress,
                           label = "pairs", defer = FALSE) {
  pc <- count_planned(how, ca$xyz, cb$xyz, edges, self_pairs, threads,
                      progress, ca$weights, cb$weights, ca$patch, cb$patch,
                      catalog_n_patches(ca), label = label, ha = ca$handle,
                      hb = cb$handle, defer = defer)
  with_patches <- function(pc) {
    if (!is.null(ca$patch)) pc$patches <- ca$patches
    pc
  }
  if (defer) deferred_then(pc, with_patches) else with_patches(pc)
}

# refuses a call whose memory cannot fit (see R/memory.R)
check_call_memory <- function(cats, w, resample, patches, n_patches, error,
                              n_boot, n_bins, n_counts) {
  # patches given as labels are counted once read; made or given as
  # centres, they are known now
  n_p <- if (!resample) 0 else if (is.null(patches)) n_patches else
    if (inherits(patches, "wtheta_patches")) nrow(patches) else 0
  check_memory(sum(vapply(cats, catalog_size, 0)), !is.null(w), resample,
               n_bins = n_bins, n_patches = n_p,
               n_replicates = if (error == "bootstrap") n_boot else n_p,
               n_counts = n_counts)
}

# footprint_check() of each pair of names c(data, random) in `pairs`,
# with a warning for each mismatch; named "data/random"
footprint_checks <- function(cats, pairs) {
  out <- lapply(pairs, function(pr) {
    fc <- check_footprint_of(catalog_radec(cats[[pr[1L]]]),
                             catalog_radec(cats[[pr[2L]]]))
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
# how$mean_theta applies to the counts whose spec has mean. On the GPU the
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
