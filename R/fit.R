# Model fits to w(theta): wtheta_fit() by generalised least squares with
# the result's covariance (Hartlap-corrected inverse), the integral
# constraint (R/integral_constraint.R), tomographic fits of wtheta_multi()
# results, and the wtheta_fit methods in lm/nls conventions.

#' Fit a model to w(theta)
#'
#' Fits a model to a [wtheta()] (or [wtheta_multi()]) result by
#' generalised least squares: the parameters `p` minimise
#' \deqn{\chi^2(p) = (w - m(p))^T h\, C^{-1} (w - m(p))}{chi2(p) = (w - m(p))' h C^-1 (w - m(p))}
#' over the bins whose centre `theta` lies in `theta_range`, with `C` the
#' covariance of those bins (the result's own, from its jackknife or
#' bootstrap replicates, or `cov`) and `h` the Hartlap factor. The
#' minimum is found by Levenberg-Marquardt steps (a numerical Jacobian);
#' the parameters' covariance is `m1 (J^T h C^-1 J)^-1` at the minimum,
#' `J` the Jacobian of the model and `m1` the Percival factor (see Hartlap
#' factor).
#'
#' @section Models: Angles in the model are in **degrees**, whatever unit
#'   the result's bins use (`theta_units`, say arcmin): the fit converts
#'   the result's `theta` to degrees, and `theta_range` is in degrees too.
#' \describe{
#'   \item{`"power_law"`}{`w(theta) = A (theta / 1 deg)^(1 - gamma)`,
#'     coefficients `A` (w at one degree) and `gamma`.}
#'   \item{`"thomas"`}{`w(theta) = A exp(-theta^2 / (4 sigma^2))`, the
#'     shape of a Thomas process (see [model_wtheta()]), coefficients `A`
#'     and `sigma` (degrees).}
#'   \item{a catalog from [simulate_catalog()]}{The same Thomas model,
#'     started from the catalog's own `A = f^2 / (4 pi sigma^2 n_p)` and
#'     `sigma` (the truth, which [model_wtheta()] draws).}
#'   \item{a function `f(theta, params)`}{`params` a named numeric vector
#'     whose names and starting values `start` gives; it returns w at
#'     each theta (degrees).}
#' }
#'
#' @section Integral constraint: With `ic` (a [pair_counts()] result of
#'   the randoms' pairs out to the footprint's largest separation, for
#'   example from [ic_counts()]) the model fitted is `m(theta) - C[m]`,
#'   \deqn{C[m] = \frac{\sum_k RR_k\, m(\theta_k)}{\sum_k RR_k}}{C[m] = sum_k RR_k m(theta_k) / sum_k RR_k}
#'   with `theta_k` the RR bins' centres (geometric for log bins). For the
#'   power law that is `A (theta^(1 - gamma) - C(gamma))`, `C(gamma) =
#'   sum_k RR_k theta_k^(1 - gamma) / sum_k RR_k`: the IC depends on the
#'   parameters and is fitted with them. The coefficients are those of the
#'   true w; [integral_constraint()] gives `C` for any model.
#'
#' @section Hartlap factor: The inverse of a covariance estimated from `n`
#'   realisations is biased high; Hartlap, Simon & Schneider (2007) scale
#'   it by `h = (n - p - 2) / (n - 1)`, `p` the number of bins fitted
#'   (all rows of all correlations in a joint fit). `n` is the number of
#'   jackknife patches or bootstrap draws, the columns of the result's
#'   `replicates` (or its `n_patches` for a jackknife result without
#'   them). A fit where `h` is not positive (`n <= p + 2`) is refused:
#'   the inverse is then meaningless. Poisson covariances are not estimated
#'   from realisations and are used as they are (`h = 1`). `h` scales
#'   `chi2` by `h` and the parameters' covariance by `1 / h`.
#'
#'   The noise of an estimated covariance also scatters the best fits more
#'   than `(J^T h C^-1 J)^-1` says. With `percival = TRUE` (and an `n`,
#'   that is with the Hartlap factor) the parameters' covariance is
#'   multiplied by Percival et al. (2014)'s
#'   \deqn{m_1 = \frac{1 + B (p - k)}{1 + A + B (k + 1)}}{m1 = (1 + B (p - k)) / (1 + A + B (k + 1))}
#'   with `k` the number of parameters, `A = 2 / ((n - p - 1) (n - p -
#'   4))` and `B = (n - p - 2) / ((n - p - 1) (n - p - 4))`; it needs
#'   `n > p + 4` (else the fit is refused: give `percival = FALSE`). For
#'   25 patches, 8 bins and 2 parameters `m1 = 1.17`, errors 8% wider; for
#'   hundreds of mocks it is within a percent of 1. `chi2` is unchanged.
#'
#' @section Tomography: For a [wtheta_multi()] result, `tomography =
#'   "each"` fits every correlation on its own (its block of the joint
#'   covariance) and returns a `wtheta_fit_list`, a list of fits named
#'   `"i-j"` (`coef()` gives a matrix, one row each). `tomography = "bias"`
#'   fits one shape with a bias per sample, `w_ij = b_i b_j w_m(theta)`,
#'   to all correlations at once with their joint covariance: the
#'   coefficients are `b_<sample>` and the shape's (the power law's
#'   `gamma`, Thomas's `sigma`: their amplitude `A` is 1, taken up by the
#'   biases; a model function's own parameters, which should then have no
#'   free amplitude). The biases' overall sign cannot be told apart; they
#'   are started positive.
#'
#' @section Validation: With a covariance that does not depend on the data
#'   fitted, 68% intervals (`confint(fit, level = 0.68)`) cover the truth
#'   at their nominal rate: in the tests, 71.5% (A) and 69.5% (gamma) of
#'   400 mock measurements of a power law drawn from a correlated Gaussian.
#'
#'   `bench/fit-coverage.R` fits stationary Thomas catalogs of
#'   [simulate_catalog()] (`fixed_n = FALSE`, half the points in clusters
#'   of `sigma = 0.4` degrees, a 30 x 30 degree box, twice as many
#'   randoms, 8 log bins from 0.1 to 2 degrees, a jackknife of 25 patches)
#'   with the Thomas model, the IC and `bin_average = TRUE`, and counts the
#'   catalogs whose 68% intervals hold the true `A` and `sigma` (binomial
#'   error 2.3% for 400 catalogs, 3.3% for 200):
#'   \tabular{lllll}{
#'   catalogs \tab points \tab clusters \tab own jackknife: A, sigma \tab
#'     mocks' covariance: A, sigma \cr
#'   400 \tab 1500 \tab 40 \tab 54.0%, 68.5% \tab 69.8%, 71.5% \cr
#'   400 \tab 1500 \tab 160 \tab 68.5%, 69.8% \tab 67.0%, 67.5% \cr
#'   400 \tab 6000 \tab 160 \tab 67.7%, 73.3% \tab 69.0%, 67.0% \cr
#'   200 \tab 24000 \tab 640 \tab 70.0%, 73.5% \tab 67.5%, 71.5%
#'   }
#'   ("mocks' covariance": the covariance of w over all the catalogs, with
#'   `hartlap` their number). So the intervals hold what they say with
#'   the catalog's own jackknife covariance when each patch holds several
#'   independent structures (6 clusters a patch and more here; `A` still
#'   falls 0.1 to 0.2 of its error low on average), and with a covariance
#'   from mocks always. With few structures a patch (40
#'   clusters, 1.6 a patch) the jackknife covariance is made from the same
#'   few clusters as w: it is noisier than the Hartlap and Percival
#'   factors allow for (which assume independent Gaussian realisations)
#'   and grows with the measured amplitude, so that catalogs whose w
#'   fluctuated low get small errors: `A` falls 0.54 of its error below
#'   the truth on average and its intervals cover it in 54% of catalogs.
#'   The jackknife covariance of another catalog, as noisy but independent
#'   of the w fitted, leaves `A` unbiased (0.05 of its error below) but
#'   still covers it in only 60%. No factor applied to the covariance
#'   undoes that; use a covariance from mocks, or patches large enough to
#'   hold many independent structures.
#'
#'   The model must be averaged over the bins when it curves across one:
#'   at the bins' centres (`bin_average = FALSE`) `sigma` falls 0.5 of its
#'   error below the truth for the larger catalogs (coverage 65% and 66%),
#'   where the averaged model leaves it within 0.13. The IC changes these
#'   fits little (on this box it is 0.006 for 40 clusters, far below w's
#'   errors at 2 degrees). With 1500 points and 160 clusters, the intervals
#'   cover 54.5% and 54.5% without the Hartlap factor, 65.0% and 65.7%
#'   without the Percival factor. The
#'   mean w of each set of catalogs differs from the true model less its
#'   IC, averaged over each bin, by at most 2.3 standard errors of the
#'   mean in any of the 32 bins of the four sets (at most 3% of w at the
#'   smallest angles), as chance gives: the model that [model_wtheta()]
#'   describes is what the catalogs hold.
#'
#' @param w A result of [wtheta()] or [wtheta_multi()] (the rows of its
#'   bins, in order; `[` keeps the covariance of a selection).
#' @param model `"power_law"`, `"thomas"`, a catalog from
#'   [simulate_catalog()], or a function (see Models).
#' @param theta_range `NULL` (all bins) or `c(lo, hi)` in degrees: the
#'   bins whose `theta` (centre) lies in `[lo, hi]` are fitted.
#' @param ic `NULL` (no integral constraint) or a [pair_counts()] result of
#'   the randoms (see Integral constraint).
#' @param cov `NULL` (the result's covariance) or a covariance matrix of
#'   all the result's rows (`nrow(w)` square), for example from mocks.
#' @param hartlap `TRUE` (the Hartlap factor with `n` from the result;
#'   with `cov` given, give `n` instead), `FALSE` (none), or the number
#'   `n` of realisations behind the covariance.
#' @param start `NULL` (starting values from the data: a straight line in
#'   log w against log theta for the power law) or a named numeric vector.
#'   Needed for a model function.
#' @param tomography For a [wtheta_multi()] result: `"each"` or `"bias"`
#'   (see Tomography).
#' @param bin_average `FALSE`: the model at each bin's centre `theta`.
#'   `TRUE`: the model averaged over each bin's pairs, from `theta_lo` to
#'   `theta_hi`, weighted by `sin(theta)` (the separations of pairs
#'   uniform on the sphere; a footprint's edges change that little across
#'   one bin), by Gauss-Legendre quadrature of 24 nodes a bin. That is
#'   what an estimator measures in a bin; use it for a model that curves
#'   over a bin's width, such as a Thomas model whose width `sigma` spans
#'   only a few bins (see Validation). `predict()` and `plot()`'s curve
#'   stay the model at given angles; `fitted()` is the bins' average.
#' @param percival `TRUE`: multiply the parameters' covariance by the
#'   Percival factor `m1` when the Hartlap factor is applied (see Hartlap
#'   factor); `FALSE`: not.
#' @return An object of class `wtheta_fit`: a list with `coefficients`,
#'   `vcov`, `chi2`, `dof` (bins fitted less parameters), `p_value` (of
#'   `chi2` on `dof` degrees of freedom), `n_bins`, `hartlap` (the factor
#'   `h`, 1 when none), `hartlap_n` (`n`, `NA` when none), `percival` (the
#'   factor `m1`, 1 when none), `bin_average`, `data` (a data
#'   frame of the bins fitted: `theta` in degrees, `w`, `w_err` (from the
#'   covariance used, before `h`), `fitted`, `residual`, and `i`, `j` in
#'   a joint fit), `cov` (their covariance), `ic` (the constraint `C` at
#'   the fit, per correlation in a joint fit; 0 without `ic`), `model`
#'   (its name), `theta_range`, `theta_units` (of `w`), `error`,
#'   `converged`, `iterations` and `call`. See [wtheta_fit-methods].
#' @references Hartlap J., Simon P., Schneider P. (2007), A&A 464, 399,
#'   \doi{10.1051/0004-6361:20066170}.
#'
#'   Percival W. J. et al. (2014), MNRAS 439, 2531,
#'   \doi{10.1093/mnras/stu112}.
#' @seealso [wtheta_fit-methods], [integral_constraint()], [ic_counts()],
#'   [wtheta_cov()].
#' @examples
#' sim <- simulate_catalog(3000, ra_range = c(0, 30), dec_range = c(-15, 15),
#'                         n_clusters = 60, sigma = 0.3, seed = 1)
#' ran <- random_catalog(6000, like = sim, seed = 2)
#' w <- wtheta(sim, ran, theta_bins(0.05, 3, n = 10, log = TRUE),
#'             error = "jackknife", n_patches = 20, seed = 3, threads = 1)
#' fit <- wtheta_fit(w, model = sim, ic = ic_counts(ran, threads = 1),
#'                   bin_average = TRUE)
#' fit
#' confint(fit)
#' plot(fit)
#' wtheta_fit(w, "power_law", theta_range = c(0.05, 0.5))
#' @export
wtheta_fit <- function(w, model = "power_law", theta_range = NULL, ic = NULL,
                       cov = NULL, hartlap = TRUE, start = NULL,
                       tomography = c("each", "bias"), bin_average = FALSE,
                       percival = TRUE) {
  call <- match.call()
  check_flag(bin_average, "bin_average")
  check_flag(percival, "percival")
  if (inherits(w, "wtheta_multi")) {
    tomography <- match_choice(tomography, c("each", "bias"), "tomography")
    if (tomography == "each") {
      return(fit_each(w, model, theta_range, ic, cov, hartlap, start, call,
                      bin_average, percival))
    }
  } else if (!inherits(w, "wtheta")) {
    stop("`w` must be a result of wtheta() or wtheta_multi(), not ",
         describe(w), ".", call. = FALSE)
  } else if (!missing(tomography)) {
    stop("`tomography` is for wtheta_multi() results; `w` is one ",
         "correlation.", call. = FALSE)
  }
  multi <- inherits(w, "wtheta_multi")
  # a bias fit's `start` holds the biases too: bias_spec() checks it
  m <- fit_model(model, if (multi && !is.function(model)) NULL else start)
  rows <- fit_rows(w, theta_range)
  rows$at <- model_at_rows(rows, bin_average)
  grid <- if (!is.null(ic)) ic_grid(ic, "ic")
  C <- fit_cov(w, cov, rows$keep)
  h <- hartlap_factor(w, hartlap, !is.null(cov), length(rows$keep))
  spec <- if (multi) {
    bias_spec(attr(w, "samples"), m, rows, grid, start)
  } else {
    single_spec(m, rows, grid)
  }
  sol <- gls_fit(spec, rows$w, C, h$factor)
  m1 <- percival_factor(percival, h$n, length(rows$keep),
                        length(sol$coefficients))
  sol$vcov <- sol$vcov * m1
  structure(c(sol, list(
    n_bins = length(rows$keep), hartlap = h$factor, hartlap_n = h$n,
    percival = m1,
    data = fit_data(rows, C, sol$fitted, multi), cov = C,
    ic = spec$ic(sol$coefficients), model = m$name, bin_average = bin_average,
    tomography = if (multi) "bias",
    theta_range = theta_range, theta_units = theta_units_of(w),
    error = if (is.null(cov)) attr(w, "error", exact = TRUE) else "given",
    predict = spec$predict, call = call)), class = "wtheta_fit")
}

# ---- models ---------------------------------------------------------------

# the built-in models: parameters, the function of theta (degrees) and the
# parameters, and which are the shape (all but the amplitude A)
builtin_model <- function(name) {
  if (!is.character(name) || length(name) != 1L ||
      !name %in% c("power_law", "thomas")) {
    stop("`model` must be \"power_law\", \"thomas\", a catalog from ",
         "simulate_catalog() or a function(theta, params), not ",
         describe(name), ".", call. = FALSE)
  }
  switch(name,
    power_law = list(name = name, pars = c("A", "gamma"), shape = "gamma",
                     fun = function(theta, p) {
                       p[["A"]] * theta^(1 - p[["gamma"]])
                     }),
    thomas = list(name = name, pars = c("A", "sigma"), shape = "sigma",
                  fun = function(theta, p) p[["A"]] *
                    exp(-theta^2 / (4 * p[["sigma"]]^2))))
}

# `model` and `start` of wtheta_fit() as list(name, pars, shape, fun,
# start (NULL: from the data))
fit_model <- function(model, start) {
  truth <- NULL
  if (is.data.frame(model)) {
    tm <- attr(model, "model", exact = TRUE)
    if (is.null(tm) || !identical(tm$process, "thomas")) {
      stop("`model` is a data frame but not a catalog from ",
           "simulate_catalog() (it has no \"model\" attribute).",
           call. = FALSE)
    }
    truth <- c(A = tm$cluster_fraction^2 /
                 (4 * pi * tm$sigma^2 * tm$parent_density), sigma = tm$sigma)
    model <- "thomas"
  }
  if (is.function(model)) {
    if (is.null(start) || !is.numeric(start) || is.null(names(start)) ||
        any(!nzchar(names(start))) || anyDuplicated(names(start)) ||
        any(!is.finite(start))) {
      stop("a model function needs `start`: a named numeric vector of ",
           "finite starting values, one per parameter; not ",
           describe(start), ".", call. = FALSE)
    }
    f <- model
    fun <- function(theta, p) {
      v <- f(theta, p)
      if (!is.numeric(v) || length(v) != length(theta)) {
        stop("the model function must return one number per theta; it ",
             "returned ", describe(v), " for ", length(theta), " angles.",
             call. = FALSE)
      }
      as.double(v)
    }
    return(list(name = "function", pars = names(start), shape = names(start),
                fun = fun, start = start))
  }
  m <- builtin_model(model)
  if (!is.null(start)) check_start(start, m$pars)
  m$start <- start %||% truth
  if (!is.null(truth)) m$name <- "thomas (simulated catalog)"
  m
}

check_start <- function(start, pars) {
  if (!is.numeric(start) || is.null(names(start)) ||
      !setequal(names(start), pars) || any(!is.finite(start))) {
    stop("`start` must be a named numeric vector with finite values for ",
         paste0("`", pars, "`", collapse = ", "), ", not ", describe(start),
         ".", call. = FALSE)
  }
}

# starting values of a built-in model from bins theta (degrees), w
data_start <- function(name, theta, w) {
  ok <- is.finite(w) & w > 0 & theta > 0
  if (name == "power_law") {
    if (sum(ok) < 2L) return(c(A = max(abs(w), 1e-6), gamma = 1.8))
    b <- stats::coef(stats::lm(log(w[ok]) ~ log(theta[ok])))
    return(c(A = exp(b[[1L]]), gamma = 1 - b[[2L]]))
  }
  sig <- stats::median(theta)
  if (sum(ok) >= 2L) {
    b <- stats::coef(stats::lm(log(w[ok]) ~ I(theta[ok]^2)))
    if (b[[2L]] < 0) {
      return(c(A = exp(b[[1L]]), sigma = sqrt(-1 / (4 * b[[2L]]))))
    }
  }
  c(A = max(abs(w), 1e-6), sigma = sig)
}

# ---- the data: rows, covariance, Hartlap ----------------------------------

# the rows of `w` fitted: index `keep`, theta in degrees, w, and i, j
fit_rows <- function(w, theta_range) {
  theta <- theta_to_deg(w$theta, theta_units_of(w))
  keep <- seq_along(theta)
  if (!is.null(theta_range)) {
    if (!is.numeric(theta_range) || length(theta_range) != 2L ||
        any(!is.finite(theta_range)) || theta_range[1L] > theta_range[2L] ||
        theta_range[1L] < 0) {
      stop("`theta_range` must be NULL or c(lo, hi) in degrees, ",
           "0 <= lo <= hi, not ", describe(theta_range), ".", call. = FALSE)
    }
    keep <- which(theta >= theta_range[1L] & theta <= theta_range[2L])
  }
  bad <- keep[!is.finite(w$w[keep])]
  if (length(bad)) {
    stop("w is NA in row(s) ", paste(utils::head(bad, 10L), collapse = ", "),
         " of `w` inside `theta_range`; narrow `theta_range` to leave ",
         "them out.", call. = FALSE)
  }
  lo <- hi <- NULL
  if (!is.null(w$theta_lo) && !is.null(w$theta_hi)) {
    lo <- theta_to_deg(w$theta_lo, theta_units_of(w))[keep]
    hi <- theta_to_deg(w$theta_hi, theta_units_of(w))[keep]
  }
  list(keep = keep, theta = theta[keep], w = w$w[keep], lo = lo, hi = hi,
       i = if (!is.null(w$i)) w$i[keep], j = if (!is.null(w$j)) w$j[keep])
}

# the covariance of the rows fitted: `cov` given (all rows of w) or w's
fit_cov <- function(w, cov, keep) {
  n <- nrow(w)
  if (!is.null(cov)) {
    cm <- if (inherits(cov, "wtheta_cov")) cov_matrix(cov) else cov
    if (!is.matrix(cm) || !is.numeric(cm) || any(dim(cm) != n)) {
      stop("`cov` must be a ", n, " x ", n, " numeric matrix (all rows of ",
           "`w`), not ", if (is.matrix(cm)) paste(dim(cm), collapse = " x ")
           else describe(cov), ".", call. = FALSE)
    }
    if (any(!is.finite(cm)) ||
        max(abs(cm - t(cm))) > 1e-10 * max(abs(cm))) {
      stop("`cov` must be finite and symmetric.", call. = FALSE)
    }
  } else {
    cm <- attr(w, "cov", exact = TRUE)
    if (is.null(cm)) {
      stop("`w` has no covariance (error = \"none\"); give `cov`.",
           call. = FALSE)
    }
  }
  C <- unname(cm[keep, keep, drop = FALSE])
  if (inherits(try(chol(C), silent = TRUE), "try-error")) {
    stop("the covariance of the ", length(keep), " bins fitted is not ",
         "positive definite (", if (is.null(cov)) "too few patches or " ,
         "bins without variance); narrow `theta_range` or use more ",
         "patches.", call. = FALSE)
  }
  C
}

# the Hartlap factor h = (n - p - 2) / (n - 1) and n (NA when none)
hartlap_factor <- function(w, hartlap, cov_given, p) {
  none <- list(factor = 1, n = NA_integer_)
  if (isFALSE(hartlap)) return(none)
  if (isTRUE(hartlap)) {
    if (cov_given) {
      stop("`hartlap = TRUE` takes the number of realisations from `w`'s ",
           "replicates, but `cov` was given: pass their number as ",
           "`hartlap = n`, or `hartlap = FALSE` for a covariance not ",
           "estimated from realisations.", call. = FALSE)
    }
    err <- attr(w, "error", exact = TRUE)
    if (!err %in% c("jackknife", "bootstrap")) return(none)
    reps <- attr(w, "replicates", exact = TRUE)
    n <- if (!is.null(reps)) ncol(reps) else if (err == "jackknife")
      attr(w, "n_patches", exact = TRUE) else NA
    if (is.null(n) || is.na(n)) {
      stop("`w` does not record its number of bootstrap draws (no ",
           "replicates): give it as `hartlap = n`, or `hartlap = FALSE`.",
           call. = FALSE)
    }
    what <- if (err == "jackknife") "jackknife patches" else "bootstrap draws"
  } else {
    if (!is.numeric(hartlap) || length(hartlap) != 1L ||
        !is.finite(hartlap) || hartlap < 1 || hartlap != round(hartlap)) {
      stop("`hartlap` must be TRUE, FALSE or the number of realisations ",
           "behind the covariance (a whole number), not ", describe(hartlap),
           ".", call. = FALSE)
    }
    n <- hartlap
    what <- "realisations"
  }
  h <- (n - p - 2) / (n - 1)
  if (!(h > 0)) {
    stop("the Hartlap factor (n - p - 2) / (n - 1) = (", n, " - ", p,
         " - 2) / (", n, " - 1) is not positive: ", p, " bins fitted with ",
         "a covariance from ", n, " ", what, ", whose inverse is then ",
         "meaningless (it needs n > p + 2). Fit fewer bins (`theta_range`), ",
         "use more patches or draws, or `hartlap = FALSE`.", call. = FALSE)
  }
  list(factor = h, n = as.integer(n))
}

# nodes per bin of `bin_average`: a Gaussian of width sigma is averaged
# over a bin a sigma wide to 1e-14, a power law over a bin from 0 (its
# singular end) to 5e-5 (gamma = 1.8)
bin_average_nodes <- 24L

# Percival et al. (2014)'s m1: the factor by which the scatter of the
# best fits exceeds the parameters' covariance from a Hartlap-corrected
# inverse of a covariance estimated from n realisations, for nb bins and np
# parameters (1 without a Hartlap n)
percival_factor <- function(percival, n, nb, np) {
  if (!percival || is.na(n)) return(1)
  if (!(n - nb - 4 > 0)) {
    stop("the Percival factor needs n > p + 4 (p bins fitted, n ",
         "realisations behind the covariance), not n = ", n, " with p = ",
         nb, ": fit fewer bins (`theta_range`), use more patches or ",
         "draws, or `percival = FALSE`.", call. = FALSE)
  }
  a <- 2 / ((n - nb - 1) * (n - nb - 4))
  b <- (n - nb - 2) / ((n - nb - 1) * (n - nb - 4))
  (1 + b * (nb - np)) / (1 + a + b * (np + 1))
}

# ---- specs: the model of the rows fitted as a function of the parameters --

# ---- the minimiser ---------------------------------------------------------

# the bins fitted as a data frame
fit_data <- function(rows, C, fitted, multi) {
  d <- data.frame(theta = rows$theta, w = rows$w, w_err = sqrt(diag(C)),
                  fitted = fitted, residual = rows$w - fitted)
  if (multi) d <- cbind(data.frame(i = rows$i, j = rows$j), d)
  d
}

# every correlation of a wtheta_multi result on its own
fit_each <- function(w, model, theta_range, ic, cov, hartlap, start, call,
                     bin_average, percival) {
  entries <- attr(w, "entries", exact = TRUE)
  key <- paste(w$i, w$j, sep = "-")
  fits <- lapply(names(entries), function(nm) {
    e <- entries[[nm]]
    rows <- which(key == nm)
    # the entry's bins are the result's rows of that pair, in order (`[`
    # keeps them so); fit the w that `w` holds, as a joint fit does
    if (nrow(e) != length(rows) ||
        any(e$theta != w$theta[rows])) {
      stop("the entry \"", nm, "\" of `w` does not match its rows; fit ",
           "attr(w, \"entries\")[[\"", nm, "\"]] on its own.", call. = FALSE)
    }
    e$w <- w$w[rows]
    cv <- if (!is.null(cov)) {
      cm <- if (inherits(cov, "wtheta_cov")) cov_matrix(cov) else cov
      if (!is.matrix(cm) || any(dim(cm) != nrow(w))) {
        stop("`cov` must be a ", nrow(w), " x ", nrow(w), " matrix (all ",
             "rows of `w`).", call. = FALSE)
      }
      cm[rows, rows, drop = FALSE]
    }
    f <- wtheta_fit(e, model, theta_range, ic, cv, hartlap, start,
                    bin_average = bin_average, percival = percival)
    f$call <- call
    f
  })
  structure(stats::setNames(fits, names(entries)), class = "wtheta_fit_list")
}
