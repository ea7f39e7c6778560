# A count's C result as a pair_counts object (count_result()): its totals
# and normalisations, the pairs of patches beyond reach, the catalogs'
# fingerprints; the one constructor (new_pair_counts()) and the transpose
# of a cross count. count_pairs() (R/pair_counts.R) calls count_result().

# The C result `res` of a count with patches (NULL: interrupted) with the
# pairs of the pairs of patches `far` (task histograms a + b P, 0-based,
# of P patches; wt_r_patch_plan() in src/r/patches.c) added to those
# beyond the last edge (the last slot of `total`, `wtotal`) and to
# `pairs_skipped`: those pairs of patches had no task, since their caps
# lie farther apart than the last edge. ra, rb: the patches' ranges; pa,
# pb: the points' patches; wa, wb: weights (grouped) or NULL; a labelled
# count (L, la, lb: label_sizes(), the labels, 1-based) adds to each part
# its own label pair's pairs (wtr_label_parts() in src/r/results.c says
# which part holds which).
far_pairs <- function(res, far, P, ra, rb, pa, pb, wa, wb, L, la, lb,
                      is_auto) {
  if (is.null(res)) return(res)
  # the patches a, b (1-based) of each pair a + b P: in integers (far <
  # P^2 fits, max_patches), as C takes them; double %% and %/% took 0.3 ms
  # of a 6-sample tomography's three counts
  far <- as.integer(far)
  P <- as.integer(P)
  p <- far %% P + 1L
  q <- far %/% P + 1L
  # points and weight sums per patch (rows) and label (columns): without
  # labels the points from the ranges, the weights in one C pass
  per <- function(r, pt, w, lab, n_lab) {
    # the group of each point only when needed (labels or weights), made
    # in one vector: as.integer() of the patch numbers copied them (their
    # ranges attribute goes), 0.4 MB of R's heap at 10^5 points a count
    g <- NULL
    if (!is.null(lab) || !is.null(w)) {
      if (!is.integer(pt)) pt <- as.integer(pt)
      g <- if (is.null(lab)) pt else pt + (as.integer(lab) - 1L) * nrow(r)
    }
    size <- nrow(r) * n_lab
    n <- if (is.null(lab)) as.double(r[, 2L] - r[, 1L]) else
      as.double(tabulate(g, size))
    out <- list(n = matrix(n, nrow(r)))
    if (!is.null(w)) {
      out$w <- matrix(.Call(C_weight_sums, as.double(w), g, size)$patch,
                      nrow(r))
    }
    out
  }
  A <- per(ra, pa, wa, la, L$n_la)
  B <- if (is_auto) A else per(rb, pb, wb, lb, L$n_lb)
  # the far pairs of every label pair (s, t) at once, a La x Lb matrix,
  # each sum(x[p, s] * y[q, t]) in C (the same numbers; a sum() per label
  # pair cost milliseconds a call, and BLAS products, multithreaded in
  # many R builds, left spinning threads that slowed the next count 2-3x
  # on 16 cores)
  pairs <- function(x, y) .Call(C_far_pairs, x, y, p, q)
  skipped <- sum(rowSums(A$n)[p] * rowSums(B$n)[q])
  n_far <- pairs(A$n, B$n)
  w_far <- if (!is.null(A$w)) pairs(A$w, B$w)
  add <- function(part, s, t, kind) {
    one <- function(x) if (kind == "pair") x[s, t] + x[t, s] else x[s, t]
    last <- length(part$total)
    part$total[last] <- part$total[last] + one(n_far)
    if (!is.null(part$wtotal)) {
      part$wtotal[last] <- part$wtotal[last] + one(w_far)
    }
    part$pairs_skipped <- part$pairs_skipped + skipped
    part
  }
  if (L$n_lab <= 0L) return(add(res, 1L, 1L, "one"))
  k <- 0L
  for (s in seq_len(L$n_la)) {
    for (t in if (is_auto) s:L$n_la else seq_len(L$n_lb)) {
      k <- k + 1L
      res[[k]] <- add(res[[k]], s, t,
                      if (!is_auto || s == t) "one" else "pair")
    }
  }
  res
}

# The pair_counts object of a count from the C result `res` (NULL: it was
# interrupted) and count_pairs()'s arguments; start: when the count began
# (its elapsed time runs to now).
count_result <- function(res, a, b, edges, self_pairs, run, threads,
                         progress, wa, wb, pa, pb, ra, rb, n_patches,
                         mean_theta, start) {
  is_auto <- is.null(b)
  weighted <- !is.null(wa)
  if (is.null(res)) signal_interrupt()
  if (is.function(progress)) progress(1, 1)   # the rest of this count
  elapsed <- proc.time()[["elapsed"]] - start
  gpu_ms <- if (run$backend == "cuda") res$gpu_ms else NA_real_
  nb <- length(edges) - 1L
  total <- res$total
  n1 <- as.double(nrow(a))          # double: n1 * n2 overflows integers
  n2 <- if (is_auto) n1 else as.double(nrow(b))
  out <- list(
    counts = total[seq_len(nb) + 1L],
    edges = edges,
    theta_lo = edges[-(nb + 1L)],
    theta_hi = edges[-1L],
    n1 = n1,
    n2 = n2,
    type = if (is_auto) "auto" else "cross",
    self_pairs = self_pairs,
    mean_theta = isTRUE(mean_theta),
    n_pairs = pair_norm(n1, n2, is_auto, self_pairs),
    n_below = total[1L],
    n_above = total[nb + 2L],
    n_outside = total[1L] + total[nb + 2L],
    backend = run$backend,
    devices = run$devices,
    threads = if (run$backend == "cpu") threads else NA_integer_,
    elapsed = elapsed,
    gpu_ms = gpu_ms,
    gpu_idle_s = gpu_idle(elapsed, gpu_ms, run$devices),
    pairs_skipped = res$pairs_skipped,
    grid_plan_s = res$plan_s
  )
  if (weighted) {
    wtot <- res$wtotal
    out$weighted <- wtot[seq_len(nb) + 1L]
    out$weighted_below <- wtot[1L]
    out$weighted_above <- wtot[nb + 2L]
  }
  if (isTRUE(mean_theta)) {
    out$theta_sum <- res$thtotal[seq_len(nb) + 1L] * (180 / pi)
    out$theta_mean <- theta_means(out)
  }
  out <- count_totals(out, wa, wb, pa, pb, n_patches, is_auto, self_pairs,
                      if (!is.null(pa)) as.integer(ra[, 2L] - ra[, 1L]),
                      if (!is.null(pa)) as.integer(rb[, 2L] - rb[, 1L]))
  if (!is.null(pa)) {
    if (!is.null(res$patch_margins)) {
      out$patch_margins <- res$patch_margins
      if (weighted) out$patch_margins_weighted <- res$patch_margins_weighted
    } else {
      out$patch_counts <- res$patch_counts
      if (weighted) out$patch_weighted <- res$patch_weighted
    }
  }
  new_pair_counts(out)
}

# the mean separation per bin (degrees) from the angle sums of a count and
# its counts (weighted counts with weights); NA where those are zero
theta_means <- function(pc) {
  den <- pc$weighted %||% pc$counts
  ifelse(den != 0, pc$theta_sum / den, NA_real_)
}

# The one constructor of a pair_counts object (pair_counts() and
# distributed counts): checks that the fields every method reads are there
# and sets the class.
new_pair_counts <- function(x) {
  need <- c("counts", "edges", "theta_lo", "theta_hi", "n1", "n2", "type",
            "self_pairs", "n_pairs", "backend")
  # (need's names are distinct: setdiff()'s unique() and its
  # duplicated() took an eighth of a labelled part's construction)
  miss <- need[!need %in% names(x)]
  if (length(miss))
    stop("wtheta internal: a pair_counts object without ",
         paste(miss, collapse = ", "), call. = FALSE)
  structure(x, class = "pair_counts")
}

# What a count knows of its catalogs' points, so that wtheta_from_counts()
# can tell counts of other catalogs apart: the number of points and
# order-free sums over the points: of their unit vectors, rounded to 2^-16
# (3 arcseconds), and of two hashes of those rounded vectors
# (wt_catalog_fingerprint(), src/core/catalog.c). Every sum is of integers,
# so exact in any order: a prepared catalog (its points grouped by patch)
# has the fingerprint of the catalog it came from. One light pass over the
# unit vectors in C, kept in the catalog's handle so that a prepared
# catalog pays it once.
catalog_fingerprint <- function(xyz, handle = NULL, threads = 1L) {
  if (!is.null(handle) && !is.null(handle$fingerprint) &&
      identical(handle$xyz, xyz)) {
    return(handle$fingerprint)
  }
  fp <- list(n = as.double(nrow(xyz)),
             sums = .Call(C_fingerprint, xyz, as.integer(threads)))
  if (!is.null(handle)) handle$fingerprint <- fp
  fp
}

add_fingerprints <- function(pc, f1, f2 = NULL) {
  pc$fingerprint1 <- f1
  pc$fingerprint2 <- if (pc$type == "auto") f1 else f2
  pc
}

# do two fingerprints say the same points?
same_fingerprint <- function(f1, f2) identical(f1, f2)

# the totals a count is normalised by: sums of weights (and of squares)
# and the weighted pair total, and per patch the points and weight sums;
# wa, wb, pa, pb aligned with each other (NULL when absent); n1, n2: the
# points per patch when known already
count_totals <- function(out, wa, wb, pa, pb, n_patches, is_auto, self_pairs,
                         n1 = NULL, n2 = NULL) {
  wb2 <- if (is_auto) wa else wb
  pb2 <- if (is_auto) pa else pb
  if (!is.null(wa)) {
    # each catalog's sums (and by patch) in one C pass, the values of
    # sum() and rowsum() (weights of one are common: PIP counts are
    # weighted)
    sums <- function(w, p) {
      .Call(C_weight_sums, as.double(w), if (!is.null(p)) {
        if (is.integer(p)) p else as.integer(p)
      }, as.integer(n_patches))
    }
    s1 <- sums(wa, pa)
    s2 <- if (is_auto) s1 else sums(wb2, pb2)
    out$sum_w1 <- s1$sum
    out$sum_w1_sq <- s1$sum_sq
    out$sum_w2 <- s2$sum
    out$sum_w2_sq <- s2$sum_sq
    out$weighted_pairs <- weight_norm(out$sum_w1, out$sum_w1_sq, out$sum_w2,
                                      is_auto, self_pairs)
  }
  if (!is.null(pa)) {
    out$patch_n1 <- n1 %||% tabulate(pa, n_patches)
    out$patch_n2 <- n2 %||% tabulate(pb2, n_patches)
    if (!is.null(wa)) {
      out$patch_w1 <- s1$patch
      out$patch_w1_sq <- s1$patch_sq
      out$patch_w2 <- s2$patch
      out$patch_w2_sq <- s2$patch_sq
    }
  }
  out
}

# pairs in a count: unordered i < j, ordered with self pairs, or cross
pair_norm <- function(n1, n2, is_auto, self_pairs) {
  if (!is_auto) n1 * n2 else if (self_pairs) n1^2 else n1 * (n1 - 1) / 2
}

# the weighted count of all pairs, from sums of weights and of squares
weight_norm <- function(s1, s1_sq, s2, is_auto, self_pairs) {
  if (!is_auto) s1 * s2 else if (self_pairs) s1^2 else (s1^2 - s1_sq) / 2
}

# the count of cb x ca from that of ca x cb: the same pairs, with the
# catalogs' roles (n, weight sums, patch axes) swapped
transpose_counts <- function(pc) {
  if (pc$type != "cross") {
    stop("wtheta internal: only cross counts transpose", call. = FALSE)
  }
  swap <- function(x, a, b) {
    t <- x[[a]]
    x[a] <- list(x[[b]])
    x[b] <- list(t)
    x
  }
  pc <- swap(pc, "n1", "n2")
  for (k in c("sum_w1", "sum_w1_sq", "patch_n1", "patch_w1",
              "patch_w1_sq", "fingerprint1")) {
    if (!is.null(pc[[k]])) pc <- swap(pc, k, sub("1", "2", k))
  }
  for (k in c("patch_counts", "patch_weighted")) {
    if (!is.null(pc[[k]])) pc[[k]] <- aperm(pc[[k]], c(2L, 1L, 3L))
  }
  # margins: the rows of the transpose are the columns
  for (k in c("patch_margins", "patch_margins_weighted")) {
    if (!is.null(pc[[k]])) pc[[k]] <- swap(pc[[k]], "rows", "cols")
  }
  if (!is.null(pc$patch_pip_norm)) pc$patch_pip_norm <- t(pc$patch_pip_norm)
  pc
}
