# PIP weights (issue 37): bitwise weights of fibre-assignment realisations
# and angular upweights, with pycorr's definitions (cosmodesi/pycorr,
# twopoint_counter.py: get_inverse_probability_weight(), _set_weights(),
# normalization()). A pair (i, j) weighs
#   w_i w_j * nrealizations / (noffset + popcount(b_i & b_j)) * ang(theta)
# (default_value where noffset + popcount is 0); where only one catalog
# of a cross count has bitwise words, its objects take their own inverse
# probability nrealizations / (noffset + popcount(b)) into their weights
# (pycorr does the same) and the pair has no bitwise factor. ang(theta) is
# the angular table interpolated linearly in cos(theta) inside its range
# and 1 outside (numpy's interp(left = 1, right = 1) on cos(theta), as
# pycorr). The engines (src/cpu/kernels_pip.c, src/cuda/kernel_exact.cuh)
# take the factor from a table indexed by the popcount and interpolate
# the angular table in squared chords (linear in cos theta).

# pair_counts()'s documentation of PIP weights (merged into its page)
#' @name pair_counts
#' @rdname pair_counts
#' @section PIP weights: Spectroscopic surveys observe only some targets;
#'   pairwise inverse-probability (PIP) weights (Bianchi & Percival 2017)
#'   correct the pair counts, with pycorr's definitions. With `bitwise`,
#'   each object carries words of bits, one bit per fibre-assignment
#'   realisation (set: observed in it), and a pair adds
#'   `w_i * w_j * nrealizations / (noffset + popcount(b_i & b_j))` to
#'   `weighted` (`default_value` where `noffset + popcount` is 0), times
#'   the angular upweight with `angular`. `counts` stay the plain pair
#'   counts. Where only one catalog of a cross count has bitwise words
#'   (randoms, typically), each of its objects takes its own inverse
#'   probability `nrealizations / (noffset + popcount(b))` into its weight,
#'   as pycorr does. With bitwise words on both sides, `weighted_pairs` is
#'   pycorr's default normalisation of PIP counts (eq. 22 of Bianchi &
#'   Verde 2020, arXiv:1912.08803: the expected pair weight of objects
#'   binned by their number of set bits), not the product of weight sums.
#'   Angular upweights (`angular`, a table of `theta` in degrees and
#'   `weight`) multiply each pair's weight by the weight interpolated
#'   linearly in `cos(theta)` between the table's angles, 1 outside them.
#'   The counts are exact on both engines: on the CPU in an AVX-512 kernel
#'   of their own where the CPU has AVX-512, otherwise one pair at a time
#'   in C with the POPCNT instruction where the CPU has it (they cost more
#'   than plain counts: no float prefilter, no bulk counting), on the GPU
#'   with `__popc` in its weighted kernel (each pair's bin decided in float
#'   under a proven margin, pairs near an edge redone in double; without
#'   individual weights, pairs counted by bin and popcount, the weight
#'   sums made from those counts); the grid prunes
#'   by the last edge but counts no cell pairs in bulk (a pair weight does
#'   not factorise over a cell pair; on the CPU, without `angular`, the
#'   node pairs that bulk counting would add to one bin are visited for
#'   their popcounts only, with no angle or bin lookup per pair), and
#'   `weighted_above` is then `NA` (the pairs beyond the last edge are not
#'   visited). `mean_theta`
#'   averages the angles weighted by the whole pair weight. Catalogs
#'   prepared by [prepare_catalog()] carry the words given to its
#'   `bitwise`, and their counts are PIP-weighted without `bitwise` here.
#'
#' @param bitwise Bitwise weights (PIP, see the section PIP weights):
#'   `NULL` (none), the names of the columns that hold them (looked up in
#'   every catalog; a catalog without any of them has none), a matrix
#'   (the words of `x`, one row per object), or a list with elements `x`
#'   and `y` of either. Each column is a word of 32 realisations, whole
#'   numbers from 0 to 2^32 - 1 (doubles or integers), or of 64 as
#'   `bit64::integer64`; at most 1024 realisations.
#' @param nrealizations The number of realisations in the PIP weight's
#'   numerator: `NULL` (the default) for the number of bits plus one, as
#'   pycorr; otherwise a whole number.
#' @param noffset The offset added to the popcount in the denominator: a
#'   whole number, 1 by default; 0 gives the zero-truncated estimator.
#' @param default_value The weight of a pair whose denominator
#'   `noffset + popcount` is 0 (only with `noffset = 0`): 0 by default.
#' @param angular Angular upweights: `NULL`, or a data frame with `theta`
#'   (degrees, strictly increasing, from 0 to 180) and `weight` (finite),
#'   at least two rows; interpolated linearly in `cos(theta)` inside the
#'   table and 1 outside. They apply to every pair of this count (without
#'   `bitwise` too).
NULL

# The checked PIP settings of a call, or NULL when neither `bitwise` nor
# `angular` is given and no catalog of `users` (the user's catalogs, named
# by argument) is prepared with bitwise words: list(bitwise (the spec,
# resolved per catalog by call_bitwise()), nrealizations (NULL: the words'
# bits + 1, per count), noffset, default_value, angular (data frame theta,
# weight, or NULL)).
pip_settings <- function(bitwise, nrealizations, noffset, default_value,
                         angular, users = list()) {
  carried <- any(vapply(users, function(u)
    inherits(u, "wtheta_prepared") && !is.null(u$bits), TRUE))
  if (is.null(bitwise) && is.null(angular) && !carried) {
    if (!is.null(nrealizations)) {
      stop("`nrealizations` (", describe(nrealizations), ") applies to ",
           "bitwise weights, and `bitwise` is NULL.", call. = FALSE)
    }
    return(NULL)
  }
  whole <- function(v, arg, lo, hi) {
    if (!is.numeric(v) || length(v) != 1L || is.na(v) || v != round(v) ||
        v < lo || v > hi) {
      stop("`", arg, "` must be a whole number from ", lo, " to ",
           format(hi, scientific = FALSE), ", not ", describe(v), ".",
           call. = FALSE)
    }
    as.double(v)
  }
  if (!is.null(nrealizations)) {
    nrealizations <- whole(nrealizations, "nrealizations", 1, 2^31 - 1)
  }
  noffset <- whole(noffset, "noffset", 0, 2^31 - 1)
  if (!is.numeric(default_value) || length(default_value) != 1L ||
      !is.finite(default_value)) {
    stop("`default_value` must be one finite number, not ",
         describe(default_value), ".", call. = FALSE)
  }
  list(bitwise = bitwise, nrealizations = nrealizations, noffset = noffset,
       default_value = as.double(default_value),
       angular = check_angular(angular))
}

# the angular upweights: NULL, or a data frame (or list) with `theta`
# (degrees, strictly increasing, in [0, 180]) and `weight` (finite), at
# least two rows
check_angular <- function(angular) {
  if (is.null(angular)) return(NULL)
  if (!is.list(angular) || is.null(angular$theta) ||
      is.null(angular$weight)) {
    stop("`angular` must be a data frame with columns `theta` (degrees) ",
         "and `weight`, not ", describe(angular), ".", call. = FALSE)
  }
  th <- angular$theta
  w <- angular$weight
  if (!is.numeric(th) || !is.numeric(w) || length(th) != length(w) ||
      length(th) < 2L) {
    stop("`angular$theta` and `angular$weight` must be numeric vectors of ",
         "one length, at least 2, not ", length(th), " and ", length(w),
         " values.", call. = FALSE)
  }
  bad <- which(!is.finite(th) | th < 0 | th > 180)
  if (length(bad)) {
    stop("`angular$theta` must lie in [0, 180] degrees; value ", bad[1L],
         " is ", th[bad[1L]], ".", call. = FALSE)
  }
  dec <- which(diff(th) <= 0)
  if (length(dec)) {
    stop("`angular$theta` must be strictly increasing; value ", dec[1L] + 1L,
         " (", th[dec[1L] + 1L], ") follows ", th[dec[1L]], ".",
         call. = FALSE)
  }
  bad <- which(!is.finite(w))
  if (length(bad)) {
    stop("`angular$weight` must be finite; value ", bad[1L], " is ",
         w[bad[1L]], ".", call. = FALSE)
  }
  data.frame(theta = as.double(th), weight = as.double(w))
}

# The bitwise words of each catalog of a call: a list by catalog of n x k
# integer matrices (the 32 bits of each word, bitwise_words()) or NULL.
# spec: a character vector of column names (looked up in every catalog;
# one without any of them has no words), a matrix (words of `x`), or a
# list named by catalog of either. Prepared catalogs carry no words.
call_bitwise <- function(spec, users, prepared) {
  nms <- names(users)
  # prepared catalogs carry theirs (aligned with their points)
  carried <- lapply(nms, function(nm)
    if (prepared[[nm]]) users[[nm]]$bits)
  if (is.null(spec)) {
    if (all(vapply(carried, is.null, TRUE))) return(NULL)
    return(stats::setNames(carried, nms))
  }
  if (is.matrix(spec) || is.data.frame(spec)) spec <- list(x = spec)
  if (is.character(spec)) {
    spec <- stats::setNames(rep(list(spec), length(nms)), nms)
    named <- TRUE
  } else if (is.list(spec)) {
    extra <- setdiff(names(spec), nms)
    if (is.null(names(spec)) || any(!nzchar(names(spec))) || length(extra)) {
      stop("`bitwise` must be column names, a matrix, or a list named by ",
           "catalog (", paste(nms, collapse = ", "), ")",
           if (length(extra)) paste0("; ", dQuote(extra[1L], FALSE),
                                     " is not one of them"), ".",
           call. = FALSE)
    }
    named <- FALSE
  } else {
    stop("`bitwise` must be column names, a matrix, or a list named by ",
         "catalog, not ", describe(spec), ".", call. = FALSE)
  }
  out <- lapply(nms, function(nm) {
    v <- spec[[nm]]
    if (prepared[[nm]] && (is.null(v) || named)) return(users[[nm]]$bits)
    if (is.null(v)) return(NULL)
    if (prepared[[nm]]) {
      stop("`bitwise` applies to catalogs given unprepared; `", nm, "` is ",
           "a prepared catalog: give its bitwise weights to ",
           "prepare_catalog().", call. = FALSE)
    }
    x <- users[[nm]]
    n <- NROW(x)
    if (is.character(v)) {
      cols <- colnames(x)
      has <- v %in% cols
      if (named && !any(has)) return(NULL)
      if (!all(has)) {
        stop("`bitwise` names column ", dQuote(v[!has][1L], FALSE),
             ", which `", nm, "` does not have (its columns: ",
             paste(cols, collapse = ", "), ").", call. = FALSE)
      }
      dup <- v[duplicated(v)]
      if (length(dup)) {
        stop("`bitwise` names column ", dQuote(dup[1L], FALSE), " twice.",
             call. = FALSE)
      }
      vals <- lapply(v, function(cl) if (is.data.frame(x)) x[[cl]] else
        x[, cl])
      where <- paste0("column ", dQuote(v, FALSE), " of `", nm, "`")
    } else if (is.matrix(v) || is.data.frame(v)) {
      if (NROW(v) != n) {
        stop("`bitwise` for `", nm, "` must have one row per object (", n,
             "), not ", NROW(v), ".", call. = FALSE)
      }
      vals <- if (is.data.frame(v)) as.list(v) else
        lapply(seq_len(ncol(v)), function(k) v[, k])
      where <- paste0("column ", seq_along(vals), " of `bitwise` for `", nm,
                      "`")
    } else {
      stop("`bitwise$", nm, "` must be column names or a matrix, not ",
           describe(v), ".", call. = FALSE)
    }
    if (!length(vals)) {
      stop("`bitwise` gives no column for `", nm, "`.", call. = FALSE)
    }
    bitwise_words(vals, where)
  })
  out <- stats::setNames(out, nms)
  if (all(vapply(out, is.null, TRUE))) {
    stop("`bitwise` (", paste(format(spec[[1L]]), collapse = ", "),
         ") names columns that no catalog has",
         if (any(unlist(prepared))) paste0(" (prepared catalogs carry the ",
                                           "words given to prepare_catalog())"),
         ".", call. = FALSE)
  }
  out
}

# Columns of bitwise weights as 32-bit words (an n x k integer matrix
# holding each word's 32 bits): doubles or integers, whole numbers from 0
# to 2^32 - 1, one word each; bit64::integer64, two words each (low, high
# 32 bits: the popcount of an AND is the same). `where` names each column.
# Each column is checked in C (C_bitwise_bad: its first bad row) and
# converted in one C pass (C_bitwise_words): no per-object R work.
bitwise_words <- function(vals, where) {
  is64 <- vapply(vals, inherits, TRUE, "integer64")
  cols <- lapply(seq_along(vals), function(k) {
    v <- vals[[k]]
    if (is64[k]) {
      if (!requireNamespace("bit64", quietly = TRUE)) {
        stop(where[k], " is a bit64::integer64 column, and bit64 is not ",
             "installed.", call. = FALSE)
      }
      na <- .Call(C_bitwise_bad, v, TRUE)
      if (na > 0) {
        stop(where[k], " holds NA at row ", na, "; bitwise weights ",
             "must be 64-bit words.", call. = FALSE)
      }
      return(v)
    }
    if (!is.numeric(v) || is.factor(v)) {
      stop(where[k], " must hold whole numbers from 0 to 2^32 - 1 (32-bit ",
           "words) or bit64::integer64, not ", describe(v), ".",
           call. = FALSE)
    }
    v <- as.double(v)
    bad <- .Call(C_bitwise_bad, v, FALSE)
    if (bad > 0) {
      stop(where[k], " must hold whole numbers from 0 to 2^32 - 1 (32-bit ",
           "words); row ", bad, " is ", format(v[bad], digits = 17),
           ".", call. = FALSE)
    }
    v
  })
  .Call(C_bitwise_words, cols, as.logical(is64))
}

# the pair factor by popcount c = 0..max_c: nrealizations / (noffset + c),
# default_value where the denominator is 0
pip_by_count <- function(max_c, nrealizations, noffset, default_value) {
  den <- noffset + seq.int(0, max_c)
  ifelse(den == 0, default_value, nrealizations / pmax(den, 1))
}

# Resolves the settings of a call (pip_settings()) for one count with
# weights wa, wb and words ba, bb (NULL: none; bb and wb NULL in an auto
# count): a list with the weights and words the engine gets (one-sided
# words folded into their catalog's weights), fold_a / fold_b (whether
# they were), `c` (what the engine gets: list(n_words, by_count, theta,
# weight), or NULL when no factor remains) and `record` (the settings the
# result carries).
pip_resolve <- function(pip, wa, wb, ba, bb, is_auto) {
  if (is_auto) bb <- ba
  nw <- function(b) if (is.null(b)) 0L else ncol(b)
  fold_a <- fold_b <- FALSE
  words <- 0L
  if (!is.null(ba) && !is.null(bb)) {
    if (nw(ba) != nw(bb)) {
      stop("`bitwise` gives ", nw(ba), " 32-bit words per object of `x` and ",
           nw(bb), " of `y`; a pair needs the same realisations on both ",
           "sides.", call. = FALSE)
    }
    words <- nw(ba)
  }
  n_bits <- 32 * max(nw(ba), nw(bb))
  nreal <- pip$nrealizations %||% (n_bits + 1)
  # the weights times each object's own inverse probability, in one C
  # pass (popcounts and the product)
  iip <- function(b, w) {
    .Call(C_pip_fold, b, if (!is.null(w)) as.double(w),
          pip_by_count(32 * ncol(b), nreal, pip$noffset, pip$default_value))
  }
  if (!is_auto && xor(is.null(ba), is.null(bb))) {
    if (!is.null(ba)) {
      wa <- iip(ba, wa)
      fold_a <- TRUE
    } else {
      wb <- iip(bb, wb)
      fold_b <- TRUE
    }
    ba <- bb <- NULL
  }
  if (words == 0L) ba <- bb <- NULL
  ang <- pip$angular
  c_pip <- if (words > 0L || !is.null(ang)) {
    list(as.integer(words),
         if (words > 0L) pip_by_count(32 * words, nreal, pip$noffset,
                                      pip$default_value) else numeric(0),
         if (!is.null(ang)) ang$theta else numeric(0),
         if (!is.null(ang)) ang$weight else numeric(0))
  }
  record <- list(bitwise = if (words > 0L) "pairs" else
                   if (fold_a || fold_b) "individual" else "none",
                 n_bits = if (n_bits > 0) n_bits else NA_real_,
                 nrealizations = if (n_bits > 0) nreal else NA_real_,
                 noffset = pip$noffset, default_value = pip$default_value,
                 angular = ang)
  list(wa = wa, wb = if (is_auto) NULL else wb, ba = ba,
       bb = if (is_auto) NULL else bb, fold_a = fold_a, fold_b = fold_b,
       key = paste(nreal, pip$noffset, pip$default_value),
       c = c_pip, record = record,
       words = words, nreal = nreal)
}

# the catalog handle, within `handle`, of its catalog with folded weights
# (pip_resolve(): one-sided words) for settings `key`; NULL stays NULL
pip_handle <- function(handle, key) {
  if (is.null(handle)) return(NULL)
  nm <- paste0("pip:", key)
  h <- handle$pip_handles[[nm]]
  if (is.null(h)) {
    h <- new_catalog_handle()
    if (is.null(handle$pip_handles)) handle$pip_handles <- list()
    handle$pip_handles[[nm]] <- h
  }
  h
}

# pycorr's expected inverse counts (eq. 21 of arXiv:1912.08803,
# utils.joint_occurences()): for popcounts c1, c2 in noffset..nrealizations
# (counting the current realisation's bit through noffset), the expected
# pair factor over the realisations, a symmetric matrix indexed [c1 - noffset
# + 1, c2 - noffset + 1]; derived here from its definition: the popcount
# c12 of the AND of two words with c1 and c2 bits (noffset of them shared
# and always set) follows the hypergeometric law
#   P(c12) = choose(c1 - o, c12 - o) choose(N - c1, c2 - c12) /
#            choose(N - o, c2 - o),   N = nrealizations, o = noffset,
# and the factor is N / c12 (default_value where c12 is 0).
pip_joint <- function(nreal, noffset, default_value) {
  key <- paste(nreal, noffset, default_value)
  hit <- pip_joint_cache[[key]]
  if (!is.null(hit)) return(hit)
  out <- pip_joint_of(nreal, noffset, default_value)
  # a few settings at most per session: keep them
  if (length(ls(pip_joint_cache)) >= 8L) {
    rm(list = ls(pip_joint_cache), envir = pip_joint_cache)
  }
  assign(key, out, envir = pip_joint_cache)
  out
}

# pip_joint()'s matrices by settings, computed once per process
pip_joint_cache <- new.env(parent = emptyenv())

pip_joint_of <- function(nreal, noffset, default_value) {
  cs <- seq.int(noffset, nreal)
  m <- length(cs)
  out <- matrix(0, m, m)
  for (a in seq_len(m)) {
    c1 <- cs[a]
    for (b in seq_len(a)) {
      c2 <- cs[b]
      c12 <- seq.int(max(noffset, c1 + c2 - nreal), min(c1, c2))
      p <- exp(lchoose(c1 - noffset, c12 - noffset) +
                 lchoose(nreal - c1, c2 - c12) -
                 lchoose(nreal - noffset, c2 - noffset))
      f <- ifelse(c12 == 0, default_value, nreal / pmax(c12, 1))
      out[a, b] <- out[b, a] <- sum(f * p)
    }
  }
  out
}

# The objects of one catalog of a count with bitwise words on both sides,
# binned by popcount c (the index c + 1 of pip_joint(), K = nrow(joint)
# bins) in one C pass (C_pip_bins, src/r/pip.c): list(max: the largest
# popcount; w, w2: the sums of the weights w (NULL: units) and of their
# squares by popcount; with patch numbers p (1..P), patch_w, patch_w2: the
# same by patch and popcount, P x K matrices). An object with more bits
# than nrealizations - noffset is an error.
pip_bins <- function(w, b, p, P, K, nreal, noffset) {
  s <- .Call(C_pip_bins, b, if (!is.null(w)) as.double(w), p,
             as.integer(P), as.integer(K))
  if (s$max >= K) {
    stop("an object has ", s$max, " bits set, more than ",
         "`nrealizations` - `noffset` (", nreal, " - ", noffset, "); set ",
         "`nrealizations` to the number of realisations.", call. = FALSE)
  }
  s
}

# The normalisation of a count with bitwise words on both sides, as
# pycorr's default ("total", eq. 22 of arXiv:1912.08803, with nalways = 0):
# the objects binned by popcount c (their individual weights summed, W1[c],
# W2[c]: s1$w, s2$w of pip_bins(); s2 NULL for an auto count); an object of
# popcount c has c + noffset occurrences, the index of pip_joint(); the
# normalisation is sum over c1, c2 of W1[c1] W2[c2] joint[c1, c2], less,
# for an auto count, the self pairs sum_i w_i^2 joint[c_i, c_i] (from the
# squares binned by popcount, s1$w2), halved (these counts are of
# unordered pairs); with self_pairs, the self pairs' own weights
# w_i^2 N / (noffset + c_i) (`own`: pip_by_count() of every popcount) are
# added back instead. Angular upweights are not part of it (nor in pycorr).
pip_norm <- function(s1, s2, is_auto, self_pairs, joint, own) {
  w1 <- s1$w
  if (is_auto) {
    cross <- sum(w1 * (joint %*% w1))
    self <- sum(s1$w2 * diag(joint))
    if (!self_pairs) return((cross - self) / 2)
    cross - self + sum(s1$w2 * own)
  } else {
    sum(w1 * (joint %*% s2$w))
  }
}

# A count's result with its PIP settings (pip_resolve(), or NULL: none):
# `pip` records them (bitwise: "pairs", "individual" (one-sided words
# folded into the weights) or "none"; n_bits, nrealizations, noffset,
# default_value, angular); with words on both sides `weighted_pairs` is
# pycorr's normalisation (pip_norm()) and, with patches (pa, pb: patch
# numbers 1..n_patches), `patch_pip_norm` its parts by pair of patches
# (pip_patch_norm()); `weighted_above` is NA when the grid pruned pairs
# beyond the last edge (their pair weights were not computed). wa, wb,
# ba, bb: as counted.
pip_result <- function(pc, pip, wa, wb, ba, bb, is_auto, self_pairs,
                       pa = NULL, pb = NULL, n_patches = 0L) {
  if (is.null(pip)) return(pc)
  pc$pip <- pip$record
  if (pip$words > 0L && !is.null(ba)) {
    noffset <- pip$record$noffset
    joint <- pip_joint(pip$nreal, noffset, pip$record$default_value)
    K <- nrow(joint)
    # each catalog's objects binned once, for both normalisations
    s1 <- pip_bins(wa, ba, pa, n_patches, K, pip$nreal, noffset)
    s2 <- if (!is_auto) pip_bins(wb, bb, pb, n_patches, K, pip$nreal,
                                 noffset)
    pc$weighted_pairs <- pip_norm(s1, s2, is_auto, self_pairs, joint,
                                  pip_by_count(K - 1L, pip$nreal, noffset,
                                               pip$record$default_value))
    if (!is.null(pa)) {
      pc$patch_pip_norm <- pip_patch_norm(s1, s2, is_auto, joint)
    }
  }
  if (isTRUE(pc$pairs_skipped > 0)) pc$weighted_above <- NA_real_
  pc
}

# The parts of pycorr's PIP normalisation by pair of patches: a P x P
# matrix N with N[a, b] the sum over ordered pairs (i in patch a, j in
# patch b, i != j) of w_i w_j joint[c_i, c_j] (pip_joint(); c: popcount
# index). Cross: the normalisation of the objects of patches A of x and B
# of y is sum(N[A, B]); auto (N symmetric): sum(N[A, A]) / 2 for
# unordered pairs. So a jackknife replicate leaving patch r out has
# sum(N[-r, -r]) (halved for auto) where plain weights have
# (t1^2 - sum w^2) / 2 or t1 t2. s1, s2: pip_bins() of each catalog with
# its patch numbers (s2 NULL for auto): the weights (and their squares)
# binned by patch and popcount.
pip_patch_norm <- function(s1, s2, is_auto, joint) {
  W1 <- s1$patch_w
  if (is_auto) {
    N <- W1 %*% joint %*% t(W1)
    diag(N) <- diag(N) - drop(s1$patch_w2 %*% diag(joint))
    N
  } else {
    W1 %*% joint %*% t(s2$patch_w)
  }
}
