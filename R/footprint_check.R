#' Do data and randoms share a footprint?
#'
#' Compares where the data are with where the randoms say they should be.
#' `wtheta()` runs it by default and warns when the two do not share a
#' footprint (`check_footprint = FALSE` turns that off).
#'
#' **Cells.** The sky is cut into equal-area cells, `2k` in right
#' ascension by `k` in sin(declination) (each of `41253 / (2 k^2)` square
#' degrees), with `k` a power of two. The grid used is the finest at which
#' the cells well covered by randoms (at least half the median random count
#' of the cells with randoms) expect a median of at least 25 data points,
#' stopping at 256 such cells; with fewer than 12 such cells, or fewer than
#' 500 data points, nothing is checked (verdict `"too few points"`).
#' In each well-covered cell `i`, `D_i` data are compared with
#' `E_i = R_i N_D / N_R` expected from its `R_i` randoms (of `N_R`), as the
#' log ratio `r_i = log((D_i + 0.5) / (E_i + 0.5))`.
#'
#' **Statistic.** Clustering makes counts in cells scatter far more than
#' Poisson, by an amount that depends on the unknown w(theta), so a
#' chi-squared against Poisson errors would cry wolf on any clustered
#' catalog, and a threshold on the size of the scatter would depend on the
#' clustering. What clustering does not do is move whole bands of the sky
#' together: a cluster or void fills a few cells, whereas randoms on the
#' wrong footprint change the ratio coherently along a whole band of
#' declination (randoms uniform in declination instead of sin(declination),
#' depth that changes with airmass) or of right ascension (scans,
#' seasons). So the log ratios are fitted with a two-way layout, one
#' effect per declination band and one per right-ascension strip of the
#' grid, and those effects are tested against the residual cell-to-cell
#' scatter, which holds the clustering and Poisson noise as measured on the
#' catalog itself: an F test. The verdict is `"mismatch"` when `p < 1e-6`
#' and some band or strip departs from the mean ratio by more than 20%
#' (large catalogs make small, harmless trends significant), or when more
#' than 1% of the data fall in cells with no randoms (data outside the
#' randoms' footprint); otherwise `"ok"`. Real structure larger than the
#' footprint can also move whole bands; the threshold is set so that the
#' classic teaching catalogs with randoms uniform in area pass (p about
#' 4e-4) while the same galaxies with their course randoms, uniform in
#' declination, fail (p about 2e-9), and simulated catalogs pass.
#' Points are counted without weights. Randoms beyond 2 x 10^6 are thinned
#' to every k-th row, which keeps the check cheap next to the pair counts.
#'
#' @param data,random Catalogs: data frames with right ascension and
#'   declination in degrees.
#' @param columns The names of the right-ascension and declination columns.
#' @return An object of class `footprint_check`, a list: `verdict`
#'   (`"ok"`, `"mismatch"` or `"too few points"`), `message` (one line),
#'   `n_cells`, `cell_area` (square degrees), `F`, `p_value`, `trend`
#'   (the fitted ratio of the band or strip furthest from the mean, over
#'   the mean) and `trend_where` (that band or strip), `outside` (share of data in
#'   cells without randoms), `largest` (a one-row data frame: the cell with
#'   the largest |log ratio|, its centre `ra`, `dec`, `data`, `expected`
#'   and `ratio`) and `cells` (a data frame of every cell used).
#' @seealso [wtheta()] with `check_footprint`, [random_catalog()].
#' @examples
#' sim <- simulate_catalog(5000, seed = 1)
#' footprint_check(sim, random_catalog(20000, like = sim, seed = 2))
#' # randoms uniform in declination rather than in area
#' bad <- data.frame(ra = runif(20000, 0, 20), dec = runif(20000, -10, 60))
#' sim2 <- simulate_catalog(5000, dec_range = c(-10, 60), seed = 1)
#' footprint_check(sim2, bad)
#' @export
footprint_check <- function(data, random, columns = c("ra", "dec")) {
  check_footprint_of(as_catalog(data, "data", columns),
                     as_catalog(random, "random", columns))
}

# randoms beyond 2e6 are read every thin-th row (in C, not copied)
footprint_thin <- function(r) max(1, ceiling(nrow(r) / 2e6))

# whether footprint_check() of d and r looks at cells: enough points
footprint_checkable <- function(d, r) {
  nrow(d) >= 500L && ceiling(nrow(r) / footprint_thin(r)) >= 500L
}

# footprint_check() of catalogs checked already (as_catalog(): ra, dec),
# which wtheta() has in hand; found: their cells from C when made already
# (footprint_checks() makes those of several samples against one set of
# randoms at once)
check_footprint_of <- function(d, r, found = NULL) {
  thin <- footprint_thin(r)
  out <- list(verdict = "too few points", message = "", n_cells = 0L,
              cell_area = NA_real_, F = NA_real_, p_value = NA_real_,
              trend = NA_real_, outside = NA_real_, largest = NULL,
              cells = NULL)
  class(out) <- "footprint_check"
  n_d <- nrow(d)
  n_r <- ceiling(nrow(r) / thin)
  if (!footprint_checkable(d, r)) {
    out$message <- sprintf("too few points to check (%d data, %d randoms)",
                           n_d, n_r)
    return(out)
  }
  # the grid's search (see Cells above), in C: every point's cell on the
  # finest grid (2^12 columns of ra by 2^11 rows of sin(dec)) once, then
  # the counts of each coarser level from those, until the search stops
  found <- found %||% .Call(C_footprint_cells, d$ra, d$dec, r$ra, r$dec,
                            thin, wtheta_threads())
  if (found$level < 0L) {
    out$message <- "too few points to check: fewer than 12 cells of 25"
    return(out)
  }
  E <- found$r * n_d / n_r
  well <- found$r > 0 & found$r >= 0.5 * stats::median(found$r[found$r > 0])
  lv <- list(j = found$level, id = found$id, D = found$d, R = found$r,
             E = E, well = well)
  k <- 2^lv$j
  ia <- lv$id %% (2 * k)
  iz <- lv$id %/% (2 * k)
  ra_c <- (ia + 0.5) / (2 * k) * 360
  dec_c <- asin((iz + 0.5) / k * 2 - 1) * 180 / pi
  w <- lv$well
  rr <- log((lv$D[w] + 0.5) / (lv$E[w] + 0.5))
  # rows (bands of sin(dec)) and columns (bands of ra) of the grid
  band <- int_factor(iz[w])
  strip <- int_factor(ia[w])
  X <- cbind(1, sum_coded(band), sum_coded(strip))
  # .lm.fit(): the QR fit that lm.fit() makes (its residuals and rank, the
  # same numbers), without the checks and the coefficients' names and
  # effects (half its time, six times a tomography)
  fit <- stats::.lm.fit(X, rr)
  rank <- fit$rank - 1L
  m <- length(rr)
  rss1 <- sum(fit$residuals^2)
  rss0 <- sum((rr - mean(rr))^2)
  df2 <- m - fit$rank
  Fv <- if (rank > 0 && df2 > 0 && rss1 > 0)
    ((rss0 - rss1) / rank) / (rss1 / df2) else NA_real_
  p <- if (is.na(Fv)) NA_real_ else
    stats::pf(Fv, rank, df2, lower.tail = FALSE)
  fitted <- rr - fit$residuals
  # the band or strip whose mean fitted ratio departs most from the mean
  mf <- mean(fitted)
  eff_b <- group_means(fitted, band) - mf
  eff_s <- group_means(fitted, strip) - mf
  if (max(abs(eff_b)) >= max(abs(eff_s))) {
    i <- as.numeric(names(eff_b)[which.max(abs(eff_b))])
    lim <- asin(c(i, i + 1) / k * 2 - 1) * 180 / pi
    trend_where <- sprintf("declination %.1f to %.1f", lim[1L], lim[2L])
    trend <- exp(eff_b[[which.max(abs(eff_b))]])
  } else {
    i <- as.numeric(names(eff_s)[which.max(abs(eff_s))])
    trend_where <- sprintf("right ascension %.1f to %.1f", i / (2 * k) * 360,
                           (i + 1) / (2 * k) * 360)
    trend <- exp(eff_s[[which.max(abs(eff_s))]])
  }
  outside <- sum(lv$D[lv$R == 0]) / n_d
  big <- which.max(abs(rr))
  largest <- plain_df(ra = ra_c[w][big], dec = dec_c[w][big],
                      data = lv$D[w][big], expected = lv$E[w][big],
                      ratio = exp(rr[big]))
  mismatch <- (!is.na(p) && p < 1e-6 && abs(log(trend)) > log(1.2)) ||
    outside > 0.01
  out$verdict <- if (mismatch) "mismatch" else "ok"
  out$n_cells <- m
  out$cell_area <- 4 * pi * (180 / pi)^2 / (2 * k^2)
  out$F <- Fv
  out$p_value <- p
  out$trend <- trend
  out$trend_where <- trend_where
  out$outside <- outside
  out$largest <- largest
  out$cells <- plain_df(ra = ra_c[w], dec = dec_c[w], data = lv$D[w],
                        random = lv$R[w], expected = lv$E[w],
                        log_ratio = rr)
  out$message <- footprint_message(out)
  out
}

# factor() of whole numbers 0, 1, ... (cell rows or columns), built
# directly: the levels sorted, as factor() sorts them, from a tally of the
# values (sort(unique()) and match() took a fifth of a check's time, six
# checks a tomography)
int_factor <- function(x) {
  seen <- tabulate(x + 1, max(x) + 1) > 0L
  f <- cumsum(seen)[x + 1]
  attr(f, "levels") <- as.character(which(seen) - 1L)
  class(f) <- "factor"
  f
}

# tapply(x, f, mean) as a named vector: mean() of each level's values,
# in level order (every level occurs). In C, one pass for every level, by
# mean()'s own arithmetic (a long double sum, then its correction), so
# the same numbers as vapply(split(x, f), mean, 0)
group_means <- function(x, f) {
  m <- .Call(C_group_means, as.double(x), unclass(f), nlevels(f))
  if (is.null(m)) return(vapply(split(x, f), mean, 0))
  names(m) <- levels(f)
  m
}

# data.frame() of unnamed vectors of one length, built directly
plain_df <- function(...) {
  x <- list(...)
  structure(x, class = "data.frame",
            row.names = c(NA_integer_, -length(x[[1L]])))
}

# the columns of a factor in sum-to-zero coding (what model.matrix() makes
# with contr.sum): level i < k is column i, level k is -1 in every column
sum_coded <- function(f) {
  k <- nlevels(f)
  if (k < 2L) return(matrix(0, length(f), 0L))
  i <- as.integer(f)
  m <- diag(k)[i, -k, drop = FALSE]
  m[i == k, ] <- -1
  m
}

footprint_message <- function(x) {
  big <- x$largest
  where <- sprintf("largest discrepancy: %s data where the randoms predict %s (ratio %.2f) in the cell at ra %.1f, dec %.1f",
                   format_n(big$data), format(big$expected, digits = 3),
                   big$ratio, big$ra, big$dec)
  if (x$verdict == "ok") {
    return(sprintf("no band of declination or strip of right ascension is off enough to flag (F = %.2f, p = %.2g over %d cells of %.3g deg^2; flagged at p < 1e-6 with a band 20%% off); %s",
                   x$F, x$p_value, x$n_cells, x$cell_area, where))
  }
  what <- if (x$outside > 0.01) {
    sprintf("%.1f%% of the data fall where there are no randoms",
            100 * x$outside)
  } else {
    sprintf("the data/random ratio changes across the footprint in whole bands of declination or right ascension (F = %.1f, p = %.2g over %d cells of %.3g deg^2); at %s it is %.2f times the mean",
            x$F, x$p_value, x$n_cells, x$cell_area, x$trend_where, x$trend)
  }
  paste0(what, "; ", where)
}

#' @export
print.footprint_check <- function(x, ...) {
  cat("<footprint_check> ", x$verdict, "\n", sep = "")
  if (nzchar(x$message)) cat("  ", x$message, "\n", sep = "")
  invisible(x)
}
