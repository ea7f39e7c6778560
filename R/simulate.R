#' Simulated catalogs for examples and tests
#'
#' `simulate_catalog()` draws a clustered catalog on a right-ascension /
#' declination box: a fraction `cluster_fraction` of the points lie in
#' Gaussian clusters of width `sigma` degrees around `n_clusters` centres
#' placed uniformly on the box, the rest are uniform. Its w(theta) is
#' positive at separations up to a few `sigma` and falls towards zero
#' beyond. `random_catalog()` draws points uniformly (uniform in area on the
#' sphere) on the same kind of box.
#'
#' @param n Number of points.
#' @param ra_range,dec_range The box, in degrees (`ra_range` within
#'   `[0, 360]`, `dec_range` within `[-90, 90]`).
#' @param n_clusters Number of cluster centres.
#' @param cluster_fraction Fraction of points in clusters, in `[0, 1]`.
#' @param sigma Cluster width in degrees.
#' @param like A catalog whose bounding box replaces `ra_range` and
#'   `dec_range`.
#' @param seed An integer seed for a reproducible draw (the global random
#'   state is left as it was), or `NULL` to use the session's random state.
#' @return A data frame with columns `ra` and `dec` in degrees.
#' @examples
#' sim <- simulate_catalog(1000, seed = 42)
#' ran <- random_catalog(2000, like = sim, seed = 7)
#' summary(sim)
#' @export
simulate_catalog <- function(n, ra_range = c(0, 20), dec_range = c(-10, 10),
                             n_clusters = max(1, round(n / 100)),
                             cluster_fraction = 0.5, sigma = 0.2,
                             seed = NULL) {
  check_count(n, "n")
  check_box(ra_range, dec_range)
  check_count(n_clusters, "n_clusters")
  check_number(cluster_fraction, "cluster_fraction")
  if (cluster_fraction < 0 || cluster_fraction > 1) {
    stop("`cluster_fraction` must lie in [0, 1], not ", cluster_fraction, ".",
         call. = FALSE)
  }
  check_number(sigma, "sigma")
  if (!(sigma > 0)) stop("`sigma` must be positive, not ", sigma, ".",
                         call. = FALSE)
  with_seed(seed, {
    n_cl <- round(n * cluster_fraction)
    uniform <- draw_box(n - n_cl, ra_range, dec_range)
    centres <- draw_box(n_clusters, ra_range, dec_range)
    ra <- numeric(0)
    dec <- numeric(0)
    # children scattered in the tangent plane; those leaving the box are
    # drawn again, so the footprint stays that of the randoms
    while (length(ra) < n_cl) {
      k <- n_cl - length(ra)
      parent <- sample.int(n_clusters, k, replace = TRUE)
      cd <- centres$dec[parent] + stats::rnorm(k, sd = sigma)
      cr <- centres$ra[parent] + stats::rnorm(k, sd = sigma) /
        cospi(centres$dec[parent] / 180)
      inside <- cd >= dec_range[1L] & cd <= dec_range[2L] &
        cr >= ra_range[1L] & cr <= ra_range[2L]
      ra <- c(ra, cr[inside])
      dec <- c(dec, cd[inside])
    }
    data.frame(ra = c(uniform$ra, ra), dec = c(uniform$dec, dec))
  })
}

#' @rdname simulate_catalog
#' @export
random_catalog <- function(n, ra_range = c(0, 20), dec_range = c(-10, 10),
                           like = NULL, seed = NULL) {
  check_count(n, "n")
  if (!is.null(like)) {
    like <- as_catalog(like, "like")
    ra_range <- range(like$ra)
    dec_range <- range(like$dec)
  }
  check_box(ra_range, dec_range)
  with_seed(seed, draw_box(n, ra_range, dec_range))
}

draw_box <- function(n, ra_range, dec_range) {
  s <- sinpi(dec_range / 180)
  data.frame(ra = stats::runif(n, ra_range[1L], ra_range[2L]),
             dec = asin(stats::runif(n, s[1L], s[2L])) * (180 / pi))
}

check_box <- function(ra_range, dec_range) {
  ok <- function(r, lo, hi) is.numeric(r) && length(r) == 2L &&
    all(is.finite(r)) && r[1L] < r[2L] && r[1L] >= lo && r[2L] <= hi
  if (!ok(ra_range, 0, 360)) {
    stop("`ra_range` must be two increasing numbers within [0, 360], not ",
         describe(ra_range), ".", call. = FALSE)
  }
  if (!ok(dec_range, -90, 90)) {
    stop("`dec_range` must be two increasing numbers within [-90, 90], not ",
         describe(dec_range), ".", call. = FALSE)
  }
}

with_seed <- function(seed, code) {
  if (is.null(seed)) return(code)
  check_number(seed, "seed")
  env <- globalenv()
  had <- exists(".Random.seed", envir = env, inherits = FALSE)
  old <- if (had) get(".Random.seed", envir = env, inherits = FALSE)
  on.exit(if (had) assign(".Random.seed", old, envir = env) else
    rm(".Random.seed", envir = env))
  set.seed(seed)
  code
}
