# Labelled counts (issue 33): wtheta_multi() counts the pairs of several
# samples as one catalog whose points carry their sample's label, each
# pair into the histogram of its two labels (wt_job.n_lab in src/wt.h;
# src/core/labels.c). count_pairs() runs one when given n_lab > 0 and
# sample labels la (a label in 1..n_lab per point of a; in the points'
# order as given, or as grouped already when pa carries its "ranges") and,
# in a cross count, lb (or NULL: b unlabelled). The CPU engine only, and
# not with self_pairs, mean_theta or pip: the core refuses them.

# the label sizes of a count: n_lab (0: none), the labels 0-based for C
# (la0, lb0; NULL: none), the labels per side n_la, n_lb (1 without) and
# n = n_la n_lb, the histograms per task histogram
label_sizes <- function(la, lb, n_lab, is_auto) {
  n_lab <- as.integer(n_lab)
  if (n_lab <= 0L || is.null(la)) {
    if (n_lab > 0L) stop("wtheta internal: labelled counts need `la`")
    return(list(n_lab = 0L, la0 = NULL, lb0 = NULL, n_la = 1L, n_lb = 1L,
                n = 1L))
  }
  n_la <- n_lab
  n_lb <- if (is_auto) n_la else if (!is.null(lb)) n_lab else 1L
  list(n_lab = n_lab, la0 = as.integer(la) - 1L,
       lb0 = if (!is_auto && !is.null(lb)) as.integer(lb) - 1L,
       n_la = n_la, n_lb = n_lb, n = n_la * n_lb)
}

# The result of a labelled count, for wtheta_multi() to split. res: the C
# result (NULL: interrupted, an R interrupt then): a list of parts, each
# what C returns for one separate count (its `total`, `wtotal`, patch
# arrays, ...; wtr_label_parts() in src/r/results.c), for the label pairs
# (s, t), s outer: s <= t in an auto count (s == t: the count D_s D_s;
# s < t: the cross count D_s D_t), every (s, t) in a cross count (t only
# 1 when b has no labels). Also the points as counted (grouped by patch):
# a, b (unit vectors), wa, wb (weights), pa, pb (patch numbers), ra, rb
# (patch ranges), la, lb (sample labels, 1-based, or NULL); the sizes
# (label_sizes()), n_tasks_out, n_patches, edges, is_auto, backend,
# pairs_skipped and plan_s (the count's). No fingerprints: the union's
# would serve no separate count (labelled_pair_counts() gives each its
# samples').
count_labelled <- function(res, L, a, b, edges, run, wa, wb, pa, pb, ra, rb,
                           la, lb, n_tasks_out, n_patches) {
  if (is.null(res)) signal_interrupt()
  list(res = res, a = a, b = b, wa = wa, wb = wb, pa = pa, pb = pb,
       ra = ra, rb = rb, la = la, lb = if (!is.null(b)) lb,
       n_lab = L$n_lab, n_la = L$n_la, n_lb = L$n_lb,
       n_tasks_out = n_tasks_out, n_patches = n_patches, edges = edges,
       is_auto = is.null(b), backend = run$backend,
       pairs_skipped = res[[1L]]$pairs_skipped, plan_s = res[[1L]]$plan_s)
}
