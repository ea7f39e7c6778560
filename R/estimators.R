# Estimation from counts: w by each estimator, the jackknife and
# bootstrap replicates and their covariance. wtheta_result() is the one
# path of wtheta(), wtheta_from_counts() and wtheta_multi().

# The one estimation path of wtheta(), wtheta_from_counts() and
# wtheta_multi(): a wtheta object from the counts `pcs` (named DD, DR, RR
# or D1D2, D1R2, R1D2, R1R2; an element may be NULL when the estimator
# does not need it). `m`: patch multiplicities of the replicates when
# given (wtheta_multi() shares one draw among its correlations).
# `reduced`: where the replicates' normalised counts are kept and found
# again (replicate_cache()), when several results share counts and `m`.
# `bin_names`: the covariance's row and column names, format() of the bin
# centres, when made already (wtheta_multi(): the same for each
# correlation; format() a time cost 30 us). `cov_later`: leave out the
# resampled covariance and `w_err` (wtheta_multi() gives each correlation
# its block of the joint covariance: with_cov_block()).
wtheta_result <- function(pcs, estimator, error, n_boot = 500, seed = NULL,
                          m = NULL, reduced = NULL, bin_names = NULL,
                          cov_later = FALSE) {
  is_cross <- "D1D2" %in% names(pcs)
  first <- pcs[[1L]]
  edges <- first$edges
  weighted <- !is.null(first$weighted)
  resample <- error %in% c("jackknife", "bootstrap")
  norm <- lapply(pcs, function(pc) {
    if (is.null(pc)) return(NULL)
    if (weighted) pc$weighted / pc$weighted_pairs else pc$counts / pc$n_pairs
  })
  wv <- estimate_w(norm, estimator, is_cross, warn = TRUE)
  nb <- length(edges) - 1L
  # the columns as a list, made a data frame once at the end ($<- on a
  # data frame costs tens of microseconds a column, and wtheta_multi()
  # makes a result per correlation)
  out <- list(theta_lo = edges[-(nb + 1L)], theta_hi = edges[-1L])
  centres <- bin_centres(edges)
  out$theta <- centres$theta
  if (!is.null(first$theta_mean)) out$theta_mean <- first$theta_mean
  for (nm in names(pcs)) {
    if (is.null(pcs[[nm]])) next
    out[[nm]] <- if (weighted) pcs[[nm]]$weighted else pcs[[nm]]$counts
  }
  out$w <- wv
  cov <- NULL
  reps <- NULL
  if (error == "poisson") {
    raw <- first$counts
    out$w_err <- ifelse(raw > 0, abs(1 + wv) / sqrt(raw), NA_real_)
    cov <- diag(out$w_err^2, nb)
  } else if (resample) {
    reps <- replicate_w(pcs, estimator, is_cross, error, n_boot, seed,
                        weighted, m, reduced)
    finite <- is.finite(reps)
    if (!all(finite)) {
      bad <- which(rowSums(!finite) > 0)
      warning("w_err is NA in ", length(bad), " bin(s) where a ", error,
              " replicate of w has a zero denominator: bin",
              if (length(bad) > 1L) "s", " ",
              paste(bad[seq_len(min(10L, length(bad)))], collapse = ", "),
              if (length(bad) > 10L) ", ...", "; widen the bins, use ",
              "fewer patches or add randoms.", call. = FALSE)
    }
    if (!cov_later) {
      cov <- replicate_cov(reps, error, first$threads)
      out$w_err <- sqrt(diag(cov))
    }
  }
  if (!is.null(cov)) {
    nm <- bin_names %||% format(out$theta)
    dimnames(cov) <- list(nm, nm)
  }
  n <- function(pc, k) {
    if (is.null(pc)) return(NULL)
    x <- pc[[k]]
    if (x <= .Machine$integer.max) as.integer(x) else x
  }
  na_null <- function(x) if (is.null(x)) NA_integer_ else x
  sizes <- if (!is_cross) {
    list(n_data = n(first, "n1"),
         n_random = na_null(n(pcs$RR, "n1") %||% n(pcs$DR, "n2")))
  } else {
    list(n_data = n(first, "n1"),
         n_random = na_null(n(pcs$R1D2, "n1") %||% n(pcs$R1R2, "n1")),
         n_data2 = n(first, "n2"),
         n_random2 = na_null(n(pcs$D1R2, "n2") %||% n(pcs$R1R2, "n2")))
  }
  used <- pcs[!vapply(pcs, is.null, TRUE)]
  # structure()'s object, attributes in its order (NULL ones left off),
  # without its renaming of special names: 3% of this function's
  # instructions, 21 times a six-sample tomography
  attributes(out) <- list(names = names(out),
            class = c("wtheta", "data.frame"),
            row.names = c(NA_integer_, -nb),
            type = if (is_cross) "cross" else "auto",
            bin_centres = centres$how,
            n_data = sizes$n_data, n_random = sizes$n_random,
            n_data2 = sizes$n_data2, n_random2 = sizes$n_random2,
            estimator = estimator,
            self_pairs = if (is_cross) FALSE else first$self_pairs,
            weighted = weighted, error = error, cov = cov,
            n_patches = if (resample) count_n_patches(first) else
              NA_integer_,
            replicates = reps,
            patches = if (resample) first$patches,
            seed = if (resample) seed_used(error, seed, first$patches),
            pair_counts = used,
            backend = first$backend, devices = first$devices,
            threads = first$threads,
            elapsed = NA_real_,
            n_outside = vapply(used, `[[`, 0, "n_outside"),
            edges = edges, theta_units = theta_units_of(first),
            footprint_check = NULL)
  out
}

# A result of wtheta_result(cov_later = TRUE) with its covariance `cov`
# (named by the bins already) and `w_err`, the last column, from it: the
# object wtheta_result() would have made. The joint covariance's diagonal
# blocks are the correlations' own covariances bit for bit (replicate_cov()
# makes each entry from its two rows alone).
with_cov_block <- function(x, cov) {
  cls <- class(x)
  v <- unclass(x)   # a list keeps its attributes through $<-
  v$w_err <- sqrt(diag(unname(cov)))
  attr(v, "cov") <- cov
  class(v) <- cls
  v
}

# the patches of a count: of its patch arrays (`patch_counts`) or of their
# margins (`patch_margins`, a jackknife's counts); 0 without
count_n_patches <- function(pc) {
  if (!is.null(pc$patch_margins)) return(nrow(pc$patch_margins$rows))
  if (!is.null(pc$patch_counts)) return(dim(pc$patch_counts)[1L])
  0L
}

# the covariance of replicate w (bins x replicates, or any stack of
# rows): jackknife (P - 1) / P sum (w_k - mean)(w_k - mean)^T, bootstrap
# the sample covariance. The jackknife's products in C on the counts'
# `threads` (NA, the GPU's, is one; at most wtheta_threads(), as counts
# read from a file may come from a larger machine), not through R's BLAS:
# a multithreaded BLAS (OpenBLAS, as many R builds have) leaves its
# threads spinning for a while after a product, and the counts of the
# next call then ran on shared cores (six-sample tomography on 16 cores:
# median 0.15 s, against 0.085 s with one BLAS thread). C sums each entry
# in one order, so a joint covariance's diagonal blocks are the
# correlations' own bit for bit, and the numbers are the reference
# BLAS's.
replicate_cov <- function(reps, error, threads = 1L) {
  if (error == "jackknife") {
    P <- ncol(reps)
    d <- reps - rowMeans(reps)
    if (!is.double(d)) storage.mode(d) <- "double"
    threads <- if (length(threads) == 1L && !is.na(threads))
      min(threads, wtheta_threads()) else 1L
    .Call(C_row_products, d, (P - 1) / P, as.integer(threads))
  } else {
    stats::cov(t(reps))
  }
}

# w from the normalised counts (a list in the order DD, DR, RR or D1D2,
# D1R2, R1D2, R1R2; vectors, or matrices with a column per replicate).
# NA where a denominator is zero (with a warning when asked).
estimate_w <- function(n, estimator, is_cross, warn = FALSE) {
  if (!is_cross) {
    dd <- n[[1L]]
    dr <- n[[2L]]
    rr <- n[[3L]]
    denom <- switch(estimator, LS = rr, natural = rr, DP = dr, Hamilton = dr)
    w <- switch(estimator,
                LS = (dd - 2 * dr + rr) / rr,
                natural = dd / rr - 1,
                DP = dd / dr - 1,
                Hamilton = dd * rr / dr^2 - 1)
    what <- if (estimator %in% c("LS", "natural")) "RR" else "DR"
  } else {
    d1d2 <- n[[1L]]
    d1r2 <- n[[2L]]
    r1d2 <- n[[3L]]
    r1r2 <- n[[4L]]
    denom <- switch(estimator, LS = r1r2, natural = r1r2, DP = d1r2,
                    Hamilton = d1r2 * r1d2)
    w <- switch(estimator,
                LS = (d1d2 - d1r2 - r1d2 + r1r2) / r1r2,
                natural = d1d2 / r1r2 - 1,
                DP = d1d2 / d1r2 - 1,
                Hamilton = d1d2 * r1r2 / (d1r2 * r1d2) - 1)
    what <- switch(estimator, LS = "R1R2", natural = "R1R2", DP = "D1R2",
                   Hamilton = "D1R2 or R1D2")
  }
  zero <- !is.finite(denom) | denom == 0
  if (any(zero)) {
    w[zero] <- NA_real_
    if (warn) {
      bins <- which(zero)
      warning("w is NA in ", length(bins), " bin(s) where ", what,
              " is zero: bin", if (length(bins) > 1L) "s", " ",
              paste(bins[seq_len(min(10L, length(bins)))], collapse = ", "),
              if (length(bins) > 10L) ", ...",
              "; widen the bins or add randoms.", call. = FALSE)
    }
  }
  w
}

# how often each of P patches enters each replicate: a P x replicates
# matrix (jackknife: all but one; bootstrap: P draws with replacement)
patch_multiplicities <- function(error, P, n_boot, seed) {
  if (error == "jackknife") return(1 - diag(P))
  with_seed(bootstrap_seed(seed), {
    vapply(seq_len(n_boot), function(i)
      tabulate(sample.int(P, P, replace = TRUE), P), numeric(P))
  })
}

# the seed of the bootstrap draws: seed (default_seed when NULL) + 1, a
# stream apart from the one
# that seeded the k-means patches; past the largest integer, its negative
bootstrap_seed <- function(seed) {
  seed <- as.integer(seed %||% default_seed)
  if (seed < .Machine$integer.max) seed + 1L else -.Machine$integer.max
}

# w of each jackknife (leave one patch out) or bootstrap (patches drawn with
# replacement) replicate: a bins x replicates matrix. Replicate r gives
# patch a the multiplicity m[a, r]; a pair between patches a and b then
# counts m_a m_b times, and the normalisers follow the same rule.
replicate_w <- function(pcs, estimator, is_cross, error, n_boot, seed,
                        weighted, m = NULL, reduced = NULL) {
  P <- count_n_patches(pcs[[1L]])
  if (is.null(m)) m <- patch_multiplicities(error, P, n_boot, seed)
  # mm[a + (b - 1) P, r] = m[a, r] m[b, r], made once when first needed
  mm <- NULL
  pair_m <- function() {
    if (is.null(mm)) mm <<- m[rep(seq_len(P), P), , drop = FALSE] *
        m[rep(seq_len(P), each = P), , drop = FALSE]
    mm
  }
  norm <- stats::setNames(lapply(names(pcs), function(nm) {
    pc <- pcs[[nm]]
    if (is.null(pc)) return(NULL)
    key <- reduced$keys[[nm]]
    if (!is.null(key) && !is.null(reduced$env[[key]]))
      return(reduced$env[[key]])
    out <- replicate_counts(pc, m, pair_m, error, weighted)
    if (!is.null(key)) assign(key, out, envir = reduced$env)
    out
  }), names(pcs))
  estimate_w(norm, estimator, is_cross)
}

# Where wtheta_multi() keeps each count's normalised replicate counts for
# the correlations that share it: an environment (env) and, per count
# column of one correlation (DD, DR, ...), the key of its count and
# whether it is transposed (keys): the same key, the same numbers bit for
# bit, as if reduced again.
replicate_cache <- function(env, keys) list(env = env, keys = keys)

# One count's replicate counts, each divided by its replicate's normaliser:
# a bins x replicates matrix. pair_m() gives the P^2 x replicates products
# m_a m_b (bootstrap).
replicate_counts <- function(pc, m, pair_m, error, weighted) {
  P <- count_n_patches(pc)
  is_auto <- pc$type == "auto"
  arr <- if (weighted) pc$patch_weighted else pc$patch_counts
  margins <- if (weighted) pc$patch_margins_weighted else pc$patch_margins
  if (is.null(arr) && error != "jackknife") {
    stop("The ", error, " needs each count's pairs by pair of patches ",
         "(`patch_counts`), but these counts keep only their margins ",
         "(`patch_margins`, what a jackknife needs, as wtheta() with error = ",
         "\"jackknife\" counts them). Count them with pair_counts() and ",
         "`patches`, or with wtheta(error = \"", error, "\").", call. = FALSE)
  }
  # the normaliser of each replicate, from the points (weights) per patch
  s1 <- if (weighted) pc$patch_w1 else pc$patch_n1
  s1_sq <- if (weighted) pc$patch_w1_sq else pc$patch_n1
  s2 <- if (weighted) pc$patch_w2 else pc$patch_n2
  pip <- identical(pc$pip$bitwise, "pairs")
  if (pip && (is.null(pc$patch_pip_norm) || pc$self_pairs)) {
    stop("The jackknife or bootstrap replicates of a count weighted by ",
         "bitwise words on both sides need its normalisation by pair of ",
         "patches (`patch_pip_norm`), which ",
         if (pc$self_pairs) "counts with self pairs do not have yet" else
           "this count does not carry", ".", call. = FALSE)
  }
  # sum_a m[a, r] s[a] for each replicate r; a jackknife's m (1 - diag(P),
  # so m^2 = m) in C, the same numbers as colSums() without its P x P
  # product (tens of microseconds a time, several times a count)
  msum <- if (error == "jackknife") {
    function(s, m) .Call(C_jackknife_sums, as.double(s))
  } else {
    function(s, m) colSums(m * s)
  }
  t1 <- msum(s1, m)
  total <- if (pip) {
    pip_replicate_norm(pc$patch_pip_norm, m, is_auto)
  } else if (!is_auto) t1 * msum(s2, m) else if (pc$self_pairs)
    t1^2 else (t1^2 - msum(s1_sq, m^2)) / 2
  if (error == "jackknife") {
    # leaving patch r out: all pairs, less row r and column r of S, plus
    # S[r, r] that both took away (m^T S m in O(P^2) a bin, in C), each
    # replicate's counts divided there by its total: no bins x P
    # intermediates on R's heap
    # (patch arrays are double already; storage.mode<- would copy them).
    # From the margins alone when the count kept only those: the same
    # numbers (src/core/resample.c)
    if (!is.null(margins)) {
      return(.Call(C_jackknife_margins, margins, is_auto, as.double(total)))
    }
    if (!is.double(arr)) storage.mode(arr) <- "double"
    return(.Call(C_jackknife_counts, arr, is_auto, as.double(total)))
  }
  nb <- dim(arr)[3L]
  flat <- matrix(arr, P * P, nb)
  counts <- crossprod(flat, pair_m())     # bins x replicates: m^T S m
  if (is_auto) {
    # S holds each pair between two patches at [a, b] and [b, a], the
    # pairs inside a patch once: add the diagonal again and halve
    diag_s <- flat[(seq_len(P) - 1L) * (P + 1L) + 1L, , drop = FALSE]
    counts <- (counts + crossprod(diag_s, m^2)) / 2
  }
  counts / rep(total, each = nrow(counts))   # sweep(), without aperm()
}

# The PIP normaliser (pycorr's "total", pip_norm() in R/pip.R) of each
# replicate of a count with bitwise words on both sides, from its parts by
# pair of patches N (`patch_pip_norm`, pip_patch_norm()): m^T N m, halved
# for the unordered pairs of an auto count. N's diagonal leaves out the
# self terms once, each patch's m_a^2 times in the product, as the
# weights' normaliser takes away m_a^2 sum w^2.
pip_replicate_norm <- function(N, m, is_auto) {
  total <- colSums(m * (N %*% m))
  if (is_auto) total / 2 else total
}
