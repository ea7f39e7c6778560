test_that("wtheta_backends() describes the engines", {
  b <- wtheta_backends()
  expect_s3_class(b, "data.frame")
  expect_named(b, c("backend", "available", "device", "name",
                    "compute_capability", "memory_gb", "threads"))
  expect_identical(b$backend[1], "cpu")
  expect_true(b$available[1])
  expect_identical(b$threads[1], wtheta_threads())
  expect_true(is.logical(attr(b, "cuda_compiled")))
  expect_true(all(b$backend[-1] == "cuda"))
})

test_that("thread defaults honour the option and are at least one", {
  expect_gte(wtheta_threads(), 1L)
  old <- options(wtheta.threads = 1)
  on.exit(options(old))
  expect_identical(wtheta_threads(), 1L)
  options(wtheta.threads = 0)
  expect_error(wtheta_threads(), "options\\(wtheta.threads\\)")
})

test_that("a forked child counts on one thread by default", {
  skip_on_os("windows")
  res <- parallel::mclapply(1:2, function(i) wtheta_threads(), mc.cores = 2)
  expect_identical(unlist(res), c(1L, 1L))
})
