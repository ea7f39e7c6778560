# Long distributed counts are safe: finished blocks are saved to a
# checkpoint and reused by the same call again, lost workers and hung
# blocks are retried, and what fails is named. Results are compared with
# identical() against an uninterrupted local count.

ck_cases <- function() {
  set.seed(7)
  x <- random_sky(300, ra = c(0, 30), dec = c(-15, 15))
  y <- random_sky(200, ra = c(0, 30), dec = c(-15, 15))
  x$w <- runif(300, 0.5, 2)
  y$w <- runif(200, 0.5, 2)
  x$p <- sample(c("a", "b", "c"), 300, replace = TRUE)
  y$p <- sample(c("a", "b", "c"), 200, replace = TRUE)
  list(x = x, y = y, e = c(0, 1, 3, 10, 30))
}

# every field of the counts, not only the histograms: a resumed or retried
# run against an uninterrupted distributed run
same_pc <- function(a, b) {
  keep <- setdiff(names(a), c("elapsed", "distributed", "threads",
                              "backend", "devices", "gpu_ms",
                              "grid_plan_s"))
  expect_identical(unclass(a)[keep], unclass(b)[keep])
}

# a distributed count against a local one: the pair counts are the same;
# weighted sums are added in another order, so equal to rounding
like_local <- function(d, local) {
  for (f in c("counts", "n_below", "n_above", "patch_counts", "n_pairs")) {
    expect_identical(d[[f]], local[[f]])
  }
  for (f in c("weighted", "patch_weighted", "weighted_pairs")) {
    expect_equal(d[[f]], local[[f]], tolerance = 1e-12)
  }
}

ck_count <- function(cs, ...) {
  pair_counts(cs$x, bins = cs$e, self_pairs = TRUE, backend = "cpu",
              threads = 1, weights = "w", patches = "p", ...)
}

test_that("a checkpointed count is saved block by block and reused", {
  skip_if_not_installed("future")
  old <- future::plan("sequential")
  on.exit(future::plan(old), add = TRUE)
  cs <- ck_cases()
  dir <- tempfile("ck-")
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  local <- ck_count(cs)
  ref <- ck_count(cs, distribute = 3)
  like_local(ref, local)
  d1 <- ck_count(cs, distribute = 3, checkpoint = dir)
  same_pc(d1, ref)
  expect_equal(d1$distributed$reused, 0)
  blocks <- setdiff(list.files(dir), "manifest.rds")
  expect_setequal(blocks, sprintf("pairs-%d-%d.rds", c(1, 1, 1, 2, 2, 3),
                                  c(1, 2, 3, 2, 3, 3)))
  # a block file holds the block's own counts, patch arrays and weights
  b12 <- readRDS(file.path(dir, "pairs-1-2.rds"))
  expect_false(is.null(b12$patch_weighted))
  expect_false(is.null(b12$weighted))
  # all blocks reused: the same result without counting
  d2 <- ck_count(cs, distribute = 3, checkpoint = dir)
  same_pc(d2, ref)
  expect_equal(d2$distributed$reused, 6)
  expect_equal(d2$distributed$workers, 0L)
  # two blocks lost (an interrupted run): only they are counted again;
  # distribute = TRUE adopts the checkpoint's 3 blocks
  unlink(file.path(dir, c("pairs-1-3.rds", "pairs-2-2.rds")))
  d3 <- ck_count(cs, distribute = TRUE, checkpoint = dir)
  same_pc(d3, ref)
  expect_equal(d3$distributed$reused, 4)
  expect_equal(d3$distributed$blocks, 3L)
  expect_match(format(capture.output(print(d3))), "6 tasks \\(3 blocks",
               all = FALSE)
})

test_that("a cross count and wtheta() resume from a checkpoint", {
  skip_if_not_installed("future")
  old <- future::plan("sequential")
  on.exit(future::plan(old), add = TRUE)
  cs <- ck_cases()
  dir <- tempfile("ck-")
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  local <- pair_counts(cs$x, cs$y, bins = cs$e, backend = "cpu",
                       threads = 1, weights = "w", patches = "p",
                       distribute = 2)
  d <- pair_counts(cs$x, cs$y, bins = cs$e, backend = "cpu", threads = 1,
                   weights = "w", patches = "p", distribute = 2,
                   checkpoint = dir)
  same_pc(d, local)
  # each task got two blocks: 150 + 100 points, 24 + 8 + 4 bytes each
  expect_equal(d$distributed$points_per_task, 250)
  expect_equal(d$distributed$bytes_per_task, 250 * 36)
  unlink(file.path(dir, "pairs-2-1.rds"))
  d2 <- pair_counts(cs$x, cs$y, bins = cs$e, backend = "cpu", threads = 1,
                    weights = "w", patches = "p", distribute = 2,
                    checkpoint = dir)
  same_pc(d2, local)
  expect_equal(d2$distributed$reused, 3)

  dir2 <- tempfile("ck-")
  on.exit(unlink(dir2, recursive = TRUE), add = TRUE)
  a <- untrusted_cov_ok(
    wtheta(cs$x, cs$y, cs$e, backend = "cpu", threads = 1,
           error = "jackknife", patches = "p", weights = "w",
           distribute = 2))
  b <- untrusted_cov_ok(
    wtheta(cs$x, cs$y, cs$e, backend = "cpu", threads = 1,
           error = "jackknife", patches = "p", weights = "w",
           distribute = 2, checkpoint = dir2))
  expect_identical(a$w, b$w)
  expect_identical(a$w_err, b$w_err)
  # DD, DR and RR each have their blocks: 3 + 4 + 3
  expect_length(setdiff(list.files(dir2), "manifest.rds"), 10L)
  unlink(file.path(dir2, c("data-random-1-2.rds", "random-random-2-2.rds")))
  c2 <- untrusted_cov_ok(
    wtheta(cs$x, cs$y, cs$e, backend = "cpu", threads = 1,
           error = "jackknife", patches = "p", weights = "w",
           distribute = 2, checkpoint = dir2))
  expect_identical(a$w, c2$w)
  expect_identical(attr(a, "replicates"), attr(c2, "replicates"))
  reused <- vapply(attr(c2, "pair_counts"),
                   function(p) p$distributed$reused, 0)
  expect_equal(unname(reused), c(3, 3, 2))
})

test_that("a checkpoint of other inputs is refused", {
  skip_if_not_installed("future")
  old <- future::plan("sequential")
  on.exit(future::plan(old), add = TRUE)
  cs <- ck_cases()
  dir <- tempfile("ck-")
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  ck_count(cs, distribute = 2, checkpoint = dir)
  expect_error(pair_counts(cs$x, bins = c(0, 1, 3, 10, 20), self_pairs = TRUE,
                           backend = "cpu", threads = 1, weights = "w",
                           patches = "p", distribute = 2, checkpoint = dir),
               "holds blocks of another count .*inputs hash")
  cs2 <- cs
  cs2$x$w[5] <- cs2$x$w[5] + 1e-9
  expect_error(ck_count(cs2, distribute = 2, checkpoint = dir),
               "catalogs, bins, weights, patches or options differ")
  expect_error(wtheta(cs$x, cs$y, cs$e, threads = 1, distribute = 2,
                      checkpoint = dir), "another count \\(pair_counts")
  expect_error(ck_count(cs, distribute = 3, checkpoint = dir),
               "holds 2 blocks per catalog, but `distribute` is 3")
  other <- tempfile("ck-")
  dir.create(other)
  on.exit(unlink(other, recursive = TRUE), add = TRUE)
  writeLines("x", file.path(other, "notes.txt"))
  expect_error(ck_count(cs, distribute = 2, checkpoint = other),
               "is not empty and holds no wtheta manifest")
  expect_error(ck_count(cs, checkpoint = dir), "it needs `distribute`")
  expect_error(ck_count(cs, distribute = 2, checkpoint = 3),
               "`checkpoint` must be NULL or a directory name")
  expect_error(ck_count(cs, distribute = 2, retries = -1),
               "`retries` must be a whole number >= 0, not -1")
  expect_error(ck_count(cs, distribute = 2, timeout = 0),
               "`timeout` must be NULL or a number of seconds > 0, not 0")
})

test_that("progress is signalled through progressr, block by block", {
  skip_if_not_installed("future")
  skip_if_not_installed("progressr")
  old <- future::plan("sequential")
  on.exit(future::plan(old), add = TRUE)
  # progressr reports in interactive sessions unless enabled
  oo <- options(progressr.enable = TRUE)
  on.exit(options(oo), add = TRUE)
  cs <- ck_cases()
  msgs <- character()
  withCallingHandlers(
    ck_count(cs, distribute = 2, progress = TRUE),
    progression = function(c) {
      if (!is.null(c$message)) msgs <<- c(msgs, c$message)
    })
  expect_true(any(grepl("^block 3 of 3 done, [0-9.]+ blocks/s$", msgs)))
  expect_true(any(grepl("^block 1 of 3 done", msgs)))
  # progress = FALSE: nothing
  msgs <- character()
  withCallingHandlers(
    ck_count(cs, distribute = 2, progress = FALSE),
    progression = function(c) msgs <<- c(msgs, "any"))
  expect_identical(msgs, character())
})

# A real multisession plan; the option wtheta.test_block_fault makes the
# worker of one block kill its own process or hang.
with_fault <- function(fault, code) {
  old <- options(wtheta.test_block_fault = fault)
  on.exit(options(old))
  code
}

test_that("a worker killed mid-block is retried and nothing is lost", {
  skip_if_not_installed("future")
  skip_on_os("windows")
  old <- future::plan("multisession", workers = 2)
  on.exit(future::plan(old), add = TRUE)
  cs <- ck_cases()
  local <- ck_count(cs, distribute = 2)
  once <- tempfile("fault-")
  d <- with_fault(list(block = 2, action = "die", once = once),
                  ck_count(cs, distribute = 2))
  expect_true(file.exists(once))
  same_pc(d, local)
  expect_equal(d$distributed$retried, 1L)
  expect_match(format(capture.output(print(d))), "1 retried", all = FALSE)
  # the plan's workers were restarted and still count
  d2 <- ck_count(cs, distribute = 2)
  same_pc(d2, local)
})

test_that("a block that keeps failing is named, and its checkpoint resumes", {
  skip_if_not_installed("future")
  skip_on_os("windows")
  old <- future::plan("multisession", workers = 2)
  on.exit(future::plan(old), add = TRUE)
  cs <- ck_cases()
  local <- ck_count(cs, distribute = 2)
  dir <- tempfile("ck-")
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  expect_error(
    with_fault(list(block = 3, action = "die"),
               ck_count(cs, distribute = 2, checkpoint = dir, retries = 1)),
    "block pairs-2-2 \\(task 3 of 3\\) failed after 2 attempts: .*checkpoint directory")
  # the lost worker was restarted: the plan counts without a retry
  same_pc(ck_count(cs, distribute = 2, retries = 0), local)
  saved <- setdiff(list.files(dir), "manifest.rds")
  expect_true(all(saved %in% c("pairs-1-1.rds", "pairs-1-2.rds")))
  expect_false("pairs-2-2.rds" %in% saved)
  d <- ck_count(cs, distribute = 2, checkpoint = dir)
  same_pc(d, local)
  expect_equal(d$distributed$reused, length(saved))
  # an error of the count itself is not retried
  skip_if(has_cuda(), "a usable GPU: backend = \"cuda\" does not fail")
  expect_error(pair_counts(cs$x, bins = cs$e, backend = "cuda", threads = 1,
                           distribute = 2, retries = 3),
               "block pairs-1-1 \\(task 1 of 3\\) failed after 1 attempt:")
})

test_that("a hung block is stopped by `timeout` and counted again", {
  skip_if_not_installed("future")
  skip_on_os("windows")
  old <- future::plan("multisession", workers = 2)
  on.exit(future::plan(old), add = TRUE)
  cs <- ck_cases()
  local <- ck_count(cs, distribute = 2)
  once <- tempfile("fault-")
  d <- with_fault(list(block = 1, action = "hang", once = once),
                  ck_count(cs, distribute = 2, timeout = 3))
  same_pc(d, local)
  expect_equal(d$distributed$retried, 1L)
  expect_error(with_fault(list(block = 1, action = "hang"),
                          ck_count(cs, distribute = 2, timeout = 2,
                                   retries = 0)),
               "block pairs-1-1 \\(task 1 of 3\\) failed after 1 attempt: it ran past timeout = 2 s")
})

# ---- issue 31, round three: blocks know which block they hold --------------

test_that("a block file of another block, or of another cut, is counted again", {
  skip_if_not_installed("future")
  old <- future::plan("sequential")
  on.exit(future::plan(old), add = TRUE)
  cs <- ck_cases()
  dir <- tempfile("ck-")
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  local <- ck_count(cs)
  ref <- ck_count(cs, distribute = 3)
  d1 <- ck_count(cs, distribute = 3, checkpoint = dir)
  same_pc(d1, ref)
  # one block file copied over another: that block alone is counted again
  file.copy(file.path(dir, "pairs-1-2.rds"), file.path(dir, "pairs-1-3.rds"),
            overwrite = TRUE)
  expect_message(d2 <- ck_count(cs, distribute = 3, checkpoint = dir),
                 "pairs-1-3.rds\" holds block pair pairs-1-2, not pairs-1-3; counting it again.",
                 fixed = TRUE)
  same_pc(d2, ref)
  expect_equal(d2$distributed$reused, 5)
  # and the file now holds its own block
  expect_silent(d3 <- ck_count(cs, distribute = 3, checkpoint = dir))
  expect_equal(d3$distributed$reused, 6)
  # a manifest edited to another number of blocks: its blocks (cut in 3)
  # are refused, the count is right
  m <- readRDS(file.path(dir, "manifest.rds"))
  m$n_blocks <- 2L
  saveRDS(m, file.path(dir, "manifest.rds"))
  msgs <- character()
  d4 <- withCallingHandlers(
    ck_count(cs, distribute = TRUE, checkpoint = dir),
    message = function(m) {
      msgs <<- c(msgs, conditionMessage(m))
      invokeRestart("muffleMessage")
    })
  expect_true(any(grepl("holds a block of a count cut into 3 blocks, not 2",
                        msgs, fixed = TRUE)))
  expect_equal(d4$distributed$blocks, 2L)
  like_local(d4, local)
  # a block file from before blocks carried their identity: counted again
  b <- readRDS(file.path(dir, "pairs-1-1.rds"))
  attr(b, "wtheta_block") <- NULL
  saveRDS(b, file.path(dir, "pairs-1-1.rds"))
  expect_message(d5 <- ck_count(cs, distribute = TRUE, checkpoint = dir),
                 "says nothing of the block it holds")
  like_local(d5, local)
})

test_that("a checkpoint directory that cannot be written is refused before counting", {
  skip_if_not_installed("future")
  old <- future::plan("sequential")
  on.exit(future::plan(old), add = TRUE)
  cs <- ck_cases()
  where <- unwritable_dir()
  expect_error(ck_count(cs, distribute = 3, checkpoint = where),
               paste0("`checkpoint` directory \"", where, "\" is not writable"),
               fixed = TRUE)
})
