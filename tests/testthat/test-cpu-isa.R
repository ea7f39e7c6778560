# The CPU engine's instruction sets: what wtheta_backends() reports, and the
# override WTHETA_CPU_ISA (the exactness tests of test-cpu-engine.R run on
# every instruction set listed here).

cpu_flags <- function() {
  if (!file.exists("/proc/cpuinfo")) return(character())
  f <- readLines("/proc/cpuinfo", warn = FALSE)
  unique(unlist(strsplit(sub("^flags\\s*:\\s*", "", grep("^flags", f,
                                                         value = TRUE)), " ")))
}

test_that("the instruction sets listed are those /proc/cpuinfo shows", {
  flags <- cpu_flags()
  skip_if(!length(flags), "no /proc/cpuinfo flags")
  skip_if(!R.version$arch %in% c("x86_64", "amd64"), "not x86-64")
  isas <- machine_isas()
  expect_true("plain" %in% isas)
  expect_identical("avx2" %in% isas, "avx2" %in% flags)
  expect_identical("avx512" %in% isas,
                   all(c("avx512f", "avx512dq", "avx512vl", "avx512bw",
                         "avx512cd") %in% flags))
})

test_that("wtheta_backends() reports the instruction set in use", {
  b <- with_cpu_isa("", wtheta_backends())
  isas <- machine_isas()
  best <- intersect(c("avx512", "avx2", "plain"), isas)[1]
  expect_identical(attr(b, "cpu_isa"), best)
  expect_identical(attr(b, "cpu_isas"), isas)
  expect_match(b$name[b$backend == "cpu"], paste(best, "kernels"),
               fixed = TRUE)
  for (isa in isas) {
    b <- with_cpu_isa(isa, wtheta_backends())
    expect_identical(attr(b, "cpu_isa"), isa)
    expect_true(b$available[b$backend == "cpu"])
  }
})

test_that("every instruction set gives the same counts", {
  set.seed(41)
  x <- random_sky(1500)
  y <- random_sky(1200)
  b <- theta_bins(0.01, 30, n = 25, log = TRUE)
  ref <- with_cpu_isa("plain", pair_counts(x, y, b, backend = "cpu"))
  for (isa in machine_isas()) {
    got <- with_cpu_isa(isa, pair_counts(x, y, b, backend = "cpu"))
    expect_identical(got$counts, ref$counts)
    expect_identical(got$n_below + got$n_above, ref$n_below + ref$n_above)
  }
})

test_that("an unknown or unsupported WTHETA_CPU_ISA is refused clearly", {
  x <- random_sky(50)
  b <- theta_bins(1, 10, n = 3)
  with_cpu_isa("sse9", {
    expect_error(pair_counts(x, NULL, b, backend = "cpu"),
                 paste0("WTHETA_CPU_ISA must be \"plain\", \"avx2\", ",
                        "\"avx512\" or empty, not \"sse9\""),
                 fixed = TRUE)
    # also with the grid, which may count all of these few pairs in bulk
    # and leave the engine nothing to count
    old <- options(wtheta.grid = TRUE)
    expect_error(pair_counts(x, NULL, b, backend = "cpu"),
                 "WTHETA_CPU_ISA must be", fixed = TRUE)
    options(old)
    bk <- wtheta_backends()
    expect_true(is.na(attr(bk, "cpu_isa")))
    expect_false(bk$available[bk$backend == "cpu"])
    expect_match(bk$name[bk$backend == "cpu"], "sse9", fixed = TRUE)
  })
  missing <- setdiff(c("avx2", "avx512"), machine_isas())
  skip_if(!length(missing), "this machine runs every instruction set")
  with_cpu_isa(missing[1], expect_error(
    pair_counts(x, NULL, b, backend = "cpu"),
    paste0("WTHETA_CPU_ISA is \"", missing[1], "\", but this CPU or build ",
           "cannot run it"), fixed = TRUE))
})
