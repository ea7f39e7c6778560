# Brute-force weighted counts: the slots of ref_slots(), each pair adding
# w_i * w_j (self pairs w_i^2), summed in double precision.
ref_weighted <- function(x, y = NULL, edges, wx, wy = NULL, self_pairs = FALSE) {
  a <- ref_unit(x)
  b <- if (is.null(y)) a else ref_unit(y)
  if (is.null(y)) wy <- wx
  d2 <- outer(a$x, b$x, "-")^2 + outer(a$y, b$y, "-")^2
  d2 <- d2 + outer(a$z, b$z, "-")^2
  ww <- outer(wx, wy)
  if (is.null(y) && !self_pairs) {
    keep <- upper.tri(d2)
    d2 <- d2[keep]
    ww <- ww[keep]
  }
  slot <- findInterval(as.vector(d2), ref_c2(edges))
  vapply(seq_len(length(edges) + 1L), function(s) sum(ww[slot + 1L == s]), 0)
}
