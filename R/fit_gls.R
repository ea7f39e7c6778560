# The fit's model at the bins and its generalised least squares
# (wtheta_fit(), R/fit.R): the model averaged over each bin (Gauss-Legendre
# nodes in theta), the model specs of one correlation and of the samples'
# biases, the numerical Jacobian, and the GLS fit itself (Levenberg-
# Marquardt on the whitened residuals).

# The model of the rows fitted, as a function of f(theta) (a model at the
# parameters): f at the bins' centres, or with `bin_average` its average
# over each bin's pairs, sum_q u_q f(t_q) with Gauss-Legendre nodes t_q in
# [lo, hi] and weights u_q proportional to the nodes' weights times
# sin(t_q), the density of separations of pairs uniform on the sphere
# (a footprint's edges change it little across one bin).
model_at_rows <- function(rows, bin_average) {
  if (!bin_average) return(function(f) f(rows$theta))
  if (is.null(rows$lo) || is.null(rows$hi)) {
    stop("`bin_average = TRUE` needs the bins' edges: `w` has no ",
         "`theta_lo` and `theta_hi` columns.", call. = FALSE)
  }
  gl <- gauss_legendre(bin_average_nodes)
  half <- (rows$hi - rows$lo) / 2
  t <- outer(gl$x, half) + rep(rows$lo + half, each = length(gl$x))
  u <- gl$w * sin(t * (pi / 180))
  u <- sweep(u, 2L, colSums(u), "/")
  function(f) {
    v <- f(as.vector(t))
    colSums(u * matrix(v, nrow(t)))
  }
}

# Gauss-Legendre nodes and weights on [-1, 1] (Golub-Welsch)
gauss_legendre <- function(n) {
  k <- seq_len(n - 1L)
  b <- k / sqrt(4 * k^2 - 1)
  J <- matrix(0, n, n)
  J[cbind(k, k + 1L)] <- b
  J[cbind(k + 1L, k)] <- b
  e <- eigen(J, symmetric = TRUE)
  o <- order(e$values)
  list(x = e$values[o], w = 2 * e$vectors[1L, o]^2)
}

# one correlation: m(theta; p) - C[m](p)
single_spec <- function(m, rows, grid) {
  if (is.null(m$start)) m$start <- data_start(m$name, rows$theta, rows$w)
  st <- m$start[m$pars]
  icf <- function(p) if (is.null(grid)) 0 else
    sum(grid$rr * m$fun(grid$theta, p)) / sum(grid$rr)
  list(start = st,
       mu = function(p) rows$at(function(theta) m$fun(theta, p)) - icf(p),
       ic = icf,
       predict = function(theta, p, ic = TRUE)
         m$fun(theta, p) - if (ic) icf(p) else 0)
}

# w_ij = b_i b_j (s(theta; q) - C[s](q)): biases per sample, shape q.
# (The closures keep this frame: the samples' names, not the result.)
bias_spec <- function(samples, m, rows, grid, start) {
  bn <- paste0("b_", samples)
  builtin <- m$name != "function"
  shape <- m$shape
  if (!builtin) {
    if (is.null(start) || !all(bn %in% names(start))) {
      stop("a model function in a bias fit needs `start` for the biases (",
           paste(bn, collapse = ", "), ") and its own parameters.",
           call. = FALSE)
    }
    shape <- setdiff(names(start), bn)
  }
  sfun <- if (builtin) function(theta, q) m$fun(theta, c(A = 1, q)) else
    m$fun
  if (!is.null(start)) {
    check_start(start, c(bn, shape))
    st <- start[c(bn, shape)]
  } else {
    # each sample's auto-correlation alone: amplitude and shape
    auto <- lapply(samples, function(s) {
      k <- rows$i == s & rows$j == s
      m$start %||% data_start(m$name, rows$theta[k], rows$w[k])
    })
    amp <- vapply(auto, function(a) a[["A"]], 0)
    st <- c(stats::setNames(sqrt(abs(amp)), bn),
            stats::setNames(mean(vapply(auto, function(a) a[[shape]], 0)),
                            shape))
  }
  ii <- match(as.character(rows$i), samples)
  jj <- match(as.character(rows$j), samples)
  icq <- function(q) if (is.null(grid)) 0 else
    sum(grid$rr * sfun(grid$theta, q)) / sum(grid$rr)
  split <- function(p) list(b = p[bn], q = p[setdiff(names(p), bn)])
  list(start = st,
       mu = function(p) {
         s <- split(p)
         s$b[ii] * s$b[jj] *
           (rows$at(function(theta) sfun(theta, s$q)) - icq(s$q))
       },
       ic = function(p) {
         s <- split(p)
         out <- outer(s$b, s$b) * icq(s$q)
         dimnames(out) <- list(samples, samples)
         out
       },
       predict = function(theta, p, ic = TRUE) {
         q <- split(p)$q
         sfun(theta, q) - if (ic) icq(q) else 0
       })
}

# numerical Jacobian of mu at p (central differences)
jacobian <- function(mu, p) {
  vapply(seq_along(p), function(k) {
    d <- 1e-6 * max(abs(p[[k]]), 1e-6)
    up <- p
    dn <- p
    up[k] <- p[k] + d
    dn[k] <- p[k] - d
    (mu(up) - mu(dn)) / (2 * d)
  }, numeric(length(mu(p))))
}

# GLS by Levenberg-Marquardt on the whitened residuals: y - mu(p) times
# the Cholesky factor of h C^-1
gls_fit <- function(spec, y, C, h) {
  n <- length(y)
  p <- spec$start
  k <- length(p)
  if (n <= k) {
    stop("the fit has ", n, " bin(s) for ", k, " parameters; it needs more ",
         "bins than parameters (widen `theta_range`).", call. = FALSE)
  }
  U <- chol(C)                               # C = U'U
  white <- function(r) backsolve(U, r, transpose = TRUE) * sqrt(h)
  chi2_of <- function(p) {
    mu <- spec$mu(p)
    if (any(!is.finite(mu))) return(Inf)
    sum(white(y - mu)^2)
  }
  chi2 <- chi2_of(p)
  if (!is.finite(chi2)) {
    stop("the model is not finite at the starting values (",
         paste(names(p), format(p, digits = 4), sep = " = ", collapse = ", "),
         "); give `start`.", call. = FALSE)
  }
  lambda <- 1e-3
  converged <- FALSE
  it <- 0L
  for (it in seq_len(1000L)) {
    J <- white(jacobian(spec$mu, p))
    r <- white(y - spec$mu(p))
    A <- crossprod(J)
    g <- crossprod(J, r)
    repeat {
      step <- tryCatch(solve(A + lambda * diag(diag(A) + 1e-300, k), g),
                       error = function(e) NULL)
      pn <- if (is.null(step)) p else p + as.vector(step)
      names(pn) <- names(p)
      cn <- if (is.null(step)) Inf else chi2_of(pn)
      if (cn <= chi2) break
      lambda <- lambda * 10
      if (lambda > 1e16) break
    }
    if (!(cn <= chi2)) {
      converged <- TRUE   # no step lowers chi2: at the minimum
      break
    }
    small <- all(abs(pn - p) <= 1e-10 * pmax(abs(p), 1e-12)) ||
      chi2 - cn <= 1e-15 * max(chi2, 1e-300)
    p <- pn
    chi2 <- cn
    lambda <- max(lambda / 10, 1e-12)
    if (small) {
      converged <- TRUE
      break
    }
  }
  if (!converged) {
    warning("the fit did not converge in ", it, " iterations; give other ",
            "`start` values.", call. = FALSE)
  }
  J <- white(jacobian(spec$mu, p))
  V <- tryCatch(solve(crossprod(J)), error = function(e) {
    stop("the parameters are not determined by the bins fitted (a ",
         "singular Jacobian at ", paste(names(p), format(p, digits = 4),
                                       sep = " = ", collapse = ", "),
         "); fix or drop one.", call. = FALSE)
  })
  dimnames(V) <- list(names(p), names(p))
  fitted <- spec$mu(p)
  list(coefficients = p, vcov = V, chi2 = chi2, dof = n - k,
       p_value = stats::pchisq(chi2, n - k, lower.tail = FALSE),
       fitted = fitted, converged = converged, iterations = it)
}
