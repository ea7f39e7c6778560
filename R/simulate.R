#' Simulated catalogs with a known w(theta)
#'
#' `simulate_catalog()` draws a clustered catalog from a Thomas
#' (Neyman-Scott) process on the sphere, seen through a footprint: a
#' right-ascension / declination box and, optionally, a mask. A fraction
#' `cluster_fraction` of the points are children of cluster centres
#' ("parents") placed uniformly on the sky around the footprint, each child
#' offset from its parent by a two-dimensional Gaussian of width `sigma`
#' degrees per axis in the tangent plane; the other points are uniform on
#' the footprint. `random_catalog()` draws points uniformly in area on a
#' footprint, by default that of a simulated catalog given as `like`.
#' [model_wtheta()] gives the w(theta) the model predicts, to hold a
#' measurement against.
#'
#' Parents are Poisson distributed with surface density
#' `n_clusters / area(box)` over the box widened by `5 * sigma` on every
#' side, so that a cluster near an edge loses the children that fall
#' outside, as a real survey does, and the clustering is the same
#' everywhere on the footprint. Each parent has a Poisson number of
#' children; the total inside the footprint is fixed at
#' `round(cluster_fraction * n)` (children are drawn, those outside the
#' footprint or the mask are dropped, until there are enough). The model
#' does not depend on the mean number of children per parent, so fixing the
#' total does not change it.
#'
#' With `fixed_n = FALSE` the catalog is a stationary Thomas process
#' instead: `n` is only the expected number of points. Uniform points are
#' Poisson with mean `(1 - cluster_fraction) * n`, and each parent has a
#' Poisson number of children of mean `cluster_fraction * n / (n_p A)`
#' (`n_p` the parent density, `A` the footprint's area), all kept where
#' they fall inside the footprint. Use it for realisations whose scatter
#' resampling errors should match: with a fixed total, a realisation with
#' fewer clusters has richer clusters everywhere, a global fluctuation of w
#' that no patch of one catalog can see.
#'
#' @param n Number of points.
#' @param ra_range,dec_range The box, in degrees. `ra_range` is
#'   `c(from, to)` within `[0, 360]`, going east from `from` to `to`; a
#'   box that crosses right ascension 0 has `from > to`, for example
#'   `c(350, 10)`; `c(0, 360)` is the whole circle. `dec_range` is two
#'   increasing numbers within `[-90, 90]`.
#' @param mask `NULL`, a function of `ra` and `dec` (vectors in degrees)
#'   returning a logical vector (`TRUE` where a point is kept; the
#'   footprint is the box where the mask is `TRUE`), or a `healpix_map`
#'   from [read_healpix_map()] or [healpix_map()]: the footprint is then
#'   its pixels above 0, `ra_range` and `dec_range` are not used, and "the
#'   box" is the map's bounding box in right ascension and declination.
#'   Randoms from a map are exactly `n` points, each pixel chosen with
#'   probability proportional to its area (or value, `weighted = TRUE`) and
#'   the point uniform in area inside it (the centre of one of its
#'   sub-pixels at nside 2^29, 0.4 milliarcseconds across, drawn
#'   uniformly); the draw is made in C from a 64-bit seed taken from R's
#'   random stream, so `seed` (or [set.seed()]) makes it reproducible on
#'   any number of threads.
#' @param n_clusters Expected number of cluster centres in the box, at most
#'   the larger of `n` and 10^6 (the centres are drawn in memory).
#' @param cluster_fraction Fraction of points in clusters, in `[0, 1]`.
#' @param sigma Cluster width in degrees (standard deviation per axis of
#'   the Gaussian offsets, at most 5).
#' @param fixed_n `TRUE` (the default): exactly `n` points. `FALSE`: a
#'   stationary Thomas process with `n` points expected (see Details).
#' @param like A catalog whose footprint the randoms follow: a result of
#'   `simulate_catalog()` gives its box and mask (the other arguments are
#'   then ignored); any other catalog gives its bounding box.
#' @param weighted With a `healpix_map` as `mask`: `FALSE` (the default),
#'   uniform in area on the pixels above 0; `TRUE`, a density proportional
#'   to the map's values (a completeness map).
#' @param seed An integer seed for a reproducible draw (the global random
#'   state is left as it was), or `NULL` to use the session's random state.
#' @return A data frame with columns `ra` (in `[0, 360)`) and `dec`, in
#'   degrees. Its attribute `footprint` is a list with `ra_range`,
#'   `dec_range`, `mask`, `box_area` and `area` (the footprint's area in
#'   square degrees; with a mask function, a Monte Carlo estimate; with a
#'   map, exact) and, with a map, `healpix` (the map) and `weighted`. For
#'   `simulate_catalog()` the attribute `model` is a list with `process`
#'   (`"thomas"`), `sigma`, `parent_density` (per square degree),
#'   `n_clusters`, `cluster_fraction` (as drawn: clustered points / `n`) and
#'   `n_parents` (parents drawn on the widened box). The class is
#'   `c("wtheta_catalog", "data.frame")`. `[` keeps the attributes only
#'   while every row is kept, in order, with both `ra` and `dec`: a subset
#'   of rows (say `sim[sim$ra < 5, ]`) may no longer fill the footprint nor
#'   follow the model, so it is returned as a plain data frame; pass the
#'   whole catalog as `like` to draw randoms on its footprint.
#' @seealso [model_wtheta()]
#' @examples
#' sim <- simulate_catalog(2000, seed = 42)
#' ran <- random_catalog(4000, like = sim, seed = 7)
#' attr(sim, "model")$parent_density
#' # a box across right ascension 0 with a round hole
#' hole <- function(ra, dec) {
#'   ((ra + 180) %% 360 - 180)^2 + dec^2 > 3^2
#' }
#' sim <- simulate_catalog(1000, ra_range = c(350, 10), mask = hole, seed = 1)
#' range((sim$ra + 180) %% 360 - 180)
#' @export
simulate_catalog <- function(n, ra_range = c(0, 20), dec_range = c(-10, 10),
                             n_clusters = max(1, round(n / 100)),
                             cluster_fraction = 0.5, sigma = 0.2,
                             mask = NULL, fixed_n = TRUE, seed = NULL) {
  check_count(n, "n")
  check_flag(fixed_n, "fixed_n")
  check_box(ra_range, dec_range)
  check_mask(mask)
  check_number(n_clusters, "n_clusters")
  if (!(n_clusters > 0)) {
    stop("`n_clusters` must be positive, not ", n_clusters, ".",
         call. = FALSE)
  }
  if (n_clusters > max(n, 1e6)) {
    stop("`n_clusters` must be at most the larger of `n` and 10^6 (",
         format_n(max(n, 1e6)), "), not ", describe(n_clusters), ".",
         call. = FALSE)
  }
  check_number(cluster_fraction, "cluster_fraction")
  if (cluster_fraction < 0 || cluster_fraction > 1) {
    stop("`cluster_fraction` must lie in [0, 1], not ", cluster_fraction, ".",
         call. = FALSE)
  }
  check_number(sigma, "sigma")
  if (!(sigma > 0 && sigma <= 5)) {
    stop("`sigma` must lie in (0, 5] degrees, not ", sigma, ".",
         call. = FALSE)
  }
  with_seed(seed, {
    fp <- make_footprint(ra_range, dec_range, mask)
    density <- n_clusters / fp$box_area
    ext <- widen_box(fp, 5 * sigma)
    n_parents <- stats::rpois(1L, density * box_area(ext$ra_lo, ext$ra_width,
                                                      ext$dec_range))
    if (fixed_n) {
      n_cl <- round(n * cluster_fraction)
      uniform <- draw_footprint(n - n_cl, fp)
      # at least one parent when there are children to place
      if (n_cl > 0) n_parents <- max(1L, n_parents)
      children <- draw_children(n_cl, n_parents, ext, fp, sigma)
      fraction <- n_cl / n
    } else {
      uniform <- draw_footprint(stats::rpois(1L, (1 - cluster_fraction) * n),
                                fp)
      mu <- cluster_fraction * n / (density * fp$area)
      children <- draw_thomas_children(n_parents, mu, ext, fp, sigma)
      fraction <- cluster_fraction
    }
    out <- data.frame(ra = c(uniform$ra, children$ra),
                      dec = c(uniform$dec, children$dec))
    model <- list(process = "thomas", sigma = sigma,
                  parent_density = density, n_clusters = n_clusters,
                  cluster_fraction = fraction, n_parents = n_parents,
                  fixed_n = fixed_n)
    as_wtheta_catalog(out, footprint = fp, model = model)
  })
}

#' @rdname simulate_catalog
#' @export
random_catalog <- function(n, ra_range = c(0, 20), dec_range = c(-10, 10),
                           mask = NULL, like = NULL, seed = NULL,
                           weighted = FALSE) {
  check_count(n, "n")
  check_flag(weighted, "weighted")
  if (weighted && !inherits(mask, "healpix_map")) {
    stop("`weighted = TRUE` draws with density proportional to a HEALPix ",
         "map's values; it needs `mask` to be a healpix_map, not ",
         describe(mask), ".", call. = FALSE)
  }
  fp <- if (!is.null(like)) attr(like, "footprint", exact = TRUE)
  if (!is.null(like) && is.null(fp)) {
    like <- as_catalog(like, "like")
    ra_range <- range(like$ra)
    dec_range <- range(like$dec)
  }
  if (is.null(fp)) {
    check_box(ra_range, dec_range)
    check_mask(mask)
  }
  with_seed(seed, {
    if (is.null(fp)) fp <- make_footprint(ra_range, dec_range, mask, weighted)
    as_wtheta_catalog(draw_footprint(n, fp), footprint = fp)
  })
}

#' The w(theta) of a simulated catalog's model
#'
#' For a catalog from [simulate_catalog()], the angular correlation function
#' that its Thomas process predicts:
#' \deqn{w(\theta) = f^2 \frac{\exp(-\theta^2 / (4\sigma^2))}{4\pi\sigma^2 n_p}}{w(theta) = f^2 exp(-theta^2 / (4 sigma^2)) / (4 pi sigma^2 n_p)}
#' with `f` the fraction of points in clusters, `sigma` the cluster width
#' and `n_p` the parent surface density (per square degree, `theta` and
#' `sigma` in degrees).
#'
#' Derivation: two children of one parent are offset from it by
#' independent Gaussians of variance `sigma^2` per axis, so their
#' separation is Gaussian with variance `2 sigma^2` per axis, of density
#' `exp(-theta^2 / (4 sigma^2)) / (4 pi sigma^2)` at separation `theta`.
#' With Poisson parents of density `n_p`, pairs from one cluster add that
#' density divided by `n_p` to the pair correlation, which is `w`.
#' Uniform points are uncorrelated with everything, so a fraction `f` of
#' clustered points scales `w` by `f^2`; dropping points at random (the
#' footprint, the fixed total) leaves `w` unchanged.
#'
#' Approximations: the sky is flat on the scale of `sigma` (offsets are
#' laid out along great circles from the parent: the error is of order
#' `sigma^2` in radians squared, below 1e-4 for `sigma` under half a
#' degree); `theta` is small compared with the footprint. An estimate on a
#' finite footprint is lowered by the integral constraint, the mean of `w`
#' over the pairs of the footprint; to first order (clusters much smaller
#' than the footprint) it is `f^2 / (n_p A)` for a footprint of area `A`,
#' one over the number of clusters on it times `f^2`. With
#' `integral_constraint = TRUE` that constant is subtracted, which is what
#' an estimate on the catalog is expected to give (Landy-Szalay, to first
#' order in it).
#'
#' @param x A catalog from [simulate_catalog()] (it carries the model in
#'   its attributes).
#' @param theta Angles in degrees.
#' @param integral_constraint Subtract the integral constraint of the
#'   catalog's footprint (see Details).
#' @return A numeric vector, w at each `theta`.
#' @seealso [simulate_catalog()], [plot.wtheta()] with `model =`.
#' @examples
#' sim <- simulate_catalog(5000, seed = 1)
#' model_wtheta(sim, c(0.05, 0.2, 0.5, 1))
#' @export
model_wtheta <- function(x, theta, integral_constraint = FALSE) {
  m <- attr(x, "model", exact = TRUE)
  if (is.null(m) || !identical(m$process, "thomas")) {
    stop("`x` must be a catalog from simulate_catalog() (it has no ",
         "\"model\" attribute; subsetting rows drops it).", call. = FALSE)
  }
  if (!is.numeric(theta) || anyNA(theta) || any(theta < 0)) {
    stop("`theta` must be angles in degrees, >= 0, not ", describe(theta),
         ".", call. = FALSE)
  }
  check_flag(integral_constraint, "integral_constraint")
  f2 <- m$cluster_fraction^2
  s2 <- m$sigma^2
  w <- f2 * exp(-theta^2 / (4 * s2)) / (4 * pi * s2 * m$parent_density)
  if (integral_constraint) {
    w <- w - f2 / (m$parent_density * attr(x, "footprint")$area)
  }
  w
}

# a data frame of draws as a wtheta_catalog with attributes: class<- and
# attr<-, not structure(), whose attributes() expands the compact row names
# into an integer vector of n (0.4 GB at 10^8 points, and its time)
as_wtheta_catalog <- function(x, ...) {
  class(x) <- c("wtheta_catalog", "data.frame")
  extra <- list(...)
  for (nm in names(extra)) attr(x, nm) <- extra[[nm]]
  x
}

# --- footprints -----------------------------------------------------------

# A footprint: the box as (ra_lo, ra_width) so that boxes across ra = 0
# need no special case, its area and the mask.
make_footprint <- function(ra_range, dec_range, mask, weighted = FALSE) {
  if (inherits(mask, "healpix_map")) return(map_footprint(mask, weighted))
  width <- if (ra_range[1L] < ra_range[2L]) ra_range[2L] - ra_range[1L] else
    ra_range[2L] + 360 - ra_range[1L]
  fp <- list(ra_range = ra_range, dec_range = dec_range, mask = mask,
             ra_lo = ra_range[1L] %% 360, ra_width = width)
  fp$box_area <- box_area(fp$ra_lo, width, dec_range)
  fp$area <- fp$box_area
  if (!is.null(mask)) {
    # Monte Carlo estimate of the unmasked share (standard error below 0.3%)
    probe <- draw_box(1e5, fp$ra_lo, width, dec_range)
    keep <- apply_mask(mask, probe$ra, probe$dec)
    if (!any(keep)) {
      stop("`mask` removes the whole box: no point of ", length(keep),
           " drawn on it is kept.", call. = FALSE)
    }
    fp$area <- fp$box_area * mean(keep)
  }
  fp
}

# area of a box in square degrees
box_area <- function(ra_lo, ra_width, dec_range) {
  ra_width * (180 / pi) * diff(sinpi(dec_range / 180))
}

in_box <- function(ra, dec, fp) {
  (ra - fp$ra_lo) %% 360 <= fp$ra_width &
    dec >= fp$dec_range[1L] & dec <= fp$dec_range[2L]
}

in_fp <- function(ra, dec, fp) {
  keep <- in_box(ra, dec, fp)
  if (!is.null(fp$mask) && any(keep)) {
    keep[keep] <- apply_mask(fp$mask, ra[keep], dec[keep])
  }
  if (!is.null(fp$healpix) && any(keep)) {
    keep[keep] <- on_map(fp$healpix, ra[keep], dec[keep])
  }
  keep
}

apply_mask <- function(mask, ra, dec) {
  keep <- mask(ra, dec)
  if (!is.logical(keep) || length(keep) != length(ra) || anyNA(keep)) {
    stop("`mask` must return a logical vector without NA, one value per ",
         "point; it returned ", describe(keep), " for ", length(ra),
         " points.", call. = FALSE)
  }
  keep
}

# uniform in area on a box: ra uniform, sin(dec) uniform
draw_box <- function(n, ra_lo, ra_width, dec_range) {
  s <- sinpi(dec_range / 180)
  data.frame(ra = (ra_lo + stats::runif(n, 0, ra_width)) %% 360,
             dec = asin(stats::runif(n, s[1L], s[2L])) * (180 / pi))
}

# n points uniform on a footprint (box, then mask by rejection)
draw_footprint <- function(n, fp) {
  if (!is.null(fp$healpix)) return(draw_map(n, fp$healpix,
                                            isTRUE(fp$weighted)))
  if (is.null(fp$mask)) return(draw_box(n, fp$ra_lo, fp$ra_width,
                                        fp$dec_range))
  share <- fp$area / fp$box_area
  ra <- dec <- numeric(0)
  while (length(ra) < n) {
    k <- ceiling((n - length(ra)) / share * 1.1) + 10
    p <- draw_box(k, fp$ra_lo, fp$ra_width, fp$dec_range)
    keep <- apply_mask(fp$mask, p$ra, p$dec)
    ra <- c(ra, p$ra[keep])
    dec <- c(dec, p$dec[keep])
  }
  data.frame(ra = ra[seq_len(n)], dec = dec[seq_len(n)])
}

# the box widened by `margin` degrees on every side (the whole circle in
# right ascension when the widened box nears a pole or wraps around)
widen_box <- function(fp, margin) {
  dec <- c(max(-90, fp$dec_range[1L] - margin),
           min(90, fp$dec_range[2L] + margin))
  cos_min <- cospi(max(abs(dec)) / 180)
  ra_margin <- if (cos_min > 1e-6) margin / cos_min else Inf
  if (fp$ra_width + 2 * ra_margin >= 360) {
    list(ra_lo = 0, ra_width = 360, dec_range = dec)
  } else {
    list(ra_lo = (fp$ra_lo - ra_margin) %% 360,
         ra_width = fp$ra_width + 2 * ra_margin, dec_range = dec)
  }
}

# n children of n_parents parents uniform on the widened box `ext`, offset by
# Gaussians of width sigma (degrees, per axis) along great circles, kept
# when on the footprint `fp`.
draw_children <- function(n, n_parents, ext, fp, sigma) {
  if (n == 0) return(list(ra = numeric(0), dec = numeric(0)))
  if (n_parents == 0) {
    stop("no cluster centre was drawn: raise `n_clusters`.", call. = FALSE)
  }
  parents <- draw_box(n_parents, ext$ra_lo, ext$ra_width, ext$dec_range)
  pa <- parents$ra * (pi / 180)
  pd <- parents$dec * (pi / 180)
  ra <- dec <- numeric(0)
  share <- 0.5
  tries <- 0L
  while (length(ra) < n) {
    tries <- tries + 1L
    if (tries > 200L) {
      stop("the clusters hardly reach the footprint: raise `n_clusters` ",
           "or `sigma`, or widen the footprint.", call. = FALSE)
    }
    k <- ceiling((n - length(ra)) / share * 1.1) + 10
    i <- sample.int(n_parents, k, replace = TRUE)
    ch <- scatter_children(pa[i], pd[i], sigma)
    keep <- in_fp(ch$ra, ch$dec, fp)
    share <- max(mean(keep), 1e-3)
    ra <- c(ra, ch$ra[keep])
    dec <- c(dec, ch$dec[keep])
  }
  list(ra = ra[seq_len(n)], dec = dec[seq_len(n)])
}

# a stationary Thomas process: Poisson(mu) children for every parent, kept
# where they fall inside the footprint
draw_thomas_children <- function(n_parents, mu, ext, fp, sigma) {
  parents <- draw_box(n_parents, ext$ra_lo, ext$ra_width, ext$dec_range)
  i <- rep(seq_len(n_parents), stats::rpois(n_parents, mu))
  ch <- scatter_children(parents$ra[i] * (pi / 180),
                         parents$dec[i] * (pi / 180), sigma)
  keep <- in_fp(ch$ra, ch$dec, fp)
  list(ra = ch$ra[keep], dec = ch$dec[keep])
}

# children around parents at (pa, pd) radians: offsets of Gaussian width
# sigma per axis, distance rho (Rayleigh) and bearing phi (uniform), laid
# out along a great circle; degrees out
scatter_children <- function(pa, pd, sigma) {
  k <- length(pa)
  rho <- sigma * (pi / 180) * sqrt(-2 * log(stats::runif(k)))
  phi <- stats::runif(k, 0, 2 * pi)
  sd <- sin(pd)
  cd <- cos(pd)
  sin_dec <- pmin(1, pmax(-1, sd * cos(rho) + cd * sin(rho) * cos(phi)))
  cra <- pa + atan2(sin(phi) * sin(rho) * cd, cos(rho) - sd * sin_dec)
  list(ra = (cra * (180 / pi)) %% 360, dec = asin(sin_dec) * (180 / pi))
}

check_box <- function(ra_range, dec_range) {
  ok <- function(r, lo, hi) is.numeric(r) && length(r) == 2L &&
    all(is.finite(r)) && all(r >= lo & r <= hi)
  if (!ok(ra_range, 0, 360) || ra_range[1L] == ra_range[2L]) {
    stop("`ra_range` must be two different numbers within [0, 360] (from ",
         "> to for a box across 0), not ", describe(ra_range), ".",
         call. = FALSE)
  }
  if (!ok(dec_range, -90, 90) || !(dec_range[1L] < dec_range[2L])) {
    stop("`dec_range` must be two increasing numbers within [-90, 90], not ",
         describe(dec_range), ".", call. = FALSE)
  }
}

check_mask <- function(mask) {
  if (inherits(mask, "healpix_map")) {
    need_healpix("A HEALPix `mask`")
    return(invisible(NULL))
  }
  if (!is.null(mask) && !is.function(mask)) {
    stop("`mask` must be NULL, a healpix_map or a function(ra, dec) ",
         "returning a logical vector, not ", describe(mask), ".",
         call. = FALSE)
  }
}

with_seed <- function(seed, code) {
  if (is.null(seed)) return(code)
  check_seed(seed)
  env <- globalenv()
  had <- exists(".Random.seed", envir = env, inherits = FALSE)
  old <- if (had) get(".Random.seed", envir = env, inherits = FALSE)
  on.exit(if (had) assign(".Random.seed", old, envir = env) else
    rm(".Random.seed", envir = env))
  set.seed(seed)
  code
}

# `[` on a simulated catalog: the footprint and model stay only while the
# catalog is whole (all rows in order, ra and dec kept); anything else is a
# plain data frame, since a subset of rows need not fill the footprint nor
# follow the model.
#' @export
`[.wtheta_catalog` <- function(x, ...) {
  a <- attributes(x)
  plain <- x
  class(plain) <- "data.frame"
  out <- plain[...]
  if (!is.data.frame(out)) return(out)
  n <- nrow(plain)
  whole <- nrow(out) == n && identical(kept_rows(out, n), seq_len(n)) &&
    all(c("ra", "dec") %in% names(out))
  if (!whole) {
    attr(out, "footprint") <- NULL
    attr(out, "model") <- NULL
    return(out)
  }
  attr(out, "footprint") <- a$footprint
  attr(out, "model") <- a$model
  class(out) <- a$class
  out
}
