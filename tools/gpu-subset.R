# A small tour of the CUDA engine for compute-sanitizer (which slows kernels
# 10 to 100 times): auto, cross and self pairs, odd sizes, the table and
# binary-search binnings, wtheta(), and each injected fault followed by a
# correct count. Every GPU count is compared with the CPU engine. Run by
#   sh tools/gpu-check.sh sanitize
# Stops with status 1 on a wrong count or a missing error.
suppressMessages(library(wtheta))
b <- wtheta_backends()
if (!any(b$backend == "cuda" & b$available)) {
  cat("no usable CUDA GPU\n")
  quit(status = 1)
}
bad <- 0L
check <- function(ok, what) {
  cat(if (isTRUE(ok)) "ok:   " else "WRONG:", what, "\n")
  if (!isTRUE(ok)) bad <<- bad + 1L
}
same <- function(x, y = NULL, bins, self_pairs = FALSE) {
  g <- pair_counts(x, y, bins = bins, self_pairs = self_pairs, backend = "cuda")
  c <- pair_counts(x, y, bins = bins, self_pairs = self_pairs, backend = "cpu")
  identical(c(g$n_below, g$counts, g$n_above), c(c$n_below, c$counts, c$n_above))
}
set.seed(1)
x <- random_catalog(1500, ra_range = c(0, 40), dec_range = c(-20, 20))
y <- random_catalog(777, ra_range = c(10, 50), dec_range = c(-10, 30))
for (bins in list(theta_bins(0, 60, width = 0.5),
                  theta_bins(0.01, 30, n = 15, log = TRUE),
                  theta_bins(0, 180, n = 70000))) {
  nb <- length(bins) - 1
  check(same(x, NULL, bins), paste("auto,", nb, "bins"))
  check(same(x, y, bins), paste("cross,", nb, "bins"))
  check(same(y, NULL, bins, TRUE), paste("self pairs,", nb, "bins"))
}
for (n in c(1, 2, 31, 33, 257)) {
  z <- x[seq_len(n), ]
  check(same(z, NULL, theta_bins(0, 90, width = 1)), paste("auto, n =", n))
  check(same(z, y[1:5, ], theta_bins(0, 90, width = 1)), paste("cross, n =", n))
}
w <- wtheta(x, y, bins = theta_bins(0, 20, width = 1), backend = "cuda")
check(identical(attr(w, "backend"), "cuda") && all(is.finite(w$w[w$RR > 0])),
      "wtheta()")

for (f in c("alloc", "launch", "copy", "thread")) {
  Sys.setenv(WTHETA_TEST_FAULT = f)
  r <- try(pair_counts(x, y, bins = theta_bins(0, 60, width = 0.5),
                       backend = "cuda"), silent = TRUE)
  Sys.unsetenv("WTHETA_TEST_FAULT")
  check(inherits(r, "try-error") && grepl(f, r), paste("fault", f, "is an error"))
  check(same(x, y, theta_bins(0, 60, width = 0.5)), paste("count after fault", f))
}
cat(if (bad) "gpu subset: FAILED\n" else "gpu subset: all ok\n")
quit(status = if (bad) 1 else 0)
