# A brute-force reference for PIP pair counts (issue 37), in plain R and
# independent of the package's C: every pair of two small catalogs, its
# bin from the squared chord, its popcount from 0/1 bit matrices, its
# weight from pycorr's definitions:
#   w_i w_j * nrealizations / (noffset + popcount(b_i & b_j)) * ang(theta)
# (default_value where noffset + popcount is 0; nrealizations defaults to
# the number of bits + 1), ang interpolated linearly in cos(theta) inside
# the table and 1 outside. Where only one catalog has bits, each pair
# takes that object's own nrealizations / (noffset + popcount(b)).
#
# Normalisation (for wtheta(), h-pipr): pycorr's TwoPointCounter.wnorm
# with bitwise weights on both sides uses, by default
# (weight_attrs normalization = "total", nalways = 0), eq. 22 of
# arXiv:1912.08803: objects are binned by popcount c (summing their
# individual weights, W1[c] and W2[c]), and
#   wnorm = sum_{c1, c2} W1[c1] W2[c2] joint[c1][c2]  (cross)
#   wnorm = that with W2 = W1, less sum_i w_i^2 joint[c_i][c_i]  (auto,
#           ordered pairs i != j: halve it for unordered pairs)
# where joint (utils.joint_occurences(nrealizations, noffset)) is the
# expected pair factor nrealizations / c12 (default_value at c12 = 0) over
# the hypergeometric law of the popcount c12 of the AND of two words with
# c1 + noffset and c2 + noffset occurrences (noffset shared). Angular
# upweights do not enter wnorm. With bitwise weights on one side only,
# they become inverse probability weights nrealizations / (noffset +
# popcount(b)) times the individual weights, and wnorm is the usual
# product of weight sums. pair_counts() gives this as `weighted_pairs`
# (pip_norm(), R/pip.R); pip_brute_norm() below recomputes it by brute
# force over all realisation pairs' expectations.

# a matrix of 32-bit words (doubles 0..2^32-1), n x k, as 0/1 bits n x 32k
pip_bits01 <- function(words) {
  words <- as.matrix(words)
  out <- matrix(0, nrow(words), 32 * ncol(words))
  for (k in seq_len(ncol(words))) {
    v <- words[, k]
    for (b in 0:31) out[, 32 * (k - 1) + b + 1] <- (v %/% 2^b) %% 2
  }
  out
}

pip_unit <- function(cat) {
  r <- pi / 180
  cbind(cos(cat$dec * r) * cos(cat$ra * r), cos(cat$dec * r) * sin(cat$ra * r),
        sin(cat$dec * r))
}

# every pair's squared chord, as the package's contract computes it
pip_d2 <- function(a, b) {
  dx <- outer(a[, 1], b[, 1], "-")
  dy <- outer(a[, 2], b[, 2], "-")
  dz <- outer(a[, 3], b[, 3], "-")
  (dx * dx + dy * dy) + dz * dz
}

# x, y: data frames (ra, dec) (y NULL: auto, pairs i < j); edges in
# degrees; wx, wy: weights or NULL; bx, by: n x k matrices of 32-bit words
# (doubles) or NULL; px, py: patch numbers 1..P or NULL. Returns counts,
# weighted, theta_sum (degrees) per bin, and with patches patch_counts and
# patch_weighted (P x P x bins, auto pairs of different patches in both
# [a, b] and [b, a], as pair_counts()).
pip_brute_counts <- function(x, y = NULL, edges, wx = NULL, wy = NULL,
                             bx = NULL, by = NULL, nrealizations = NULL,
                             noffset = 1, default_value = 0, angular = NULL,
                             px = NULL, py = NULL, P = 0) {
  auto <- is.null(y)
  if (auto) {
    y <- x
    wy <- wx
    by <- bx
    py <- px
  }
  a <- pip_unit(x)
  b <- pip_unit(y)
  d2 <- pip_d2(a, b)
  wx <- wx %||% rep(1, nrow(x))
  wy <- wy %||% rep(1, nrow(y))
  f <- outer(wx, wy)
  nbits <- max(32 * NCOL(bx) * !is.null(bx), 32 * NCOL(by) * !is.null(by))
  nreal <- nrealizations %||% (nbits + 1)
  inv <- function(cnt) {
    den <- noffset + cnt
    ifelse(den == 0, default_value, nreal / pmax(den, 1))
  }
  if (!is.null(bx) && !is.null(by)) {
    f <- f * inv(pip_bits01(bx) %*% t(pip_bits01(by)))
  } else if (!is.null(bx)) {
    f <- f * inv(rowSums(pip_bits01(bx)))
  } else if (!is.null(by)) {
    f <- f * rep(inv(rowSums(pip_bits01(by))), each = nrow(x))
  }
  cosv <- 1 - d2 / 2
  if (!is.null(angular)) {
    o <- order(cos(angular$theta * pi / 180))
    ang <- stats::approx(cos(angular$theta * pi / 180)[o],
                         angular$weight[o], xout = as.vector(cosv),
                         rule = 1)$y
    ang[is.na(ang)] <- 1
    f <- f * matrix(ang, nrow(d2))
  }
  theta <- 2 * asin(pmin(sqrt(d2) / 2, 1)) * 180 / pi
  s2 <- function(t) {
    s <- sin(t * pi / 180 / 2)
    (4 * s) * s
  }
  c2 <- s2(edges)
  c2[edges >= 180] <- Inf
  # 0: below; length(edges): at or above the last edge
  bin <- matrix(findInterval(d2, c2), nrow(d2))
  keep <- if (auto) upper.tri(d2) else matrix(TRUE, nrow(d2), ncol(d2))
  nb <- length(edges) - 1L
  inb <- keep & bin >= 1 & bin <= nb
  out <- list(
    counts = tabulate(bin[inb], nb),
    weighted = vapply(seq_len(nb), function(k) sum(f[inb & bin == k]), 0),
    theta_sum = vapply(seq_len(nb), function(k)
      sum((f * theta)[inb & bin == k]), 0),
    weighted_below = sum(f[keep & bin == 0]))
  if (!is.null(px)) {
    pc <- pw <- array(0, c(P, P, nb))
    idx <- which(inb, arr.ind = TRUE)
    for (r in seq_len(nrow(idx))) {
      i <- idx[r, 1]
      j <- idx[r, 2]
      k <- bin[i, j]
      pc[px[i], py[j], k] <- pc[px[i], py[j], k] + 1
      pw[px[i], py[j], k] <- pw[px[i], py[j], k] + f[i, j]
      if (auto && px[i] != py[j]) {
        pc[py[j], px[i], k] <- pc[py[j], px[i], k] + 1
        pw[py[j], px[i], k] <- pw[py[j], px[i], k] + f[i, j]
      }
    }
    out$patch_counts <- pc
    out$patch_weighted <- pw
  }
  out
}

# pycorr's "total" normalisation by brute force: every pair's expected
# factor under the hypergeometric law of its AND's popcount given both
# popcounts (eq. 21-22 of arXiv:1912.08803), summed over the pairs (i < j
# for auto); a check of pip_norm()'s binned sum
pip_brute_norm <- function(wx, bx, wy = NULL, by = NULL, nrealizations,
                           noffset = 1, default_value = 0) {
  auto <- is.null(by)
  c1 <- rowSums(pip_bits01(bx)) + noffset
  c2 <- if (auto) c1 else rowSums(pip_bits01(by)) + noffset
  wy <- if (auto) wx else wy
  N <- nrealizations
  o <- noffset
  g <- function(a, b) {
    k <- seq.int(max(o, a + b - N), min(a, b))
    p <- choose(a - o, k - o) * choose(N - a, b - k) / choose(N - o, b - o)
    sum(ifelse(k == 0, default_value, N / pmax(k, 1)) * p)
  }
  tot <- 0
  for (i in seq_along(c1)) for (j in seq_along(c2)) {
    if (auto && j <= i) next
    tot <- tot + wx[i] * wy[j] * g(c1[i], c2[j])
  }
  tot
}

# a small catalog with words: n points in a patch of sky, k 32-bit words
# per object with about `fill` of their bits set (doubles 0..2^32-1)
pip_catalog <- function(n, k = 2, fill = 0.5, seed = 1) {
  set.seed(seed)
  cat <- data.frame(ra = runif(n, 10, 25), dec = runif(n, -8, 8),
                    w = runif(n, 0.5, 2))
  for (j in seq_len(k)) {
    bits <- matrix(stats::rbinom(n * 32, 1, fill), n, 32)
    cat[[paste0("b", j)]] <- as.vector(bits %*% 2^(0:31))
  }
  cat
}

# 64-bit words as bit64::integer64 from their low and high 32-bit words
# (doubles 0..2^32-1): the 8 bytes of each, little-endian, read as the
# double that integer64 stores them in (no integer64 arithmetic, which
# would overflow where the top bit is set)
pip_integer64 <- function(lo, hi) {
  s32 <- function(v) as.integer(ifelse(v >= 2^31, v - 2^32, v))
  ints <- as.vector(rbind(s32(lo), s32(hi)))
  r <- writeBin(ints, raw(), endian = "little")
  structure(readBin(r, "double", length(lo), endian = "little"),
            class = "integer64")
}
