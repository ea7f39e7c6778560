# The argument checks shared by the exported functions: each stops with
# a message that names the argument and shows the value it refused.
# Checks of one reader or one concept only (files, HEALPix orders, boxes,
# masks, threads, block options) stay beside it.

# TRUE or FALSE, nothing else
check_flag <- function(x, arg) {
  if (!isTRUE(x) && !isFALSE(x)) {
    stop("`", arg, "` must be TRUE or FALSE, not ", describe(x), ".",
         call. = FALSE)
  }
}

# a whole number from 1 to `max` (by default the largest R integer),
# checked before anything coerces it: as.integer(3e9) is NA. `why` says
# where a smaller `max` comes from.
check_count <- function(n, arg, max = .Machine$integer.max, why = NULL) {
  check_number(n, arg)
  if (n < 1 || n != round(n)) {
    stop("`", arg, "` must be a whole number >= 1, not ", describe(n), ".",
         call. = FALSE)
  }
  if (n > max) {
    stop("`", arg, "` must be at most ", format_n(max), why, ", not ",
         describe(n), ".", call. = FALSE)
  }
}

check_number <- function(x, arg) {
  if (!is.numeric(x) || length(x) != 1L || !is.finite(x)) {
    stop("`", arg, "` must be a single finite number, not ", describe(x), ".",
         call. = FALSE)
  }
}

# NULL or a whole number set.seed() takes as it is: an R integer other than
# NA (set.seed(1.5) would silently use 1, set.seed(3e9) fail)
check_seed <- function(seed) {
  if (is.null(seed)) return(invisible(NULL))
  check_number(seed, "seed")
  if (seed != round(seed) || abs(seed) > .Machine$integer.max) {
    stop("`seed` must be NULL or a whole number from -",
         .Machine$integer.max, " to ", .Machine$integer.max, ", not ",
         describe(seed), ".", call. = FALSE)
  }
  invisible(as.integer(seed))
}

check_weights <- function(v, where) {
  if (!is.numeric(v) || is.object(v) && !inherits(v, "numeric")) {
    stop(where, " must be numeric weights, not ", describe(v), ".",
         call. = FALSE)
  }
  v <- as.double(v)
  bad <- which(!is.finite(v))
  if (length(bad)) {
    stop(where, " has a non-finite weight (", format(v[bad[1L]]),
         ") in row ", bad[1L], ".", call. = FALSE)
  }
  v
}

# Weights whose products could overflow a double are refused: every
# weighted count and normaliser is a sum of at most N^2 products of two
# weights, N the points of all catalogs, so max |w|^2 N^2 must be finite.
check_weight_products <- function(w) {
  if (is.null(w)) return(invisible())
  big <- vapply(w, function(v) max(abs(v)), 0)
  n <- sum(lengths(w))
  if (!is.finite(max(big)^2 * n^2)) {
    k <- which.max(big)
    stop("`weights` are too large: the largest, ", format(big[k]), " (of `",
         names(w)[k], "`), squared and summed over up to ", format(n^2),
         " pairs overflows a double; divide each catalog's weights by a ",
         "common factor (w(theta) does not change).", call. = FALSE)
  }
  invisible()
}

# wtheta(): the weighted total of all pairs of each count (its normaliser)
# must not be 0, or w is NaN in every bin
check_weight_totals <- function(w, is_cross, self_pairs) {
  if (is.null(w)) return(invisible())
  s <- vapply(w, sum, 0)
  s2 <- vapply(w, function(v) sum(v^2), 0)
  auto <- function(nm) weight_norm(s[[nm]], s2[[nm]], s[[nm]], TRUE,
                                   self_pairs)
  r2 <- if ("random2" %in% names(w)) "random2" else "random"
  totals <- if (!is_cross) {
    c(DD = auto("data"), DR = s[["data"]] * s[["random"]],
      RR = auto("random"))
  } else {
    c(D1D2 = s[["data"]] * s[["data2"]], D1R2 = s[["data"]] * s[[r2]],
      R1D2 = s[["random"]] * s[["data2"]],
      R1R2 = if (r2 == "random") auto("random") else s[["random"]] * s[[r2]])
  }
  bad <- which(totals == 0)
  if (length(bad)) {
    nm <- names(totals)[bad[1L]]
    stop("`weights` make the weighted total of all ", nm, " pairs 0, so ",
         nm, " cannot be normalised (weight sums: ",
         paste0(names(s), " ", vapply(s, format, "", digits = 6),
                collapse = ", "),
         "); give some of the weights other values.", call. = FALSE)
  }
  invisible()
}

# short description of an object for error messages
describe <- function(x) {
  if (is.null(x)) return("NULL")
  if (is.atomic(x) && length(x) == 1L) {
    return(paste0(if (is.character(x)) dQuote(x, FALSE) else format(x),
                  " (", class(x)[1L], ")"))
  }
  if (is.atomic(x) && length(x) <= 5L && length(x) > 0L) {
    return(paste0("c(", paste(format(x), collapse = ", "), ")"))
  }
  paste0("an object of class ", class(x)[1L], " and length ", length(x))
}

# The one place that matches a choice argument (estimator, error, backend,
# units): case-insensitive, and a unique prefix is enough, as match.arg()
# allows ("ls", "jack", "CPU"). The canonical spelling is returned.
match_choice <- function(x, choices, arg) {
  if (identical(x, choices)) return(choices[1L])
  refuse <- function(why = "") {
    stop("`", arg, "` must be one of ",
         paste(dQuote(choices, FALSE), collapse = ", "), ", not ",
         describe(x), why, " (case is ignored; a unique prefix is enough).",
         call. = FALSE)
  }
  if (!is.character(x) || length(x) != 1L || is.na(x) || !nzchar(x)) refuse()
  hit <- which(tolower(choices) == tolower(x))
  if (!length(hit)) hit <- which(startsWith(tolower(choices), tolower(x)))
  if (length(hit) > 1L) {
    refuse(paste0(", which could be any of ",
                  paste(dQuote(choices[hit], FALSE), collapse = ", ")))
  }
  if (!length(hit)) refuse()
  choices[hit]
}

# the estimator and error arguments of wtheta() and wtheta_multi()
match_estimator <- function(estimator) {
  match_choice(estimator, c("LS", "natural", "DP", "Hamilton"), "estimator")
}

match_error <- function(error) {
  match_choice(error, c("poisson", "jackknife", "bootstrap", "none"), "error")
}
