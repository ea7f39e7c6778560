#' A simulated fibre assignment, recorded as bitwise weights
#'
#' Runs a simple model of a spectroscopic survey's fibre assignment on a
#' target catalog many times and records, for each target, in which
#' realisations it got a fibre: the bitwise weights that pairwise inverse
#' probability (PIP) weights are made from (Bianchi & Percival 2017). Its
#' result is what [wtheta()]'s `bitwise` argument and
#' [angular_upweights()] take, for examples and tests; a real survey's
#' bitwise weights come from its own assignment code.
#'
#' The model: two fibres of one pass cannot lie closer than `radius`
#' degrees (fibre collisions). One realisation visits the targets of a
#' pass in a random order and gives each a fibre unless a target given a
#' fibre earlier in the same pass lies within `radius`; the targets left
#' without one enter the next pass, if they are covered by it. A target
#' with no other target within `radius` always gets a fibre. With one pass
#' no pair closer than `radius` is ever observed: such pairs have
#' probability zero, which no PIP weight can correct, and angular
#' upweights ([angular_upweights()]) are then the only correction left.
#' With two passes a close pair can be observed (one target in each pass),
#' so it has a known, non-zero probability. `passes` as a vector, one a
#' target, models a footprint where the tiles overlap in some places only.
#'
#' Realisation 0 is the observed one: column `observed`. Realisations 1 to
#' `realizations` are the bits, 32 a word: realisation `r` is bit
#' `(r - 1) %% 32` (the least significant bit is 0) of word
#' `(r - 1) %/% 32 + 1`, held as a whole number from 0 to 2^32 - 1 in a
#' double column `bits1`, `bits2`, .... The observed realisation is not
#' among the bits, as in pycorr: the number of realisations is then the
#' number of bits plus one, `bitwise`'s default `nrealizations`, and each
#' observed target has probability `(1 + popcount(bits)) / (realizations +
#' 1)` of a fibre.
#'
#' @param x The targets: a data frame with right ascension and declination
#'   columns in degrees, for example from [simulate_catalog()].
#' @param radius The fibre-collision radius in degrees, in (0, 10].
#' @param realizations The number of realisations recorded as bits besides
#'   the observed one: a multiple of 32 (a word each 32), at most 1024.
#' @param passes The number of passes: a whole number from 1 to 10, or a
#'   vector of them, one a target (the passes that cover it).
#' @param columns Names of the right ascension and declination columns.
#' @param seed An integer seed for a reproducible draw (the global random
#'   state is left as it was), or `NULL` to use the session's random state.
#' @return `x` with the columns `observed` (logical: a fibre in the
#'   observed realisation) and `bits1` to `bitsK` (`K = realizations / 32`)
#'   added, and the attribute `fibre_assignment`: a list with `radius`,
#'   `realizations`, `nrealizations` (`realizations + 1`), `passes`,
#'   `bitwise` (the names of the bit columns) and `n_close` (the number of
#'   target pairs closer than `radius`). The parent sample is the whole
#'   result; the fibre-assigned sample is `out[out$observed, ]`.
#' @seealso [angular_upweights()], and [wtheta()]'s `bitwise` for the
#'   weights.
#' @examples
#' sim <- simulate_catalog(2000, ra_range = c(0, 5), dec_range = c(0, 5),
#'                         sigma = 0.05, seed = 1)
#' fa <- simulate_fibre_assignment(sim, radius = 0.05, passes = 2,
#'                                 seed = 2)
#' mean(fa$observed)
#' attr(fa, "fibre_assignment")$bitwise
#' @export
simulate_fibre_assignment <- function(x, radius, realizations = 64,
                                      passes = 1, columns = c("ra", "dec"),
                                      seed = NULL) {
  cat <- as_catalog(x, "x", columns)
  n <- nrow(cat)
  check_number(radius, "radius")
  if (!(radius > 0 && radius <= 10)) {
    stop("`radius` must lie in (0, 10] degrees, not ", describe(radius), ".",
         call. = FALSE)
  }
  check_count(realizations, "realizations", max = 1024)
  if (realizations %% 32 != 0) {
    stop("`realizations` must be a multiple of 32 (the bits of whole ",
         "32-bit words), not ", describe(realizations), ".", call. = FALSE)
  }
  if (!is.numeric(passes) || !length(passes) %in% c(1L, n) ||
      anyNA(passes) || any(passes < 1 | passes > 10 |
                             passes != round(passes))) {
    stop("`passes` must be a whole number from 1 to 10, or a vector of them ",
         "as long as `x` (", format_n(n), "), not ", describe(passes), ".",
         call. = FALSE)
  }
  n_words <- realizations %/% 32
  added <- c("observed", paste0("bits", seq_len(n_words)))
  taken <- intersect(added, names(x))
  if (length(taken)) {
    stop("`x` already has a column ", dQuote(taken[1L], FALSE), ", which ",
         "simulate_fibre_assignment() adds; rename it first.", call. = FALSE)
  }
  check_seed(seed)
  passes <- rep_len(as.integer(passes), n)
  pairs <- close_pairs(cat$ra, cat$dec, radius)
  # each target's neighbours within the radius, for those that have any
  nb <- split(c(pairs[, 2L], pairs[, 1L]),
              factor(c(pairs[, 1L], pairs[, 2L]), levels = seq_len(n)))
  crowded <- which(lengths(nb) > 0L)
  words <- matrix(0, n, n_words)
  observed <- NULL
  with_seed(seed, {
    for (r in 0:realizations) {
      kept <- assign_fibres(n, nb, crowded, passes)
      if (r == 0L) {
        observed <- kept
      } else {
        k <- (r - 1L) %/% 32L + 1L
        words[, k] <- words[, k] + kept * 2^((r - 1L) %% 32L)
      }
    }
  })
  out <- x
  out$observed <- observed
  for (k in seq_len(n_words)) out[[paste0("bits", k)]] <- words[, k]
  attr(out, "fibre_assignment") <- list(
    radius = radius, realizations = as.integer(realizations),
    nrealizations = as.integer(realizations) + 1L,
    passes = if (all(passes == passes[1L])) passes[1L] else passes,
    bitwise = added[-1L], n_close = nrow(pairs))
  out
}

# One realisation of the fibre assignment: a logical vector, TRUE for the
# targets given a fibre. `nb`: each target's neighbours within the
# collision radius; `crowded`: the targets that have some (the others
# always get a fibre); `passes`: the passes covering each target. Each
# pass visits its candidates (crowded, without a fibre yet, covered) in a
# random order and keeps one unless a target kept earlier in that pass is
# its neighbour.
assign_fibres <- function(n, nb, crowded, passes) {
  kept <- rep(TRUE, n)
  kept[crowded] <- FALSE
  for (p in seq_len(max(passes[crowded], 0L))) {
    cand <- crowded[!kept[crowded] & passes[crowded] >= p]
    if (!length(cand)) break
    cand <- cand[sample.int(length(cand))]
    this <- logical(n)
    for (i in cand) {
      if (!any(this[nb[[i]]])) this[i] <- TRUE
    }
    kept <- kept | this
  }
  kept
}

# The pairs i < j of points closer than `radius` degrees: a two-column
# integer matrix. Unit vectors fall in cubic cells as wide as the chord of
# the radius, so that close points lie in the same or a neighbouring cell;
# each cell is matched against itself and its 26 neighbours.
close_pairs <- function(ra, dec, radius) {
  d2r <- pi / 180
  xyz <- cbind(cos(dec * d2r) * cos(ra * d2r), cos(dec * d2r) * sin(ra * d2r),
               sin(dec * d2r))
  chord <- 2 * sin(radius * d2r / 2)
  cell <- floor(xyz / chord)
  # cells from -m to m on each axis, encoded in one exact double
  m <- max(abs(cell)) + 2
  base <- 2 * m + 1
  key <- function(c) ((c[, 1L] + m) * base + (c[, 2L] + m)) * base +
    (c[, 3L] + m)
  k <- key(cell)
  ord <- order(k)
  ks <- k[ord]
  out <- list()
  offs <- as.matrix(expand.grid(-1:1, -1:1, -1:1))
  for (o in seq_len(nrow(offs))) {
    want <- key(sweep(cell, 2L, offs[o, ], `+`))
    from <- findInterval(want, ks, left.open = TRUE) + 1L
    to <- findInterval(want, ks)
    len <- pmax(to - from + 1L, 0L)
    if (!sum(len)) next
    i <- rep(seq_along(len), len)
    j <- ord[sequence(len[len > 0L], from[len > 0L])]
    keep <- i < j
    i <- i[keep]
    j <- j[keep]
    d2 <- rowSums((xyz[i, , drop = FALSE] - xyz[j, , drop = FALSE])^2)
    close <- d2 < chord^2
    out[[length(out) + 1L]] <- cbind(i[close], j[close])
  }
  pairs <- do.call(rbind, c(out, list(matrix(integer(), 0L, 2L))))
  storage.mode(pairs) <- "integer"
  pairs
}

#' Angular upweights from a parent and a fibre-assigned sample
#'
#' Pairs closer than a fibre-collision radius may never be observed
#' together in any realisation of the fibre assignment: their probability
#' is zero, and no PIP weight brings them back. Angular upweighting
#' (Percival & Bianchi 2017; pycorr's `D1D2_twopoint_weights`) scales the
#' pairs at each separation by how many the parent sample (all targets)
#' has there against how many the PIP-weighted fibre-assigned sample
#' recovers:
#' \deqn{w_{ang}(\theta) = \frac{DD_{parent}(\theta) / N_{parent}}{DD_{PIP}(\theta) / N_{PIP}}}{w_ang(theta) = (DD_parent / N_parent) / (DD_PIP / N_PIP)}
#' with each count normalised as [wtheta()] normalises DD (`N` the weighted
#' count of all pairs). With `random`, the D-R upweights instead:
#' `(D_parent R / N) / (D R_IIP / N)`, the fibre-assigned data weighted by
#' their individual inverse probabilities
#' `nrealizations / (noffset + popcount(b))`, as pycorr's
#' `D1R2_twopoint_weights`. Only the targets' positions on the sky enter,
#' which is why the parent sample can be used: it needs no redshifts.
#'
#' The result is what the `angular` argument of [wtheta()],
#' [wtheta_multi()] and [pair_counts()] takes. There a pair's weight is
#' interpolated linearly in `cos(theta)` between the rows' `theta`, the
#' centres of `bins`, and is 1 outside them: below the first centre and
#' above the last the pairs are not upweighted, so choose `bins` that
#' start below the smallest separation counted and reach past the
#' collision radius (above it the upweight is close to 1 anyway).
#'
#' A bin where the PIP-weighted count is zero has no upweight: if the
#' parent has no pairs there either, its weight is 1 (there is nothing to
#' correct); if the parent has pairs, it is an error that names the bins,
#' since their upweight would be infinite. Widen the bins there, or start
#' them higher.
#'
#' @param parent The parent sample: every target, whether or not it got a
#'   fibre (a catalog as [pair_counts()] takes it).
#' @param fibered The fibre-assigned sample, with its bitwise weights.
#' @param bins Bin edges in degrees, for example from [theta_bins()].
#' @param bitwise The names of `fibered`'s bitwise weight columns, or a
#'   matrix of its words (see [pair_counts()]); `NULL` when `fibered` was
#'   prepared by [prepare_catalog()] with its words. The parent's pairs
#'   count without them (a parent prepared with words is refused).
#' @param random `NULL` (the default) for the D-D upweights, or a random
#'   catalog for the D-R upweights.
#' @param nrealizations,noffset,default_value The PIP weight's settings,
#'   as in [pair_counts()].
#' @param weights `NULL` or the name of a column of individual weights; a
#'   catalog without that column has unit weights.
#' @inheritParams pair_counts
#' @return A data frame with one row a bin: `theta` (the bin's centre in
#'   degrees: geometric for log-spaced bins, the midpoint otherwise),
#'   `theta_lo`, `theta_hi` (degrees), `weight` (the upweight), `parent`
#'   and `fibered` (the two normalised counts). Attributes: `count`
#'   (`"DD"` or `"DR"`) and `pair_counts` (the two [pair_counts()]
#'   results).
#' @seealso [simulate_fibre_assignment()] for a simulated example, and the
#'   article "Error bars, weights and cross-correlations", section "Fibre
#'   assignment: PIP weights and angular upweights".
#' @examples
#' sim <- simulate_catalog(3000, ra_range = c(0, 5), dec_range = c(0, 5),
#'                         sigma = 0.05, seed = 1)
#' fa <- simulate_fibre_assignment(sim, radius = 0.05, passes = 2, seed = 2)
#' bins <- theta_bins(0.005, 0.5, n = 10, log = TRUE)
#' up <- angular_upweights(fa, fa[fa$observed, ], bins,
#'                         bitwise = c("bits1", "bits2"), threads = 1)
#' up[, c("theta", "weight")]
#' @export
angular_upweights <- function(parent, fibered, bins, bitwise = NULL,
                              random = NULL,
                              nrealizations = NULL, noffset = 1,
                              default_value = 0, weights = NULL,
                              backend = c("auto", "cpu", "cuda"),
                              threads = NULL, devices = NULL,
                              columns = c("ra", "dec"), progress = NULL) {
  carries <- function(x) inherits(x, "wtheta_prepared") && !is.null(x$bits)
  if (is.null(bitwise) && !carries(fibered)) {
    stop("`bitwise` is needed: the names of `fibered`'s bitwise weight ",
         "columns, or a matrix of its words (or `fibered` prepared with ",
         "them by prepare_catalog()).", call. = FALSE)
  }
  if (carries(parent)) {
    stop("`parent` is a catalog prepared with bitwise words, which would ",
         "weight its pairs; its pairs count unweighted by them: give it as ",
         "a data frame, or prepared without `bitwise`.", call. = FALSE)
  }
  edges <- bins_edges(bins)
  if (!is.null(weights) && (!is.character(weights) || length(weights) != 1L ||
                            is.na(weights))) {
    stop("`weights` must be NULL or the name of a column, not ",
         describe(weights), ".", call. = FALSE)
  }
  common <- list(bins = bins, backend = backend, threads = threads,
                 devices = devices, columns = columns, progress = progress)
  # a weight column absent from every catalog of a count is refused by
  # pair_counts(); here it only means unit weights
  has_w <- function(x) !is.null(weights) && weights %in% names(x)
  wt <- function(...) {
    if (any(vapply(list(...), has_w, TRUE))) weights
  }
  bits <- if (is.null(random) || is.null(bitwise)) bitwise else
    list(x = bitwise)
  pcp <- do.call(pair_counts, c(list(parent, y = random,
                                     weights = wt(parent, random)), common))
  pcf <- do.call(pair_counts, c(list(fibered, y = random,
                                     weights = wt(fibered, random),
                                     bitwise = bits,
                                     nrealizations = nrealizations,
                                     noffset = noffset,
                                     default_value = default_value),
                                common))
  norm <- function(pc) {
    if (!is.null(pc$weighted)) pc$weighted / pc$weighted_pairs else
      pc$counts / pc$n_pairs
  }
  np <- norm(pcp)
  nf <- norm(pcf)
  count <- if (is.null(random)) "DD" else "DR"
  nb <- length(edges) - 1L
  bad <- which(nf == 0 & np != 0)
  if (length(bad)) {
    stop("The PIP-weighted ", count, " of `fibered` is zero in ",
         length(bad), " bin(s) where the parent's is not (bin",
         if (length(bad) > 1L) "s", " ",
         paste(bad[seq_len(min(10L, length(bad)))], collapse = ", "),
         if (length(bad) > 10L) ", ...", ", from ",
         format(edges[bad[1L]], digits = 4), " degrees): their upweight ",
         "would be infinite. Widen those bins or start them higher.",
         call. = FALSE)
  }
  weight <- ifelse(nf == 0, 1, np / nf)
  structure(data.frame(theta = bin_centres(edges)$theta,
                       theta_lo = edges[-(nb + 1L)], theta_hi = edges[-1L],
                       weight = weight, parent = np, fibered = nf),
            count = count, pair_counts = list(parent = pcp, fibered = pcf))
}
