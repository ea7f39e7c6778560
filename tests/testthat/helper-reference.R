# Brute-force pair counts in plain R, following the exactness contract of
# ?wtheta-package step by step in double precision. Returns slot counts:
# below the first edge, one per bin, at or beyond the last edge.
ref_unit <- function(cat) {
  ra <- (cat$ra %% 360) * (pi / 180)
  dec <- cat$dec * (pi / 180)
  cd <- cos(dec)
  list(x = cd * cos(ra), y = cd * sin(ra), z = sin(dec))
}

ref_c2 <- function(edges) {
  s <- sin(edges * (pi / 180) / 2)
  ifelse(edges >= 180, Inf, 4 * s * s)
}

ref_slots <- function(x, y = NULL, edges, self_pairs = FALSE) {
  a <- ref_unit(x)
  b <- if (is.null(y)) a else ref_unit(y)
  dx <- outer(a$x, b$x, "-")
  dy <- outer(a$y, b$y, "-")
  dz <- outer(a$z, b$z, "-")
  d2 <- dx^2 + dy^2
  d2 <- d2 + dz^2
  if (is.null(y) && !self_pairs) d2 <- d2[upper.tri(d2)]
  slot <- findInterval(as.vector(d2), ref_c2(edges))
  tabulate(slot + 1L, nbins = length(edges) + 1L)
}

# pair_counts() result as slot counts, comparable with ref_slots()
slots_of <- function(pc) c(pc$n_below, pc$counts, pc$n_above)

random_sky <- function(n, ra = c(0, 360), dec = c(-90, 90)) {
  s <- sinpi(dec / 180)
  data.frame(ra = stats::runif(n, ra[1], ra[2]),
             dec = asin(stats::runif(n, s[1], s[2])) * (180 / pi))
}
