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
