# Several processes at once: forked workers (parallel::mclapply) on the CPU
# engine, and separate R processes sharing one GPU. Each scenario runs in a
# child process that the test waits for with a time limit, so a hang fails
# the test instead of stopping the suite.

test_that("mclapply workers count right, on one thread unless asked", {
  skip_on_os("windows")
  code <- c(
    "set.seed(91)",
    "x <- data.frame(ra = runif(3000, 0, 60), dec = runif(3000, -30, 30))",
    "b <- theta_bins(0, 60, width = 1)",
    # the parent counts on two threads first, so its worker threads exist
    # when it forks (the children start their own)
    "want <- pair_counts(x, bins = b, backend = 'cpu', threads = 2)$counts",
    "tasks <- function() length(list.files('/proc/self/task'))",
    "res <- parallel::mclapply(1:4, function(i) {",
    "  d <- pair_counts(x, bins = b, backend = 'cpu')",
    "  d_tasks <- tasks()",
    "  a <- pair_counts(x, bins = b, backend = 'cpu', threads = 2)",
    "  list(default = identical(d$counts, want), threads = d$threads,",
    "       default_tasks = d_tasks, wtheta_threads = wtheta_threads(),",
    "       asked = identical(a$counts, want), asked_threads = a$threads,",
    "       asked_tasks = tasks())",
    "}, mc.cores = 2, mc.preschedule = FALSE)",
    "for (r in res) cat('worker:', unlist(lapply(r, as.character)), '\\n')",
    # and the parent still counts on its threads afterwards
    "again <- pair_counts(x, bins = b, backend = 'cpu', threads = 2)",
    "cat('parent:', identical(again$counts, want), again$threads, '\\n')")
  child <- start_child(code)
  out <- wait_child(child, timeout = 120)
  info <- paste(out, collapse = "\n")
  workers <- grep("^worker:", out, value = TRUE)
  expect_length(workers, 4)
  for (w in workers) {
    v <- strsplit(trimws(w), " +")[[1]][-1]
    # counted right on one thread by default, with no extra OS thread;
    # two threads when asked, at most one more OS thread
    expect_identical(v[1:4], c("TRUE", "1", "1", "1"), info = info)
    expect_identical(v[5:6], c("TRUE", "2"), info = info)
    expect_lte(as.integer(v[7]), 2L)
  }
  expect_true("parent: TRUE 2 " %in% out, info = info)
})

test_that("two R processes counting on one GPU at once both get it right", {
  skip_on_os("windows")
  skip_if_no_cuda()
  dir <- tempfile("wtheta-gpu2")
  dir.create(dir)
  go <- file.path(dir, "go")
  # each child counts the same 60,000 points on device 0, 15 times in a
  # row, and keeps every result; both start when `go` appears
  child_code <- function(k) c(
    "set.seed(92)",
    "x <- data.frame(ra = runif(60000, 0, 360), dec = asin(runif(60000, -1, 1)) * 180 / pi)",
    "y <- x[1:20000, ]",
    "b <- theta_bins(0, 180, width = 0.5)",
    "invisible(pair_counts(y, bins = b, backend = 'cuda', devices = 0))",
    sprintf("writeLines('ready', %s)", deparse(file.path(dir, paste0("ready", k)))),
    sprintf("while (!file.exists(%s)) Sys.sleep(0.01)", deparse(go)),
    "t0 <- Sys.time()",
    "res <- lapply(1:15, function(i) {",
    "  pc <- if (i %% 2) pair_counts(x, bins = b, backend = 'cuda', devices = 0) else",
    "    pair_counts(x, y, bins = b, backend = 'cuda', devices = 0)",
    "  c(pc$n_below, pc$counts, pc$n_above)",
    "})",
    sprintf("saveRDS(list(res = res, t0 = t0, t1 = Sys.time()), %s)",
            deparse(file.path(dir, paste0("res", k, ".rds")))))
  a <- start_child(child_code(1))
  b <- start_child(child_code(2))
  wait_file(file.path(dir, "ready1"), timeout = 120)
  wait_file(file.path(dir, "ready2"), timeout = 120)
  file.create(go)
  out_a <- wait_child(a, timeout = 300)
  out_b <- wait_child(b, timeout = 300)
  ra <- readRDS(file.path(dir, "res1.rds"))
  rb <- readRDS(file.path(dir, "res2.rds"))
  # the expected counts, from the CPU engine in this process
  set.seed(92)
  x <- data.frame(ra = runif(60000, 0, 360), dec = asin(runif(60000, -1, 1)) * 180 / pi)
  y <- x[1:20000, ]
  bins <- theta_bins(0, 180, width = 0.5)
  want_auto <- slots_of(pair_counts(x, bins = bins, backend = "cpu"))
  want_cross <- slots_of(pair_counts(x, y, bins = bins, backend = "cpu"))
  for (r in list(ra$res, rb$res)) {
    expect_length(r, 15)
    for (i in seq_along(r)) {
      expect_identical(r[[i]], if (i %% 2) want_auto else want_cross,
                       info = paste(c(out_a, out_b), collapse = "\n"))
    }
  }
  # the two runs overlapped in time
  expect_true(ra$t0 < rb$t1 && rb$t0 < ra$t1)
})
