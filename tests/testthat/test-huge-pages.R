# Large buffers on transparent huge pages (src/floor/pages.c): what the C
# core allocates from 32 MB on (the grid's sorted copy and keys, the walk's
# tasks, the engine's counters, the unit vectors) is aligned to 2 MB and
# advised with MADV_HUGEPAGE before it is touched; WTHETA_HUGE_PAGES=0 gives
# plain malloc() and calloc(). Nothing a count returns depends on it.

thp_mode <- function() {
  f <- "/sys/kernel/mm/transparent_hugepage/enabled"
  if (!file.exists(f)) return(NA_character_)
  sub(".*\\[(.*)\\].*", "\\1", readLines(f, 1L))
}

memory_check <- function(mb, env = "") {
  r <- with_env(c(WTHETA_HUGE_PAGES = env),
                .Call(wtheta:::C_memory_check, mb))
  stats::setNames(r, c("huge", "aligned", "kept", "zeroed", "huge_kb",
                       "zeroed_huge_kb"))
}

test_that("big buffers are aligned, kept when grown and zeroed", {
  linux <- Sys.info()[["sysname"]] == "Linux"
  r <- memory_check(64)
  expect_equal(r[["huge"]], as.numeric(linux))
  if (linux) expect_equal(r[["aligned"]], 1)
  expect_equal(r[["kept"]], 1)
  expect_equal(r[["zeroed"]], 1)
  # off: the same contract through malloc(), calloc() and realloc()
  off <- memory_check(64, "0")
  expect_equal(off[["huge"]], 0)
  expect_equal(off[["kept"]], 1)
  expect_equal(off[["zeroed"]], 1)
  # below WT_HUGE_MIN (32 MB): plain malloc() as well
  small <- memory_check(8)
  expect_equal(small[c("kept", "zeroed")], c(kept = 1, zeroed = 1))
})

test_that("a zeroed big buffer is zero where malloc hands back dirty memory", {
  # glibc maps each buffer this big afresh (zero pages) by default; with
  # its mmap and trim thresholds above the size it reuses the dirty one
  # freed just before, so only the explicit zeroing makes these zero
  skip_if(Sys.info()[["sysname"]] != "Linux", "glibc tunables: Linux")
  res <- run_child(c(
    "r <- .Call(wtheta:::C_memory_check, 64)",
    "cat('zeroed: ', r[4], '\\n', sep = '')",
    "cat('huge: ', r[1], '\\n', sep = '')"),
    env = paste0("GLIBC_TUNABLES=glibc.malloc.mmap_threshold=268435456:",
                 "glibc.malloc.trim_threshold=268435456"))
  expect_equal(res$status, 0L)
  expect_equal(child_says(res, "huge"), "1")
  expect_equal(child_says(res, "zeroed"), "1")
})

test_that("where Linux gives huge pages on request, big buffers get them", {
  skip_if_sanitizing()
  skip_if(!identical(thp_mode(), "madvise"),
          "transparent huge pages not in madvise mode here")
  # in a fresh process, so that the buffers are new memory: one that
  # reuses pages a long session already touched keeps their 4 kB pages,
  # and then has no faults to save either
  res <- run_child(c(
    "r <- .Call(wtheta:::C_memory_check, 64)",
    "cat('huge_kb: ', r[5], '\\n', sep = '')",
    "cat('zeroed_huge_kb: ', r[6], '\\n', sep = '')"))
  expect_equal(res$status, 0L)
  kb <- as.numeric(child_says(res, "huge_kb"))
  skip_if(kb < 0, "no /proc/self/smaps")
  # the buffer's mapping holds at least one 2 MB page, the calloc'd one too
  expect_gte(kb, 2048)
  expect_gte(as.numeric(child_says(res, "zeroed_huge_kb")), 2048)
})

test_that("counts are the same with huge pages on and off", {
  # enough points for buffers past 32 MB (the unit vectors, the grid's
  # sorted copy), on the whole sky so that few pairs are within reach
  set.seed(5)
  x <- random_sky(1.5e6)
  y <- random_sky(1.2e6)
  e <- theta_bins(0.01, 0.1, n = 8, log = TRUE)
  old <- options(wtheta.progress = FALSE)
  on.exit(options(old))
  run <- function(env, y) {
    with_env(c(WTHETA_HUGE_PAGES = env),
             slots_of(pair_counts(x, y, e, backend = "cpu", threads = 2L)))
  }
  expect_identical(run("0", y), run("", y))
  # auto pairs, through the same buffers
  expect_identical(run("0", NULL), run("", NULL))
  # and both are the grid-free engine's counts
  sub <- x[seq_len(20000), ]
  with_grid(FALSE, ref <- slots_of(pair_counts(sub, NULL, e, backend = "cpu",
                                               threads = 2L)))
  expect_identical(with_env(c(WTHETA_HUGE_PAGES = ""),
                            slots_of(pair_counts(sub, NULL, e,
                                                 backend = "cpu",
                                                 threads = 2L))), ref)
})
