# The methods of wtheta_fit() results (R/fit.R): coef, vcov, confint,
# predict, logLik, fitted, residuals, print, summary, plot; and of the
# list of fits of a wtheta_multi() result.

#' Methods for wtheta_fit results
#'
#' A [wtheta_fit()] result works as an `lm` or `nls` fit does: `coef()`
#' and `vcov()` give the parameters and their covariance (from the
#' Hartlap-corrected inverse covariance, times the Percival factor; see
#' [wtheta_fit()]), `confint()` Wald intervals
#' `estimate +- z sd` (normal quantiles: the GLS likelihood is Gaussian
#' in w), `predict()` the model at angles in degrees, `logLik()` the
#' Gaussian log-likelihood of the bins fitted,
#' `-(chi2 + p log(2 pi) + log det(C / h)) / 2` (so `AIC()` and `BIC()`
#' work), `summary()` a table of estimates, standard errors, z values and
#' p values with `chi2`, and `plot()` the bins fitted with their errors
#' and the model.
#'
#' @param object,x A result of [wtheta_fit()].
#' @param parm Parameters (names or indices); all by default.
#' @param level Confidence level.
#' @param newdata `NULL` (the bins fitted) or angles in degrees: a numeric
#'   vector or a data frame with a column `theta` (degrees).
#' @param ic `TRUE`: the model as the estimator sees it, less the integral
#'   constraint (when the fit has one); `FALSE`: the true w of the model.
#'   In a bias fit, the shape `w_m` (multiply by `b_i b_j`).
#' @param digits Significant digits printed.
#' @param main,xlab,ylab,log Passed to [graphics::plot()]; `log = "x"` by
#'   default, `"xy"` when every w and model value is positive.
#' @param ... Unused (methods' signatures), or passed to [graphics::plot()].
#' @return `coef()`: a named vector; `vcov()`: a matrix; `confint()`: a
#'   matrix with columns named by their percentages; `predict()`: a
#'   numeric vector; `logLik()`: a `logLik` object (`df` the parameters,
#'   `nobs` the bins); `summary()`: a `summary.wtheta_fit` object; `plot()`
#'   and `print()`: `x`, invisibly.
#' @name wtheta_fit-methods
#' @seealso [wtheta_fit()]
#' @examples
#' sim <- simulate_catalog(3000, ra_range = c(0, 30), dec_range = c(-15, 15),
#'                         n_clusters = 60, sigma = 0.3, seed = 1)
#' ran <- random_catalog(6000, like = sim, seed = 2)
#' w <- wtheta(sim, ran, theta_bins(0.05, 3, n = 10, log = TRUE),
#'             error = "jackknife", n_patches = 20, seed = 3, threads = 1)
#' fit <- wtheta_fit(w, "thomas")
#' coef(fit)
#' sqrt(diag(vcov(fit)))
#' confint(fit, level = 0.68)
#' predict(fit, c(0.1, 1))
#' AIC(fit)
#' summary(fit)
NULL

#' @rdname wtheta_fit-methods
#' @export
vcov.wtheta_fit <- function(object, ...) object$vcov

#' @rdname wtheta_fit-methods
#' @export
confint.wtheta_fit <- function(object, parm, level = 0.95, ...) {
  cf <- object$coefficients
  pn <- names(cf)
  if (missing(parm)) parm <- pn else if (is.numeric(parm)) parm <- pn[parm]
  if (anyNA(parm) || !all(parm %in% pn)) {
    stop("`parm` must name parameters of the fit (",
         paste(pn, collapse = ", "), ").", call. = FALSE)
  }
  check_number(level, "level")
  if (!(level > 0 && level < 1)) {
    stop("`level` must lie in (0, 1), not ", level, ".", call. = FALSE)
  }
  a <- (1 - level) / 2
  q <- stats::qnorm(c(a, 1 - a))
  se <- sqrt(diag(object$vcov))[parm]
  out <- cbind(cf[parm] + q[1L] * se, cf[parm] + q[2L] * se)
  dimnames(out) <- list(parm, paste(format(100 * c(a, 1 - a), trim = TRUE,
                                           scientific = FALSE,
                                           digits = 3), "%"))
  out
}

#' @rdname wtheta_fit-methods
#' @export
predict.wtheta_fit <- function(object, newdata = NULL, ic = TRUE, ...) {
  check_flag(ic, "ic")
  if (is.null(newdata)) {
    if (ic && !is_bias_fit(object)) return(object$data$fitted)
    theta <- object$data$theta
  } else {
    theta <- if (is.data.frame(newdata)) newdata$theta else newdata
    if (!is.numeric(theta) || any(!is.finite(theta)) || any(theta < 0)) {
      stop("`newdata` must be angles in degrees (>= 0) or a data frame ",
           "with such a column `theta`, not ", describe(newdata), ".",
           call. = FALSE)
    }
  }
  object$predict(theta, object$coefficients, ic)
}

#' @rdname wtheta_fit-methods
#' @export
fitted.wtheta_fit <- function(object, ...) object$data$fitted

#' @rdname wtheta_fit-methods
#' @export
residuals.wtheta_fit <- function(object, ...) object$data$residual

#' @rdname wtheta_fit-methods
#' @export
logLik.wtheta_fit <- function(object, ...) {
  p <- object$n_bins
  ld <- as.numeric(determinant(object$cov / object$hartlap,
                               logarithm = TRUE)$modulus)
  structure(-(object$chi2 + p * log(2 * pi) + ld) / 2,
            df = length(object$coefficients), nobs = p, class = "logLik")
}

#' @rdname wtheta_fit-methods
#' @importFrom stats nobs
#' @export
nobs.wtheta_fit <- function(object, ...) object$n_bins

is_bias_fit <- function(x) identical(x$tomography, "bias")

# one line on what was fitted, for print and summary
fit_header <- function(x) {
  th <- range(x$data$theta)
  cov_what <- if (identical(x$error, "given")) "covariance given" else
    paste(x$error, "covariance")
  hl <- if (is.na(x$hartlap_n)) "no Hartlap factor" else
    paste0("Hartlap factor ", format(x$hartlap, digits = 4), " (n = ",
           x$hartlap_n, ")", if (!is.null(x$percival) && x$percival != 1)
             paste0(", Percival factor ", format(x$percival, digits = 4)))
  model <- switch(sub(" .*", "", x$model),
    power_law = "A (theta / 1 deg)^(1 - gamma)",
    thomas = "A exp(-theta^2 / (4 sigma^2))",
    "f(theta, params)")
  model <- if (is_bias_fit(x)) {
    paste0("w_ij = b_i b_j w_m, w_m = ", sub("^A ", "", model))
  } else {
    paste("w =", model)
  }
  c(paste0("<wtheta_fit> ", x$model, if (is_bias_fit(x)) ", bias per sample",
           ": ", model, if (any(x$ic != 0)) " - IC"),
    paste0(x$n_bins, " bins, theta ", format(th[1L], digits = 4), " to ",
           format(th[2L], digits = 4), " degrees; ", cov_what, ", ", hl))
}

fit_chi2_line <- function(x, digits) {
  paste0("chi2 = ", format(x$chi2, digits = digits), " on ", x$dof,
         " degrees of freedom, p = ", format(x$p_value, digits = 3),
         if (!x$converged) " (did not converge)")
}

#' @rdname wtheta_fit-methods
#' @export
print.wtheta_fit <- function(x, digits = 4, ...) {
  cat(fit_header(x), sep = "\n")
  se <- sqrt(diag(x$vcov))
  print(rbind(estimate = x$coefficients, std_error = se), digits = digits)
  cat(fit_chi2_line(x, digits), "\n", sep = "")
  if (any(x$ic != 0)) {
    ic <- x$ic
    cat("integral constraint at the fit: ",
        if (length(ic) == 1L) format(ic, digits = digits) else
          paste(format(ic[upper.tri(ic, diag = TRUE)], digits = digits),
                collapse = ", "), "\n", sep = "")
  }
  invisible(x)
}

#' @rdname wtheta_fit-methods
#' @export
summary.wtheta_fit <- function(object, ...) {
  cf <- object$coefficients
  se <- sqrt(diag(object$vcov))
  z <- cf / se
  tab <- cbind(Estimate = cf, `Std. Error` = se, `z value` = z,
               `Pr(>|z|)` = 2 * stats::pnorm(-abs(z)))
  structure(list(header = fit_header(object), coefficients = tab,
                 correlation = stats::cov2cor(object$vcov),
                 chi2 = object$chi2, dof = object$dof,
                 p_value = object$p_value, converged = object$converged),
            class = "summary.wtheta_fit")
}

#' @export
print.summary.wtheta_fit <- function(x, digits = 4, ...) {
  cat(x$header, sep = "\n")
  cat("\nCoefficients:\n")
  stats::printCoefmat(x$coefficients, digits = digits)
  cat("\n", fit_chi2_line(x, digits), "\n", sep = "")
  if (nrow(x$correlation) > 1L) {
    cat("\nCorrelation of the coefficients:\n")
    print(x$correlation, digits = 3)
  }
  invisible(x)
}

#' @rdname wtheta_fit-methods
#' @export
plot.wtheta_fit <- function(x, main = NULL, xlab = NULL, ylab = "w",
                            log = NULL, ...) {
  d <- x$data
  th <- range(d$theta[d$theta > 0])
  grid <- exp(seq(log(th[1L]), log(th[2L]), length.out = 200L))
  bias <- is_bias_fit(x)
  groups <- if (bias) split(seq_len(nrow(d)), paste(d$i, d$j, sep = "-")) else
    list(all = seq_len(nrow(d)))
  curves <- lapply(groups, function(k) {
    if (!bias) return(stats::predict(x, grid))
    b <- x$coefficients
    b[[paste0("b_", d$i[k[1L]])]] * b[[paste0("b_", d$j[k[1L]])]] *
      stats::predict(x, grid)
  })
  yr <- range(c(d$w - d$w_err, d$w + d$w_err, unlist(curves)))
  if (is.null(log)) log <- if (yr[1L] > 0) "xy" else "x"
  if (is.null(xlab)) xlab <- expression(theta ~ "(degrees)")
  if (is.null(main)) main <- sub("^<wtheta_fit> ", "", fit_header(x)[1L])
  cols <- if (length(groups) == 1L) "black" else
    grDevices::hcl.colors(length(groups), "Dark 3")
  graphics::plot(d$theta, d$w, log = log, ylim = yr, xlab = xlab,
                 ylab = ylab, main = main, type = "n", cex.main = 0.9, ...)
  if (!grepl("y", log)) graphics::abline(h = 0, col = "grey70")
  for (g in seq_along(groups)) {
    k <- groups[[g]]
    graphics::arrows(d$theta[k], d$w[k] - d$w_err[k], d$theta[k],
                     d$w[k] + d$w_err[k], angle = 90, code = 3,
                     length = 0.02, col = cols[g])
    graphics::points(d$theta[k], d$w[k], pch = 19, col = cols[g])
    graphics::lines(grid, curves[[g]], col = cols[g])
  }
  if (bias) {
    graphics::legend("topright", names(groups), col = cols, pch = 19,
                     lty = 1, bty = "n")
  }
  graphics::mtext(fit_chi2_line(x, 3), side = 3, line = 0.2, cex = 0.8)
  invisible(x)
}

#' @export
print.wtheta_fit_list <- function(x, digits = 4, ...) {
  cat("<wtheta_fit_list> ", length(x), " fits, one per correlation\n",
      sep = "")
  tab <- t(vapply(x, function(f) c(f$coefficients,
                                   chi2 = f$chi2, dof = f$dof,
                                   p_value = f$p_value),
                  numeric(length(x[[1L]]$coefficients) + 3L)))
  print(tab, digits = digits)
  invisible(x)
}

#' @export
coef.wtheta_fit_list <- function(object, ...) {
  t(vapply(object, stats::coef, numeric(length(object[[1L]]$coefficients))))
}
