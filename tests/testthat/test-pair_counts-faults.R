# Failures in the middle of a run (WTHETA_TEST_FAULT, for tests only, and
# Ctrl-C): a clear R error, no result object, nothing left behind, and the
# session counts correctly right after.

fault_messages <- list(
  cpu = c(alloc = "wtheta: not enough memory for the pair counts",
          thread = paste0("wtheta: a counting thread failed: injected fault ",
                          "in a CPU worker thread \\(WTHETA_TEST_FAULT=thread\\)")),
  cuda = c(alloc = "wtheta: CUDA error: cudaMalloc \\(fault injected by WTHETA_TEST_FAULT=alloc\\)",
           launch = "wtheta: CUDA error: kernel launch \\(fault injected by WTHETA_TEST_FAULT=launch\\)",
           copy = "wtheta: CUDA error: cudaMemcpy of counts \\(fault injected by WTHETA_TEST_FAULT=copy\\)",
           thread = "wtheta: a counting thread failed: .*\\(fault injected by WTHETA_TEST_FAULT=thread\\)")
)

# every fault of one engine: errors from pair_counts() and wtheta(), no
# object assigned, and correct counts right after
check_faults <- function(backend) {
  on.exit(Sys.unsetenv("WTHETA_TEST_FAULT"), add = TRUE)
  set.seed(81)
  x <- random_sky(700)
  y <- random_sky(500, dec = c(-30, 30))
  b <- theta_bins(0, 60, width = 2)
  want_auto <- as.double(ref_slots(x, NULL, b))
  want_cross <- as.double(ref_slots(x, y, b))
  msgs <- fault_messages[[backend]]
  threads <- if (backend == "cpu") test_threads() else NULL
  for (f in names(msgs)) {
    Sys.setenv(WTHETA_TEST_FAULT = f)
    rm(list = intersect(c("pc", "w"), ls()))
    expect_error(pc <- pair_counts(x, bins = b, backend = backend,
                                   threads = threads), msgs[[f]])
    expect_error(pc <- pair_counts(x, y, bins = b, backend = backend,
                                   threads = threads), msgs[[f]])
    # x and y are two unrelated test catalogs, not data and randoms
    expect_error(w <- wtheta(x, y, bins = b, backend = backend,
                             threads = threads, check_footprint = FALSE),
                 msgs[[f]])
    expect_false(exists("pc", inherits = FALSE))
    expect_false(exists("w", inherits = FALSE))
    Sys.unsetenv("WTHETA_TEST_FAULT")
    pc <- pair_counts(x, bins = b, backend = backend, threads = threads)
    expect_identical(slots_of(pc), want_auto)
    pc <- pair_counts(x, y, bins = b, backend = backend, threads = threads)
    expect_identical(slots_of(pc), want_cross)
  }
  # two faults at once: the first step that meets one fails
  Sys.setenv(WTHETA_TEST_FAULT = paste(names(msgs), collapse = ","))
  expect_error(pair_counts(x, bins = b, backend = backend, threads = threads),
               "^wtheta: ")
  Sys.unsetenv("WTHETA_TEST_FAULT")
  expect_identical(slots_of(pair_counts(x, bins = b, backend = backend,
                                        threads = threads)), want_auto)
}

test_that("CPU faults give clear errors and the next count is right", {
  check_faults("cpu")
})

test_that("GPU faults give clear errors and the next count is right", {
  skip_if_no_cuda()
  check_faults("cuda")
})

test_that("faults the CPU engine does not have change nothing", {
  on.exit(Sys.unsetenv("WTHETA_TEST_FAULT"), add = TRUE)
  set.seed(82)
  x <- random_sky(300)
  b <- theta_bins(0, 90, width = 3)
  # the GPU steps (launch, copy) and names that are not faults at all
  Sys.setenv(WTHETA_TEST_FAULT = "launch,copy,allocate,threads")
  pc <- pair_counts(x, bins = b, backend = "cpu", threads = test_threads())
  expect_identical(slots_of(pc), as.double(ref_slots(x, NULL, b)))
})

test_that("many failed runs do not grow the process", {
  skip_if_not(file.exists("/proc/self/status"), "no /proc")
  skip_if_sanitizing()
  on.exit(Sys.unsetenv("WTHETA_TEST_FAULT"), add = TRUE)
  rss <- function() {
    s <- readLines("/proc/self/status")
    as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", s[startsWith(s, "VmRSS:")])) / 1024
  }
  set.seed(83)
  x <- random_sky(1000)
  b <- theta_bins(0, 180, n = 70000)        # large histograms per thread
  for (f in c("thread", "alloc")) {
    Sys.setenv(WTHETA_TEST_FAULT = f)
    # a leak grows the process in every window of 50 failed runs; the
    # allocator (new thread arenas after the fork tests, fragmentation)
    # may grow it once: the least growth of three windows must be small
    for (i in 1:20) try(pair_counts(x, bins = b, backend = "cpu", threads = 2), silent = TRUE)
    gc()
    at <- rss()
    for (w in 1:3) {
      for (i in 1:50) try(pair_counts(x, bins = b, backend = "cpu", threads = 2), silent = TRUE)
      gc()
      at <- c(at, rss())
    }
    # 50 leaked sets of per-thread histograms would be > 100 MB
    expect_lt(min(diff(at)), 20)
  }
})

# A child process starts a long count, the parent sends SIGINT (what Ctrl-C
# does) once it is under way; the child reports what it got and counts
# again. Then it runs `for (i in 1:3) try(pair_counts(...))` and gets a
# second SIGINT: as with Ctrl-C in base R, try() does not catch the
# interrupt, and the loop and the script stop.
interrupt_child <- function(backend, n, threads = 1L) {
  skip_on_os("windows")
  dir <- tempfile("wtheta-int")
  dir.create(dir)
  ready <- file.path(dir, "ready")
  ready2 <- file.path(dir, "ready2")
  code <- c(
    sprintf("set.seed(1); n <- %d", as.integer(n)),
    "x <- data.frame(ra = runif(n, 0, 360), dec = asin(runif(n, -1, 1)) * 180 / pi)",
    "b <- theta_bins(0, 180, width = 0.5)",
    "small <- data.frame(ra = c(1, 2, 3), dec = c(0, 0, 0))",
    sprintf("thr <- %s", if (backend == "cpu") as.integer(threads) else "NULL"),
    sprintf("invisible(pair_counts(small, bins = b, backend = '%s', threads = thr))", backend),
    sprintf("writeLines('go', %s)", deparse(ready)),
    "t0 <- proc.time()[['elapsed']]",
    "r <- tryCatch({",
    sprintf("  pc <- pair_counts(x, bins = b, backend = '%s', threads = thr); 'finished'", backend),
    "}, error = function(e) paste('an error:', conditionMessage(e)),",
    "   interrupt = function(e) paste('an interrupt condition:', conditionMessage(e)))",
    "cat('outcome:', r, '\\n')",
    "cat('seconds:', proc.time()[['elapsed']] - t0, '\\n')",
    "cat('assigned:', exists('pc'), '\\n')",
    sprintf("after <- pair_counts(small, bins = c(0, 1.5, 3), backend = '%s', threads = thr)", backend),
    "cat('after:', after$counts, after$backend, '\\n')",
    sprintf("writeLines('go', %s)", deparse(ready2)),
    "for (i in 1:3) {",
    "  cat('loop:', i, '\\n')",
    sprintf("  try(pair_counts(x, bins = b, backend = '%s', threads = thr))", backend),
    "}",
    "cat('after the loop\\n')")
  child <- start_child(code)
  pid <- as.integer(wait_file(child$pid))
  wait_file(ready)
  Sys.sleep(1.5)
  tools::pskill(pid, tools::SIGINT)
  wait_file(ready2, timeout = 300)
  Sys.sleep(1.5)
  tools::pskill(pid, tools::SIGINT)
  # the script halts at the second interrupt: done is never written
  t0 <- Sys.time()
  while (tools::pskill(pid, 0L) &&
         as.numeric(Sys.time() - t0, units = "secs") < 300) Sys.sleep(0.1)
  out <- readLines(child$out)
  info <- paste(out, collapse = "\n")
  outcome <- sub("^outcome: ", "", grep("^outcome:", out, value = TRUE))
  expect_identical(trimws(outcome), paste0(
    "an interrupt condition: wtheta: counting was interrupted; no result ",
    "was returned"), info = info)
  expect_true("assigned: FALSE " %in% out, info = info)
  expect_true(paste("after: 2 1", backend, "") %in% out, info = info)
  expect_identical(grep("^loop:", out, value = TRUE), "loop: 1 ", info = info)
  expect_false("after the loop" %in% out, info = info)
  expect_false(file.exists(child$done), info = info)
  secs <- as.numeric(sub("^seconds: ", "", grep("^seconds:", out, value = TRUE)))
  invisible(secs)
}

test_that("Ctrl-C stops a long CPU run with an interrupt and no result", {
  # 150,000 points: 1.1e10 pairs, many seconds on one thread
  secs <- interrupt_child("cpu", 150000, threads = 1L)
  # the interrupt came 1.5 s in; the run stops at the next chunk
  expect_lt(secs, 30)
})

test_that("Ctrl-C stops a long GPU run with an interrupt and no result", {
  skip_if_no_cuda()
  # 10^7 points: 5e13 pairs, tens of seconds on one GPU
  secs <- interrupt_child("cuda", 1e7)
  expect_lt(secs, 30)
})
