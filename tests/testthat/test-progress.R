# progress through progressr: the amounts of one call add up to its steps,
# from the C poll, the end of each count, and future workers

progressions <- function(expr) {
  got <- list()
  withCallingHandlers(expr, progression = function(cond) {
    got[[length(got) + 1L]] <<- cond
  })
  got
}

test_that("counts report to a progressr progressor when it is enabled", {
  skip_if_not_installed("progressr")
  old <- options(progressr.enable = TRUE, wtheta.progressr = NULL)
  on.exit(options(old))
  sim <- simulate_catalog(800, seed = 3)
  ran <- random_catalog(1200, like = sim, seed = 4)
  b <- theta_bins(0.1, 5, n = 6, log = TRUE)
  got <- progressions(w <- wtheta(sim, ran, b, threads = 1, progress = TRUE,
                                  error = "none"))
  type <- vapply(got, function(c) c$type, "")
  expect_identical(type[1], "initiate")
  expect_identical(type[length(type)], "finish")
  expect_identical(got[[1]]$steps, 3000)           # DD, DR, RR
  up <- type == "update"
  expect_gte(sum(up), 3L)
  expect_equal(sum(vapply(got[up], function(c) c$amount, 0)), 3000)
  # the result is the same as without progress
  expect_identical(w$w, wtheta(sim, ran, b, threads = 1, progress = FALSE,
                               error = "none")$w)
  # pair_counts: one count
  got <- progressions(pair_counts(sim, bins = b, threads = 1,
                                  progress = TRUE))
  expect_identical(got[[1]]$steps, 1000)
  up <- vapply(got, function(c) c$type, "") == "update"
  expect_equal(sum(vapply(got[up], function(c) c$amount, 0)), 1000)
  # progress = FALSE, or wtheta.progressr = FALSE: nothing through progressr
  expect_length(progressions(pair_counts(sim, bins = b, threads = 1,
                                         progress = FALSE)), 0L)
  options(wtheta.progressr = FALSE)
  expect_length(progressions(pair_counts(sim, bins = b, threads = 1,
                                         progress = TRUE)), 0L)
})

test_that("the C poll forwards to the progressor during a count", {
  skip_if_not_installed("progressr")
  old <- options(progressr.enable = TRUE)
  on.exit(options(old))
  # the sink the C poll calls with (pairs done, pairs in all): it advances
  # the progressor by the new share only, and the last call tops it up
  seen <- numeric(0)
  p <- function(amount = 0, ...) seen <<- c(seen, amount)
  sink <- wtheta:::progress_sink(p)
  expect_true(is.function(sink))
  sink(250, 1000)
  sink(250, 1000)          # no progress: no update
  sink(600, 1000)
  sink(1, 1)
  expect_equal(seen, c(250, 350, 400))
  expect_identical(wtheta:::progress_sink(TRUE), TRUE)
  expect_identical(wtheta:::progress_sink(FALSE), FALSE)
  half <- wtheta:::progress_sink(p, share = 0.5)
  seen <- numeric(0)
  half(1, 2)
  half(1, 1)
  expect_equal(seen, c(250, 250))
})

test_that("progress reaches the session from distribute = TRUE workers", {
  skip_if_not_installed("progressr")
  skip_if_not_installed("future")
  old <- options(progressr.enable = TRUE)
  on.exit(options(old))
  oplan <- future::plan(future::sequential)
  on.exit(future::plan(oplan), add = TRUE)
  sim <- simulate_catalog(600, seed = 5)
  b <- theta_bins(0.1, 5, n = 6, log = TRUE)
  got <- progressions(pc <- pair_counts(sim, bins = b, threads = 1,
                                        progress = TRUE, distribute = 3))
  up <- vapply(got, function(c) c$type, "") == "update"
  msg <- vapply(got[up], function(c) paste(c$message, collapse = ""), "")
  done <- grepl("^block [1-6] of 6 done", msg)
  expect_identical(sum(done), 6L)                  # 3 x 3 blocks, i <= j
  expect_true(grepl("^block 6 of 6 done, [0-9.]+ blocks/s$", msg[done][6L]))
  expect_identical(pc$counts, pair_counts(sim, bins = b, threads = 1,
                                          progress = FALSE)$counts)
  # progress = FALSE: the workers' blocks report nothing
  got <- progressions(pair_counts(sim, bins = b, threads = 1,
                                  progress = FALSE, distribute = 3))
  up <- vapply(got, function(c) c$type, "") == "update"
  expect_identical(sum(up), 0L)
})

test_that("without global handlers a long count says once how to see it", {
  skip_if_not_installed("progressr")
  seen <- numeric(0)
  p <- function(amount = 0, ...) seen <<- c(seen, amount)
  env <- wtheta:::progress_hint
  old <- env$given
  on.exit(env$given <- old)
  env$given <- NULL
  # a count that began 3 s ago: the hint, once
  attr(p, "hint_after") <- proc.time()[["elapsed"]] - 1
  sink <- wtheta:::progress_sink(p)
  expect_message(sink(1, 10), "progressr::handlers\\(global = TRUE\\)")
  expect_silent(sink(2, 10))
  expect_silent(wtheta:::progress_sink(p)(1, 10))
  # not yet 2 s, or global handlers on (no hint_after): silent
  env$given <- NULL
  attr(p, "hint_after") <- proc.time()[["elapsed"]] + 60
  expect_silent(wtheta:::progress_sink(p)(1, 10))
  attr(p, "hint_after") <- NULL
  expect_silent(wtheta:::progress_sink(p)(1, 10))
})
