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
# list (NULL: interrupted, an R interrupt then), whose `slots` (and `wsum`
# when weighted) are (n_bins + 2) x (n_tasks_out n_la n_lb) matrices of
# raw histograms: column 1 + (out n_la + s) n_lb + t holds task histogram
# `out` (0 alone without patches; with patches p + q n_patches for the
# patch pair (p, q), 0-based, p <= q in an auto count: patch_tasks()) and
# labels s, t (0-based; t is 0 when b has no labels). In an auto count the
# blocks of diagonal tasks (the one block without patches; patch pairs
# p == q) hold each pair of labels s < t in (s, t) alone, (t, s) being 0.
# Row n_bins + 2 (beyond the last edge) holds every pair of a histogram
# not in another row, so each histogram sums to all its pairs. Also the
# points as counted (grouped by patch): a, b (unit vectors), wa, wb
# (weights), pa, pb (patch numbers), ra, rb (patch ranges), la, lb (sample
# labels, 1-based, or NULL); the sizes (label_sizes()), n_tasks_out,
# n_patches, edges, is_auto, backend, pairs_skipped, plan_s and fp (the
# catalogs' fingerprints).
count_labelled <- function(res, L, a, b, edges, run, wa, wb, pa, pb, ra, rb,
                           la, lb, n_tasks_out, n_patches, fp) {
  if (is.null(res)) signal_interrupt()
  list(res = res, a = a, b = b, wa = wa, wb = wb, pa = pa, pb = pb,
       ra = ra, rb = rb, la = la, lb = if (!is.null(b)) lb,
       n_lab = L$n_lab, n_la = L$n_la, n_lb = L$n_lb,
       n_tasks_out = n_tasks_out, n_patches = n_patches, edges = edges,
       is_auto = is.null(b), backend = run$backend,
       pairs_skipped = res$pairs_skipped, plan_s = res$plan_s, fp = fp)
}
