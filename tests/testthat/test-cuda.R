# GPU tests: skipped where no usable CUDA GPU is present (as on CI).

gpu_vs_cpu <- function(x, y = NULL, bins, self_pairs = FALSE) {
  g <- pair_counts(x, y, bins = bins, self_pairs = self_pairs,
                   backend = "cuda")
  c <- pair_counts(x, y, bins = bins, self_pairs = self_pairs,
                   backend = "cpu", threads = test_threads())
  expect_identical(g$backend, "cuda")
  expect_identical(slots_of(g), slots_of(c))
  expect_true(is.finite(g$gpu_ms) && g$gpu_ms >= 0)
  invisible(g)
}

test_that("GPU counts equal CPU counts bin by bin", {
  skip_if_no_cuda()
  set.seed(31)
  x <- random_sky(3001)
  y <- random_sky(2999, ra = c(20, 140), dec = c(-30, 60))
  binnings <- list(
    theta_bins(0, 180, width = 0.25),
    theta_bins(0.01, 10, n = 20, log = TRUE),
    theta_bins(edges = c(0.3, 1, 2.5, 7, 30, 31, 179)),
    theta_bins(1e-4, 180, n = 4096, log = TRUE),
    theta_bins(0, 180, n = 70000)
  )
  for (b in binnings) {
    gpu_vs_cpu(x, NULL, b)
    gpu_vs_cpu(x, y, b)
    gpu_vs_cpu(y, NULL, b, self_pairs = TRUE)
  }
  # clustered data and exact coincidences
  d <- simulate_catalog(4000, sigma = 0.01, seed = 8)
  d <- rbind(d, d[1:50, ], data.frame(ra = c(0, 180, 7), dec = c(90, -90, 0)))
  gpu_vs_cpu(d, NULL, theta_bins(0, 30, width = 0.01))
  gpu_vs_cpu(d, NULL, theta_bins(0, 30, width = 0.01), self_pairs = TRUE)
})

test_that("odd sizes count the same on GPU and CPU", {
  skip_if_no_cuda()
  set.seed(32)
  b <- theta_bins(0, 180, width = 1)
  for (n in c(1, 2, 31, 33, 1000)) {
    x <- random_sky(n)
    gpu_vs_cpu(x, NULL, b)
    gpu_vs_cpu(x, random_sky(7), b)
  }
  big <- random_sky(1000003)
  gpu_vs_cpu(big, random_sky(33), b)
  gpu_vs_cpu(random_sky(31), big, b)
})

test_that("the reference catalogs count the same on GPU and CPU", {
  skip_if_no_cuda()
  D <- read_catalog(shared_data("data_100k_arcmin.txt"), units = "arcmin")
  R <- read_catalog(shared_data("flat_100k_arcmin.txt"), units = "arcmin")
  b <- theta_bins(0, 90, width = 0.25)
  gpu_vs_cpu(D[1:20000, ], NULL, b)
  gpu_vs_cpu(D[1:20000, ], R[1:20000, ], b)
  gpu_vs_cpu(R[50001:70000, ], NULL, theta_bins(0.01, 10, n = 20, log = TRUE))
  w <- wtheta(D, R, b, self_pairs = TRUE, backend = "cuda")
  expect_identical(attr(w, "backend"), "cuda")
  expect_identical(sum(w$DD), 1e10)
  expect_lt(abs(w$w[1] - 2.338), 0.03)
})

test_that("several GPUs give the same histogram as one", {
  skip_if_no_cuda()
  b <- wtheta_backends()
  devs <- b$device[b$backend == "cuda" & b$available]
  skip_if(length(devs) < 2, "fewer than two GPUs")
  x <- random_sky(50000)
  one <- pair_counts(x, bins = theta_bins(0, 180, width = 1), devices = devs[1])
  all <- pair_counts(x, bins = theta_bins(0, 180, width = 1), devices = devs)
  expect_identical(all$counts, one$counts)
  expect_identical(all$devices, as.integer(devs))
})

test_that("GPU errors are clear and leave the session usable", {
  skip_if_no_cuda()
  x <- random_sky(10)
  n_dev <- sum(wtheta_backends()$backend == "cuda")
  expect_error(pair_counts(x, bins = c(0, 1), devices = n_dev),
               "`devices` must be distinct CUDA device indices")
  expect_error(pair_counts(x, bins = c(0, 1), devices = c(0, 0)),
               "`devices` must be distinct")
  pc <- pair_counts(x, bins = c(0, 180), backend = "cuda")
  expect_identical(pc$counts, 45)
  expect_identical(pair_counts(x, bins = c(0, 180))$backend, "cuda")
})
